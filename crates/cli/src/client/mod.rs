//! `bench-normalize run -- <client command>`: run a benchmark client with the flags exact figures
//! need, show its output live, and read what it printed and the result file it wrote as one run.
//!
//! * [`plan`] recognises the client from its command line (the tables in `clients.toml`, [`CLIENTS`]) and adds the
//!   flags the user did not set (the user's own always win);
//! * [`run`] runs it in a private directory: its output goes to stderr line by line as it comes
//!   (and to a log), signals reach it, its exit status is kept; then the result file it wrote is
//!   found ([`Expect`]) and read with the printed block as one run ([`combine`]), the printed
//!   figures cross-checked against the file's.
//!
//! Nothing is left in the working directory: the flags added point into a private temporary
//! directory, removed at the end unless `--keep DIR` names where to keep it.
//!
//! The parts: `table` (the client tables, data in `clients.toml`), `recognise` (which client a
//! command runs), `flags` (the flags added: [`Plan`]), `process` (running it), `result_file`
//! (which result file it wrote), `combine` (its output and result file as one run).

mod combine;
mod flags;
mod process;
mod recognise;
mod redact;
mod result_file;
mod table;

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

pub use combine::{AGREEMENT_RULE, combine};
pub use flags::{Plan, plan, shell_join};
pub use process::rfc3339;
pub use redact::{redact_text, redact_words};
pub use result_file::Expect;
pub use table::CLIENTS;

use bench_normalize_core::report::{ClientRun, Figure, Note};
use bench_normalize_core::vocabulary::workload;
use bench_normalize_core::{Error, Options, Policy, Run};
use combine::settle_verdict;
use process::{client_version, launch};
use recognise::file_name;

/// What `run` gives back: the runs (usually one), problems met while reading, and the client's
/// failure, if it failed.
#[derive(Debug)]
pub struct Outcome {
    pub runs: Vec<Run>,
    pub diagnostics: Vec<Error>,
    pub warnings: Vec<String>,
    pub failed: Option<Error>,
    /// The private directory and what becomes of it ([`Outcome::settle`]).
    pub private: Private,
}

/// The private directory the client wrote into: a temporary one (removed when this is dropped,
/// unless [`Outcome::settle`] keeps it), or the folder `--keep` made.
#[derive(Debug, Default)]
pub struct Private {
    temp: Option<tempfile::TempDir>,
    /// The client wrote its result file into it.
    holds_result: bool,
}

impl Outcome {
    /// After the report: a temporary private directory that holds the client's result file is
    /// not removed unless the run came out `clean` (written, accepted, the client succeeded:
    /// exit 0 or 7); it is moved into the working directory instead (`bench-normalize-run.XXXXXX`),
    /// since a benchmark that can take hours must not be lost to a run not written. Where it is
    /// now, to be said.
    pub fn settle(&mut self, clean: bool) -> Option<String> {
        if clean || !self.private.holds_result {
            return None;
        }
        let temp = self.private.temp.take()?;
        let moved = std::env::current_dir().and_then(|cwd| {
            let target = tempfile::Builder::new().prefix("bench-normalize-run.").tempdir_in(cwd)?.keep();
            move_tree(temp.path(), &target).map(|_| target)
        });
        Some(match moved {
            Ok(target) => format!(
                "the client's result file and output are kept in {} (the run was not written, or not accepted, or \
                 the client failed: nothing it wrote is deleted)",
                target.display()
            ),
            Err(e) => {
                let left = temp.keep();
                format!(
                    "the client's result file and output are left in {} (they could not be moved to the working \
                     directory: {e})",
                    left.display()
                )
            }
        })
    }
}

/// Move every entry of `from` into `to` (renamed, or copied and removed across file systems).
fn move_tree(from: &Path, to: &Path) -> io::Result<()> {
    for e in fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if fs::rename(e.path(), &target).is_err() {
            if e.file_type()?.is_dir() {
                fs::create_dir_all(&target)?;
                move_tree(&e.path(), &target)?;
                fs::remove_dir(e.path())?;
            } else {
                fs::copy(e.path(), &target)?;
                fs::remove_file(e.path())?;
            }
        }
    }
    Ok(())
}

/// The name of the client's output log in the private directory.
pub const OUTPUT_LOG: &str = "client-output.log";

/// How `run` runs a client.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Keep the client's output and result file under this folder (created if missing), in a
    /// folder of their own per run ([`keep_folder`]), instead of a temporary one removed at the end.
    pub keep: Option<PathBuf>,
    /// Run the command exactly as given, adding nothing (a client too old for a flag `run` adds).
    pub as_given: bool,
    /// The client's version as the user states it (`--tool-version`): not asked.
    pub tool_version: Option<String>,
}

