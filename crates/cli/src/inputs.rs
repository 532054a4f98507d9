//! Reading the inputs: one streamed as it arrives (its blocks on a second thread), many in
//! parallel on all cores and reported in input order, or the run of a client (`run`).

use std::fs::File;
use std::io::{self, BufReader, IsTerminal};
use std::path::PathBuf;

use crate::args::Common;
use crate::diagnostics::{STDIN_NOTICE, report_error, report_notice, report_run_warning};
use crate::guard::Guard;
use crate::output::{Collected, Output, Reading, Stdout};
use crate::tee::{Tee, TeeTarget};
use crate::{load_definitions, open_diagnostics};
use bench_normalize_core::emit::OutputFormat;
use bench_normalize_core::objectives::Objectives;
use bench_normalize_core::pipeline::{self, Config, Out};
use bench_normalize_core::{Error, ExitCode, Options};
use bench_normalize_core::{Policy, Tolerances};

pub(crate) fn normalize_inputs(files: Vec<PathBuf>, mut c: Common, reports_only: bool) -> ExitCode {
    let inputs: Vec<PathBuf> = if files.is_empty() { vec![PathBuf::from("-")] } else { files };
    // Every writer is held to the inputs before anything is read or written: the diagnostics'
    // copy first (so that what follows is in it), then the report's stdout and stderr.
    let guard = Guard::new(&inputs);
    if let Err(code) = open_diagnostics(c.diagnostics_file.as_deref(), &guard, c.error_format) {
        return code;
    }
    if let Err(e) = guard.streams() {
        report_error(c.error_format, &e);
        return e.exit_code();
    }
    match objectives_of(&c) {
        Ok(o) => c.slo = o,
        Err(e) => {
            report_error(c.error_format, &e);
            return e.exit_code();
        }
    }
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
    let opts = Config {
        definitions,
        policy,
        reports_only,
        pipelined: true,
        ready: None,
        budget: &bench_normalize_core::input::decode::UNBOUNDED,
    };
    let format = output_format(&c);
    let to_terminal = io::stdout().is_terminal();
    let mut out = Output::new(io::BufWriter::with_capacity(256 * 1024, Stdout::new()), format, &c, to_terminal);
    // The copy's target is opened last, after every other check of the command line and once
    // every input has opened: a file is emptied only when nothing else can refuse the run (a
    // mistyped input name does not cost the previous copy).
    let mut tee: Option<TeeTarget> = match (&c.tee_file, c.tee) {
        (Some(p), _) => match guard
            .check_target("--tee-file", p)
            .and_then(|()| guard.inputs_open())
            .and_then(|()| guard.open_stream("--tee-file", p))
        {
            Ok(f) => Some(TeeTarget::new(p.display().to_string(), Box::new(f))),
            Err(e) => {
                report_error(c.error_format, &e);
                return e.exit_code();
            }
        },
        (None, true) => Some(TeeTarget::new("stderr".into(), Box::new(io::stderr()))),
        (None, false) => None,
    };
    // A person at a terminal with no file named: say what the silence is.
    if inputs.iter().any(|p| p.as_os_str() == "-") && io::stdin().is_terminal() {
        report_notice(c.error_format, STDIN_NOTICE);
    }
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
                let e = explained(e, c.explain, definitions);
                report_error(c.error_format, &e);
                out.worst = out.worst.max(e.exit_code());
            }
        }
    } else if let Some(results) = read_two(&inputs, &opts) {
        // Two inputs: a client's printed block and its result file are one run.
        for (got, result) in results {
            if let Err(e) = out.replay(got) {
                return out.stopped(c.error_format, &e);
            }
            if let Err(e) = result {
                report_error(c.error_format, &e);
                out.worst = out.worst.max(e.exit_code());
            }
        }
    } else {
        // Many inputs: read in parallel on all cores, reported in input order, a window of files
        // at a time: the output starts early, and memory holds one window's runs, not all of them.
        use rayon::prelude::*;
        let opts = Config { pipelined: false, ..opts };
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
                    let e = explained(e, c.explain, definitions);
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

/// Two inputs (neither standard input), read in parallel; when they are a client's printed
/// block and its result file (each one run of the same tool, one `stdout`, the other its
/// `result-json`/`result-jsonl`), one run, as `run` reads them ([`crate::client::combine`]: the
/// file's exact figures, the printed ones checked against them by `output-matches-result-file`,
/// which rejects a pair from different runs). `None` for any other number of inputs.
fn read_two(inputs: &[PathBuf], opts: &Config) -> Option<Vec<(Collected, Result<usize, Error>)>> {
    use crate::output::Event;
    use bench_normalize_core::report::Format;
    let [a, b] = inputs else { return None };
    if opts.reports_only || a.as_os_str() == "-" || b.as_os_str() == "-" {
        return None;
    }
    let opts = Config { pipelined: false, ..*opts };
    let read = |path: &PathBuf| {
        let mut got = Collected::default();
        let r = normalize_path(path, &opts, &mut got, None);
        (got, r)
    };
    let (first, second) = rayon::join(|| read(a), || read(b));
    let single = |got: &(Collected, Result<usize, Error>)| match (&got.0.0[..], &got.1) {
        ([Event::Run(run)], Ok(_)) => Some(run.source.clone()),
        _ => None,
    };
    let pair = match (single(&first), single(&second)) {
        (Some(x), Some(y)) if x.tool == y.tool => match (x.format, y.format) {
            (Format::Stdout, Format::ResultJson | Format::ResultJsonl) => Some(false),
            (Format::ResultJson | Format::ResultJsonl, Format::Stdout) => Some(true),
            _ => None,
        },
        _ => None,
    };
    let Some(swapped) = pair else { return Some(vec![first, second]) };
    let (log, file) = if swapped { (second, first) } else { (first, second) };
    let take = |got: Collected| match got.0.into_iter().next() {
        Some(Event::Run(run)) => vec![*run],
        _ => Vec::new(),
    };
    let runs = crate::client::combine(take(log.0), take(file.0), &opts.policy);
    let n = runs.len();
    Some(vec![(Collected(runs.into_iter().map(|r| Event::Run(Box::new(r))).collect()), Ok(n))])
}

/// `bench-normalize run -- <client command>`: run the client ([`crate::client`]) and
/// report its run as the other modes report theirs. The exit code is the report's, or 6 when the
/// client failed (which wins: the agent must know the benchmark did not finish).
pub(crate) fn run_client(command: &[String], settings: &crate::client::Settings, mut c: Common) -> ExitCode {
    // `--diagnostics-file`: the diagnostics alone, apart from the client's output on stderr.
    if let Err(code) = open_diagnostics(c.diagnostics_file.as_deref(), &Guard::none(), c.error_format) {
        return code;
    }
    // Before the client starts: a bad objective must not cost a benchmark run.
    match objectives_of(&c) {
        Ok(o) => c.slo = o,
        Err(e) => {
            report_error(c.error_format, &e);
            return e.exit_code();
        }
    }
    let setup = policy_of(&c).and_then(|policy| Ok((policy, load_definitions(c.parsers.as_deref())?)));
    let (policy, definitions) = match setup {
        Ok(s) => s,
        Err(e) => {
            report_error(c.error_format, &e);
            return e.exit_code();
        }
    };
    let opts = Options { definitions, policy, reports_only: false };
    let mut outcome = match crate::client::run(command, settings, &opts, Box::new(io::stderr())) {
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
    for e in std::mem::take(&mut outcome.diagnostics) {
        report_error(c.error_format, &e);
        out.worst = out.worst.max(e.exit_code());
    }
    let runs = std::mem::take(&mut outcome.runs);
    let mut code = None;
    for run in runs {
        if let Err(e) = out.run(run) {
            code = Some(out.stopped(c.error_format, &e));
            break;
        }
    }
    let code = code.unwrap_or_else(|| match out.finish() {
        Err(source) => out.stopped(c.error_format, &Error::Write { output: "stdout".into(), source }),
        Ok(()) => match &outcome.failed {
            Some(e) => {
                report_error(c.error_format, e);
                out.code().max(e.exit_code())
            }
            None => out.code(),
        },
    });
    // Nothing the client wrote is lost to a run that did not come out clean.
    if let Some(kept) = outcome.settle(matches!(code, ExitCode::Ok | ExitCode::ObjectivesMissed)) {
        report_run_warning(c.error_format, &kept);
    }
    code
}

/// With `--explain`, an input with no result names every banner pattern looked for (the
/// message otherwise names the tools only, and what the input lacks).
fn explained(e: Error, explain: bool, defs: &bench_normalize_core::Definitions) -> Error {
    match e {
        Error::NoResult { input, looked_for } if explain => Error::NoResult {
            input,
            looked_for: format!(
                "{looked_for}; banner patterns: {}",
                bench_normalize_core::detect::missing::patterns(defs)
            ),
        },
        e => e,
    }
}

/// The variable `--slo` defaults to.
const SLO_VAR: &str = "BENCH_NORMALIZE_SLO";

/// `--slo`, or else `$BENCH_NORMALIZE_SLO` when it is set and not blank (an empty variable is no
/// objective, as an unset one; an empty `--slo ''` is a usage error). Read here rather than by
/// clap, which takes an empty variable for an empty value, and whose message would print the
/// variable's text unescaped.
fn objectives_of(c: &Common) -> Result<Option<Objectives>, Error> {
    if c.slo.is_some() {
        return Ok(c.slo.clone());
    }
    match std::env::var_os(SLO_VAR) {
        None => Ok(None),
        Some(v) => {
            let v = v.to_string_lossy();
            if v.trim().is_empty() {
                return Ok(None);
            }
            bench_normalize_core::objectives::parse(&v).map(Some).map_err(|e| Error::Usage(format!("${SLO_VAR}: {e}")))
        }
    }
}

/// The policy the flags give, or a usage error for a tolerance that is no number >= 0.
pub(crate) fn policy_of(c: &Common) -> Result<Policy, Error> {
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

pub(crate) fn output_format(c: &Common) -> OutputFormat {
    if c.explain { OutputFormat::Explain } else { c.format }
}

/// Read one input (a path, or `-` for stdin), copying it to `tee` as it is read.
pub(crate) fn normalize_path<S: Out + Reading>(
    path: &std::path::Path,
    opts: &Config,
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
    let opts = Config { ready: probe.as_ref().map(|p| p as &(dyn Fn() -> bool + Sync)), ..*opts };
    let reader: Box<dyn io::BufRead> = match file {
        Some(f) if whole => return pipeline::read_file(f, &name, &opts, sink),
        Some(f) => Box::new(BufReader::with_capacity(256 * 1024, f)),
        None => Box::new(BufReader::with_capacity(256 * 1024, StickyEof { inner: io::stdin(), ended: false })),
    };
    match tee {
        Some(w) => pipeline::read(Tee { inner: reader, copy: w }, &name, &opts, sink, true),
        None => pipeline::read(reader, &name, &opts, sink, true),
    }
}

/// A reader whose end stays the end: a terminal gives end-of-file once per Ctrl-D, and the layers
/// that look at an input's start (compression, encoding, JSON or text) read again after it, so a
/// person had to press Ctrl-D three times.
struct StickyEof<R> {
    inner: R,
    ended: bool,
}

impl<R: io::Read> io::Read for StickyEof<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.ended = n == 0;
        Ok(n)
    }
}

/// Whether a stream (`file`, or stdin) has bytes to read at once, or is at its end: whether a
/// read would not wait (`poll(2)` of its descriptor).
#[cfg(unix)]
pub(crate) fn readiness(file: Option<&File>) -> Option<impl Fn() -> bool + Sync + use<>> {
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
pub(crate) fn readiness(_: Option<&File>) -> Option<fn() -> bool> {
    None
}

/// Standard input as a file when it is a regular file read from its start (`bench-normalize <
/// run.log`), so that it is read as a named file would be; `None` for a pipe or a terminal, which
/// stream, and for a file already partly read by someone else (it is read from where it stands).
pub(crate) fn stdin_file() -> Option<File> {
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
