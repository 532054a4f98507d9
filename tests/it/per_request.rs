//! Per-request arrays are evidence, and are checked (`per-request-consistency`): the examples of
//! issue 16, each built from a captured result file by editing its arrays, and a property test of
//! random corruptions of the captured arrays, none of which may pass with a wrong TPOT.

use crate::common;

use std::path::Path;
use std::sync::LazyLock;

use bench_normalize::report::{Status, TpotMethod, Verdict};
use bench_normalize::{Error, Options, Run, normalize};
use proptest::prelude::*;
use serde_json::Value;

const RULE: &str = "per-request-consistency";

/// A captured result file's (first) document, and its truth file's TPOT.
fn sample(name: &str) -> (Value, f64) {
    let path = common::samples_dir().join("captured").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // Python's bare Infinity (SGLang's request rate) as the string the tool reads it as.
    let text = text.replace(": Infinity", ": \"inf\"");
    let doc: Value = serde_json::from_str(text.lines().next().filter(|_| name.ends_with(".jsonl")).unwrap_or(&text))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let stem = name.split(".result").next().unwrap();
    let truth_path = common::samples_dir().join("captured").join(format!("{}.truth.json", truth_stem(stem)));
    let truth = common::read_json(Path::new(&truth_path))["true_tpot_ms"].as_f64().unwrap();
    (doc, truth)
}

/// `vllm-s4-c8` -> `vllm-s4` (the sweep's steps share one truth file).
fn truth_stem(stem: &str) -> String {
    match stem.rsplit_once("-c") {
        Some((head, tail)) if tail.chars().all(|c| c.is_ascii_digit()) && !tail.is_empty() => head.to_string(),
        _ => stem.to_string(),
    }
}

/// Normalize one document as the file it came from (JSONL: one line).
fn run_of(doc: &Value, name: &str) -> Result<Vec<Run>, Error> {
    let mut text = serde_json::to_string(doc).unwrap();
    text.push('\n');
    let mut runs = Vec::new();
    normalize(text.as_bytes(), name, &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })?;
    Ok(runs)
}

fn one(doc: &Value, name: &str) -> Run {
    let mut runs = run_of(doc, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(runs.len(), 1);
    runs.remove(0)
}

fn check<'r>(run: &'r Run, id: &str) -> &'r bench_normalize::report::Check {
    run.checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no check {id}"))
}

/// Multiply every number of a per-request array by `f`.
fn scale(doc: &mut Value, key: &str, f: f64) {
    for v in doc[key].as_array_mut().unwrap() {
        *v = Value::from(v.as_f64().unwrap() * f);
    }
}

fn tpot(run: &Run) -> f64 {
    run.derived.tpot_ms.mean.unwrap()
}

fn per_user(run: &Run) -> f64 {
    run.derived.per_user_decode_tok_per_s.unwrap()
}

/// The rejected run: its rule failed, and the message quotes what it names.
fn assert_rejected_quoting(run: &Run, quotes: &[&str]) {
    let c = check(run, RULE);
    assert_eq!(run.verdict, Verdict::Rejected, "{}", c.message);
    assert_eq!(c.status, Status::Fail, "{}", c.message);
    for q in quotes {
        assert!(c.message.contains(q), "{q:?} not in: {}", c.message);
    }
}

