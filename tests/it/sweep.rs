//! Sweeps (`sweep`, `plot`): the frontier's figures against the captured sweeps' truth files,
//! the peers' "per user" figure kept apart from the decode rate, exclusions and marks, and the
//! SVG parsed as XML.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use bench_normalize::Options;
use bench_normalize::sweep::{self, GroupBy, Series, Sweep};
use common::samples_dir;
use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

fn sample(name: &str) -> PathBuf {
    samples_dir().join(name)
}

fn truth(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sample(name)).unwrap()).unwrap()
}

/// Paths relative to the crate, so that reports and snapshots name them the same everywhere.
fn rel(names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| PathBuf::from("samples").join(n)).collect()
}

fn summarize(names: &[&str], by: GroupBy) -> Sweep {
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let (runs, errors) = sweep::read_runs(&rel(names), &Options::default());
    assert!(errors.is_empty(), "{errors:?}");
    sweep::summarize(&runs, by)
}

fn concurrencies(s: &Series) -> Vec<f64> {
    s.points.iter().map(|p| p.max_concurrency.unwrap()).collect()
}

/// The emulator's measured TPOT of each step of `vllm-s4` (per concurrency) and of the vllm-rs
/// sweep (per step, in order).
fn s4_measured_tpot(c: f64) -> f64 {
    let t = truth("captured/vllm-s4.truth.json");
    t["measured_by_emulator_per_concurrency"][format!("{c}")]["mean_tpot_ms"].as_f64().unwrap()
}

fn vllmrs_measured_tpot(c: f64) -> f64 {
    let t = truth("versions/vllmrs0.33.0-sweep.truth.json");
    let steps = t["measured_by_emulator_per_step"].as_array().unwrap();
    let step = steps.iter().find(|s| s["max_concurrency"].as_f64() == Some(c)).unwrap();
    step["measured_by_emulator"]["mean_tpot_ms"].as_f64().unwrap()
}

/// The derivation agrees with the emulator's own per-request TPOT to ~0.1% (tests/it/ground_truth.rs);
/// the client's loopback overhead is in the derived figure, not in the emulator's.
const RATE_TOLERANCE: f64 = 0.002;

fn close(a: f64, b: f64, rel_tol: f64) -> bool {
    (a - b).abs() <= rel_tol * b.abs()
}

#[test]
fn vllm_sweep_per_user_rates_are_1000_over_true_tpot() {
    // One stdout with four blocks, and the four result files given out of order: the same frontier.
    for names in [
        &["captured/vllm-s4.stdout.txt"][..],
        &[
            "captured/vllm-s4-c8.result.json",
            "captured/vllm-s4-c2.result.json",
            "captured/vllm-s4-c1.result.json",
            "captured/vllm-s4-c4.result.json",
        ][..],
    ] {
        let sw = summarize(names, GroupBy::Workload);
        assert_eq!(sw.series.len(), 1, "{names:?}");
        let s = &sw.series[0];
        assert_eq!(concurrencies(s), [1.0, 2.0, 4.0, 8.0], "ordered by load");
        assert_eq!((s.input_len, s.output_len), (Some(256.0), Some(128.0)));
        let t = truth("captured/vllm-s4.truth.json");
        let true_tpot = t["true_tpot_ms"].as_f64().unwrap();
        for p in &s.points {
            let c = p.max_concurrency.unwrap();
            let want = 1000.0 / s4_measured_tpot(c);
            assert!(
                close(p.per_user_decode_tok_per_s, want, RATE_TOLERANCE),
                "{names:?} c{c}: {} vs 1000/measured TPOT {want}",
                p.per_user_decode_tok_per_s
            );
            assert!(close(p.per_user_decode_tok_per_s, 1000.0 / true_tpot, RATE_TOLERANCE));
            assert!(close(p.tpot_ms * p.per_user_decode_tok_per_s, 1000.0, 1e-4));
        }
    }
}

#[test]
fn two_clients_with_one_workload_are_two_series() {
    // vLLM's Python client (TPOT 10 ms server) and vllm-rs (12.8 ms): same tool name, model and
    // lengths; their output layouts (version variants) keep them apart.
    let sw = summarize(
        &[
            "captured/vllm-s4-c1.result.json",
            "captured/vllm-s4-c4.result.json",
            "versions/vllmrs0.33.0-ratesweep-r2.result.json",
            "versions/vllmrs0.33.0-ratesweep-rinf.result.json",
        ],
        GroupBy::Workload,
    );
    assert_eq!(sw.series.len(), 2, "{:?}", sw.series.iter().map(|s| &s.label).collect::<Vec<_>>());
    assert!(sw.series.iter().all(|s| s.points.len() == 2 && s.warnings.is_empty()));
    assert_eq!(sw.series[1].variant.as_deref(), Some("rust-0.33"));
}

