//! `--format llmd-br`: the llm-d Benchmark Report keeps our meanings. Expected figures come from
//! the truth files and from the inputs' own keys, never from the code under test. (That every
//! sample's output loads with llm-d's own package is tests/llmd/run.sh, run by .ci/run.)

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize")).args(args).env("NO_COLOR", "1").output().unwrap()
}

fn sample(name: &str) -> String {
    common::samples_dir().join(name).display().to_string()
}

/// The Benchmark Reports written for an input, one per line.
fn reports(path: &str) -> (Vec<Value>, Output) {
    let o = run(&["--format", "llmd-br", path]);
    let docs = String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: not one JSON document a line: {e}: {l}")))
        .collect();
    (docs, o)
}

/// The canonical runs of an input.
fn canonical(path: &str) -> Vec<Value> {
    let o = run(&["--format", "json", path]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["runs"].as_array().unwrap().clone()
}

fn truth_of(path: &Path) -> Value {
    let name = path.file_name().unwrap().to_str().unwrap();
    let stem = name.split('.').next().unwrap();
    let t = path.with_file_name(format!("{stem}.truth.json"));
    serde_json::from_str(&std::fs::read_to_string(&t).unwrap_or_else(|e| panic!("{}: {e}", t.display()))).unwrap()
}

fn aggregate(doc: &Value) -> &Value {
    &doc["results"]["request_performance"]["aggregate"]
}

fn description(doc: &Value) -> &str {
    doc["scenario"]["load"]["metadata"]["description"].as_str().or(doc["run"]["description"].as_str()).unwrap()
}

fn within(got: f64, want: f64, frac: f64) -> bool {
    (got - want).abs() <= frac * want.abs()
}

fn spec_samples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(common::samples_dir().join("captured"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.contains("spec") && common::is_sample(n)
        })
        .collect();
    v.sort();
    v
}

/// Speculative decoding (~10 tokens a chunk): TPOT is the true one within 2%; an ITL timed per
/// chunk is left out and said so; an ITL the tool spreads per token is kept, and is per token.
#[test]
fn spec_samples_keep_the_true_tpot_and_leave_out_a_per_chunk_itl() {
    let (mut chunked, mut per_token, mut with_counts) = (Vec::new(), 0, 0);
    for path in spec_samples() {
        let p = path.display().to_string();
        let truth = truth_of(&path);
        let true_tpot = truth["true_tpot_ms"].as_f64().unwrap();
        let (docs, o) = reports(&p);
        assert!(o.status.success(), "{p}: {}", String::from_utf8_lossy(&o.stderr));
        let runs = canonical(&p);
        assert_eq!(docs.len(), 1, "{p}");
        let (doc, run) = (&docs[0], &runs[0]);
        let lat = &aggregate(doc)["latency"];
        let tpot = &lat["time_per_output_token"];
        assert_eq!(tpot["units"], "ms/token", "{p}");
        let mean = tpot["mean"].as_f64().unwrap();
        assert!(within(mean, true_tpot, 0.02), "{p}: TPOT {mean} vs true {true_tpot}");
        for k in ["p50", "p90", "p99"] {
            if let Some(v) = tpot[k].as_f64() {
                assert!(within(v, true_tpot, 0.02), "{p}: TPOT {k} {v} is not this TPOT's (true {true_tpot})");
            }
        }
        match run["source"]["semantics"]["itl"].as_str() {
            Some("chunk") => {
                assert!(
                    lat.get("inter_token_latency").is_none(),
                    "{p}: a per-chunk ITL written as inter_token_latency"
                );
                let d = description(doc);
                assert!(d.contains("inter_token_latency left out") && d.contains("per streamed chunk"), "{p}: {d}");
                chunked.push(path.file_name().unwrap().to_str().unwrap().to_string());
            }
            Some("token") => {
                let itl = lat["inter_token_latency"]["mean"].as_f64().unwrap();
                assert!(within(itl, true_tpot, 0.02), "{p}: a per-token ITL {itl} that is not per token");
                per_token += 1;
            }
            other => panic!("{p}: ITL semantics {other:?}"),
        }
        // The run's own request counts: every one of num_prompts sent, none failed; or, when the
        // run does not say how many failed (SGLang's console), no count at all, said so.
        let req = &aggregate(doc)["requests"];
        if req.is_null() {
            assert!(description(doc).contains("requests left out"), "{p}");
            assert!(run["totals"].get("failed_requests").is_none(), "{p}: the run states its failures");
        } else {
            assert_eq!(req["total"], truth["num_prompts"], "{p}");
            assert_eq!(req["failures"], 0, "{p}");
            with_counts += 1;
        }
    }
    assert!(with_counts >= 4, "{with_counts}");
    // vLLM times ITL per chunk (both its console and its result file); SGLang spreads a chunk's
    // gap over its tokens.
    assert_eq!(chunked, ["vllm-s2spec.result.json", "vllm-s2spec.stdout.txt"]);
    assert_eq!(per_token, 4);
}

