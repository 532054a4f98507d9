//! The executable's contract and data safety: `--tee` never writes to an input, the exit code
//! is at least every diagnostic's, argument errors follow `--error-format json`, and the
//! listings (completions, man, schema, parsers) survive a closed pipe and a full disk.

use crate::common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use proptest::prelude::*;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bench-normalize"));
    c.env("NO_COLOR", "1").env_remove("BENCH_NORMALIZE_PARSERS");
    c
}

fn sample(name: &str) -> PathBuf {
    common::samples_dir().join(name)
}

fn run_with_stdin(cmd: &mut Command, stdin: &[u8]) -> Output {
    common::output_with_stdin(cmd, stdin)
}

/// A fresh folder under the temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("bn-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ------------------------------------------------------------------------------------------------
// --tee

/// Issue 16's example: `--tee run.log` emptied run.log and read stdin. `--tee` takes no value
/// now: run.log is the input, read and copied to stderr, unchanged.
#[test]
fn tee_takes_no_value_so_the_name_after_it_is_an_input() {
    let dir = TempDir::new("tee");
    let log = std::fs::read(sample("captured/vllm-s1.stdout.txt")).unwrap();
    let path = dir.0.join("run.log");
    std::fs::write(&path, &log).unwrap();
    let out = bin().arg("--tee").arg(&path).stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&path).unwrap(), log, "run.log untouched");
    assert_eq!(out.stderr, log, "the input copied to stderr");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["runs"][0]["source"]["input"], path.display().to_string());
    // `--tee=FILE` is no longer a way to name a file: an error, and nothing written.
    let out = bin().arg(format!("--tee={}", path.display())).stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&path).unwrap(), log);
}

