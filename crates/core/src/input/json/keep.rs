//! Which values of a JSON document are built, and which are read past without being built.
//!
//! A result file may carry anything beside the keys a definition reads: a 100 MB file whose
//! unknown key held 50M numbers took 6 GB as a tree of values (and its whole text again as a
//! row). Values are built where some definition (its keys, detection keys, variants, list of
//! runs) or the canonical report reaches: on the path to a key they name, and below one. Any
//! other value is kept whole while it is small (up to [`SKIM_BUDGET`] entries: it is still a row,
//! as the file has it); a larger one is read entry by entry, each dropped as it is read, and stands
//! in the document as a short text (`[50000000 values, not read]`), so its key is still a row.
//!
//! Which paths are wanted is decided conservatively (a placeholder in a key template matches any
//! key with the template's text around it), so a value a definition reads is never skipped; one
//! kept in vain only costs memory.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::ArrayKind;

/// One segment of a key template.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    /// A key with a placeholder: the text before and after it.
    Hole(String, String),
    /// A list index (`[0]`, `[{index}]`): any index.
    Index,
}

/// The per-request arrays and the wanted paths of the loaded definitions.
#[derive(Debug, Default)]
pub struct Keys {
    pub arrays: HashMap<String, ArrayKind>,
    /// Key templates, by segment; `None`: every value is wanted.
    templates: Option<Vec<Vec<Seg>>>,
    /// The templates by their first key, and those that begin with a placeholder.
    by_first: HashMap<String, Vec<usize>>,
    loose: Vec<usize>,
}

impl From<HashMap<String, ArrayKind>> for Keys {
    /// Every value wanted.
    fn from(arrays: HashMap<String, ArrayKind>) -> Self {
        Keys { arrays, ..Default::default() }
    }
}

/// The top-level keys of a canonical report and run (read whole, to be checked and re-derived).
fn canonical_keys() -> &'static [String] {
    static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let run = serde_json::to_value(schemars::schema_for!(crate::report::Run)).unwrap_or_default();
        let mut keys = vec!["schema_version".to_string(), "runs".to_string()];
        if let Some(props) = run.get("properties").and_then(Value::as_object) {
            keys.extend(props.keys().cloned());
        }
        keys
    })
}

/// Split a template (`input_config.phases[0].concurrency`, `{stat}_ttft_ms`; `\0` stands for a
/// placeholder) into segments.
fn segments(template: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in template.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(match name.split_once('\0') {
                Some((before, after)) => Seg::Hole(before.into(), after.into()),
                None => Seg::Key(name.into()),
            });
        }
        while let Some(close) = rest.find(']') {
            out.push(Seg::Index);
            rest = &rest[close + 1..];
        }
    }
    out
}

/// What one JSON definition reads, for [`Keys::of`]: its key names (dotted paths; a `{stat}`
/// hole written as the prefix and suffix around a `\0`), and the key of its list of runs when its
/// runs are the elements of one (a name starting `top.` is then read at the top).
pub struct Reads {
    pub names: Vec<String>,
    pub runs_at: Option<String>,
}

impl Keys {
    /// The keys to keep: the per-request `arrays`, the canonical report's keys, and what each
    /// JSON definition reads (its `reads`, see [`Reads`]).
    pub fn of(arrays: HashMap<String, ArrayKind>, reads: &[Reads]) -> Keys {
        let mut templates: Vec<Vec<Seg>> = Vec::new();
        for k in canonical_keys() {
            templates.push(vec![Seg::Key(k.clone())]);
        }
        for r in reads {
            for name in &r.names {
                match &r.runs_at {
                    // Read at the top (`top.`), or in each element of the list of runs.
                    Some(list) => match name.strip_prefix("top.") {
                        Some(top) => templates.push(segments(top)),
                        None => {
                            let mut t = vec![Seg::Key(list.clone()), Seg::Index];
                            t.extend(segments(name));
                            templates.push(t);
                            templates.push(segments(name));
                        }
                    },
                    None => templates.push(segments(name)),
                }
            }
            if let Some(list) = &r.runs_at {
                templates.push(vec![Seg::Key(list.clone()), Seg::Index]);
            }
        }
        Keys::indexed(arrays, templates)
    }

