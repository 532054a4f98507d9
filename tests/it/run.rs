//! `bench-normalize run -- <client command>` against a stand-in client (tests/fake-client: a
//! `vllm` shim and a `sglang.bench_serving` module that print a captured sample and write its
//! result file only when given the real client's flags): what `run` adds, shows, keeps and
//! removes, the exit status, signals, and that nothing is left in the working directory.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-client")
}

/// Where a test runs: a working directory and a TMPDIR of its own, both empty at the start.
struct Scene {
    cwd: tempfile::TempDir,
    tmp: tempfile::TempDir,
}

impl Scene {
    fn new() -> Scene {
        Scene { cwd: tempfile::tempdir().unwrap(), tmp: tempfile::tempdir().unwrap() }
    }

    /// `bench-normalize run <opts> -- <client...>`, the stand-in playing `sample` (a path under
    /// samples/ without `.stdout.txt`).
    fn command(&self, opts: &[&str], client: &[&str], sample: &str, env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bench-normalize"));
        cmd.arg("run").args(opts).arg("--").args(client).current_dir(self.cwd.path());
        let path = std::env::join_paths(
            std::iter::once(fake_dir().join("bin")).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        cmd.env("PATH", path)
            .env("PYTHONPATH", fake_dir())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("TMPDIR", self.tmp.path())
            .env("FAKE_SAMPLE", common::samples_dir().join(sample))
            .env_remove("FAKE_EXIT")
            .env_remove("FAKE_WAIT")
            .env_remove("FAKE_TAMPER")
            .env_remove("FAKE_IGNORE_SIGNALS")
            .env_remove("FAKE_NO_VERSION");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    fn run(&self, opts: &[&str], client: &[&str], sample: &str, env: &[(&str, &str)]) -> Output {
        self.command(opts, client, sample, env).output().unwrap()
    }

    /// Names in a directory.
    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    /// A run not written cleanly keeps what the client wrote in the working directory
    /// (`bench-normalize-run.XXXXXX`), said on stderr, and nothing in TMPDIR: what it holds.
    fn assert_kept(&self, out: &Output) -> Vec<String> {
        let kept = Scene::listing(self.cwd.path());
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(kept[0].starts_with("bench-normalize-run."), "{kept:?}");
        let dir = self.cwd.path().join(&kept[0]);
        let err = stderr(out);
        assert!(err.contains(&format!("kept in {}", dir.display())), "{err}");
        assert_eq!(Scene::listing(self.tmp.path()), Vec::<String>::new(), "left in TMPDIR");
        let files = Scene::listing(&dir);
        std::fs::remove_dir_all(dir).unwrap();
        files
    }

    /// Nothing left in the working directory or the temporary directory.
    fn assert_clean(&self) {
        assert_eq!(Scene::listing(self.cwd.path()), Vec::<String>::new(), "left in the working directory");
        assert_eq!(Scene::listing(self.tmp.path()), Vec::<String>::new(), "left in TMPDIR");
    }
}

/// A client command with the workload both clients are given here (the stand-in prints its sample
/// whatever the flags; `run` reads the workload flags the output does not print).
macro_rules! with_workload {
    ($($word:literal),*) => {
        &[$($word,)* "--dataset-name", "random", "--random-input-len", "1024", "--random-output-len", "512",
          "--num-prompts", "16", "--max-concurrency", "4"]
    };
}

const VLLM: &[&str] =
    with_workload!("vllm", "bench", "serve", "--backend", "openai", "--model", "/models/emu-llm-wordlevel");

const SGLANG: &[&str] = with_workload!("python3", "-m", "sglang.bench_serving", "--backend", "sglang-oai");

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("stdout is no JSON ({e}): {}\nstderr: {}", String::from_utf8_lossy(&out.stdout), stderr(out))
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn only_run(out: &Output) -> Value {
    let doc = report(out);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "one run: the output and the result file read together\n{}", stderr(out));
    runs[0].clone()
}

fn truth(sample: &str) -> Value {
    common::read_json(&common::samples_dir().join(format!("{sample}.truth.json")))
}

fn check<'a>(run: &'a Value, id: &str) -> &'a Value {
    run["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no check {id}"))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

