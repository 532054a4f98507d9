//! The `bench-normalize` command: a thin shell around the library.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process;

use bench_normalize::emit::{self, OutputFormat};
use bench_normalize::error::printable;
use bench_normalize::report::Verdict;
use bench_normalize::{Definitions, Error, ExitCode, Options, Policy, Run, Sink, Tolerances, normalize};
use clap::{Args, Parser, Subcommand, ValueEnum};

/// A run is tens of small allocations, and one not rendered on the worker thread that built it is
/// freed on the main one: mimalloc frees small blocks, across threads too, far more cheaply than
/// the system allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Normalize vLLM / SGLang serving-benchmark output into one canonical JSON report; derive TPOT
/// from E2E latency, TTFT and token counts (never from ITL); reject runs that contradict their
/// own totals.
///
/// Exit codes: 0 every run accepted, 1 a run rejected, 2 usage error, 3 no result found or input
/// unreadable as a result, 4 I/O error, 5 a run the output format cannot hold (a figure it
/// requires is missing; the message says how to get it), 6 the client `run` ran failed.
#[derive(Parser, Debug)]
#[command(name = "bench-normalize", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Benchmark logs, result files (.json/.jsonl) or reports; standard input when none is given,
    /// or for `-`.
    files: Vec<PathBuf>,

    #[command(flatten)]
    common: Common,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate a report written by hand (a canonical report or run, or dstack's preset report
    /// shape) with the same rules; reject it when its figures contradict each other.
    Check {
        /// The report; `-` for standard input.
        file: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Run a benchmark client and report its run: `bench-normalize run [OPTIONS] -- vllm bench
    /// serve ...`. The flags exact figures need are added where the command lacks them (see the
    /// README, "Running the benchmark"); the client's output shows live on stderr; its output and
    /// result file are read as one run. Exit code 6: the client failed (its result is still
    /// reported).
    Run {
        #[command(flatten)]
        common: Common,
        /// Keep the client's output log and result file in DIR (created if missing) instead of a
        /// temporary directory removed at the end.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
        /// Run the command exactly as given: add no flag (for a client too old for one `run` adds).
        #[arg(long)]
        as_given: bool,
        /// The client command, after `--`: `vllm bench serve ...`, `python -m
        /// sglang.bench_serving ...`, `genai-perf profile ...`, `aiperf profile ...`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Compare configurations: `bench-normalize compare BASELINE OTHER...`, each a file or a
    /// directory of results. Runs are lined up by workload (concurrency, rate, input and output
    /// lengths, model); per pair, derived TPOT, per-user decode rate, output throughput, TTFT
    /// p50/p99, E2E mean/p50 and ITL side by side with ratios to the baseline. A figure whose
    /// meaning differs between the two sides is refused or warned, with the reason (docs/compare.md).
    Compare(CompareArgs),
    /// Print the JSON Schema of the canonical report.
    Schema,
    /// List the parser definitions: tool, formats, variants, detection markers.
    Parsers {
        /// `json`, or a `table` for people.
        #[arg(long, short = 'f', value_enum, default_value_t = ListFormat::Table)]
        format: ListFormat,
        /// Also load the definitions in this folder (as for normalizing).
        #[arg(long, value_name = "DIR", env = "BENCH_NORMALIZE_PARSERS")]
        parsers: Option<PathBuf>,
    },
    /// Print a shell completion script.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff).
    Man,
}

#[derive(Args, Debug)]
struct CompareArgs {
    /// The baseline configuration: a log, result file or report, or a directory of them.
    baseline: PathBuf,
    /// The configurations compared with the baseline, each a file or a directory.
    #[arg(required = true)]
    others: Vec<PathBuf>,
    /// Output format: a table for people, Markdown for a pull request, JSON (docs/compare.md).
    #[arg(long, short = 'f', value_enum, default_value_t = CompareFmt::Table)]
    format: CompareFmt,
    /// The workload fields runs are lined up by, comma-separated: concurrency, rate, input,
    /// output, model (drop one to compare runs that differ in it, e.g. two models).
    #[arg(long, value_name = "FIELDS", default_value = "concurrency,rate,input,output,model")]
    key: String,
    /// Failed warnings reject a run too (its figures are then left out).
    #[arg(long)]
    strict: bool,
    /// Diagnostics on stderr: for people, or one JSON object per line for programs.
    #[arg(long, value_enum, default_value_t = ErrorFormat::Human)]
    error_format: ErrorFormat,
    /// Also load the parser definitions (*.toml) in this folder. Default: $BENCH_NORMALIZE_PARSERS.
    #[arg(long, value_name = "DIR", env = "BENCH_NORMALIZE_PARSERS")]
    parsers: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CompareFmt {
    /// Per workload, the two sides side by side with ratios and notes
    Table,
    /// The same as a Markdown table, for pasting into a pull request
    Markdown,
    /// The whole comparison (docs/compare.md)
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ListFormat {
    Table,
    Json,
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Fmt::Json)]
    format: Fmt,

    /// Instead of the report, write out each run's derivation with its numbers: which rows, which
    /// formula and method, which checks and why.
    #[arg(long)]
    explain: bool,

    /// Failed warnings reject a run too (exit 1).
    #[arg(long)]
    strict: bool,

    /// Diagnostics on stderr: for people, or one JSON object per line for programs.
    #[arg(long, value_enum, default_value_t = ErrorFormat::Human)]
    error_format: ErrorFormat,

    /// Copy the input through, unchanged and as it arrives, to stderr, so a piped benchmark still
    /// shows live: `vllm bench serve ... 2>&1 | bench-normalize --tee`. Takes no value: a name
    /// after it is an input (to copy into a file, --tee-file).
    #[arg(long, conflicts_with = "tee_file")]
    tee: bool,

    /// Copy the input through, as --tee does, into the file PATH (created, or emptied once every
    /// check has passed). A PATH that is one of the inputs (by any name: a symlink, a hard link),
    /// standard input's file, or the file standard output goes to is refused (exit 2).
    #[arg(long, value_name = "PATH")]
    tee_file: Option<PathBuf>,

    /// Also load the parser definitions (*.toml) in this folder; one with the id of a built-in
    /// replaces it. Default: $BENCH_NORMALIZE_PARSERS.
    #[arg(long, value_name = "DIR", env = "BENCH_NORMALIZE_PARSERS")]
    parsers: Option<PathBuf>,

    /// decode-capacity / decode-within-e2e: how far a claimed TPOT may exceed its bound.
    #[arg(long, value_name = "FACTOR", default_value_t = Tolerances::default().capacity)]
    capacity_tolerance: f64,

    /// e2e-capacity: how far requests x E2E may exceed concurrency x duration.
    #[arg(long, value_name = "FACTOR", default_value_t = Tolerances::default().e2e_capacity)]
    e2e_capacity_tolerance: f64,

    /// throughput-totals: relative slack beyond 2-decimal rounding.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().throughput)]
    throughput_tolerance: f64,

    /// tpot-agreement: relative difference allowed between claimed and derived TPOT.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().tpot_agreement)]
    tpot_tolerance: f64,

    /// itl-is-per-chunk: ITL / TPOT above this means chunks carry several tokens.
    #[arg(long, value_name = "RATIO", default_value_t = Tolerances::default().itl_chunk_ratio)]
    itl_chunk_ratio: f64,

    /// token-count-source: relative difference allowed between server and retokenized totals.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().token_count)]
    token_count_tolerance: f64,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    /// The whole report (pretty on a terminal, compact otherwise)
    Json,
    /// One run per line, printed as soon as it is complete
    Jsonl,
    /// Runs side by side for people: derived TPOT and per-user decode rate first
    Table,
    /// One row per run, stable column names, header once
    Csv,
    /// What dstack's preset model accepts: the `benchmark` object when the run states the client's
    /// version and command, else its `metrics` (an array for several runs); exit 5 for a run that
    /// lacks a figure dstack requires
    Dstack,
    /// The `metrics` object of dstack's proposal dstack#4230 (`e2e_ms` added, TPOT derived, null
    /// for what the run does not give); not what dstack 0.22.5 accepts
    DstackE2e,
    /// An llm-d Benchmark Report v0.2 per run, one JSON document a line (a rejected run is not
    /// written)
    LlmdBr,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ErrorFormat {
    Human,
    Json,
}

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            // clap quotes the arguments; one that would drive a terminal is said escaped.
            let hostile = args.iter().any(|a| a.to_string_lossy().chars().any(bench_normalize::error::needs_escape));
            process::exit(argument_error(&e, json_errors_asked(&args), hostile) as i32)
        }
    };
    let (files, common, reports_only) = match cli.command {
        Some(Command::Check { file, common }) => (vec![file], common, true),
        Some(Command::Run { common, keep, as_given, command }) => {
            let settings = bench_normalize::client::Settings { keep, as_given };
            process::exit(run_client(&command, &settings, common) as i32)
        }
        Some(Command::Compare(args)) => process::exit(compare(args) as i32),
        Some(Command::Schema) => process::exit(print_schema() as i32),
        Some(Command::Parsers { format, parsers }) => process::exit(list_parsers(format, parsers) as i32),
        Some(Command::Completions { shell }) => {
            // Generated in memory (clap_complete panics on a failed write), then written.
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "bench-normalize",
                &mut script,
            );
            process::exit(write_listing(&script) as i32);
        }
        Some(Command::Man) => {
            let mut page = Vec::new();
            let man = clap_mangen::Man::new(<Cli as clap::CommandFactory>::command());
            let code = match man.render(&mut page) {
                Ok(()) => write_listing(&page),
                Err(source) => {
                    report_error(ErrorFormat::Human, &Error::Write { output: "stdout".into(), source });
                    ExitCode::Io
                }
            };
            process::exit(code as i32);
        }
        None => (cli.files, cli.common, false),
    };
    process::exit(run(files, common, reports_only) as i32);
}