#[test]
fn vllm_rs_sweep_per_user_rates_are_1000_over_true_tpot() {
    let sw = summarize(&["versions/vllmrs0.33.0-sweep.stdout.txt"], GroupBy::Workload);
    assert_eq!(sw.series.len(), 1);
    let s = &sw.series[0];
    assert_eq!(concurrencies(s), [1.0, 2.0, 4.0]);
    for p in &s.points {
        let c = p.max_concurrency.unwrap();
        let want = 1000.0 / vllmrs_measured_tpot(c);
        assert!(
            close(p.per_user_decode_tok_per_s, want, RATE_TOLERANCE),
            "c{c}: {} vs {want}",
            p.per_user_decode_tok_per_s
        );
    }
    // The Sweep Summary's lines repeat the blocks: folded into them, neither points nor excluded.
    assert!(sw.excluded.is_empty(), "{:?}", sw.excluded.iter().map(|e| &e.reason).collect::<Vec<_>>());
}

#[test]
fn ratio_of_per_user_rates_is_ratio_of_true_tpots() {
    // Two configurations (TPOT 10 ms and 12.8 ms), one series per file.
    let sw = summarize(&["captured/vllm-s4.stdout.txt", "versions/vllmrs0.33.0-sweep.stdout.txt"], GroupBy::Input);
    assert_eq!(sw.series.len(), 2);
    let fast = truth("captured/vllm-s4.truth.json")["true_tpot_ms"].as_f64().unwrap();
    let slow = truth("versions/vllmrs0.33.0-sweep.truth.json")["true_tpot_ms"].as_f64().unwrap();
    for (a, b) in sw.series[0].points.iter().zip(&sw.series[1].points) {
        assert_eq!(a.max_concurrency, b.max_concurrency);
        let ratio = a.per_user_decode_tok_per_s / b.per_user_decode_tok_per_s;
        assert!(close(ratio, slow / fast, 0.02), "c{:?}: {ratio} vs {}", a.max_concurrency, slow / fast);
    }
}

#[test]
fn per_concurrency_figure_is_kept_apart_from_the_decode_rate() {
    let sw = summarize(&["captured/vllm-s4.stdout.txt"], GroupBy::Workload);
    let s = &sw.series[0];
    for p in &s.points {
        let c = p.max_concurrency.unwrap();
        assert!(close(p.output_tok_per_s_per_concurrency.unwrap(), p.output_tok_per_s / c, 1e-5));
    }
    // Concurrency 8 on a server with 4 slots: throughput / concurrency halves, the decode rate
    // does not (the emulator's TPOT is 10 ms at every load).
    let slots = truth("captured/vllm-s4.truth.json")["emulator_params"]["slots"].as_f64().unwrap();
    let c8 = s.points.iter().find(|p| p.max_concurrency == Some(8.0)).unwrap();
    let per_conc = c8.output_tok_per_s_per_concurrency.unwrap();
    assert!(close(per_conc, c8.per_user_decode_tok_per_s * slots / 8.0, 0.05), "{per_conc}");
    assert!(close(c8.per_user_decode_tok_per_s, 1000.0 / s4_measured_tpot(8.0), RATE_TOLERANCE));
    // The JSON names them apart and says what each is.
    let json = serde_json::to_value(&sw).unwrap();
    let point = &json["series"][0]["points"][3];
    assert!(
        point["per_user_decode_tok_per_s"].as_f64().unwrap()
            > 1.9 * point["output_tok_per_s_per_concurrency"].as_f64().unwrap()
    );
    assert!(json["definitions"]["output_tok_per_s_per_concurrency"].as_str().unwrap().contains("not a decode rate"));
    // A rate sweep without a concurrency cap has no per-concurrency figure; vllm-rs's states one.
    let rs = summarize(&["versions/vllmrs0.33.0-ratesweep.stdout.txt"], GroupBy::Workload);
    assert!(rs.series[0].points.iter().all(|p| p.output_tok_per_s_per_concurrency.is_some()));
    let rates: Vec<Option<f64>> = rs.series[0].points.iter().map(|p| p.request_rate).collect();
    assert_eq!(rates, [Some(2.0), Some(4.0), None], "an infinite rate is the last load");
}

