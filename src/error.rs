//! Errors and the exit-code table.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every run found was accepted |
//! | 1 | at least one run was rejected by a consistency rule (the report is still printed) |
//! | 2 | usage error (bad flags or arguments, a bad parser definition given with --parsers) |
//! | 3 | no benchmark result found in an input, or an input could not be parsed |
//! | 4 | I/O error (a file could not be read, or the output could not be written; a closed stdout is not an error) |
//! | 5 | `run`: the benchmark client failed (a non-zero exit, a signal, or it could not be started); what it printed is still reported |

use std::fmt;
use std::io;

/// Process exit codes (see the README, "Exit codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitCode {
    Ok = 0,
    Rejected = 1,
    Usage = 2,
    NoResult = 3,
    Io = 4,
    /// `bench-normalize run`: the client exited non-zero, was ended by a signal, or could not
    /// be started. Whatever result it printed is still reported.
    ClientFailed = 5,
}

/// Where an error points in an input: a line, and a column when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub input: String,
    pub line: usize,
    pub column: Option<usize>,
    /// The offending line as it was read (cleaned of colour codes).
    pub text: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}", self.input, self.line)?;
        if let Some(c) = self.column {
            write!(f, ":{c}")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input could not be read.
    #[error("{input}: cannot read: {source}")]
    Io {
        input: String,
        #[source]
        source: io::Error,
    },

    /// The report could not be written (a full disk, say).
    #[error("{output}: cannot write: {source}")]
    Write {
        output: String,
        #[source]
        source: io::Error,
    },

    /// Nothing in an input looked like a benchmark result.
    #[error("{input}: no benchmark result found (looked for: {looked_for})")]
    NoResult { input: String, looked_for: String },

    /// An input had the shape of a result but could not be read.
    #[error("{at}: {message}{}", quote(.at.text.as_deref()))]
    Parse { at: Location, message: String },

    /// A hand-written report has a field of the wrong type or misses a required one.
    #[error("{input}: {path}: {message}")]
    Report { input: String, path: String, message: String },

    /// A parser definition in `parsers/` (or given with --parsers) is wrong.
    #[error("{file}:{line}:{column}: {field}: {message}")]
    Definition { file: String, line: usize, column: usize, field: String, message: String },

    /// Bad flags or arguments.
    #[error("{0}")]
    Usage(String),

    /// `bench-normalize run`: the benchmark client failed or could not be started.
    #[error("{command}: {message}")]
    Client { command: String, message: String },
}

fn quote(text: Option<&str>) -> String {
    match text {
        Some(t) => format!("\n    | {}", t.chars().take(200).collect::<String>()),
        None => String::new(),
    }
}

impl Error {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Io { .. } | Error::Write { .. } => ExitCode::Io,
            Error::NoResult { .. } | Error::Parse { .. } | Error::Report { .. } => ExitCode::NoResult,
            Error::Definition { .. } | Error::Usage(_) => ExitCode::Usage,
            Error::Client { .. } => ExitCode::ClientFailed,
        }
    }

    /// Stable short code for machine-readable diagnostics.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io { .. } | Error::Write { .. } => "io",
            Error::NoResult { .. } => "no-result",
            Error::Parse { .. } => "parse",
            Error::Report { .. } => "report-shape",
            Error::Definition { .. } => "definition",
            Error::Usage(_) => "usage",
            Error::Client { .. } => "client",
        }
    }

    /// The input the error is about, when there is one.
    pub fn input(&self) -> Option<&str> {
        match self {
            Error::Io { input, .. } | Error::NoResult { input, .. } | Error::Report { input, .. } => Some(input),
            Error::Write { output, .. } => Some(output),
            Error::Parse { at, .. } => Some(&at.input),
            Error::Definition { file, .. } => Some(file),
            Error::Client { command, .. } => Some(command),
            Error::Usage(_) => None,
        }
    }

    /// What is wrong, without where (which `input`, `position` give).
    pub fn message(&self) -> String {
        match self {
            Error::Parse { message, .. } => message.clone(),
            Error::Report { path, message, .. } => format!("{path}: {message}"),
            Error::Definition { field, message, .. } => format!("{field}: {message}"),
            other => other.to_string(),
        }
    }

    /// Line and column the error points at, when known.
    pub fn position(&self) -> (Option<usize>, Option<usize>) {
        match self {
            Error::Parse { at, .. } => (Some(at.line), at.column),
            Error::Definition { line, column, .. } => (Some(*line), Some(*column)),
            _ => (None, None),
        }
    }
}

/// 1-based line and column of a byte offset in a text.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let col = offset - before.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
    (line, col)
}

/// The error as a person reads it: one line, and for an error in an input line, that line with
/// the column marked (annotate-snippets).
pub fn render_human(e: &Error, styled: bool) -> String {
    use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
    if let Error::Parse { at, message } = e {
        if let Some(text) = &at.text {
            let col = at.column.unwrap_or(1).saturating_sub(1).min(text.len());
            // A span must fall on a character boundary.
            let start = (0..=col).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            let end = (start + 1..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
            let report = &[Level::ERROR.primary_title(message.as_str()).element(
                Snippet::source(text.as_str())
                    .line_start(at.line)
                    .path(at.input.as_str())
                    .annotation(AnnotationKind::Primary.span(start..end.max(start))),
            )];
            let renderer = if styled { Renderer::styled() } else { Renderer::plain() };
            return renderer.render(report).to_string();
        }
    }
    format!("bench-normalize: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_of_offsets() {
        let t = "ab\ncd\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 4), (2, 2));
        assert_eq!(line_col(t, 99), (3, 1));
    }

    #[test]
    fn messages_quote_the_line() {
        let e = Error::Parse {
            at: Location { input: "run.log".into(), line: 7, column: Some(3), text: Some("{\"a\": ".into()) },
            message: "truncated JSON".into(),
        };
        assert_eq!(e.to_string(), "run.log:7:3: truncated JSON\n    | {\"a\": ");
        assert_eq!(e.exit_code(), ExitCode::NoResult);
    }
}
