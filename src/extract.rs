//! Reading a block's rows: every row as printed, and for each row that a definition knows, the
//! canonical figure it feeds and the value read from it.

use std::collections::HashMap;

use crate::definition::{Captured, RowSpec, Target};
use crate::detect::{Block, section_name};
use crate::lex::{normalize_label, split_row};
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

/// Everything read from one block.
#[derive(Debug, Default)]
pub struct Extracted {
    pub rows: Vec<Row>,
    pub assignments: Vec<Assignment>,
    pub notes: Vec<Note>,
    /// The block has no section headers (pasted in a flattened form).
    pub sectionless: bool,
}

pub fn extract(block: &Block) -> Extracted {
    let def = block.definition;
    let mut out = Extracted::default();

    for c in &block.context {
        let (label, value) = (c.label.as_str(), c.value.as_str());
        let Some((spec, captured)) = def.context_spec(label) else { continue };
        let field = read_into(&mut out, spec, captured, value, c.line, true);
        out.rows.push(Row {
            section: None,
            label: label.trim_end_matches(':').to_string(),
            value: Some(value.to_string()),
            line: c.line,
            field,
            scope: Some("preamble".into()),
        });
    }

    let spec_block = def.block.as_ref().expect("a text block has a block spec");
    let has_sections = block.body.iter().any(|l| section_name(def, l.text.trim()).is_some_and(|n| !n.is_empty()));
    out.sectionless = !has_sections;
    if !has_sections && block.body.iter().filter(|l| split_row(&l.text).is_some()).count() > 3 {
        let known_sections = def.rows.iter().any(|r| r.sections.is_some());
        if known_sections {
            out.notes.push(Note {
                code: "no-section-headers".into(),
                message: "the block has no section headers (abridged or reformatted paste); rows were matched by label alone".into(),
                line: Some(block.banner.number),
            });
        }
    }

    let mut section: Option<String> = None;
    let mut seen: HashMap<(Option<String>, String), usize> = HashMap::new();
    for line in &block.body {
        let trimmed = line.text.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(name) = section_name(def, trimmed) {
            section = if name.is_empty() { None } else { Some(name) };
            continue;
        }
        if spec_block.noise.iter().any(|n| n.is_match(trimmed)) {
            continue;
        }
        let Some(row) = split_row(&line.text) else {
            out.notes.push(Note {
                code: "not-a-row".into(),
                message: format!("skipped a line inside the block that is not a row: '{}'", shorten(trimmed)),
                line: Some(line.number),
            });
            continue;
        };
        let label = normalize_label(row.label);
        let occurrence = {
            let n = seen.entry((section.clone(), label.clone())).or_insert(0);
            *n += 1;
            *n
        };
        let matched = def.row_spec(section.as_deref(), &label, occurrence, out.sectionless);
        let field = match matched {
            Some((spec, captured)) => read_into(&mut out, spec, captured, row.value, line.number, false),
            None => None,
        };
        out.rows.push(Row {
            section: section.clone(),
            label: label.trim_end_matches(':').to_string(),
            value: (!row.value.is_empty()).then(|| row.value.to_string()),
            line: line.number,
            field,
            scope: None,
        });
    }
    out
}

/// Read a row's value into an assignment; returns the figure path the row fed.
fn read_into(out: &mut Extracted, spec: &RowSpec, captured: Captured, text: &str, line: usize, from_context: bool) -> Option<String> {
    let target = spec.target.as_ref()?;
    let mut target = target.clone();
    if target.stat.is_none() {
        target.stat = captured.stat;
    }
    let kind = match target.stat {
        Some(_) => crate::vocabulary::Kind::Number,
        None if target.field.kind == crate::vocabulary::Kind::List => crate::vocabulary::Kind::Number,
        None => target.field.kind,
    };
    if text.is_empty() {
        return None;
    }
    let (read, remark) = value::read(text, kind, spec.suffix.as_ref());
    let mut path = target.path();
    if let Some(i) = captured.index {
        path = format!("{path}[{i}]");
    }
    if let Some(r) = remark {
        out.notes.push(Note { code: "value-cleaned".into(), message: format!("{path}: {r}"), line: Some(line) });
    }
    match &read {
        Read::Unreadable(why) => {
            out.notes.push(Note { code: "value-unreadable".into(), message: format!("{path}: {why}; the row is kept, the figure is absent"), line: Some(line) });
        }
        Read::Absent(why) if *why != "not set" => {
            out.notes.push(Note { code: "value-absent".into(), message: format!("{path}: printed '{text}' ({why}): absent, not zero"), line: Some(line) });
        }
        _ => {}
    }
    if let (Some(total), Some(b)) = (&spec.total, value::ratio_total(text)) {
        out.assignments.push(Assignment { target: total.clone(), index: None, value: Read::Count(b), line, from_context, unit: None });
    }
    out.assignments.push(Assignment { target, index: captured.index, value: read, line, from_context, unit: spec.unit });
    Some(path)
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 120 { format!("{}...", s.chars().take(117).collect::<String>()) } else { s.to_string() }
}
