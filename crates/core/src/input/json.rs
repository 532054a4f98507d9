//! Reading JSON result files and reports as a series of documents.
//!
//! The tools write Python's `json.dump` output, which is not strict JSON: bare `NaN`, `Infinity` and
//! `-Infinity` appear (SGLang's default `"request_rate": Infinity`). [`sanitize`] turns them into
//! strings (`"inf"`, `"-inf"`, `"NaN"`), so they reach the figures as text that reads as "absent".
//!
//! A file holds one document (vLLM `--save-result`, possibly pretty-printed by `vllm bench
//! sweep`), several concatenated ones (`--append-result`), or one per line (SGLang JSONL).
//! [`Documents`] finds each document's extent; in a one-per-line file a document never runs past
//! its line, so one malformed line does not swallow the next. A document is read straight into a
//! [`Doc`]: scalar and small fields as JSON values, and the per-request arrays (`ttfts`, `itls`,
//! ...) into compact typed vectors as they stream past, so a 100k-request file is never held as a
//! tree of values. Which keys are per-request arrays comes from the definitions' `[requests]`.
//! A well-formed document is first tried on a fast path ([`read_doc_fast`]) that counts the gap
//! lists instead of parsing them and skips the generated texts with memchr.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

mod dupes;
pub mod embedded;
mod fast;
mod keep;
pub mod repair;
pub mod units;
pub use dupes::{duplicate_error, duplicate_key, is_duplicate_error};
pub use fast::read_doc as read_doc_fast;
pub use keep::{Keys, Reads};

/// What [`sanitize`] did: where it widened a line, and how many literals it quoted.
#[derive(Debug, Default, Clone)]
pub struct Shifts {
    /// (line, input column of the literal, bytes added)
    widened: Vec<(usize, usize, usize)>,
    pub quoted: usize,
}

impl Shifts {
    /// The input column of an error reported at `(line, column)` of the sanitized text.
    pub fn input_column(&self, line: usize, column: usize) -> usize {
        let mut col = column;
        for (l, c, d) in &self.widened {
            if *l == line && *c + *d < col {
                col -= d;
            }
        }
        col
    }
}

/// Quote bare `Infinity` / `-Infinity` (in place, same length: `"inf"   `) and `NaN` (`"NaN"`,
/// which widens the line) outside strings. Strings are skipped with memchr, so the pass runs at
/// memory speed on a large file. With a `NaN`, the widened text is returned as a new buffer (the
/// input may be a memory-mapped file, which cannot grow).
pub fn sanitize(buf: &mut [u8]) -> (Shifts, Option<Vec<u8>>) {
    let mut nans: Vec<usize> = Vec::new();
    let mut infinities = 0;
    let len = buf.len();
    let mut i = 0;
    while i < len {
        let Some(j) = memchr::memchr3(b'"', b'I', b'N', &buf[i..]) else { break };
        i += j;
        match buf[i] {
            b'"' => {
                // To the closing quote; a raw newline cannot be inside a string, so it ends one too.
                i += 1;
                while i < len {
                    let Some(k) = memchr::memchr3(b'"', b'\\', b'\n', &buf[i..]) else {
                        i = len;
                        break;
                    };
                    i += k;
                    match buf[i] {
                        b'\\' => i += 2,
                        _ => {
                            i += 1;
                            break;
                        }
                    }
                }
            }
            b'I' if buf[i..].starts_with(b"Infinity") => {
                if i > 0 && buf[i - 1] == b'-' {
                    buf[i - 1..i + 8].copy_from_slice(b"\"-inf\"   ");
                } else {
                    buf[i..i + 8].copy_from_slice(b"\"inf\"   ");
                }
                infinities += 1;
                i += 8;
            }
            b'N' if buf[i..].starts_with(b"NaN") => {
                nans.push(i);
                i += 3;
            }
            _ => i += 1,
        }
    }
    let mut shifts = Shifts { widened: Vec::new(), quoted: infinities + nans.len() };
    if nans.is_empty() {
        return (shifts, None);
    }
    let (mut line, mut counted, mut line_start) = (1usize, 0usize, 0usize);
    let mut out = Vec::with_capacity(buf.len() + 2 * nans.len());
    let mut from = 0;
    for at in nans {
        for nl in memchr::memchr_iter(b'\n', &buf[counted..at]) {
            line += 1;
            line_start = counted + nl + 1;
        }
        counted = at;
        shifts.widened.push((line, at - line_start + 1, 2));
        out.extend_from_slice(&buf[from..at]);
        out.extend_from_slice(b"\"NaN\"");
        from = at + 3;
    }
    out.extend_from_slice(&buf[from..]);
    (shifts, Some(out))
}