/// Whether the command line asks for JSON diagnostics (`--error-format json` or
/// `--error-format=json`, the last one said, before a `--`), read from the raw arguments: an
/// argument error happens before clap has parsed anything, and is said in the format asked for
/// anyway.
fn json_errors_asked(args: &[std::ffi::OsString]) -> bool {
    let mut json = false;
    let mut args = args.iter().skip(1).map(|a| a.to_str());
    while let Some(arg) = args.next() {
        match arg {
            Some("--") => break,
            Some("--error-format") => json = args.next().flatten() == Some("json"),
            Some(a) => {
                if let Some(v) = a.strip_prefix("--error-format=") {
                    json = v == "json";
                }
            }
            None => {}
        }
    }
    json
}

/// A command line clap refused (exit 2), or `--help` / `--version` (printed, exit 0). With JSON
/// diagnostics asked for, the error is one JSON object, as every other diagnostic is; for a
/// person, clap's own message, without colour and escaped when an argument (`hostile`) holds
/// a character that would drive the terminal (clap passes them through to a terminal).
fn argument_error(e: &clap::Error, json: bool, hostile: bool) -> ExitCode {
    if !e.use_stderr() {
        // --help, --version: the text is the output. A closed pipe is no error; a full disk is.
        return match e.print() {
            Err(source) if source.kind() != io::ErrorKind::BrokenPipe => {
                report_error(ErrorFormat::Human, &Error::Write { output: "stdout".into(), source });
                ExitCode::Io
            }
            _ => ExitCode::Ok,
        };
    }
    let plain = e.render().to_string();
    let mut err = io::stderr().lock();
    if json {
        // The message without clap's `error: ` and its usage and help lines (the paragraphs that
        // say what is wrong, and the possible values when it lists them).
        let message = plain
            .split("\n\n")
            .filter(|p| !p.starts_with("Usage:") && !p.starts_with("For more information"))
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n");
        let message = message.strip_prefix("error: ").unwrap_or(&message);
        let obj = serde_json::json!({
            "code": "usage",
            "message": message,
            "input": null,
            "line": null,
            "column": null,
            "exit_code": ExitCode::Usage as i32,
        });
        let _ = writeln!(err, "{obj}");
    } else if hostile {
        let _ = write!(err, "{}", plain.lines().map(|l| printable(l) + "\n").collect::<String>());
    } else {
        drop(err);
        let _ = e.print();
    }
    ExitCode::Usage
}

