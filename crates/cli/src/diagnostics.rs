//! Diagnostics on stderr, for people or one JSON object a line for programs: errors, warnings,
//! the failed rules of a rejected run, and every failed warning of any run. Each goes out through
//! [`emit`], which also copies it to `--diagnostics-file` (`$BENCH_NORMALIZE_DIAGNOSTICS_FILE`)
//! when one is given: there, the diagnostic lines alone, without the client's output that `run`
//! shows on the same stderr.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;

use crate::args::ErrorFormat;
use bench_normalize_core::error::printable;
use bench_normalize_core::report::Verdict;
use bench_normalize_core::{Error, ExitCode, Run};

/// Colour only on a terminal, and never with NO_COLOR set.
pub(crate) fn color_on(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// `--diagnostics-file`: where every diagnostic is copied, once opened.
static COPY: Mutex<Option<(String, File)>> = Mutex::new(None);

/// Copy every diagnostic from now on into `file` (named `name`) as well.
pub(crate) fn copy_to(name: String, file: File) {
    *COPY.lock().unwrap_or_else(|p| p.into_inner()) = Some((name, file));
}

/// The copy could not be written (a full disk): said once on stderr, exit 4.
static COPY_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a write to `--diagnostics-file` failed (the exit code is then at least 4).
pub(crate) fn copy_failed() -> bool {
    COPY_FAILED.load(std::sync::atomic::Ordering::Relaxed)
}

/// One diagnostic: `text` on stderr (for a person, perhaps coloured), `plain` (the same without
/// colour) into the diagnostics file. Each ends with a newline.
pub(crate) fn emit(text: &str, plain: &str) {
    {
        let mut err = io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
    }
    let mut copy = COPY.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((name, f)) = copy.as_mut()
        && let Err(source) = f.write_all(plain.as_bytes()).and_then(|_| f.flush())
    {
        // Said once, on stderr only; nothing more is copied.
        let e = Error::Write { output: std::mem::take(name), source };
        *copy = None;
        COPY_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = writeln!(io::stderr().lock(), "{}", bench_normalize_core::error::render_human(&e, false));
    }
}

/// One line, the same on stderr and in the copy.
fn emit_line(line: std::fmt::Arguments) {
    let line = format!("{line}\n");
    emit(&line, &line);
}

/// What is said, once, when standard input is a terminal and is read.
pub(crate) const STDIN_NOTICE: &str =
    "reading a benchmark log from standard input (a terminal): paste it and end with Ctrl-D, or name a file";

/// A notice (no failure: exit code 0): standard input is being read from a terminal.
pub(crate) fn report_notice(format: ErrorFormat, message: &str) {
    match format {
        ErrorFormat::Human => emit_line(format_args!("bench-normalize: {message}")),
        ErrorFormat::Json => emit_line(format_args!(
            "{}",
            serde_json::json!({ "code": "notice", "message": message, "input": "-", "line": null, "column": null, "exit_code": ExitCode::Ok as i32 })
        )),
    }
}

/// A warning of `run` about the command (not about a run), on stderr.
pub(crate) fn report_run_warning(format: ErrorFormat, message: &str) {
    match format {
        ErrorFormat::Human => emit_line(format_args!("bench-normalize: warning: {message}")),
        ErrorFormat::Json => emit_line(format_args!(
            "{}",
            serde_json::json!({ "code": "warning", "message": message, "input": null, "line": null, "column": null, "exit_code": ExitCode::Ok as i32 })
        )),
    }
}

/// A warning about one run (a figure that cannot be known), on stderr.
pub(crate) fn report_warning(format: ErrorFormat, run: &Run, message: &str) {
    match format {
        ErrorFormat::Human => emit_line(format_args!(
            "bench-normalize: warning: {}: run {}: {}",
            run_at(run),
            run.source.block,
            printable(message)
        )),
        ErrorFormat::Json => emit_line(format_args!(
            "{}",
            serde_json::json!({ "code": "warning", "message": message, "input": run.source.input, "line": run.source.first_line, "column": null, "run": run.source.block, "exit_code": ExitCode::Ok as i32 })
        )),
    }
}

/// Every check of `run` that failed, one line each: the rules that reject it ([`report_rejection`],
/// for a rejected or unusable run), then each failed warning not said there, as a warning (exit
/// code 0 for it: the run stands). A failed `info` check is a finding about the run (its ITL is
/// per chunk), not a failure: it stays in the report.
pub(crate) fn report_checks(format: ErrorFormat, run: &Run, strict: bool) {
    use bench_normalize_core::report::{Severity, Status};
    if run.verdict != Verdict::Accepted {
        report_rejection(format, run, strict);
    }
    // Those a rejection line said already: a rejected run's failed warnings under --strict.
    let said = run.verdict == Verdict::Rejected && strict;
    for c in run.checks.iter().filter(|c| c.status == Status::Fail && c.severity == Severity::Warning) {
        if said {
            continue;
        }
        match format {
            ErrorFormat::Human => emit_line(format_args!(
                "bench-normalize: warning: {}: run {}: {}: {}",
                run_at(run),
                run.source.block,
                printable(c.id.as_str()),
                printable(&c.message)
            )),
            ErrorFormat::Json => emit_line(format_args!("{}", check_json(run, c, "warning", ExitCode::Ok))),
        }
    }
}

pub(crate) fn report_error(format: ErrorFormat, e: &Error) {
    match format {
        ErrorFormat::Human => {
            let styled = color_on(io::stderr().is_terminal());
            let text = format!("{}\n", bench_normalize_core::error::render_human(e, styled));
            let plain = if styled {
                format!("{}\n", bench_normalize_core::error::render_human(e, false))
            } else {
                text.clone()
            };
            emit(&text, &plain);
        }
        ErrorFormat::Json => emit_line(format_args!("{}", e.to_json())),
    }
}

/// One line on stderr for an objective an accepted run does not meet (`--slo`, exit 7).
pub(crate) fn report_objective(format: ErrorFormat, run: &Run, r: &bench_normalize_core::report::ObjectiveResult) {
    let message = format!(
        "{} {}: {}",
        r.objective,
        bench_normalize_core::objectives::status_words(r.status),
        bench_normalize_core::objectives::describe(r)
    );
    match format {
        ErrorFormat::Human => emit_line(format_args!(
            "bench-normalize: {}: run {}: objective {}",
            run_at(run),
            run.source.block,
            printable(&message)
        )),
        ErrorFormat::Json => emit_line(format_args!(
            "{}",
            serde_json::json!({
                "code": "objective",
                "status": r.status,
                "objective": r.objective,
                "message": message,
                "input": run.source.input,
                "line": run.source.first_line,
                "column": null,
                "run": run.source.block,
                "exit_code": ExitCode::ObjectivesMissed as i32,
            })
        )),
    }
}

/// A failed check of a run as `--error-format json` writes it: the diagnostic's fields with the
/// rule, its severity and the run.
fn check_json(run: &Run, c: &bench_normalize_core::report::Check, code: &str, exit: ExitCode) -> serde_json::Value {
    serde_json::json!({
        "code": code,
        "rule": c.id,
        "severity": c.severity,
        "message": c.message,
        "input": run.source.input,
        "line": run.source.first_line,
        "column": null,
        "run": run.source.block,
        "exit_code": exit as i32,
    })
}

/// One line on stderr per failed rule of a rejected run, so a person sees why without reading
/// the JSON (which says the same in `checks`).
pub(crate) fn report_rejection(format: ErrorFormat, run: &Run, strict: bool) {
    let at = run_at(run);
    use bench_normalize_core::report::{Check, Severity, Status};
    let strict_or_error = |c: &&Check| {
        c.status == Status::Fail && (c.severity == Severity::Error || (strict && c.severity == Severity::Warning))
    };
    // An unusable run is said so by its key-figures check alone (exit 3).
    let unusable = run.verdict == Verdict::Unusable;
    // The word in the human line and the diagnostic's `code`.
    let word = if unusable { "unusable" } else { "rejected" };
    for c in run
        .checks
        .iter()
        .filter(strict_or_error)
        .filter(|c| !unusable || c.id == bench_normalize_core::report::RuleId::KeyFigures)
    {
        match format {
            ErrorFormat::Human => {
                let (id, message) = (printable(c.id.as_str()), printable(&c.message));
                emit_line(format_args!("bench-normalize: {at}: run {} {word}: {id}: {message}", run.source.block))
            }
            ErrorFormat::Json => {
                let exit = if unusable { ExitCode::NoResult } else { ExitCode::Rejected };
                emit_line(format_args!("{}", check_json(run, c, word, exit)))
            }
        }
    }
}

/// Where a run is, for a person: `input:line`, the input's name escaped (it may come from a
/// report's recorded `source.input`, or be a file name with a line break in it).
pub(crate) fn run_at(run: &Run) -> String {
    let input = printable(&run.source.input);
    match run.source.first_line {
        Some(l) => format!("{input}:{l}"),
        None => input.into_owned(),
    }
}

pub(crate) fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Write { output, source } if output == "stdout" && source.kind() == io::ErrorKind::BrokenPipe)
}