/// One document's place in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    /// 1-based line of `start`.
    pub line: usize,
    /// Brackets balanced; otherwise the document was cut off (at the end of the text, or of its
    /// line in a one-per-line file).
    pub complete: bool,
}

/// Finds each top-level document in a JSON text.
pub struct Documents<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
    one_per_line: Option<bool>,
}

impl<'a> Documents<'a> {
    pub fn new(text: &'a [u8]) -> Self {
        Documents { text, pos: 0, line: 1, one_per_line: None }
    }

    /// After a malformed document: resume at the next line.
    pub fn skip_to_next_line(&mut self, from: usize) {
        let from = from.max(self.pos).min(self.text.len());
        let skip_to = memchr::memchr(b'\n', &self.text[from..]).map_or(self.text.len(), |i| from + i + 1);
        self.line += self.text[self.pos..skip_to].iter().filter(|b| **b == b'\n').count();
        self.pos = skip_to;
    }
}

impl Iterator for Documents<'_> {
    type Item = Span;

    fn next(&mut self) -> Option<Span> {
        let text = self.text;
        while self.pos < text.len() && (text[self.pos].is_ascii_whitespace() || text[self.pos] == b',') {
            if text[self.pos] == b'\n' {
                self.line += 1;
            }
            self.pos += 1;
        }
        if self.pos >= text.len() {
            return None;
        }
        let start = self.pos;
        let line = self.line;
        let stop_at_newline = self.one_per_line == Some(true);
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        let mut i = start;
        let mut newlines = 0;
        let mut complete = false;
        while i < text.len() {
            let b = text[i];
            if b == b'\n' {
                // A raw newline cannot be inside a JSON string: the document was cut off there.
                if stop_at_newline || in_string {
                    break;
                }
                newlines += 1;
            }
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
            } else {
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            i += 1;
                            complete = true;
                            break;
                        }
                    }
                    _ if depth == 0 => {
                        // A bare scalar at the top: read to the end of the line.
                        let end = memchr::memchr(b'\n', &text[i..]).map_or(text.len(), |n| i + n);
                        i = end;
                        complete = true;
                        break;
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        if self.one_per_line.is_none() {
            // A first document that ends on its own line, followed by a newline: one per line.
            let rest = &text[i.min(text.len())..];
            let next_nl = rest.iter().position(|b| !b.is_ascii_whitespace() || *b == b'\n');
            self.one_per_line = Some(complete && newlines == 0 && next_nl.is_some_and(|p| rest[p] == b'\n'));
        }
        self.line += newlines;
        self.pos = i;
        Some(Span { start, end: i, line, complete })
    }
}

/// How a per-request array is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayKind {
    /// One number per request (`ttfts`, `output_lens`, `latencies`).
    Numbers,
    /// One list of gaps per request (`itls`): kept as count and sum per request.
    Gaps,
    /// One string per request, non-empty on failure (`errors`).
    Errors,
    /// Only counted (`generated_texts`).
    Counted,
}

/// A per-request array, compact.
#[derive(Debug, Clone, PartialEq)]
pub enum Array<'t> {
    Numbers(Vec<Option<f64>>),
    /// Per request: the number of gaps, and their sum.
    Gaps {
        counts: Vec<u32>,
        sums: GapSums<'t>,
    },
    /// failed?, and the first few messages
    Errors(Vec<bool>, Vec<String>),
    Counted(usize),
}

