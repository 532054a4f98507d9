//! Results recognised by their structure, not by one marker (docs/formats.md, "Tables" and "What
//! surrounds a block"): a console table whose title was edited or lost is found by its column
//! header and the rows it knows; a guidellm table whose title was renamed (inside a Markdown list
//! item) is read as the table its column headers say; a line printed after the tables
//! (`[[footer]]`, AIPerf's `Benchmark Duration:`) is read into the run it closes.

use crate::common;

use bench_normalize::Run;
use proptest::prelude::*;

fn read(text: &str) -> Vec<Run> {
    common::run_all(text.as_bytes(), "t.txt").unwrap_or_default()
}

fn sample(path: &str) -> String {
    std::fs::read_to_string(common::samples_dir().join(path)).unwrap()
}

fn mean(run: &Run, field: &str) -> Option<f64> {
    run.reported.stat(field).and_then(|s| s.mean())
}

/// Every run's figures, without where they were read (see `common::figures_of`).
fn figures(text: &str) -> Vec<serde_json::Value> {
    read(text).iter().map(common::figures_of).collect()
}

/// The console samples whose tables carry a title this test may edit: AIPerf's (`Metric` header)
/// and genai-perf's (`Statistic` header), captured and published.
fn titled_tables() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = common::RICH_TABLE_CONSOLES.iter().map(|p| (p.to_string(), sample(p))).collect();
    v.sort();
    v
}

/// A table title line: the text right above a table's top rule (`┏━━━┳`).
fn title_lines(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    (1..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with('┏') && !lines[i - 1].trim().is_empty())
        .map(|i| i - 1)
        .collect()
}

/// The text with every table title replaced by `title` (indented as the original).
fn retitled(text: &str, title: &str) -> String {
    let titles = title_lines(text);
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if titles.contains(&i) {
                let indent = &l[..l.len() - l.trim_start().len()];
                format!("{indent}{title}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_titled_sample_has_its_titles_found() {
    for (name, text) in titled_tables() {
        assert!(!title_lines(&text).is_empty(), "{name}: no table title found");
        assert!(!read(&text).is_empty(), "{name}: no run");
    }
}

/// The published paste whose titles were edited (`vLLM gemma4 12B it NVIDIA AIPerf | LLM
/// Metrics`, `vLLM+Awq+4bit  NVIDIA AIPerf | LLM Metrics`): two runs, the figures printed.
#[test]
fn aiperf_tables_with_edited_titles() {
    let runs = read(&sample("public/113-aiperf.txt"));
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r.source.parser, "aiperf-console");
        assert_eq!(r.totals.number("successful_requests"), Some(100.0));
    }
    assert_eq!(mean(&runs[0], "ttft_ms"), Some(1229.91));
    assert_eq!(mean(&runs[0], "e2e_ms"), Some(11674.18));
    // AIPerf's Inter Token Latency is a TPOT.
    assert_eq!(mean(&runs[0], "tpot_ms"), Some(52.48));
    assert_eq!(runs[0].reported.number("request_per_s"), Some(0.86));
    assert_eq!(mean(&runs[1], "ttft_ms"), Some(1248.26));
    assert_eq!(mean(&runs[1], "e2e_ms"), Some(5501.24));
    assert_eq!(mean(&runs[1], "tpot_ms"), Some(21.44));
}

