//! Writing the report.

use std::io::{self, Write};

use crate::report::{Report, Run};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// The whole report, one JSON document.
    Json,
    /// One run per line, written as soon as the run is complete.
    Jsonl,
}

/// Write the whole report as JSON (pretty when `pretty`).
pub fn write_json(out: &mut dyn Write, report: &Report, pretty: bool) -> io::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(&mut *out, report)?;
    } else {
        serde_json::to_writer(&mut *out, report)?;
    }
    out.write_all(b"\n")
}

/// Write one run as one line of JSON.
pub fn write_jsonl(out: &mut dyn Write, run: &Run) -> io::Result<()> {
    serde_json::to_writer(&mut *out, run)?;
    out.write_all(b"\n")
}
