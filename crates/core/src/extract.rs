//! Reading a block's rows: every row as printed, and for each row that a definition knows, the
//! canonical figure it feeds and the value read from it.

use rustc_hash::FxHashMap as HashMap;

use crate::definition::{Captured, RowSpec, Target};
use crate::detect::{Block, section_name};
use crate::lex::split_row_key;
use crate::report::{Note, Row};
use crate::value::{self, Read};

/// A value for a canonical figure, and where it came from.
#[derive(Debug, Clone)]
pub struct Assignment {
    pub target: Target,
    /// Index into a list figure (`Position {index}:`).
    pub index: Option<usize>,
    pub value: Read,
    pub line: usize,
    /// From a line before the banner: a value inside the block wins over it.
    pub from_context: bool,
    /// Unit the value was printed in, when it differs from the figure's.
    pub unit: Option<crate::vocabulary::Unit>,
}

/// Everything read from one block or document.
#[derive(Debug, Default)]
pub struct Extracted {
    pub rows: Vec<Row>,
    pub assignments: Vec<Assignment>,
    pub notes: Vec<Note>,
    /// The block has no section headers (pasted in a flattened form).
    pub sectionless: bool,
    /// Per-request arrays of a result file.
    pub requests: Option<Requests>,
    /// The first row whose label the definition reads, but not where it stands (in another
    /// section, or once more than the tool prints it): its line and label. An honest block has
    /// none; a block with another result's rows mixed in may (see `pipeline::run_of_block`).
    pub misplaced: Option<(usize, String)>,
}