/// With any other title, or none, the same tables read the same figures: the column header opens
/// them, and their rows say whose they are.
#[test]
fn a_title_with_nothing_of_the_banner_reads_the_same() {
    for (name, text) in titled_tables() {
        let want = figures(&text);
        for title in ["My benchmark on 4xH100", "", "Results (run 3)"] {
            let got = figures(&retitled(&text, title));
            assert_eq!(got, want, "{name} titled {title:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Titles made up of words, numbers and punctuation (never the tool's banner): the figures
    /// of the original titles.
    #[test]
    fn any_title_reads_the_same(which in any::<prop::sample::Index>(), title in "[a-zA-Z0-9 +_().:-]{0,60}") {
        let all = titled_tables();
        let (name, text) = &all[which.index(all.len())];
        prop_assume!(!title.contains("LLM Metrics") && !title.contains("Multi-Modal Metrics"));
        let got = figures(&retitled(text, &title));
        prop_assert_eq!(got, figures(text), "{} titled {:?}", name, title);
    }
}

/// The published guidellm paste: four sweeps of ten benchmarks, the first titled inside a list
/// item (`- ℹ Request Latency Statistics Table-1 (...)`), the second `... Table-2 (...)`. Each
/// table is read as the latency table it is, and each sweep's runs are its own (before, the first
/// table was skipped and the third read as the first sweep). Rows of one key inside one table
/// (`constant`, eight rates) stay one run, with `conflicting-value` notes, as before.
#[test]
fn guidellm_tables_renamed_in_a_list() {
    use bench_normalize::report::StatKey::P;
    let runs = read(&sample("public/114-guidellm.txt"));
    assert_eq!(runs.len(), 12, "four sweeps of synchronous, throughput, constant");
    let p50 = |r: &Run, f: &str| r.reported.stat(f).and_then(|s| s.get(P(50.0)));
    let sync: Vec<Option<f64>> = [0, 3, 6, 9].iter().map(|&i| p50(&runs[i], "ttft_ms")).collect();
    assert_eq!(sync, [Some(78.9), Some(94.6), Some(139.8), Some(90.5)]);
    for i in [0, 3, 6, 9] {
        assert_eq!(runs[i].workload.text("strategy"), Some("synchronous"));
        assert_eq!(runs[i + 1].workload.text("strategy"), Some("throughput"));
    }
    // guidellm's ITL is a TPOT; its Request Latency is in seconds.
    assert_eq!(p50(&runs[1], "tpot_ms"), Some(182.0));
    assert_eq!(p50(&runs[1], "e2e_ms"), Some(27000.0));
    let told = |i: usize| runs[i].notes.iter().any(|n| n.code == "table-title-by-header");
    assert!(told(0) && told(3) && !told(6), "the renamed tables say how they were told");
}

/// The captured guidellm log with each table's title renamed (`Table-N` added), put behind a
/// list marker, or dropped: the figures of the original.
#[test]
fn guidellm_titles_renamed_read_the_same() {
    for path in ["peers/guidellm-s2.stdout.txt", "peers/guidellm-s2nousagemaxtok.stdout.txt"] {
        let text = sample(path);
        let want = figures(&text);
        assert!(!want.is_empty());
        for (i, edit) in ["- ℹ {} Table-1 {}", "* ℹ {} {}", "1. ℹ {} (edited) {}"].iter().enumerate() {
            let edited: String = text
                .lines()
                .map(|l| match l.strip_prefix("ℹ ").and_then(|t| t.rsplit_once(" (")) {
                    Some((name, rest)) => edit.replacen("{}", name, 1).replacen("{}", &format!("({rest}"), 1),
                    None => l.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n");
            assert_ne!(edited, text);
            let got = figures(&edited);
            // Runs read by header keep their figures; the notes say how the tables were told.
            assert_eq!(got.len(), want.len(), "{path} edit {i}");
            for (g, w) in got.iter().zip(&want) {
                for part in ["workload", "totals", "reported", "derived"] {
                    assert_eq!(g[part], w[part], "{path} edit {i}: {part}");
                }
            }
        }
    }
}

/// AIPerf's footer `Benchmark Duration: 26.82 sec` (line 179 of the captured log, past the GPU
/// telemetry box and the command line) is the run's duration, and its rates hold to it.
#[test]
fn aiperf_footer_duration_is_the_runs() {
    let text = sample("peers/aiperf-s2.stdout.txt");
    let runs = read(&text);
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.totals.number("duration_s"), Some(26.82));
    let json = serde_json::to_value(run).unwrap();
    let footer = json["rows"].as_array().unwrap().iter().find(|r| r["scope"] == "footer").expect("a footer row");
    assert_eq!(footer["line"], 179);
    assert_eq!(footer["label"], "Benchmark Duration");
    let check = |id: &str| json["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).cloned();
    let rates = check("throughput-totals").expect("the rates are held to the duration");
    assert_eq!(rates["status"], "pass", "{rates}");
}

/// A footer that contradicts the tables (half the duration: twice the printed rates) is caught by
/// the same rule, so a footer read into the wrong run cannot pass unseen.
#[test]
fn a_contradicting_footer_is_caught() {
    let text =
        sample("peers/aiperf-s2.stdout.txt").replace("Benchmark Duration: 26.82 sec", "Benchmark Duration: 13.41 sec");
    let runs = read(&text);
    let json = serde_json::to_value(&runs[0]).unwrap();
    let rates = json["checks"].as_array().unwrap().iter().find(|c| c["id"] == "throughput-totals").cloned().unwrap();
    assert_ne!(rates["status"], "pass", "{rates}");
}

/// Too far below the tables, or after another block's banner, the line is no footer of theirs.
#[test]
fn a_footer_is_looked_for_near_the_block_only() {
    let text = sample("peers/aiperf-s2.stdout.txt");
    let far = text.replace("Benchmark Duration:", &format!("{}Benchmark Duration:", "log line\n".repeat(40)));
    assert_eq!(read(&far)[0].totals.number("duration_s"), None);
    let vllm = sample("captured/vllm-chat-s2.stdout.txt");
    let after_banner = text.replace("Benchmark Duration:", &format!("{vllm}\nBenchmark Duration:"));
    let runs = read(&after_banner);
    assert_eq!(runs[0].source.parser, "aiperf-console");
    assert_eq!(runs[0].totals.number("duration_s"), None);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Any number of other lines (up to 30) between the tables and the footer: the same duration.
    #[test]
    fn noise_before_the_footer(n in 0usize..30, word in "[a-z]{1,12}") {
        let text = sample("peers/aiperf-s2.stdout.txt");
        let noisy = text.replace("Benchmark Duration:", &format!("{}Benchmark Duration:", format!("{word} {n}\n").repeat(n)));
        let runs = read(&noisy);
        prop_assert_eq!(runs.len(), 1);
        prop_assert_eq!(runs[0].totals.number("duration_s"), Some(26.82));
    }
}
