//! Duplicate keys: a JSON object that names one key twice has two meanings, and which one a reader
//! keeps is the reader's choice (Python's `json.loads`, and so dstack's pydantic and llm-d's
//! loader, keep the last; serde_json's map keeps the last too, but this crate reads the top level
//! of a document as a list and kept the first there). A document with one is refused wherever it is
//! read (a result file, a report given to `check`): exit 3, naming the key's JSON path.
//!
//! [`duplicate_key`] finds the first one in a document that has already parsed: one pass with
//! memchr over the bytes that can open or close an object or a string (`{`, `}`, `"`), keeping the
//! keys of each open object; a string followed by `:` is a key of the innermost open object. Lists
//! of numbers (the per-request gaps, most of a result file) hold none of these bytes and are
//! skipped at memchr's speed. Only once a duplicate is found is the document walked again, byte by
//! byte up to it, to name its path with the list indices.

use std::borrow::Cow;

/// The first duplicate key of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// JSON path of the second occurrence (`metrics`, `runs[0].reported.tpot_ms`).
    pub path: String,
    /// The key, as decoded.
    pub key: String,
    /// Byte offsets (in the text given) of the first and the second occurrence's opening quote.
    pub first: usize,
    pub second: usize,
}

/// The keys of one open object: a short list, a set once it grows.
#[derive(Default)]
struct KeySet<'t> {
    small: Vec<(Cow<'t, [u8]>, usize)>,
    big: Option<std::collections::HashMap<Cow<'t, [u8]>, usize>>,
}

const SMALL: usize = 16;

impl<'t> KeySet<'t> {
    /// Adds a key (at `at`); the offset of an earlier one with the same name, if any.
    fn insert(&mut self, key: Cow<'t, [u8]>, at: usize) -> Option<usize> {
        if let Some(big) = &mut self.big {
            if let Some(first) = big.get(&key) {
                return Some(*first);
            }
            big.insert(key, at);
            return None;
        }
        if let Some((_, first)) = self.small.iter().find(|(k, _)| *k == key) {
            return Some(*first);
        }
        self.small.push((key, at));
        if self.small.len() > SMALL {
            self.big = Some(self.small.drain(..).collect());
        }
        None
    }
}

/// A key's text decoded (escapes resolved), or its raw bytes when it has none.
fn decoded(raw: &[u8], escaped: bool) -> Cow<'_, [u8]> {
    if !escaped {
        return Cow::Borrowed(raw);
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    match serde_json::from_slice::<String>(&quoted) {
        Ok(s) => Cow::Owned(s.into_bytes()),
        Err(_) => Cow::Borrowed(raw),
    }
}

