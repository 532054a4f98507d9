//! Every route's exit code, stdout and stderr, as docs/report.md's route table states them, and
//! the write guard every writer passes (docs/report.md, "The write guard"): an input by any
//! name is never written, a special file never replaced, a copy never emptied for a mistyped
//! input; every failed check reaches stderr; `--diagnostics-file` holds the diagnostics alone.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bench-normalize"));
    c.env("NO_COLOR", "1")
        .env_remove("BENCH_NORMALIZE_PARSERS")
        .env_remove("BENCH_NORMALIZE_DIAGNOSTICS_FILE")
        .env_remove("BENCH_NORMALIZE_SLO");
    c
}

fn sample(name: &str) -> PathBuf {
    common::samples_dir().join(name)
}

const ACCEPTED: &str = "captured/vllm-s1.stdout.txt";
const REJECTED: &str = "noisy/tpot-overwritten-with-itl.txt";
/// A complete vLLM log, to be cut.
const WHOLE: &str = "captured/vllm-chat-s2.stdout.txt";

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The first `n` lines of the whole log: its block cut before its closing line (`complete-block`
/// fails, a warning) but after every key figure: accepted, exit 0.
fn cut_after_key_figures(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(sample(WHOLE)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Up to the last E2EL row: the closing `====` line is left out.
    let last = lines.iter().rposition(|l| l.starts_with("P99 E2EL")).unwrap();
    let path = dir.join("cut.log");
    std::fs::write(&path, lines[..=last].join("\n") + "\n").unwrap();
    path
}

/// The failed checks of every run of `input`, from its JSON report: (rule, severity).
fn failed_checks(input: &Path) -> Vec<(String, String, String)> {
    let out = bin().arg("-f").arg("jsonl").arg(input).output().unwrap();
    stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .flat_map(|run| {
            let verdict = run["verdict"].as_str().unwrap_or_default().to_string();
            run["checks"].as_array().cloned().unwrap_or_default().into_iter().filter(|c| c["status"] == "fail").map(
                move |c| {
                    (
                        c["id"].as_str().unwrap().to_string(),
                        c["severity"].as_str().unwrap().to_string(),
                        verdict.clone(),
                    )
                },
            )
        })
        .collect()
}

/// The JSON diagnostics of a run of the command, each line parsed (every line must be one).
fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect()
}

/// The fields docs/report.md promises for every diagnostic.
fn assert_diagnostic_fields(d: &Value) {
    for key in ["code", "message", "input", "line", "column", "exit_code"] {
        assert!(d.get(key).is_some(), "no {key}: {d}");
    }
}

// ------------------------------------------------------------------------------------------------
// Every failed check reaches stderr

/// Issue 29: a block cut off after its key figures is accepted (exit 0) with a failed
/// `complete-block` warning; with `-f dstack` the report holds no check, so the warning must be on
/// stderr: one line, naming the rule and the run's line; in JSON with `exit_code: 0`.
#[test]
fn a_failed_warning_of_an_accepted_run_reaches_stderr_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let cut = cut_after_key_figures(dir.path());
    let failed: Vec<_> = failed_checks(&cut).into_iter().filter(|(_, sev, _)| sev != "info").collect();
    assert_eq!(failed, [("complete-block".into(), "warning".into(), "accepted".into())]);
    for format in ["json", "jsonl", "csv", "table", "dstack", "llmd-br"] {
        let out = bin().args(["-f", format]).arg(&cut).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}: {}", stderr(&out));
        assert!(!out.stdout.is_empty(), "{format}: the run is written");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{format}: {err}");
        assert!(err.starts_with("bench-normalize: warning: "), "{format}: {err}");
        assert!(err.contains("cut.log:17: run 1: complete-block: the block was cut off"), "{format}: {err}");

        let out = bin().args(["-f", format, "--error-format", "json"]).arg(&cut).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let lines = json_lines(&stderr(&out));
        assert_eq!(lines.len(), 1, "{format}");
        let d = &lines[0];
        assert_diagnostic_fields(d);
        assert_eq!(d["code"], "warning");
        assert_eq!(d["rule"], "complete-block");
        assert_eq!(d["severity"], "warning");
        assert_eq!(d["line"], 17);
        assert_eq!(d["run"], 1);
        assert_eq!(d["exit_code"], 0);
        assert_eq!(d["input"], cut.display().to_string());
    }
}

