//! JSON inputs: result files, reports and JSON Lines, read as documents (the usual one-document
//! file on a fast path, several or broken ones found by their extent first), each document
//! classified and turned into runs; a text with JSON lines in it is also scanned as text.

use serde::de::DeserializeSeed;

use crate::detect::{self, DocKind};
use crate::error::Location;
use crate::input::json::{Doc, DocSeed, Documents, read_doc_fast};
use crate::pipeline::{Claims, Config, Out, close, looks_like_json, normalize_text};
use crate::report::{self, Format, Note};
use crate::{Definitions, Error, Report, Run, canonical, check, definition, extract, input, llmd};

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

/// The largest document [`read_repaired`] repairs.
const MAX_REPAIR: usize = 16 << 20;

/// A document that does not parse, read as its author meant it where that is certain
/// ([`input::json::repair`]): its comments blanked; cut off, closed after its last complete
/// member. `None` when neither makes it a document (the parse error then stands).
pub(crate) fn read_repaired(
    slice: &[u8],
    line: usize,
    first_col: usize,
    arrays: &input::json::Keys,
) -> Option<Doc<'static>> {
    use input::json::repair::{blank_comments, close_cut, unfold};
    // A paste is small; a result file this large that does not parse is damage (or a
    // decompression bomb's cut text), and each repair would copy it.
    if slice.len() > MAX_REPAIR {
        return None;
    }
    let parse = |t: &[u8]| {
        let mut de = serde_json::Deserializer::from_slice(t);
        let doc = (DocSeed { arrays, line }).deserialize(&mut de).and_then(|d| de.end().map(|_| d)).ok()?;
        // A duplicate key has no one meaning: no repair makes it one.
        input::json::duplicate_key(t).is_none().then_some(doc)
    };
    // Hard-wrapped lines joined first: a break inside a string or a number is no JSON.
    let unfolded = unfold(slice, first_col, input::json::embedded::MIN_FOLD);
    let slice = unfolded.as_deref().unwrap_or(slice);
    let blanked = blank_comments(slice);
    let text = blanked.as_deref().unwrap_or(slice);
    let whole = if unfolded.is_some() || blanked.is_some() { parse(text) } else { None };
    let (mut doc, cut) = match whole {
        Some(doc) => (doc, None),
        None => {
            let (doc, at) = close_cut(text, parse)?;
            (doc, Some(line + memchr::memchr_iter(b'\n', &text[..at]).count()))
        }
    };
    if cut.is_some() {
        // Per-request arrays cut short hold some of the requests: a derivation over them would
        // be of another run. The summary figures before the cut are what it holds.
        doc.arrays.clear();
        for e in &mut doc.elements {
            e.arrays.clear();
        }
    }
    doc.repaired = input::json::Repaired { comments: blanked.is_some(), cut_after_line: cut };
    Some(doc)
}

