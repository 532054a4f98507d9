//! `bench-normalize run -- <client command>`: run a benchmark client with the flags exact figures
//! need, show its output live, and read what it printed and the result file it wrote as one run.
//!
//! * [`plan`] recognises the client from its command line (the table [`CLIENTS`]) and adds the
//!   flags the user did not set (the user's own always win);
//! * [`run`] runs it in a private directory: its output goes to stderr line by line as it comes
//!   (and to a log), signals reach it, its exit status is kept; then the result file it wrote is
//!   found ([`Expect`]) and read with the printed block as one run ([`combine`]), the printed
//!   figures cross-checked against the file's.
//!
//! Nothing is left in the working directory: the flags added point into a private temporary
//! directory, removed at the end unless `--keep DIR` names where to keep it.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::report::{Check, ClientRun, Figure, Figures, Note, Row, Severity, Status, Verdict};
use crate::{Error, Options, Policy, Run};

/// One benchmark client `run` knows: how it is invoked, what it needs added, where its result is.
#[derive(Debug)]
pub struct Client {
    /// Stable id, written as `source.run.client`.
    pub id: &'static str,
    /// The tool's name as dstack's benchmark report gives it (`workload.benchmark_tool`).
    pub tool: &'static str,
    /// The Python distribution whose version is the client's version.
    pub package: &'static str,
    /// The command lines that run it.
    pub invoked: &'static [Invoked],
    /// What is added where the user did not set it, in this order.
    pub adds: &'static [Add],
    /// Where it writes its result file.
    pub result: ResultAt,
    /// Flags whose value is a workload figure: (flag, canonical path). Used only where the
    /// client's output does not give the figure itself.
    pub workload: &'static [(&'static str, &'static str)],
    /// Flags read into the workload only when `--dataset-name` is `random` (the random dataset's
    /// lengths are the requested lengths; another dataset's are its own).
    pub random_lengths: &'static [(&'static str, &'static str)],
}

