//! vLLM's random dataset logs the lengths it samples from (`Sampling input_len from [1024, 1024]
//! and output_len from [512, 512]`): the requested lengths, read from that line by the
//! definition's `[[context]] pattern`, as from the argument dump. With them the seed's mistake in
//! the commonest configuration (a plain log: no E2E rows, no argument dump, the ITL rows copied
//! into the TPOT rows) is caught by `decode-capacity`, and honest logs still pass.

use crate::common;

use std::process::{Command, Output};

use bench_normalize::report::Verdict;
use serde_json::Value;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bench-normalize"));
    c.env("NO_COLOR", "1").env_remove("BENCH_NORMALIZE_SLO").env_remove("BENCH_NORMALIZE_PARSERS");
    c
}

fn dstack(text: &str, strict: bool) -> Output {
    let mut cmd = bin();
    cmd.args(["-f", "dstack"]);
    if strict {
        cmd.arg("--strict");
    }
    common::output_with_stdin(cmd.arg("-"), text.as_bytes())
}

/// Every captured vLLM log with a sampling line, and its truth file.
fn logs_with_sampling_line() -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for dir in ["captured", "versions"] {
        for path in common::sample_files(dir, ".stdout.txt") {
            let text = std::fs::read_to_string(&path).unwrap();
            if !text.contains("Sampling input_len from") {
                continue;
            }
            let truth = common::read_json(
                &path.with_file_name(path.file_name().unwrap().to_string_lossy().replace(".stdout.txt", ".truth.json")),
            );
            out.push((common::sample_name(&path), text, truth));
        }
    }
    out
}

#[test]
fn the_sampling_line_gives_the_requested_lengths_of_every_captured_log() {
    let mut checked = 0;
    for (name, text, truth) in logs_with_sampling_line() {
        // Without the argument dump, the sampling line is the only statement of the lengths.
        let plain = common::plain_vllm_log(&text);
        assert!(!plain.contains("Namespace("), "{name}");
        let runs = common::run_all(plain.as_bytes(), &name).unwrap();
        assert!(!runs.is_empty(), "{name}");
        let steps = text.matches("Sampling input_len from").count();
        assert_eq!(runs.len(), steps, "{name}: a sampling line per run");
        for run in &runs {
            let w = &run.workload;
            assert_eq!(w.number("input_len"), truth["input_len"].as_f64(), "{name}");
            assert_eq!(w.number("output_len"), truth["output_len"].as_f64(), "{name}");
            let row = run.rows.iter().find(|r| r.label == "Sampling output_len").expect("the line is a row");
            assert_eq!(row.scope.as_deref(), Some("preamble"), "{name}");
            assert!(row.value.as_deref().unwrap().ends_with(&format!("[{0}, {0}]", truth["output_len"])), "{name}");
            assert_eq!(run.verdict, Verdict::Accepted, "{name}: {:?}", run.checks);
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked}");
}

#[test]
fn the_sampling_line_agrees_with_the_argument_dump() {
    for (name, text, _) in logs_with_sampling_line() {
        let with_dump = common::run_all(text.as_bytes(), &name).unwrap();
        let without = common::run_all(common::plain_vllm_log(&text).as_bytes(), &name).unwrap();
        for (a, b) in with_dump.iter().zip(&without) {
            for k in ["input_len", "output_len"] {
                assert_eq!(a.workload.number(k), b.workload.number(k), "{name}: {k}");
            }
        }
    }
}

#[test]
fn a_range_of_lengths_states_no_length() {
    let text = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap();
    let plain = common::plain_vllm_log(&text).replace("output_len from [512, 512]", "output_len from [256, 512]");
    let run = common::run_all(plain.as_bytes(), "range").unwrap().remove(0);
    assert_eq!(run.workload.number("output_len"), None);
    assert_eq!(run.workload.number("input_len"), Some(1024.0));
    let row = run.rows.iter().find(|r| r.label == "Sampling output_len").expect("the line is kept as a row");
    assert!(row.field.is_none(), "{row:?}");
    let c = run.checks.iter().find(|c| c.id == "decode-capacity").unwrap();
    assert!(c.message.starts_with("output lengths are not known to be equal"), "{}", c.message);
}

#[test]
fn itl_copied_into_the_tpot_rows_of_a_plain_log_is_rejected_through_the_executable() {
    let text = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap();
    let honest = common::plain_vllm_log(&text);
    assert!(!honest.contains("E2EL") && !honest.contains("Namespace("));
    let forged = common::itl_in_tpot_rows(&honest);
    assert!(forged.contains("Mean TPOT (ms):                          125.80"), "{forged}");
    assert!(forged.contains("P99 TPOT (ms):                           129.07"), "{forged}");
    for strict in [false, true] {
        let out = dstack(&forged, strict);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "strict {strict}: {err}");
        assert!(out.stdout.is_empty(), "strict {strict}: a rejected run gives no object to store");
        assert!(
            err.lines().any(|l| l.contains("rejected: decode-capacity:") && l.contains("the requested 512")),
            "strict {strict}: {err}"
        );

        let out = dstack(&honest, strict);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "strict {strict}: {err}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let truth = common::read_json(&common::samples_dir().join("captured/vllm-s2.truth.json"));
        assert_eq!(doc["tpot_ms"]["mean"].as_f64(), Some(12.8));
        assert!(common::is_truth(12.8, truth["true_tpot_ms"].as_f64().unwrap(), true));
    }
}