/// Write a listing (schema, parsers, completions, man page) to stdout: exit 0 once written, or
/// when the reader closed the pipe first (`| head`); exit 4, said on stderr, when it cannot be
/// written (a full disk).
fn write_listing(bytes: &[u8]) -> ExitCode {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::Ok,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::Ok,
        Err(source) => {
            report_error(ErrorFormat::Human, &Error::Write { output: "stdout".into(), source });
            ExitCode::Io
        }
    }
}

/// Colour only on a terminal, and never with NO_COLOR set.
fn color_on(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn print_schema() -> ExitCode {
    let schema = bench_normalize::report::schema();
    let mut text = serde_json::to_vec_pretty(&schema).expect("the schema serializes");
    text.push(b'\n');
    write_listing(&text)
}

/// The built-in definitions, or those of `--parsers DIR` over them (loaded once, kept for the
/// life of the process).
fn load_definitions(dir: Option<&Path>) -> Result<&'static Definitions, Error> {
    match dir {
        None => Ok(Definitions::builtin()),
        Some(d) => Definitions::with_dir(d).map(|defs| &*Box::leak(Box::new(defs))),
    }
}

fn list_parsers(format: ListFormat, dir: Option<PathBuf>) -> ExitCode {
    let defs = match load_definitions(dir.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            report_error(ErrorFormat::Human, &e);
            return e.exit_code();
        }
    };
    let listing = bench_normalize::definition::listing(defs);
    let text = match format {
        ListFormat::Json => {
            let mut text = serde_json::to_string_pretty(&listing).expect("the listing serializes");
            text.push('\n');
            text
        }
        ListFormat::Table => {
            let mut t = comfy_table::Table::new();
            t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
                .set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
            t.set_header(["id", "tool", "format", "variants", "detected by", "from"]);
            for d in listing.as_array().into_iter().flatten() {
                let variants: Vec<&str> =
                    d["variants"].as_array().into_iter().flatten().filter_map(|v| v["id"].as_str()).collect();
                // Definitions given with --parsers are text from files: escaped as input text is.
                let row = [
                    d["id"].as_str().unwrap_or("").to_string(),
                    d["tool"].as_str().unwrap_or("").to_string(),
                    d["format"].as_str().unwrap_or("").to_string(),
                    variants.join(", "),
                    d["markers"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|m| m.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                    d["origin"].as_str().unwrap_or("").to_string(),
                ];
                t.add_row(row.iter().map(|c| printable(c).into_owned()).collect::<Vec<_>>());
            }
            format!("{t}\n")
        }
    };
    write_listing(text.as_bytes())
}