/// A command line that runs a client.
#[derive(Debug)]
pub enum Invoked {
    /// An executable (by file name) and the subcommand words after it: `vllm bench serve`.
    Program { name: &'static str, words: &'static [&'static str] },
    /// A Python module run with `-m`: `python -m sglang.bench_serving`.
    Module(&'static str),
    /// A Python script, by the end of its path: `python benchmarks/benchmark_serving.py`.
    Script(&'static str),
}

/// A flag `run` adds when the user did not set it.
#[derive(Debug)]
pub enum Add {
    /// A switch: `--save-result`.
    Switch(&'static str),
    /// A comma-separated list that must name `need`: `default` when the user gave none, the
    /// user's list with `need` appended otherwise (`ttft,tpot` -> `ttft,tpot,e2el`).
    ListWith { flag: &'static str, default: &'static str, need: &'static str },
    /// A path in the private directory (`name`, or the directory itself when empty), unless the
    /// user set this flag or one of `unless`.
    Private { flag: &'static str, name: &'static str, unless: &'static [&'static str] },
    /// A fixed value, unless the user set this flag or one of `unless`.
    Value { flag: &'static str, value: &'static str, unless: &'static [&'static str] },
}

/// Where a client writes its result file.
#[derive(Debug)]
pub enum ResultAt {
    /// The path a flag names.
    File { flag: &'static str },
    /// `dir/name` from two flags; with the folder alone (the client names the file), the
    /// newest `*.ext` file in it; with the name alone, the name (relative to the working directory).
    DirAndName { dir: &'static str, name: &'static str, ext: &'static str },
    /// A file of one of these names anywhere below the folder a flag names.
    Under { flag: &'static str, names: &'static [&'static str] },
}

const SERVE_WORKLOAD: &[(&str, &str)] = &[
    ("--backend", "workload.backend"),
    ("--model", "workload.model"),
    ("--dataset-name", "workload.dataset"),
    ("--num-prompts", "workload.num_prompts"),
    ("--max-concurrency", "workload.max_concurrency"),
    ("--request-rate", "workload.request_rate"),
];

const RANDOM_LENGTHS: &[(&str, &str)] =
    &[("--random-input-len", "workload.input_len"), ("--random-output-len", "workload.output_len")];

const PERF_WORKLOAD: &[(&str, &str)] = &[
    ("--model", "workload.model"),
    ("-m", "workload.model"),
    ("--concurrency", "workload.max_concurrency"),
    ("--request-count", "workload.num_prompts"),
    ("--synthetic-input-tokens-mean", "workload.input_len"),
    ("--output-tokens-mean", "workload.output_len"),
];

/// The clients `run` recognises, first match wins.
pub static CLIENTS: &[Client] = &[
    Client {
        id: "vllm-bench-serve",
        tool: "vllm bench serve",
        package: "vllm",
        invoked: &[
            Invoked::Program { name: "vllm", words: &["bench", "serve"] },
            Invoked::Script("benchmark_serving.py"),
        ],
        adds: &[
            // E2E latency per request: the TPOT derivation's input (vLLM prints it only when asked).
            Add::ListWith { flag: "--percentile-metrics", default: "ttft,tpot,itl,e2el", need: "e2el" },
            // The result file, with the per-request arrays: per-request TPOT.
            Add::Switch("--save-result"),
            Add::Switch("--save-detailed"),
            Add::Private { flag: "--result-dir", name: "", unless: &["--result-filename"] },
            Add::Value { flag: "--result-filename", value: "vllm.result.json", unless: &["--result-dir"] },
        ],
        result: ResultAt::DirAndName { dir: "--result-dir", name: "--result-filename", ext: "json" },
        workload: SERVE_WORKLOAD,
        random_lengths: RANDOM_LENGTHS,
    },
    Client {
        id: "sglang-bench-serving",
        tool: "sglang.bench_serving",
        package: "sglang",
        invoked: &[Invoked::Module("sglang.bench_serving")],
        adds: &[
            // Without it SGLang writes a file into the working directory.
            Add::Private { flag: "--output-file", name: "sglang.result.jsonl", unless: &[] },
            Add::Switch("--output-details"),
        ],
        result: ResultAt::File { flag: "--output-file" },
        workload: SERVE_WORKLOAD,
        random_lengths: RANDOM_LENGTHS,
    },
    Client {
        id: "genai-perf",
        tool: "genai-perf",
        package: "genai-perf",
        invoked: &[Invoked::Program { name: "genai-perf", words: &["profile"] }],
        adds: &[Add::Private { flag: "--artifact-dir", name: "artifacts", unless: &[] }],
        result: ResultAt::Under { flag: "--artifact-dir", names: &["profile_export_genai_perf.json"] },
        workload: PERF_WORKLOAD,
        random_lengths: &[],
    },
    Client {
        id: "aiperf",
        tool: "aiperf",
        package: "aiperf",
        invoked: &[Invoked::Program { name: "aiperf", words: &["profile"] }],
        adds: &[Add::Private { flag: "--artifact-dir", name: "artifacts", unless: &[] }],
        result: ResultAt::Under { flag: "--artifact-dir", names: &["profile_export_aiperf.json"] },
        workload: PERF_WORKLOAD,
        random_lengths: &[],
    },
    Client {
        id: "guidellm",
        tool: "guidellm",
        package: "guidellm",
        // Its output flags changed between versions (`--output-path`, `--output-dir`,
        // `--outputs`): nothing is added; a `--output-path` the user gives is read.
        invoked: &[Invoked::Program { name: "guidellm", words: &["benchmark"] }],
        adds: &[],
        result: ResultAt::File { flag: "--output-path" },
        workload: &[("--model", "workload.model")],
        random_lengths: &[],
    },
];

/// The command as it will run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub client: Option<&'static Client>,
    /// The command as given.
    pub given: Vec<String>,
    /// The command as run.
    pub command: Vec<String>,
    /// What was added or changed, each flag with its value.
    pub added: Vec<String>,
    /// The client's arguments in `command` start here (after the program and its subcommand
    /// words, the module or the script).
    pub args_at: usize,
    /// The Python interpreter that runs the client, when the command names it.
    pub interpreter: Option<String>,
}

impl PartialEq for Client {
    fn eq(&self, other: &Client) -> bool {
        self.id == other.id
    }
}

/// A flag name as argparse matches it: `--percentile_metrics` is `--percentile-metrics`.
fn same_flag(arg: &str, flag: &str) -> bool {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    name.len() == flag.len() && name.bytes().zip(flag.bytes()).all(|(a, b)| a == b || (a == b'_' && b == b'-'))
}

/// Where a flag is among `args` (up to a literal `--`, after which arguments are passed on) and
/// its value: `--flag=value` or `--flag value`.
fn find_flag<'a>(args: &'a [String], flag: &str) -> Option<(usize, Option<&'a str>)> {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let i = args[..end].iter().position(|a| same_flag(a, flag))?;
    let value = match args[i].split_once('=') {
        Some((_, v)) if args[i].starts_with("--") => Some(v),
        _ => args.get(i + 1).filter(|v| i + 1 < end && !v.starts_with("--")).map(String::as_str),
    };
    Some((i, value))
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A Python interpreter's file name: `python`, `python3`, `python3.11`, `pypy3`.
fn is_python(program: &str) -> bool {
    let name = file_name(program);
    let rest = name.strip_prefix("python").or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

/// Which client a command runs, the index of its own arguments, and the Python interpreter
/// named in it. A leading `env NAME=value ...` is looked through.
fn recognise(argv: &[String]) -> Option<(&'static Client, usize, Option<String>)> {
    let mut at = 0;
    if argv.first().is_some_and(|a| file_name(a) == "env") {
        at = 1;
        while argv.get(at).is_some_and(|a| a.contains('=') && !a.starts_with('-')) {
            at += 1;
        }
    }
    let program = argv.get(at)?;
    if is_python(program) {
        // Interpreter options, then `-m module` or a script.
        let mut i = at + 1;
        while let Some(a) = argv.get(i) {
            if a == "-m" || (a.starts_with("-m") && a.len() > 2 && !a.starts_with("--")) {
                let (module, next) = if a == "-m" { (argv.get(i + 1)?.as_str(), i + 2) } else { (&a[2..], i + 1) };
                let client = CLIENTS
                    .iter()
                    .find(|c| c.invoked.iter().any(|inv| matches!(inv, Invoked::Module(m) if *m == module)))?;
                return Some((client, next, Some(program.clone())));
            }
            if matches!(a.as_str(), "-X" | "-W" | "--check-hash-based-pycs") {
                i += 2;
            } else if a.starts_with('-') && a != "-" {
                if a == "-c" {
                    return None;
                }
                i += 1;
            } else {
                let client = CLIENTS.iter().find(|c| {
                    c.invoked
                        .iter()
                        .any(|inv| matches!(inv, Invoked::Script(s) if a == s || a.ends_with(&format!("/{s}"))))
                })?;
                return Some((client, i + 1, Some(program.clone())));
            }
        }
        return None;
    }
    let name = file_name(program);
    CLIENTS.iter().find_map(|c| {
        c.invoked.iter().find_map(|inv| match inv {
            Invoked::Program { name: n, words } if *n == name => {
                let after = &argv[at + 1..];
                (after.len() >= words.len() && after.iter().zip(words.iter()).all(|(a, w)| a == w)).then_some((
                    c,
                    at + 1 + words.len(),
                    None,
                ))
            }
            _ => None,
        })
    })
}

/// The command as it will run: the client recognised and the flags it lacks added (before a
/// literal `--` among its arguments, which passes the rest on), pointing into `private`.
pub fn plan(given: &[String], private: &Path) -> Plan {
    let Some((client, args_at, interpreter)) = recognise(given) else {
        return Plan {
            client: None,
            given: given.to_vec(),
            command: given.to_vec(),
            added: Vec::new(),
            args_at: given.len(),
            interpreter: None,
        };
    };
    let mut command = given.to_vec();
    let mut added = Vec::new();
    let mut extra: Vec<String> = Vec::new();
    for add in client.adds {
        let args = &command[args_at..];
        let set = |f: &str| find_flag(args, f).is_some();
        match add {
            Add::Switch(flag) => {
                if !set(flag) {
                    extra.push(flag.to_string());
                    added.push(flag.to_string());
                }
            }
            Add::ListWith { flag, default, need } => match find_flag(args, flag).map(|(i, v)| (i, v.map(String::from)))
            {
                None => {
                    extra.extend([flag.to_string(), default.to_string()]);
                    added.push(format!("{flag} {default}"));
                }
                Some((i, Some(list))) if !list.split(',').any(|m| m.trim() == *need) => {
                    let list = list.as_str();
                    let merged = if list.trim().is_empty() { need.to_string() } else { format!("{list},{need}") };
                    let i = args_at + i;
                    if command[i].contains('=') {
                        command[i] = format!("{}={merged}", command[i].split_once('=').map_or("", |(n, _)| n));
                    } else {
                        command[i + 1] = merged.clone();
                    }
                    added.push(format!("{flag} {merged} (was {list})"));
                }
                Some(_) => {}
            },
            Add::Private { flag, name, unless } => {
                if !set(flag) && !unless.iter().any(|u| set(u)) {
                    let path = if name.is_empty() { private.to_path_buf() } else { private.join(name) };
                    let path = path.display().to_string();
                    added.push(format!("{flag} {path}"));
                    extra.extend([flag.to_string(), path]);
                }
            }
            Add::Value { flag, value, unless } => {
                if !set(flag) && !unless.iter().any(|u| set(u)) {
                    added.push(format!("{flag} {value}"));
                    extra.extend([flag.to_string(), value.to_string()]);
                }
            }
        }
    }
    let insert_at = command[args_at..].iter().position(|a| a == "--").map_or(command.len(), |p| args_at + p);
    command.splice(insert_at..insert_at, extra);
    Plan { client: Some(client), given: given.to_vec(), command, added, args_at, interpreter }
}

impl Plan {
    /// The value of a flag among the client's arguments, as run.
    pub fn flag(&self, flag: &str) -> Option<&str> {
        find_flag(&self.command[self.args_at.min(self.command.len())..], flag).and_then(|(_, v)| v)
    }

    /// Where the result file will be, as far as the command says.
    fn expected(&self, cwd: &Path) -> Option<Expected> {
        let client = self.client?;
        let path = |p: &str| cwd.join(p);
        Some(match &client.result {
            ResultAt::File { flag } => Expected::File(path(self.flag(flag)?)),
            ResultAt::DirAndName { dir, name, ext } => match (self.flag(dir), self.flag(name)) {
                (Some(d), Some(n)) => Expected::File(path(d).join(n)),
                (None, Some(n)) => Expected::File(path(n)),
                (Some(d), None) => Expected::Newest { dir: path(d), ext, deep: false, names: &[] },
                (None, None) => return None,
            },
            ResultAt::Under { flag, names } => {
                Expected::Newest { dir: path(self.flag(flag)?), ext: "", deep: true, names }
            }
        })
    }

    /// The command as one line a shell would read back (each word quoted where needed).
    pub fn command_line(&self) -> String {
        shell_join(&self.command)
    }
}

/// Words joined as a POSIX shell reads them back.
pub fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b));
            if plain { w.clone() } else { format!("'{}'", w.replace('\'', r"'\''")) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where to look for the result file after the run.
#[derive(Debug, Clone)]
enum Expected {
    File(PathBuf),
    Newest { dir: PathBuf, ext: &'static str, deep: bool, names: &'static [&'static str] },
}

/// What a file was before the run: its length, modification time and the bytes at its start and
/// end, to tell afterwards whether the client wrote it, appended to it or left it alone.
#[derive(Debug, Clone, PartialEq)]
struct Before {
    len: u64,
    modified: Option<SystemTime>,
    head: Vec<u8>,
    tail: Vec<u8>,
}

const EDGE: u64 = 4096;

fn before(path: &Path) -> Option<Before> {
    let meta = fs::metadata(path).ok().filter(|m| m.is_file())?;
    let mut f = File::open(path).ok()?;
    let mut head = Vec::new();
    (&mut f).take(EDGE).read_to_end(&mut head).ok()?;
    let mut tail = Vec::new();
    if meta.len() > EDGE {
        use std::io::Seek;
        f.seek(io::SeekFrom::Start(meta.len() - EDGE)).ok()?;
        f.take(EDGE).read_to_end(&mut tail).ok()?;
    }
    Some(Before { len: meta.len(), modified: meta.modified().ok(), head, tail })
}

/// The result files the command can write, as they were before it ran.
#[derive(Debug)]
pub struct Expect {
    expected: Option<Expected>,
    files: HashMap<PathBuf, Before>,
}

impl Expect {
    fn new(expected: Option<Expected>) -> Expect {
        let mut files = HashMap::new();
        for p in expected.iter().flat_map(candidates) {
            if let Some(b) = before(&p) {
                files.insert(p, b);
            }
        }
        Expect { expected, files }
    }

    /// The result file this run wrote, and from where its new content starts (a client that
    /// appends, SGLang's `--output-file`, vLLM's `--append-result`, keeps what was there); or
    /// why there is none.
    fn found(&self) -> Result<(PathBuf, u64), String> {
        let Some(expected) = &self.expected else { return Err("the command names no result file".into()) };
        let written = |p: &PathBuf| -> Option<(u64, SystemTime)> {
            let now = before(p)?;
            let modified = now.modified.unwrap_or(UNIX_EPOCH);
            match self.files.get(p) {
                None => Some((0, modified)),
                Some(old) if *old == now => None,
                Some(old) => {
                    // Appended: the old bytes are still where they were.
                    let kept = now.len > old.len
                        && now.head.starts_with(&old.head[..old.head.len().min(now.head.len())])
                        && (old.tail.is_empty() || tail_at(p, old.len).as_deref() == Some(&old.tail[..]));
                    Some((if kept { old.len } else { 0 }, modified))
                }
            }
        };
        match expected {
            Expected::File(p) => match written(p) {
                Some((offset, _)) => Ok((p.clone(), offset)),
                None if self.files.contains_key(p) => {
                    Err(format!("{} is unchanged since before the run: not this run's result", p.display()))
                }
                None => Err(format!("the client wrote no result file at {}", p.display())),
            },
            Expected::Newest { dir, .. } => candidates(expected)
                .into_iter()
                .filter_map(|p| written(&p).map(|(o, m)| (p, o, m)))
                .max_by_key(|(_, _, m)| *m)
                .map(|(p, o, _)| (p, o))
                .ok_or_else(|| format!("the client wrote no result file in {}", dir.display())),
        }
    }
}

/// The `EDGE` bytes that end at `end` in a file.
fn tail_at(path: &Path, end: u64) -> Option<Vec<u8>> {
    use std::io::Seek;
    let mut f = File::open(path).ok()?;
    f.seek(io::SeekFrom::Start(end.checked_sub(EDGE)?)).ok()?;
    let mut buf = Vec::new();
    f.take(EDGE).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// Every file the expected result can be.
fn candidates(expected: &Expected) -> Vec<PathBuf> {
    match expected {
        Expected::File(p) => vec![p.clone()],
        Expected::Newest { dir, ext, deep, names } => {
            let mut out = Vec::new();
            let mut dirs = vec![dir.clone()];
            while let Some(d) = dirs.pop() {
                let Ok(entries) = fs::read_dir(&d) else { continue };
                for e in entries.flatten() {
                    let p = e.path();
                    let Ok(t) = e.file_type() else { continue };
                    if t.is_dir() && *deep {
                        dirs.push(p);
                    } else if t.is_file() {
                        let name = e.file_name().to_string_lossy().into_owned();
                        let wanted = if names.is_empty() {
                            p.extension().is_some_and(|x| x == *ext)
                        } else {
                            names.contains(&name.as_str())
                        };
                        if wanted {
                            out.push(p);
                        }
                    }
                }
            }
            out
        }
    }
}

/// How the client ended.
#[derive(Debug)]
struct Ended {
    status: ExitStatus,
    started: SystemTime,
    ended: SystemTime,
    forwarded: Vec<i32>,
}

/// Where the client's output goes: the live copy (stderr) and the log that is read afterwards.
struct Outputs {
    live: Box<dyn Write + Send>,
    log: File,
    log_failed: Option<io::Error>,
    /// The last byte shown: what comes after the client's output starts on a line of its own.
    last: Option<u8>,
}

impl Outputs {
    fn write(&mut self, bytes: &[u8]) {
        self.last = bytes.last().copied().or(self.last);
        // A closed stderr does not stop the benchmark; a log that cannot be written is said at the end.
        let _ = self.live.write_all(bytes).and_then(|_| self.live.flush());
        if self.log_failed.is_none() {
            if let Err(e) = self.log.write_all(bytes) {
                self.log_failed = Some(e);
            }
        }
    }
}

/// Copy a pipe to `out`, whole lines at a time (`\n` or tqdm's `\r`) as they come, so that the
/// client's stdout and stderr do not cut into each other's lines.
fn pump(mut from: impl Read, out: &Mutex<Outputs>) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        pending.extend_from_slice(&buf[..n]);
        if let Some(end) = pending.iter().rposition(|b| *b == b'\n' || *b == b'\r') {
            let lines: Vec<u8> = pending.drain(..=end).collect();
            out.lock().unwrap_or_else(|p| p.into_inner()).write(&lines);
        }
    }
    if !pending.is_empty() {
        out.lock().unwrap_or_else(|p| p.into_inner()).write(&pending);
    }
}

/// The signals passed on to the client: Ctrl-C, `kill`, a closed terminal, Ctrl-\.
#[cfg(unix)]
const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Run the command: its stdout and stderr copied to `live` and to `log` line by line as they
/// come; the signals bench-normalize gets passed on to it.
///
/// The client runs in a process group of its own, and a signal bench-normalize receives is sent
/// to that group: a Ctrl-C at the terminal reaches the client once (not once from the terminal
/// and once forwarded), a `kill -INT` of bench-normalize reaches it too, and bench-normalize
/// itself lives on to report what the client printed. Its stdin is the terminal's only when that
/// is no terminal (a background process group reading one would be stopped).
fn launch(command: &[String], log: File, live: Box<dyn Write + Send>) -> io::Result<Ended> {
    let (program, args) = command.split_first().ok_or_else(|| io::Error::other("no command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    if io::IsTerminal::is_terminal(&io::stdin()) {
        cmd.stdin(Stdio::null());
    }
    // Python buffers a pipe's output: without this nothing would show until the end.
    if std::env::var_os("PYTHONUNBUFFERED").is_none() {
        cmd.env("PYTHONUNBUFFERED", "1");
    }
    #[cfg(unix)]
    let signals = {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe and touches no memory of the parent: if
        // bench-normalize dies (SIGKILL), the client is told with SIGTERM rather than orphaned.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        // Registered before the client starts: a signal that comes meanwhile waits for it.
        signal_hook::iterator::Signals::new(FORWARDED)?
    };
    let started = SystemTime::now();
    let mut child: Child = cmd.spawn()?;
    #[cfg(unix)]
    let (forwarder, handle) = {
        let pid = child.id() as libc::pid_t;
        let handle = signals.handle();
        let mut signals = signals;
        let forwarder = std::thread::spawn(move || {
            let mut sent = Vec::new();
            for sig in signals.forever() {
                // SAFETY: kill(2) with the client's process group id; no memory is involved.
                unsafe { libc::kill(-pid, sig) };
                sent.push(sig);
            }
            sent
        });
        (forwarder, handle)
    };
    let out = Arc::new(Mutex::new(Outputs { live, log, log_failed: None, last: None }));
    let mut pumps = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let out = Arc::clone(&out);
        pumps.push(std::thread::spawn(move || pump(stdout, &out)));
    }
    if let Some(stderr) = child.stderr.take() {
        let out = Arc::clone(&out);
        pumps.push(std::thread::spawn(move || pump(stderr, &out)));
    }
    let status = child.wait();
    for p in pumps {
        let _ = p.join();
    }
    let ended = SystemTime::now();
    #[cfg(unix)]
    let forwarded = {
        handle.close();
        forwarder.join().unwrap_or_default()
    };
    #[cfg(not(unix))]
    let forwarded = Vec::new();
    let status = status?;
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    if out.last.is_some_and(|b| b != b'\n') {
        // A progress bar's `\r` (or a last line without its end): the diagnostics after it
        // would overwrite it.
        let _ = out.live.write_all(b"\n").and_then(|_| out.live.flush());
    }
    if let Some(e) = out.log_failed.take() {
        return Err(e);
    }
    out.log.flush()?;
    Ok(Ended { status, started, ended, forwarded })
}

/// The client's version, asked from its Python distribution with the interpreter that runs it
/// (`importlib.metadata`, which imports nothing of the client); and how it was asked, or why
/// it is unknown.
fn client_version(client: &Client, plan: &Plan) -> (Option<String>, String) {
    let interpreter = match &plan.interpreter {
        Some(p) => Some(p.clone()),
        None => {
            let program = plan.command.get(plan.args_at.saturating_sub(1 + words_of(client, plan)));
            program.and_then(|p| shebang_interpreter(p))
        }
    };
    let Some(python) = interpreter else {
        return (
            None,
            format!("unknown: no Python interpreter found for {} (its script has no python #! line)", client.tool),
        );
    };
    let code = format!("import importlib.metadata as m; print(m.version({:?}))", client.package);
    let asked = format!("importlib.metadata.version({:?}) with {python}", client.package);
    match output_within(Command::new(&python).args(["-c", &code]), Duration::from_secs(30)) {
        Some(v) if !v.is_empty() && !v.contains(char::is_whitespace) => (Some(v), asked),
        Some(_) | None => (None, format!("unknown: {asked} gave no version")),
    }
}

/// How many subcommand words follow the program in `plan`'s command.
fn words_of(client: &Client, plan: &Plan) -> usize {
    client
        .invoked
        .iter()
        .find_map(|inv| match inv {
            Invoked::Program { words, .. }
                if plan.args_at > words.len()
                    && plan.command[plan.args_at - words.len()..plan.args_at]
                        .iter()
                        .zip(words.iter())
                        .all(|(a, w)| a == w) =>
            {
                Some(words.len())
            }
            _ => None,
        })
        .unwrap_or(0)
}

/// A program on PATH (or a path).
fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(program)).find(|p| p.is_file())
}

/// The Python interpreter of a console script's `#!` line (`#!/opt/venv/bin/python`, or
/// `#!/usr/bin/env python3`).
fn shebang_interpreter(program: &str) -> Option<String> {
    let path = which(program)?;
    let mut head = Vec::new();
    File::open(path).ok()?.take(512).read_to_end(&mut head).ok()?;
    let line = String::from_utf8_lossy(head.split(|b| *b == b'\n').next()?).into_owned();
    let mut words = line.strip_prefix("#!")?.split_whitespace();
    let first = words.next()?;
    let python = if file_name(first) == "env" { words.find(|w| !w.starts_with('-'))? } else { first };
    is_python(python).then(|| python.to_string())
}

/// A command's stdout (trimmed) when it succeeds within `limit`; killed otherwise.
fn output_within(cmd: &mut Command, limit: Duration) -> Option<String> {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let text = reader.join().ok()?;
    status.filter(ExitStatus::success).map(|_| text.trim().to_string())
}

/// A time as RFC 3339, UTC, to the millisecond.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// What `run` gives back: the runs (usually one), problems met while reading, and the client's
/// failure, if it failed.
#[derive(Debug)]
pub struct Outcome {
    pub runs: Vec<Run>,
    pub diagnostics: Vec<Error>,
    pub warnings: Vec<String>,
    pub failed: Option<Error>,
    pub plan: Plan,
}

/// The name of the client's output log in the private directory.
pub const OUTPUT_LOG: &str = "client-output.log";

/// How `run` runs a client.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Keep the private directory here (created if missing) instead of a temporary one removed
    /// at the end.
    pub keep: Option<PathBuf>,
    /// Run the command exactly as given, adding nothing (a client too old for a flag `run` adds).
    pub as_given: bool,
}

/// Run `given` (a benchmark client command), showing its output on `live`, and read what it
/// printed and the result file it wrote as one run.
pub fn run(
    given: &[String],
    settings: &Settings,
    opts: &Options,
    live: Box<dyn Write + Send>,
) -> Result<Outcome, Error> {
    let shown = shell_join(given);
    if given.is_empty() {
        return Err(Error::Usage("no client command after `--`: bench-normalize run -- vllm bench serve ...".into()));
    }
    let io_err = |what: &str, source| Error::Io { input: what.to_string(), source };
    let temp;
    let keep = settings.keep.as_deref();
    let private: PathBuf = match keep {
        Some(dir) => {
            fs::create_dir_all(dir).map_err(|e| io_err(&dir.display().to_string(), e))?;
            std::path::absolute(dir).map_err(|e| io_err(&dir.display().to_string(), e))?
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("bench-normalize-run.")
                .tempdir()
                .map_err(|e| io_err("a temporary directory", e))?;
            temp.path().to_path_buf()
        }
    };
    let mut plan = plan(given, &private);
    if settings.as_given {
        plan.command = plan.given.clone();
        plan.added.clear();
    }
    let mut warnings = Vec::new();
    if plan.client.is_none() {
        warnings.push(format!(
            "{}: not a benchmark client `run` knows ({}): run as given, no flags added",
            file_name(&given[0]),
            CLIENTS.iter().map(|c| c.tool).collect::<Vec<_>>().join(", ")
        ));
    }
    let cwd = std::env::current_dir().map_err(|e| io_err(".", e))?;
    let expect = Expect::new(plan.expected(&cwd));
    // The version is asked while the benchmark runs.
    let version = plan.client.map(|c| {
        let plan = plan.clone();
        std::thread::spawn(move || client_version(c, &plan))
    });
    let log_path = private.join(OUTPUT_LOG);
    let log = File::create(&log_path).map_err(|e| io_err(&log_path.display().to_string(), e))?;
    let ended = launch(&plan.command, log, live);
    let (tool_version, version_from) = match version.map(|h| h.join()) {
        Some(Ok(v)) => v,
        _ => (None, "unknown: the command is no known client".to_string()),
    };
    let ended = match ended {
        Ok(e) => e,
        Err(e) => {
            let failed = Error::Client { command: shown, message: format!("could not run it: {e}") };
            return Ok(Outcome { runs: Vec::new(), diagnostics: Vec::new(), warnings, failed: Some(failed), plan });
        }
    };
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
                warnings.push(why);
            }
            (None, Vec::new(), None)
        }
    };
    if printed.is_empty() && filed.is_empty() {
        diagnostics.extend(log_error);
    }
    diagnostics.extend(file_error);
    let info = ClientRun {
        client: plan.client.map(|c| c.id.to_string()),
        given: plan.given.clone(),
        command: plan.command.clone(),
        added_flags: plan.added.clone(),
        tool_version,
        version_from,
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
    Ok(Outcome { runs, diagnostics, warnings, failed, plan })
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
        Ok(f) if offset == 0 => crate::normalize_file(f, name, opts, &mut sink),
        Ok(f) => {
            use std::io::Seek;
            let mut f = f;
            let mut bytes = Vec::new();
            match f.seek(io::SeekFrom::Start(offset)).and_then(|_| f.read_to_end(&mut bytes)) {
                Ok(_) => crate::normalize(&bytes[..], name, opts, &mut sink),
                Err(source) => Err(Error::Io { input: name.to_string(), source }),
            }
        }
    };
    (runs, result.err())
}

/// The check that the client's printed figures are its result file's.
pub const AGREEMENT_RULE: &str = "output-matches-result-file";

/// The client's printed runs and the runs of its result file, read as one: the last printed run
/// with the last run of the file (a client invocation writes one, appended last), any others as
/// they are. The merged run is the file's (exact figures, per-request arrays: TPOT method
/// `per-request`) with the printed figures the file lacks, derived and validated again, and the
/// printed figures checked against the file's ([`AGREEMENT_RULE`]).
pub fn combine(mut printed: Vec<Run>, mut filed: Vec<Run>, policy: &Policy) -> Vec<Run> {
    let (p, f) = match (printed.pop(), filed.pop()) {
        (Some(p), Some(f)) => (p, f),
        (p, f) => {
            printed.extend(p);
            filed.extend(f);
            printed.append(&mut filed);
            return printed;
        }
    };
    let merged = merge(f, p, policy);
    printed.append(&mut filed);
    printed.push(merged);
    printed
}

/// A figure printed with `decimals` decimals as `printed`, in the row's unit: how far the exact
/// figure may lie from it (half a unit of the last digit, in the figure's unit).
fn printed_slack(row_value: &str, figure: f64) -> Option<f64> {
    // The first number of the printed value: `6,677.95`, `139.89`, `6.7 ± 0.002`.
    let s = row_value.trim_start();
    let end = s.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '+'))).unwrap_or(s.len());
    let token = &s[..end];
    if token.is_empty() || s[end..].starts_with(['e', 'E']) {
        return None;
    }
    let number: f64 = token.replace(',', "").parse().ok()?;
    let decimals = token.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    // The row's unit against the figure's (seconds printed, milliseconds kept).
    let scale = if number != 0.0 && figure != 0.0 { (figure / number).abs() } else { 1.0 };
    let scale = if (scale - 1.0).abs() < 0.02 { 1.0 } else { 10f64.powf(scale.log10().round()) };
    Some(0.5 * 10f64.powi(-decimals) * scale * 1.0001 + 1e-9 * figure.abs())
}

