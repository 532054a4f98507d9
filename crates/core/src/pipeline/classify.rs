//! What an input is, decided once, from its first bytes: an encoding to take off (compressed,
//! UTF-16: [`input::decode`]), a JSON document read whole, or a text read a line at a time. The
//! driver ([`super::read`]) decides it and reads the input as it was decided.

use serde::de::DeserializeSeed;

use crate::Definitions;
use crate::detect::{self, DocKind};
use crate::input::json::{Doc, DocSeed, Documents};
use crate::input::{self, decode};
use crate::pipeline::Config;

/// What an input is.
pub(crate) enum Kind {
    /// Compressed or UTF-16: decoded, then looked at again.
    Encoded(decode::Layer),
    /// A JSON document (a result file, a report), or JSON Lines: read whole.
    Json,
    /// A text: scanned a line at a time.
    Text,
}

/// How much of an input's start is looked at, at most.
pub(crate) const HEAD: usize = 64 * 1024;

/// Whether `head` (the start of an input) shows what the input is: it starts with something
/// other than white space and has [`decode::SNIFF`] bytes, and if it starts like JSON, it shows
/// whether that is a document or a text log of JSON records ([`json_head_is_text`]). A head of
/// [`HEAD`] bytes, or the whole input, shows all it can.
pub(crate) fn decided(head: &[u8], opts: &Config) -> bool {
    let started = head.iter().any(|b| !b.is_ascii_whitespace() && *b != 0xef && *b != 0xbb && *b != 0xbf);
    head.len() >= HEAD
        || started
            && head.len() >= decode::SNIFF
            && (!looks_like_json(head) || opts.reports_only || json_head_is_text(head, opts.definitions).is_some())
}

/// What an input starting with `head` is; `decode`: whether one more encoding may be taken off
/// ([`decode::MAX_LAYERS`]).
pub(crate) fn kind(head: &[u8], opts: &Config, decode: bool) -> Kind {
    match decode.then(|| input::decode::sniff(head)).flatten() {
        Some(layer) => Kind::Encoded(layer),
        None if read_as_json(head, opts) => Kind::Json,
        None => Kind::Text,
    }
}

/// A text that starts like a JSON object or list (after white space and a byte-order mark).
pub(crate) fn looks_like_json(head: &[u8]) -> bool {
    let mut it = head.iter().copied().skip_while(|b| b.is_ascii_whitespace() || matches!(b, 0xef | 0xbb | 0xbf));
    match it.next() {
        Some(b'{') => matches!(it.find(|b| !b.is_ascii_whitespace()), Some(b'"') | Some(b'}') | None),
        Some(b'[') => matches!(it.find(|b| !b.is_ascii_whitespace()), Some(b'{') | Some(b'[') | Some(b']') | None),
        _ => false,
    }
}

/// Whether an input whose first bytes are `head` is read as JSON: it starts like JSON, and is
/// no text log that starts with JSON log records (see [`json_head_is_text`]; `check` reads JSON
/// only).
fn read_as_json(head: &[u8], opts: &Config) -> bool {
    looks_like_json(head) && (opts.reports_only || json_head_is_text(head, opts.definitions) != Some(true))
}

/// Whether a text that starts like JSON is a text log all the same (a JSON log record on its first
/// line, then the tool's output): `Some(true)` when, after complete JSON documents none of which is
/// a known result file or report, comes a line that is no JSON; `Some(false)` when one is a known
/// one (the input is read as JSON, its text lines scanned too); `None` while `head` does not tell.
/// Such a log is then scanned as text a line at a time, in bounded memory, as any other.
fn json_head_is_text(head: &[u8], defs: &Definitions) -> Option<bool> {
    let arrays = defs.json_keys();
    let known = |doc: &Doc| !matches!(detect::classify_doc(doc, defs), DocKind::Unknown);
    let mut docs = Documents::new(head);
    while let Some(span) = docs.next() {
        let slice = &head[span.start..span.end];
        if !looks_like_json(slice) {
            // A line of text after the JSON.
            return Some(true);
        }
        if !span.complete {
            if span.end >= head.len() {
                return None;
            }
            docs.skip_to_next_line(span.start);
            continue;
        }
        let mut de = serde_json::Deserializer::from_slice(slice);
        if let Ok(doc) = (DocSeed { arrays, line: span.line }).deserialize(&mut de)
            && (known(&doc) || doc.elements.iter().any(known))
        {
            return Some(false);
        }
    }
    None
}