/// The sums of the gaps, read; or their list in the text, left for [`GapSums::read`] (the fast
/// path counts the gaps without parsing them: the sums serve only as E2E latency, for a document
/// without a latency array).
#[derive(Debug, Clone, PartialEq)]
pub enum GapSums<'t> {
    Read(Vec<f64>),
    /// The list's text, and its sums to within a few units of the 16th digit (the fast path's
    /// own parse: for checks with a tolerance, [`GapSums::approx`]).
    Unread {
        text: &'t [u8],
        approx: Vec<f64>,
    },
}

impl GapSums<'_> {
    /// The sum of each request's gaps (`None` if the list in the text does not read, which the
    /// fast path has already ruled out).
    pub fn read(&self) -> Option<std::borrow::Cow<'_, [f64]>> {
        match self {
            GapSums::Read(v) => Some(v.into()),
            GapSums::Unread { text, .. } => {
                let mut de = serde_json::Deserializer::from_slice(text);
                let array = ArraySeed(ArrayKind::Gaps).deserialize(&mut de).ok()?;
                de.end().ok()?;
                match array? {
                    Array::Gaps { sums: GapSums::Read(v), .. } => Some(v.into()),
                    _ => None,
                }
            }
        }
    }
}

impl GapSums<'_> {
    /// The sum of each request's gaps, read exactly or to within a few units of the 16th
    /// significant digit (the fast path's): for checks whose tolerance is far wider.
    pub fn approx(&self) -> Option<std::borrow::Cow<'_, [f64]>> {
        match self {
            GapSums::Read(v) => Some(v.into()),
            GapSums::Unread { approx, .. } => Some(approx.into()),
        }
    }
}

impl Array<'_> {
    pub fn len(&self) -> usize {
        match self {
            Array::Numbers(v) => v.len(),
            Array::Gaps { counts, .. } => counts.len(),
            Array::Errors(v, _) => v.len(),
            Array::Counted(n) => *n,
        }
    }
}

/// One JSON document (one run, or a report).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc<'t> {
    /// 1-based line where the document starts.
    pub line: usize,
    /// Top-level keys other than per-request arrays, in order.
    pub fields: Vec<(String, Value)>,
    /// Per-request arrays by key.
    pub arrays: Vec<(String, Array<'t>)>,
    /// The document was a JSON array of objects (each becomes a document of its own).
    pub elements: Vec<Doc<'t>>,
    /// What was done to a document that did not parse as it was ([`repair`]).
    pub repaired: Repaired,
}

/// What [`repair`] did to a document before it parsed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Repaired {
    /// `//` or `/* */` comments were blanked.
    pub comments: bool,
    /// The document was cut off; it was closed after its last complete member, on this line.
    pub cut_after_line: Option<usize>,
}

impl<'t> Doc<'t> {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn array(&self, key: &str) -> Option<&Array<'t>> {
        self.arrays.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Reads a [`Doc`], keeping the keys in `arrays` compact, and building only the values a
/// definition reaches (others are skimmed: see [`Keys`]).
pub struct DocSeed<'a> {
    pub arrays: &'a Keys,
    pub line: usize,
}

impl<'de> DeserializeSeed<'de> for DocSeed<'_> {
    type Value = Doc<'static>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Doc<'static>, D::Error> {
        d.deserialize_any(DocVisitor { arrays: self.arrays, line: self.line })
    }
}

struct DocVisitor<'a> {
    arrays: &'a Keys,
    line: usize,
}

impl<'de> Visitor<'de> for DocVisitor<'_> {
    type Value = Doc<'static>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object (or a list of objects)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc<'static>, A::Error> {
        let mut doc = Doc { line: self.line, ..Default::default() };
        while let Some(key) = map.next_key::<String>()? {
            match self.arrays.get(&key) {
                Some(kind) => {
                    let array = map.next_value_seed(ArraySeed(*kind))?;
                    if let Some(array) = array {
                        doc.arrays.push((key, array));
                    }
                }
                None => {
                    let v = match keep::top_seed(self.arrays, &key) {
                        Some(seed) => map.next_value_seed(seed)?,
                        None => map.next_value_seed(keep::Skimmed)?,
                    };
                    doc.fields.push((key, v));
                }
            }
        }
        Ok(doc)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc<'static>, A::Error> {
        let mut doc = Doc { line: self.line, ..Default::default() };
        while let Some(el) = seq.next_element_seed(DocSeed { arrays: self.arrays, line: self.line })? {
            doc.elements.push(el);
        }
        Ok(doc)
    }
}

