//! Errors and the exit-code table.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every run found was accepted |
//! | 1 | at least one run was rejected by a consistency rule (the report is still printed) |
//! | 2 | usage error (bad flags or arguments, a bad parser definition given with --parsers) |
//! | 3 | no benchmark result found in an input, an input could not be parsed, or a compressed or UTF-16 input could not be decoded (cut off, corrupt) |
//! | 4 | I/O error (a file could not be read, or the output could not be written; a closed stdout is not an error) |
//! | 5 | a run cannot be written in the output format asked for: it lacks a figure the format requires (`--format dstack`: dstack's model), or the consumer's model would reject it; the message names the figure and how to get it |
//! | 6 | `run`: the benchmark client failed (a non-zero exit, a signal, or it could not be started); what it printed is still reported |
//! | 7 | `--slo`: an objective of an accepted run was not shown to be met (missed, not available, not comparable); ranks below every other non-zero code |
//! | 8 | `regress`: a figure of the new runs regressed against the stored baseline (large and significant); ranks above 7, below 1 |

use std::borrow::Cow;
use std::fmt;
use std::io;

/// Process exit codes (see docs/report.md, "Exit codes"). They are ordered by precedence, not by
/// number: when several apply, the greatest wins (`max`), and [`ExitCode::ObjectivesMissed`]
/// ranks below every other non-zero code (6 > 5 > 4 > 3 > 2 > 1 > 8 > 7 > 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Ok = 0,
    Rejected = 1,
    Usage = 2,
    NoResult = 3,
    Io = 4,
    /// A run the output format cannot hold (see [`Error::Unwritable`]).
    Unwritable = 5,
    /// `bench-normalize run`: the client exited non-zero, was ended by a signal, or could not
    /// be started. Whatever result it printed is still reported.
    ClientFailed = 6,
    /// `--slo`: an objective of an accepted run was missed, or could not be shown to be met (the
    /// run does not give the figure, or gives it with another meaning). A run whose figures are
    /// not trusted (rejected, unusable) exits with its own code; its objectives are not judged.
    ObjectivesMissed = 7,
    /// `regress`: a figure regressed against the stored baseline (docs/store.md). Ranks above
    /// an objective missed and below every other non-zero code: a rejected new run's figures are
    /// not judged at all.
    Regression = 8,
}

impl ExitCode {
    /// Rank in precedence: an objective missed is the least of the failures, since every other
    /// one says the figures it was judged on are not to be trusted, or were not all written.
    fn precedence(self) -> u8 {
        match self {
            ExitCode::Ok => 0,
            ExitCode::ObjectivesMissed => 1,
            ExitCode::Regression => 2,
            ExitCode::Rejected => 3,
            ExitCode::Usage => 4,
            ExitCode::NoResult => 5,
            ExitCode::Io => 6,
            ExitCode::Unwritable => 7,
            ExitCode::ClientFailed => 8,
        }
    }
}

impl PartialOrd for ExitCode {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ExitCode {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.precedence().cmp(&other.precedence())
    }
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

