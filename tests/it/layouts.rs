//! Layouts read by definition features rather than by a definition per paste: llmperf's stdout
//! (stat groups, `[block.groups]`), published pastes in `samples/pastes` held to the figures they
//! print (their `*.truth.json`).

use crate::common;

use bench_normalize::{Options, Run, normalize};
use proptest::prelude::*;

fn read(text: &str) -> Vec<Run> {
    let mut runs = Vec::new();
    normalize(text.as_bytes(), "t.txt", &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}\n{text}"));
    runs
}

fn paste(name: &str) -> (String, serde_json::Value) {
    let dir = common::samples_dir().join("pastes");
    let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
    (text, common::read_json(&dir.join(format!("{name}.truth.json"))))
}

fn close(got: Option<f64>, want: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: absent, want {want}"));
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "{what}: {got} != {want}");
}

/// The llmperf figures of a run against what the paste printed (seconds to ms here, in the test).
fn holds_llmperf_truth(run: &Run, truth: &serde_json::Value) {
    let printed = truth["printed"].as_object().unwrap();
    let json = serde_json::to_value(run).unwrap();
    let num = |path: &str| json.pointer(path).and_then(|v| v.as_f64());
    for (label, want) in printed {
        let want = want.as_f64().unwrap();
        let (metric, stat) = label.split_once(' ').unwrap_or((label, ""));
        let stat_of = |field: &str| num(&format!("/reported/{field}/{stat}"));
        match metric {
            "Number" if label == "Number Of Completed Requests" => {
                close(num("/totals/successful_requests"), want, label)
            }
            "Number" => close(num("/totals/failed_requests"), want, label),
            "Overall" => close(num("/reported/output_tok_per_s"), want, label),
            "ttft_s" => close(stat_of("ttft_ms"), want * 1000.0, label),
            "end_to_end_latency_s" => close(stat_of("e2e_ms"), want * 1000.0, label),
            // E2E / N with the TTFT in it: a latency per output token, never a TPOT.
            "inter_token_latency_s" => close(stat_of("latency_per_output_token_ms"), want * 1000.0, label),
            "number_output_tokens" => close(num("/totals/output_tokens_per_request"), want, label),
            other => panic!("unknown printed figure {other}"),
        }
    }
    assert!(json.pointer("/reported/tpot_ms").is_none(), "llmperf prints no TPOT");
    assert!(json.pointer("/reported/itl_ms").is_none(), "llmperf's inter-token latency is not an ITL");
}

fn llmperf_paste(name: &str) {
    let (text, truth) = paste(name);
    let runs = read(&text);
    assert_eq!(runs.len() as u64, truth["runs"].as_u64().unwrap(), "{name}");
    assert_eq!(runs[0].source.parser, "llmperf-stdout", "{name}");
    holds_llmperf_truth(&runs[0], &truth);
    // TPOT derived from the printed means, with N - 1 decode steps: computed here from the
    // printed figures, not read back from the code under test.
    let p = &truth["printed"];
    if let Some(n) = p["number_output_tokens mean"].as_f64() {
        let want = (p["end_to_end_latency_s mean"].as_f64().unwrap() - p["ttft_s mean"].as_f64().unwrap()) / (n - 1.0)
            * 1000.0;
        // (Derived figures are rounded to 4 decimals.)
        let got = runs[0].derived.tpot_ms.mean.expect("a derived TPOT");
        assert!((got - want).abs() <= 0.5e-4, "derived TPOT: {got} != {want}");
    }
}

#[test]
fn llmperf_neuron_405b_tutorial() {
    llmperf_paste("llmperf-neuron-405b");
}

#[test]
fn llmperf_inferentia2_readme_with_backslash_banner() {
    llmperf_paste("llmperf-inferentia2-mistral");
}

#[test]
fn llmperf_abridged_with_dots() {
    llmperf_paste("llmperf-abridged-llama3-8b");
}

/// A stat line outside any group (no header above it) is not read, and a group ends at the next
/// known `label: value` row: the `key = value` lines after it belong to nothing.
#[test]
fn llmperf_stat_lines_outside_a_group_are_not_read() {
    let (text, _) = paste("llmperf-neuron-405b");
    let text = text.replace("    ttft_s\n", "");
    let runs = read(&text);
    // The TTFT lines now sit under inter_token_latency_s: read as its (repeated) statistics, not
    // as TTFT.
    let json = serde_json::to_value(&runs[0]).unwrap();
    assert!(json.pointer("/reported/ttft_ms").is_none());
}

/// The lines of the neuron paste, re-indented (none, tabs, deeper), abridged (random statistic
/// lines replaced by one `...`), behind a quote or in a Markdown list: the figures left are the same.
fn variant(text: &str, indent: &str, drop: &[bool]) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut dropped = Vec::new();
    let mut group = "";
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if !t.contains(' ') && !t.is_empty() && !t.contains(':') {
            group = t;
        }
        let stat = line.starts_with("        ");
        if stat && drop.get(i).copied().unwrap_or(false) {
            // Lines cut together are abridged by one `...`, as people abridge.
            if !out.ends_with("...\n") {
                out.push_str(&format!("{indent}    ...\n"));
            }
            dropped.push(format!("{group} {}", t.split(" = ").next().unwrap()));
            continue;
        }
        let body = if stat { format!("    {t}") } else { t.to_string() };
        out.push_str(&format!("{indent}{body}\n"));
    }
    (out, dropped)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn llmperf_variants_read_the_same_figures(
        indent in prop::sample::select(vec!["", "    ", "\t", "> ", "  "]),
        drop in prop::collection::vec(prop::bool::weighted(0.3), 80),
    ) {
        let (text, truth) = paste("llmperf-neuron-405b");
        let (text, dropped) = variant(&text, indent, &drop);
        let runs = read(&text);
        prop_assert_eq!(runs.len(), 1);
        let mut truth = truth;
        let printed = truth["printed"].as_object_mut().unwrap();
        printed.retain(|k, _| !dropped.contains(k));
        holds_llmperf_truth(&runs[0], &truth);
    }
}