/// An entry of `-f dstack`'s list for several runs ([`crate::dstack_model::entry_object`]) is
/// read as the object it holds; any other document as it is.
fn entry_inner(doc: Doc<'_>) -> Doc<'_> {
    let inner = crate::dstack_model::entry_object(doc.fields.iter().map(|(k, v)| (k.as_str(), v)));
    match inner {
        Some((_, serde_json::Value::Object(m))) if doc.arrays.is_empty() && doc.elements.is_empty() => {
            let fields = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            Doc { line: doc.line, fields, arrays: Vec::new(), elements: Vec::new(), repaired: doc.repaired }
        }
        _ => doc,
    }
}

fn json_looked_for(defs: &Definitions) -> String {
    let mut v: Vec<String> = defs.iter().filter(|d| d.is_json()).map(|d| d.id.clone()).collect();
    v.insert(0, "a canonical report".into());
    v.join(", ")
}

/// extract -> canonical -> derive -> validate, for one JSON document (a canonical report gives
/// one run per entry of `runs`). A report read back is verified, not trusted ([`check`]): every
/// shape error of the document is returned at once, in document order.
pub(crate) fn runs_of_doc(doc: &Doc, input: &str, index: usize, opts: &Config) -> Result<Vec<Run>, Vec<Error>> {
    let report_shape = |path: String, message: String| Error::Report { input: input.to_string(), path, message };
    let shape_errors = |errors: Vec<check::ShapeError>| -> Vec<Error> {
        errors.into_iter().map(|e| report_shape(e.path.clone(), e.message())).collect()
    };
    // An llm-d Benchmark Report (crates/core/src/llmd.rs): its units are in the document, so it is read there.
    let value = serde_json::Value::Object(doc.fields.iter().cloned().collect());
    if llmd::is_benchmark_report(&value) {
        let mut run = llmd::read(&value).map_err(|(path, m)| vec![report_shape(path, m)])?;
        canonical::reopen(&mut run, input, index);
        close(&mut run, &opts.policy, Claims::None);
        return Ok(vec![run]);
    }
    match detect::classify_doc(doc, opts.definitions) {
        DocKind::CanonicalReport | DocKind::CanonicalRun => {
            let mut value = serde_json::Value::Object(doc.fields.iter().cloned().collect());
            // Absent and null mean the same (docs/agents.md): a document written to the strict
            // schema, every key present, is read as the plain one.
            drop_null_keys(&mut value);
            let shape = check::canonical_shape(&value);
            if !shape.is_empty() {
                return Err(shape_errors(shape));
            }
            // The stated checks are recomputed, never read: their ids need not be this version's
            // (a report written by a later one names rules this one does not have).
            drop_stated_checks(&mut value);
            // The walk above is the contract; serde's reading stays behind it (one error).
            let runs: Vec<Run> = if doc.get("runs").is_some() {
                let report: Report = serde_path_to_error::deserialize(value)
                    .map_err(|e| vec![report_shape(e.path().to_string(), e.inner().to_string())])?;
                report.runs
            } else {
                vec![
                    serde_path_to_error::deserialize(value)
                        .map_err(|e| vec![report_shape(e.path().to_string(), e.inner().to_string())])?,
                ]
            };
            let many = runs.len() > 1 || doc.get("runs").is_some();
            let mut out = Vec::with_capacity(runs.len());
            let mut errors = Vec::new();
            for (i, mut run) in runs.into_iter().enumerate() {
                let at = if many { format!("runs[{i}].") } else { String::new() };
                if let Err((path, msg)) = canonical::check_figure_types(&run) {
                    errors.push(report_shape(format!("{at}{path}"), msg));
                    continue;
                }
                canonical::reopen(&mut run, input, index + i);
                // The stated derived figures are kept aside to be checked, never read: the
                // derivation starts from nothing but the run's own inputs. (A per-request
                // derivation's summary stays: its E2E mean is the arrays' measured one.)
                let stated = std::mem::take(&mut run.derived);
                if stated.tpot_ms.method == Some(report::TpotMethod::PerRequest) {
                    run.derived.per_request = stated.per_request.clone();
                }
                close(&mut run, &opts.policy, Claims::Stated(&stated));
                out.push(run);
            }
            if errors.is_empty() { Ok(out) } else { Err(errors) }
        }
        DocKind::Format { definition, variant, ambiguous_with, by_structure } => {
            if opts.reports_only && definition.format != Format::Report {
                return Err(vec![Error::NoResult {
                    input: input.to_string(),
                    looked_for: format!("a report, not a {} result file", definition.tool),
                }]);
            }
            if definition.id == "dstack-preset" || definition.id == "dstack-metrics" {
                let value = serde_json::Value::Object(doc.fields.iter().cloned().collect());
                let shape = if definition.id == "dstack-preset" {
                    check::dstack_shape(&value)
                } else {
                    check::dstack_metrics_shape(&value)
                };
                if !shape.is_empty() {
                    return Err(shape_errors(shape));
                }
            }
            if let Some(key) = &definition.runs_at {
                // Several runs in one document: each element of the list, with the rest of the
                // document under `top.`.
                let top: serde_json::Map<String, serde_json::Value> =
                    doc.fields.iter().filter(|(k, _)| k != key).cloned().collect();
                let list = doc.get(key).and_then(|v| v.as_array()).cloned().unwrap_or_default();
                let mut runs = Vec::new();
                for (i, el) in list.into_iter().enumerate() {
                    let serde_json::Value::Object(m) = el else { continue };
                    let mut fields: Vec<(String, serde_json::Value)> = m.into_iter().collect();
                    fields.push(("top".into(), serde_json::Value::Object(top.clone())));
                    let element = Doc {
                        line: doc.line,
                        fields,
                        arrays: Vec::new(),
                        elements: Vec::new(),
                        repaired: doc.repaired,
                    };
                    let evidence_keys = detect::doc_keys(&element);
                    let evidence_keys: Vec<&str> = evidence_keys.iter().map(String::as_str).collect();
                    let ev = definition::Evidence {
                        labels: &evidence_keys,
                        sections: &[],
                        banner_width: 0,
                        context_labels: &[],
                    };
                    let variant = definition.variants.iter().find(|v| v.matches(&ev));
                    let recognised =
                        Recognised { ambiguous_with: &ambiguous_with, by_structure: by_structure.as_ref() };
                    runs.push(
                        run_of_doc(&element, definition, variant, input, index + i, opts, &recognised)
                            .map_err(|e| vec![e])?,
                    );
                }
                return Ok(runs);
            }
            let recognised = Recognised { ambiguous_with: &ambiguous_with, by_structure: by_structure.as_ref() };
            Ok(vec![run_of_doc(doc, definition, variant, input, index, opts, &recognised).map_err(|e| vec![e])?])
        }
        DocKind::Unknown => {
            // dstack's preset benchmark with `metrics` of the wrong type is no longer recognized
            // by its keys: its shape errors say more than "no known format".
            if doc.get("metrics").is_some() && doc.get("workload").is_some() && doc.get("tool").is_some() {
                let value = serde_json::Value::Object(doc.fields.iter().cloned().collect());
                let shape = check::dstack_shape(&value);
                if !shape.is_empty() {
                    return Err(shape_errors(shape));
                }
            }
            let keys: Vec<&str> = doc.fields.iter().map(|(k, _)| k.as_str()).take(8).collect();
            Err(vec![Error::Parse {
                at: Location { input: input.to_string(), line: doc.line, column: None, text: None },
                message: format!(
                    "a JSON document that is no known result file or report (keys: {}); looked for: {}",
                    keys.join(", "),
                    json_looked_for(opts.definitions)
                ),
            }])
        }
    }
}

/// How a document's format was told, beyond its definition: the notes its runs carry.
struct Recognised<'r> {
    ambiguous_with: &'r [&'r str],
    by_structure: Option<&'r detect::Structure>,
}