/// One printed figure against the file's: `None` when they agree.
fn disagreement(path: &str, printed: f64, filed: f64, rows: &[Row]) -> Option<String> {
    let row = rows.iter().find(|r| r.field.as_deref() == Some(path))?;
    let slack = printed_slack(row.value.as_deref()?, printed)?;
    ((printed - filed).abs() > slack).then(|| {
        format!(
            "{path}: printed {printed} (line {} \"{}\") vs file {filed}",
            row.line,
            row.value.as_deref().unwrap_or("")
        )
    })
}

/// Merge the figures of `printed` into `into` (the file's): a figure the file lacks is taken from
/// the output; one it has is compared ([`disagreement`]).
fn merge_figures(
    into: &mut Figures,
    printed: &Figures,
    prefix: &str,
    rows: &[Row],
    found: &mut Vec<String>,
    compared: &mut usize,
) {
    for (name, fig) in printed.iter() {
        let full = format!("{prefix}.{name}");
        match (into.get(name).cloned(), fig) {
            (None, f) => into.set(name, &full, f.clone()),
            (Some(Figure::Group(_)), Figure::Group(g)) => {
                if let Figure::Group(mine) = into.slot(name, &full, || Figure::Group(Figures::default())) {
                    merge_figures(mine, g, &full, rows, found, compared);
                }
            }
            (Some(Figure::Stat(have)), Figure::Stat(st)) => {
                let mut have = have;
                for (k, v) in st.iter() {
                    match have.get(k) {
                        Some(f) => {
                            *compared += 1;
                            found.extend(disagreement(&format!("{full}.{}", k.name()), v, f, rows));
                        }
                        None => {
                            have.set(k, v);
                        }
                    }
                }
                into.set(name, &full, Figure::Stat(have));
            }
            (Some(have), f) => {
                if let (Some(h), Some(p)) = (have.as_f64(), f.as_f64()) {
                    *compared += 1;
                    found.extend(disagreement(&full, p, h, rows));
                }
            }
        }
    }
}

