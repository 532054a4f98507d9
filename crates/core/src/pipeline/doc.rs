//! One JSON document made runs: read as its author meant it when it does not parse
//! ([`read_repaired`]), recognised (a canonical report, an llm-d Benchmark Report, a format in
//! `parsers/`), extract -> canonical, then [`super::close()`]. Used for a JSON input's documents
//! ([`super::json`]) and for the JSON records found in a text ([`super::embedded`]).

use serde::de::DeserializeSeed;

use crate::detect::{self, DocKind};
use crate::error::Location;
use crate::input::json::{Doc, DocSeed};
use crate::pipeline::Config;
use crate::pipeline::close::{Claims, close};
use crate::report::{self, Format, Note};
use crate::{Definitions, Error, Report, Run, canonical, check, definition, extract, input, llmd};

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

/// An entry of `-f dstack`'s list for several runs ([`crate::dstack::model::entry_object`]) is
/// read as the object it holds; any other document as it is.
pub(crate) fn entry_inner(doc: Doc<'_>) -> Doc<'_> {
    let inner = crate::dstack::model::entry_object(doc.fields.iter().map(|(k, v)| (k.as_str(), v)));
    match inner {
        Some((_, serde_json::Value::Object(m))) if doc.arrays.is_empty() && doc.elements.is_empty() => {
            let fields = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            Doc { line: doc.line, fields, arrays: Vec::new(), elements: Vec::new(), repaired: doc.repaired }
        }
        _ => doc,
    }
}

pub(crate) fn json_looked_for(defs: &Definitions) -> String {
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