fn run(files: Vec<PathBuf>, c: Common, reports_only: bool) -> ExitCode {
    let policy = match policy_of(&c) {
        Ok(p) => p,
        Err(e) => {
            report_error(c.error_format, &e);
            return e.exit_code();
        }
    };
    let definitions = match load_definitions(c.parsers.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            report_error(c.error_format, &e);
            return e.exit_code();
        }
    };
    // One input: its blocks are read on a second core (many inputs use the cores one file each).
    let opts = Options { definitions, policy, reports_only, pipelined: true, ready: None };
    let format = output_format(&c);
    let inputs: Vec<PathBuf> = if files.is_empty() { vec![PathBuf::from("-")] } else { files };
    let stdout = io::stdout();
    let mut out =
        Output::new(io::BufWriter::with_capacity(256 * 1024, stdout.lock()), format, &c, stdout.is_terminal());
    // The copy's target is opened last, after every other check of the command line: a file is
    // emptied only when nothing else can refuse the run.
    let mut tee: Option<TeeTarget> = match (&c.tee_file, c.tee) {
        (Some(p), _) => match open_tee_file(p, &inputs) {
            Ok(f) => Some(TeeTarget::new(p.display().to_string(), Box::new(f))),
            Err(e) => {
                report_error(c.error_format, &e);
                return e.exit_code();
            }
        },
        (None, true) => Some(TeeTarget::new("stderr".into(), Box::new(io::stderr()))),
        (None, false) => None,
    };
    if inputs.len() == 1 || tee.is_some() {
        // One input (or a copy to show live): runs go out as soon as they are found.
        for path in &inputs {
            let result = normalize_path(path, &opts, &mut out, tee.as_mut());
            // A copy that could not be written is an I/O error (said once); the report goes on.
            if let Some(e) = tee.as_mut().and_then(TeeTarget::take_error) {
                report_error(c.error_format, &e);
                out.worst = out.worst.max(e.exit_code());
            }
            if let Err(e) = result {
                if matches!(e, Error::Write { .. }) {
                    return out.stopped(c.error_format, &e);
                }
                report_error(c.error_format, &e);
                out.worst = out.worst.max(e.exit_code());
            }
        }
    } else {
        // Many inputs: read in parallel on all cores, reported in input order, a window of files
        // at a time: the output starts early, and memory holds one window's runs, not all of them.
        use rayon::prelude::*;
        let opts = Options { pipelined: false, ..opts };
        // (16 files per core: on 1,440 small logs, 11 MB and 77 ms, against 39 MB and 92 ms for
        // all files at once.)
        let window = 16 * rayon::current_num_threads();
        for files in inputs.chunks(window) {
            let results: Vec<(Collected, Result<usize, Error>)> = files
                .par_iter()
                .map(|path| {
                    let mut got = Collected::default();
                    let r = normalize_path(path, &opts, &mut got, None);
                    (got, r)
                })
                .collect();
            for (got, result) in results {
                if let Err(e) = out.replay(got) {
                    return out.stopped(c.error_format, &e);
                }
                if let Err(e) = result {
                    report_error(c.error_format, &e);
                    out.worst = out.worst.max(e.exit_code());
                }
            }
        }
    }
    if let Err(source) = out.finish() {
        return out.stopped(c.error_format, &Error::Write { output: "stdout".into(), source });
    }
    out.code()
}

/// Where `--tee` / `--tee-file` copies the input, and the first write to it that failed.
struct TeeTarget {
    name: String,
    out: Box<dyn Write + Send>,
    failed: Option<io::Error>,
    /// The failure was said: nothing more is copied, nor said again.
    stopped: bool,
}

impl TeeTarget {
    fn new(name: String, out: Box<dyn Write + Send>) -> TeeTarget {
        TeeTarget { name, out, failed: None, stopped: false }
    }

    /// Copy bytes through, at once (someone is watching). After a failed write, nothing more is
    /// copied: the failure is kept to be said once.
    fn copy(&mut self, bytes: &[u8]) {
        if self.failed.is_some() || self.stopped || bytes.is_empty() {
            return;
        }
        if let Err(e) = self.out.write_all(bytes).and_then(|_| self.out.flush()) {
            self.failed = Some(e);
        }
    }

    /// The failed write as an error (exit 4), once.
    fn take_error(&mut self) -> Option<Error> {
        let source = self.failed.take()?;
        self.stopped = true;
        Some(Error::Write { output: self.name.clone(), source })
    }
}

/// What a file is, whatever name reaches it (a symlink, a hard link, `./a` or `dir/../a`).
#[cfg(unix)]
fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// `--tee-file PATH`, opened for the copy once it is known not to be an input: a path that is
/// one of the inputs (the same file by any name), the file standard input reads (`<
/// run.log`, read or not), or the file standard output writes (the report) is refused (exit 2),
/// and a file that exists is emptied only then. The file is opened first (without emptying it) and the
/// inputs compared with the file opened, so that the file compared is the file written.
fn open_tee_file(path: &Path, inputs: &[PathBuf]) -> Result<File, Error> {
    let name = path.display().to_string();
    let refuse = |why: String| Error::Usage(format!("--tee-file {name}: {why}; nothing was written to it"));
    if path.as_os_str() == "-" {
        return Err(refuse("standard output holds the report (--tee copies to standard error)".into()));
    }
    let write_error = |source| Error::Write { output: name.clone(), source };
    let (file, created) = match File::options().write(true).create_new(true).open(path) {
        Ok(f) => (f, true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            (File::options().write(true).open(path).map_err(write_error)?, false)
        }
        Err(e) => return Err(write_error(e)),
    };
    let meta = file.metadata().map_err(write_error)?;
    let clash = tee_clash(path, &meta, inputs);
    if let Some(why) = clash {
        if created {
            let _ = std::fs::remove_file(path);
        }
        return Err(refuse(why));
    }
    if meta.is_file() && meta.len() > 0 {
        file.set_len(0).map_err(write_error)?;
    }
    Ok(file)
}

/// Why the copy's file (opened at `path`, `meta`) may not be written, if it may not.
fn tee_clash(path: &Path, meta: &std::fs::Metadata, inputs: &[PathBuf]) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let target = identity(meta);
        let of_fd =
            |fd: std::os::fd::BorrowedFd| fd.try_clone_to_owned().ok().and_then(|fd| File::from(fd).metadata().ok());
        for input in inputs {
            if input.as_os_str() != "-" && std::fs::metadata(input).is_ok_and(|m| identity(&m) == target) {
                return Some(format!("it is the input {}", input.display()));
            }
        }
        // Standard input's file is taken as an input even when named inputs are given: it was
        // handed to the command (`< run.log`), and is never written.
        if of_fd(io::stdin().as_fd()).is_some_and(|m| identity(&m) == target) {
            return Some("it is the file standard input reads, an input".into());
        }
        // The report's own file (`> out.json`): the copy would be mixed into it. Only a regular
        // file: `/dev/null` for both is no harm.
        if meta.is_file() && of_fd(io::stdout().as_fd()).is_some_and(|m| identity(&m) == target) {
            return Some("it is the file standard output writes the report to".into());
        }
        let _ = path;
        None
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        let target = std::fs::canonicalize(path).ok()?;
        inputs
            .iter()
            .find(|i| std::fs::canonicalize(i).is_ok_and(|c| c == target))
            .map(|i| format!("it is the input {}", i.display()))
    }
}

