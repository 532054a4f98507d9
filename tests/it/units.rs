//! A JSON export that states a unit per metric (AIPerf's and genai-perf's `"unit"`) is read in that
//! unit: the AIPerf export rewritten in seconds (or nanoseconds) gives the original's figures, and a
//! unit the tool does not know leaves the figure absent with a note, never misread.

use crate::common;

use bench_normalize::report::Verdict;
use bench_normalize::{Options, Run, normalize};
use serde_json::Value;

fn read(path: &str) -> Value {
    common::read_json(&common::samples_dir().join(path))
}

fn run_of(doc: &Value, name: &str) -> Run {
    let text = serde_json::to_string_pretty(doc).unwrap();
    let mut runs = Vec::new();
    normalize(text.as_bytes(), name, &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(runs.len(), 1);
    runs.remove(0)
}

/// Every metric object stated in `from` restated in `to`: its values (not its `count`) times
/// `factor`.
fn restate(doc: &mut Value, from: &str, to: &str, factor: f64) -> usize {
    let mut n = 0;
    for (_, metric) in doc.as_object_mut().unwrap().iter_mut() {
        let Some(m) = metric.as_object_mut() else { continue };
        if m.get("unit").and_then(Value::as_str) != Some(from) {
            continue;
        }
        m.insert("unit".into(), Value::from(to));
        for (k, v) in m.iter_mut() {
            if k != "unit"
                && k != "count"
                && let Some(x) = v.as_f64()
            {
                *v = Value::from(x * factor);
            }
        }
        n += 1;
    }
    n
}

/// Two JSON values equal, numbers within 1e-9 relative; the differences listed.
fn same(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() > 1e-9 * x.abs().max(y.abs()) {
                out.push(format!("{path}: {x} vs {y}"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                same(
                    &x.get(k).cloned().unwrap_or(Value::Null),
                    &y.get(k).cloned().unwrap_or(Value::Null),
                    &format!("{path}.{k}"),
                    out,
                );
            }
        }
        (x, y) if x != y => out.push(format!("{path}: {x} vs {y}")),
        _ => {}
    }
}

fn figures(run: &Run) -> Value {
    serde_json::json!({
        "totals": run.totals,
        "reported": run.reported,
        "tpot": run.derived.tpot_ms.mean,
        "per_user": run.derived.per_user_decode_tok_per_s,
        "output_tok_per_s": run.derived.output_tok_per_s,
        "verdict": run.verdict,
    })
}

#[test]
fn aiperf_export_in_seconds_gives_the_original_figures() {
    let original = read("peers/aiperf-s2.profile_export_aiperf.json");
    let want = run_of(&original, "profile_export_aiperf.json");
    let truth = read("peers/aiperf-s2.truth.json")["true_tpot_ms"].as_f64().unwrap();
    assert!((want.reported.stat("tpot_ms").unwrap().mean().unwrap() - truth).abs() < 0.05);

    for (unit, factor, duration_unit, duration_factor) in
        [("sec", 1e-3, "ms", 1e3), ("s", 1e-3, "us", 1e6), ("ns", 1e6, "min", 1.0 / 60.0), ("us", 1e3, "ns", 1e9)]
    {
        let mut doc = original.clone();
        assert!(restate(&mut doc, "ms", unit, factor) > 5);
        let mut duration = serde_json::json!({ "d": doc["benchmark_duration"].take() });
        assert_eq!(restate(&mut duration, "sec", duration_unit, duration_factor), 1, "benchmark_duration");
        doc["benchmark_duration"] = duration["d"].take();
        let got = run_of(&doc, "profile_export_aiperf.json");
        let mut diffs = Vec::new();
        same(&figures(&want), &figures(&got), "", &mut diffs);
        assert!(diffs.is_empty(), "times in {unit}, duration in {duration_unit}: {}", diffs.join("; "));
        assert!(!got.notes.iter().any(|n| n.code == "unit-unknown"), "{:?}", got.notes);
    }
}

#[test]
fn genai_perf_export_in_seconds_gives_the_original_figures() {
    let original = read("peers/genaiperf-s2.profile_export_genai_perf.json");
    let want = run_of(&original, "profile_export_genai_perf.json");
    let mut doc = original.clone();
    assert!(restate(&mut doc, "ms", "s", 1e-3) >= 4);
    assert!(restate(&mut doc, "requests/sec", "requests/min", 60.0) == 1);
    let got = run_of(&doc, "profile_export_genai_perf.json");
    let mut diffs = Vec::new();
    same(&figures(&want), &figures(&got), "", &mut diffs);
    assert!(diffs.is_empty(), "{}", diffs.join("; "));
}

#[test]
fn an_unknown_unit_leaves_the_figure_absent_with_a_note() {
    let mut doc = read("peers/aiperf-s2.profile_export_aiperf.json");
    doc["inter_token_latency"]["unit"] = Value::from("fortnights");
    doc["request_count"]["unit"] = Value::from("ms");
    doc["completed_request_count"]["unit"] = Value::from("ms");
    let run = run_of(&doc, "profile_export_aiperf.json");
    assert!(run.reported.get("tpot_ms").is_none(), "{:?}", run.reported.get("tpot_ms"));
    assert!(run.totals.get("successful_requests").is_none());
    let notes: Vec<&str> = run.notes.iter().filter(|n| n.code == "unit-unknown").map(|n| n.message.as_str()).collect();
    assert!(notes.iter().any(|m| m.contains("inter_token_latency.avg") && m.contains("'fortnights'")), "{notes:?}");
    assert!(notes.iter().any(|m| m.contains("request_count.avg") && m.contains("'ms'")), "{notes:?}");
    // The rows are kept as the file has them.
    assert!(run.rows.iter().any(|r| r.label == "inter_token_latency.avg"));
}

#[test]
fn the_seconds_export_no_longer_passes_with_a_thousandfold_rate() {
    // Before: TPOT 0.0128 ms and 78,069 tok/s per user, accepted.
    let mut doc = read("peers/aiperf-s2.profile_export_aiperf.json");
    restate(&mut doc, "ms", "sec", 1e-3);
    let run = run_of(&doc, "profile_export_aiperf.json");
    let tpot = run.derived.tpot_ms.mean.unwrap();
    let per_user = run.derived.per_user_decode_tok_per_s.unwrap();
    assert!((tpot - 12.8).abs() < 0.1, "{tpot}");
    assert!((per_user - 78.1).abs() < 0.5, "{per_user}");
    assert_eq!(run.verdict, Verdict::Accepted);
}
