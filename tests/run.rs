//! `bench-normalize run -- <client command>` against a stand-in client (tests/fake-client: a
//! `vllm` shim and a `sglang.bench_serving` module that print a captured sample and write its
//! result file only when given the real client's flags): what `run` adds, shows, keeps and
//! removes, the exit status, signals, and that nothing is left in the working directory.

mod common;

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
            .env_remove("FAKE_TAMPER");
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
    assert!(added[3].starts_with("--result-dir ") && added[3].contains("bench-normalize-run."), "{added:?}");
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

/// --keep DIR keeps the client's output log and the result file.
#[test]
fn keep_keeps_the_output_and_the_result_file() {
    let scene = Scene::new();
    let keep = tempfile::tempdir().unwrap();
    let dir = keep.path().join("kept");
    let out = scene.run(&["--keep", dir.to_str().unwrap()], SGLANG, "captured/sglang-oai-s2", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(Scene::listing(&dir), ["client-output.log", "sglang.result.jsonl"]);
    let log = std::fs::read_to_string(dir.join("client-output.log")).unwrap();
    assert!(log.contains("Serving Benchmark Result"));
    let run = only_run(&out);
    assert_eq!(run["source"]["run"]["kept"], dir.to_str().unwrap());
    assert_eq!(run["source"]["run"]["result_file"], dir.join("sglang.result.jsonl").to_str().unwrap());
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
    scene.assert_clean();

    // --error-format json says so as a diagnostic with its exit code.
    let out = scene.run(&["--error-format", "json"], VLLM, "captured/vllm-s2", &[("FAKE_EXIT", "1")]);
    assert_eq!(out.status.code(), Some(6));
    let last = stderr(&out)
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .map(String::from)
        .unwrap_or_else(|| panic!("{}", stderr(&out)));
    let diag: Value = serde_json::from_str(&last).unwrap();
    assert_eq!((diag["code"].as_str(), diag["exit_code"].as_i64()), (Some("client"), Some(6)));
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
    scene.assert_clean();
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