pub fn extract(block: &Block) -> Extracted {
    let def = block.definition;
    let mut out = Extracted::default();
    out.rows.reserve(block.context.len() + block.body.len());
    out.assignments.reserve(block.context.len() + block.body.len());

    // A variant whose client prints no argument dump takes none from before its block.
    let reads_args = block.variant.is_none_or(|v| v.reads_args);
    for c in &block.context {
        let (label, value) = (c.label.as_str(), c.value.as_str());
        if !reads_args && label.starts_with("args.") {
            continue;
        }
        let Some((spec, captured)) = def.context_spec(label) else { continue };
        // An argument read only when another argument of the dump says it applies.
        let applies = spec
            .when_arg
            .as_ref()
            .is_none_or(|(other, want)| block.context.iter().any(|o| o.label == *other && o.value == *want));
        // A line in prose: the figure is what its pattern says (none for a range of values).
        let figure = match &spec.pattern {
            Some(p) => p.figure(value),
            None => Some(value),
        };
        let field = match figure {
            Some(v) if applies => read_into(&mut out, spec, captured, v, c.line, true),
            _ => None,
        };
        out.rows.push(Row {
            section: None,
            label: label.trim_end_matches(':').to_string(),
            value: Some(value.to_string()),
            line: c.line,
            field,
            scope: Some("preamble".into()),
        });
    }

    // Lines printed after the block for the same run (`[[footer]]`): a value inside the block wins.
    for c in &block.footer {
        let Some((spec, captured)) = def.footer_spec(&c.label) else { continue };
        let field = read_into(&mut out, spec, captured, &c.value, c.line, true);
        out.rows.push(Row {
            section: None,
            label: c.label.trim_end_matches(':').to_string(),
            value: Some(c.value.clone()),
            line: c.line,
            field,
            scope: Some("footer".into()),
        });
    }

    let spec_block = def.block.as_ref().expect("a text block has a block spec");
    // Each line as a row (label key and value): as the scanner read it, or read now where it
    // did not (a block made by hand, or a value range that does not fit its line).
    let rows: Vec<Option<(std::borrow::Cow<str>, &str)>> = block
        .body
        .iter()
        .enumerate()
        .map(|(i, l)| match block.rows.get(i) {
            Some(None) => None,
            Some(Some(r)) => l
                .text
                .get(r.value.clone())
                .map(|value| (std::borrow::Cow::Borrowed(r.label.as_str()), value))
                .or_else(|| split_row_key(&l.text)),
            None => split_row_key(&l.text),
        })
        .collect();
    let has_sections = block
        .body
        .iter()
        .zip(&rows)
        .any(|(l, r)| r.is_none() && section_name(def, crate::lex::trim(&l.text)).is_some_and(|n| !n.is_empty()));
    out.sectionless = !has_sections;
    if !has_sections && rows.iter().filter(|r| r.is_some()).count() > 3 {
        let known_sections = def.rows.iter().any(|r| r.sections.is_some());
        if known_sections {
            out.notes.push(Note {
                code: "no-section-headers".into(),
                message:
                    "the block has no section headers (abridged or reformatted paste); rows were matched by label alone"
                        .into(),
                line: Some(block.banner.number),
            });
        }
    }

    let mut section: Option<String> = None;
    // Rows counted by section (its index in `section_names`) and label, borrowed from the block:
    // no copy of either per row.
    let mut section_names: Vec<String> = Vec::new();
    let mut section_id: Option<usize> = None;
    let mut seen: HashMap<(Option<usize>, std::borrow::Cow<str>), usize> =
        HashMap::with_capacity_and_hasher(rows.len(), Default::default());
    // A misplaced row the tool prints before a banner too (`Maximum request concurrency: 128`
    // ahead of vLLM's progress bar) is the next run's preamble when no row of the block follows
    // it (a block cut off, then the next run): not a sign of mixed blocks. `Some(false)`: such a
    // row seen, no row of the block after it yet.
    let mut preamble_tail: Option<bool> = None;
    for (line, row) in block.body.iter().zip(rows) {
        let trimmed = crate::lex::trim(&line.text);
        if trimmed.is_empty() {
            continue;
        }
        if row.is_none()
            && let Some(name) = section_name(def, trimmed)
        {
            section = if name.is_empty() { None } else { Some(name) };
            section_id = section.as_ref().map(|s| match section_names.iter().position(|n| n == s) {
                Some(i) => i,
                None => {
                    section_names.push(s.clone());
                    section_names.len() - 1
                }
            });
            continue;
        }
        if spec_block.noise_first.may_match(trimmed) && spec_block.noise.iter().any(|n| n.is_match(trimmed)) {
            continue;
        }
        let Some((label, value)) = row else {
            out.notes.push(Note {
                code: "not-a-row".into(),
                message: format!("skipped a line inside the block that is not a row: '{}'", shorten(trimmed)),
                line: Some(line.number),
            });
            continue;
        };
        let occurrence = {
            let n = seen.entry((section_id, label.clone())).or_insert(0);
            *n += 1;
            *n
        };
        let matched = def.row_spec(section.as_deref(), &label, occurrence, out.sectionless);
        if let Some((spec, _)) = matched.as_ref().filter(|(spec, _)| !spec.items.is_empty()) {
            if preamble_tail == Some(false) {
                preamble_tail = Some(true);
            }
            read_items(&mut out, spec, section.as_deref(), &label, value, line.number);
            continue;
        }
        let field = match matched {
            Some((spec, captured)) => {
                if preamble_tail == Some(false) {
                    preamble_tail = Some(true);
                }
                read_into(&mut out, spec, captured, value, line.number, false)
            }
            None => {
                if out.misplaced.is_none() && def.knows_label(&label) {
                    out.misplaced = Some((line.number, label.trim_end_matches(':').to_string()));
                    preamble_tail = def.context_spec(&label).map(|_| false);
                }
                None
            }
        };
        out.rows.push(Row {
            section: section.clone(),
            label: label.trim_end_matches(':').to_string(),
            value: (!value.is_empty()).then(|| value.to_string()),
            line: line.number,
            field,
            scope: None,
        });
    }
    if preamble_tail == Some(false) {
        out.misplaced = None;
    }
    out
}