/// `bench-normalize run -- <client command>`: run the client ([`bench_normalize::client`]) and
/// report its run as the other modes report theirs. The exit code is the report's, or 6 when the
/// client failed (which wins: the agent must know the benchmark did not finish).
fn run_client(command: &[String], settings: &bench_normalize::client::Settings, c: Common) -> ExitCode {
    let setup = policy_of(&c).and_then(|policy| Ok((policy, load_definitions(c.parsers.as_deref())?)));
    let (policy, definitions) = match setup {
        Ok(s) => s,
        Err(e) => {
            report_error(c.error_format, &e);
            return e.exit_code();
        }
    };
    let opts = Options { definitions, policy, reports_only: false, pipelined: false, ready: None };
    let outcome = match bench_normalize::client::run(command, settings, &opts, Box::new(io::stderr())) {
        Ok(o) => o,
        Err(e) => {
            report_error(c.error_format, &e);
            return e.exit_code();
        }
    };
    let stdout = io::stdout();
    let mut out = Output::new(io::BufWriter::new(stdout.lock()), output_format(&c), &c, stdout.is_terminal());
    for w in &outcome.warnings {
        report_run_warning(c.error_format, w);
    }
    for e in outcome.diagnostics {
        report_error(c.error_format, &e);
        out.worst = out.worst.max(e.exit_code());
    }
    for run in outcome.runs {
        if let Err(e) = out.run(run) {
            return out.stopped(c.error_format, &e);
        }
    }
    if let Err(source) = out.finish() {
        return out.stopped(c.error_format, &Error::Write { output: "stdout".into(), source });
    }
    match outcome.failed {
        Some(e) => {
            report_error(c.error_format, &e);
            out.code().max(e.exit_code())
        }
        None => out.code(),
    }
}

/// `bench-normalize compare BASELINE OTHER...` ([`bench_normalize::compare`]): each side read
/// (errors said, as for logs), lined up and compared; the exit code is the highest of the inputs'
/// errors and the comparison's own (a rejected run 1, an unusable run or no pair 3).
fn compare(a: CompareArgs) -> ExitCode {
    use bench_normalize::compare;
    let setup =
        compare::KeyField::parse_list(&a.key).and_then(|key| Ok((key, load_definitions(a.parsers.as_deref())?)));
    let (key, definitions) = match setup {
        Ok(s) => s,
        Err(e) => {
            report_error(a.error_format, &e);
            return e.exit_code();
        }
    };
    let policy = Policy { strict: a.strict, tolerances: Tolerances::default() };
    let opts = Options { definitions, policy, reports_only: false, pipelined: false, ready: None };
    let mut worst = ExitCode::Ok;
    let mut sides = Vec::new();
    for arg in std::iter::once(&a.baseline).chain(&a.others) {
        let (side, errors) = compare::read_side(arg, &opts);
        for e in errors {
            report_error(a.error_format, &e);
            worst = worst.max(e.exit_code());
        }
        for run in side.runs.iter().filter(|r| r.verdict != Verdict::Accepted) {
            report_rejection(a.error_format, run, a.strict);
        }
        sides.push(side);
    }
    let (baseline, others) = sides.split_first().expect("the baseline is a required argument");
    let comparison = compare::compare(baseline, others, &key);
    let stdout = io::stdout();
    let text = match a.format {
        CompareFmt::Table => compare::table(&comparison, color_on(stdout.is_terminal())),
        CompareFmt::Markdown => compare::markdown(&comparison),
        CompareFmt::Json => {
            let mut t = serde_json::to_string_pretty(&comparison).expect("a comparison serializes");
            t.push('\n');
            t
        }
    };
    let code = worst.max(comparison.exit_code());
    let mut out = stdout.lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(source) => {
            report_error(a.error_format, &Error::Write { output: "stdout".into(), source });
            code.max(ExitCode::Io)
        }
    }
}

/// The policy the flags give, or a usage error for a tolerance that is no number >= 0.
fn policy_of(c: &Common) -> Result<Policy, Error> {
    for (name, v) in [
        ("--capacity-tolerance", c.capacity_tolerance),
        ("--e2e-capacity-tolerance", c.e2e_capacity_tolerance),
        ("--throughput-tolerance", c.throughput_tolerance),
        ("--tpot-tolerance", c.tpot_tolerance),
        ("--itl-chunk-ratio", c.itl_chunk_ratio),
        ("--token-count-tolerance", c.token_count_tolerance),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(Error::Usage(format!("{name} must be a finite number >= 0, got {v}")));
        }
    }
    Ok(Policy {
        strict: c.strict,
        tolerances: Tolerances {
            capacity: c.capacity_tolerance,
            e2e_capacity: c.e2e_capacity_tolerance,
            throughput: c.throughput_tolerance,
            tpot_agreement: c.tpot_tolerance,
            itl_chunk_ratio: c.itl_chunk_ratio,
            token_count: c.token_count_tolerance,
        },
    })
}