/// Past a string whose opening quote is at `open`: (index after the closing quote, whether it has
/// an escape). `None` if it does not close.
fn string_end(text: &[u8], open: usize) -> Option<(usize, bool)> {
    let mut k = open + 1;
    let mut escaped = false;
    loop {
        k += memchr::memchr2(b'"', b'\\', text.get(k..)?)?;
        if text[k] == b'\\' {
            escaped = true;
            k += 2;
            continue;
        }
        return Some((k + 1, escaped));
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

/// Whether the next byte after white space from `i` is `:`.
fn colon_follows(text: &[u8], mut i: usize) -> bool {
    while i < text.len() && is_ws(text[i]) {
        i += 1;
    }
    text.get(i) == Some(&b':')
}

/// The first duplicate key of a well-formed JSON text (one document, or several one after the
/// other), or `None`. Text that is not JSON gives no meaningful answer (call it after a parse).
pub fn duplicate_key(text: &[u8]) -> Option<Duplicate> {
    let mut open: Vec<KeySet> = Vec::new();
    let mut i = 0;
    while let Some(j) = memchr::memchr3(b'"', b'{', b'}', text.get(i..)?) {
        i += j;
        match text[i] {
            b'{' => {
                open.push(KeySet::default());
                i += 1;
            }
            b'}' => {
                open.pop();
                i += 1;
            }
            _ => {
                let start = i;
                let (end, escaped) = string_end(text, start)?;
                i = end;
                if let Some(keys) = open.last_mut()
                    && colon_follows(text, end)
                {
                    let key = decoded(&text[start + 1..end - 1], escaped);
                    if let Some(first) = keys.insert(key.clone(), start) {
                        return Some(Duplicate {
                            path: path_at(text, start),
                            key: String::from_utf8_lossy(&key).into_owned(),
                            first,
                            second: start,
                        });
                    }
                }
            }
        }
    }
    None
}

/// A key appended to a JSON path: `a.b`, or `a["odd key"]` for a key that is not a plain name.
fn join(at: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    match (at.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{at}.{key}"),
        (_, false) => format!("{at}[{}]", serde_json::to_string(key).unwrap_or_default()),
    }
}

/// The JSON path of the key whose opening quote is at `target`: a walk from the start, byte by
/// byte (only done for a duplicate found).
fn path_at(text: &[u8], target: usize) -> String {
    enum Frame {
        Object(Option<String>),
        List(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'{' => stack.push(Frame::Object(None)),
            b'[' => stack.push(Frame::List(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(Frame::List(n)) = stack.last_mut() {
                    *n += 1;
                }
            }
            b'"' => {
                let Some((end, escaped)) = string_end(text, i) else { break };
                if let Some(Frame::Object(current)) = stack.last_mut()
                    && colon_follows(text, end)
                {
                    let key = decoded(&text[i + 1..end - 1], escaped);
                    *current = Some(String::from_utf8_lossy(&key).into_owned());
                }
                if i == target {
                    break;
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(k)) => path = join(&path, k),
            Frame::Object(None) => {}
            Frame::List(n) => path = format!("{path}[{n}]"),
        }
    }
    path
}

const DUPLICATE: &str = "duplicate key";

/// Whether an error is [`duplicate_error`]'s: the document is refused, and not read again as text.
pub fn is_duplicate_error(e: &crate::Error) -> bool {
    matches!(e, crate::Error::Parse { message, .. } if message.starts_with(DUPLICATE))
}

/// The error for a duplicate in `text` (whose first byte is on line `first_line`): where the
/// second occurrence is, the line quoted, and its path.
pub fn duplicate_error(text: &[u8], first_line: usize, input: &str, d: &Duplicate) -> crate::Error {
    let line_of = |at: usize| first_line + memchr::memchr_iter(b'\n', &text[..at]).count();
    let (line, first_line_no) = (line_of(d.second), line_of(d.first));
    let from = text[..d.second].iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
    let to = memchr::memchr(b'\n', &text[d.second..]).map_or(text.len(), |p| d.second + p);
    let column = String::from_utf8_lossy(&text[from..d.second]).chars().count() + 1;
    // The quoted line, cut around the key on a long line (a result file is one line).
    let start = d.second.saturating_sub(60).max(from);
    let start = (start..=d.second).find(|p| std::str::from_utf8(&text[*p..d.second]).is_ok()).unwrap_or(d.second);
    let quoted: String = String::from_utf8_lossy(&text[start..to]).chars().take(120).collect();
    let first = if first_line_no == line {
        "earlier on the same line".to_string()
    } else {
        format!("first at line {first_line_no}")
    };
    crate::Error::Parse {
        at: crate::error::Location { input: input.to_string(), line, column: Some(column), text: Some(quoted) },
        message: format!(
            "{DUPLICATE} {}: {} ({first}); JSON readers differ on which one counts (Python's json, and so \
             dstack and llm-d, keep the last), so the document has no one meaning: remove one of them",
            serde_json::to_string(&d.key).unwrap_or_default(),
            if d.path.is_empty() { "at the top".to_string() } else { d.path.clone() }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(text: &str) -> Option<(String, String)> {
        duplicate_key(text.as_bytes()).map(|d| (d.path, d.key))
    }

    #[test]
    fn finds_duplicates_at_every_depth() {
        assert_eq!(dup(r#"{"a": 1, "b": 2}"#), None);
        assert_eq!(dup(r#"{"metrics": {"x": 1}, "metrics": {"x": 2}}"#), Some(("metrics".into(), "metrics".into())));
        assert_eq!(
            dup(r#"{"runs": [{"a": 1}, {"reported": {"tpot_ms": {"mean": 1, "mean": 2}}}]}"#),
            Some(("runs[1].reported.tpot_ms.mean".into(), "mean".into()))
        );
        // The same key in sibling objects, or as a value, is no duplicate.
        assert_eq!(dup(r#"[{"a": 1}, {"a": 2}, {"b": "a", "c": {"a": "a"}}]"#), None);
        // Escapes are resolved: "d\u0061te" is "date".
        assert_eq!(dup(r#"{"date": 1, "d\u0061te": 2}"#), Some(("date".into(), "date".into())));
        // Strings holding braces and quotes do not confuse it.
        assert_eq!(dup(r#"{"t": "{\"a\": 1, \"a\": 2}", "u": "}"}"#), None);
        // Many keys (a set past the short list).
        let many: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        assert_eq!(dup(&format!("{{{}}}", many.join(","))), None);
        assert_eq!(dup(&format!("{{{}, \"k7\": 0}}", many.join(","))), Some(("k7".into(), "k7".into())));
    }

    #[test]
    fn the_error_names_line_and_path() {
        let text = b"{\n \"metrics\": {\"a\": 1},\n \"metrics\": {\"a\": 2}\n}\n";
        let d = duplicate_key(text).unwrap();
        let e = duplicate_error(text, 1, "r.json", &d);
        let s = e.to_string();
        assert!(s.contains("r.json:3"), "{s}");
        assert!(s.contains("duplicate key \"metrics\": metrics (first at line 2)"), "{s}");
        assert_eq!(e.exit_code(), crate::error::ExitCode::NoResult);
    }

    use proptest::prelude::*;
    use serde_json::Value;

    /// Any JSON value; keys drawn from a small set, with odd ones (escapes, quotes, braces).
    fn value() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            4 => "[a-c]{1,2}",
            1 => Just("a\"{b}".to_string()),
            1 => Just("é\\n".to_string()),
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-1e6f64..1e6).prop_map(|x| serde_json::json!(x)),
            "[a-z{}\":,\\[\\] ]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// `v` written as JSON, with `extra` (a key already there and a value) added to the `n`-th
    /// non-empty object in document order; the path of that object.
    fn write(v: &Value, n: &mut usize, extra: &Value, path: &str, out: &mut String, at: &mut Option<String>) {
        match v {
            Value::Object(m) => {
                out.push('{');
                let mut first = true;
                for (k, x) in m {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push_str(": ");
                    write(x, n, extra, &join(path, k), out, at);
                }
                if !m.is_empty() {
                    if *n == 0 && at.is_none() {
                        let k = m.keys().next().unwrap();
                        out.push_str(&format!(", {}:{}", serde_json::to_string(k).unwrap(), extra));
                        *at = Some(join(path, k));
                    }
                    *n = n.wrapping_sub(1);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(x, n, extra, &format!("{path}[{i}]"), out, at);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }

    proptest! {
        /// A document without a duplicate is never refused; one key written twice in any object at
        /// any depth always is, with that object's path.
        #[test]
        fn one_duplicate_anywhere_is_found(v in value(), pick in 0usize..50, extra in value()) {
            let plain = serde_json::to_string(&v).unwrap();
            prop_assert_eq!(duplicate_key(plain.as_bytes()), None);
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            prop_assert_eq!(duplicate_key(pretty.as_bytes()), None);
            let mut out = String::new();
            let mut at = None;
            fn objects(v: &Value) -> usize {
                match v {
                    Value::Object(m) => usize::from(!m.is_empty()) + m.values().map(objects).sum::<usize>(),
                    Value::Array(a) => a.iter().map(objects).sum(),
                    _ => 0,
                }
            }
            let mut n = pick % objects(&v).max(1);
            write(&v, &mut n, &extra, "", &mut out, &mut at);
            // The text is still JSON (serde_json keeps one of the two).
            prop_assert!(serde_json::from_str::<Value>(&out).is_ok(), "{}", out);
            match at {
                Some(path) => {
                    let d = duplicate_key(out.as_bytes());
                    prop_assert!(d.is_some(), "missed in {}", out);
                    prop_assert_eq!(d.unwrap().path, path);
                }
                None => prop_assert_eq!(duplicate_key(out.as_bytes()), None),
            }
        }
    }
}