/// A folder of its own for this run under `--keep DIR`: `DIR/<UTC date and time>-<client>`
/// (`20261206T164500Z-vllm-bench-serve`), `-2`, `-3`... when taken. Made here, so that two runs
/// never share one, and a sweep loop with one `--keep results` keeps every step.
pub fn keep_folder(dir: &Path, client: &str) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let stamp: String =
        rfc3339(std::time::SystemTime::now()).chars().take(19).filter(|c| c.is_ascii_digit() || *c == 'T').collect();
    for n in 1..10_000 {
        let name = if n == 1 { format!("{stamp}Z-{client}") } else { format!("{stamp}Z-{client}-{n}") };
        let path = dir.join(name);
        match fs::create_dir(&path) {
            Ok(()) => return std::path::absolute(&path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!("no free folder name under {}", dir.display())))
}

/// Run `given` (a benchmark client command), showing its output on `live`, and read what it
/// printed and the result file it wrote as one run.
pub fn run(
    given: &[String],
    settings: &Settings,
    opts: &Options,
    live: Box<dyn Write + Send>,
) -> Result<Outcome, Error> {
    if given.is_empty() {
        return Err(Error::Usage("no client command after `--`: bench-normalize run -- vllm bench serve ...".into()));
    }
    let io_err = |what: &str, source| Error::Io { input: what.to_string(), source };
    let mut temp = None;
    let keep = settings.keep.as_deref();
    let private: PathBuf = match keep {
        Some(dir) => {
            let client = plan(given, dir).client.map_or("run", |c| c.id.as_str());
            keep_folder(dir, client).map_err(|e| io_err(&dir.display().to_string(), e))?
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("bench-normalize-run.")
                .tempdir()
                .map_err(|e| io_err("a temporary directory", e))?;
            let path = t.path().to_path_buf();
            temp = Some(t);
            path
        }
    };
    let record = Record { private: private.display().to_string(), kept: keep.is_some() };
    let shown = shell_join(&record.words(given));
    let mut plan = plan(given, &private);
    if settings.as_given {
        plan.command = plan.given.clone();
        plan.added.clear();
        if let Some(found) = recognise::recognise(&plan.given) {
            plan.words = found.words;
        }
    }
    let mut warnings = Vec::new();
    if plan.client.is_none() {
        warnings.push(record.text(&format!(
            "{}: not a benchmark client `run` knows ({}), nor one behind a wrapper it looks through (timeout, \
             nohup, env, uv run, ...) or in a shell's -c string that is one simple command of literal words: run as \
             given, no flags added, and the client's tool and version are not known",
            file_name(&given[0]),
            CLIENTS.iter().map(|c| c.tool.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    let cwd = std::env::current_dir().map_err(|e| io_err(".", e))?;
    let expect = Expect::new(plan.expected(&cwd));
    // The version is asked while the benchmark runs (unless the user stated it).
    let version = plan.client.filter(|_| settings.tool_version.is_none()).map(|c| {
        let plan = plan.clone();
        std::thread::spawn(move || client_version(c, &plan))
    });
    let log_path = private.join(OUTPUT_LOG);
    let log = File::create(&log_path).map_err(|e| io_err(&log_path.display().to_string(), e))?;
    let ended = launch(&plan.command, log, live);
    let (mut tool_version, mut version_from) = match (&settings.tool_version, version.map(|h| h.join())) {
        (Some(v), _) => (Some(v.clone()), "given with --tool-version".to_string()),
        (None, Some(Ok(v))) => v,
        _ => (None, "unknown: the command is no known client".to_string()),
    };
    let private_dir = Private { temp, holds_result: false };
    let ended = match ended {
        Ok(e) => e,
        Err(e) => {
            let failed = Error::Client { command: shown, message: format!("could not run it: {e}") };
            return Ok(Outcome {
                runs: Vec::new(),
                diagnostics: Vec::new(),
                warnings,
                failed: Some(failed),
                private: private_dir,
            });
        }
    };
    warnings.extend(ended.notes.iter().cloned());
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&ended.status);
    #[cfg(not(unix))]
    let signal = None;
    let failed = (!ended.status.success()).then(|| Error::Client {
        command: shown.clone(),
        message: match (ended.status.code(), signal) {
            (Some(c), _) => format!("the client exited with status {c}; what it printed is reported"),
            (None, Some(s)) => format!("the client was ended by signal {s}; what it printed is reported"),
            _ => "the client failed".into(),
        },
    });

    // What it printed, and the result file it wrote.
    let keeping = keep.is_some();
    let shown_name = |p: &Path| -> String {
        match p.strip_prefix(&private) {
            Ok(rel) if !keeping => rel.display().to_string(),
            _ => p.display().to_string(),
        }
    };
    let mut diagnostics = Vec::new();
    let log_name = shown_name(&log_path);
    let (printed, log_error) = read_runs(&log_path, 0, &log_name, opts);
    let (result_file, filed, file_error) = match expect.found() {
        Ok((path, offset)) => {
            let name = shown_name(&path);
            let (runs, err) = read_runs(&path, offset, &name, opts);
            (Some(path), runs, err)
        }
        Err(why) => {
            if plan.client.is_some() {
                warnings.push(record.text(&why));
            }
            (None, Vec::new(), None)
        }
    };
    if printed.is_empty() && filed.is_empty() {
        diagnostics.extend(log_error);
    }
    // The version the result file states, when it could not be asked.
    if let (None, Some(client), Some(path)) = (&tool_version, plan.client, &result_file)
        && let Some(key) = &client.version_key
    {
        match version_in_file(path, key) {
            Some(v) => {
                tool_version = Some(v);
                version_from = format!("the result file's {key} ({version_from})");
            }
            None => version_from = format!("{version_from}; the result file states no {key}"),
        }
    }
    if let (None, Some(client)) = (&tool_version, plan.client) {
        warnings.push(record.text(&format!(
            "the version of {} is unknown ({}): give it with --tool-version VERSION (dstack's benchmark object \
             needs it)",
            client.tool,
            version_from.trim_start_matches("unknown: ")
        )));
    }
    let holds_result = result_file.as_deref().is_some_and(|p| p.starts_with(&private));
    diagnostics.extend(file_error);
    let info = ClientRun {
        client: plan.client.map(|c| c.id.to_string()),
        given: record.words(&plan.given),
        command: record.words(&plan.command),
        added_flags: plan.added.iter().map(|a| record.text(a)).collect(),
        tool_version,
        version_from: record.text(&version_from),
        started: rfc3339(ended.started),
        ended: rfc3339(ended.ended),
        duration_s: (ended.ended.duration_since(ended.started).unwrap_or_default().as_secs_f64() * 1000.0).round()
            / 1000.0,
        exit_code: ended.status.code(),
        signal,
        forwarded_signals: ended.forwarded.clone(),
        result_file: result_file.as_deref().map(shown_name),
        kept: keeping.then(|| private.display().to_string()),
    };
    let mut runs = combine(printed, filed, &opts.policy);
    for run in &mut runs {
        annotate(run, &plan, &info, &opts.policy);
    }
    Ok(Outcome { runs, diagnostics, warnings, failed, private: Private { holds_result, ..private_dir } })
}

/// The text at `key` (a dotted path) of a JSON result file (its first document, for JSON
/// Lines), when it is a version.
fn version_in_file(path: &Path, key: &str) -> Option<String> {
    let mut text = String::new();
    File::open(path).ok()?.take(64 << 20).read_to_string(&mut text).ok()?;
    let doc: serde_json::Value = serde_json::Deserializer::from_str(&text).into_iter().next()?.ok()?;
    let value = key.split('.').try_fold(&doc, |v, k| v.get(k))?;
    process::version_in(value.as_str()?, None)
}

/// The placeholder for the private temporary directory in what is recorded: its path means
/// nothing once it is removed, and is nobody's business.
pub const RUN_DIR: &str = "<run-dir>";

/// How a command and what is said about it are recorded: credentials masked ([`redact_words`]),
/// the private temporary directory named [`RUN_DIR`] (a kept one by its path).
struct Record {
    private: String,
    kept: bool,
}

impl Record {
    fn text(&self, text: &str) -> String {
        let text = redact_text(text);
        if self.kept { text } else { text.replace(&self.private, RUN_DIR) }
    }

    fn words(&self, words: &[String]) -> Vec<String> {
        redact_words(words).into_iter().map(|w| if self.kept { w } else { w.replace(&self.private, RUN_DIR) }).collect()
    }
}

/// Every run of a file (from `offset`: the part a client appended), or the error that gave none.
fn read_runs(path: &Path, offset: u64, name: &str, opts: &Options) -> (Vec<Run>, Option<Error>) {
    let mut runs = Vec::new();
    let mut sink = |r: Run| {
        runs.push(r);
        Ok(())
    };
    let result = match File::open(path) {
        Err(source) => Err(Error::Io { input: name.to_string(), source }),
        Ok(f) if offset == 0 => bench_normalize_core::normalize_file(f, name, opts, &mut sink),
        Ok(f) => {
            use std::io::Seek;
            let mut f = f;
            let mut bytes = Vec::new();
            match f.seek(io::SeekFrom::Start(offset)).and_then(|_| f.read_to_end(&mut bytes)) {
                Ok(_) => bench_normalize_core::normalize(&bytes[..], name, opts, &mut sink),
                Err(source) => Err(Error::Io { input: name.to_string(), source }),
            }
        }
    };
    (runs, result.err())
}

/// A run of `run` mode: how the client ran (`source.run`), and the figures dstack's report takes
/// from the command (`workload.benchmark_tool`, `benchmark_tool_version`, `command`, and the
/// workload flags the output did not print), then derived and checked again when the workload
/// gained a figure (the concurrency cap bounds the capacity checks).
fn annotate(run: &mut Run, plan: &Plan, info: &ClientRun, policy: &Policy) {
    let mut changed = false;
    if let Some(client) = plan.client {
        let set_text = |run: &mut Run, key: &str, v: &str| {
            run.workload.set(key, &format!("workload.{key}"), Figure::Text(v.to_string()));
        };
        set_text(run, "benchmark_tool", &client.tool);
        if let Some(v) = &info.tool_version {
            set_text(run, "benchmark_tool_version", v);
        }
        set_text(run, "command", &shell_join(&info.command));
        let random = plan.flag("--dataset-name").is_some_and(|d| d == "random");
        let lengths = if random { &client.random_lengths[..] } else { &[] };
        for (flag, path) in client.workload.iter().chain(lengths) {
            let rel = &path["workload.".len()..];
            let Some(value) = plan.flag(flag) else { continue };
            if run.workload.get(rel).is_some() {
                continue;
            }
            let kind = bench_normalize_core::vocabulary::FIELDS.iter().find(|f| f.path == *path).map(|f| f.kind);
            let figure = match kind {
                Some(bench_normalize_core::vocabulary::Kind::Count) => value.parse::<u64>().ok().map(Figure::Count),
                Some(bench_normalize_core::vocabulary::Kind::Number) => {
                    value.parse::<f64>().ok().filter(|v| v.is_finite()).map(Figure::Number)
                }
                _ => Some(Figure::Text(value.to_string())),
            };
            if let Some(figure) = figure {
                run.workload.set(rel, path, figure);
                run.notes.push(Note {
                    code: "workload-from-command".into(),
                    message: format!("{path} is {value}, from the command line's {flag}"),
                    line: None,
                });
                changed = true;
            }
        }
    }
    if !run.has(workload::API)
        && let Some((api, from)) = api_of(plan, run)
    {
        run.set(workload::API, Figure::Text(api.into()));
        run.notes.push(Note {
            code: "workload-from-command".into(),
            message: format!("workload.api is {api}, from {from}"),
            line: None,
        });
    }
    run.source.run = Some(info.clone());
    if changed {
        let agreement = run.checks.iter().find(|c| c.id == AGREEMENT_RULE).cloned();
        bench_normalize_core::pipeline::close(run, policy, bench_normalize_core::pipeline::Claims::None);
        run.checks.extend(agreement);
        settle_verdict(run, policy);
    }
}

/// The OpenAI API the client called (dstack's `workload.api`: `chat_completions` or
/// `completions`), from the endpoint or endpoint type on the command line, else the backend
/// (vLLM's and SGLang's `openai`/`sglang-oai`/`vllm` backends call completions, their `*-chat`
/// ones chat completions; SGLang's native `sglang` backend calls neither); and what said so.
fn api_of(plan: &Plan, run: &Run) -> Option<(&'static str, String)> {
    let api = |text: &str| -> Option<&'static str> {
        let t = text.trim().trim_end_matches('/');
        if t.contains("chat") {
            Some("chat_completions")
        } else if t.ends_with("completions") || matches!(t, "openai" | "vllm" | "sglang-oai" | "lmdeploy" | "tgi") {
            Some("completions")
        } else {
            None
        }
    };
    for flag in ["--endpoint", "--endpoint-type"] {
        if let Some(v) = plan.flag(flag) {
            return api(v).map(|a| (a, format!("the command line's {flag} {v}")));
        }
    }
    let backend = run.text(workload::BACKEND).map(String::from).or_else(|| plan.flag("--backend").map(String::from))?;
    api(&backend).map(|a| (a, format!("the backend {backend}")))
}