#[test]
fn every_captured_result_file_passes() {
    let mut checked = 0;
    for dir in ["captured", "versions"] {
        for suffix in [".result.json", ".result.jsonl"] {
            for path in common::sample_files(dir, suffix) {
                for run in common::normalize_file(&path).unwrap() {
                    if run.derived.per_request.is_none() {
                        continue;
                    }
                    let c = check(&run, RULE);
                    assert_eq!(c.status, Status::Pass, "{}: {}", path.display(), c.message);
                    assert_eq!(run.verdict, Verdict::Accepted, "{}", path.display());
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 35, "{checked} runs with per-request arrays");
}

#[test]
fn the_truth_is_what_the_untouched_sample_gives() {
    let (doc, truth) = sample("vllm-s2.result.json");
    let run = one(&doc, "vllm-s2.result.json");
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::PerRequest));
    assert!(common::is_truth(tpot(&run), truth, false), "{} vs {truth}", tpot(&run));
    let c = check(&run, RULE);
    assert_eq!(c.status, Status::Pass);
    assert!(c.message.contains("output_lens sum to 8192"), "{}", c.message);
}

#[test]
fn negative_latencies_are_rejected() {
    let (mut doc, _) = sample("vllm-s2.result.json");
    scale(&mut doc, "latencies", -1.0);
    let run = one(&doc, "vllm-s2.result.json");
    // What the arrays say, as read: a TPOT of about -13 ms.
    assert!((tpot(&run) + 13.35).abs() < 0.1, "{}", tpot(&run));
    assert_rejected_quoting(&run, &["latencies[0] = -6", "is not a finite non-negative number"]);
}

#[test]
fn one_negative_latency_among_sixteen_is_rejected() {
    let (mut doc, _) = sample("vllm-s2.result.json");
    doc["latencies"][5] = Value::from(-997.5);
    let run = one(&doc, "vllm-s2.result.json");
    // The mean is dragged to about -110 ms while the median stays at 12.8.
    assert!((tpot(&run) + 110.0).abs() < 1.0, "{}", tpot(&run));
    assert!((run.derived.tpot_ms.p50.unwrap() - 12.8).abs() < 0.01);
    assert_rejected_quoting(&run, &["latencies[5] = -997500"]);
}

#[test]
fn doubled_output_lengths_with_the_total_unchanged_are_rejected() {
    let (mut doc, truth) = sample("vllm-s2.result.json");
    scale(&mut doc, "output_lens", 2.0);
    let run = one(&doc, "vllm-s2.result.json");
    // TPOT 6.4 ms, 156 tok/s per user, where the truth is 12.8 / 78.
    assert!((tpot(&run) - truth / 2.0).abs() < 0.05, "{}", tpot(&run));
    assert!((per_user(&run) - 156.0).abs() < 1.0, "{}", per_user(&run));
    assert_rejected_quoting(&run, &["sum to 16384", "total output tokens is 8192", "the file's mean TPOT is 12.8"]);
}

#[test]
fn halved_latencies_with_the_mean_unchanged_are_rejected() {
    let (mut doc, _) = sample("vllm-s2.result.json");
    scale(&mut doc, "latencies", 0.5);
    let run = one(&doc, "vllm-s2.result.json");
    assert!((per_user(&run) - 160.0).abs() < 1.0, "{}", per_user(&run));
    assert_rejected_quoting(&run, &["the mean of latencies is 3340.83 ms, the file's mean E2E 6681.67 ms"]);
}

#[test]
fn sglang_gaps_shrunk_or_grown_are_rejected() {
    // No latency array: E2E_i is TTFT_i + the sum of the gaps.
    for f in [0.5, 2.0] {
        let (mut doc, _) = sample("sglang-s2.result.jsonl");
        for gaps in doc["itls"].as_array_mut().unwrap() {
            for g in gaps.as_array_mut().unwrap() {
                *g = Value::from(g.as_f64().unwrap() * f);
            }
        }
        let run = one(&doc, "sglang-s2.result.jsonl");
        assert_eq!(run.derived.per_request.as_ref().unwrap().e2e_source, "ttft + sum of gaps");
        assert_rejected_quoting(&run, &["TTFT + the sum of gaps", "the file's mean TPOT is 12.8"]);
    }
}

#[test]
fn a_request_marked_failed_or_succeeded_is_rejected() {
    let (mut doc, _) = sample("vllm-s5.result.json");
    // Request 3 failed (zeros everywhere): call it a success.
    doc["errors"][3] = Value::from("");
    assert_rejected_quoting(&one(&doc, "vllm-s5.result.json"), &["13 requests succeeded", "12 completed"]);
    let (mut doc, _) = sample("vllm-s5.result.json");
    doc["errors"][0] = Value::from("boom");
    assert_rejected_quoting(&one(&doc, "vllm-s5.result.json"), &["11 requests succeeded"]);
}

#[test]
fn a_latency_below_its_ttft_is_rejected() {
    let (mut doc, _) = sample("vllm-s4-c8.result.json");
    let ttft = doc["ttfts"][7].as_f64().unwrap();
    doc["latencies"][7] = Value::from(ttft / 2.0);
    assert_rejected_quoting(&one(&doc, "vllm-s4-c8.result.json"), &["latencies[7]", "is below ttfts[7]"]);
}

#[test]
fn fractional_token_counts_are_rejected() {
    let (mut doc, _) = sample("sglang-oai-s5.result.jsonl");
    doc["output_lens"][0] = Value::from(128.5);
    assert_rejected_quoting(&one(&doc, "sglang-oai-s5.result.jsonl"), &["output_lens[0] = 128.5 is not a whole"]);
}

/// A corruption of one captured file's per-request arrays.
#[derive(Debug, Clone)]
enum Corruption {
    /// Every number of an array times a factor (the gaps of every request, for `itls`).
    Scale(usize, f64),
    Negate(usize),
    NegateOne(usize, usize),
    /// One entry times a factor (one request's gaps, for `itls`).
    ScaleOne(usize, usize, f64),
    /// One array rotated by some places (its entries then belong to other requests).
    Rotate(usize, usize),
    /// One array shuffled (a permutation drawn from the seed).
    Shuffle(usize, u64),
    /// Two entries of one array swapped.
    Swap(usize, usize, usize),
    Drop(usize, usize),
    Duplicate(usize, usize),
    /// A request removed from every array.
    DropRequest(usize),
    /// A failed request called successful, or the reverse.
    ToggleError(usize),
    /// Two numeric arrays exchanged.
    Exchange(usize, usize),
}

const NUMERIC: &[&str] = &["ttfts", "latencies", "output_lens", "input_lens", "itls"];
const SAMPLES: &[&str] = &[
    "vllm-s2.result.json",
    "vllm-s5.result.json",
    "vllm-s4-c8.result.json",
    "vllm-s3.result.json",
    "sglang-s2.result.jsonl",
    "sglang-oai-s5.result.jsonl",
    "sglang-oai-s2spec.result.jsonl",
    "sglang-s3.result.jsonl",
];

static LOADED: LazyLock<Vec<(Value, f64)>> = LazyLock::new(|| SAMPLES.iter().map(|s| sample(s)).collect());

fn corrupt(doc: &mut Value, c: &Corruption) -> bool {
    let present: Vec<&str> = NUMERIC.iter().copied().filter(|k| doc.get(*k).is_some_and(Value::is_array)).collect();
    let key = |k: usize| present[k % present.len()];
    let map = |v: &mut Value, f: &dyn Fn(f64) -> f64| match v {
        Value::Array(gaps) => gaps.iter_mut().for_each(|g| *g = Value::from(f(g.as_f64().unwrap()))),
        other => *other = Value::from(f(other.as_f64().unwrap())),
    };
    // Each array's own length: an earlier corruption may have dropped or added an entry.
    let len = |doc: &Value, k: usize| doc[key(k)].as_array().map_or(0, Vec::len).max(1);
    match *c {
        Corruption::Scale(k, f) => doc[key(k)].as_array_mut().unwrap().iter_mut().for_each(|v| map(v, &|x| x * f)),
        Corruption::Negate(k) => doc[key(k)].as_array_mut().unwrap().iter_mut().for_each(|v| map(v, &|x| -x)),
        Corruption::NegateOne(k, i) => {
            let at = i % len(doc, k);
            map(&mut doc[key(k)][at], &|x| -x)
        }
        Corruption::ScaleOne(k, i, f) => {
            let at = i % len(doc, k);
            map(&mut doc[key(k)][at], &|x| x * f)
        }
        Corruption::Rotate(k, by) => {
            let m = len(doc, k);
            doc[key(k)].as_array_mut().unwrap().rotate_left(by % m)
        }
        Corruption::Shuffle(k, seed) => {
            let a = doc[key(k)].as_array_mut().unwrap();
            let mut s = seed | 1;
            for i in (1..a.len()).rev() {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                a.swap(i, (s % (i as u64 + 1)) as usize);
            }
        }
        Corruption::Swap(k, i, j) => {
            let m = len(doc, k);
            doc[key(k)].as_array_mut().unwrap().swap(i % m, j % m)
        }
        Corruption::Drop(k, i) => {
            let m = len(doc, k);
            doc[key(k)].as_array_mut().unwrap().remove(i % m);
        }
        Corruption::Duplicate(k, i) => {
            let m = len(doc, k);
            let a = doc[key(k)].as_array_mut().unwrap();
            let v = a[i % m].clone();
            a.insert(i % m, v);
        }
        Corruption::DropRequest(i) => {
            let n = len(doc, 0);
            for v in doc.as_object_mut().unwrap().values_mut() {
                if let Value::Array(a) = v
                    && a.len() == n
                {
                    a.remove(i % n);
                }
            }
        }
        Corruption::ToggleError(i) => {
            let m = doc["errors"].as_array().map_or(0, Vec::len).max(1);
            let e = &mut doc["errors"][i % m];
            *e = Value::from(if e.as_str().is_some_and(|s| !s.is_empty()) { "" } else { "boom" });
        }
        Corruption::Exchange(a, b) => {
            let (ka, kb) = (key(a), key(b));
            if ka == kb || ka == "itls" || kb == "itls" {
                return false;
            }
            let va = doc[ka].take();
            let vb = std::mem::replace(&mut doc[kb], va);
            doc[ka] = vb;
        }
    }
    true
}

fn corruption() -> impl Strategy<Value = Corruption> {
    let factor = prop_oneof![0.01f64..0.98, 1.02f64..100.0, Just(0.0), Just(0.5), Just(2.0), Just(1000.0)];
    prop_oneof![
        (0..5usize, factor.clone()).prop_map(|(k, f)| Corruption::Scale(k, f)),
        (0..5usize).prop_map(Corruption::Negate),
        (0..5usize, 0..64usize).prop_map(|(k, i)| Corruption::NegateOne(k, i)),
        (0..5usize, 0..64usize, factor).prop_map(|(k, i, f)| Corruption::ScaleOne(k, i, f)),
        (0..5usize, 1..64usize).prop_map(|(k, by)| Corruption::Rotate(k, by)),
        (0..5usize, any::<u64>()).prop_map(|(k, seed)| Corruption::Shuffle(k, seed)),
        (0..5usize, 0..64usize, 0..64usize).prop_map(|(k, i, j)| Corruption::Swap(k, i, j)),
        (0..5usize, 0..64usize).prop_map(|(k, i)| Corruption::Drop(k, i)),
        (0..5usize, 0..64usize).prop_map(|(k, i)| Corruption::Duplicate(k, i)),
        (0..64usize).prop_map(Corruption::DropRequest),
        (0..64usize).prop_map(Corruption::ToggleError),
        (0..5usize, 0..5usize).prop_map(|(a, b)| Corruption::Exchange(a, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Whatever was done to the arrays: rejected, refused (exit 3), or a TPOT within 2% of the
    /// truth (a corruption the figures do not feel, such as gaps scaled in a file with latencies).
    #[test]
    fn corrupted_arrays_never_pass_with_a_wrong_tpot(which in 0..SAMPLES.len(), cs in prop::collection::vec(corruption(), 1..3)) {
        let (mut doc, truth) = LOADED[which].clone();
        let mut any = false;
        for c in &cs {
            any |= corrupt(&mut doc, c);
        }
        prop_assume!(any);
        let Ok(runs) = run_of(&doc, SAMPLES[which]) else { return Ok(()) };
        for run in runs {
            if run.verdict == Verdict::Rejected {
                continue;
            }
            let tpot = run.derived.tpot_ms.mean;
            let ok = tpot.is_some_and(|t| (t - truth).abs() <= 0.02 * truth);
            prop_assert!(
                ok || tpot.is_none(),
                "{}: {cs:?} accepted with TPOT {tpot:?} (truth {truth}); {}",
                SAMPLES[which],
                check(&run, RULE).message
            );
        }
    }
}

/// The vLLM sample with its arrays replaced: `ttft` s, `gaps` s per request, `latency` s, output
/// lengths; the summary figures recomputed from them as vLLM computes them.
fn simulated(ttft: &[f64], gaps: &[Vec<f64>], latency: &[f64], out: &[u64]) -> Value {
    let (mut doc, _) = sample("vllm-s2.result.json");
    let n = ttft.len() as f64;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let tpots: Vec<f64> =
        (0..ttft.len()).filter(|i| out[*i] > 1).map(|i| (latency[i] - ttft[i]) / (out[i] - 1) as f64).collect();
    doc["ttfts"] = serde_json::json!(ttft);
    doc["itls"] = serde_json::json!(gaps);
    doc["latencies"] = serde_json::json!(latency);
    doc["output_lens"] = serde_json::json!(out);
    doc["total_output_tokens"] = serde_json::json!(out.iter().sum::<u64>());
    doc["mean_ttft_ms"] = serde_json::json!(mean(ttft) * 1000.0);
    doc["mean_e2el_ms"] = serde_json::json!(mean(latency) * 1000.0);
    doc["mean_tpot_ms"] = serde_json::json!(mean(&tpots) * 1000.0);
    assert_eq!(n as usize, 16);
    doc
}

/// The file: latencies halved and every summary figure recomputed from them (TPOT 6.4,
/// true 12.8): the arrays agree with the summary, but each request's gaps no longer fit in its
/// latency minus its TTFT.
#[test]
fn halved_latencies_with_a_recomputed_summary_are_rejected_naming_the_request() {
    let (doc, _) = sample("vllm-s2.result.json");
    let f = |k: &str| doc[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect::<Vec<f64>>();
    let (ttft, latency) = (f("ttfts"), f("latencies"));
    let gaps: Vec<Vec<f64>> = serde_json::from_value(doc["itls"].clone()).unwrap();
    let out: Vec<u64> = serde_json::from_value(doc["output_lens"].clone()).unwrap();
    let honest = one(&simulated(&ttft, &gaps, &latency, &out), "vllm-s2.result.json");
    assert_eq!(check(&honest, RULE).status, Status::Pass, "{}", check(&honest, RULE).message);
    assert!(check(&honest, RULE).message.contains("each request's gaps sum to its latency minus its TTFT (16"));
    let halved: Vec<f64> = latency.iter().map(|x| x / 2.0).collect();
    let run = one(&simulated(&ttft, &gaps, &halved, &out), "vllm-s2.result.json");
    assert!((tpot(&run) - 6.33).abs() < 0.1, "{}", tpot(&run));
    assert_rejected_quoting(&run, &["16 of 16 requests' chunk gaps", "request 0: its gaps (itls[0]) sum to"]);
}

/// A simulated honest request: TTFT, gaps, and the latency vLLM would write (the last chunk's
/// time, read again: float rounding and up to 20 us of a second clock reading either way).
fn honest_request() -> impl Strategy<Value = (f64, Vec<f64>, f64, u64)> {
    (0.01f64..2.0, prop::collection::vec(0.0005f64..0.3, 1..40), -2e-5f64..2e-5, 1u64..4).prop_map(
        |(ttft, gaps, jitter, per_chunk)| {
            let latency = ttft + gaps.iter().sum::<f64>() + jitter;
            let out = (gaps.len() as u64 + 1) * per_chunk;
            (ttft, gaps, latency.max(ttft), out)
        },
    )
}

proptest! {
    /// Honest arrays pass; one request's latency or its gap list scaled by 0.5 or 2 is caught, and
    /// named, whenever its decode span exceeds the tolerance's reach (~2 ms).
    #[test]
    fn one_request_scaled_is_caught(reqs in prop::collection::vec(honest_request(), 16), which in 0usize..16, field in 0usize..2, up in any::<bool>()) {
        let ttft: Vec<f64> = reqs.iter().map(|r| r.0).collect();
        let mut gaps: Vec<Vec<f64>> = reqs.iter().map(|r| r.1.clone()).collect();
        let mut latency: Vec<f64> = reqs.iter().map(|r| r.2).collect();
        let out: Vec<u64> = reqs.iter().map(|r| r.3).collect();
        let run = one(&simulated(&ttft, &gaps, &latency, &out), "vllm-s2.result.json");
        prop_assert_eq!(check(&run, RULE).status, Status::Pass, "{}", check(&run, RULE).message);
        let factor = if up { 2.0 } else { 0.5 };
        if field == 0 {
            latency[which] *= factor;
        } else {
            gaps[which].iter_mut().for_each(|g| *g *= factor);
        }
        let span = reqs[which].1.iter().sum::<f64>() * 1000.0;
        prop_assume!(span > 3.0);
        let run = one(&simulated(&ttft, &gaps, &latency, &out), "vllm-s2.result.json");
        let c = check(&run, RULE);
        prop_assert_eq!(c.status, Status::Fail, "{}", c.message);
        prop_assert_eq!(run.verdict, Verdict::Rejected);
        let named = format!("request {which}");
        prop_assert!(c.message.contains(&named) || c.message.contains(&format!("latencies[{which}]")), "{}", c.message);
    }
}
