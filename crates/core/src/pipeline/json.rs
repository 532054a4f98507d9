//! JSON inputs: result files, reports and JSON Lines, read as documents (the usual one-document
//! file on a fast path, several or broken ones found by their extent first), each document
//! classified and turned into runs; a text with JSON lines in it is also scanned as text.

use serde::de::DeserializeSeed;

use crate::detect::{self, DocKind};
use crate::error::Location;
use crate::input::json::{Doc, DocSeed, Documents, read_doc_fast};
use crate::pipeline::classify::looks_like_json;
use crate::pipeline::doc::{entry_inner, json_looked_for, read_repaired, runs_of_doc};
use crate::pipeline::text::normalize_text;
use crate::pipeline::{Config, Out};

use crate::{Error, Run, input};

pub(crate) fn normalize_json(text: &mut [u8], input: &str, opts: &Config, sink: &mut dyn Out) -> Result<usize, Error> {
    let arrays = opts.definitions.json_keys();
    // The usual file, one well-formed document, read as it is: the fast path gives up on a bare
    // NaN or Infinity, so where it succeeds sanitizing would have changed nothing.
    let raw: &[u8] = text;
    if let Some(doc) = read_doc_fast(raw, arrays, first_line(raw)) {
        let read = Read { docs: vec![Ok(doc)], text_lines: 0, cut_errors: Vec::new() };
        return runs_of_docs(raw, read, input, opts, sink);
    }
    let (shifts, widened) = input::json::sanitize(text);
    let text: &[u8] = widened.as_deref().unwrap_or(text);
    // Unless sanitizing quoted something, the fast path would give up on the whole text again.
    let read = read_documents(text, &shifts, arrays, input, shifts.quoted > 0, opts.reports_only);
    runs_of_docs(text, read, input, opts, sink)
}

/// Line of the first non-blank character.
fn first_line(text: &[u8]) -> usize {
    1 + text.iter().take_while(|b| b.is_ascii_whitespace()).filter(|b| **b == b'\n').count()
}

/// The documents of a JSON text.
struct Read<'t> {
    /// Each document, or the error that stopped it.
    docs: Vec<Result<Doc<'t>, Error>>,
    /// Pieces of the text that are no JSON (lines of a log that has JSON lines in it).
    text_lines: usize,
    /// For each document that was cut off and closed ([`read_repaired`]), in order, the error it
    /// gave as it was: it stands when the closed document gives no figure.
    cut_errors: Vec<Error>,
}

/// extract -> ... -> validate every document, and hand out the runs (or the errors).
fn runs_of_docs(text: &[u8], read: Read<'_>, input: &str, opts: &Config, sink: &mut dyn Out) -> Result<usize, Error> {
    let Read { docs, text_lines, cut_errors } = read;
    let mut cut_errors = cut_errors.into_iter();
    if text_lines > 0 && !opts.reports_only {
        // Text with JSON lines in it: read as a text, whose scan finds the JSON records (these
        // lines among them) beside its blocks, in input order (see `pipeline::embedded`). A line
        // that looks like JSON but does not parse is then a line of the text, no error.
        return normalize_text(std::io::Cursor::new(text), input, opts, sink, false);
    }
    let mut found = 0;
    let mut errors: Vec<Error> = Vec::new();
    let mut index = 0;
    // Documents of a known format (a result file, a report), whether or not they gave a run.
    // Without any, the documents are a JSON log (or broken), perhaps with a result block or
    // record inside its (escaped) strings or nested in it: read as text.
    let mut known = 0;
    // A document that does not parse (its error is kept for when nothing else is found).
    let mut broken = false;
    let mut duplicated = false;
    let mut runs = Vec::new();
    for doc in docs {
        let doc = match doc {
            Ok(d) => d,
            Err(e) => {
                // A document with a duplicate key is refused as it is, not read again as text.
                duplicated |= input::json::is_duplicate_error(&e);
                broken = true;
                errors.push(e);
                continue;
            }
        };
        let cut_error = doc.repaired.cut_after_line.and_then(|_| cut_errors.next());
        let parts = if doc.elements.is_empty() && !doc.fields.is_empty() || !doc.arrays.is_empty() {
            vec![doc]
        } else {
            // A list's comments are its elements'; where it was cut, its last element's.
            let (repaired, mut elements) = (doc.repaired, doc.elements);
            let last = elements.len().saturating_sub(1);
            for (i, e) in elements.iter_mut().enumerate() {
                e.repaired.comments |= repaired.comments;
                if i == last {
                    e.repaired.cut_after_line = e.repaired.cut_after_line.or(repaired.cut_after_line);
                }
            }
            elements
        };
        let (mut doc_runs, mut doc_errors, mut doc_known) = (Vec::new(), Vec::new(), 0);
        for doc in parts.into_iter().map(entry_inner) {
            index += 1;
            let unknown = matches!(detect::classify_doc(&doc, opts.definitions), DocKind::Unknown);
            doc_known += usize::from(!unknown);
            match runs_of_doc(&doc, input, index, opts) {
                Ok(mut r) => doc_runs.append(&mut r),
                Err(mut e) => doc_errors.append(&mut e),
            }
        }
        match cut_error {
            // Closed, it is no result that gives a figure: the cut is the error.
            Some(e) if !doc_runs.iter().any(|r: &Run| !r.totals.is_empty() || !r.reported.is_empty()) => {
                broken = true;
                errors.push(e);
            }
            _ => {
                known += doc_known;
                runs.append(&mut doc_runs);
                errors.append(&mut doc_errors);
            }
        }
    }
    if runs.is_empty() && known == 0 && !opts.reports_only && !duplicated {
        match normalize_text(std::io::Cursor::new(text), input, opts, sink, false) {
            // Nothing in the text either: the documents' errors say why.
            Err(Error::NoResult { .. }) if broken => {}
            result => {
                let first = errors.into_iter().next();
                return result.map_err(|e| match (e, first) {
                    (Error::NoResult { .. }, Some(json)) => json,
                    (e, _) => e,
                });
            }
        }
    }
    for run in runs {
        found += 1;
        sink.run(run)?;
    }
    if found == 0 && !errors.is_empty() {
        // Every error in the order of the input: the last one is returned (and printed last).
        let last = errors.pop().expect("not empty");
        errors.into_iter().for_each(|e| sink.diagnostic(e));
        return Err(last);
    }
    let mut errors = errors.into_iter();
    match (found, errors.next()) {
        (0, None) => Err(Error::NoResult { input: input.to_string(), looked_for: json_looked_for(opts.definitions) }),
        (n, first) => {
            first.into_iter().chain(errors).for_each(|e| sink.diagnostic(e));
            Ok(n)
        }
    }
}