#[test]
fn pareto_marks_match_the_definition() {
    let sw = summarize(
        &[
            "captured/vllm-s4.stdout.txt",
            "versions/vllmrs0.33.0-sweep.stdout.txt",
            "versions/vllmrs0.33.0-ratesweep.stdout.txt",
        ],
        GroupBy::Input,
    );
    for s in &sw.series {
        for p in &s.points {
            let dominated = s.points.iter().any(|q| {
                let (qt, qr, pt, pr) =
                    (q.output_tok_per_s, q.per_user_decode_tok_per_s, p.output_tok_per_s, p.per_user_decode_tok_per_s);
                qt >= pt && qr >= pr && (qt > pt || qr > pr)
            });
            assert_eq!(p.pareto, !dominated, "{} {}", s.label, p.load);
        }
        // The highest throughput is always on the frontier.
        let best = s.points.iter().map(|p| p.output_tok_per_s).fold(0.0, f64::max);
        assert!(s.points.iter().any(|p| p.pareto && p.output_tok_per_s == best));
    }
}

#[test]
fn rejected_runs_are_excluded_and_uncertain_tpots_marked() {
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let sw = summarize(
        &["noisy/duration-mistyped.txt", "versions/sglang0.4.1-oai-s2.result.jsonl", "public/005-vllm.txt"],
        GroupBy::Workload,
    );
    let rejected: Vec<_> = sw.excluded.iter().filter(|e| e.verdict == "rejected").collect();
    assert_eq!(rejected.len(), 1);
    assert!(rejected[0].input.ends_with("duration-mistyped.txt"));
    assert!(rejected[0].reason.contains("e2e-capacity"), "{}", rejected[0].reason);
    assert!(sw.series.iter().flat_map(|s| &s.points).all(|p| !p.input.ends_with("duration-mistyped.txt")));
    let point = |name: &str| sw.series.iter().flat_map(|s| &s.points).find(|p| p.input.ends_with(name)).unwrap();
    let approx = point("sglang0.4.1-oai-s2.result.jsonl");
    assert_eq!(approx.tpot_method.as_deref(), Some("e2e-median-ttft-tokens"));
    assert!(approx.marks.iter().any(|m| m.starts_with("approximate TPOT")), "{:?}", approx.marks);
    let unverified = point("005-vllm.txt");
    assert!(unverified.marks.iter().any(|m| m.starts_with("unverified TPOT")), "{:?}", unverified.marks);
    // The approximate one is still right: within 1% of the truth.
    let t = truth("versions/sglang0.4.1-oai-s2.truth.json")["true_tpot_ms"].as_f64().unwrap();
    assert!(close(approx.per_user_decode_tok_per_s, 1000.0 / t, 0.01));
    // The CLI: the rejection is said, exit 1, the summary still printed.
    let out = bin()
        .args(["sweep", "-f", "json", "samples/noisy/duration-mistyped.txt", "samples/captured/vllm-s4.stdout.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["excluded"][0]["verdict"], "rejected");
    assert!(String::from_utf8_lossy(&out.stderr).contains("e2e-capacity"));
}

#[test]
fn summary_outputs_snapshot() {
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (name, args) in [
            ("sweep@vllm-s4.json", vec!["-f", "json", "samples/captured/vllm-s4.stdout.txt"]),
            ("sweep@vllmrs-sweep.md", vec!["-f", "markdown", "samples/versions/vllmrs0.33.0-sweep.stdout.txt"]),
        ] {
            let out = bin().arg("sweep").args(&args).env("NO_COLOR", "1").output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
            insta::assert_snapshot!(name, String::from_utf8(out.stdout).unwrap());
        }
    });
}

fn svg_of(args: &[&str]) -> (String, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frontier.svg");
    let out =
        bin().current_dir(env!("CARGO_MANIFEST_DIR")).arg("plot").args(args).arg("-o").arg(&path).output().unwrap();
    let svg = std::fs::read_to_string(&path).unwrap_or_default();
    // Only the plot is left in the directory: no temporary file.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.len() <= 1, "{left:?}");
    (svg, out)
}