/// guidellm's "time per output token" includes the time to the first token: it goes to
/// normalized_time_per_output_token, and time_per_output_token is the true TPOT.
#[test]
fn guidellm_ttft_inclusive_figure_is_the_normalized_tpot() {
    let path = common::samples_dir().join("peers/guidellm-s2.benchmarks.json");
    let truth = truth_of(&path);
    let (docs, _) = reports(&path.display().to_string());
    let lat = &aggregate(&docs[0])["latency"];
    let tpot = lat["time_per_output_token"]["mean"].as_f64().unwrap();
    let ntpot = lat["normalized_time_per_output_token"]["mean"].as_f64().unwrap();
    let true_tpot = truth["true_tpot_ms"].as_f64().unwrap();
    assert!(within(tpot, true_tpot, 0.02), "TPOT {tpot} vs true {true_tpot}");
    // E2E / output tokens, TTFT included.
    let true_ntpot = truth["expected_true_e2e_ms"].as_f64().unwrap() / truth["output_len"].as_f64().unwrap();
    assert!(within(ntpot, true_ntpot, 0.02), "NTPOT {ntpot} vs E2E / tokens {true_ntpot}");
    assert!(description(&docs[0]).contains("time to first token included"));
}

/// llmperf's "inter token latency" is request latency / output tokens: the normalized TPOT, in
/// ms, with every statistic llmperf gives.
#[test]
fn llmperf_ttft_inclusive_figure_is_the_normalized_tpot() {
    let path = sample("rendered/llmperf-summary.json");
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (docs, o) = reports(&path);
    assert!(o.status.success());
    let lat = &aggregate(&docs[0])["latency"];
    let n = &lat["normalized_time_per_output_token"];
    for (ours, theirs) in [("mean", "mean"), ("p50", "quantiles_p50"), ("p99", "quantiles_p99"), ("stddev", "stddev")] {
        let want = input[format!("results_inter_token_latency_s_{theirs}")].as_f64().unwrap() * 1000.0;
        assert!(within(n[ours].as_f64().unwrap(), want, 1e-9), "{ours}: {} vs {want}", n[ours]);
    }
    // (E2E 5300 - TTFT 200) / (256 - 1): the TPOT excludes the first token.
    let want = (input["results_end_to_end_latency_s_mean"].as_f64().unwrap() * 1000.0
        - input["results_ttft_s_mean"].as_f64().unwrap() * 1000.0)
        / (input["results_number_output_tokens_mean"].as_f64().unwrap() - 1.0);
    assert!(within(lat["time_per_output_token"]["mean"].as_f64().unwrap(), want, 1e-4));
    let req = &aggregate(&docs[0])["requests"];
    assert_eq!(req["total"], input["results_num_requests_started"]);
    assert_eq!(req["failures"], input["results_number_errors"]);
}

