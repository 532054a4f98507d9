//! What a JSON document is: a canonical report or run, or a format a definition knows, told by
//! the keys it has. Text is scanned line by line ([`super::Scanner`]); a document is read whole and
//! classified here.

use crate::definition::{Definition, Definitions, Evidence, Variant};
use crate::input::json::Doc;

/// What a JSON document is.
pub enum DocKind<'d> {
    /// `{"schema_version": .., "runs": [..]}`: a canonical report (ours, or written by hand).
    CanonicalReport,
    /// `{"source"?, "totals", "reported", ..}`: one canonical run.
    CanonicalRun,
    /// A format of a definition (result file, dstack report).
    Format {
        definition: &'d Definition,
        variant: Option<&'d Variant>,
        ambiguous_with: Vec<&'d str>,
        /// Recognised by its structure, its format's marker keys missing.
        by_structure: Option<Structure>,
    },
    Unknown,
}

/// How a document without its format's marker keys was recognised: the markers it lacks, and how
/// many of the format's keys it fills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structure {
    pub missing: Vec<String>,
    pub keys: usize,
}

impl Structure {
    /// The note a run read this way carries.
    pub fn message(&self, definition: &Definition) -> String {
        format!(
            "recognised as {} by its structure ({} keys it reads or marks), without its marker keys {}",
            definition.id,
            self.keys,
            self.missing.join(", ")
        )
    }
}

/// Every key of a document as a dotted path (nested objects too), per-request arrays included.
pub fn doc_keys(doc: &Doc) -> Vec<String> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<String>) {
        if let serde_json::Value::Object(m) = v {
            for (k, sub) in m {
                let path = format!("{prefix}.{k}");
                out.push(path.clone());
                walk(&path, sub, out);
            }
        }
    }
    let mut out = Vec::new();
    for (k, v) in &doc.fields {
        out.push(k.clone());
        walk(k, v, &mut out);
    }
    out.extend(doc.arrays.iter().map(|(k, _)| k.clone()));
    out
}

/// Tell what a JSON document is: a canonical report or run, or the definition that knows most of
/// its keys that no other one knows. A format is told by its marker keys (`[detect] keys_all`,
/// `keys_any`) or, when no format's markers are all there (a copy edited by hand, an export cut
/// short), by its structure: the number of distinct `[[key]]` entries of the format it fills, at
/// least the definition's `min_keys`.
pub fn classify_doc<'d>(doc: &Doc, defs: &'d Definitions) -> DocKind<'d> {
    if doc.get("runs").is_some() && doc.get("schema_version").is_some() {
        return DocKind::CanonicalReport;
    }
    let keys = doc_keys(doc);
    let json_defs =
        || defs.iter().filter(|d| d.is_json()).map(|d| (d, d.detect.as_ref().expect("a JSON format has [detect]")));
    let marked = |det: &crate::definition::DetectSpec| {
        det.keys_all.iter().all(|k| keys.contains(k))
            && (det.keys_any.is_empty() || det.keys_any.iter().any(|k| keys.contains(k)))
    };
    if !json_defs().any(|(_, det)| marked(det)) {
        let canonical = ["totals", "reported", "derived"].iter().any(|k| doc.get(k).is_some_and(|v| v.is_object()));
        if canonical {
            return DocKind::CanonicalRun;
        }
    }
    // The formats whose markers the document has, and those whose keys it holds enough of: all
    // are scored alike, so that a marker shared by chance (`backend`) does not outweigh a family
    // of keys only one format has.
    // Each with the keys it holds when it is a candidate by them alone (counted once).
    let found: Vec<(&Definition, Option<usize>)> = json_defs()
        .filter_map(|(d, det)| match marked(det) {
            true => Some((d, None)),
            false if det.min_keys > 0 => {
                Some(filled_keys(d, doc, &keys)).filter(|&n| n >= det.min_keys).map(|n| (d, Some(n)))
            }
            false => None,
        })
        .collect();
    if found.is_empty() {
        return DocKind::Unknown;
    }
    let candidates: Vec<&Definition> = found.iter().map(|(d, _)| *d).collect();
    let structure = |definition: &Definition| {
        let det = definition.detect.as_ref().expect("a JSON format has [detect]");
        let filled = found.iter().find(|(d, _)| d.id == definition.id).and_then(|(_, n)| *n)?;
        let mut missing: Vec<String> =
            det.keys_all.iter().filter(|k| !keys.contains(k)).map(|k| format!("`{k}`")).collect();
        if !det.keys_any.is_empty() && !det.keys_any.iter().any(|k| keys.contains(k)) {
            let any: Vec<String> = det.keys_any.iter().map(|k| format!("`{k}`")).collect();
            missing.push(if any.len() == 1 { any[0].clone() } else { format!("any of {}", any.join(", ")) });
        }
        Some(Structure { missing, keys: filled })
    };
    format_of(&keys, &candidates, &structure)
}