/// A row whose value is a list (`0.068, 4.066, 0.285`, `[0, 0.094, 0.169]`): each item read into
/// the figure its spec names at its place, and kept as a row of its own (the item as its value), so
/// that every kept row names the one figure it fed. Items beyond the named ones feed nothing.
fn read_items(out: &mut Extracted, spec: &RowSpec, section: Option<&str>, label: &str, value: &str, line: usize) {
    let list = crate::lex::trim(value);
    let list = list.strip_prefix('[').and_then(|l| l.strip_suffix(']')).unwrap_or(list);
    let label = label.trim_end_matches(':');
    let mut items: Vec<&str> = list.split(',').map(crate::lex::trim).collect();
    if items.len() != spec.items.len() {
        out.notes.push(Note {
            code: "value-cleaned".into(),
            message: format!("{label}: {} values printed where {} are named", items.len(), spec.items.len()),
            line: Some(line),
        });
    }
    items.resize(items.len().max(spec.items.len()), "");
    for (i, item) in items.into_iter().enumerate() {
        let field = spec.items.get(i).filter(|_| !item.is_empty()).map(|target| {
            let (read, remark) = value::read(item, crate::vocabulary::Kind::Number, spec.suffix.as_deref());
            let path = target.path();
            if let Some(r) = remark {
                out.notes.push(Note {
                    code: "value-cleaned".into(),
                    message: format!("{path}: {r}"),
                    line: Some(line),
                });
            }
            out.notes.extend(unread_note(&path, item, &read, line));
            let unit = spec.unit;
            out.assignments.push(Assignment {
                target: target.clone(),
                index: None,
                value: read,
                line,
                from_context: false,
                unit,
            });
            path
        });
        out.rows.push(Row {
            section: section.map(str::to_string),
            label: label.to_string(),
            value: (!item.is_empty()).then(|| item.to_string()),
            line,
            field,
            scope: None,
        });
    }
}

/// Read a row's value into an assignment; returns the figure path the row fed.
fn read_into(
    out: &mut Extracted,
    spec: &RowSpec,
    captured: Captured,
    text: &str,
    line: usize,
    from_context: bool,
) -> Option<String> {
    let target = spec.target_for(&captured)?;
    let kind = match target.stat {
        Some(_) => crate::vocabulary::Kind::Number,
        None if target.field.kind == crate::vocabulary::Kind::List => crate::vocabulary::Kind::Number,
        None => target.field.kind,
    };
    if text.is_empty() {
        return None;
    }
    let (read, remark) = value::read(text, kind, spec.suffix.as_deref());
    let mut path = target.path();
    if let Some(i) = captured.index {
        path = format!("{path}[{i}]");
    }
    if let Some(r) = remark {
        out.notes.push(Note { code: "value-cleaned".into(), message: format!("{path}: {r}"), line: Some(line) });
    }
    out.notes.extend(unread_note(&path, text, &read, line));
    // (The value is lexed again only for a row that has a total: a tuple of both would lex every one.)
    if let Some(total) = &spec.total
        && let Some(b) = value::ratio_total(text)
    {
        out.assignments.push(Assignment {
            target: total.clone(),
            index: None,
            value: Read::Count(b),
            line,
            from_context,
            unit: None,
        });
    }
    out.assignments.push(Assignment {
        target,
        index: captured.index,
        value: read,
        line,
        from_context,
        unit: spec.unit,
    });
    Some(path)
}

/// The note for a value that is there but gives no figure (not for one that is simply not set,
/// nor for a zero the format uses for "does not apply").
fn unread_note(path: &str, printed: &str, read: &Read, line: usize) -> Option<Note> {
    let message = match read {
        Read::Unreadable(why) => format!("{path}: {why}; the row is kept, the figure is absent"),
        Read::Absent(why) if !matches!(*why, "not set" | "zero: does not apply") => {
            format!("{path}: printed '{printed}' ({why}): absent, not zero")
        }
        _ => return None,
    };
    let code = if matches!(read, Read::Unreadable(_)) { "value-unreadable" } else { "value-absent" };
    Some(Note { code: code.into(), message, line: Some(line) })
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 120 { format!("{}...", s.chars().take(117).collect::<String>()) } else { s.to_string() }
}