/// Every document of a JSON text, or the error that stopped one. The usual file is one document
/// (vLLM's result JSON, 100 MB on one line): it is parsed in one pass. Several documents, or a
/// broken one, are found by their extent first, so that a bad line does not stop the others.
///
/// Also returns how many pieces are no JSON at all: lines of text, not counted as errors unless
/// `text_is_error` (where only reports are read).
fn read_documents<'t>(
    text: &'t [u8],
    shifts: &input::json::Shifts,
    arrays: &input::json::Keys,
    input: &str,
    fast_whole: bool,
    text_is_error: bool,
) -> Read<'t> {
    // Each document is first tried on the fast path, which gives up on anything unusual (a
    // duplicate key among them); one the slow path reads is then searched for a duplicate key,
    // which refuses it (`input::json::duplicate_key`).
    let read = |slice: &'t [u8], line: usize, fast: bool| {
        fast.then(|| read_doc_fast(slice, arrays, line)).flatten().map(|d| Ok(Ok(d))).unwrap_or_else(|| {
            let mut de = serde_json::Deserializer::from_slice(slice);
            (DocSeed { arrays, line }).deserialize(&mut de).and_then(|d| de.end().map(|_| d)).map(|d| {
                match input::json::duplicate_key(slice) {
                    None => Ok(d),
                    Some(dup) => Err(dup),
                }
            })
        })
    };
    let one = |doc| Read { docs: vec![doc], text_lines: 0, cut_errors: Vec::new() };
    match read(text, first_line(text), fast_whole) {
        Ok(Ok(doc)) => return one(Ok(doc)),
        Ok(Err(dup)) => return one(Err(input::json::duplicate_error(text, 1, input, &dup))),
        Err(_) => {}
    }
    let mut cut_errors = Vec::new();
    let mut out = Vec::new();
    let mut text_lines = 0;
    let mut docs = Documents::new(text);
    while let Some(span) = docs.next() {
        if !text_is_error && !looks_like_json(&text[span.start..span.end]) {
            // A line of text (`=== Serving Benchmark Result ===`, `[2025-08-28 22:41:28] ...`).
            text_lines += 1;
            docs.skip_to_next_line(span.start);
            continue;
        }
        let slice = &text[span.start..span.end];
        // The error of a document that does not parse, at its place in the input.
        let parse_error = |e: serde_json::Error| {
            let line = span.line + e.line().saturating_sub(1);
            let column = shifts.input_column(line, e.column());
            let what = if e.is_eof() || !span.complete { "truncated JSON" } else { "malformed JSON" };
            // serde_json's own position is relative to the document; ours is given apart.
            let detail = e.to_string();
            let detail = detail.rsplit_once(" at line ").map_or(detail.as_str(), |(m, _)| m).to_string();
            // The line, found from the document's start (not by counting every line before
            // it: a long input with many broken lines would take quadratic time).
            let mut from = text[..span.start].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            for _ in 1..e.line().max(1) {
                from = memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |i| from + i + 1);
            }
            let to = memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |i| from + i);
            let text_line = String::from_utf8_lossy(&text[from..to])
                .replace("\"inf\"   ", "Infinity")
                .replace("\"-inf\"   ", "-Infinity")
                .chars()
                .take(120)
                .collect::<String>();
            Error::Parse {
                at: Location { input: input.to_string(), line, column: Some(column), text: Some(text_line) },
                message: format!("{what}: {detail}"),
            }
        };
        match read(slice, span.line, true) {
            Ok(Ok(doc)) => out.push(Ok(doc)),
            Ok(Err(dup)) => out.push(Err(input::json::duplicate_error(slice, span.line, input, &dup))),
            Err(e) => {
                // A document with comments, or cut off at the end of the text (a paste cut
                // short; one cut in the middle of a file is damage, and stays an error), is
                // repaired; a closed one keeps its error for when it gives no figure.
                let at_end = text[span.end..].iter().all(u8::is_ascii_whitespace);
                let col = span.start - text[..span.start].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                match read_repaired(slice, span.line, col, arrays) {
                    Some(doc) if doc.repaired.cut_after_line.is_none() => out.push(Ok(doc)),
                    Some(doc) if at_end => {
                        cut_errors.push(parse_error(e));
                        out.push(Ok(doc));
                    }
                    _ => {
                        out.push(Err(parse_error(e)));
                        docs.skip_to_next_line(span.start);
                    }
                }
            }
        }
    }
    Read { docs: out, text_lines, cut_errors }
}