#[test]
fn plot_is_well_formed_svg_with_every_series() {
    let inputs = ["samples/captured/vllm-s4.stdout.txt", "samples/versions/vllmrs0.33.0-sweep.stdout.txt"];
    let mut args = vec!["--group-by", "input"];
    args.extend(inputs);
    let (svg, out) = svg_of(&args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    for want in [
        inputs[0],
        inputs[1],
        "per-user decode rate, 1000 / TPOT (tok/s)",
        "output throughput (tok/s)",
        "TTFT, mean (ms)",
        "max concurrency (requests)",
        "c8",
    ] {
        assert!(texts.iter().any(|t| t == want), "no text {want:?} in {texts:?}");
    }
    // A marker per point in each panel: circles (the first series' shape) and triangles, the
    // Pareto ones filled (a polygon; a hollow triangle is a polyline), and one of each in the legend.
    let circles = doc.descendants().filter(|n| n.has_tag_name("circle")).count();
    assert_eq!(circles, 2 * 4 + 1, "4 points in two panels and the legend's sample");
    let polygons = doc.descendants().filter(|n| n.has_tag_name("polygon")).count();
    let sw = summarize(&["captured/vllm-s4.stdout.txt", "versions/vllmrs0.33.0-sweep.stdout.txt"], GroupBy::Input);
    let filled_triangles = sw.series[1].points.iter().filter(|p| p.pareto).count();
    assert_eq!(polygons, 2 * filled_triangles + 1, "filled triangles and the legend's");
    // Deterministic: the same inputs give the same bytes.
    let (again, _) = svg_of(&args);
    assert_eq!(svg, again);
}

#[test]
fn plot_refuses_when_there_is_nothing_to_plot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frontier.svg");
    std::fs::write(&path, "old").unwrap();
    // Only Sweep Summary lines (no derived TPOT): no point.
    let summary_only = dir.path().join("summary.txt");
    let text = std::fs::read_to_string(sample("versions/vllmrs0.33.0-sweep.stdout.txt")).unwrap();
    let start = text.find("=====").unwrap();
    let start = text[..text.find("Sweep Summary").unwrap()].rfind('\n').map_or(start, |i| i + 1);
    std::fs::write(&summary_only, &text[start..]).unwrap();
    let out = bin().arg("plot").arg(&summary_only).arg("-o").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was written"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old", "the file is left as it was");
    // An input with no result at all: exit 3 too, for sweep and plot.
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "no benchmark here\n").unwrap();
    for sub in [&["sweep"][..], &["plot", "-o", path.to_str().unwrap()][..]] {
        let out = bin().args(sub).arg(&empty).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{sub:?}");
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 3, "{left:?}");
    // No input is a usage error.
    assert_eq!(bin().arg("sweep").output().unwrap().status.code(), Some(2));
}