/// Over every sample: each failed error or warning check of each run has its line on stderr
/// (in JSON: its `rule`), with `-f dstack` as with `-f json`; a failed `info` check has none; and
/// no line names a check that did not fail.
#[test]
fn every_failed_check_of_every_sample_has_a_line() {
    let mut files = Vec::new();
    for dir in ["captured", "noisy", "damaged", "pastes", "public", "versions"] {
        let Ok(entries) = std::fs::read_dir(sample(dir)) else { continue };
        for e in entries {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_file() && common::is_sample(&name) {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut seen = 0;
    for f in &files {
        let failed = failed_checks(f);
        for format in ["json", "dstack"] {
            let out = bin().args(["-f", format, "--error-format", "json"]).arg(f).output().unwrap();
            let lines = json_lines(&stderr(&out));
            let mut said: Vec<String> = lines.iter().filter_map(|d| d["rule"].as_str().map(str::to_string)).collect();
            said.sort();
            let mut expected: Vec<String> = failed
                .iter()
                // An unusable run is said by its key-figures (and its warnings), not by each
                // figure the missing one leaves unchecked.
                .filter(|(id, sev, verdict)| {
                    sev == "warning" || (sev == "error" && (verdict != "unusable" || id == "key-figures"))
                })
                .map(|(id, _, _)| id.clone())
                .collect();
            expected.sort();
            assert_eq!(said, expected, "{}: -f {format}", f.display());
            for d in &lines {
                assert_diagnostic_fields(d);
            }
            seen += expected.len();
        }
    }
    assert!(seen > 20, "the samples fail some checks: {seen}");
}

// ------------------------------------------------------------------------------------------------
// The route table (docs/report.md, "Routes")

/// Plain input, every format: the exit code, what stdout carries for an accepted and a rejected
/// run, and the rejection's lines on stderr.
#[test]
fn each_format_route_holds_its_row() {
    let accepted = sample(ACCEPTED);
    let rejected = sample(REJECTED);
    // (format, rejected run written on stdout)
    for (format, writes_rejected) in
        [("json", true), ("jsonl", true), ("csv", true), ("table", true), ("dstack", false), ("llmd-br", false)]
    {
        let out = bin().args(["-f", format]).arg(&accepted).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}: {}", stderr(&out));
        assert!(!out.stdout.is_empty(), "{format}");
        assert!(out.stderr.is_empty(), "{format}: an accepted run with no failed check says nothing: {}", stderr(&out));
        if format != "table" && format != "csv" {
            // One JSON value (json, dstack) or one a line (jsonl, llmd-br).
            for line in stdout(&out).lines().filter(|_| format == "jsonl" || format == "llmd-br") {
                serde_json::from_str::<Value>(line).unwrap();
            }
            if format == "json" || format == "dstack" {
                serde_json::from_slice::<Value>(&out.stdout).unwrap();
            }
        }

        let out = bin().args(["-f", format]).arg(&rejected).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert_eq!(!out.stdout.is_empty(), writes_rejected, "{format}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.lines().any(|l| l.contains("run 1 rejected: decode-capacity:")), "{format}: {err}");
        if format == "llmd-br" {
            assert!(err.contains("llmd-br: not written: the run is rejected"), "{err}");
        }
    }
    // --explain: the derivation on stdout, the same exit code.
    let out = bin().arg("--explain").arg(&rejected).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stdout.is_empty());
}

/// `check`: a canonical report is checked (exit 0, the report on stdout); benchmark output is no
/// report (exit 3, nothing on stdout).
#[test]
fn check_route_holds_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = bin().arg(sample(ACCEPTED)).output().unwrap();
    std::fs::write(&report, &out.stdout).unwrap();
    let out = bin().arg("check").arg(&report).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(serde_json::from_slice::<Value>(&out.stdout).unwrap()["runs"].is_array());
    let out = bin().arg("check").arg(sample(ACCEPTED)).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains("no benchmark result found"));
}

/// `compare`: a run with itself is exit 0 and a comparison on stdout; a rejected run read beside
/// a pair is exit 1, and with no pair left exit 3; its rules said on stderr either way.
#[test]
fn compare_route_holds_its_row() {
    let out = bin().args(["compare", "-f", "json"]).arg(sample(ACCEPTED)).arg(sample(ACCEPTED)).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice::<Value>(&out.stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    copy_of(dir.path(), "a.log", ACCEPTED);
    copy_of(dir.path(), "r.log", REJECTED);
    let out = bin().args(["compare", "-f", "json"]).arg(dir.path()).arg(sample(ACCEPTED)).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    serde_json::from_slice::<Value>(&out.stdout).unwrap();
    assert!(stderr(&out).contains("rejected: decode-capacity"), "{}", stderr(&out));
    let out = bin().args(["compare", "-f", "json"]).arg(sample(ACCEPTED)).arg(sample(REJECTED)).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("rejected: decode-capacity"), "{}", stderr(&out));
}

fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-client")
}

/// `bench-normalize run` with the stand-in client playing `sample` (no suffix).
fn run_cmd(opts: &[&str], sample_name: &str, cwd: &Path, tmp: &Path) -> Command {
    let mut cmd = bin();
    cmd.arg("run").args(opts).arg("--").args(common::FAKE_VLLM);
    let path = std::env::join_paths(
        std::iter::once(fake_dir().join("bin")).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    cmd.current_dir(cwd)
        .env("PATH", path)
        .env("PYTHONPATH", fake_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("TMPDIR", tmp)
        .env("FAKE_SAMPLE", common::samples_dir().join(sample_name))
        .env_remove("FAKE_EXIT")
        .env_remove("FAKE_WAIT")
        .env_remove("FAKE_TAMPER");
    cmd
}

/// `run`: stderr carries the client's output and the diagnostics together; `--diagnostics-file`
/// (and its variable) holds the diagnostics alone, exactly the lines stderr has of them.
#[test]
fn run_route_and_its_diagnostics_alone() {
    let cwd = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let diag_dir = tempfile::tempdir().unwrap();
    let diag = diag_dir.path().join("diag.jsonl");
    let out = run_cmd(
        &["--error-format", "json", "--diagnostics-file", diag.to_str().unwrap()],
        "captured/vllm-s2",
        cwd.path(),
        tmp.path(),
    )
    .output()
    .unwrap();
    let err = stderr(&out);
    assert!(err.contains("Serving Benchmark Result"), "the client's output shows on stderr: {err}");
    let file = std::fs::read_to_string(&diag).unwrap();
    assert!(!file.contains("Serving Benchmark Result"), "no client output in the file: {file}");
    // Every line of the file is a diagnostic, and is on stderr too.
    for d in json_lines(&file) {
        assert_diagnostic_fields(&d);
        assert!(err.contains(&d.to_string()), "{d} not on stderr");
    }
    // The lines of stderr that are JSON diagnostics are exactly the file's.
    let on_stderr: Vec<&str> = err.lines().filter(|l| l.starts_with("{\"code\":")).collect();
    assert_eq!(on_stderr, file.lines().collect::<Vec<_>>());
    assert!(matches!(out.status.code(), Some(0 | 1 | 3 | 5)), "{err}");

    // A failed client: exit 6, said in the file too; the variable names the file.
    let diag2 = diag_dir.path().join("diag2.txt");
    let out = run_cmd(&[], "captured/vllm-s2", cwd.path(), tmp.path())
        .env("FAKE_EXIT", "3")
        .env("BENCH_NORMALIZE_DIAGNOSTICS_FILE", &diag2)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let file = std::fs::read_to_string(&diag2).unwrap();
    assert!(file.lines().any(|l| l.contains("the client exited with status 3")), "{file}");
    assert!(!file.contains("Serving Benchmark Result"));
}

/// Plain input: the diagnostics file holds exactly what stderr says, human or JSON.
#[test]
fn diagnostics_file_is_stderr_diagnostics_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let cut = cut_after_key_figures(dir.path());
    let diag = dir.path().join("d.txt");
    for json in [false, true] {
        let mut cmd = bin();
        cmd.args(["-f", "dstack", "--diagnostics-file"])
            .arg(&diag)
            .arg(&cut)
            .arg(sample(REJECTED))
            .arg("nonexistent.log");
        if json {
            cmd.args(["--error-format", "json"]);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
        let file = std::fs::read_to_string(&diag).unwrap();
        assert_eq!(file, stderr(&out), "json: {json}");
        assert!(file.lines().count() >= 4, "{file}");
    }
    // An empty variable is no file.
    let out = bin().env("BENCH_NORMALIZE_DIAGNOSTICS_FILE", "").arg(&cut).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    // A full disk: exit 4, said once.
    #[cfg(target_os = "linux")]
    {
        let out = bin().args(["--diagnostics-file", "/dev/full"]).arg(&cut).output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
        assert_eq!(stderr(&out).matches("/dev/full: cannot write").count(), 1, "{}", stderr(&out));
    }
}

// ------------------------------------------------------------------------------------------------
// The write guard

fn copy_of(dir: &Path, name: &str, from: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(sample(from), &p).unwrap();
    p
}

/// `bench-normalize big.log -f jsonl >> big.log` (and `< big.log >> big.log`, and `--tee` with
/// stderr appended to the input) is refused as `cat` refuses it: exit 2, naming both, the
/// input as it was (but for the one refusal line that stderr, being the input, receives).
#[cfg(unix)]
#[test]
fn the_report_appended_to_its_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = copy_of(d, "big.log", ACCEPTED);
    let before = std::fs::read(&big).unwrap();
    std::os::unix::fs::symlink(&big, d.join("link.log")).unwrap();
    let append = || std::fs::File::options().append(true).open(&big).unwrap();
    for (args, stdin_from_file) in [
        (&["big.log", "-f", "jsonl"][..], false),
        (&["link.log", "-f", "jsonl"][..], false),
        (&["-f", "jsonl"][..], true),
        (&["check", "big.log"][..], false),
        (&["sweep", "big.log"][..], false),
        (&["compare", "big.log", "big.log"][..], false),
    ] {
        let mut cmd = bin();
        cmd.current_dir(d).args(args).stdout(append()).stderr(Stdio::piped());
        if stdin_from_file {
            cmd.stdin(std::fs::File::open(&big).unwrap());
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("input file is output file") && err.contains("standard output"), "{args:?}: {err}");
        assert!(err.contains("big.log"), "{args:?}: names the input: {err}");
        assert_eq!(std::fs::read(&big).unwrap(), before, "{args:?}");
    }
    // --tee into stderr appended to the input: the one line of the refusal, nothing copied.
    let out = bin().current_dir(d).args(["--tee", "big.log"]).stdout(Stdio::piped()).stderr(append()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let after = std::fs::read(&big).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    let added = String::from_utf8_lossy(&after[before.len()..]).into_owned();
    assert_eq!(added.lines().count(), 1, "{added}");
    assert!(added.starts_with("bench-normalize: standard error"), "{added}");
    // A report into another file is no clash.
    let out_file = d.join("out.jsonl");
    let out = bin()
        .current_dir(d)
        .args(["big.log", "-f", "jsonl"])
        .stdout(std::fs::File::create(&out_file).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&out_file).unwrap().lines().count(), 1);
}

/// `compare` reads directories: a report written into one of them is refused too.
#[cfg(unix)]
#[test]
fn a_report_into_an_input_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    copy_of(&results, "a.log", ACCEPTED);
    let into = results.join("comparison.json");
    std::fs::write(&into, b"").unwrap();
    let out = bin()
        .args(["compare", "-f", "json"])
        .arg(&results)
        .arg(sample(ACCEPTED))
        .stdout(std::fs::File::options().append(true).open(&into).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("under the input directory"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&into).unwrap(), b"");
}

