//! Result files: vLLM --save-result JSON and SGLang --output-file JSONL, with per-request TPOT.

use crate::common;

use std::path::Path;

use bench_normalize::report::{StatKey, TpotMethod, Verdict};
use bench_normalize::{Error, Options, Run, normalize, normalize_str};

fn one(path: &Path) -> Run {
    let mut runs = common::normalize_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(runs.len(), 1, "{}", path.display());
    runs.remove(0)
}

/// Each captured run has both stdout and a result file: they agree, and the per-request TPOT of the
/// file is the emulator's true TPOT (see `common::is_truth`).
#[test]
fn stdout_and_result_file_agree_and_per_request_tpot_is_true() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in ["captured", "versions"] {
        for file in common::sample_files(dir, ".stdout.txt") {
            let stem = file.to_string_lossy().replace(".stdout.txt", "");
            let result = [format!("{stem}.result.json"), format!("{stem}.result.jsonl")]
                .into_iter()
                .find(|p| Path::new(p).exists());
            let Some(result) = result else { continue };
            let truth = common::read_json(Path::new(&format!("{stem}.truth.json")));
            let true_tpot = truth["true_tpot_ms"].as_f64().unwrap();
            let text = one(&file);
            let json = one(Path::new(&result));
            let name = common::sample_name(Path::new(&result));

            // Printed figures are the file's rounded to 2 decimals (or integers).
            let close = |what: &str, printed: Option<f64>, exact: Option<f64>, failures: &mut Vec<String>| match (
                printed, exact,
            ) {
                (Some(p), Some(e)) if (p - e).abs() <= 0.005 + 1e-9 * e.abs() => {}
                (None, _) => {}
                (p, e) => failures.push(format!("{name}: {what}: stdout {p:?} vs file {e:?}")),
            };
            for key in [
                "successful_requests",
                "failed_requests",
                "input_tokens",
                "output_tokens",
                "output_tokens_retokenized",
                "duration_s",
            ] {
                close(key, text.totals.number(key), json.totals.number(key), &mut failures);
            }
            // SGLang 0.3.6.post3-0.4.1 lines write only the medians of TTFT and ITL and no TPOT:
            // their medians are compared instead, and the file must not have a TPOT.
            let medians_only = json.reported.stat("ttft_ms").is_some_and(|s| s.mean().is_none());
            for stat in ["ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"] {
                if medians_only && stat == "tpot_ms" {
                    if json.reported.get("tpot_ms").is_some() {
                        failures.push(format!("{name}: a medians-only line with a TPOT"));
                    }
                    continue;
                }
                let key = if medians_only && stat != "e2e_ms" { StatKey::P(50.0) } else { StatKey::Mean };
                let pick = |r: &Run| r.reported.stat(stat).and_then(|s| s.get(key));
                close(stat, pick(&text), pick(&json), &mut failures);
            }
            close(
                "max_concurrency",
                text.workload.number("max_concurrency"),
                json.workload.number("max_concurrency"),
                &mut failures,
            );
            if text.source.semantics.itl != json.source.semantics.itl {
                failures.push(format!(
                    "{name}: ITL semantics differ: {:?} vs {:?}",
                    text.source.semantics.itl, json.source.semantics.itl
                ));
            }

            let d = &json.derived.tpot_ms;
            let has_details = json.derived.per_request.is_some();
            if has_details {
                if d.method != Some(TpotMethod::PerRequest) {
                    failures.push(format!("{name}: method {:?}", d.method));
                }
                if !common::is_truth(d.mean.unwrap(), true_tpot, false) {
                    failures.push(format!("{name}: per-request TPOT {:?} vs true {true_tpot}", d.mean));
                }
                // The tools' own TPOT is request-weighted over the same requests: equal up to float
                // when E2E_i comes from the file's latencies; SGLang's latency also covers the
                // `[DONE]` line, which the sum of gaps does not (a few microseconds per token).
                let from_latencies = json.derived.per_request.as_ref().unwrap().e2e_source == "latencies";
                if let Some(tool) = json.reported.stat("tpot_ms").and_then(|s| s.mean()) {
                    let allowed = if from_latencies { 1e-3 } else { 1e-3 * tool };
                    if (tool - d.mean.unwrap()).abs() > allowed {
                        failures
                            .push(format!("{name}: per-request mean {:?} vs the tool's mean_tpot_ms {tool}", d.mean));
                    }
                }
            }
            checked += 1;
        }
    }
    assert_eq!(
        checked, 35,
        "stdout samples that have a result file (all but the s4 sweep, whose steps are separate files)"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// SGLang 0.3.6.post3-0.4.1 result lines hold only the median TTFT: TPOT is estimated with the
/// median standing in for the mean (`e2e-median-ttft-tokens`), flagged approximate with the reason,
/// and still lands on the TPOT the emulator measured; the same run's stdout (which prints the mean
/// TTFT) shows the estimate is off by exactly what the note says.
#[test]
fn sglang_041_median_ttft_stands_in_flagged_approximate() {
    for stem in ["versions/sglang0.4.1-oai-s2", "versions/sglang0.4.1-s1"] {
        let dir = common::samples_dir();
        let json = one(&dir.join(format!("{stem}.result.jsonl")));
        let text = one(&dir.join(format!("{stem}.stdout.txt")));
        let truth = common::read_json(&dir.join(format!("{stem}.truth.json")));
        let measured = truth["measured_by_emulator"]["mean_tpot_ms"].as_f64().unwrap();
        let d = &json.derived.tpot_ms;
        assert_eq!(json.source.variant.as_deref(), Some("0.3.6.post3-0.4.1"), "{stem}");
        assert_eq!(d.method, Some(TpotMethod::E2eMedianTtftTokens), "{stem}: {d:?}");
        let why = d.approximate.as_deref().unwrap_or_else(|| panic!("{stem}: not flagged approximate"));
        assert!(why.contains("median TTFT"), "{stem}: {why}");
        let tpot = d.mean.unwrap();
        assert!(common::is_truth(tpot, measured, false), "{stem}: {tpot} vs the emulator's {measured}");
        // Method 2 with the stdout's mean TTFT (2 decimals): the estimate differs from it by
        // (mean TTFT - median TTFT) / (n - 1), the error the note names.
        let n = json.totals.number("output_tokens").unwrap() / json.totals.number("successful_requests").unwrap();
        let mean_ttft = text.reported.stat("ttft_ms").and_then(|s| s.mean()).unwrap();
        let median_ttft = json.reported.stat("ttft_ms").and_then(|s| s.get(StatKey::P(50.0))).unwrap();
        let e2e = json.reported.stat("e2e_ms").and_then(|s| s.mean()).unwrap();
        let exact = (e2e - mean_ttft) / (n - 1.0);
        let error = (mean_ttft - median_ttft) / (n - 1.0);
        assert!((tpot - exact - error).abs() < 0.006 / (n - 1.0) + 1e-4, "{stem}: {tpot} vs {exact} + {error}");
        assert_eq!(json.verdict, Verdict::Accepted, "{stem}");
        // The stdout, with its mean TTFT, uses the exact method.
        assert_eq!(text.derived.tpot_ms.method, Some(TpotMethod::E2eTtftTokens), "{stem}");
        assert!(text.derived.tpot_ms.approximate.is_none(), "{stem}");
    }
}

/// The median-TTFT estimate only where the mean is missing, and never past what the run allows.
#[test]
fn median_ttft_stands_in_only_for_a_missing_mean() {
    let line = |extra: &str| {
        format!(
            r#"{{"backend": "sglang-oai", "dataset_name": "random", "max_concurrency": 4, "completed": 16, "duration": 26.78, "total_output_tokens": 8192, "mean_e2e_latency_ms": 6689.39{extra}}}"#
        )
    };
    let derive = |text: String| {
        let runs = normalize_str(&text, "runs.jsonl").unwrap();
        runs[0].derived.tpot_ms.clone()
    };
    // The median alone: (6689.39 - 147.26) / (512 - 1), approximate.
    let d = derive(line(r#", "median_ttft_ms": 147.26"#));
    assert_eq!(d.method, Some(TpotMethod::E2eMedianTtftTokens));
    assert!((d.mean.unwrap() - (6689.39 - 147.26) / 511.0).abs() < 1e-4, "{d:?}");
    assert!(d.approximate.is_some());
    // With the mean as well: the exact method, not approximate.
    let d = derive(line(r#", "median_ttft_ms": 147.26, "mean_ttft_ms": 149.12"#));
    assert_eq!(d.method, Some(TpotMethod::E2eTtftTokens));
    assert!(d.approximate.is_none());
    // A median TTFT above the mean E2E: no estimate, and why.
    let d = derive(line(r#", "median_ttft_ms": 7000"#));
    assert_eq!(d.mean, None);
    assert!(d.reason.as_deref().is_some_and(|r| r.contains("median TTFT 7000")), "{d:?}");
    // No TTFT at all: undefined as before.
    let d = derive(line(""));
    assert_eq!((d.mean, d.method), (None, None));
}

#[test]
fn failed_requests_are_left_out_and_counted() {
    let run = one(&common::samples_dir().join("captured/sglang-oai-s5.result.jsonl"));
    let per = run.derived.per_request.as_ref().unwrap();
    assert_eq!((per.requests, per.failed, per.single_token), (16, 4, 0));
    assert_eq!(per.e2e_source, "ttft + sum of gaps");
    let run = one(&common::samples_dir().join("captured/vllm-s5.result.json"));
    let per = run.derived.per_request.as_ref().unwrap();
    assert_eq!((per.requests, per.failed, per.e2e_source.as_str()), (16, 4, "latencies"));
}

#[test]
fn tokens_per_chunk_per_request_where_gaps_are_per_chunk() {
    // k = 10: 512 tokens in 53 chunks per request.
    let run = one(&common::samples_dir().join("captured/vllm-s2.result.json"));
    let c = run.derived.per_request.as_ref().unwrap().tokens_per_chunk.as_ref().unwrap();
    assert!((c.mean - 512.0 / 53.0).abs() < 1e-3, "{c:?}");
    // The native SGLang backend splits gaps per token: no chunk figure.
    let run = one(&common::samples_dir().join("captured/sglang-s2.result.jsonl"));
    assert!(run.derived.per_request.as_ref().unwrap().tokens_per_chunk.is_none());
}

fn errors(text: &str) -> (Vec<Run>, Vec<Error>, Result<usize, Error>) {
    struct Collect(Vec<Run>, Vec<Error>);
    impl bench_normalize::Sink for Collect {
        fn run(&mut self, run: Run) -> Result<(), Error> {
            self.0.push(run);
            Ok(())
        }
        fn diagnostic(&mut self, e: Error) {
            self.1.push(e);
        }
    }
    let mut c = Collect(Vec::new(), Vec::new());
    let r = normalize(text.as_bytes(), "runs.jsonl", &Options::default(), &mut c);
    (c.0, c.1, r)
}

fn sglang_line() -> String {
    let text =
        std::fs::read_to_string(common::samples_dir().join("versions/sglang0.4.3.post4-oai-s2.result.jsonl")).unwrap();
    text.lines().next().unwrap().to_string()
}

#[test]
fn a_truncated_jsonl_line_names_its_line_and_column_and_the_others_are_reported() {
    let line = sglang_line();
    let cut = &line[..200];
    let text = format!("{line}\n{cut}\n{line}\n");
    let (runs, diags, result) = errors(&text);
    assert_eq!(result.unwrap(), 2);
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0].source.first_line, runs[1].source.first_line), (Some(1), Some(3)));
    assert_eq!(diags.len(), 1);
    let msg = diags[0].to_string();
    assert!(msg.starts_with("runs.jsonl:2:200: truncated JSON"), "{msg}");
}

#[test]
fn nothing_valid_is_exit_3_with_the_line_and_column() {
    let line = sglang_line();
    let (runs, _, result) = errors(&format!("{}\n", &line[..57]));
    assert!(runs.is_empty());
    let e = result.unwrap_err();
    assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult);
    assert!(e.to_string().starts_with("runs.jsonl:1:57: truncated JSON"), "{e}");
    // Malformed, not truncated: a bad token in the middle.
    let bad = line.replacen("\"completed\": 16", "\"completed\": 1 6", 1);
    let e = errors(&bad).2.unwrap_err().to_string();
    let col = bad.find("1 6").unwrap() + 3;
    assert!(e.starts_with(&format!("runs.jsonl:1:{col}: malformed JSON")), "{e}");
}

#[test]
fn per_request_arrays_of_different_lengths_are_an_error_naming_them() {
    let text = r#"{"duration": 10.0, "completed": 2, "total_input_tokens": 20, "total_output_tokens": 20, "ttfts": [0.1, 0.1], "output_lens": [10, 10], "itls": [[0.01]], "errors": ["", ""]}"#;
    let e = normalize_str(text, "r.json").unwrap_err().to_string();
    assert_eq!(e, "r.json:1: per-request arrays of different lengths: ttfts 2, output_lens 2, itls 1, errors 2");
}

#[test]
fn bare_infinity_and_nan_are_absent_not_zero() {
    let text = r#"{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": null, "duration": 10.0, "completed": 4, "total_input_tokens": 40, "total_output_tokens": 400, "mean_e2e_latency_ms": NaN, "mean_ttft_ms": 100.0, "mean_tpot_ms": 9.0}"#;
    let runs = normalize_str(text, "r.jsonl").unwrap();
    let run = &runs[0];
    assert!(run.workload.get("request_rate").is_none());
    assert!(run.reported.stat("e2e_ms").is_none_or(|s| s.mean().is_none()));
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::ToolTpot));
    assert!(run.notes.iter().any(|n| n.message.contains("request_rate") && n.message.contains("absent")));
}

#[test]
fn a_100k_request_detailed_file_is_read_with_exact_per_request_tpot() {
    // 100k requests, output length 2..=9 tokens, TPOT_i = 5 + (i % 7) ms, one gap per token.
    let n = 100_000;
    let mut ttfts = Vec::with_capacity(n);
    let mut lens = Vec::with_capacity(n);
    let mut itls = Vec::with_capacity(n);
    let mut lats = Vec::with_capacity(n);
    let mut want = 0.0;
    for i in 0..n {
        let out = 2 + (i % 8);
        let tpot = 5.0 + (i % 7) as f64;
        let ttft = 0.05;
        ttfts.push(format!("{ttft}"));
        lens.push(out.to_string());
        let gaps: Vec<String> = (0..out - 1).map(|_| format!("{}", tpot / 1000.0)).collect();
        itls.push(format!("[{}]", gaps.join(",")));
        lats.push(format!("{}", ttft + (out - 1) as f64 * tpot / 1000.0));
        want += tpot;
    }
    want /= n as f64;
    let text = format!(
        "{{\"duration\": 100.0, \"completed\": {n}, \"failed\": 0, \"total_input_tokens\": 1, \"total_output_tokens\": {}, \"ttfts\": [{}], \"output_lens\": [{}], \"itls\": [{}], \"latencies\": [{}], \"errors\": [{}]}}",
        lens.iter().map(|l| l.parse::<usize>().unwrap()).sum::<usize>(),
        ttfts.join(","),
        lens.join(","),
        itls.join(","),
        lats.join(","),
        vec!["\"\""; n].join(",")
    );
    let runs = normalize_str(&text, "big.json").unwrap();
    let d = &runs[0].derived;
    assert_eq!(d.per_request.as_ref().unwrap().requests, n);
    let got = d.tpot_ms.mean.unwrap();
    assert!((got - want).abs() / want < 1e-5, "{got} vs {want}");
}

#[test]
fn append_result_files_and_mixed_version_jsonl_are_one_run_per_object() {
    // vLLM --append-result: objects separated by "\n", no final newline.
    let one = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s1.result.json")).unwrap();
    let two = format!("{}\n{}", one.trim_end(), one.trim_end());
    let runs = normalize_str(&two, "appended.json").unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0].source.first_line, runs[1].source.first_line), (Some(1), Some(2)));
    // SGLang: lines of different versions (and key sets) appended to one file.
    let old =
        std::fs::read_to_string(common::samples_dir().join("versions/sglang0.4.3.post4-oai-s2.result.jsonl")).unwrap();
    let new = std::fs::read_to_string(common::samples_dir().join("captured/sglang-oai-s2.result.jsonl")).unwrap();
    let mixed = format!("{}\n{}\n", old.trim_end(), new.trim_end());
    let runs = normalize_str(&mixed, "mixed.jsonl").unwrap();
    let variants: Vec<Option<&str>> = runs.iter().map(|r| r.source.variant.as_deref()).collect();
    assert_eq!(variants, [Some("0.4.3.post3-0.5.3"), Some("0.5.14+")]);
}