/// Rates are recomputed from the totals (the file's own totals), not copied from its printed rates.
#[test]
fn rates_are_recomputed_from_totals() {
    let path = sample("captured/vllm-s2spec.result.json");
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (docs, _) = reports(&path);
    let thr = &aggregate(&docs[0])["throughput"];
    let d = input["duration"].as_f64().unwrap();
    let (n_in, n_out) = (input["total_input_tokens"].as_f64().unwrap(), input["total_output_tokens"].as_f64().unwrap());
    for (name, want, units) in [
        ("output_token_rate", n_out / d, "tokens/s"),
        ("input_token_rate", n_in / d, "tokens/s"),
        ("total_token_rate", (n_in + n_out) / d, "tokens/s"),
        ("request_rate", input["completed"].as_f64().unwrap() / d, "queries/s"),
    ] {
        assert_eq!(thr[name]["units"], units);
        assert!(within(thr[name]["mean"].as_f64().unwrap(), want, 1e-5), "{name}: {} vs {want}", thr[name]);
    }
    let req = &aggregate(&docs[0])["requests"];
    assert_eq!(req["failures"], input["failed"]);
    assert_eq!(
        req["total"].as_f64().unwrap(),
        input["completed"].as_f64().unwrap() + input["failed"].as_f64().unwrap()
    );
}

/// A run rejected by a rule is not written (what llm-d stores must pass every rule); exit 1.
#[test]
fn a_rejected_run_is_not_written() {
    let (docs, o) = reports(&sample("noisy/duration-mistyped.txt"));
    assert_eq!(o.status.code(), Some(1));
    assert!(docs.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("llmd-br: not written: the run is rejected"));
}

/// A run with nothing usable is not written either; the others of the input are; exit 3.
#[test]
fn an_unusable_run_is_not_written() {
    let (docs, o) = reports(&sample("noisy/cut-off-then-next-run.txt"));
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(docs.len(), 1, "the second, complete run only");
    assert!(String::from_utf8_lossy(&o.stderr).contains("llmd-br: not written: the run is unusable"));
}

/// Several runs: one document a line, each its own uid, the same uid for the same run.
#[test]
fn several_runs_are_one_document_a_line_with_stable_uids() {
    let path = sample("rendered/sglang-multi-0.4.1.txt");
    let (docs, o) = reports(&path);
    assert!(o.status.success());
    assert_eq!(docs.len(), canonical(&path).len());
    assert!(docs.len() > 1);
    let uids: Vec<&str> = docs.iter().map(|d| d["run"]["uid"].as_str().unwrap()).collect();
    let mut distinct = uids.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), uids.len(), "{uids:?}");
    let (again, _) = reports(&path);
    assert_eq!(docs, again);
    for d in &docs {
        assert_eq!(d["version"], "0.2");
    }
}

/// Nothing the run does not state: no stack, hardware, time, cluster or experiment ids, and a
/// client version only when the run states one.
#[test]
fn nothing_is_invented() {
    let mut seen = 0;
    for path in common::samples() {
        let p = path.display().to_string();
        let (docs, _) = reports(&p);
        for doc in docs {
            seen += 1;
            assert!(doc["scenario"].get("stack").is_none(), "{p}: a stack");
            for k in ["time", "eid", "cid", "pid", "user", "keywords"] {
                assert!(doc["run"].get(k).is_none(), "{p}: run.{k}");
            }
            assert!(doc["results"].get("observability").is_none(), "{p}");
            let v = &doc["scenario"]["load"]["standardized"]["tool_version"];
            assert!(v.is_null() || v == "", "{p}: tool_version {v} from no sample states one");
        }
    }
    assert!(seen > 100, "{seen}");
}