// ------------------------------------------------------------------------------------------------
// JSON documents

use serde_json::Value;

use crate::definition::Definition;
use crate::error::{Error, Location};
use crate::input::json::{Array, Doc, units};
use crate::report::Requests;
use crate::vocabulary::Kind;

/// Read a JSON document of a definition's format: every scalar key as a row, known keys into
/// figures, per-request arrays into [`Requests`]. A hand-written report (`strict_types`) with a
/// field of the wrong type or without a required field is an error naming the key.
pub fn extract_doc(doc: &Doc, def: &Definition, input: &str) -> Result<Extracted, Error> {
    let mut out = Extracted::default();
    let shape_error =
        |path: &str, message: String| Error::Report { input: input.to_string(), path: path.to_string(), message };

    // Objects are walked into when a key of the definition lies below them; others are one row.
    let descend = |path: &str| {
        def.rows.iter().any(|r| {
            r.labels.iter().any(|p| {
                p.prefix().starts_with(&format!("{path}.")) || (p.hole().is_some() && p.prefix() == format!("{path}."))
            })
        })
    };
    let descend_list =
        |path: &str| def.rows.iter().any(|r| r.labels.iter().any(|p| p.prefix().starts_with(&format!("{path}["))));
    let mut entries: Vec<(String, &Value)> = Vec::new();
    fn walk<'v>(
        path: String,
        v: &'v Value,
        descend: &dyn Fn(&str) -> bool,
        descend_list: &dyn Fn(&str) -> bool,
        out: &mut Vec<(String, &'v Value)>,
    ) {
        match v {
            Value::Object(m) if descend(&path) => {
                if m.is_empty() {
                    out.push((path.clone(), v));
                }
                for (k, sub) in m {
                    walk(format!("{path}.{k}"), sub, descend, descend_list, out);
                }
            }
            // A list of objects a key reaches into (`phases[0].concurrency`).
            Value::Array(items) if descend_list(&path) => {
                for (i, sub) in items.iter().enumerate() {
                    walk(format!("{path}[{i}]"), sub, descend, descend_list, out);
                }
            }
            _ => out.push((path, v)),
        }
    }
    for (k, v) in &doc.fields {
        walk(k.clone(), v, &descend, &descend_list, &mut entries);
    }

    for spec in def.rows.iter().filter(|r| r.required) {
        let present = entries.iter().any(|(k, _)| {
            spec.matches_label(k).is_some()
                || spec.labels.iter().any(|p| p.hole().is_some() && p.prefix().trim_end_matches('.') == k)
        });
        if !present {
            return Err(shape_error(&spec.label, format!("missing: a required field of the {} shape", def.tool)));
        }
    }

    // Units stated in the document, by the path of the object that states them.
    let stated: std::collections::HashMap<&str, &str> = match &def.unit_key {
        Some(uk) => entries
            .iter()
            .filter_map(|(p, v)| Some((p.strip_suffix(uk.as_str())?.strip_suffix('.')?, v.as_str()?)))
            .collect(),
        None => Default::default(),
    };
    for (path, value) in &entries {
        let target = def.key_spec(path).and_then(|(spec, captured)| Some((spec, spec.target_for(&captured)?)));
        let field = match target {
            Some((spec, target)) => {
                let fed = target.path();
                let unit = path.rsplit_once('.').and_then(|(parent, _)| stated.get(parent).copied());
                read_key(&mut out, spec, target, path, value, def, doc.line, unit)
                    .map_err(|(at, why)| shape_error(&at, why))?;
                Some(fed)
            }
            None => None,
        };
        out.rows.push(Row {
            section: None,
            label: path.clone(),
            value: (!value.is_null()).then(|| compact(value)),
            line: doc.line,
            field,
            scope: None,
        });
    }
    for (key, array) in &doc.arrays {
        out.rows.push(Row {
            section: None,
            label: key.clone(),
            value: Some(format!("[{} per-request values]", array.len())),
            line: doc.line,
            field: None,
            scope: None,
        });
    }
    out.requests = requests_of(doc, def, input)?;
    Ok(out)
}