#[test]
fn old_key_spellings_are_read() {
    // vLLM 0.8.0-0.9.1 wrote "request_goodput:" with a colon.
    let text = r#"{"backend": "vllm", "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 4, "duration": 26.7, "completed": 16, "total_input_tokens": 16384, "total_output_tokens": 8192, "request_throughput": 0.6, "request_goodput:": 0.5, "output_throughput": 306.8, "mean_ttft_ms": 140.0, "mean_tpot_ms": 12.8, "mean_itl_ms": 125.8}"#;
    let run = normalize_str(text, "r.json").unwrap().remove(0);
    assert_eq!(run.source.variant.as_deref(), Some("0.8.0-0.9.1"));
    assert_eq!(run.reported.number("request_goodput_per_s"), Some(0.5));
    // SGLang 0.1.24-0.2.11: latencies in ms without the `_ms` suffix, `benchmark_duration`.
    let text = r#"{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, "total_input": 16384, "total_output": 8192, "total_output_retokenized": 8190, "mean_e2e_latency": 6682.2, "median_e2e_latency": 6682.0, "median_ttft": 140.1, "median_itl": 12.8, "output_token_throughput": 306.3, "benchmark_duration": 26.74}"#;
    let run = normalize_str(text, "old.jsonl").unwrap().remove(0);
    assert_eq!(run.source.variant.as_deref(), Some("0.1.24-0.2.11"));
    assert_eq!(run.totals.number("duration_s"), Some(26.74));
    assert_eq!(run.reported.stat("e2e_ms").unwrap().mean(), Some(6682.2));
    assert_eq!(run.totals.number("output_tokens_retokenized"), Some(8190.0));
    // This version counts the requested length: said, the retokenized total confirming it.
    assert_eq!(run.source.semantics.output_tokens, Some(bench_normalize::report::TokenCount::Requested));
}