struct ArraySeed(ArrayKind);

impl<'de> DeserializeSeed<'de> for ArraySeed {
    type Value = Option<Array<'static>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<Array<'static>>, D::Error> {
        d.deserialize_any(ArrayVisitor(self.0))
    }
}

struct ArrayVisitor(ArrayKind);

/// A number, or a quoted non-finite (`"NaN"`), or null.
struct LooseNumber(Option<f64>);

impl<'de> de::Deserialize<'de> for LooseNumber {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LooseNumber;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E>(self, v: f64) -> Result<LooseNumber, E> {
                Ok(LooseNumber(Some(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<LooseNumber, E> {
                Ok(LooseNumber(Some(v as f64)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<LooseNumber, E> {
                Ok(LooseNumber(Some(v as f64)))
            }
            fn visit_str<E>(self, _: &str) -> Result<LooseNumber, E> {
                Ok(LooseNumber(None))
            }
            fn visit_unit<E>(self) -> Result<LooseNumber, E> {
                Ok(LooseNumber(None))
            }
            fn visit_none<E>(self) -> Result<LooseNumber, E> {
                Ok(LooseNumber(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The sum and count of a list of gaps.
struct GapSum(f64, u32);

impl<'de> de::Deserialize<'de> for GapSum {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = GapSum;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of numbers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<GapSum, A::Error> {
                let (mut sum, mut n) = (0.0, 0u32);
                // A gap that is no number makes the sum none either (NaN): it is not a time.
                while let Some(LooseNumber(x)) = seq.next_element()? {
                    sum += x.unwrap_or(f64::NAN);
                    n += 1;
                }
                Ok(GapSum(sum, n))
            }
            fn visit_unit<E>(self) -> Result<GapSum, E> {
                Ok(GapSum(0.0, 0))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Visitor<'de> for ArrayVisitor {
    type Value = Option<Array<'static>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list with one entry per request")
    }

    fn visit_unit<E>(self) -> Result<Option<Array<'static>>, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Array<'static>>, A::Error> {
        Ok(Some(match self.0 {
            ArrayKind::Numbers => {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(LooseNumber(x)) = seq.next_element()? {
                    v.push(x);
                }
                Array::Numbers(v)
            }
            ArrayKind::Gaps => {
                let (mut counts, mut sums) = (Vec::new(), Vec::new());
                while let Some(GapSum(s, n)) = seq.next_element()? {
                    counts.push(n);
                    sums.push(s);
                }
                Array::Gaps { counts, sums: GapSums::Read(sums) }
            }
            ArrayKind::Errors => {
                let (mut failed, mut first) = (Vec::new(), Vec::new());
                while let Some(e) = seq.next_element::<Option<String>>()? {
                    let bad = e.as_deref().is_some_and(|s| !s.is_empty());
                    if bad && first.len() < 3 {
                        first.push(e.unwrap_or_default().chars().take(200).collect());
                    }
                    failed.push(bad);
                }
                Array::Errors(failed, first)
            }
            ArrayKind::Counted => {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Array::Counted(n)
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn sanitized(s: &str) -> String {
        let mut b = s.as_bytes().to_vec();
        let widened = sanitize(&mut b).1;
        String::from_utf8(widened.unwrap_or(b)).unwrap()
    }

    #[test]
    fn quotes_python_non_finite_literals_outside_strings() {
        assert_eq!(
            sanitized(r#"{"a": Infinity, "b": [NaN, -Infinity], "c": "NaN Infinity"}"#),
            r#"{"a": "inf"   , "b": ["NaN", "-inf"   ], "c": "NaN Infinity"}"#
        );
        assert_eq!(sanitized(r#"{"s": "a\"Infinity", "n": -1.5}"#), r#"{"s": "a\"Infinity", "n": -1.5}"#);
    }

    #[test]
    fn error_columns_map_back_to_the_input() {
        let mut b = b"{\"a\": NaN, \"b\": }".to_vec();
        let (shifts, widened) = sanitize(&mut b);
        let b = widened.unwrap();
        let err = serde_json::from_slice::<Value>(&b).unwrap_err();
        // `}` is at input column 17; the sanitized text has it at 19.
        assert_eq!((err.line(), err.column()), (1, 19));
        assert_eq!(shifts.input_column(err.line(), err.column()), 17);
    }

    #[test]
    fn documents_one_per_line_never_run_past_their_line() {
        let text = b"{\"a\": 1}\n{\"b\": [1,\n{\"c\": 3}\n";
        let spans: Vec<Span> = Documents::new(text).collect();
        assert_eq!(spans.len(), 3);
        assert_eq!((spans[1].line, spans[1].complete), (2, false));
        assert_eq!(
            (spans[2].line, spans[2].complete, &text[spans[2].start..spans[2].end]),
            (3, true, &b"{\"c\": 3}"[..])
        );
    }

    #[test]
    fn documents_may_span_lines_when_pretty_printed() {
        let text = b"{\n    \"a\": 1,\n    \"b\": [2]\n}\n{\"c\": 3}";
        let spans: Vec<Span> = Documents::new(text).collect();
        assert_eq!(spans.len(), 2);
        assert_eq!((spans[0].line, spans[0].complete), (1, true));
        assert_eq!(spans[1].line, 5);
    }

    /// The per-request arrays of a vLLM detailed result, by how each is kept.
    fn vllm_arrays() -> Keys {
        HashMap::from([
            ("ttfts".to_string(), ArrayKind::Numbers),
            ("itls".to_string(), ArrayKind::Gaps),
            ("errors".to_string(), ArrayKind::Errors),
            ("generated_texts".to_string(), ArrayKind::Counted),
        ])
        .into()
    }

    #[test]
    fn per_request_arrays_are_kept_compact() {
        let arrays = vllm_arrays();
        let text = r#"{"duration": 2.5, "ttfts": [0.1, NaN], "itls": [[0.01, 0.02], []], "errors": ["", "HTTP 500"], "generated_texts": ["a", "b"]}"#;
        let mut b = text.as_bytes().to_vec();
        let b = sanitize(&mut b).1.unwrap_or(b);
        let mut de = serde_json::Deserializer::from_slice(&b);
        let doc = DocSeed { arrays: &arrays, line: 1 }.deserialize(&mut de).unwrap();
        assert_eq!(doc.get("duration"), Some(&Value::from(2.5)));
        assert_eq!(doc.array("ttfts"), Some(&Array::Numbers(vec![Some(0.1), None])));
        assert_eq!(doc.array("itls"), Some(&Array::Gaps { counts: vec![2, 0], sums: GapSums::Read(vec![0.03, 0.0]) }));
        assert_eq!(doc.array("errors"), Some(&Array::Errors(vec![false, true], vec!["HTTP 500".into()])));
        assert_eq!(doc.array("generated_texts"), Some(&Array::Counted(2)));
    }

    /// A document long enough for its gap lists to be read on several threads (where the machine
    /// has them) gives each request's count and sum, in order, as serde_json reads them.
    #[test]
    fn a_long_gap_array_is_read_whole_and_in_order() {
        let arrays = vllm_arrays();
        let requests: Vec<String> =
            (0..100_000).map(|r| format!("[{}]", vec![format!("0.{r:07}2013034376606"); r % 9].join(", "))).collect();
        let text = format!(r#"{{"itls": [{}], "ttfts": [0.5]}}"#, requests.join(", "));
        assert!(text.len() > 2 * fast::MIN_PART, "{} bytes", text.len());
        let fast = read_doc_fast(text.as_bytes(), &arrays, 1).unwrap();
        let mut de = serde_json::Deserializer::from_slice(text.as_bytes());
        let slow = DocSeed { arrays: &arrays, line: 1 }.deserialize(&mut de).unwrap();
        let (Some(Array::Gaps { counts, sums }), Some(Array::Gaps { counts: want, sums: exact })) =
            (fast.array("itls"), slow.array("itls"))
        else {
            panic!("no gap array")
        };
        assert_eq!(counts, want);
        let (approx, exact) = (sums.approx().unwrap(), exact.read().unwrap());
        assert_eq!(approx.len(), exact.len());
        for (r, (a, e)) in approx.iter().zip(exact.iter()).enumerate() {
            assert!((a - e).abs() <= 1e-14 * e.abs(), "request {r}: {a} {e}");
        }
    }

    /// The fast path reads what the slow path reads, or gives up; it never accepts what the slow
    /// path rejects.
    #[test]
    fn the_fast_path_reads_what_serde_reads_or_gives_up() {
        let arrays = vllm_arrays();
        let read_sums = |mut doc: Doc<'_>| -> Doc<'static> {
            let arrays = doc.arrays.drain(..).map(|(k, a)| match a {
                Array::Gaps { counts, sums } => {
                    (k, Array::Gaps { counts, sums: GapSums::Read(sums.read().unwrap().into_owned()) })
                }
                Array::Numbers(v) => (k, Array::Numbers(v)),
                Array::Errors(f, e) => (k, Array::Errors(f, e)),
                Array::Counted(n) => (k, Array::Counted(n)),
            });
            Doc {
                line: doc.line,
                fields: doc.fields,
                arrays: arrays.collect(),
                elements: Vec::new(),
                repaired: doc.repaired,
            }
        };
        let cases = [
            (
                r#"{"duration": 2.5, "ttfts": [0.1, 2], "itls": [[0.01, 0.02], [], null, [1e-7, -0, 2E+2]], "errors": ["", "HTTP 500", null], "generated_texts": ["a\n\u00e9", null, 3]}"#,
                true,
            ),
            (
                " {\n \"a\": {\"b\": [1, {\"c\": null}]}, \"itls\": null, \"generated_texts\": null, \"s\": \"x\\\"y\"\n} \n",
                true,
            ),
            ("{}", true),
            (r#"{"itls": [[0.1, "NaN"]]}"#, false),
            (r#"{"itls": [[0.1, 1e400]]}"#, false),
            (r#"{"itls": [[0.1, 01]]}"#, false),
            (r#"{"itls": [0.1]}"#, false),
            (r#"{"itls": [[0.1,]]}"#, false),
            (r#"{"generated_texts": ["a\x"]}"#, false),
            ("{\"generated_texts\": [\"a\u{1}\"]}", false),
            (r#"{"generated_texts": [true]}"#, false),
            (r#"{"d\u0061te": 1}"#, false),
            (r#"{"a": 1,}"#, false),
            (r#"{"a": 1} x"#, false),
            (r#"[{"a": 1}]"#, false),
            (r#"{"a": tru}"#, false),
            (r#"{"a": [1 2]}"#, false),
        ];
        for (text, fast) in cases {
            let mut de = serde_json::Deserializer::from_slice(text.as_bytes());
            let slow = DocSeed { arrays: &arrays, line: 1 }.deserialize(&mut de).and_then(|d| de.end().map(|_| d));
            match read_doc_fast(text.as_bytes(), &arrays, 1) {
                Some(doc) => assert_eq!(Some(read_sums(doc)), slow.ok(), "{text}"),
                None => assert!(!fast, "the fast path gave up on {text}"),
            }
        }
        // The fast path's own sums of the gaps are the exact ones to 15 significant digits.
        let gaps = r#"{"itls": [[0.12849158899985014, 0.12773959400010426, 1e-7, 2E+2, -0, 3.5e-3], [], [123456789012345678901234.5]]}"#;
        let doc = read_doc_fast(gaps.as_bytes(), &arrays, 1).unwrap();
        let Some(Array::Gaps { sums, .. }) = doc.array("itls") else { panic!() };
        let (exact, approx) = (sums.read().unwrap(), sums.approx().unwrap());
        assert_eq!(exact.len(), 3);
        for (e, a) in exact.iter().zip(approx.iter()) {
            assert!((e - a).abs() <= 1e-15 * e.abs(), "{e} {a}");
        }
        // Nesting near serde_json's limit is left to the slow path, which counts the top level.
        let deep = format!(r#"{{"a": {}{}}}"#, "[".repeat(127), "]".repeat(127));
        assert!(read_doc_fast(deep.as_bytes(), &arrays, 1).is_none());
    }
}