    fn indexed(arrays: HashMap<String, ArrayKind>, templates: Vec<Vec<Seg>>) -> Keys {
        let (mut by_first, mut loose) = (HashMap::<String, Vec<usize>>::new(), Vec::new());
        for (i, t) in templates.iter().enumerate() {
            match t.first() {
                Some(Seg::Key(k)) => by_first.entry(k.clone()).or_default().push(i),
                _ => loose.push(i),
            }
        }
        Keys { arrays, templates: Some(templates), by_first, loose }
    }

    pub fn get(&self, key: &str) -> Option<&ArrayKind> {
        self.arrays.get(key)
    }

    /// Whether the value at `path` (keys, and `None` for a list element) is built: it is on the
    /// way to a template's key, or at or below one.
    fn wants(&self, path: &[Option<&str>]) -> bool {
        let Some(templates) = &self.templates else { return true };
        let first = match path.first() {
            Some(Some(k)) => self.by_first.get(*k).map_or(&[][..], Vec::as_slice),
            _ => &[][..],
        };
        first.iter().chain(&self.loose).map(|i| &templates[*i]).any(|t| {
            path.iter().zip(t).all(|(p, s)| match (p, s) {
                (None, Seg::Index) => true,
                (Some(k), Seg::Key(name)) => k == name,
                (Some(k), Seg::Hole(before, after)) => {
                    k.len() >= before.len() + after.len()
                        && k.starts_with(before.as_str())
                        && k.ends_with(after.as_str())
                }
                _ => false,
            })
        })
    }

    /// Whether the top-level value at `key` is built.
    pub fn wants_top(&self, key: &str) -> bool {
        self.wants(&[Some(key)])
    }
}

/// Reads a value, building only what [`Keys`] wants below `path` (the value's own path, which is
/// wanted).
pub struct Pruned<'a> {
    pub keys: &'a Keys,
    pub path: Vec<Option<String>>,
}

impl Pruned<'_> {
    fn child(&self, seg: Option<String>) -> Option<Pruned<'_>> {
        let mut path = self.path.clone();
        path.push(seg);
        let view: Vec<Option<&str>> = path.iter().map(Option::as_deref).collect();
        self.keys.wants(&view).then_some(Pruned { keys: self.keys, path })
    }
}

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(PrunedVisitor(self))
    }
}

struct PrunedVisitor<'a>(Pruned<'a>);

macro_rules! scalars {
    () => {
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_string()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    };
}

impl<'de> Visitor<'de> for PrunedVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        match self.0.child(None) {
            Some(child) => {
                while let Some(v) = seq.next_element_seed(Pruned { keys: child.keys, path: child.path.clone() })? {
                    out.push(v);
                }
            }
            None => {
                while let Some(v) = seq.next_element_seed(Skimmed)? {
                    out.push(v);
                }
            }
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let v = match self.0.child(Some(key.clone())) {
                Some(child) => map.next_value_seed(child)?,
                None => map.next_value_seed(Skimmed)?,
            };
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Entries (list items and object members, at any depth) a value nothing reads may have and still
/// be kept whole, as its row's text: a metric object nothing reads (AIPerf's
/// `time_to_second_token`) stays as the file has it.
pub const SKIM_BUDGET: i64 = 10_000;

/// A value nothing reads: kept whole up to [`SKIM_BUDGET`] entries; a larger array or object is
/// walked without being built (its entries are dropped as they are read) and stands as
/// `[N values, not read]` / `{N keys, not read}`.
pub struct Skimmed;

impl<'de> DeserializeSeed<'de> for Skimmed {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let left = std::cell::Cell::new(SKIM_BUDGET);
        d.deserialize_any(Bounded { left: &left, top: true })
    }
}