/// Read a key's value (a list key: each of its items) into assignments, with a note for what
/// gives no figure. A mistyped value, in a format that types its keys strictly, is an error: its
/// path and what is wrong. `stated`: the unit the document states for it (`unit_key`), which
/// wins over the definition's; one that cannot be converted leaves the figure absent, with a
/// `unit-unknown` note.
#[allow(clippy::too_many_arguments)]
fn read_key(
    out: &mut Extracted,
    spec: &RowSpec,
    target: Target,
    key: &str,
    value: &Value,
    def: &Definition,
    line: usize,
    stated: Option<&str>,
) -> Result<(), (String, String)> {
    let (factor, unit) = match stated.map(|u| units::factor(u, target.field.unit, target.field.path)) {
        None => (1.0, spec.unit),
        Some(Ok(f)) => (f, None),
        Some(Err(why)) => {
            if def.strict_types {
                return Err((key.to_string(), why));
            }
            out.notes.push(Note {
                code: "unit-unknown".into(),
                message: format!("{key}: {why}; the row is kept, the figure is absent"),
                line: Some(line),
            });
            return Ok(());
        }
    };
    let kind = if target.stat.is_some() { Kind::Number } else { target.field.kind };
    let reads: Vec<(Option<usize>, Read)> = match (value, kind) {
        (Value::Array(items), Kind::List) => {
            items.iter().enumerate().map(|(i, v)| (Some(i), json_read(v, Kind::Number, def.strict_types))).collect()
        }
        (v, k) => vec![(None, json_read(v, k, def.strict_types))],
    };
    for (index, read) in reads {
        let read = match read {
            Read::Number(n) if n == 0.0 && spec.zero_is_absent => Read::Absent("zero: does not apply"),
            Read::Count(0) if spec.zero_is_absent => Read::Absent("zero: does not apply"),
            Read::Number(n) if factor != 1.0 => Read::Number(scaled(n, factor)),
            Read::Count(c) if factor != 1.0 => Read::Number(scaled(c as f64, factor)),
            r => r,
        };
        let where_ = match index {
            Some(i) => format!("{key}[{i}]"),
            None => key.to_string(),
        };
        match &read {
            Read::Unreadable(why) if def.strict_types => return Err((where_, why.clone())),
            _ => out.notes.extend(unread_note(&where_, &compact(value), &read, line)),
        }
        out.assignments.push(Assignment {
            target: target.clone(),
            index,
            value: read,
            line,
            from_context: false,
            unit,
        });
    }
    Ok(())
}

/// A value in a stated unit, converted without binary noise (`5.42` s is `5420` ms, not
/// `5420.000000000001`), as a printed value in another unit is.
fn scaled(x: f64, factor: f64) -> f64 {
    format!("{:.12e}", x * factor).parse().unwrap_or(x * factor)
}