/// The whole loop on vLLM: the flags exact figures need are added, the output shows on stderr,
/// stdout and the file are one run with per-request TPOT (the emulator's true TPOT), the version
/// comes from the client's package, and nothing is left behind.
#[test]
fn vllm_run_adds_flags_and_reads_output_and_file_as_one_run() {
    let scene = Scene::new();
    let sample = "captured/vllm-s2";
    let out = scene.run(&[], VLLM, sample, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    let src = &run["source"]["run"];
    assert_eq!(src["client"], "vllm-bench-serve");
    let added = strings(&src["added_flags"]);
    assert_eq!(added[..3], ["--percentile-metrics ttft,tpot,itl,e2el", "--save-result", "--save-detailed"]);
    // The private temporary directory is recorded by a placeholder, not its path.
    assert_eq!(added[3], "--result-dir <run-dir>", "{added:?}");
    assert_eq!(added[4], "--result-filename vllm.result.json");
    assert_eq!(strings(&src["given"]), VLLM);
    assert_eq!(strings(&src["command"])[..VLLM.len()], *VLLM);
    assert_eq!(src["tool_version"], "0.33.0");
    assert_eq!(src["exit_code"], 0);
    assert!(src["started"].as_str().unwrap() <= src["ended"].as_str().unwrap());
    assert_eq!(src["result_file"], "vllm.result.json");
    assert_eq!(src["kept"], Value::Null);

    // The file's exact figures and per-request arrays: per-request TPOT, the true one.
    assert_eq!(run["source"]["parser"], "vllm-result-json");
    let tpot = &run["derived"]["tpot_ms"];
    assert_eq!(tpot["method"], "per-request");
    let true_tpot = truth(sample)["true_tpot_ms"].as_f64().unwrap();
    assert!(common::is_truth(tpot["mean"].as_f64().unwrap(), true_tpot, false), "{tpot} vs {true_tpot}");
    assert!(tpot["p50"].is_number() && tpot["p99"].is_number());
    let agreement = check(&run, "output-matches-result-file");
    assert_eq!(agreement["status"], "pass", "{agreement}");
    assert_eq!(run["verdict"], "accepted");
    // Printed rows are kept beside the file's keys.
    assert!(run["rows"].as_array().unwrap().iter().any(|r| r["label"] == "Mean E2EL (ms)" && r["scope"] == "output"));

    // What dstack's report takes from the command.
    let w = &run["workload"];
    assert_eq!(w["benchmark_tool"], "vllm bench serve");
    assert_eq!(w["benchmark_tool_version"], "0.33.0");
    assert!(w["command"].as_str().unwrap().starts_with("vllm bench serve --backend openai"));
    assert_eq!((w["num_prompts"].as_u64(), w["max_concurrency"].as_u64()), (Some(16), Some(4)));
    assert_eq!((w["input_len"].as_u64(), w["output_len"].as_u64()), (Some(1024), Some(512)));
    assert_eq!(w["api"], "completions");

    // The client's own output showed on stderr (E2EL rows too: --percentile-metrics was added).
    let err = stderr(&out);
    assert!(err.contains("Serving Benchmark Result") && err.contains("Mean E2EL (ms):"), "{err}");
    scene.assert_clean();
}

#[test]
fn sglang_run_adds_output_file_and_details() {
    let scene = Scene::new();
    let sample = "captured/sglang-oai-s2";
    let out = scene.run(&[], SGLANG, sample, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    let src = &run["source"]["run"];
    assert_eq!(src["client"], "sglang-bench-serving");
    let added = strings(&src["added_flags"]);
    assert_eq!(added.len(), 2, "{added:?}");
    assert!(added[0].starts_with("--output-file ") && added[0].ends_with("/sglang.result.jsonl"));
    assert_eq!(added[1], "--output-details");
    assert_eq!(src["tool_version"], "0.5.23");
    assert_eq!(run["derived"]["tpot_ms"]["method"], "per-request");
    let true_tpot = truth(sample)["true_tpot_ms"].as_f64().unwrap();
    assert!(common::is_truth(run["derived"]["tpot_ms"]["mean"].as_f64().unwrap(), true_tpot, false));
    assert_eq!(check(&run, "output-matches-result-file")["status"], "pass");
    assert_eq!(run["workload"]["benchmark_tool"], "sglang.bench_serving");
    assert_eq!(run["workload"]["api"], "completions", "backend sglang-oai");
    // Without the added --output-file the stand-in, like SGLang, would write into the working directory.
    scene.assert_clean();
}

/// The user's flags win: a list is merged, a result folder of theirs is read and left where it is.
#[test]
fn the_users_flags_win_and_their_files_stay() {
    let scene = Scene::new();
    let mut cmd: Vec<&str> = VLLM.to_vec();
    cmd.extend(["--percentile-metrics", "ttft,tpot", "--result-dir", "mine"]);
    let out = scene.run(&[], &cmd, "captured/vllm-s2", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    let src = &run["source"]["run"];
    assert_eq!(
        strings(&src["added_flags"]),
        ["--percentile-metrics ttft,tpot,e2el (was ttft,tpot)", "--save-result", "--save-detailed"]
    );
    let command = strings(&src["command"]);
    assert!(command.windows(2).any(|w| w == ["--percentile-metrics", "ttft,tpot,e2el"]), "{command:?}");
    assert!(command.windows(2).any(|w| w == ["--result-dir", "mine"]));
    assert!(!command.iter().any(|a| a == "--result-filename"), "vLLM names the file in the user's folder");
    // Read from the user's folder (the client named the file), and left there.
    let file = src["result_file"].as_str().unwrap();
    assert!(file.ends_with("mine/openai-infqps-concurrency4-fake.json"), "{file}");
    assert_eq!(run["derived"]["tpot_ms"]["method"], "per-request");
    assert_eq!(Scene::listing(scene.cwd.path()), ["mine"]);
    assert_eq!(Scene::listing(&scene.cwd.path().join("mine")), ["openai-infqps-concurrency4-fake.json"]);
    assert_eq!(Scene::listing(scene.tmp.path()), Vec::<String>::new());
}

/// A result file that was there before and that the client did not touch is not this run's: the
/// run is read from the output alone, with a warning.
#[test]
fn a_file_the_client_did_not_write_is_not_read() {
    let scene = Scene::new();
    let old = std::fs::read(common::samples_dir().join("captured/vllm-s1.result.json")).unwrap();
    std::fs::write(scene.cwd.path().join("old.json"), &old).unwrap();
    let mut cmd: Vec<&str> = VLLM.to_vec();
    cmd.extend(["--result-filename", "old.json"]);
    let out = scene.run(&[], &cmd, "captured/vllm-s2", &[("FAKE_NO_FILE", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    assert_eq!(run["source"]["parser"], "vllm-bench-serve");
    assert_eq!(run["source"]["run"]["result_file"], Value::Null);
    assert_eq!(run["derived"]["tpot_ms"]["method"], "e2e-ttft-tokens");
    assert!(stderr(&out).contains("old.json is unchanged since before the run"), "{}", stderr(&out));
    assert_eq!(std::fs::read(scene.cwd.path().join("old.json")).unwrap(), old);
}

/// An SGLang file of the user's that already holds earlier runs: only the line this run appended
/// is read.
#[test]
fn an_appended_result_file_is_read_from_where_this_run_started() {
    let scene = Scene::new();
    let earlier = std::fs::read_to_string(common::samples_dir().join("captured/sglang-oai-s1.result.jsonl")).unwrap();
    std::fs::write(scene.cwd.path().join("runs.jsonl"), &earlier).unwrap();
    let mut cmd: Vec<&str> = SGLANG.to_vec();
    cmd.extend(["--output-file", "runs.jsonl"]);
    let out = scene.run(&[], &cmd, "captured/sglang-oai-s2", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    assert_eq!(strings(&run["source"]["run"]["added_flags"]), ["--output-details"]);
    let true_tpot = truth("captured/sglang-oai-s2")["true_tpot_ms"].as_f64().unwrap();
    assert!(common::is_truth(run["derived"]["tpot_ms"]["mean"].as_f64().unwrap(), true_tpot, false));
    assert_eq!(check(&run, "output-matches-result-file")["status"], "pass");
    let kept = std::fs::read_to_string(scene.cwd.path().join("runs.jsonl")).unwrap();
    assert!(kept.starts_with(&earlier) && kept.len() > earlier.len(), "the user's file grew and stays");
}

/// --as-given adds nothing: the client (vLLM saving nothing unasked) is read from its output.
#[test]
fn as_given_adds_nothing() {
    let scene = Scene::new();
    let out = scene.run(&["--as-given"], VLLM, "captured/vllm-s2", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    assert_eq!(strings(&run["source"]["run"]["command"]), VLLM);
    assert_eq!(run["source"]["run"]["added_flags"], serde_json::json!([]));
    assert_eq!(run["source"]["parser"], "vllm-bench-serve");
    // Without --percentile-metrics ...,e2el the stand-in, like vLLM, prints no E2E row: the
    // run says TPOT cannot be derived from E2E, and the tool's own TPOT is what is left.
    assert_ne!(run["derived"]["tpot_ms"]["method"], "per-request");
    scene.assert_clean();
}

/// --keep DIR keeps the client's output log and the result file, each run in a folder of its
/// own: a sweep loop with one `--keep results` keeps every step, and overwrites nothing.
#[test]
fn keep_keeps_the_output_and_the_result_file() {
    let scene = Scene::new();
    let keep = tempfile::tempdir().unwrap();
    let dir = keep.path().join("kept");
    let mut runs = Vec::new();
    for sample in ["captured/sglang-oai-s2", "captured/sglang-oai-s1", "captured/sglang-oai-s2"] {
        let out = scene.run(&["--keep", dir.to_str().unwrap()], SGLANG, sample, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        runs.push((sample, only_run(&out)));
    }
    let folders = Scene::listing(&dir);
    assert_eq!(folders.len(), 3, "{folders:?}");
    for (sample, run) in &runs {
        let kept = run["source"]["run"]["kept"].as_str().unwrap();
        let folder = Path::new(kept);
        assert_eq!(folder.parent().unwrap(), dir);
        let name = folder.file_name().unwrap().to_str().unwrap();
        assert!(name.contains("Z-sglang-bench-serving"), "{name}");
        assert_eq!(Scene::listing(folder), ["client-output.log", "sglang.result.jsonl"]);
        let log = std::fs::read_to_string(folder.join("client-output.log")).unwrap();
        let printed = std::fs::read_to_string(common::samples_dir().join(format!("{sample}.stdout.txt"))).unwrap();
        let duration = printed.lines().find(|l| l.starts_with("Benchmark duration")).unwrap();
        assert!(log.contains(duration), "each folder holds its own run's output: {duration}");
        assert_eq!(run["source"]["run"]["result_file"], folder.join("sglang.result.jsonl").to_str().unwrap());
        // The kept path is recorded as it is (it is the user's), not as a placeholder.
        assert!(run["workload"]["command"].as_str().unwrap().contains(kept));
    }
    scene.assert_clean();
}

/// A failed client is exit 6, and what it printed is still reported.
#[test]
fn a_failed_client_is_exit_5_and_its_result_is_reported() {
    let scene = Scene::new();
    let out = scene.run(&[], VLLM, "captured/vllm-s2", &[("FAKE_EXIT", "3")]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let run = only_run(&out);
    assert_eq!(run["source"]["run"]["exit_code"], 3);
    assert_eq!(run["derived"]["tpot_ms"]["method"], "per-request");
    assert!(stderr(&out).contains("the client exited with status 3"), "{}", stderr(&out));
    // Its result file is not deleted: the run did not come out clean.
    assert_eq!(scene.assert_kept(&out), ["client-output.log", "vllm.result.json"]);

    // --error-format json says so as a diagnostic with its exit code.
    let out = scene.run(&["--error-format", "json"], VLLM, "captured/vllm-s2", &[("FAKE_EXIT", "1")]);
    assert_eq!(out.status.code(), Some(6));
    let last = stderr(&out)
        .lines()
        .rev()
        .find(|l| l.starts_with('{') && l.contains("\"client\""))
        .map(String::from)
        .unwrap_or_else(|| panic!("{}", stderr(&out)));
    let diag: Value = serde_json::from_str(&last).unwrap();
    assert_eq!((diag["code"].as_str(), diag["exit_code"].as_i64()), (Some("client"), Some(6)));
    scene.assert_kept(&out);
}

#[test]
fn a_client_that_cannot_start_is_exit_5() {
    let scene = Scene::new();
    let out = scene.run(&[], &["no-such-benchmark-client-here", "--x"], "captured/vllm-s2", &[]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(stderr(&out).contains("could not run it"), "{}", stderr(&out));
    scene.assert_clean();
}

#[test]
fn no_command_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_bench-normalize")).arg("run").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Ctrl-C (SIGINT to bench-normalize) reaches the client; the client's status (130) is kept, the
/// run it printed before is reported, and bench-normalize exits 5.
#[cfg(unix)]
#[test]
fn sigint_reaches_the_client_and_the_run_is_still_reported() {
    let scene = Scene::new();
    let mut child = scene
        .command(&[], VLLM, "captured/vllm-s2", &[("FAKE_WAIT", "1")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the stand-in says it is waiting (its output comes through bench-normalize's stderr).
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("the client never said it was waiting: {seen}");
        }
        seen.push_str(&line);
        if line.contains("fake client: waiting") {
            break;
        }
    }
    // SAFETY: kill(2) of the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let mut stdout = Vec::new();
    std::io::Read::read_to_end(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(6), "{rest}");
    assert!(rest.contains("fake client: interrupted"), "{rest}");
    let doc: Value = serde_json::from_slice(&stdout).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["run"]["exit_code"], 130);
    assert_eq!(run["source"]["run"]["forwarded_signals"], serde_json::json!([libc::SIGINT]));
    assert_eq!(run["derived"]["tpot_ms"]["method"], "per-request");
    let kept = Scene::listing(scene.cwd.path());
    assert!(kept.len() == 1 && kept[0].starts_with("bench-normalize-run."), "{kept:?}");
    assert!(rest.contains("are kept in"), "{rest}");
    assert_eq!(Scene::listing(scene.tmp.path()), Vec::<String>::new());
}

/// The printed block and a result file that is not the same run's: rejected by
/// output-matches-result-file, which quotes the figure.
#[test]
fn output_and_file_that_disagree_are_rejected() {
    let scene = Scene::new();
    let out = scene.run(&[], VLLM, "captured/vllm-s2", &[("FAKE_TAMPER", "1")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run = only_run(&out);
    let c = check(&run, "output-matches-result-file");
    assert_eq!(c["status"], "fail");
    assert!(c["message"].as_str().unwrap().contains("reported.ttft_ms.mean: printed 139.89"), "{c}");
    assert!(stderr(&out).contains("rejected: output-matches-result-file"));
}

/// A command `run` does not know runs as given, with a warning, and its output is read.
#[test]
fn an_unknown_command_runs_as_given() {
    let scene = Scene::new();
    let sample = common::samples_dir().join("captured/vllm-s2.stdout.txt");
    let out = scene.run(&[], &["cat", sample.to_str().unwrap()], "captured/vllm-s2", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    assert_eq!(run["source"]["run"]["client"], Value::Null);
    assert_eq!(run["source"]["run"]["added_flags"], serde_json::json!([]));
    assert_eq!(run["derived"]["tpot_ms"]["method"], "e2e-ttft-tokens");
    assert!(stderr(&out).contains("not a benchmark client `run` knows"));
    scene.assert_clean();
}

/// `--format dstack` in run mode: one object on stdout, the live output on stderr only.
#[test]
fn dstack_format_in_run_mode_writes_one_object() {
    let scene = Scene::new();
    let out = scene.run(&["--format", "dstack"], VLLM, "captured/vllm-s2", &[]);
    let doc = report(&out);
    assert!(doc.is_object(), "{doc}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Serving Benchmark Result"));
    scene.assert_clean();
}

/// Whether a process runs (a zombie waiting for its parent to reap it runs no more).
#[cfg(target_os = "linux")]
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// Wait (a few seconds at most) for a process to stop running.
#[cfg(target_os = "linux")]
fn gone(pid: i32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while running(pid) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

/// The pid a shell wrote into `file` (waited for: written once the background process started).
fn pid_in(file: &Path) -> i32 {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.trim().parse().unwrap_or_else(|_| panic!("no pid in {}: {text:?}", file.display()))
}

/// A client that exits while a process it started in the background holds its output open
/// (`sh -c 'sleep ... & client'`): `run` stops reading shortly after the client exited (not
/// when the pipe closes: it never would), ends the group that holds it, and says so.
#[cfg(target_os = "linux")]
#[test]
fn a_background_process_holding_the_output_does_not_hang_run() {
    let scene = Scene::new();
    let log = common::samples_dir().join("captured/vllm-s2.stdout.txt");
    let pidfile = scene.tmp.path().join("pid");
    let script = format!("sleep 1000 & echo $! > '{}'; exec cat '{}'", pidfile.display(), log.display());
    let started = std::time::Instant::now();
    let out = scene.run(&[], &["sh", "-c", &script], "captured/vllm-s2", &[]);
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    assert_eq!(run["derived"]["tpot_ms"]["method"], "e2e-ttft-tokens");
    let err = stderr(&out);
    assert!(err.contains("kept its output open 2 s later: its process group"), "{err}");
    let sleeper = pid_in(&pidfile);
    assert!(gone(sleeper), "the background sleep (pid {sleeper}) is left running");
    assert!(run["source"]["run"]["forwarded_signals"].as_array().unwrap().contains(&libc::SIGTERM.into()));
}

/// A process the client left running with its output sent elsewhere (a server started in the
/// background with its own log) is not run's to end: left running, and said so.
#[cfg(target_os = "linux")]
#[test]
fn a_background_process_that_let_go_of_the_output_is_left_running() {
    let scene = Scene::new();
    let log = common::samples_dir().join("captured/vllm-s2.stdout.txt");
    let pidfile = scene.tmp.path().join("pid");
    let script =
        format!("sleep 1000 >/dev/null 2>&1 & echo $! > '{}'; exec cat '{}'", pidfile.display(), log.display());
    let started = std::time::Instant::now();
    let out = scene.run(&[], &["sh", "-c", &script], "captured/vllm-s2", &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sleeper = pid_in(&pidfile);
    let was_running = running(sleeper);
    // SAFETY: kill(2) of the sleep this test's shell started.
    unsafe { libc::kill(sleeper, libc::SIGKILL) };
    assert!(was_running, "the user's background process was ended");
    assert!(stderr(&out).contains("are still running in its process group"), "{}", stderr(&out));
}

/// A client that ignores SIGINT and SIGTERM: the first interrupt is passed on, the second ends
/// its whole process group with SIGKILL; bench-normalize exits 6 (the client failed), reports
/// what it printed, and nothing of the client runs afterwards.
#[cfg(target_os = "linux")]
#[test]
fn a_second_interrupt_ends_a_client_that_ignores_signals() {
    let scene = Scene::new();
    let mut child = scene
        .command(&[], VLLM, "captured/vllm-s2", &[("FAKE_IGNORE_SIGNALS", "1")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let wait_for = |err: &mut BufReader<std::process::ChildStderr>, what: &str| -> String {
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            if err.read_line(&mut line).unwrap() == 0 {
                panic!("never said {what:?}: {seen}");
            }
            seen.push_str(&line);
            if line.contains(what) {
                return line;
            }
        }
    };
    let line = wait_for(&mut err, "fake client: waiting, deaf");
    let pid: i32 = line.trim().trim_end_matches(')').rsplit(' ').next().unwrap().parse().unwrap();
    let started = std::time::Instant::now();
    // SAFETY: kill(2) of the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    wait_for(&mut err, "a second one ends it");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(running(pid), "the first interrupt alone ended a client that ignores it");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let mut stdout = Vec::new();
    std::io::Read::read_to_end(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let status = child.wait().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "took {:?}", started.elapsed());
    assert_eq!(status.code(), Some(6), "{rest}");
    assert!(rest.contains("the client was ended by signal 9"), "{rest}");
    assert!(gone(pid), "the client (pid {pid}) still runs");
    let doc: Value = serde_json::from_slice(&stdout).unwrap();
    let src = &doc["runs"][0]["source"]["run"];
    assert_eq!(src["signal"], libc::SIGKILL);
    assert_eq!(src["forwarded_signals"], serde_json::json!([libc::SIGINT, libc::SIGINT, libc::SIGKILL]));
}

/// A client line of 48 MB without a line end is copied through in bounded pieces, in bounded time
/// (searched for a line end in its new bytes only, not from its start on every read).
#[test]
fn a_huge_line_without_an_end_is_copied_in_bounded_time() {
    let scene = Scene::new();
    let log = common::samples_dir().join("captured/vllm-s2.stdout.txt");
    let script = format!("head -c 48000000 /dev/zero | tr '\\0' x; echo; cat '{}'", log.display());
    let started = std::time::Instant::now();
    let out = scene.run(&[], &["sh", "-c", &script], "captured/vllm-s2", &[]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr[out.stderr.len() - 2000..]));
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    assert!(out.stderr.iter().filter(|b| **b == b'x').count() >= 48_000_000, "the long line is shown whole");
    let run = only_run(&out);
    assert_eq!(run["verdict"], "accepted");
}

/// Credentials given to the client (flag values, headers, variables, inside a shell's `-c`
/// string) are recorded in no output format and no diagnostic, and neither is the private
/// temporary directory.
#[test]
fn no_credential_or_private_path_is_recorded_in_any_format() {
    let scene = Scene::new();
    let secrets = ["k3y0123456789abcdefX", "t0k3n0123456789abcdefY", "hf0123456789abcdefghZ"];
    let mut cmd: Vec<String> = vec!["env".into(), format!("HF_TOKEN={}", secrets[2])];
    cmd.extend(VLLM.iter().map(|s| s.to_string()));
    cmd.extend([
        "--api-key".into(),
        secrets[0].into(),
        "--header".into(),
        format!("Authorization: Bearer {}", secrets[1]),
    ]);
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let private = scene.tmp.path().to_str().unwrap().to_string();
    type Env<'a> = &'a [(&'a str, &'a str)];
    let mut cases: Vec<(Vec<&str>, Env)> = Vec::new();
    for format in ["json", "jsonl", "csv", "table", "dstack", "dstack-e2e", "llmd-br"] {
        cases.push((vec!["--format", format], &[]));
        // A failed client too: its diagnostic quotes the command.
        cases.push((vec!["--format", format, "--error-format", "json"], &[("FAKE_EXIT", "3")]));
    }
    cases.push((vec!["--explain"], &[]));
    for (opts, env) in cases {
        let out = scene.run(&opts, &cmd, "captured/vllm-s2", env);
        let (stdout, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
        for s in secrets {
            assert!(!stdout.contains(s) && !err.contains(s), "{opts:?} {env:?} records {s}:\n{stdout}\n{err}");
        }
        assert!(!stdout.contains(&private) && !err.contains(&private), "{opts:?}: {stdout}\n{err}");
        // (A failed run's result file kept in the working directory: not this test's matter.)
        for e in std::fs::read_dir(scene.cwd.path()).unwrap() {
            let _ = std::fs::remove_dir_all(e.unwrap().path());
        }
    }
    // What dstack stores holds the command with its credentials masked, which dstack accepts.
    let out = scene.run(&["--format", "dstack"], &cmd, "captured/vllm-s2", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = report(&out);
    let command = doc["command"].as_str().unwrap();
    assert!(command.contains("--api-key REDACTED") && command.contains("'Authorization: REDACTED'"), "{command}");
    assert!(command.starts_with("env HF_TOKEN=REDACTED vllm bench serve"), "{command}");
    assert!(command.contains("--result-dir '<run-dir>'"), "{command}");
}

/// The client behind the wrappers agents put in front of it, and inside a shell's `-c` string
/// of one simple command: recognised, the flags added where the client reads them, the run read
/// with its result file.
#[test]
fn the_client_is_recognised_behind_wrappers() {
    let scene = Scene::new();
    let fake_vllm = fake_dir().join("bin/vllm");
    let quoted: Vec<String> = VLLM.iter().map(|w| w.to_string()).collect();
    let line = quoted.join(" ");
    let with = |prefix: &[&str]| -> Vec<String> {
        prefix.iter().map(|s| s.to_string()).chain(quoted.iter().cloned()).collect::<Vec<String>>()
    };
    let mut cases: Vec<Vec<String>> = vec![
        with(&["timeout", "600"]),
        with(&["timeout", "-k", "10", "600"]),
        with(&["nohup"]),
        with(&["stdbuf", "-oL", "-eL"]),
        with(&["nice", "-n", "5"]),
        with(&["env", "-u", "NOTHING_HERE", "A=1"]),
        with(&["time", "-p"]),
        with(&["taskset", "-c", "0"]),
        with(&["timeout", "600", "nohup", "stdbuf", "-oL", "env", "A=1"]),
        vec!["bash".into(), "-c".into(), format!("exec {line}")],
        vec!["sh".into(), "-c".into(), format!("A=1 timeout 600 {line}")],
        vec!["bash".into(), "-ec".into(), format!("time -p {line}")],
    ];
    let mut python: Vec<String> = vec!["python3".into(), fake_vllm.to_str().unwrap().into()];
    python.extend(quoted[1..].iter().cloned());
    cases.push(python);
    for cmd in cases {
        let words: Vec<&str> = cmd.iter().map(String::as_str).collect();
        if !words.iter().take(1).all(|w| which(w)) {
            continue;
        }
        let out = scene.run(&[], &words, "captured/vllm-s2", &[]);
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {}", stderr(&out));
        let run = only_run(&out);
        let src = &run["source"]["run"];
        assert_eq!(src["client"], "vllm-bench-serve", "{cmd:?}");
        assert_eq!(strings(&src["added_flags"]).len(), 5, "{cmd:?}");
        assert_eq!(run["derived"]["tpot_ms"]["method"], "per-request", "{cmd:?}");
        assert_eq!(check(&run, "output-matches-result-file")["status"], "pass", "{cmd:?}");
        assert_eq!(src["tool_version"], "0.33.0", "{cmd:?}: {}", src["version_from"]);
        let command = strings(&src["command"]);
        if cmd[0].ends_with("sh") {
            // The flags go inside the `-c` string, quoted as the shell reads them back.
            assert_eq!(command.len(), 3, "{command:?}");
            assert!(command[2].contains("--save-result --save-detailed --result-dir <run-dir>"), "{command:?}");
        } else {
            assert_eq!(command[..cmd.len()], cmd[..], "the user's words come first, unchanged");
            assert!(command.contains(&"--save-result".to_string()));
        }
        scene.assert_clean();
    }
    // SGLang behind wrappers too.
    let mut cmd = vec!["timeout", "600", "nice"];
    cmd.extend(SGLANG);
    let out = scene.run(&[], &cmd, "captured/sglang-oai-s2", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = only_run(&out);
    assert_eq!(run["source"]["run"]["client"], "sglang-bench-serving");
    assert_eq!(run["derived"]["tpot_ms"]["method"], "per-request");
    scene.assert_clean();
}

/// Whether a program is on PATH.
fn which(program: &str) -> bool {
    program.contains('/')
        || std::env::split_paths(&std::env::var_os("PATH").unwrap()).any(|d| d.join(program).is_file())
}

/// `run -f dstack` writes dstack's whole `benchmark` object or nothing: a command whose client it
/// cannot see (a shell string of several commands) is exit 5, with a message saying why and
/// what to give instead, never the bare `metrics` object.
#[test]
fn dstack_in_run_mode_is_the_whole_object_or_nothing() {
    let scene = Scene::new();
    let line = VLLM.join(" ");
    let script = format!("echo starting; {line}");
    let out = scene.run(&["--format", "dstack"], &["bash", "-c", &script], "captured/vllm-s2", &[]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    let err = stderr(&out);
    assert!(err.contains("not a benchmark client `run` knows"), "{err}");
    assert!(err.contains("tool_version: the run does not state it"), "{err}");
    assert!(err.contains("`run` did not recognise the client"), "{err}");
    // Nothing was added: the stand-in, like vLLM unasked, saved no result file; nothing is left.
    scene.assert_clean();
}

/// A client whose version cannot be read through its interpreter (a shell shim in front of it):
/// asked of the client itself; when that fails too, `-f dstack` is exit 5 naming each lookup
/// that failed and `--tool-version`, the result file is kept, and `--tool-version` gives the
/// whole object.
#[test]
fn the_version_is_asked_of_the_client_and_can_be_given() {
    let scene = Scene::new();
    let shims = tempfile::tempdir().unwrap();
    let shim = shims.path().join("vllm");
    std::fs::write(&shim, format!("#!/bin/sh\nexec python3 '{}' \"$@\"\n", fake_dir().join("bin/vllm").display()))
        .unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut cmd: Vec<&str> = VLLM.to_vec();
    let shim_path = shim.to_str().unwrap().to_string();
    cmd[0] = &shim_path;
    // No PYTHONPATH: the package's metadata is not where any interpreter looks.
    let env = [("PYTHONPATH", "")];
    let out = scene.run(&["--format", "dstack"], &cmd, "captured/vllm-s2", &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = report(&out);
    assert_eq!(doc["tool_version"], "0.33.0");
    scene.assert_clean();

    let mut env = env.to_vec();
    env.push(("FAKE_NO_VERSION", "1"));
    let out = scene.run(&["--format", "dstack"], &cmd, "captured/vllm-s2", &env);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(err.contains("no Python interpreter found") && err.contains("`vllm --version`: exit status 1"), "{err}");
    assert!(err.contains("--tool-version VERSION"), "{err}");
    assert!(
        !err.contains("run the benchmark as `bench-normalize run"),
        "the remedy is not the command just run: {err}"
    );
    assert_eq!(scene.assert_kept(&out), ["client-output.log", "vllm.result.json"]);

    let out = scene.run(&["--format", "dstack", "--tool-version", "0.33.0"], &cmd, "captured/vllm-s2", &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = report(&out);
    assert_eq!(doc["tool_version"], "0.33.0");
    let truth = common::read_json(&common::samples_dir().join("captured/vllm-s2.truth.json"));
    let t = truth["measured_by_emulator"]["mean_tpot_ms"].as_f64().unwrap();
    let tpot = doc["metrics"]["tpot_ms"]["mean"].as_f64().unwrap();
    assert!(common::is_truth(tpot, t, false), "TPOT {tpot} vs the truth's {t}");
    scene.assert_clean();
}

/// One rule for every format a consumer stores: a run whose client failed is not written
/// (exit 6, said on stderr), whatever its figures; its result file is kept.
#[test]
fn a_failed_clients_run_is_written_in_no_format_a_consumer_stores() {
    let scene = Scene::new();
    for format in ["dstack", "dstack-e2e", "llmd-br"] {
        let out = scene.run(&["--format", format], VLLM, "captured/vllm-s2", &[("FAKE_EXIT", "3")]);
        assert_eq!(out.status.code(), Some(6), "{format}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{format}: {}", String::from_utf8_lossy(&out.stdout));
        let err = stderr(&out);
        assert!(err.contains(&format!("{format}: not written: the client failed (exit status 3)")), "{err}");
        scene.assert_kept(&out);
    }
    // The report itself still says what the failed client printed.
    let out = scene.run(&["--format", "json"], VLLM, "captured/vllm-s2", &[("FAKE_EXIT", "3")]);
    assert_eq!(out.status.code(), Some(6));
    assert_eq!(only_run(&out)["derived"]["tpot_ms"]["method"], "per-request");
    scene.assert_kept(&out);
}

/// A client's printed block and its result file given as two files to the plain command are
/// read as `run` reads them: one run with the file's exact figures, the printed ones checked
/// against them; a pair from different runs is refused (exit 1, the figures that disagree named).
#[test]
fn a_log_and_its_result_file_given_as_two_files_are_one_run() {
    let s = common::samples_dir().join("captured");
    let path = |name: &str| s.join(name).to_str().unwrap().to_string();
    let normalize =
        |files: &[String]| Command::new(env!("CARGO_BIN_EXE_bench-normalize")).args(files).output().unwrap();
    for (log, file) in
        [("vllm-s2.stdout.txt", "vllm-s2.result.json"), ("sglang-oai-s2.stdout.txt", "sglang-oai-s2.result.jsonl")]
    {
        for files in [[path(log), path(file)], [path(file), path(log)]] {
            let out = normalize(&files);
            assert_eq!(out.status.code(), Some(0), "{files:?}: {}", stderr(&out));
            let run = only_run(&out);
            assert_eq!(run["derived"]["tpot_ms"]["method"], "per-request", "{files:?}");
            assert_eq!(check(&run, "output-matches-result-file")["status"], "pass");
            let sample = format!("captured/{}", log.trim_end_matches(".stdout.txt"));
            let true_tpot = truth(&sample)["true_tpot_ms"].as_f64().unwrap();
            assert!(common::is_truth(run["derived"]["tpot_ms"]["mean"].as_f64().unwrap(), true_tpot, false));
        }
    }
    let out = normalize(&[path("vllm-s2.stdout.txt"), path("vllm-s1.result.json")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run = only_run(&out);
    assert_eq!(check(&run, "output-matches-result-file")["status"], "fail");
    assert!(stderr(&out).contains("not the same run's figures"), "{}", stderr(&out));
    // Two logs, or two result files, are two runs as before.
    for files in [
        [path("vllm-s2.stdout.txt"), path("vllm-s1.stdout.txt")],
        [path("vllm-s2.result.json"), path("vllm-s1.result.json")],
    ] {
        let out = normalize(&files);
        assert_eq!(report(&out)["runs"].as_array().unwrap().len(), 2, "{files:?}");
    }
}

/// The agent's loop (examples/agent_loop.sh, docs/agents.md) as an agent runs it: the object is
/// stored only when accepted; a contradiction (1), a figure dstack needs that cannot be had (5)
/// and a failed client (6) store nothing, and the diagnostics file says why.
#[test]
fn the_agent_loop_stores_only_what_is_fit_to_store() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agent_loop.sh");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_bench-normalize")).parent().unwrap().to_path_buf();
    let cases: [(&[(&str, &str)], i32); 4] = [
        (&[], 0),
        (&[("FAKE_TAMPER", "1")], 1),
        (&[("FAKE_NO_VERSION", "1"), ("PYTHONPATH", "")], 5),
        (&[("FAKE_EXIT", "3")], 6),
    ];
    for (env, want) in cases {
        let scene = Scene::new();
        let out_file = scene.cwd.path().join("benchmark.json");
        let cmd = scene.command(&[], VLLM, "captured/vllm-s2", env);
        // The script runs `bench-normalize run ...` itself: the same environment, the script
        // and the executable's folder first on PATH.
        let path = std::env::join_paths(
            [bin_dir.clone(), fake_dir().join("bin")]
                .into_iter()
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        let mut args: Vec<String> =
            vec![script.to_string_lossy().into_owned(), out_file.to_string_lossy().into_owned(), "--".into()];
        args.extend(VLLM.iter().map(|s| s.to_string()));
        let mut sh = Command::new("bash");
        sh.args(&args).current_dir(scene.cwd.path()).env("PATH", path);
        for (k, v) in cmd.get_envs() {
            if k != "PATH" {
                match v {
                    Some(v) => sh.env(k, v),
                    None => sh.env_remove(k),
                };
            }
        }
        let o = sh.output().unwrap();
        let said = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(want), "{env:?}: {said}\n{}", stderr(&o));
        let diagnostics =
            std::fs::read_to_string(scene.cwd.path().join("benchmark.json.diagnostics.jsonl")).unwrap_or_default();
        if want == 0 {
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
            let truth = common::read_json(&common::samples_dir().join("captured/vllm-s2.truth.json"));
            let t = truth["measured_by_emulator"]["mean_tpot_ms"].as_f64().unwrap();
            let tpot = doc["metrics"]["tpot_ms"]["mean"].as_f64().unwrap();
            assert!(common::is_truth(tpot, t, false), "TPOT {tpot} vs the truth's {t}: {doc}");
            assert!(said.starts_with("stored: "), "{said}");
        } else {
            assert!(!out_file.exists(), "{env:?}: stored though exit {want}");
            assert!(said.starts_with("not stored: "), "{said}");
            // Every outcome but the client's own failure is said in the diagnostics file.
            if want != 6 {
                assert!(
                    diagnostics.lines().any(|l| serde_json::from_str::<Value>(l).is_ok_and(|d| d["exit_code"] == want)),
                    "{env:?}: {diagnostics}"
                );
            }
        }
        // Nothing but what the loop keeps is left behind: the object, the diagnostics, and a
        // failed run's kept result file.
        for name in Scene::listing(scene.cwd.path()) {
            assert!(
                name == "benchmark.json"
                    || name == "benchmark.json.diagnostics.jsonl"
                    || name.starts_with("bench-normalize-run."),
                "{env:?}: left {name}"
            );
        }
    }
}

/// The report `run` writes is a report like any other: `check` reads it back (its `source.run`
/// included) with the same verdict and figures, and a hand-edited `source.run` of the wrong shape
/// is refused.
#[test]
fn the_report_run_writes_is_read_back() {
    let scene = Scene::new();
    let out = scene.run(&["-f", "json"], VLLM, "captured/vllm-s2", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = scene.tmp.path().join("run.json");
    std::fs::write(&path, &out.stdout).unwrap();
    let back = Command::new(env!("CARGO_BIN_EXE_bench-normalize")).arg("check").arg(&path).output().unwrap();
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
    let (a, b) = (only_run(&out), only_run(&back));
    assert_eq!(a["source"]["run"], b["source"]["run"]);
    assert_eq!(a["derived"]["tpot_ms"]["mean"], b["derived"]["tpot_ms"]["mean"]);
    let mut doc = report(&out);
    doc["runs"][0]["source"]["run"]["command"] = Value::String("vllm bench serve".into());
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let bad = Command::new(env!("CARGO_BIN_EXE_bench-normalize")).arg("check").arg(&path).output().unwrap();
    assert_eq!(bad.status.code(), Some(3), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("source.run.command"), "{}", stderr(&bad));
}
