//! The `bench-normalize` command: a thin shell around the library.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process;

use bench_normalize::emit::{self, OutputFormat};
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
/// unreadable as a result, 4 I/O error, 5 the client `run` ran failed.
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
    /// result file are read as one run. Exit code 5: the client failed (its result is still
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

    /// Copy the input through, unchanged and line by line as it arrives, to stderr (or FILE), so a
    /// piped benchmark still shows live: `vllm bench serve ... 2>&1 | bench-normalize --tee`.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    tee: Option<PathBuf>,

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
    /// dstack's preset `metrics` object (an array for several runs)
    Dstack,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ErrorFormat {
    Human,
    Json,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { ExitCode::Usage as i32 } else { 0 };
            let _ = e.print();
            process::exit(code);
        }
    };
    let (files, common, reports_only) = match cli.command {
        Some(Command::Check { file, common }) => (vec![file], common, true),
        Some(Command::Run { common, keep, as_given, command }) => {
            let settings = bench_normalize::client::Settings { keep, as_given };
            process::exit(run_client(&command, &settings, common) as i32)
        }
        Some(Command::Schema) => process::exit(print_schema() as i32),
        Some(Command::Parsers { format, parsers }) => process::exit(list_parsers(format, parsers) as i32),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "bench-normalize",
                &mut io::stdout(),
            );
            process::exit(0);
        }
        Some(Command::Man) => {
            let man = clap_mangen::Man::new(<Cli as clap::CommandFactory>::command());
            let code = if man.render(&mut io::stdout()).is_ok() { 0 } else { ExitCode::Io as i32 };
            process::exit(code);
        }
        None => (cli.files, cli.common, false),
    };
    process::exit(run(files, common, reports_only) as i32);
}

/// Colour only on a terminal, and never with NO_COLOR set.
fn color_on(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn print_schema() -> ExitCode {
    let schema = bench_normalize::schema::report_schema();
    let mut out = io::stdout().lock();
    match serde_json::to_writer_pretty(&mut out, &schema).map_err(io::Error::from).and_then(|_| writeln!(out)) {
        Ok(()) => ExitCode::Ok,
        Err(_) => ExitCode::Io,
    }
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
    let mut out = io::stdout().lock();
    let r = match format {
        ListFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &listing).map_err(io::Error::from).and_then(|_| writeln!(out))
        }
        ListFormat::Table => {
            let mut t = comfy_table::Table::new();
            t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
                .set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
            t.set_header(["id", "tool", "format", "variants", "detected by", "from"]);
            for d in listing.as_array().into_iter().flatten() {
                let variants: Vec<&str> =
                    d["variants"].as_array().into_iter().flatten().filter_map(|v| v["id"].as_str()).collect();
                t.add_row(vec![
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
                ]);
            }
            writeln!(out, "{t}")
        }
    };
    if r.is_ok() { ExitCode::Ok } else { ExitCode::Io }
}

fn run(files: Vec<PathBuf>, c: Common, reports_only: bool) -> ExitCode {
    for (name, v) in [
        ("--capacity-tolerance", c.capacity_tolerance),
        ("--e2e-capacity-tolerance", c.e2e_capacity_tolerance),
        ("--throughput-tolerance", c.throughput_tolerance),
        ("--tpot-tolerance", c.tpot_tolerance),
        ("--itl-chunk-ratio", c.itl_chunk_ratio),
        ("--token-count-tolerance", c.token_count_tolerance),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            report_error(c.error_format, &Error::Usage(format!("{name} must be a finite number >= 0, got {v}")));
            return ExitCode::Usage;
        }
    }
    let policy = Policy {
        strict: c.strict,
        tolerances: Tolerances {
            capacity: c.capacity_tolerance,
            e2e_capacity: c.e2e_capacity_tolerance,
            throughput: c.throughput_tolerance,
            tpot_agreement: c.tpot_tolerance,
            itl_chunk_ratio: c.itl_chunk_ratio,
            token_count: c.token_count_tolerance,
        },
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
    let format = match (c.explain, c.format) {
        (true, _) => OutputFormat::Explain,
        (_, Fmt::Json) => OutputFormat::Json,
        (_, Fmt::Jsonl) => OutputFormat::Jsonl,
        (_, Fmt::Table) => OutputFormat::Table,
        (_, Fmt::Csv) => OutputFormat::Csv,
        (_, Fmt::Dstack) => OutputFormat::Dstack,
    };
    let inputs: Vec<PathBuf> = if files.is_empty() { vec![PathBuf::from("-")] } else { files };
    let stdout = io::stdout();
    let to_terminal = stdout.is_terminal();
    let mut out = Output {
        out: io::BufWriter::with_capacity(256 * 1024, stdout.lock()),
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
    };
    let mut tee: Option<Box<dyn Write + Send>> = match &c.tee {
        None => None,
        Some(p) if p.as_os_str() == "-" => Some(Box::new(io::stderr())),
        Some(p) => match File::create(p) {
            Ok(f) => Some(Box::new(io::BufWriter::new(f))),
            Err(source) => {
                let e = Error::Write { output: p.display().to_string(), source };
                report_error(c.error_format, &e);
                return e.exit_code();
            }
        },
    };
    if inputs.len() == 1 || tee.is_some() {
        // One input (or a copy to show live): runs go out as soon as they are found.
        for path in &inputs {
            let result = normalize_path(path, &opts, &mut out, tee.as_mut());
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

/// `bench-normalize run -- <client command>`: run the client ([`bench_normalize::client`]) and
/// report its run as the other modes report theirs. The exit code is the report's, or 5 when the
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
    let to_terminal = stdout.is_terminal();
    let mut out = Output {
        out: io::BufWriter::new(stdout.lock()),
        format: output_format(&c),
        runs: Vec::new(),
        rejected: false,
        error_format: c.error_format,
        worst: ExitCode::Ok,
        strict: c.strict,
        csv: emit::CsvWriter::new(),
        json: emit::JsonReport::new(to_terminal),
        to_terminal,
        input_streams: false,
    };
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
    tee: Option<&mut Box<dyn Write + Send>>,
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

/// A reader that copies what is consumed to a writer, as it is consumed.
struct Tee<'w, R> {
    inner: R,
    copy: &'w mut Box<dyn Write + Send>,
}

impl<R: io::BufRead> io::Read for Tee<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let _ = self.copy.write_all(&buf[..n]).and_then(|_| self.copy.flush());
        Ok(n)
    }
}

