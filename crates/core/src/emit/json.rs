//! JSON and JSONL: a whole report, written run by run as runs arrive, or one run per line.

use std::io;
use std::io::Write;

use crate::report::{Report, Run};

/// Write the whole report as JSON (pretty when `pretty`).
pub fn write_json(out: &mut dyn Write, report: &Report, pretty: bool) -> io::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(&mut *out, report)?;
    } else {
        serde_json::to_writer(&mut *out, report)?;
    }
    out.write_all(b"\n")
}

/// The report as one JSON document, written a run at a time: the bytes of [`write_json`] of all
/// the runs, without holding them (a log of thousands of runs is written in the memory of one).
/// Nothing is written before the first run: no run, no report.
pub struct JsonReport {
    pretty: bool,
    runs: usize,
    /// The document up to its `runs` list, and after it (from `Report::new(vec![])`, so that the
    /// framing is serde's).
    head: String,
    tail: String,
    /// Each run's indentation, pretty: one level deeper than the `runs` key.
    indent: String,
}

impl JsonReport {
    pub fn new(pretty: bool) -> JsonReport {
        let empty = if pretty {
            serde_json::to_string_pretty(&Report::new(Vec::new()))
        } else {
            serde_json::to_string(&Report::new(Vec::new()))
        }
        .expect("a report serializes");
        let at = empty.rfind("[]").expect("an empty runs list");
        let (head, tail) = (empty[..at + 1].to_string(), &empty[at + 1..]);
        let key_indent: String =
            head[head.rfind('\n').map_or(0, |i| i + 1)..].chars().take_while(|c| *c == ' ').collect();
        let tail = if pretty { format!("\n{key_indent}{tail}\n") } else { format!("{tail}\n") };
        JsonReport { pretty, runs: 0, head, tail, indent: format!("{key_indent}  ") }
    }

    /// One more run.
    pub fn run(&mut self, out: &mut dyn Write, run: &Run) -> io::Result<()> {
        if self.pretty {
            let text = serde_json::to_string_pretty(run)?;
            self.open(out)?;
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                out.write_all(self.indent.as_bytes())?;
                out.write_all(line.as_bytes())?;
            }
            Ok(())
        } else {
            with_jsonl_line(run, |line| self.compact(out, line))
        }
    }

    /// One more run, as [`write_jsonl`] wrote it (compact documents only).
    pub fn compact(&mut self, out: &mut dyn Write, jsonl: &[u8]) -> io::Result<()> {
        debug_assert!(!self.pretty);
        self.open(out)?;
        out.write_all(jsonl.strip_suffix(b"\n").unwrap_or(jsonl))
    }

    /// The head before the first run, a separator before the others.
    fn open(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.runs += 1;
        match (self.runs, self.pretty) {
            (1, false) => out.write_all(self.head.as_bytes()),
            (1, true) => out.write_all(self.head.as_bytes()).and_then(|_| out.write_all(b"\n")),
            (_, false) => out.write_all(b","),
            (_, true) => out.write_all(b",\n"),
        }
    }

    /// The document's end, when a run was written.
    pub fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.runs == 0 {
            return Ok(());
        }
        out.write_all(self.tail.as_bytes())
    }
}

/// Write one run as one line of JSON.
pub fn write_jsonl(out: &mut dyn Write, run: &Run) -> io::Result<()> {
    with_jsonl_line(run, |line| out.write_all(line))
}

/// One run as one line of JSON (newline included), in a buffer kept per thread, handed to `use_line`.
pub(super) fn with_jsonl_line<T>(run: &Run, use_line: impl FnOnce(&[u8]) -> io::Result<T>) -> io::Result<T> {
    // Serialized into a buffer first: serde_json writes token by token, and through `dyn Write`
    // each token would be a call into the writer (a run is ~7 KB of JSON in hundreds of pieces).
    // One buffer, kept: a fresh 8 KB one per run cost more in malloc than it saved.
    thread_local! {
        static LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    LINE.with_borrow_mut(|line| {
        line.clear();
        // sonic-rs writes the same bytes as `serde_json::to_writer` (the same serde
        // serialization, the same float and escape forms: tests/it/outputs.rs holds it to that on
        // every sample), checking strings for escapes with SIMD: a run is mostly strings, and
        // serde_json's byte-at-a-time check was the largest single cost of `--format jsonl`. The
        // checks and rows, flat records, are written by hand (`shaped`).
        super::shaped::write_run(line, run)?;
        line.push(b'\n');
        let written = use_line(line);
        if line.capacity() > 1 << 20 {
            // Not kept for the rest of the input after one huge run.
            *line = Vec::new();
        }
        written
    })
}