/// A JSON value as text for a row (strings without quotes).
fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A JSON value read as a figure of `kind`.
fn json_read(v: &Value, kind: Kind, strict: bool) -> Read {
    match (v, kind) {
        (Value::Null, _) => Read::Absent("not set"),
        (Value::String(s), Kind::Text) => Read::Text(s.clone()),
        (Value::String(s), _) if !strict => value::read(s, kind, None).0,
        (Value::String(s), _) => Read::Unreadable(format!("expected a number, got the string \"{s}\"")),
        (Value::Number(n), Kind::Text) if !strict => Read::Text(n.to_string()),
        (Value::Number(_), Kind::Text) => Read::Unreadable(format!("expected a string, got the number {v}")),
        (Value::Number(n), Kind::Count) => match (n.as_u64(), n.as_f64()) {
            (Some(c), _) => Read::Count(c),
            (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 => Read::Count(f as u64),
            _ => Read::Unreadable(format!("expected a whole number, got {n}")),
        },
        (Value::Number(n), _) => match n.as_f64() {
            Some(f) => Read::Number(f),
            None => Read::Unreadable(format!("{n} is out of range")),
        },
        (Value::Bool(b), _) => {
            Read::Unreadable(format!("expected a {}, got {b}", if kind == Kind::Text { "string" } else { "number" }))
        }
        (Value::Array(_), _) => {
            Read::Unreadable(format!("expected a {}, got a list", if kind == Kind::Text { "string" } else { "number" }))
        }
        (Value::Object(_), _) => Read::Unreadable(format!(
            "expected a {}, got an object",
            if kind == Kind::Text { "string" } else { "number" }
        )),
    }
}

/// The per-request arrays of a document, by role, in ms; arrays of different lengths are an error.
fn requests_of(doc: &Doc, def: &Definition, input: &str) -> Result<Option<Requests>, Error> {
    let spec = &def.requests;
    let numbers = |a: &Option<crate::definition::ArraySpec>| -> Option<Vec<Option<f64>>> {
        let a = a.as_ref()?;
        let factor = a.unit.and_then(|u| u.factor_to(crate::vocabulary::Unit::Ms)).unwrap_or(1.0);
        match doc.array(&a.key)? {
            Array::Numbers(v) => Some(v.iter().map(|x| x.map(|x| x * factor)).collect()),
            _ => None,
        }
    };
    let (Some(ttft_ms), Some(output_len)) = (numbers(&spec.ttft), numbers(&spec.output_len)) else {
        return Ok(None);
    };
    let latency_ms = numbers(&spec.latency);
    let input_len = numbers(&spec.input_len);
    // The sums of the gaps stand in for a missing latency array (read exactly then); beside one
    // they are checked against it (`per-request-consistency`), to within a tolerance far wider
    // than the fast path's parse of them.
    let (gap_counts, gap_sums_ms) = spec
        .gaps
        .as_ref()
        .and_then(|a| {
            let factor = a.unit.and_then(|u| u.factor_to(crate::vocabulary::Unit::Ms)).unwrap_or(1.0);
            match doc.array(&a.key)? {
                Array::Gaps { counts, sums } => {
                    let sums = if latency_ms.is_none() { sums.read() } else { sums.approx() };
                    let sums_ms = sums.map(|s| s.iter().map(|s| s * factor).collect::<Vec<_>>());
                    Some((Some(counts.clone()), sums_ms))
                }
                _ => None,
            }
        })
        .unwrap_or_default();
    let (failed, first_errors) = match spec.error.as_ref().and_then(|a| doc.array(&a.key)) {
        Some(Array::Errors(f, first)) => (Some(f.clone()), first.clone()),
        _ => (None, Vec::new()),
    };
    let mut lengths: Vec<(String, usize)> = Vec::new();
    for (key, array) in &doc.arrays {
        lengths.push((key.clone(), array.len()));
    }
    let n = output_len.len();
    if lengths.iter().any(|(_, l)| *l != n) {
        let list: Vec<String> = lengths.iter().map(|(k, l)| format!("{k} {l}")).collect();
        return Err(Error::Parse {
            at: Location { input: input.to_string(), line: doc.line, column: None, text: None },
            message: format!("per-request arrays of different lengths: {}", list.join(", ")),
        });
    }
    Ok(Some(Requests { ttft_ms, latency_ms, output_len, input_len, gap_counts, gap_sums_ms, failed, first_errors }))
}