impl<R: io::BufRead> io::BufRead for Tee<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            // A closed stderr does not stop the normalization.
            let _ = self.copy.write_all(&buf[..n.min(buf.len())]).and_then(|_| self.copy.flush());
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
        if run.verdict == Verdict::Rejected {
            self.rejected = true;
            report_rejection(self.error_format, run, self.strict);
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
                    for run in &runs {
                        let (metrics, warnings) = emit::dstack_metrics(run);
                        for w in warnings {
                            report_warning(self.error_format, run, &format!("dstack: {w}"));
                        }
                        all.push(metrics);
                    }
                    let value = if all.len() == 1 { all.remove(0) } else { serde_json::Value::Array(all) };
                    serde_json::to_writer_pretty(&mut self.out, &value)?;
                    self.out.write_all(b"\n")?;
                }
                OutputFormat::Json | OutputFormat::Jsonl | OutputFormat::Csv | OutputFormat::Explain => {}
            }
        }
        self.out.flush()
    }
}

impl<W: Write> Sink for Output<W> {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.note_verdict(&run);
        let written = match self.format {
            OutputFormat::Table | OutputFormat::Dstack => {
                self.runs.push(run);
                Ok(())
            }
            OutputFormat::Json => self.json.run(&mut self.out, &run),
            OutputFormat::Jsonl => emit::write_jsonl(&mut self.out, &run),
            OutputFormat::Csv => self.csv.write(&mut self.out, &run),
            OutputFormat::Explain => self.out.write_all(emit::explain(&run).as_bytes()),
        };
        self.written(written)
    }

    fn diagnostic(&mut self, error: Error) {
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

/// A warning about one run (a figure that cannot be known), on stderr.
fn report_warning(format: ErrorFormat, run: &Run, message: &str) {
    let mut err = io::stderr().lock();
    let at = match run.source.first_line {
        Some(l) => format!("{}:{l}", run.source.input),
        None => run.source.input.clone(),
    };
    let _ = match format {
        ErrorFormat::Human => writeln!(err, "bench-normalize: warning: {at}: run {}: {message}", run.source.block),
        ErrorFormat::Json => writeln!(
            err,
            "{}",
            serde_json::json!({ "code": "warning", "message": message, "input": run.source.input, "line": run.source.first_line, "column": null, "run": run.source.block })
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
    let at = match run.source.first_line {
        Some(l) => format!("{}:{l}", run.source.input),
        None => run.source.input.clone(),
    };
    use bench_normalize::report::{Check, Severity, Status};
    let strict_or_error = |c: &&Check| {
        c.status == Status::Fail && (c.severity == Severity::Error || (strict && c.severity == Severity::Warning))
    };
    for c in run.checks.iter().filter(strict_or_error) {
        let _ = match format {
            ErrorFormat::Human => {
                writeln!(err, "bench-normalize: {at}: run {} rejected: {}: {}", run.source.block, c.id, c.message)
            }
            ErrorFormat::Json => writeln!(
                err,
                "{}",
                serde_json::json!({
                    "code": "rejected",
                    "rule": c.id,
                    "severity": c.severity,
                    "message": c.message,
                    "input": run.source.input,
                    "line": run.source.first_line,
                    "column": null,
                    "run": run.source.block,
                })
            ),
        };
    }
}

fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Write { output, source } if output == "stdout" && source.kind() == io::ErrorKind::BrokenPipe)
}
