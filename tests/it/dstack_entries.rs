//! `-f dstack` and `-f dstack-e2e` for several runs: a list of entries, each saying which input,
//! block, first line and load its object is; one run alone: exactly the object dstack stores.
//! `check` reads an entry back as its object.

use crate::common;

use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bench-normalize"));
    c.env("NO_COLOR", "1").env_remove("BENCH_NORMALIZE_SLO").env_remove("BENCH_NORMALIZE_PARSERS");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn sample(name: &str) -> String {
    common::samples_dir().join(name).display().to_string()
}

fn json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn check(doc: &str) -> Output {
    let mut cmd = bin();
    cmd.args(["check", "-", "-f", "json"]);
    common::output_with_stdin(&mut cmd, doc.as_bytes())
}

#[test]
fn each_run_of_a_sweep_is_an_entry_naming_its_input_block_line_and_load() {
    let s4 = sample("captured/vllm-s4.stdout.txt");
    let truth = common::read_json(&common::samples_dir().join("captured/vllm-s4.truth.json"));
    let report = json(&run(&[&s4]));
    for format in ["dstack", "dstack-e2e"] {
        let doc = json(&run(&["-f", format, &s4]));
        let entries = doc.as_array().unwrap_or_else(|| panic!("{format}: {doc}"));
        assert_eq!(entries.len(), 4, "{format}");
        for (i, (e, r)) in entries.iter().zip(report["runs"].as_array().unwrap()).enumerate() {
            let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["input", "block", "first_line", "load", "metrics"], "{format}");
            assert_eq!(e["input"], s4.as_str());
            assert_eq!(e["block"], i + 1);
            assert_eq!(e["first_line"], r["source"]["first_line"]);
            assert_eq!(e["load"]["max_concurrency"], truth["concurrency"][i], "{format}: step {i}");
            assert_eq!(e["load"]["request_rate"], Value::Null, "inf: unlimited");
            // The entry's figures are its own run's.
            let m = &e["metrics"];
            assert_eq!(m["total_output_tokens"], r["totals"]["output_tokens"]);
            assert_eq!(m["duration_seconds"], r["totals"]["duration_s"]);
            let tpot = m["tpot_ms"]["mean"].as_f64().unwrap();
            assert!((tpot - r["derived"]["tpot_ms"]["mean"].as_f64().unwrap()).abs() < 1e-3, "{format}");
        }
    }
}

#[test]
fn one_run_alone_is_the_object_dstack_stores_and_several_inputs_are_named() {
    let s2 = sample("captured/vllm-s2.stdout.txt");
    let one = json(&run(&["-f", "dstack", &s2]));
    assert!(one.get("input").is_none() && one.get("successful_requests").is_some(), "{one}");
    let truth = common::read_json(&common::samples_dir().join("captured/vllm-s2.truth.json"));
    let tpot = one["tpot_ms"]["mean"].as_f64().unwrap();
    assert!(common::is_truth(tpot, truth["true_tpot_ms"].as_f64().unwrap(), false), "{tpot}");
    let s1 = sample("captured/vllm-s1.stdout.txt");
    let two = json(&run(&["-f", "dstack", &s1, &s2]));
    let inputs: Vec<&str> = two.as_array().unwrap().iter().map(|e| e["input"].as_str().unwrap()).collect();
    assert_eq!(inputs, [s1.as_str(), s2.as_str()]);
    assert_eq!(two[1]["metrics"], one, "the entry holds the object the run alone gives");
    // The whole `benchmark` object (a dstack document read back) is held under `benchmark`.
    let trial = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dstack/documents/trial.json");
    let both = json(&run(&["-f", "dstack", trial.to_str().unwrap(), &s2]));
    assert!(both[0]["benchmark"]["metrics"].is_object() && both[0].get("metrics").is_none(), "{both}");
    assert_eq!(both[1]["metrics"], one);
}

#[test]
fn check_reads_an_entry_back_as_its_object() {
    let s4 = sample("captured/vllm-s4.stdout.txt");
    for format in ["dstack", "dstack-e2e"] {
        let text = String::from_utf8(run(&["-f", format, &s4]).stdout).unwrap();
        let back = json(&check(&text));
        let runs = back["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 4, "{format}");
        assert!(runs.iter().all(|r| r["verdict"] == "accepted"), "{format}: {back}");
        let doc: Value = serde_json::from_str(&text).unwrap();
        for (e, r) in doc.as_array().unwrap().iter().zip(runs) {
            assert_eq!(r["totals"]["output_tokens"], e["metrics"]["total_output_tokens"]);
            // Read from dstack's object alone: the concurrency it implies is the entry's load.
            if format == "dstack" {
                assert_eq!(r["workload"]["max_concurrency"], e["load"]["max_concurrency"]);
            }
        }
        // One entry on its own, as an agent may cut it out of the list.
        let first = doc[0].to_string();
        assert_eq!(json(&check(&first))["runs"].as_array().map(Vec::len), Some(1), "{format}");
    }
    // Anything beside an entry's keys: no entry, and no dstack object either (refused).
    let text = String::from_utf8(run(&["-f", "dstack", &s4]).stdout).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc[0]["note"] = Value::from("x");
    let o = check(&doc[0].to_string());
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
}