/// A value built while the budget `left` lasts; past it, nothing more is kept.
struct Bounded<'c> {
    left: &'c std::cell::Cell<i64>,
    top: bool,
}

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let (mut out, mut n) = (Vec::new(), 0u64);
        while let Some(v) = seq.next_element_seed(Bounded { left: self.left, top: false })? {
            n += 1;
            self.left.set(self.left.get() - 1);
            if self.left.get() >= 0 {
                out.push(v);
            }
        }
        Ok(match (self.left.get() < 0, self.top) {
            (false, _) => Value::Array(out),
            (true, true) => Value::String(format!("[{n} values, not read]")),
            (true, false) => Value::Null,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let (mut out, mut n) = (Map::new(), 0u64);
        while let Some(key) = map.next_key::<String>()? {
            let v = map.next_value_seed(Bounded { left: self.left, top: false })?;
            n += 1;
            self.left.set(self.left.get() - 1);
            if self.left.get() >= 0 {
                out.insert(key, v);
            }
        }
        Ok(match (self.left.get() < 0, self.top) {
            (false, _) => Value::Object(out),
            (true, true) => Value::String(format!("{{{n} keys, not read}}")),
            (true, false) => Value::Null,
        })
    }
}

/// A top-level value of a document: built where wanted (`None`: skim it with [`Skimmed`]).
pub fn top_seed<'a>(keys: &'a Keys, key: &str) -> Option<Pruned<'a>> {
    keys.wants_top(key).then(|| Pruned { keys, path: vec![Some(key.to_string())] })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(templates: &[&str]) -> Keys {
        Keys::indexed(HashMap::new(), templates.iter().map(|t| segments(&t.replace("{stat}", "\0"))).collect())
    }

    fn read(keys: &Keys, text: &str) -> Value {
        let mut de = serde_json::Deserializer::from_str(text);
        let v = Pruned { keys, path: Vec::new() }.deserialize(&mut de).unwrap();
        de.end().unwrap();
        v
    }

    #[test]
    fn large_values_nothing_reaches_are_skipped_and_counted() {
        let k = keys(&["request_latency.{stat}", "{stat}_ttft_ms", "input_config.phases[0].concurrency", "runs"]);
        let big = |n: usize| format!("[{}]", vec!["[1, 2]"; n].join(","));
        let many = |n: usize| format!("{{{}}}", (0..n).map(|i| format!("\"k{i}\": 0")).collect::<Vec<_>>().join(","));
        let text = format!(
            r#"{{"request_latency": {{"unit": "ms", "avg": 1.5, "extra": {}}}, "mean_ttft_ms": 3, "junk": {}, "small": [1, [2, 3], {{"a": 4}}],
               "input_config": {{"phases": [{{"concurrency": 4, "big": {}}}], "other": {{"x": 1}}}}, "runs": [{{"a": [1, 2]}}],
               "meta": {}, "s": "text"}}"#,
            big(4000),
            big(4000),
            many(10_001),
            many(10_001)
        );
        let v = read(&k, &text);
        // On the way to a wanted key, or below one: built (a placeholder matches any key).
        assert_eq!(v["request_latency"]["extra"].as_array().map(Vec::len), Some(4000));
        assert_eq!(v["mean_ttft_ms"], 3);
        assert_eq!(v["runs"], serde_json::json!([{"a": [1, 2]}]));
        assert_eq!(v["input_config"]["phases"][0]["concurrency"], 4);
        // Nothing reads them: small ones kept as they are, large ones counted.
        assert_eq!(v["small"], serde_json::json!([1, [2, 3], {"a": 4}]));
        assert_eq!(v["input_config"]["other"], serde_json::json!({"x": 1}));
        assert_eq!(v["s"], "text");
        assert_eq!(v["junk"], "[4000 values, not read]");
        assert_eq!(v["input_config"]["phases"][0]["big"], "{10001 keys, not read}");
        assert_eq!(v["meta"], "{10001 keys, not read}");
    }

    #[test]
    fn templates_split_into_segments() {
        assert_eq!(
            segments("a.b[0][1].c\0d"),
            vec![Seg::Key("a".into()), Seg::Key("b".into()), Seg::Index, Seg::Index, Seg::Hole("c".into(), "d".into())]
        );
    }
}
