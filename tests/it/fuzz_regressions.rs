//! Regression tests for inputs that made the library panic or abort, found with the fuzz targets
//! in `fuzz/` (see `fuzz/README.md`) or while reviewing what they reach.
//!
//! Every file in `tests/fuzz_cases/` holds the exact bytes given to `normalize()`; each is fed
//! both as the main command reads it (default options) and as `check` reads it
//! (`reports_only`), and every run found is written out as JSON, like the fuzz targets do. The
//! only requirement is that the call returns (runs or an error): a panic or an abort is the bug.
//!
//! An input that aborts the process (a failed allocation is not a panic and cannot be caught)
//! would take every other test down with it, so each input runs in a child process: this test
//! binary again, filtered to the ignored test `child`, with the input named in an environment
//! variable. The parent reports the input and the child's panic message.

use std::path::{Path, PathBuf};
use std::process::Command;

use bench_normalize::{Options, Run, normalize};

const CASE_VAR: &str = "BENCH_NORMALIZE_FUZZ_CASE";

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fuzz_cases")
}

/// Small inputs kept inline: each is an edge the fuzz targets start from, and all must return.
const INLINE: &[(&str, &[u8])] = &[
    ("empty", b""),
    ("bom-only", b"\xef\xbb\xbf"),
    ("white-space-only", b" \n\t\r\n"),
    ("open-brace", b"{"),
    ("open-brace-quote", b"{\""),
    ("open-bracket", b"[{"),
    ("empty-list", b"[]"),
    ("nested-lists", b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["),
    ("banner-only", b"============ Serving Benchmark Result ============"),
    ("banner-then-closing", b"============ Serving Benchmark Result ============\n==================================================\n"),
    ("banner-cr-only", b"============ Serving Benchmark Result ============\rSuccessful requests: 1\r"),
    ("label-without-value", b"============ Serving Benchmark Result ============\nSuccessful requests:\nMean TTFT (ms):\n"),
    ("huge-numbers", b"============ Serving Benchmark Result ============\nSuccessful requests: 18446744073709551616\nBenchmark duration (s): 1e308\nTotal generated tokens: 1e400\nMean TTFT (ms): -0\nMean E2EL (ms): NaN\n==================================================\n"),
    ("zero-duration", b"============ Serving Benchmark Result ============\nSuccessful requests: 1\nBenchmark duration (s): 0\nTotal generated tokens: 1\nMean TTFT (ms): 0\nMean E2EL (ms): 0\nMean TPOT (ms): 0\n==================================================\n"),
    ("multibyte-after-banner", b"============ Serving Benchmark Result ============\xc3\xa9\xe2\x96\x88 Successful requests: 1 \xf0\x9f\x98\x80\n"),
    ("escaped-newlines", b"{\"msg\": \"============ Serving Benchmark Result ============\\nSuccessful requests: 1\\n\xc3\xa9\\n\"}\nx\n"),
    ("report-wrong-types", br#"{"schema_version": "1", "runs": [{"totals": {"output_tokens": "many"}, "reported": [], "derived": 7}]}"#),
    ("report-null-runs", br#"{"schema_version": 1, "runs": null}"#),
    ("dstack-metrics-nulls", br#"{"tool": null, "tool_version": 1, "command": [], "workload": {"num_requests": -1, "concurrency": 1e400}, "metrics": {"successful_requests": null, "tpot_ms": {"mean": NaN}}}"#),
    ("result-json-empty-arrays", br#"{"duration": 0, "completed": 0, "total_input_tokens": 0, "total_output_tokens": 0, "ttfts": [], "output_lens": [], "itls": [], "errors": []}"#),
    ("result-json-infinity", br#"{"duration": Infinity, "completed": -Infinity, "total_output_tokens": NaN, "ttfts": [Infinity], "output_lens": [NaN], "itls": [[-Infinity]], "errors": [""]}"#),
];

/// Feed one input both ways; panics (in the child) if the library does.
fn feed(bytes: &[u8]) {
    let defaults = Options::default();
    let check = Options { reports_only: true, ..Options::default() };
    for opts in [&defaults, &check] {
        let _ = normalize(bytes, "fuzz-case", opts, &mut |run: Run| {
            let _ = bench_normalize::emit::write_jsonl(&mut std::io::sink(), &run);
            Ok(())
        });
    }
}

/// Run in a child process by the other tests: feeds the input named by `BENCH_NORMALIZE_FUZZ_CASE`
/// (`inline:<name>` or `file:<path>`).
#[test]
#[ignore = "run in a child process by the other tests of this file"]
fn child() {
    let Ok(case) = std::env::var(CASE_VAR) else { return };
    let bytes = if let Some(name) = case.strip_prefix("inline:") {
        INLINE.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no inline case {name}")).1.to_vec()
    } else if let Some(path) = case.strip_prefix("file:") {
        std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    } else {
        panic!("bad {CASE_VAR}: {case}")
    };
    feed(&bytes);
}

/// Run one case in a child process; `Err` with what the child printed when it did not return.
fn survives(case: &str) -> Result<(), String> {
    // The test's name in this binary: its module path without the crate's name, then `child`.
    let child = format!("{}::child", module_path!().split_once("::").map_or("", |m| m.1));
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([child.as_str(), "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CASE_VAR, case)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() && stdout.contains("1 passed") {
        return Ok(());
    }
    // The panic message or the abort's reason (the harness's own lines go to stdout).
    let why: String = stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("note: run with"))
        .take(12)
        .collect::<Vec<_>>()
        .join("\n  ");
    Err(format!("{case}: {}\n  {why}", out.status))
}

fn file_case(name: &str) -> String {
    format!("file:{}", cases_dir().join(name).display())
}

fn assert_survives(case: &str) {
    if let Err(e) = survives(case) {
        panic!("the library did not return on this input:\n{e}");
    }
}

#[test]
fn inline_edge_cases_return() {
    let failures: Vec<String> =
        INLINE.iter().filter_map(|(name, _)| survives(&format!("inline:{name}")).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} inputs did not return:\n{}",
        failures.len(),
        INLINE.len(),
        failures.join("\n")
    );
}

/// Every file in `tests/fuzz_cases/`.
#[test]
fn every_file_in_fuzz_cases_returns() {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(cases_dir()) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect(),
        Err(_) => return,
    };
    files.sort();
    let failures: Vec<String> = files.iter().filter_map(|p| survives(&format!("file:{}", p.display())).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} inputs did not return:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

// ------------------------------------------------------------------------------------------------
// One test per input that crashed, named for the bug.

/// `Position 18446744073709551615:` in the vLLM `Speculative Decoding` section: the index was
/// used to grow the per-position list (`list.resize(i + 1, None)`, crates/core/src/canonical.rs), which
/// overflowed (debug: "attempt to add with overflow"; release: "index out of bounds: the len is 0
/// but the index is 18446744073709551615"). Fixed by bounding the index (`MAX_LIST`).
#[test]
fn speculative_position_index_usize_max() {
    assert_survives(&file_case("position-index-usize-max.txt"));
}

/// `Position 100000000000:`: the same list was resized to 10^11 entries, and the allocation
/// (1.6 TB) failed: "memory allocation of 1600000000016 bytes failed", an abort.
#[test]
fn speculative_position_index_huge() {
    assert_survives(&file_case("position-index-huge.txt"));
}
