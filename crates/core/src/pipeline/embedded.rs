//! Result records inside a text ([`crate::input::json::embedded`] finds their extent): each is
//! parsed as a document and classified as a JSON input's would be, and read as the result file it
//! is (per-request arrays included). A record that is no known format, or that gives no figure, is
//! noise; one that does not parse, or is no result, is looked inside (a wrapper document, a log
//! record with an escaped result in a string).
//!
//! The bytes reach the finder through [`Tap`], which sees every byte the text's line reader
//! consumes (skipped noise included), so that records are found whatever the scanner wants.

use std::io::{BufRead, Read};

use aho_corasick::AhoCorasick;
use serde::de::DeserializeSeed;

use crate::detect::{self, DocKind};
use crate::input::json::embedded::{Finder, Found, Judge, Judged, strip_line_prefix};
use crate::input::json::{Doc, DocSeed, Keys, sanitize};
use crate::pipeline::Config;
use crate::pipeline::doc::{read_repaired, runs_of_doc};
use crate::report::Note;
use crate::{Run, llmd};

/// The judge of the pipeline: records become runs, kept with their first line until the caller
/// hands them out in input order.
pub(crate) struct Records<'c, 'a> {
    opts: &'c Config<'a>,
    input: &'c str,
    arrays: &'a Keys,
    keys: &'a AhoCorasick,
    /// Runs found, by the line of their record, in the order found.
    pub(crate) found: Vec<(usize, Vec<Run>)>,
}

impl<'c, 'a> Records<'c, 'a> {
    pub(crate) fn new(opts: &'c Config<'a>, input: &'c str) -> Self {
        Records {
            opts,
            input,
            arrays: opts.definitions.json_keys(),
            keys: opts.definitions.record_keys(),
            found: Vec::new(),
        }
    }

    /// The record as a document; with comments in it, or cut short (`cut`), repaired as a JSON
    /// input's document would be ([`crate::pipeline::doc::read_repaired`]).
    fn parse(&self, bytes: &[u8], line: usize, cut: bool) -> Option<Doc<'static>> {
        let mut owned = bytes.to_vec();
        let (_, widened) = sanitize(&mut owned);
        let text = widened.unwrap_or(owned);
        if !cut {
            let mut de = serde_json::Deserializer::from_slice(&text);
            let whole = (DocSeed { arrays: self.arrays, line }).deserialize(&mut de).and_then(|d| de.end().map(|_| d));
            if let Ok(doc) = whole {
                return Some(doc);
            }
        }
        // The finder took out hard wraps already (and the bytes start at the `{`).
        let doc = read_repaired(&text, line, 0, self.arrays)?;
        // A record that never closed is read only as one cut short.
        (doc.repaired.cut_after_line.is_some() == cut).then_some(doc)
    }
}

/// A run with nothing read is no result (a log record with a format's key names, say).
fn has_figures(run: &Run) -> bool {
    !run.totals.is_empty() || !run.reported.is_empty()
}

impl Judge for Records<'_, '_> {
    fn judge(&mut self, bytes: &[u8], found: Found) -> Judged {
        if !self.keys.is_match(bytes) {
            return Judged::Ignored;
        }
        let mut prefix = None;
        let doc = self.parse(bytes, found.line, found.cut).or_else(|| {
            let stripped = strip_line_prefix(bytes)?;
            let doc = self.parse(&stripped, found.line, found.cut)?;
            prefix = Some(());
            Some(doc)
        });
        let Some(doc) = doc else { return Judged::LookInside };
        // A record with a duplicate key has no one meaning: not read, nor anything inside it.
        if crate::input::json::duplicate_key(bytes).is_some() {
            return Judged::Taken;
        }
        let value = || serde_json::Value::Object(doc.fields.iter().cloned().collect());
        if matches!(detect::classify_doc(&doc, self.opts.definitions), DocKind::Unknown)
            && !llmd::is_benchmark_report(&value())
        {
            return Judged::LookInside;
        }
        let Ok(mut runs) = runs_of_doc(&doc, self.input, 0, self.opts) else { return Judged::LookInside };
        runs.retain(has_figures);
        if runs.is_empty() {
            return Judged::LookInside;
        }
        let lines = memchr::memchr_iter(b'\n', bytes).count();
        let mut how = Vec::new();
        if lines > 0 {
            how.push(format!("over {} lines", lines + 1));
        }
        if prefix.is_some() {
            how.push("behind a line prefix".to_string());
        }
        if found.unescaped {
            how.push("unescaped from a JSON string".to_string());
        }
        if found.nested {
            how.push("inside another document or line".to_string());
        }
        if found.folded {
            how.push("its lines hard-wrapped, joined again".to_string());
        }

        let message = if how.is_empty() {
            "read from a JSON record in the text".to_string()
        } else {
            format!("read from a JSON record in the text ({})", how.join(", "))
        };
        for run in &mut runs {
            run.source.first_line = Some(found.line);

            run.notes.push(Note { code: "json-in-text".into(), message: message.clone(), line: Some(found.line) });
        }
        self.found.push((found.line, runs));
        Judged::Taken
    }
}

/// A reader that shows every byte consumed from it to a [`Finder`].
pub(crate) struct Tap<'c, 'a, R> {
    inner: R,
    finder: Finder,
    pub(crate) records: Records<'c, 'a>,
}

impl<'c, 'a, R: BufRead> Tap<'c, 'a, R> {
    pub(crate) fn new(inner: R, records: Records<'c, 'a>) -> Self {
        Tap { inner, finder: Finder::within(records.opts.budget.clone()), records }
    }

    /// The input ended.
    pub(crate) fn finish(&mut self) {
        self.finder.finish(&mut self.records);
    }
}

impl<R: BufRead> Read for Tap<'_, '_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let got = self.fill_buf()?;
            let n = got.len().min(buf.len());
            buf[..n].copy_from_slice(&got[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Tap<'_, '_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if n > 0 {
            // The bytes consumed are the start of the buffer just filled: no read happens here.
            if let Ok(buf) = self.inner.fill_buf() {
                let n = n.min(buf.len());
                self.finder.feed(&buf[..n], &mut self.records);
            }
        }
        self.inner.consume(n);
    }
}
