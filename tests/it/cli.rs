//! The executable: inputs, exit codes, diagnostics.

use crate::common;

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    common::output_with_stdin(bin().args(args), stdin)
}

fn sample(name: &str) -> String {
    common::samples_dir().join(name).display().to_string()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn stdin_is_read_when_no_file_is_given_and_for_dash() {
    let log = std::fs::read(sample("captured/sglang-oai-s2.stdout.txt")).unwrap();
    for args in [&[][..], &["-"][..]] {
        let out = run_with_stdin(args, &log);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let report = json(&out);
        assert_eq!(report["runs"][0]["source"]["input"], "-");
        assert_eq!(report["runs"][0]["derived"]["tpot_ms"]["method"], "e2e-ttft-tokens");
    }
}

#[test]
fn several_files_give_runs_in_input_order() {
    let out =
        bin().args([sample("captured/vllm-s4.stdout.txt"), sample("captured/sglang-s1.stdout.txt")]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = json(&out);
    let runs = report["runs"].as_array().unwrap();
    let got: Vec<(String, u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["source"]["parser"].as_str().unwrap().to_string(),
                r["source"]["block"].as_u64().unwrap(),
                r["workload"]["max_concurrency"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64, u64)> = vec![
        ("vllm-bench-serve".into(), 1, 1),
        ("vllm-bench-serve".into(), 2, 2),
        ("vllm-bench-serve".into(), 3, 4),
        ("vllm-bench-serve".into(), 4, 8),
        ("sglang-bench-serving".into(), 1, 4),
    ];
    assert_eq!(got, want);
}

/// `bench-normalize < file` reads a regular file on standard input as it reads a named one (mapped
/// or on two threads): the report is the one a pipe gives. A file already partly read is read
/// from where it stands, as a pipe would be.
#[test]
fn stdin_redirected_from_a_file_reads_like_a_pipe_from_where_the_file_stands() {
    use std::io::{Seek, SeekFrom};
    let first = std::fs::read(sample("captured/vllm-s1.stdout.txt")).unwrap();
    let second = std::fs::read(sample("captured/sglang-oai-s2.stdout.txt")).unwrap();
    let result = std::fs::read(sample("captured/vllm-s2.result.json")).unwrap();
    let dir = std::env::temp_dir().join(format!("bench-normalize-stdin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let both = dir.join("both.log");
    std::fs::write(&both, [first.as_slice(), second.as_slice()].concat()).unwrap();
    let from_file = |path: &std::path::Path, at: u64| {
        let mut f = std::fs::File::open(path).unwrap();
        f.seek(SeekFrom::Start(at)).unwrap();
        bin().arg("--format=jsonl").stdin(f).output().unwrap()
    };
    for (got, piped) in [
        (from_file(&both, 0), run_with_stdin(&["--format=jsonl"], &[first.as_slice(), second.as_slice()].concat())),
        (from_file(&both, first.len() as u64), run_with_stdin(&["--format=jsonl"], &second)),
        (
            from_file(&common::samples_dir().join("captured/vllm-s2.result.json"), 0),
            run_with_stdin(&["--format=jsonl"], &result),
        ),
    ] {
        assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
        assert_eq!(String::from_utf8_lossy(&got.stdout), String::from_utf8_lossy(&piped.stdout));
        assert_eq!(got.stderr, piped.stderr);
    }
    assert_eq!(
        String::from_utf8_lossy(&from_file(&both, first.len() as u64).stdout).lines().count(),
        1,
        "only the second run"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_result_is_exit_3_with_one_line_naming_the_input() {
    let out = run_with_stdin(&[], b"Namespace(backend='vllm')\nTotal input tokens: 5\nnothing here\n");
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty(), "no half-written report");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("bench-normalize: -: no benchmark result found (looked for: "), "{err}");
    // What was looked for, short: the tools, each once; no pattern (issue 29).
    assert_eq!(err.matches("vllm bench serve").count(), 1, "{err}");
    assert!(err.contains("sglang.bench_serving"), "{err}");
    assert!(!err.contains("=+") && !err.contains("\\s"), "no regular expression: {err}");
    assert!(err.len() < 500, "{} characters: {err}", err.len());
    // --explain lists the patterns: a banner shared by several definitions is named once, with
    // all of them.
    let out = run_with_stdin(&["--explain"], b"Namespace(backend='vllm')\nTotal input tokens: 5\nnothing here\n");
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("Serving Benchmark Result").count(), 1, "{err}");
    assert!(err.contains("sglang-bench-serving, sglang-multimodal-gen, vllm-bench-serve)"), "{err}");

    let out = run_with_stdin(&[], b"");
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn a_missing_file_is_exit_4_and_the_other_inputs_are_still_reported() {
    let out = bin().args(["/nonexistent/run.log", &sample("captured/vllm-s1.stdout.txt")]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(json(&out)["runs"].as_array().unwrap().len(), 1);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("bench-normalize: /nonexistent/run.log: cannot read:"), "{err}");
}

#[test]
fn bad_flags_are_exit_2() {
    let out = bin().arg("--no-such-flag").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin().args(["--format", "yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_cut_off_block_is_reported_with_a_warning() {
    // Cut before its E2E rows: the TPOT rows are there, the run is usable, the cut is a warning.
    let log = std::fs::read_to_string(sample("captured/vllm-s2.stdout.txt")).unwrap();
    let cut: String = log.lines().take_while(|l| !l.starts_with("Mean E2EL")).map(|l| format!("{l}\n")).collect();
    let out = run_with_stdin(&[], cut.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let run = &json(&out)["runs"][0];
    assert_eq!(run["verdict"], "accepted");
    assert_eq!(run["derived"]["tpot_ms"]["method"], "tool-tpot");
    // 8192 tokens = 16 requests x the requested 512: the claim is tested both ways (the E2E
    // rebuilt from it fills the closed loop's slots, and no more).
    assert_eq!(run["derived"]["tpot_ms"]["verified"], true, "{}", run["derived"]["tpot_ms"]);
    let tested = run["derived"]["tpot_ms"]["tested_by"].to_string();
    assert!(
        tested.contains("decode-capacity (above)") && tested.contains("e2e-capacity (above and below)"),
        "{tested}"
    );
    let check = run["checks"].as_array().unwrap().iter().find(|c| c["id"] == "complete-block").unwrap();
    assert_eq!(check["status"], "fail");
    let msg = check["message"].as_str().unwrap();
    let last = cut.lines().count();
    assert!(msg.contains(&format!("cut off after line {last}")), "{msg}");
    assert!(msg.contains("the input ended before the closing line"), "{msg}");
    // The rows that were printed are all there.
    assert_eq!(run["reported"]["itl_ms"]["mean"], 125.8);
}

#[test]
fn bytes_that_are_not_utf8_do_not_stop_it() {
    let mut log = b"\xff\xfe garbage \x00\x01\n".to_vec();
    log.extend(std::fs::read(sample("captured/vllm-s1.stdout.txt")).unwrap());
    log.extend(b"\n\xc3\x28 more garbage\n");
    let out = run_with_stdin(&[], &log);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["runs"][0]["totals"]["successful_requests"], 16);
}

#[test]
fn jsonl_prints_one_run_per_line() {
    let out = bin().args(["--format", "jsonl", &sample("captured/vllm-s4.stdout.txt")]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["source"]["block"], 4);
}

#[test]
fn closing_stdout_early_is_not_an_error() {
    let log = std::fs::read_to_string(sample("captured/vllm-s4.stdout.txt")).unwrap();
    let big = log.repeat(400);
    let mut child = bin()
        .args(["--format", "jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(big.as_bytes());
    });
    let mut first = [0u8; 64];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    writer.join().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

/// A stdout that cannot take the report (a full disk: /dev/full) is exit 4, said once: at the end
/// (a small report, still buffered) or in the middle (many files, the first runs' bytes failing
/// while the rest wait), where nothing more is read.
#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_exit_4_said_once() {
    let one = sample("captured/vllm-s2.stdout.txt");
    let many: Vec<String> = std::iter::repeat_n(sample("captured/vllm-s4.stdout.txt"), 200).collect();
    for args in [vec![one], many] {
        let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
        let out = bin().args(["--format", "jsonl"]).args(&args).stdout(full).stderr(Stdio::piped()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{} inputs: {err}", args.len());
        assert_eq!(
            err.lines().collect::<Vec<_>>(),
            ["bench-normalize: stdout: cannot write: No space left on device (os error 28)"],
            "{} inputs",
            args.len()
        );
    }
}

#[test]
fn tee_copies_the_input_unchanged() {
    let log = std::fs::read(sample("captured/sglang-oai-s2.stdout.txt")).unwrap();
    let out = run_with_stdin(&["--tee"], &log);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stderr, log, "stderr holds the input byte for byte");
    assert_eq!(json(&out)["runs"].as_array().unwrap().len(), 1);
    let dir = std::env::temp_dir().join(format!("bn-tee-{}", std::process::id()));
    let file = dir.with_extension("log");
    let out = run_with_stdin(&["--tee-file", file.to_str().unwrap(), "--format", "jsonl"], &log);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(&file).unwrap(), log);
    let _ = std::fs::remove_file(file);
}

#[test]
fn jsonl_prints_each_run_as_soon_as_its_block_is_complete() {
    use std::io::{BufRead, BufReader};
    let log = std::fs::read_to_string(sample("captured/vllm-s1.stdout.txt")).unwrap();
    let mut child = bin()
        .args(["--format", "jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(log.as_bytes()).unwrap();
    input.flush().unwrap();
    // The input is still open: the run must come out now, not at the end.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["source"]["block"], 1);
    input.write_all(log.as_bytes()).unwrap();
    drop(input);
    let second: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(second["source"]["block"], 2);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn many_files_in_parallel_keep_input_order() {
    let mut files: Vec<String> =
        common::sample_files("captured", ".stdout.txt").iter().map(|p| p.display().to_string()).collect();
    files.reverse();
    // Over two windows of files read at once (16 per core).
    let window = 16 * std::thread::available_parallelism().map_or(1, |n| n.get());
    let once = files.clone();
    while files.len() <= 2 * window {
        files.extend(once.iter().cloned());
    }
    let out = bin().args(&files).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let inputs: Vec<String> = json(&out)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["source"]["input"].as_str().unwrap().to_string())
        .collect();
    let mut expected = Vec::new();
    for f in &files {
        let n = if f.ends_with("vllm-s4.stdout.txt") { 4 } else { 1 };
        expected.extend(std::iter::repeat_n(f.clone(), n));
    }
    assert_eq!(inputs, expected);
}