fn output_format(c: &Common) -> OutputFormat {
    match (c.explain, c.format) {
        (true, _) => OutputFormat::Explain,
        (_, Fmt::Json) => OutputFormat::Json,
        (_, Fmt::Jsonl) => OutputFormat::Jsonl,
        (_, Fmt::Table) => OutputFormat::Table,
        (_, Fmt::Csv) => OutputFormat::Csv,
        (_, Fmt::Dstack) => OutputFormat::Dstack,
        (_, Fmt::DstackE2e) => OutputFormat::DstackE2e,
        (_, Fmt::LlmdBr) => OutputFormat::LlmdBr,
    }
}

/// A warning of `run` about the command (not about a run), on stderr.
fn report_run_warning(format: ErrorFormat, message: &str) {
    let mut err = io::stderr().lock();
    let _ = match format {
        ErrorFormat::Human => writeln!(err, "bench-normalize: warning: {message}"),
        ErrorFormat::Json => writeln!(err, "{}", serde_json::json!({ "code": "warning", "message": message })),
    };
}

/// Read one input (a path, or `-` for stdin), copying it to `tee` as it is read.
fn normalize_path<S: Sink + Reading>(
    path: &std::path::Path,
    opts: &Options,
    sink: &mut S,
    tee: Option<&mut TeeTarget>,
) -> Result<usize, Error> {
    let name = path.display().to_string();
    let file = if name == "-" {
        stdin_file()
    } else {
        match File::open(path) {
            Ok(f) => Some(f),
            Err(source) => return Err(Error::Io { input: name, source }),
        }
    };
    // A regular file not copied anywhere is read to its end anyway: by the library as a whole (a
    // JSON file in place). A pipe or a terminal streams, and each run goes out the moment its
    // block ends.
    let whole = tee.is_none() && file.as_ref().is_some_and(|f| f.metadata().is_ok_and(|m| m.is_file()));
    sink.reading(!whole);
    // A stream is asked whether it has bytes before a read: only a read that would wait waits
    // for the second core's runs first.
    let probe = if whole { None } else { readiness(file.as_ref()) };
    let opts = Options { ready: probe.as_ref().map(|p| p as &(dyn Fn() -> bool + Sync)), ..*opts };
    let reader: Box<dyn io::BufRead> = match file {
        Some(f) if whole => return bench_normalize::normalize_file(f, &name, &opts, sink),
        Some(f) => Box::new(BufReader::with_capacity(256 * 1024, f)),
        None => Box::new(BufReader::with_capacity(256 * 1024, io::stdin())),
    };
    match tee {
        Some(w) => normalize(Tee { inner: reader, copy: w }, &name, &opts, sink),
        None => normalize(reader, &name, &opts, sink),
    }
}

/// Whether a stream (`file`, or stdin) has bytes to read at once, or is at its end: whether a
/// read would not wait (`poll(2)` of its descriptor).
#[cfg(unix)]
fn readiness(file: Option<&File>) -> Option<impl Fn() -> bool + Sync + use<>> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use std::os::fd::AsFd;
    let fd = match file {
        Some(f) => f.as_fd().try_clone_to_owned(),
        None => io::stdin().as_fd().try_clone_to_owned(),
    };
    let fd = fd.ok()?;
    Some(move || {
        poll(&mut [PollFd::new(&fd, PollFlags::IN)], Some(&Timespec { tv_sec: 0, tv_nsec: 0 })).is_ok_and(|n| n > 0)
    })
}

#[cfg(not(unix))]
fn readiness(_: Option<&File>) -> Option<fn() -> bool> {
    None
}

/// Standard input as a file when it is a regular file read from its start (`bench-normalize <
/// run.log`), so that it is read as a named file would be; `None` for a pipe or a terminal, which
/// stream, and for a file already partly read by someone else (it is read from where it stands).
fn stdin_file() -> Option<File> {
    #[cfg(unix)]
    {
        use std::io::Seek;
        use std::os::fd::AsFd;
        let mut f = File::from(io::stdin().as_fd().try_clone_to_owned().ok()?);
        let regular = f.metadata().is_ok_and(|m| m.is_file());
        (regular && f.stream_position().is_ok_and(|at| at == 0)).then_some(f)
    }
    #[cfg(not(unix))]
    None
}

/// A reader that copies what is consumed to a writer, as it is consumed. A failed copy does not
/// stop the reading (the report is still made); it is said after the input, exit 4.
struct Tee<'w, R> {
    inner: R,
    copy: &'w mut TeeTarget,
}

impl<R: io::BufRead> io::Read for Tee<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.copy.copy(&buf[..n]);
        Ok(n)
    }
}

impl<R: io::BufRead> io::BufRead for Tee<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            self.copy.copy(&buf[..n.min(buf.len())]);
        }
        self.inner.consume(n);
    }
}

/// What one input gave, kept to be reported in input order.
enum Event {
    Run(Box<Run>),
    Diagnostic(Error),
}

/// A sink told how its input is read.
trait Reading {
    /// `streams`: the input is a pipe, a terminal or copied live (`--tee`): someone may be waiting
    /// for each run as its block ends. Otherwise it is a file read to its end anyway.
    fn reading(&mut self, _streams: bool) {}
}

#[derive(Default)]
struct Collected(Vec<Event>);

impl Reading for Collected {}

impl Sink for Collected {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.0.push(Event::Run(Box::new(run)));
        Ok(())
    }

    fn diagnostic(&mut self, error: Error) {
        self.0.push(Event::Diagnostic(error));
    }
}

/// Collects runs for one JSON document, or prints each as it completes (JSONL).
struct Output<W: Write> {
    out: W,
    format: OutputFormat,
    runs: Vec<Run>,
    rejected: bool,
    error_format: ErrorFormat,
    worst: ExitCode,
    strict: bool,
    csv: emit::CsvWriter,
    /// The JSON document, written a run at a time.
    json: emit::JsonReport,
    to_terminal: bool,
    /// The input being read streams ([`Reading`]).
    input_streams: bool,
}

