//! Reading the inputs: one streamed as it arrives (its blocks on a second thread), many in
//! parallel on all cores and reported in input order, or the run of a client (`run`).

use std::fs::File;
use std::io::{self, BufReader, IsTerminal};
use std::path::PathBuf;

use crate::cli::args::Common;
use crate::cli::diagnostics::{report_error, report_run_warning};
use crate::cli::load_definitions;
use crate::cli::output::{Collected, Output, Reading};
use crate::cli::tee::{Tee, TeeTarget, open_tee_file};
use crate::emit::OutputFormat;
use crate::objectives::Objectives;
use crate::pipeline::{self, Config, Out};
use crate::validate::{Policy, Tolerances};
use crate::{Error, ExitCode, Options};

pub(crate) fn normalize_inputs(files: Vec<PathBuf>, mut c: Common, reports_only: bool) -> ExitCode {
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
    let opts = Config { definitions, policy, reports_only, pipelined: true, ready: None };
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

/// `bench-normalize run -- <client command>`: run the client ([`crate::client`]) and
/// report its run as the other modes report theirs. The exit code is the report's, or 6 when the
/// client failed (which wins: the agent must know the benchmark did not finish).
pub(crate) fn run_client(command: &[String], settings: &crate::client::Settings, mut c: Common) -> ExitCode {
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
    let outcome = match crate::client::run(command, settings, &opts, Box::new(io::stderr())) {
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
            crate::objectives::parse(&v).map(Some).map_err(|e| Error::Usage(format!("${SLO_VAR}: {e}")))
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
        None => Box::new(BufReader::with_capacity(256 * 1024, io::stdin())),
    };
    match tee {
        Some(w) => pipeline::read(Tee { inner: reader, copy: w }, &name, &opts, sink, true),
        None => pipeline::read(reader, &name, &opts, sink, true),
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