/// The file's run with what only the output gave, and the agreement check.
///
/// Why disagreement is an error: the printed block and the result file are written by one client
/// process from one in-memory result (vLLM prints `metrics` and dumps `result_json` built from
/// it; SGLang prints and appends the same `result` dict; AIPerf and genai-perf print the export
/// they write), each printed figure rounded to the decimals shown. A printed figure further from
/// the file's than half a unit of its last printed digit therefore cannot come from the same run:
/// one of the two is not this run's (a stale or foreign file, an edited log), and no figure of the
/// merged run can be trusted.
fn merge(mut file: Run, printed: Run, policy: &Policy) -> Run {
    let mut found = Vec::new();
    let mut compared = 0;
    let rows = &printed.rows;
    merge_figures(&mut file.workload, &printed.workload, "workload", rows, &mut found, &mut compared);
    merge_figures(&mut file.totals, &printed.totals, "totals", rows, &mut found, &mut compared);
    merge_figures(&mut file.reported, &printed.reported, "reported", rows, &mut found, &mut compared);
    let lines = match (printed.source.first_line, printed.source.last_line) {
        (Some(a), Some(b)) => format!(", lines {a}-{b}"),
        _ => String::new(),
    };
    file.notes.push(Note {
        code: "output-and-result-file".into(),
        message: format!(
            "read as one run: the result file {} and the client's output {} (parser {}{lines})",
            file.source.input, printed.source.input, printed.source.parser
        ),
        line: None,
    });
    file.notes.extend(printed.notes.iter().cloned());
    file.rows.extend(printed.rows.into_iter().map(|mut r| {
        r.scope = Some(match r.scope {
            Some(s) => format!("output {s}"),
            None => "output".into(),
        });
        r
    }));
    crate::pipeline::close(&mut file, policy, crate::pipeline::Claims::None);
    let (status, message) = if found.is_empty() {
        (Status::Pass, format!("{compared} printed figures agree with the result file within their printed precision"))
    } else {
        (
            Status::Fail,
            format!(
                "the client's output and its result file are not the same run's figures ({} of {compared} disagree beyond printing precision): {}",
                found.len(),
                found.join("; ")
            ),
        )
    };
    file.checks.push(Check { id: AGREEMENT_RULE.into(), severity: Severity::Error, status, message });
    settle_verdict(&mut file, policy);
    file
}