/// `--tee-file PATH` refuses a PATH that is an input by any name (the same name, `./`, a path
/// through `..`, a symlink, a hard link, the file standard input reads, the file that standard
/// output writes), exit 2, leaving it as it was; and a file it created for a refused run is
/// removed again.
#[cfg(unix)]
#[test]
fn tee_file_refuses_an_input_by_any_name() {
    let dir = TempDir::new("tee-file");
    let log = std::fs::read(sample("captured/vllm-s1.stdout.txt")).unwrap();
    let d = &dir.0;
    let input = d.join("run.log");
    std::fs::write(&input, &log).unwrap();
    std::os::unix::fs::symlink(&input, d.join("link.log")).unwrap();
    std::fs::hard_link(&input, d.join("hard.log")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    for tee in ["run.log", "./run.log", "sub/../run.log", "link.log", "hard.log"] {
        let out = bin().current_dir(d).args(["--tee-file", tee, "run.log"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{tee}");
        assert!(out.stdout.is_empty(), "{tee}: no report");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            err,
            format!("bench-normalize: --tee-file {tee}: it is the input run.log; nothing was written to it\n")
        );
        assert_eq!(std::fs::read(&input).unwrap(), log, "{tee}");
    }
    // An input named through the link, the copy to the file itself.
    let out = bin().current_dir(d).args(["--tee-file", "run.log", "link.log"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&input).unwrap(), log);
    // Standard input redirected from the file.
    let out = bin()
        .current_dir(d)
        .args(["--tee-file", "hard.log"])
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the file standard input reads"));
    assert_eq!(std::fs::read(&input).unwrap(), log);
    // The report's own file.
    let report = d.join("report.json");
    std::fs::write(&report, b"kept").unwrap();
    let out = bin()
        .current_dir(d)
        .args(["--tee-file", "report.json", "run.log"])
        .stdout(std::fs::File::options().append(true).open(&report).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&report).unwrap(), b"kept");
    // An input that does not exist yet, named as the copy too: refused, and not left behind.
    let out = bin().current_dir(d).args(["--tee-file", "ghost.log", "ghost.log"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.join("ghost.log").exists());
    // `-` is not a file to copy into: stdout holds the report.
    let out = bin().current_dir(d).args(["--tee-file", "-", "run.log"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A refused run leaves an existing copy target as it was too (nothing is emptied before every
    // check passed): a usage error after it on the line.
    let old = d.join("old.log");
    std::fs::write(&old, b"previous copy").unwrap();
    let broken = common::samples_dir().parent().unwrap().join("tests/plugins/broken");
    for refused in
        [&["--capacity-tolerance=-1"][..], &["--tpot-tolerance=NaN"][..], &["--parsers", broken.to_str().unwrap()][..]]
    {
        let out = bin().current_dir(d).args(["--tee-file", "old.log"]).args(refused).arg("run.log").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{refused:?}");
        assert_eq!(std::fs::read(&old).unwrap(), b"previous copy", "{refused:?}");
    }
    // And an accepted one: the copy is the input, byte for byte, the old content gone.
    let out = bin().current_dir(d).args(["--tee-file", "old.log", "link.log"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&old).unwrap(), log);
    assert_eq!(std::fs::read(&input).unwrap(), log);
}

/// A copy that cannot be written is an I/O error (exit 4), said once; the report is still made.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_tee_is_exit_4() {
    let log = std::fs::read(sample("captured/vllm-s1.stdout.txt")).unwrap();
    let out = run_with_stdin(bin().args(["--tee-file", "/dev/full", "-f", "jsonl"]), &log);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "bench-normalize: /dev/full: cannot write: No space left on device (os error 28)\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1, "the run is still reported");
    // --tee into a full stderr: nothing can be said, but the exit code says it.
    let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
    let mut child =
        bin().args(["--tee", "-f", "jsonl"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(full).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&log).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

/// The tokens a random command line is made of: tee flags, names of the same input file (and
/// of others), flags that take values.
const TOKENS: &[&str] = &[
    "--tee",
    "--tee-file",
    "--tee=run.log",
    "--tee-file=run.log",
    "--tee-file=link.log",
    "--tee-file=copy.log",
    "run.log",
    "./run.log",
    "sub/../run.log",
    "link.log",
    "hard.log",
    "other.log",
    "copy.log",
    "new.log",
    "-",
    "--",
    "-f",
    "jsonl",
    "--explain",
    "check",
    "--error-format",
    "json",
];

/// Every file of the folder, by identity (device, inode), with its content.
#[cfg(unix)]
fn files(dir: &Path) -> std::collections::BTreeMap<(u64, u64), Vec<u8>> {
    use std::os::unix::fs::MetadataExt;
    let mut m = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let meta = std::fs::metadata(&p).unwrap();
        if meta.is_file() {
            m.insert((meta.dev(), meta.ino()), std::fs::read(&p).unwrap());
        }
    }
    m
}

#[cfg(unix)]
proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Random command lines with --tee and --tee-file: a file named anywhere on the line other
    /// than as the value of --tee-file (by any of its names), or read on standard input, is
    /// never written; a file that changed is one named as --tee-file's value.
    #[test]
    fn random_argv_with_tee_never_writes_to_an_input(
        picks in proptest::collection::vec(proptest::sample::select(TOKENS), 1..7),
        stdin_from_file in any::<bool>(),
    ) {
        use std::os::unix::fs::MetadataExt;
        let dir = TempDir::new("tee-argv");
        let d = &dir.0;
        let log = std::fs::read(sample("captured/vllm-s1.stdout.txt")).unwrap();
        std::fs::write(d.join("run.log"), &log).unwrap();
        std::fs::write(d.join("other.log"), b"other\n").unwrap();
        std::fs::write(d.join("copy.log"), b"old copy\n").unwrap();
        std::os::unix::fs::symlink(d.join("run.log"), d.join("link.log")).unwrap();
        std::fs::hard_link(d.join("run.log"), d.join("hard.log")).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        let before = files(d);
        let id = |name: &str| std::fs::metadata(d.join(name)).ok().map(|m| (m.dev(), m.ino()));
        // Which identities the line names as something other than the copy's target.
        let mut named = std::collections::BTreeSet::new();
        let mut targets = std::collections::BTreeSet::new();
        let mut after_tee_file = false;
        // After `--` every token is an input's name as written (`--tee=run.log` is a file of that
        // name, not run.log).
        let mut positional = false;
        for t in &picks {
            let value = t.strip_prefix("--tee-file=").or(t.strip_prefix("--tee=")).filter(|_| !positional);
            if positional {
                named.extend(id(t));
            } else if *t == "--" && !after_tee_file {
                positional = true;
            } else if let Some(v) = value {
                targets.extend(id(v));
                if t.starts_with("--tee=") { named.extend(id(v)); }
            } else if after_tee_file {
                targets.extend(id(t));
            } else {
                named.extend(id(t));
            }
            after_tee_file = *t == "--tee-file";
        }
        let mut cmd = bin();
        cmd.current_dir(d).args(&picks).stdout(Stdio::null()).stderr(Stdio::null());
        if stdin_from_file {
            cmd.stdin(std::fs::File::open(d.join("run.log")).unwrap());
            named.extend(id("run.log"));
        } else {
            cmd.stdin(Stdio::null());
        }
        let status = cmd.status().unwrap();
        prop_assert!(status.code().is_some(), "no crash: {:?}", picks);
        let after = files(d);
        for (identity, content) in &before {
            let now = after.get(identity);
            if named.contains(identity) {
                prop_assert!(now == Some(content), "{:?} (stdin from file: {}): an input was written", picks, stdin_from_file);
            } else if now != Some(content) {
                prop_assert!(targets.contains(identity), "{:?}: a file no flag named was written", picks);
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Exit codes match diagnostics

/// The JSON diagnostics on stderr, each checked to be one object with an `exit_code`.
fn diagnostics(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert!(v["exit_code"].is_i64(), "{l}");
            v
        })
        .collect()
}

/// An exit code's rank in precedence (docs/report.md, "Exit codes"): 7, an objective of `--slo`
/// not met, ranks below every other non-zero code.
fn precedence(code: i64) -> i64 {
    if code == 7 {
        1
    } else if code == 0 {
        0
    } else {
        code + 1
    }
}

/// The exit code is at least every diagnostic's `exit_code` (in precedence), and a run that fails
/// none of them is exit 0 only when no diagnostic above 0 was said.
fn assert_exit_covers_diagnostics(what: &str, out: &Output) {
    let code = out.status.code().unwrap_or_else(|| panic!("{what}: killed"));
    let said = diagnostics(out);
    let worst = said.iter().map(|d| d["exit_code"].as_i64().unwrap()).max_by_key(|c| precedence(*c)).unwrap_or(0);
    assert!(precedence(code as i64) >= precedence(worst), "{what}: exit {code} below a diagnostic's {worst}: {said:?}");
    if worst > 0 {
        assert_ne!(code, 0, "{what}");
    }
}

/// Issue 16's example: a JSON Lines file with a malformed line after good ones printed an error
/// with `"exit_code": 3` and exited 0.
#[test]
fn a_malformed_json_lines_line_is_exit_3() {
    let mut text = std::fs::read(sample("captured/sglang-s1.result.jsonl")).unwrap();
    text.extend(b"{\"completed\": 16, \"duration\": \n");
    // One file (read as it streams runs out), and two (read in parallel, replayed in order).
    for files in [1, 2] {
        let dir = TempDir::new("jsonl");
        let path = dir.0.join("bad.jsonl");
        std::fs::write(&path, &text).unwrap();
        let mut cmd = bin();
        cmd.args(["--error-format", "json"]).args(std::iter::repeat_n(&path, files));
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{files} files: {}", String::from_utf8_lossy(&out.stderr));
        let said = diagnostics(&out);
        assert_eq!(said.len(), files);
        assert_eq!(said[0]["exit_code"], 3);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["runs"].as_array().unwrap().len(), files, "the good lines are still reported");
    }
    // Read from a pipe, too.
    let out = run_with_stdin(bin().args(["--error-format", "json", "-f", "jsonl"]), &text);
    assert_eq!(out.status.code(), Some(3));
    assert_exit_covers_diagnostics("stdin", &out);
}

/// Every sample, alone and all at once, with every output format, and inputs built to make
/// each kind of diagnostic: the exit code is never below a diagnostic's.
#[test]
fn the_exit_code_is_never_below_a_diagnostic() {
    let samples: Vec<PathBuf> = common::samples();
    assert!(samples.len() > 100);
    for s in &samples {
        let out = bin().args(["--error-format", "json", "-f", "dstack"]).arg(s).output().unwrap();
        assert_exit_covers_diagnostics(&common::sample_name(s), &out);
    }
    for fmt in ["json", "jsonl", "csv", "table", "dstack"] {
        let out = bin().args(["--error-format", "json", "-f", fmt]).args(&samples).output().unwrap();
        assert_exit_covers_diagnostics(fmt, &out);
    }
    let dir = TempDir::new("diag");
    let d = &dir.0;
    let mut jsonl = std::fs::read(sample("captured/sglang-s2.result.jsonl")).unwrap();
    // A result line cut short (a client killed while writing): an error of the input. (A line
    // that does not even start like JSON, `{not json`, is a line of text among the results.)
    jsonl.extend(b"{\"backend\": \"sglang\", \"completed\": 16, \"dur\n");
    std::fs::write(d.join("bad.jsonl"), &jsonl).unwrap();
    std::fs::write(d.join("nothing.log"), b"no result here\n").unwrap();
    std::fs::write(d.join("report.json"), br#"{"schema_version": 1, "runs": [{"totals": {"output_tokens": "many"}}]}"#)
        .unwrap();
    // Cut before its latency rows: nothing left to give a TPOT, so the run is unusable (exit 3).
    let cut: String = std::fs::read_to_string(sample("captured/vllm-s2.stdout.txt"))
        .unwrap()
        .lines()
        .take_while(|l| !l.starts_with("Mean TTFT"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(d.join("cut.log"), cut).unwrap();
    let p = |n: &str| d.join(n).display().to_string();
    let cases: Vec<Vec<String>> = vec![
        vec![p("bad.jsonl")],
        vec![p("nothing.log")],
        vec![p("cut.log")],
        vec![p("missing.log")],
        vec![p("bad.jsonl"), p("nothing.log"), p("cut.log"), p("missing.log")],
        vec!["check".into(), p("report.json")],
        vec!["check".into(), p("bad.jsonl")],
        vec!["--strict".into(), sample("public/078-vllm.txt").display().to_string()],
        vec![
            "--parsers".into(),
            common::samples_dir().parent().unwrap().join("tests/plugins/broken").display().to_string(),
        ],
        vec!["--capacity-tolerance".into(), "-1".into()],
        vec!["--no-such-flag".into()],
        vec!["--format".into(), "yaml".into()],
        vec!["--tee-file".into(), p("bad.jsonl"), p("bad.jsonl")],
        // Objectives not met (exit 7), alone and beside every other diagnostic.
        vec![
            "--slo".into(),
            "tpot.mean<=1,tpot.p99<=1,itl.mean<=1".into(),
            sample("captured/vllm-s2.stdout.txt").display().to_string(),
        ],
        vec![
            "--slo".into(),
            "tpot.mean<=1".into(),
            sample("captured/vllm-s2.stdout.txt").display().to_string(),
            p("bad.jsonl"),
            p("nothing.log"),
            p("cut.log"),
            p("missing.log"),
        ],
        vec!["check".into(), p("report.json"), "--slo".into(), "tpot.mean<=1".into()],
        vec!["--slo".into(), "ttft.p98x<=1".into(), p("cut.log")],
    ];
    for args in &cases {
        for fmt in ["json", "dstack", "csv"] {
            let out = bin().args(["--error-format", "json", "-f", fmt]).args(args).output().unwrap();
            assert!(!out.stderr.is_empty(), "{args:?}: a diagnostic");
            assert_exit_covers_diagnostics(&format!("{args:?} -f {fmt}"), &out);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// --error-format json for argument errors

/// Issue 16's example: an unknown flag and a bad `--format` value are one JSON object (code
/// `usage`, exit 2) when `--error-format json` is anywhere on the line.
#[test]
fn argument_errors_follow_error_format_json() {
    let lines: &[&[&str]] = &[
        &["--no-such-flag", "--error-format", "json"],
        &["--error-format", "json", "--no-such-flag"],
        &["--error-format=json", "--format", "yaml"],
        &["--format", "yaml", "--error-format=json"],
        &["--error-format", "json", "--tee=run.log"],
        &["--error-format", "json", "--tee", "--tee-file", "x"],
        &["check", "--error-format", "json"],
        &["check", "report.json", "--error-format", "json", "--bogus"],
        &["--error-format", "json", "--format"],
    ];
    for args in lines {
        let out = bin().args(*args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let said = diagnostics(&out);
        assert_eq!(said.len(), 1, "{args:?}: one object");
        assert_eq!(said[0]["code"], "usage", "{args:?}");
        assert_eq!(said[0]["exit_code"], 2, "{args:?}");
        let message = said[0]["message"].as_str().unwrap();
        assert!(!message.is_empty() && !message.starts_with("error:"), "{args:?}: {message}");
    }
    let out = bin().args(["--format", "yaml", "--error-format", "json"]).output().unwrap();
    let message = diagnostics(&out)[0]["message"].as_str().unwrap().to_string();
    assert!(message.contains("'yaml'") && message.contains("possible values: json, jsonl"), "{message}");
    // Without it (or after `--`, where it is a file name), clap's text for people.
    for args in [&["--no-such-flag"][..], &["--no-such-flag", "--", "--error-format", "json"][..]] {
        let out = bin().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: unexpected argument"), "{args:?}");
    }
    // A human error quoting an argument that would drive the terminal or reorder the line is
    // escaped (clap drops escape sequences itself when stderr is no terminal, not the others).
    let out = bin().args(["--format", "\u{202e}x\u{1b}]0;x\u{7}\u{9b}2J"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    // Any control character, bidi override, isolate or mark, or line separator.
    assert!(!err.chars().any(|c| common::harmful(c) && c != '\n'), "{err:?}");
    assert!(err.contains("\\u{202e}x"), "{err}");
    // --help is output, not an error.
    let out = bin().args(["--help", "--error-format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage:"));
}

// ------------------------------------------------------------------------------------------------
// Listings into a closed pipe or a full disk

const LISTINGS: &[&[&str]] =
    &[&["completions", "bash"], &["man"], &["schema"], &["parsers"], &["parsers", "-f", "json"]];

/// Issue 16's example: `completions bash > /dev/full` panicked (exit 101). Each listing into a
/// full disk is exit 4 with one line saying so.
#[cfg(target_os = "linux")]
#[test]
fn listings_into_a_full_disk_are_exit_4() {
    for args in LISTINGS {
        let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
        let out = bin().args(*args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {err}");
        assert_eq!(err, "bench-normalize: stdout: cannot write: No space left on device (os error 28)\n", "{args:?}");
    }
    for args in [&["--help"][..], &["--version"][..]] {
        let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
        let out = bin().args(args).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "bench-normalize: stdout: cannot write: No space left on device (os error 28)\n"
        );
    }
}

/// Each listing into a pipe its reader closed (before the first byte, as `| true` does, or
/// after one, as `| head -c1`) is exit 0, silent.
#[test]
fn listings_into_a_closed_pipe_are_exit_0() {
    for args in LISTINGS.iter().copied().chain([&["--help"][..]]) {
        for read_one in [false, true] {
            let mut child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            if read_one {
                let mut one = [0u8; 1];
                child.stdout.as_mut().unwrap().read_exact(&mut one).unwrap();
            }
            drop(child.stdout.take());
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            assert!(out.stderr.is_empty(), "{args:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Every output escapes what the docs say it escapes: a model name made of markup, terminal
// escapes and formula triggers, through every format of every command.

/// (No `/`: `compare` names a model by what follows its last `/`, as a path.)
const HOSTILE_MODEL: &str = "=cmd|'-C calc'!A0 <script>alert(1)<b> <img src=x onerror=alert(2)> `c` *e* _u_ [l](javascript:x) \\ \u{1b}[2J\u{202e}\u{7}\nnext";

/// Markdown with `HOSTILE_MODEL` in it: its markup escaped (the escaped form present, the raw one
/// absent), no control or reordering character, and every row of a pipe table with the same
/// number of unescaped `|` as its header.
fn assert_markdown_escaped(what: &str, md: &str) {
    assert!(md.contains("\\<script\\>") && md.contains("\\<img src=x onerror=alert(2)\\>"), "{what}: {md}");
    // Markup not preceded by its escape.
    let raw = |needle: &str| md.match_indices(needle).any(|(i, _)| i == 0 || md.as_bytes()[i - 1] != b'\\');
    for markup in ["<script", "<img", "`c`", "*e*", "_u_", "[l](", "](javascript"] {
        assert!(!raw(markup), "{what}: {markup:?} raw in {md}");
    }
    assert!(!md.chars().any(|c| c != '\n' && common::harmful(c)), "{what}: {md:?}");
    let pipes = |line: &str| {
        let b = line.as_bytes();
        (0..b.len()).filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\')).count()
    };
    let mut header = None;
    for line in md.lines() {
        if line.starts_with('|') {
            let n = pipes(line);
            let h = *header.get_or_insert(n);
            assert_eq!(n, h, "{what}: {line}");
        } else {
            header = None;
        }
    }
}

/// Text for a terminal: no control or reordering character but the line breaks it makes; the
/// model shown (as the text it is) where the output shows it.
fn assert_terminal_safe(what: &str, text: &str, shows_model: bool) {
    assert!(!text.chars().any(|c| c != '\n' && common::harmful(c)), "{what}: {text:?}");
    assert!(!shows_model || text.contains("<script>alert(1)<b>"), "{what}: the model is shown");
}

#[test]
fn a_hostile_model_name_is_escaped_in_every_output() {
    let dir = TempDir::new("hostile-model");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sample("captured/vllm-s2.result.json")).unwrap()).unwrap();
    doc["model_id"] = HOSTILE_MODEL.into();
    let a = dir.0.join("a.result.json");
    let b = dir.0.join("b.result.json");
    std::fs::write(&a, doc.to_string()).unwrap();
    std::fs::write(&b, doc.to_string()).unwrap();
    let stdout = |args: &[&str], files: &[&Path]| {
        let out = bin().args(args).args(files).output().unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{args:?}: not UTF-8: {e}"))
    };
    // JSON outputs: the name exactly, escaped by JSON itself.
    for format in ["json", "jsonl", "dstack", "dstack-e2e", "llmd-br"] {
        let text = stdout(&["-f", format], &[&a]);
        let mut found = 0;
        for doc in serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>() {
            let doc = doc.unwrap_or_else(|e| panic!("{format}: {e}"));
            fn strings(v: &serde_json::Value, found: &mut usize) {
                match v {
                    serde_json::Value::String(s) if s == HOSTILE_MODEL => *found += 1,
                    serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, found)),
                    serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, found)),
                    _ => {}
                }
            }
            strings(&doc, &mut found);
        }
        assert!(found > 0 || !matches!(format, "json" | "jsonl"), "{format}: the model is kept as it is");
        // Control characters escaped by JSON (a bidi override is valid JSON text as it is).
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{format}: raw in JSON");
    }
    // For a terminal: table and --explain.
    assert_terminal_safe("table", &stdout(&["-f", "table"], &[&a]), false);
    assert_terminal_safe("explain", &stdout(&["--explain"], &[&a]), false);
    // CSV (which has no model column): a cell never starts a formula, and the row has every column.
    let csv_text = stdout(&["-f", "csv"], &[&a]);
    let mut rows = csv::Reader::from_reader(csv_text.as_bytes());
    let width = rows.headers().unwrap().len();
    let row = rows.records().next().unwrap().unwrap();
    assert_eq!(row.len(), width);
    for cell in &row {
        assert!(!cell.starts_with(['=', '+', '-', '@', '\t', '\r']) || cell.parse::<f64>().is_ok(), "{cell:?}");
    }
    // compare and sweep: Markdown escaped by the one function, tables as for a terminal, JSON.
    assert_markdown_escaped("compare markdown", &stdout(&["compare", "--format", "markdown"], &[&a, &b]));
    assert_terminal_safe("compare table", &stdout(&["compare", "--format", "table"], &[&a, &b]), true);
    serde_json::from_str::<serde_json::Value>(&stdout(&["compare", "--format", "json"], &[&a, &b])).unwrap();
    assert_markdown_escaped("sweep markdown", &stdout(&["sweep", "--format", "markdown"], &[&a]));
    assert_terminal_safe("sweep table", &stdout(&["sweep", "--format", "table"], &[&a]), true);
    serde_json::from_str::<serde_json::Value>(&stdout(&["sweep", "--format", "json"], &[&a])).unwrap();
    // plot: well-formed SVG, the name a text, no element of its own.
    let svg = dir.0.join("p.svg");
    let out = bin().arg("plot").arg(&a).arg("-o").arg(&svg).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    assert!(doc.descendants().all(|n| !matches!(n.tag_name().name(), "script" | "img")));
    assert!(doc.descendants().filter_map(|n| n.text()).any(|t| t.contains("<script>")), "the model is shown as text");
}
