//! Diagnostics on stderr, for people or one JSON object a line for programs: errors, warnings,
//! and the failed rules of a rejected run.

use std::io::{self, IsTerminal, Write};

use crate::cli::args::ErrorFormat;
use crate::error::printable;
use crate::report::Verdict;
use crate::{Error, ExitCode, Run};

/// Colour only on a terminal, and never with NO_COLOR set.
pub(crate) fn color_on(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A warning of `run` about the command (not about a run), on stderr.
pub(crate) fn report_run_warning(format: ErrorFormat, message: &str) {
    let mut err = io::stderr().lock();
    let _ = match format {
        ErrorFormat::Human => writeln!(err, "bench-normalize: warning: {message}"),
        ErrorFormat::Json => writeln!(err, "{}", serde_json::json!({ "code": "warning", "message": message })),
    };
}

/// A warning about one run (a figure that cannot be known), on stderr.
pub(crate) fn report_warning(format: ErrorFormat, run: &Run, message: &str) {
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

pub(crate) fn report_error(format: ErrorFormat, e: &Error) {
    let mut err = io::stderr().lock();
    let _ = match format {
        ErrorFormat::Human => {
            let styled = color_on(io::stderr().is_terminal());
            writeln!(err, "{}", crate::error::render_human(e, styled))
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

/// One line on stderr for an objective an accepted run does not meet (`--slo`, exit 7).
pub(crate) fn report_objective(format: ErrorFormat, run: &Run, r: &crate::report::ObjectiveResult) {
    let mut err = io::stderr().lock();
    let message =
        format!("{} {}: {}", r.objective, crate::objectives::status_words(r.status), crate::objectives::describe(r));
    let _ = match format {
        ErrorFormat::Human => writeln!(
            err,
            "bench-normalize: {}: run {}: objective {}",
            run_at(run),
            run.source.block,
            printable(&message)
        ),
        ErrorFormat::Json => writeln!(
            err,
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
        ),
    };
}

/// One line on stderr per failed rule of a rejected run, so a person sees why without reading
/// the JSON (which says the same in `checks`).
pub(crate) fn report_rejection(format: ErrorFormat, run: &Run, strict: bool) {
    let mut err = io::stderr().lock();
    let at = run_at(run);
    use crate::report::{Check, Severity, Status};
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