fn settle_verdict(run: &mut Run, policy: &Policy) {
    let rejects = |c: &Check| {
        c.status == Status::Fail
            && (c.severity == Severity::Error || (policy.strict && c.severity == Severity::Warning))
    };
    run.verdict = if run.checks.iter().any(rejects) { Verdict::Rejected } else { Verdict::Accepted };
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
        set_text(run, "benchmark_tool", client.tool);
        if let Some(v) = &info.tool_version {
            set_text(run, "benchmark_tool_version", v);
        }
        set_text(run, "command", &plan.command_line());
        let random = plan.flag("--dataset-name").is_some_and(|d| d == "random");
        let lengths = if random { client.random_lengths } else { &[] };
        for (flag, path) in client.workload.iter().chain(lengths) {
            let rel = &path["workload.".len()..];
            let Some(value) = plan.flag(flag) else { continue };
            if run.workload.get(rel).is_some() {
                continue;
            }
            let kind = crate::vocabulary::FIELDS.iter().find(|f| f.path == *path).map(|f| f.kind);
            let figure = match kind {
                Some(crate::vocabulary::Kind::Count) => value.parse::<u64>().ok().map(Figure::Count),
                Some(crate::vocabulary::Kind::Number) => {
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
    if run.workload.get("api").is_none() {
        if let Some((api, from)) = api_of(plan, run) {
            run.workload.set("api", "workload.api", Figure::Text(api.into()));
            run.notes.push(Note {
                code: "workload-from-command".into(),
                message: format!("workload.api is {api}, from {from}"),
                line: None,
            });
        }
    }
    run.source.run = Some(info.clone());
    if changed {
        let agreement = run.checks.iter().find(|c| c.id == AGREEMENT_RULE).cloned();
        crate::pipeline::close(run, policy, crate::pipeline::Claims::None);
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
    let backend =
        run.workload.text("backend").map(String::from).or_else(|| plan.flag("--backend").map(String::from))?;
    api(&backend).map(|a| (a, format!("the backend {backend}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn vllm_gets_what_exact_figures_need() {
        let p = plan(&words("vllm bench serve --model m --num-prompts 16"), Path::new("/tmp/x"));
        assert_eq!(p.client.map(|c| c.id), Some("vllm-bench-serve"));
        assert_eq!(
            p.command,
            words(
                "vllm bench serve --model m --num-prompts 16 --percentile-metrics ttft,tpot,itl,e2el --save-result \
                 --save-detailed --result-dir /tmp/x --result-filename vllm.result.json"
            )
        );
        assert_eq!(p.added.len(), 5);
    }

    #[test]
    fn the_users_flags_win_and_lists_are_merged() {
        let p = plan(
            &words("vllm bench serve --percentile-metrics ttft,tpot --save-result --result-dir out"),
            Path::new("/tmp/x"),
        );
        assert_eq!(
            p.command,
            words(
                "vllm bench serve --percentile-metrics ttft,tpot,e2el --save-result --result-dir out --save-detailed"
            )
        );
        assert_eq!(p.added, ["--percentile-metrics ttft,tpot,e2el (was ttft,tpot)", "--save-detailed"]);
        // `=` forms and underscores are the user's flags too.
        let p = plan(&words("vllm bench serve --percentile_metrics=e2el --result-filename r.json"), Path::new("/t"));
        assert_eq!(
            p.command,
            words("vllm bench serve --percentile_metrics=e2el --result-filename r.json --save-result --save-detailed")
        );
        let p = plan(&words("vllm bench serve --percentile-metrics=ttft"), Path::new("/t"));
        assert_eq!(p.command[3], "--percentile-metrics=ttft,e2el");
    }

    #[test]
    fn sglang_is_recognised_under_any_python() {
        for cmd in [
            "python -m sglang.bench_serving --backend sglang",
            "python3 -m sglang.bench_serving --backend sglang",
            "/opt/venv/bin/python3.11 -u -m sglang.bench_serving --backend sglang",
            "env A=1 python3 -msglang.bench_serving --backend sglang",
        ] {
            let p = plan(&words(cmd), Path::new("/t"));
            assert_eq!(p.client.map(|c| c.id), Some("sglang-bench-serving"), "{cmd}");
            assert_eq!(p.added, ["--output-file /t/sglang.result.jsonl", "--output-details"], "{cmd}");
            assert!(p.interpreter.as_deref().is_some_and(is_python), "{cmd}");
        }
        let p =
            plan(&words("python -m sglang.bench_serving --output-file mine.jsonl --output-details"), Path::new("/t"));
        assert!(p.added.is_empty());
        assert_eq!(p.command, p.given);
    }

    #[test]
    fn scripts_and_peers_are_recognised_and_others_run_as_given() {
        let p = plan(&words("python benchmarks/benchmark_serving.py --model m"), Path::new("/t"));
        assert_eq!(p.client.map(|c| c.id), Some("vllm-bench-serve"));
        let p = plan(&words("genai-perf profile -m x -- --extra"), Path::new("/t"));
        assert_eq!(p.command, words("genai-perf profile -m x --artifact-dir /t/artifacts -- --extra"));
        for cmd in ["vllm serve model", "python -c pass", "ls -l", "python -m other.module"] {
            let p = plan(&words(cmd), Path::new("/t"));
            assert!(p.client.is_none() && p.command == p.given, "{cmd}");
        }
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_millis(1_764_590_400_123)), "2025-12-01T12:00:00.123Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn shell_join_quotes_what_a_shell_would_split() {
        let w = vec!["a b".to_string(), "it's".into(), "--x=1".into(), String::new()];
        assert_eq!(shell_join(&w), r"'a b' 'it'\''s' --x=1 ''");
    }

    #[test]
    fn printed_precision_is_half_a_last_digit() {
        assert!((printed_slack("139.89", 139.89).unwrap() - 0.005).abs() < 1e-4);
        assert!((printed_slack("6,677.95", 6677.95).unwrap() - 0.005).abs() < 1e-4);
        assert!((printed_slack("16", 16.0).unwrap() - 0.5).abs() < 1e-3);
        // Seconds printed to one decimal, kept in milliseconds: 50 ms.
        assert!((printed_slack("6.7 ± 0.002", 6700.0).unwrap() - 50.0).abs() < 0.1);
        assert_eq!(printed_slack("n/a", 1.0), None);
    }
}