/// A vLLM block of a run where every request has `n` output tokens, TTFT `ttft` and TPOT `tpot`,
/// sent in waves of `c` (concurrency `c`, all slots busy), printed with vLLM's 2 decimals.
fn vllm_block(c: u32, requests: u32, n: u32, ttft: f64, tpot: f64) -> String {
    let e2e = ttft + (n - 1) as f64 * tpot;
    // Waves of `c` requests, at least 5 s in all, so that the duration's 2 decimals are exact to 0.2%.
    let waves = (requests / 8).max((5000.0 / e2e).ceil() as u32);
    let requests = c * waves;
    let duration = waves as f64 * e2e / 1000.0;
    let out = (requests * n) as f64;
    format!(
        "============ Serving Benchmark Result ============\n\
         Successful requests:                     {requests}\n\
         Failed requests:                         0\n\
         Maximum request concurrency:             {c}\n\
         Benchmark duration (s):                  {duration:.2}\n\
         Total input tokens:                      {}\n\
         Total generated tokens:                  {}\n\
         Request throughput (req/s):              {:.2}\n\
         Output token throughput (tok/s):         {:.2}\n\
         ---------------Time to First Token----------------\n\
         Mean TTFT (ms):                          {ttft:.2}\n\
         Median TTFT (ms):                        {ttft:.2}\n\
         P99 TTFT (ms):                           {ttft:.2}\n\
         ----------------End-to-end Latency----------------\n\
         Mean E2EL (ms):                          {e2e:.2}\n\
         Median E2EL (ms):                        {e2e:.2}\n\
         P99 E2EL (ms):                           {e2e:.2}\n\
         ==================================================\n",
        requests * 256,
        requests * n,
        requests as f64 / duration,
        out / duration,
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Any sweep of one configuration, its steps in any order and with a decode that slows or
    /// not with load: one series ordered by concurrency, each rate 1000 / that step's TPOT (to
    /// the printed decimals), throughput / concurrency its own figure, Pareto marks by definition.
    #[test]
    fn any_sweep_gives_its_true_frontier(
        steps in proptest::collection::btree_map(0u32..8, (5.0f64..60.0, 20.0f64..2000.0), 1..6),
        n in 16u32..1024,
        requests in 8u32..64,
        shuffle in proptest::prelude::any::<u64>(),
    ) {
        let mut blocks: Vec<(u32, f64, String)> = steps
            .iter()
            .map(|(k, (tpot, ttft))| {
                let c = 1 << k;
                (c, *tpot, vllm_block(c, requests, n, *ttft, *tpot))
            })
            .collect();
        blocks.sort_by_key(|(c, _, _)| (*c as u64).wrapping_mul(shuffle | 1) % 1009);
        let text: String = blocks.iter().map(|b| b.2.as_str()).collect();
        let runs = bench_normalize::normalize_str(&text, "sweep.log").unwrap();
        let sw = sweep::summarize(&runs, GroupBy::Workload);
        proptest::prop_assert!(sw.excluded.is_empty(), "{:?}", sw.excluded);
        proptest::prop_assert_eq!(sw.series.len(), 1);
        let s = &sw.series[0];
        let mut want: Vec<(u32, f64)> = blocks.iter().map(|b| (b.0, b.1)).collect();
        want.sort_by_key(|w| w.0);
        proptest::prop_assert_eq!(s.points.len(), want.len());
        for (p, (c, tpot)) in s.points.iter().zip(&want) {
            proptest::prop_assert_eq!(p.max_concurrency, Some(*c as f64));
            // E2E and TTFT printed to 0.01 ms: TPOT within 0.01 / (n - 1) ms, plus 6-digit rounding.
            let slack = 0.01 / (n - 1) as f64 / tpot + 2e-5;
            proptest::prop_assert!(close(p.per_user_decode_tok_per_s, 1000.0 / tpot, slack),
                "c{}: {} vs {}", c, p.per_user_decode_tok_per_s, 1000.0 / tpot);
            proptest::prop_assert!(close(p.output_tok_per_s_per_concurrency.unwrap(), p.output_tok_per_s / *c as f64, 1e-5));
            let dominated = s.points.iter().any(|q| {
                q.output_tok_per_s >= p.output_tok_per_s
                    && q.per_user_decode_tok_per_s >= p.per_user_decode_tok_per_s
                    && (q.output_tok_per_s > p.output_tok_per_s || q.per_user_decode_tok_per_s > p.per_user_decode_tok_per_s)
            });
            proptest::prop_assert_eq!(p.pareto, !dominated);
        }
        // The plot of any such sweep is well-formed XML.
        let svg = bench_normalize::plot::render(&sw).unwrap();
        proptest::prop_assert!(roxmltree::Document::parse(&svg).is_ok());
    }
}

#[test]
fn text_from_the_inputs_is_escaped_in_the_svg_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(sample("captured/vllm-s4.stdout.txt")).unwrap();
    let hostile = text.replace("/models/emu-llm-wordlevel", "m<&\u{7}\u{1b}[31m|`\u{202e}>");
    let input = dir.path().join("hostile.txt");
    std::fs::write(&input, hostile).unwrap();
    let svg = dir.path().join("p.svg");
    let out = bin().arg("plot").arg(&input).arg("-o").arg(&svg).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let label =
        doc.descendants().filter_map(|n| n.text()).find(|t| t.contains("m<&")).expect("the model in the legend");
    assert!(!label.trim().chars().any(|c| c.is_control() || c == '\u{202e}'), "{label:?}");
    let md = bin().args(["sweep", "-f", "markdown"]).arg(&input).output().unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    let heading = md.lines().next().unwrap();
    // Escaped as compare's Markdown is: `<` and `>` too (a model name is text, never an HTML tag).
    assert!(heading.contains("m\\<&") && heading.contains("\\|") && heading.contains("\\`"), "{heading}");
    assert!(heading.contains("\\>") && !heading.contains("m<"), "{heading}");
    assert!(!md.chars().any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'));
}