/// A mistyped input name does not cost the previous copy: `--tee-file keep.log typo.log` is exit
/// 4, naming the input, and keep.log is as it was.
#[test]
fn tee_file_is_not_emptied_for_an_input_that_does_not_open() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_of(d, "run.log", ACCEPTED);
    std::fs::write(d.join("keep.log"), b"the previous copy\n").unwrap();
    let out = bin().current_dir(d).args(["--tee-file", "keep.log", "run.log", "typo.log"]).output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("typo.log"), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "nothing read");
    assert_eq!(std::fs::read(d.join("keep.log")).unwrap(), b"the previous copy\n");
    // `/dev/stdout` is `-`: stdout holds the report.
    let out = bin().current_dir(d).args(["--tee-file", "/dev/stdout", "run.log"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("standard output holds the report"));
    // --diagnostics-file is guarded as every writer is.
    let before = std::fs::read(d.join("run.log")).unwrap();
    for target in ["run.log", "./run.log", "-"] {
        let out = bin().current_dir(d).args(["--diagnostics-file", target, "run.log"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}");
        assert_eq!(std::fs::read(d.join("run.log")).unwrap(), before, "{target}");
    }
}

/// `plot -o`: its own input refused; a symlink stays a symlink; `/dev/stdout` is stdout; a FIFO is
/// written through (read by its reader) and stays a FIFO; a FIFO with no reader is exit 4 at
/// once; `/dev/null` stays a character device.
#[cfg(unix)]
#[test]
fn plot_writes_through_special_files_and_never_over_an_input() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = copy_of(d, "run.log", ACCEPTED);
    let before = std::fs::read(&input).unwrap();
    for target in ["run.log", "./run.log"] {
        let out = bin().current_dir(d).args(["plot", "run.log", "-o", target]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("plot -o {target}: it is the input run.log")), "{}", stderr(&out));
        assert_eq!(std::fs::read(&input).unwrap(), before);
    }
    // A symlink to the plot: the link stays, its file is replaced.
    std::fs::write(d.join("real.svg"), b"old").unwrap();
    std::os::unix::fs::symlink(d.join("real.svg"), d.join("link.svg")).unwrap();
    let out = bin().current_dir(d).args(["plot", "run.log", "-o", "link.svg"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(d.join("link.svg")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(d.join("real.svg")).unwrap().contains("<svg"));
    // /dev/stdout is standard output.
    let out = bin().current_dir(d).args(["plot", "run.log", "-o", "/dev/stdout"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("<svg"));
    // A FIFO with a reader.
    let fifo = d.join("plot.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).unwrap())
    };
    // (The reader opens first or the writer retries: the open happens with O_NONBLOCK.)
    std::thread::sleep(std::time::Duration::from_millis(200));
    let out = bin().current_dir(d).args(["plot", "run.log", "-o"]).arg(&fifo).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = reader.join().unwrap();
    assert!(String::from_utf8_lossy(&got).contains("<svg"));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
    // A FIFO with no reader: exit 4 at once, no wait.
    let started = std::time::Instant::now();
    let out = bin().current_dir(d).args(["plot", "run.log", "-o"]).arg(&fifo).output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // /dev/null stays a device (when this test may write it at all).
    if std::fs::File::options().write(true).open("/dev/null").is_ok() {
        let out = bin().current_dir(d).args(["plot", "run.log", "-o", "/dev/null"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }
    // Nothing left behind in the directory: no temporary file.
    let mut names: Vec<String> =
        std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["link.svg", "plot.fifo", "real.svg", "run.log"]);
}

// ------------------------------------------------------------------------------------------------
// What is missing, said

/// A paste without its banner line names the block and the line to add, and no pattern.
#[test]
fn a_cut_paste_says_which_banner_is_missing() {
    let text = std::fs::read_to_string(sample(WHOLE)).unwrap();
    let banner = text.lines().position(|l| l.contains("Serving Benchmark Result")).unwrap();
    let cut: String = text.lines().skip(banner + 1).map(|l| format!("{l}\n")).collect();
    let out = common::output_with_stdin(&mut bin(), cut.as_bytes());
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("vllm bench serve result block (`Successful requests:` ...)"), "{err}");
    assert!(err.contains("but not its banner line `========== Serving Benchmark Result ==========`"), "{err}");
    assert!(err.contains("paste the whole block, from its first line"), "{err}");
    assert!(!err.contains("=+"), "no pattern: {err}");
    // --explain adds the patterns.
    let out = common::output_with_stdin(bin().arg("--explain"), cut.as_bytes());
    assert!(stderr(&out).contains("=+ Serving Benchmark Result =+"), "{}", stderr(&out));
    // Text with no rows of any block says only what was looked for.
    let out = common::output_with_stdin(&mut bin(), b"hello\nworld\n");
    assert_eq!(out.status.code(), Some(3));
    assert!(!stderr(&out).contains("banner line"), "{}", stderr(&out));
}

/// With no file and a terminal on stdin, a notice says standard input is read: once, before
/// reading; none when stdin is a pipe.
#[cfg(target_os = "linux")]
#[test]
fn a_terminal_on_stdin_is_said_to_be_read() {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors this test then owns.
    let r = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(r, 0);
    // SAFETY: descriptors just opened, owned here.
    let (mut master, slave) = unsafe { (std::fs::File::from_raw_fd(master), std::fs::File::from_raw_fd(slave)) };
    // Not inherited by the child (nor by other tests' children): only its stdin is the terminal.
    for f in [&master, &slave] {
        // SAFETY: fcntl on a descriptor owned here.
        unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(f), libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    let child = bin().stdin(slave).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // A line of no result, then one Ctrl-D at the start of a line: the end, at once (a terminal's
    // end-of-file is not sticky; the tool must not read past it).
    master.write_all(b"hello\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    master.write_all(b"\x04").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("one Ctrl-D did not end the input");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(master);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("reading a benchmark log from standard input").count(), 1, "{err}");
    assert!(err.lines().next().unwrap().contains("reading a benchmark log"), "said before the rest: {err}");
    let out = common::output_with_stdin(&mut bin(), b"");
    assert!(!stderr(&out).contains("reading a benchmark log"));
}
