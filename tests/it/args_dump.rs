//! The client's argument dump (`Namespace(...)` printed before the block) read as context rows:
//! the workload of every captured log that has one, against the truth file of its capture.

use crate::common;

use serde_json::Value;

#[test]
fn the_argument_dump_gives_the_workload_the_capture_ran() {
    let mut checked = 0;
    for dir in ["captured", "versions"] {
        for path in common::sample_files(dir, ".stdout.txt") {
            let text = std::fs::read_to_string(&path).unwrap();
            if !text.contains("Namespace(") {
                continue;
            }
            let truth_path = path.to_string_lossy().replace(".stdout.txt", ".truth.json");
            let t: Value = serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
            let runs = common::normalize_file(&path).unwrap();
            // A sweep prints one dump per step; its truth holds the first step's parameters.
            let run = &runs[0];
            let name = common::sample_name(&path);
            let w = &run.workload;
            assert_eq!(w.number("num_prompts"), t["num_prompts"].as_f64(), "{name}");
            if let Some(c) = t["concurrency"].as_f64() {
                assert_eq!(w.number("max_concurrency"), Some(c), "{name}");
            }
            assert_eq!(w.number("input_len"), t["input_len"].as_f64(), "{name}");
            assert_eq!(w.number("output_len"), t["output_len"].as_f64(), "{name}");
            if let Some(b) = t["client_backend"].as_str() {
                assert_eq!(w.text("backend"), Some(b), "{name}");
            }
            assert_eq!(w.text("dataset"), Some("random"), "{name}");
            // Every figure the dump fed is a preamble row named args.NAME.
            let args: Vec<&str> =
                run.rows.iter().filter(|r| r.label.starts_with("args.")).map(|r| r.label.as_str()).collect();
            assert!(args.contains(&"args.num_prompts"), "{name}: {args:?}");
            assert!(
                run.rows
                    .iter()
                    .filter(|r| r.label.starts_with("args."))
                    .all(|r| r.scope.as_deref() == Some("preamble"))
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked}");
}

#[test]
fn a_servers_dump_and_arguments_of_another_dataset_are_not_read() {
    // The server's Namespace (no num_prompts) is another program's; random_input_len is read only
    // for the random dataset.
    let log = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap();
    let server = "args: Namespace(subparser='serve', model='/other', max_num_seqs=256)\n";
    // (The ShareGPT dataset logs no `Sampling input_len from ...` line: the random dataset does.)
    let sharegpt: String = log
        .replace("dataset_name='random'", "dataset_name='sharegpt'")
        .split_inclusive('\n')
        .filter(|l| !l.contains("Sampling input_len"))
        .collect();
    for (what, text) in [
        (
            "server dump after",
            log.replacen("Starting main benchmark run...", &format!("{server}Starting main benchmark run..."), 1),
        ),
        ("sharegpt", sharegpt),
    ] {
        let run = bench_normalize::normalize_str(&text, "log").unwrap().remove(0);
        match what {
            "server dump after" => assert_eq!(run.workload.text("model"), Some("/models/emu-llm-wordlevel"), "{what}"),
            _ => {
                assert_eq!(run.workload.text("dataset"), Some("sharegpt"));
                assert_eq!((run.workload.number("input_len"), run.workload.number("output_len")), (None, None));
                let row = run.rows.iter().find(|r| r.label == "args.random_input_len").unwrap();
                assert_eq!(row.field, None, "kept as printed, feeding nothing");
            }
        }
    }
}

/// A Python client's argument dump right before a vllm-rs block (two clients' runs in one log):
/// the Rust client prints no dump, so none of the dump's arguments become the run's workload.
#[test]
fn a_dump_before_a_rust_clients_block_is_another_programs() {
    let sglang = std::fs::read_to_string(common::samples_dir().join("captured/sglang-oai-s2.stdout.txt")).unwrap();
    let dump = sglang.lines().find(|l| l.contains("Namespace(")).expect("the capture prints its arguments");
    let rust = std::fs::read_to_string(common::samples_dir().join("versions/vllmrs0.33.0-s2.stdout.txt")).unwrap();
    let clean = bench_normalize::normalize_str(&rust, "log").unwrap().remove(0);
    let run = bench_normalize::normalize_str(&format!("{dump}\n{rust}"), "log").unwrap().remove(0);
    assert_eq!(run.source.variant.as_deref(), Some("rust-0.33"));
    assert_eq!(run.workload, clean.workload);
    assert!(run.rows.iter().all(|r| !r.label.starts_with("args.")));
}