    /// A compressed or UTF-16 input could not be decoded to its end: cut off, or corrupt (what
    /// was decoded before is still read). The input's content is broken, as with an input that
    /// does not parse (exit 3); a failure to read its bytes is [`Error::Io`].
    #[error("{input}: cannot decode {format}: {message}")]
    Decode { input: String, format: &'static str, message: String },

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

    /// A run cannot be written in the output format asked for (`--format dstack`): what it
    /// lacks and how to get it. Never filled with a guess.
    #[error("{at}: run {run}: cannot be written as {format}: {message}")]
    Unwritable { at: String, input: String, line: Option<usize>, run: usize, format: String, message: String },
    /// `bench-normalize run`: the benchmark client failed or could not be started.
    #[error("{command}: {message}")]
    Client { command: String, message: String },

    /// The input contradicts a run already written out (a summary row that disagrees with the
    /// block of its run, read after that run went out): exit 1, as for a rejected run. The
    /// message begins with the rule's id.
    #[error("{at}: {message}")]
    Contradiction { at: Location, message: String },
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
            Error::NoResult { .. } | Error::Parse { .. } | Error::Report { .. } | Error::Decode { .. } => {
                ExitCode::NoResult
            }
            Error::Definition { .. } | Error::Usage(_) => ExitCode::Usage,
            Error::Unwritable { .. } => ExitCode::Unwritable,
            Error::Client { .. } => ExitCode::ClientFailed,
            Error::Contradiction { .. } => ExitCode::Rejected,
        }
    }

    /// Stable short code for machine-readable diagnostics.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io { .. } | Error::Write { .. } => "io",
            Error::NoResult { .. } => "no-result",
            Error::Decode { .. } => "decode",
            Error::Parse { .. } => "parse",
            Error::Report { .. } => "report-shape",
            Error::Definition { .. } => "definition",
            Error::Usage(_) => "usage",
            Error::Unwritable { .. } => "unwritable",
            Error::Client { .. } => "client",
            Error::Contradiction { .. } => "contradiction",
        }
    }

    /// The input the error is about, when there is one.
    pub fn input(&self) -> Option<&str> {
        match self {
            Error::Io { input, .. }
            | Error::NoResult { input, .. }
            | Error::Report { input, .. }
            | Error::Decode { input, .. } => Some(input),
            Error::Write { output, .. } => Some(output),
            Error::Parse { at, .. } => Some(&at.input),
            Error::Definition { file, .. } => Some(file),
            Error::Unwritable { input, .. } => Some(input),
            Error::Client { command, .. } => Some(command),
            Error::Contradiction { at, .. } => Some(&at.input),
            Error::Usage(_) => None,
        }
    }

    /// What is wrong, without where (which `input`, `position` give).
    pub fn message(&self) -> String {
        match self {
            Error::Parse { message, .. } => message.clone(),
            Error::Contradiction { message, .. } => message.clone(),
            Error::Report { path, message, .. } => format!("{path}: {message}"),
            Error::Definition { field, message, .. } => format!("{field}: {message}"),
            Error::Unwritable { run, format, message, .. } => {
                format!("run {run}: cannot be written as {format}: {message}")
            }
            other => other.to_string(),
        }
    }

    /// The diagnostic as `--error-format json` writes it (docs/report.md, "Diagnostics"): `code`,
    /// `message`, `input`, `line`, `column` and `exit_code`. The command line, the MCP server and
    /// the Python module all write this one object.
    pub fn to_json(&self) -> serde_json::Value {
        let (line, column) = self.position();
        serde_json::json!({
            "code": self.code(),
            "message": self.message(),
            "input": self.input(),
            "line": line,
            "column": column,
            "exit_code": self.exit_code() as i32,
        })
    }

    /// Line and column the error points at, when known.
    pub fn position(&self) -> (Option<usize>, Option<usize>) {
        match self {
            Error::Parse { at, .. } | Error::Contradiction { at, .. } => (Some(at.line), at.column),
            Error::Definition { line, column, .. } => (Some(*line), Some(*column)),
            Error::Unwritable { line, .. } => (*line, None),
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
    if let Error::Parse { at, message } = e
        && let Some(text) = &at.text
    {
        let col = at.column.unwrap_or(1).saturating_sub(1).min(text.len());
        // A span must fall on a character boundary.
        let start = (0..=col).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        let end = (start + 1..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
        // The line, the message and the input's name come from the input: escaped, and the
        // marked span moved to where its character stands in the escaped line.
        let (before, marked) = (printable(&text[..start]), printable(&text[start..end.max(start)]));
        let shown = format!("{before}{marked}{}", printable(&text[end.max(start)..]));
        let span = before.len()..before.len() + marked.len();
        let (message, input) = (printable(message), printable(&at.input));
        let report = &[Level::ERROR.primary_title(message.as_ref()).element(
            Snippet::source(shown.as_str())
                .line_start(at.line)
                .path(input.as_ref())
                .annotation(AnnotationKind::Primary.span(span)),
        )];
        let renderer = if styled { Renderer::styled() } else { Renderer::plain() };
        return renderer.render(report).to_string();
    }
    // Every other message is one line: escaped whole, as it quotes names and text from inputs.
    format!("bench-normalize: {}", printable(&e.to_string()))
}

/// Whether a character must not reach a terminal as it is: a control character (C0, DEL, C1:
/// ESC starts escape sequences, 0x9B is CSI and 0x9D OSC on their own, BEL, CR and LF move the
/// cursor or forge lines), a bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069)
/// or mark (U+200E, U+200F, U+061C), which reorder what follows on the line, or a line or
/// paragraph separator (U+2028, U+2029).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
        || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Text from an input (a label, a value, a file name, a report's recorded `source.input`) made
/// safe to print on a terminal: each character of [`needs_escape`] is written as an escape
/// (`\n`, `\r`, `\t`, `\x1b` for the other ASCII controls and DEL, `\u{9b}` and `\u{202e}`
/// beyond ASCII), so that it cannot move the cursor, set a window title, clear the screen,
/// reorder the line or start a line of its own. Everything else is kept, backslashes included:
/// the escapes are for reading, not a reversible encoding. The one function every human output
/// (table, `--explain`, diagnostics) passes input text through; JSON output is escaped by serde.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if needs_escape(c) && (c as u32) < 0x80 => o.push_str(&format!("\\x{:02x}", c as u32)),
            c if needs_escape(c) => o.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => o.push(c),
        }
    }
    Cow::Owned(o)
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
    fn printable_escapes_what_moves_a_terminal() {
        assert_eq!(printable("run.log"), "run.log");
        assert!(matches!(printable("12.8 ms \\ µs"), Cow::Borrowed(_)));
        assert_eq!(printable("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(printable("\u{1b}]0;pwned\u{7}\u{1b}[2J"), "\\x1b]0;pwned\\x07\\x1b[2J");
        assert_eq!(printable("\u{7f}\u{9b}2J\u{9d}"), "\\x7f\\u{9b}2J\\u{9d}");
        assert_eq!(printable("\u{202e}gnp.exe\u{2066}x\u{2069}"), "\\u{202e}gnp.exe\\u{2066}x\\u{2069}");
        assert_eq!(printable("a\u{2028}b\u{0}"), "a\\u{2028}b\\x00");
    }

    #[test]
    fn a_parse_error_escapes_its_line_and_keeps_the_mark_on_its_character() {
        let e = Error::Parse {
            at: Location {
                input: "evil\n-: forged".into(),
                line: 2,
                column: Some(6),
                text: Some("\u{1b}[2J{\"a\": x".into()),
            },
            message: "bad\rvalue".into(),
        };
        let shown = render_human(&e, false);
        assert!(!shown.chars().any(|c| needs_escape(c) && c != '\n'), "{shown:?}");
        assert!(shown.contains("evil\\n-: forged") && shown.contains("bad\\rvalue"), "{shown}");
        // Column 6 is the `"` after `{` (the ESC sequence is 4 bytes); escaped, it stands at 8.
        let line = shown.lines().find(|l| l.contains("\\x1b[2J")).unwrap();
        let mark = shown.lines().skip_while(|l| !l.contains("\\x1b[2J")).nth(1).unwrap();
        let at = line.find("\\x1b").unwrap() + "\\x1b[2J{".len();
        assert_eq!(mark.find('^'), Some(at), "{shown}");
    }

    /// A string of printable text and the characters that move a terminal, forge a line or
    /// reorder one, in any mix (as tests/it/hostile.rs makes them).
    fn hostile() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        const HARMFUL: &[char] = &[
            '\u{1b}', '\u{9b}', '\u{9d}', '\u{90}', '\u{9c}', '\u{85}', '\u{7}', '\r', '\n', '\t', '\u{7f}', '\0',
            '\u{8}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}',
            '\u{2069}', '\u{200e}', '\u{200f}', '\u{2028}', '\u{2029}',
        ];
        let c = prop_oneof![
            4 => proptest::char::range(' ', '~'),
            3 => proptest::sample::select(HARMFUL),
            1 => proptest::sample::select(&['=', '+', '-', '@', '|', '!', '"', ',', '\''][..]),
            1 => any::<char>(),
        ];
        proptest::collection::vec(c, 0..24).prop_map(|v| v.into_iter().collect())
    }

    fn raw(text: &str) -> Vec<char> {
        text.chars().filter(|c| needs_escape(*c) && *c != '\n').collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// Human diagnostics: an error quoting an input line keeps one source line, and every
        /// other error is one line; no raw control character either way.
        #[test]
        fn diagnostics_print_no_raw_control_from_inputs(s in hostile(), col in 0usize..30) {
            use proptest::prop_assert;
            use proptest::prop_assert_eq;
            let parse = |s: &str| Error::Parse {
                at: Location { input: format!("{s}.jsonl"), line: 3, column: Some(col), text: Some(format!("{{\"a\": {s}")) },
                message: format!("bad value {s}"),
            };
            let shown = render_human(&parse(&s), false);
            prop_assert!(raw(&shown).is_empty(), "{:?} in {shown}", raw(&shown));
            prop_assert_eq!(shown.lines().count(), render_human(&parse("x"), false).lines().count(), "{}", shown);
            for e in [
                Error::Io { input: s.clone(), source: std::io::Error::other("gone") },
                Error::NoResult { input: s.clone(), looked_for: "Serving Benchmark Result".into() },
                Error::Parse { at: Location { input: s.clone(), line: 1, column: None, text: None }, message: s.clone() },
                Error::Report { input: s.clone(), path: format!("runs[0].{s}"), message: s.clone() },
                Error::Definition { file: s.clone(), line: 1, column: 1, field: s.clone(), message: s.clone() },
            ] {
                let shown = render_human(&e, false);
                prop_assert!(raw(&shown).is_empty(), "{:?} in {shown}", raw(&shown));
                prop_assert_eq!(shown.lines().count(), 1, "{}", shown);
            }
        }
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