impl<W: Write> Reading for Output<W> {
    fn reading(&mut self, streams: bool) {
        self.input_streams = streams;
    }
}

impl<W: Write> Output<W> {
    /// An output of `format` to `out` (a terminal when `to_terminal`: pretty JSON, colour), with
    /// the command line's error format and strictness.
    fn new(out: W, format: OutputFormat, c: &Common, to_terminal: bool) -> Output<W> {
        Output {
            out,
            format,
            runs: Vec::new(),
            rejected: false,
            error_format: c.error_format,
            worst: ExitCode::Ok,
            strict: c.strict,
            csv: emit::CsvWriter::new(),
            json: emit::JsonReport::new(to_terminal),
            to_terminal,
            input_streams: false,
        }
    }

    fn code(&self) -> ExitCode {
        if self.rejected { self.worst.max(ExitCode::Rejected) } else { self.worst }
    }

    /// Hand what one input's reading collected on to this sink, in order; a failed stdout stops
    /// it (the error is returned).
    fn replay(&mut self, got: Collected) -> Result<(), Error> {
        for event in got.0 {
            match event {
                Event::Run(run) => self.run(*run)?,
                Event::Diagnostic(e) => self.diagnostic(e),
            }
        }
        Ok(())
    }

    /// The exit code when the output failed, which ends the run: a closed stdout (`| head`) is
    /// no error; another failure (a full disk) is said once.
    fn stopped(&self, format: ErrorFormat, e: &Error) -> ExitCode {
        if is_broken_pipe(e) {
            return self.code();
        }
        report_error(format, e);
        self.code().max(ExitCode::Io)
    }

    /// What was written of a run; a streamed run is flushed when someone is watching (stdout is
    /// a terminal, so that it keeps pace with stderr) or waiting (the input streams, `tail -f
    /// log |`). A file read whole goes out a buffer at a time.
    fn written(&mut self, written: io::Result<()>) -> Result<(), Error> {
        let flush = self.format.streams() && (self.input_streams || self.to_terminal);
        written
            .and_then(|_| if flush { self.out.flush() } else { Ok(()) })
            .map_err(|source| Error::Write { output: "stdout".into(), source })
    }

    /// A rejected run is said so on stderr, and sets the exit code.
    fn note_verdict(&mut self, run: &Run) {
        match run.verdict {
            Verdict::Rejected => {
                self.rejected = true;
                report_rejection(self.error_format, run, self.strict);
            }
            // Nothing usable: exit 3, as for an input with no result, and say what is missing.
            Verdict::Unusable => {
                self.worst = self.worst.max(ExitCode::NoResult);
                report_rejection(self.error_format, run, self.strict);
            }
            Verdict::Accepted => {}
        }
    }

    /// Write what the format collects until the end (table, dstack objects), or the end of the
    /// JSON document.
    fn finish(&mut self) -> io::Result<()> {
        if self.format == OutputFormat::Json {
            self.json.finish(&mut self.out)?;
        }
        let runs = std::mem::take(&mut self.runs);
        if !runs.is_empty() {
            match self.format {
                OutputFormat::Table => self.out.write_all(emit::table(&runs, color_on(self.to_terminal)).as_bytes())?,
                OutputFormat::Dstack => {
                    let mut all = Vec::new();
                    // A rejected run (said on stderr, exit 1) is not written: what dstack stores
                    // must be figures that passed every rule.
                    for run in runs.iter().filter(|r| r.verdict == Verdict::Accepted) {
                        match emit::dstack(run) {
                            Ok(v) => all.push(v),
                            Err(u) => {
                                let e = unwritable(run, "dstack's benchmark metrics", &u);
                                report_error(self.error_format, &e);
                                self.worst = self.worst.max(e.exit_code());
                            }
                        }
                    }
                    if !all.is_empty() {
                        let value = if runs.len() == 1 { all.remove(0) } else { serde_json::Value::Array(all) };
                        serde_json::to_writer_pretty(&mut self.out, &value)?;
                        self.out.write_all(b"\n")?;
                    }
                }
                OutputFormat::DstackE2e => {
                    let mut all = Vec::new();
                    for run in runs.iter().filter(|r| r.verdict == Verdict::Accepted) {
                        let (metrics, warnings) = emit::dstack_e2e_metrics(run);
                        for w in warnings {
                            report_warning(self.error_format, run, &format!("dstack-e2e: {w}"));
                        }
                        all.push(metrics);
                    }
                    if !all.is_empty() {
                        let value = if runs.len() == 1 { all.remove(0) } else { serde_json::Value::Array(all) };
                        serde_json::to_writer_pretty(&mut self.out, &value)?;
                        self.out.write_all(b"\n")?;
                    }
                }
                OutputFormat::Json
                | OutputFormat::Jsonl
                | OutputFormat::Csv
                | OutputFormat::LlmdBr
                | OutputFormat::Explain => {}
            }
        }
        self.out.flush()
    }
}