/// A hand-written dstack report checked and written as a Benchmark Report: its stated client
/// version and command are kept, its TPOT is derived from its E2E and checked against its claim;
/// a claimed TPOT that is a per-chunk ITL is rejected and not written.
#[test]
fn a_checked_hand_written_report_keeps_what_it_states() {
    use std::io::Write;
    use std::process::Stdio;
    let report = |tpot: f64| {
        format!(
            r#"{{"tool":"vllm bench serve","tool_version":"0.11.0","command":"vllm bench serve --max-concurrency 4",
            "workload":{{"api":"completions","num_requests":32,"concurrency":4,"input_tokens":512,"output_tokens":512}},
            "metrics":{{"successful_requests":32,"failed_requests":0,"duration_seconds":50.0,"total_input_tokens":16384,
            "total_output_tokens":16384,"output_tok_per_s":327.68,"per_user_tok_per_s":81.92,
            "ttft_ms":{{"mean":100,"p50":100,"p99":120}},"tpot_ms":{{"mean":{tpot},"p50":{tpot},"p99":{tpot}}},
            "e2e_ms":{{"mean":6232,"p50":6230,"p99":6300}}}}}}"#
        )
    };
    let check = |text: String| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
            .args(["check", "--format", "llmd-br", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let o = check(report(12.0));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let load = &doc["scenario"]["load"];
    assert_eq!(load["standardized"]["tool_version"], "0.11.0");
    assert_eq!(load["standardized"]["concurrency"], 4);
    assert_eq!(load["native"]["config"]["command"], "vllm bench serve --max-concurrency 4");
    // (6232 - 100) / (16384 / 32 - 1) = 12.0
    assert_eq!(aggregate(&doc)["latency"]["time_per_output_token"]["mean"], 12.0);
    // The same report with a per-chunk ITL (10 tokens a chunk) as its TPOT.
    let o = check(report(120.0));
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
}

fn check_doc(doc: &Value) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
        .args(["check", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(doc.to_string().as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// A Benchmark Report read back by `check`: TPOT derived again from its own E2E, TTFT and output
/// length is the true TPOT within 2%, whether the times are in ms or s.
#[test]
fn a_benchmark_report_read_back_derives_the_true_tpot() {
    let mut seen = 0;
    for path in spec_samples() {
        let p = path.display().to_string();
        let true_tpot = truth_of(&path)["true_tpot_ms"].as_f64().unwrap();
        let (docs, _) = reports(&p);
        let mut doc = docs[0].clone();
        if doc["results"]["request_performance"]["aggregate"]["requests"].is_null() {
            continue; // no request counts: nothing to derive from
        }
        for seconds in [false, true] {
            if seconds {
                let lat = doc["results"]["request_performance"]["aggregate"]["latency"].as_object_mut().unwrap();
                for st in lat.values_mut() {
                    let st = st.as_object_mut().unwrap();
                    let per_token = st["units"] == "ms/token";
                    st.insert("units".into(), (if per_token { "s/token" } else { "s" }).into());
                    for (k, v) in st.iter_mut() {
                        if k != "units" {
                            *v = (v.as_f64().unwrap() / 1000.0).into();
                        }
                    }
                }
            }
            let o = check_doc(&doc);
            assert!(o.status.success(), "{p}: {}", String::from_utf8_lossy(&o.stderr));
            let report: Value = serde_json::from_slice(&o.stdout).unwrap();
            let run = &report["runs"][0];
            assert_eq!(run["derived"]["tpot_ms"]["method"], "e2e-ttft-tokens", "{p}");
            let tpot = run["derived"]["tpot_ms"]["mean"].as_f64().unwrap();
            assert!(within(tpot, true_tpot, 0.02), "{p} (seconds: {seconds}): {tpot} vs {true_tpot}");
            seen += 1;
        }
    }
    assert!(seen >= 8, "{seen}");
}

/// What llm-d's converters do: vLLM's per-chunk ITL (~10 tokens a chunk) put in
/// time_per_output_token. `check` rejects it, as it does in a hand-written dstack report.
#[test]
fn a_benchmark_report_with_a_per_chunk_itl_as_tpot_is_rejected() {
    let path = sample("captured/vllm-s2spec.result.json");
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (docs, _) = reports(&path);
    let mut doc = docs[0].clone();
    let itl = input["mean_itl_ms"].as_f64().unwrap();
    doc["results"]["request_performance"]["aggregate"]["latency"]["time_per_output_token"] =
        serde_json::json!({"units": "ms/token", "mean": itl});
    // Lengths not stated as fixed: request- and token-weighted means may differ by any factor in
    // an honest run, so the claim is a warning, and the TPOT emitted is the derived one.
    let o = check_doc(&doc);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let run = &report["runs"][0];
    assert_eq!(run["source"]["parser"], "llmd-benchmark-report");
    let agreement = run["checks"].as_array().unwrap().iter().find(|c| c["id"] == "tpot-agreement").unwrap();
    assert_eq!(agreement["status"], "fail", "{agreement}");
    let derived = run["derived"]["tpot_ms"]["mean"].as_f64().unwrap();
    assert!(derived * 5.0 < itl, "the derived TPOT {derived}, never the claimed ITL {itl}");
    // The load's output length stated as fixed (every request's cap, and the totals show every
    // request had it): the copied ITL is a contradiction, rejected.
    let total =
        doc["results"]["request_performance"]["aggregate"]["requests"]["output_length"]["mean"].as_f64().unwrap();
    let mut fixed = doc.clone();
    fixed["scenario"]["load"]["standardized"]["output_seq_len"] =
        serde_json::json!({"distribution": "fixed", "value": total as u64});
    let o = check_doc(&fixed);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["runs"][0]["verdict"], "rejected");
    // A unit the field cannot have is an error naming the field (exit 3), never a guess.
    doc["results"]["request_performance"]["aggregate"]["latency"]["time_per_output_token"]["units"] = "tokens/s".into();
    let o = check_doc(&doc);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("time_per_output_token.units"));
}

/// A Benchmark Report states its rates, not its duration: `check` reads the duration from them
/// (`R / request_rate`; `N_out / output_token_rate` when requests failed), so the capacity rules
/// apply. The tool's own report of a log (its output length stated `fixed`: the totals prove every
/// request had it) is accepted; the same with vLLM's per-chunk ITL as `time_per_output_token` and
/// no `request_latency` is rejected by `decode-capacity`, as the log would be.
#[test]
fn the_duration_is_read_from_the_rates_and_the_capacity_rules_apply() {
    let (docs, _) = reports(&sample("captured/vllm-s2.stdout.txt"));
    let doc = docs[0].clone();
    assert_eq!(
        doc["scenario"]["load"]["standardized"]["output_seq_len"],
        serde_json::json!({"distribution": "fixed", "value": 512})
    );
    let status = |o: &Output, id: &str| -> (String, String) {
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        let c = report["runs"][0]["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).cloned().unwrap();
        (c["status"].as_str().unwrap().to_string(), c["message"].as_str().unwrap().to_string())
    };
    let o = check_doc(&doc);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["runs"][0]["totals"]["duration_s"], 26.73);
    assert_eq!(status(&o, "e2e-capacity").0, "pass");
    assert!(report["runs"][0]["notes"].to_string().contains("requests.total / throughput.request_rate"));

    let mut itl = doc.clone();
    let lat = &mut itl["results"]["request_performance"]["aggregate"]["latency"];
    lat["time_per_output_token"] =
        serde_json::json!({"units": "ms/token", "mean": 125.8, "p50": 127.96, "p99": 129.07});
    lat.as_object_mut().unwrap().remove("request_latency");
    let o = check_doc(&itl);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let (st, msg) = status(&o, "decode-capacity");
    assert_eq!(st, "fail", "{msg}");
    assert!(msg.contains("4 slots x 26.73 s"), "{msg}");

    // Failed requests: the request rate may or may not count them; the output rate says.
    let mut failed = doc.clone();
    let agg = &mut failed["results"]["request_performance"]["aggregate"];
    agg["requests"]["total"] = 18.into();
    agg["requests"]["failures"] = 2.into();
    let o = check_doc(&failed);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["runs"][0]["totals"]["duration_s"], 26.73, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(report["runs"][0]["notes"].to_string().contains("throughput.output_token_rate"));
    // No rate, no duration: the rules that need one say so.
    let mut none = doc.clone();
    none["results"]["request_performance"]["aggregate"].as_object_mut().unwrap().remove("throughput");
    let o = check_doc(&none);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(report["runs"][0]["totals"]["duration_s"].is_null());
}

mod properties {
    use super::*;
    use bench_normalize::report::Verdict;
    use proptest::prelude::*;

    /// The Benchmark Reports of the captured samples that carry what TPOT derives from.
    fn derivable() -> Vec<Value> {
        let mut v = Vec::new();
        for path in spec_samples() {
            for run in common::normalize_file(&path).unwrap() {
                let (doc, _) = bench_normalize::llmd::report(&run);
                if !aggregate(&doc)["requests"].is_null() {
                    v.push(doc);
                }
            }
        }
        assert!(v.len() >= 4);
        v
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-1e9f64..1e9).prop_map(Value::from),
            "[a-z/]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("units".to_string()),
                        Just("mean".to_string()),
                        Just("p99p9".to_string()),
                        Just("total".to_string()),
                        Just("failures".to_string()),
                        "[a-z_]{1,8}"
                    ],
                    inner,
                    0..5
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any value at any of the places the reader looks: an error naming a path or a run,
        /// never a panic.
        #[test]
        fn reading_any_report_never_panics(
            at in prop::sample::select(vec!["requests", "latency", "throughput"]),
            v in arb_json(),
        ) {
            let doc = serde_json::json!({"version": "0.2", "run": {"uid": "x"},
                "results": {"request_performance": {"aggregate": {at: v}}}});
            // The reader of Benchmark Reports (crates/core/src/llmd.rs) is reached through the library's entry.
            let _ = bench_normalize::normalize_str(&doc.to_string(), "prop.json");
        }

        /// A claimed TPOT 3x or more the one the report's own E2E, TTFT and output length give (a
        /// per-chunk ITL put in time_per_output_token) never becomes the TPOT, and is rejected
        /// once the lengths are stated fixed, in ms or in s.
        #[test]
        fn an_inflated_tpot_is_never_accepted(k in 3.0f64..20.0, i in 0usize..4, seconds in any::<bool>()) {
            let docs = derivable();
            let mut doc = docs[i % docs.len()].clone();
            let lat = &mut doc["results"]["request_performance"]["aggregate"]["latency"];
            let tpot = lat["time_per_output_token"]["mean"].as_f64().unwrap() * k;
            lat["time_per_output_token"] = if seconds {
                serde_json::json!({"units": "s/token", "mean": tpot / 1000.0})
            } else {
                serde_json::json!({"units": "ms/token", "mean": tpot})
            };
            // Lengths not stated: the claim may honestly differ from the token-weighted TPOT, so it
            // is a failed tpot-agreement, and the TPOT emitted is still the derived one.
            let honest = bench_normalize::normalize_str(&docs[i % docs.len()].to_string(), "prop.json").unwrap();
            let runs = bench_normalize::normalize_str(&doc.to_string(), "prop.json").unwrap();
            prop_assert_eq!(runs.len(), 1);
            let agreement = runs[0].checks.iter().find(|c| c.id == "tpot-agreement").unwrap();
            prop_assert_eq!(agreement.status, bench_normalize::report::Status::Fail);
            prop_assert_eq!(runs[0].derived.tpot_ms.mean, honest[0].derived.tpot_ms.mean);
            // The output length stated fixed (each request's cap, which the totals show every
            // request had): the inflated claim is a contradiction, rejected.
            let n = doc["results"]["request_performance"]["aggregate"]["requests"]["output_length"]["mean"].as_f64();
            if let Some(n) = n.filter(|n| n.fract() == 0.0) {
                doc["scenario"]["load"]["standardized"]["output_seq_len"] =
                    serde_json::json!({"distribution": "fixed", "value": n as u64});
                let runs = bench_normalize::normalize_str(&doc.to_string(), "prop.json").unwrap();
                prop_assert_eq!(runs[0].verdict, Verdict::Rejected, "TPOT x{} accepted", k);
            }
        }
    }
}