/// guidellm 0.2.x console (`Benchmarks Info` / `Benchmarks Stats`, cells between bars with no
/// outer border): one run per benchmark row, its figures as printed; the request latency printed
/// in seconds under a `(ms)` header is not read (no E2E from the table), and every run says so.
#[test]
fn guidellm_0_2_sweep_console() {
    let (text, truth) = paste("guidellm-0.2-sweep-granite");
    let runs = read(&text);
    assert_eq!(runs.len() as u64, truth["runs"].as_u64().unwrap());
    for (strategy, want) in truth["rows"].as_object().unwrap() {
        let run = runs
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .find(|r| r["workload"]["strategy"] == *strategy)
            .unwrap_or_else(|| panic!("no run for {strategy}"));
        assert_eq!(run["source"]["parser"], "guidellm-console-0.2");
        let num = |p: &str| run.pointer(p).and_then(|v| v.as_f64());
        for (key, w) in want.as_object().unwrap() {
            let w = w.as_f64().unwrap();
            let path = match key.as_str() {
                "duration_s" | "successful_requests" | "output_tokens" => format!("/totals/{key}"),
                "request_per_s" => "/reported/request_per_s".into(),
                "ttft_ms_mean" => "/reported/ttft_ms/mean".into(),
                "ttft_ms_p99" => "/reported/ttft_ms/p99".into(),
                // guidellm's ITL is a TPOT; its TPOT includes the TTFT.
                "itl_ms_mean" => "/reported/tpot_ms/mean".into(),
                "tpot_ms_mean" => "/reported/latency_per_output_token_ms/mean".into(),
                "tpot_ms_p99" => "/reported/latency_per_output_token_ms/p99".into(),
                other => panic!("unknown key {other}"),
            };
            close(num(&path), w, &format!("{strategy} {key}"));
        }
        assert!(run.pointer("/reported/e2e_ms").is_none(), "{strategy}: the (ms) request latency is in s");
        let notes = run["notes"].as_array().unwrap();
        assert!(notes.iter().any(|n| n["code"] == "variant-0.2"), "{strategy}: the misprint is said");
    }
}

// ---- Layouts around blocks: side by side in an HTML table, hard-wrapped console tables.

/// The result block of a captured log: from its banner to its closing line.
fn captured_block(name: &str) -> String {
    let text = std::fs::read_to_string(common::samples_dir().join("captured").join(name)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.contains("Serving Benchmark Result")).unwrap();
    let end = start + 1 + lines[start + 1..].iter().position(|l| l.starts_with("=====")).unwrap();
    lines[start..=end].join("\n") + "\n"
}

/// What two readings of the same result must agree on (see `common::figures_of`).
fn figures(text: &str) -> Vec<serde_json::Value> {
    read(text).iter().map(common::figures_of).collect()
}

/// Blocks pasted side by side in an HTML table, one fenced block per `<td>`, as comparisons are
/// pasted in GitHub issues. `tight`: no blank line inside the cells; `lang`: the fence's language.
fn side_by_side(blocks: &[String], tight: bool, lang: &str) -> String {
    let gap = if tight { "" } else { "\n" };
    let mut out = String::from("<table>\n<tr>\n");
    for b in blocks {
        out.push_str(&format!("<td>\n{gap}```{lang}\n{b}```\n{gap}</td>\n"));
    }
    out.push_str("</tr>\n</table>\n");
    out
}

const CAPTURED: &[&str] = &[
    "vllm-s1.stdout.txt",
    "vllm-s2.stdout.txt",
    "vllm-chat-s2.stdout.txt",
    "vllm-s2spec.stdout.txt",
    "sglang-s1.stdout.txt",
    "sglang-s2.stdout.txt",
    "sglang-oai-s3.stdout.txt",
];

#[test]
fn blocks_side_by_side_in_an_html_table() {
    let a = captured_block("vllm-chat-s2.stdout.txt");
    let b = captured_block("vllm-s1.stdout.txt");
    let runs = read(&side_by_side(&[a.clone(), b.clone()], false, ""));
    assert_eq!(runs.len(), 2);
    // The figures each block prints, in the order of the cells.
    assert_eq!(runs[0].totals.number("duration_s"), Some(26.73));
    assert_eq!(runs[0].reported.stat("ttft_ms").and_then(|s| s.mean()), Some(139.97));
    assert_eq!(runs[1].totals.number("duration_s"), Some(10.42));
    assert_eq!(runs[1].reported.stat("ttft_ms").and_then(|s| s.mean()), Some(62.09));
    let alone: Vec<serde_json::Value> = [a, b].iter().flat_map(|t| figures(t)).collect();
    assert_eq!(runs.iter().map(common::figures_of).collect::<Vec<_>>(), alone);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Any two or three captured blocks side by side, with or without blank lines in the cells,
    /// with or without a fence language: each block's figures, in order.
    #[test]
    fn any_blocks_side_by_side(
        picks in prop::collection::vec(any::<prop::sample::Index>(), 2..=3),
        tight in any::<bool>(),
        lang in prop::sample::select(vec!["", "text", "console"]),
    ) {
        let blocks: Vec<String> = picks.iter().map(|i| captured_block(CAPTURED[i.index(CAPTURED.len())])).collect();
        let want: Vec<serde_json::Value> = blocks.iter().flat_map(|b| figures(b)).collect();
        prop_assert_eq!(figures(&side_by_side(&blocks, tight, lang)), want);
    }
}