/// extract -> canonical -> derive -> validate, for one JSON document of a definition's format.
fn run_of_doc(
    doc: &Doc,
    definition: &definition::Definition,
    variant: Option<&definition::Variant>,
    input: &str,
    index: usize,
    opts: &Config,
    recognised: &Recognised,
) -> Result<Run, Error> {
    let ambiguous_with = recognised.ambiguous_with;
    let extracted = extract::extract_doc(doc, definition, input)?;
    let origin = canonical::Origin {
        definition,
        variant,
        input,
        block: index,
        first_line: Some(doc.line),
        last_line: None,
        truncated: doc.repaired.cut_after_line.map(|after_line| report::Truncation {
            after_line,
            reason: "closed after its last complete member".into(),
        }),
        format: definition.format,
    };
    let mut run = canonical::assemble(origin, extracted);
    if doc.repaired.comments {
        run.notes.push(Note {
            code: "json-comments".into(),
            message: "the document holds `//` or `/* */` comments (no JSON has them); they were read as blanks".into(),
            line: Some(doc.line),
        });
    }
    if !ambiguous_with.is_empty() {
        run.notes.push(Note {
            code: "ambiguous-tool".into(),
            message: format!("the keys fit {} as well as {}", ambiguous_with.join(", "), definition.id),
            line: Some(doc.line),
        });
    }
    if let Some(structure) = recognised.by_structure {
        run.notes.push(Note {
            code: "recognised-by-structure".into(),
            message: structure.message(definition),
            line: Some(doc.line),
        });
    }
    // A report written by hand: its headline figures against their definitions.
    let claims = if definition.format == Format::Report { Claims::Report } else { Claims::None };
    close(&mut run, &opts.policy, claims);
    Ok(run)
}

/// Every key of an object (at any depth) whose value is `null`, left out: what the strict
/// schema's completion added. (Elements of lists are kept: a `null` there holds a place.)
fn drop_null_keys(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_null_keys);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_null_keys),
        _ => {}
    }
}

/// A canonical report's (or run's) `checks`, taken out before it is read: the rules run again.
fn drop_stated_checks(value: &mut serde_json::Value) {
    match value.get_mut("runs").and_then(serde_json::Value::as_array_mut) {
        Some(runs) => runs.iter_mut().filter_map(serde_json::Value::as_object_mut).for_each(|r| {
            r.remove("checks");
        }),
        None => {
            value.as_object_mut().map(|r| r.remove("checks"));
        }
    }
}
