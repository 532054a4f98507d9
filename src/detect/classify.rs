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
    },
    Unknown,
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
/// its keys that no other one knows.
pub fn classify_doc<'d>(doc: &Doc, defs: &'d Definitions) -> DocKind<'d> {
    if doc.get("runs").is_some() && doc.get("schema_version").is_some() {
        return DocKind::CanonicalReport;
    }
    let keys = doc_keys(doc);
    let json_defs: Vec<&Definition> = defs
        .iter()
        .filter(|d| d.is_json())
        .filter(|d| {
            let det = d.detect.as_ref().expect("a JSON format has [detect]");
            det.keys_all.iter().all(|k| keys.contains(k))
                && (det.keys_any.is_empty() || det.keys_any.iter().any(|k| keys.contains(k)))
        })
        .collect();
    if json_defs.is_empty() {
        let canonical = ["totals", "reported", "derived"].iter().any(|k| doc.get(k).is_some_and(|v| v.is_object()));
        return if canonical { DocKind::CanonicalRun } else { DocKind::Unknown };
    }
    let score = |d: &Definition| {
        let known: Vec<&String> = keys.iter().filter(|k| d.key_spec(k).is_some()).collect();
        let unique =
            known.iter().filter(|k| !json_defs.iter().any(|o| o.id != d.id && o.key_spec(k).is_some())).count();
        (unique, known.len())
    };
    let scored: Vec<(&Definition, (usize, usize))> = json_defs.iter().map(|d| (*d, score(d))).collect();
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
    DocKind::Format { definition, variant, ambiguous_with }
}