/// How many of the keys `definition` knows: keys it reads (a templated key once per statistic
/// filled) and its marker keys. In a format whose metric objects state their unit (`unit_key`),
/// a key counts only inside an object that states one: without it, the figure's unit is not
/// known, and such objects are other tools' (inference-perf's latencies, in seconds, have
/// AIPerf's names).
fn filled_keys(definition: &Definition, doc: &Doc, keys: &[String]) -> usize {
    let det = definition.detect.as_ref().expect("a JSON format has [detect]");
    let markers = det.keys_all.iter().chain(&det.keys_any).filter(|k| keys.contains(k)).count();
    let stating: std::collections::HashSet<&str> = match &definition.unit_key {
        Some(uk) => keys.iter().filter_map(|k| k.strip_suffix(uk.as_str())?.strip_suffix('.')).collect(),
        None => Default::default(),
    };
    let states_unit = |k: &str| {
        definition.unit_key.is_none() || k.rsplit_once('.').is_some_and(|(parent, _)| stating.contains(parent))
    };
    let mut read = keys.iter().filter(|k| definition.key_spec(k).is_some() && states_unit(k)).count();
    // A format of several runs in a list (guidellm's `benchmarks`): the keys of its first run.
    let first = definition.runs_at.as_ref().and_then(|list| doc.get(list)?.as_array()?.first()?.as_object());
    if let Some(first) = first {
        let element = Doc { fields: first.iter().map(|(k, v)| (k.clone(), v.clone())).collect(), ..Default::default() };
        read += doc_keys(&element).iter().filter(|k| definition.key_spec(k).is_some()).count();
    }
    read + markers
}

/// The one of `candidates` that knows most of the keys no other candidate knows.
fn format_of<'d>(
    keys: &[String],
    candidates: &[&'d Definition],
    by_structure: &dyn Fn(&Definition) -> Option<Structure>,
) -> DocKind<'d> {
    let score = |d: &Definition| {
        let known: Vec<&String> = keys.iter().filter(|k| d.key_spec(k).is_some()).collect();
        let unique =
            known.iter().filter(|k| !candidates.iter().any(|o| o.id != d.id && o.key_spec(k).is_some())).count();
        (unique, known.len())
    };
    let scored: Vec<(&Definition, (usize, usize))> = candidates.iter().map(|d| (*d, score(d))).collect();
    let (definition, best) = scored
        .iter()
        .fold(None::<(&Definition, (usize, usize))>, |acc, (d, s)| match acc {
            Some((_, a)) if a >= *s => acc,
            _ => Some((*d, *s)),
        })
        .expect("not empty");
    let ambiguous_with =
        scored.iter().filter(|(d, s)| d.id != definition.id && *s == best).map(|(d, _)| d.id.as_str()).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let evidence = Evidence { labels: &keys, sections: &[], banner_width: 0, context_labels: &[] };
    let variant = definition.variants.iter().find(|v| v.matches(&evidence));
    DocKind::Format { definition, variant, ambiguous_with, by_structure: by_structure(definition) }
}