impl<W: Write> Sink for Output<W> {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.note_verdict(&run);
        let written = match self.format {
            OutputFormat::Table | OutputFormat::Dstack | OutputFormat::DstackE2e => {
                self.runs.push(run);
                Ok(())
            }
            OutputFormat::Json => self.json.run(&mut self.out, &run),
            OutputFormat::Jsonl => emit::write_jsonl(&mut self.out, &run),
            OutputFormat::Csv => self.csv.write(&mut self.out, &run),
            OutputFormat::Explain => self.out.write_all(emit::explain(&run).as_bytes()),
            // What llm-d stores must pass every rule: a rejected or unusable run is said so (its
            // own diagnostic names why), not written.
            OutputFormat::LlmdBr if run.verdict != Verdict::Accepted => {
                report_warning(
                    self.error_format,
                    &run,
                    &format!("llmd-br: not written: the run is {}", run.verdict.as_str()),
                );
                Ok(())
            }
            OutputFormat::LlmdBr => bench_normalize::llmd::write_line(&mut self.out, &run),
        };
        self.written(written)
    }

    fn diagnostic(&mut self, error: Error) {
        // The exit code is at least the diagnostic's (a malformed JSON Lines line among good
        // ones is exit 3, as its `exit_code` says).
        self.worst = self.worst.max(error.exit_code());
        report_error(self.error_format, &error);
    }

    fn render(&self) -> Option<bench_normalize::Render> {
        // A compact JSON document's runs are its JSON Lines lines, joined.
        (self.format == OutputFormat::Jsonl || self.format == OutputFormat::Json && !self.to_terminal)
            .then_some(render_jsonl)
    }

    fn rendered(&mut self, run: Run, bytes: Vec<u8>) -> Result<(), Error> {
        self.note_verdict(&run);
        let written = match self.format {
            OutputFormat::Json => self.json.compact(&mut self.out, &bytes),
            _ => self.out.write_all(&bytes),
        };
        self.written(written)
    }
}

/// A run as its JSON Lines line (what [`emit::write_jsonl`] writes).
fn render_jsonl(run: &Run) -> Option<Vec<u8>> {
    let mut line = Vec::with_capacity(8 * 1024);
    emit::write_jsonl(&mut line, run).ok()?;
    Some(line)
}

/// The error for a run that an output format cannot hold.
fn unwritable(run: &Run, format: &str, u: &emit::Unwritable) -> Error {
    let at = match run.source.first_line {
        Some(l) => format!("{}:{l}", run.source.input),
        None => run.source.input.clone(),
    };
    Error::Unwritable {
        at,
        input: run.source.input.clone(),
        line: run.source.first_line,
        run: run.source.block,
        format: format.to_string(),
        message: u.message(),
    }
}

/// A warning about one run (a figure that cannot be known), on stderr.
fn report_warning(format: ErrorFormat, run: &Run, message: &str) {
    let mut err = io::stderr().lock();
    let _ = match format {
        ErrorFormat::Human => {
            writeln!(err, "bench-normalize: warning: {}: run {}: {}", run_at(run), run.source.block, printable(message))
        }
        ErrorFormat::Json => writeln!(
            err,
            "{}",
            serde_json::json!({ "code": "warning", "message": message, "input": run.source.input, "line": run.source.first_line, "column": null, "run": run.source.block, "exit_code": ExitCode::Ok as i32 })
        ),
    };
}

fn report_error(format: ErrorFormat, e: &Error) {
    let mut err = io::stderr().lock();
    let _ = match format {
        ErrorFormat::Human => {
            let styled = color_on(io::stderr().is_terminal());
            writeln!(err, "{}", bench_normalize::error::render_human(e, styled))
        }
        ErrorFormat::Json => {
            let (line, column) = e.position();
            let obj = serde_json::json!({
                "code": e.code(),
                "message": e.message(),
                "input": e.input(),
                "line": line,
                "column": column,
                "exit_code": e.exit_code() as i32,
            });
            writeln!(err, "{obj}")
        }
    };
}

/// One line on stderr per failed rule of a rejected run, so a person sees why without reading
/// the JSON (which says the same in `checks`).
fn report_rejection(format: ErrorFormat, run: &Run, strict: bool) {
    let mut err = io::stderr().lock();
    let at = run_at(run);
    use bench_normalize::report::{Check, Severity, Status};
    let strict_or_error = |c: &&Check| {
        c.status == Status::Fail && (c.severity == Severity::Error || (strict && c.severity == Severity::Warning))
    };
    // An unusable run is said so by its key-figures check alone (exit 3).
    let unusable = run.verdict == Verdict::Unusable;
    let (word, code) = if unusable { ("unusable", "unusable") } else { ("rejected", "rejected") };
    for c in run.checks.iter().filter(strict_or_error).filter(|c| !unusable || c.id == "key-figures") {
        let _ = match format {
            ErrorFormat::Human => {
                let (id, message) = (printable(&c.id), printable(&c.message));
                writeln!(err, "bench-normalize: {at}: run {} {word}: {id}: {message}", run.source.block)
            }
            ErrorFormat::Json => writeln!(
                err,
                "{}",
                serde_json::json!({
                    "code": code,
                    "rule": c.id,
                    "severity": c.severity,
                    "message": c.message,
                    "input": run.source.input,
                    "line": run.source.first_line,
                    "column": null,
                    "run": run.source.block,
                    "exit_code": ExitCode::Rejected as i32,
                })
            ),
        };
    }
}

/// Where a run is, for a person: `input:line`, the input's name escaped (it may come from a
/// report's recorded `source.input`, or be a file name with a line break in it).
fn run_at(run: &Run) -> String {
    let input = printable(&run.source.input);
    match run.source.first_line {
        Some(l) => format!("{input}:{l}"),
        None => input.into_owned(),
    }
}

fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Write { output, source } if output == "stdout" && source.kind() == io::ErrorKind::BrokenPipe)
}
