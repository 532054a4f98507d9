//! Figures by canonical name: [`Figure`], the ordered group [`Figures`] (report order, the order of
//! the vocabulary), a distribution's statistics [`Stat`] by [`StatKey`], and how they read and
//! write as JSON.

use std::fmt;

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use crate::vocabulary;

/// A figure the tool printed or wrote, by canonical name.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    Count(u64),
    Number(f64),
    Text(String),
    Stat(Stat),
    List(Vec<Option<f64>>),
    Group(Figures),
}

impl Figure {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Figure::Count(c) => Some(*c as f64),
            Figure::Number(n) => Some(*n),
            _ => None,
        }
    }
}

/// A group of figures in report order (the order of `src/vocabulary.toml`).
#[derive(Debug, Clone, Default)]
pub struct Figures {
    entries: Vec<(String, Figure)>,
    /// The report-order rank of each entry, beside `entries`, kept by [`Figures::slot`]; empty
    /// while they are not known (a group read from JSON: ranked on its first insertion).
    ranks: Vec<usize>,
}

/// Equal figures in equal order (the ranks follow from them).
impl PartialEq for Figures {
    fn eq(&self, other: &Figures) -> bool {
        self.entries == other.entries
    }
}

impl Figures {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Figure)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The figure at a dotted path below this group (`ttft_ms`, `speculative.drafts`).
    pub fn get(&self, path: &str) -> Option<&Figure> {
        let (head, rest) = match super::split_dot(path) {
            Some((h, r)) => (h, Some(r)),
            None => (path, None),
        };
        let fig = self.entries.iter().find(|(k, _)| k == head).map(|(_, v)| v)?;
        match (rest, fig) {
            (None, f) => Some(f),
            (Some(r), Figure::Group(g)) => g.get(r),
            (Some(_), _) => None,
        }
    }

    pub fn number(&self, path: &str) -> Option<f64> {
        self.get(path).and_then(Figure::as_f64)
    }

    pub fn text(&self, path: &str) -> Option<&str> {
        match self.get(path)? {
            Figure::Text(t) => Some(t),
            _ => None,
        }
    }

    pub fn stat(&self, path: &str) -> Option<&Stat> {
        match self.get(path)? {
            Figure::Stat(s) => Some(s),
            _ => None,
        }
    }

    /// The slot for a dotted path, created (in report order) if absent. `full` is the whole
    /// canonical path (`reported.speculative.drafts`), used for ordering.
    pub fn slot(&mut self, path: &str, full: &str, make: impl FnOnce() -> Figure) -> &mut Figure {
        let group_prefix = &full[..full.len() - path.len()];
        let (head, rest) = match super::split_dot(path) {
            Some((h, r)) => (h, Some(r)),
            None => (path, None),
        };
        let (idx, inserted) = match self.entries.iter().position(|(k, _)| k == head) {
            Some(i) => (i, false),
            None => {
                // One buffer for the full paths looked up.
                let mut buf = String::with_capacity(group_prefix.len() + 32);
                let mut rank = |k: &str| {
                    buf.clear();
                    buf.push_str(group_prefix);
                    buf.push_str(k);
                    rank_in_report(&buf)
                };
                // Each entry is ranked once (this runs for every figure of a run).
                if self.ranks.len() != self.entries.len() {
                    self.ranks = self.entries.iter().map(|(k, _)| rank(k)).collect();
                }
                let mine = rank(head);
                let at = self.ranks.iter().position(|r| *r > mine).unwrap_or(self.entries.len());
                self.entries.insert(at, (head.to_string(), Figure::Group(Figures::default())));
                self.ranks.insert(at, mine);
                (at, true)
            }
        };
        let fig = &mut self.entries[idx].1;
        match rest {
            None => {
                if inserted {
                    *fig = make();
                }
                fig
            }
            Some(r) => {
                if !matches!(fig, Figure::Group(_)) {
                    *fig = Figure::Group(Figures::default());
                }
                let Figure::Group(g) = fig else { unreachable!("made a group just above") };
                g.slot(r, full, make)
            }
        }
    }

    /// Set a figure at a dotted path, replacing what was there.
    pub fn set(&mut self, path: &str, full: &str, value: Figure) {
        let mut value = Some(value);
        let slot = self.slot(path, full, || value.take().expect("used once"));
        if let Some(v) = value.take() {
            *slot = v;
        }
    }

    pub fn remove(&mut self, name: &str) -> Option<Figure> {
        let i = self.entries.iter().position(|(k, _)| k == name)?;
        if self.ranks.len() == self.entries.len() {
            self.ranks.remove(i);
        }
        Some(self.entries.remove(i).1)
    }
}

/// Rank of a path in report order; a group ranks by its first member, unknown paths last.
pub(super) fn rank_in_report(path: &str) -> usize {
    static RANKS: std::sync::OnceLock<rustc_hash::FxHashMap<String, usize>> = std::sync::OnceLock::new();
    let ranks = RANKS.get_or_init(|| {
        let mut m = rustc_hash::FxHashMap::default();
        for (i, f) in vocabulary::FIELDS.iter().enumerate().rev() {
            // Every path and every group above it, at the rank of its first member.
            let mut p = f.path;
            m.insert(p.to_string(), i);
            while let Some((head, _)) = p.rsplit_once('.') {
                m.insert(head.to_string(), i);
                p = head;
            }
        }
        m
    });
    ranks.get(path).copied().unwrap_or(usize::MAX)
}

impl Serialize for Figures {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for Figure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Figure::Count(c) => s.serialize_u64(*c),
            Figure::Number(n) => s.serialize_f64(*n),
            Figure::Text(t) => s.serialize_str(t),
            Figure::Stat(st) => st.serialize(s),
            Figure::List(l) => {
                let mut seq = s.serialize_seq(Some(l.len()))?;
                for v in l {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Figure::Group(g) => g.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Figures {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Figure::deserialize(d)? {
            Figure::Group(g) => Ok(g),
            Figure::Stat(st) => {
                // An object of stat keys only is still a group here (e.g. `{}`).
                let mut g = Figures::default();
                for (k, v) in st.values {
                    g.entries.push((k.to_string(), Figure::Number(v)));
                }
                Ok(g)
            }
            _ => Err(de::Error::custom("expected an object of figures")),
        }
    }
}

impl<'de> Deserialize<'de> for Figure {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Figure;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number, a string, a list or an object of figures")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Figure, E> {
                Ok(Figure::Count(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Figure, E> {
                Ok(Figure::Number(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Figure, E> {
                Ok(Figure::Number(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Figure, E> {
                Ok(Figure::Text(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Figure, E> {
                Ok(Figure::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Figure, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = a.next_element::<Option<f64>>()? {
                    out.push(v);
                }
                Ok(Figure::List(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Figure, A::Error> {
                let mut entries: Vec<(String, Figure)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Option<Figure>>()? {
                    if let Some(v) = v {
                        entries.push((k, v));
                    }
                }
                let all_stat = !entries.is_empty()
                    && entries.iter().all(|(k, v)| StatKey::parse(k).is_some() && v.as_f64().is_some());
                if all_stat {
                    let mut st = Stat::default();
                    for (k, v) in entries {
                        st.set(StatKey::parse(&k).expect("checked"), v.as_f64().expect("checked"));
                    }
                    Ok(Figure::Stat(st))
                } else {
                    Ok(Figure::Group(Figures { entries, ranks: Vec::new() }))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Which statistic of a distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatKey {
    Mean,
    Min,
    /// A percentile, e.g. 50, 99, 99.9 (`median` is `P(50)`).
    P(f64),
    Max,
    Std,
}

impl StatKey {
    /// `Mean`, `mean`, `Median`, `P99`, `p99.9`, `Max`, `Min`, `Std`, `avg`.
    pub fn parse(s: &str) -> Option<StatKey> {
        let s = crate::lex::trim(s);
        let is = |w: &str| s.eq_ignore_ascii_case(w);
        if is("mean") || is("avg") || is("average") {
            return Some(StatKey::Mean);
        }
        if is("median") || is("mdn") {
            return Some(StatKey::P(50.0));
        }
        if is("min") {
            return Some(StatKey::Min);
        }
        if is("max") {
            return Some(StatKey::Max);
        }
        if is("std") || is("stddev") {
            return Some(StatKey::Std);
        }
        let num = s.strip_prefix('p').or_else(|| s.strip_prefix('P'))?;
        if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
            return None;
        }
        let p = crate::number::parse(num)?;
        (0.0..=100.0).contains(&p).then_some(StatKey::P(p))
    }

    fn rank(self) -> (u8, f64) {
        match self {
            StatKey::Mean => (0, 0.0),
            StatKey::Min => (1, 0.0),
            StatKey::P(p) => (2, p),
            StatKey::Max => (3, 0.0),
            StatKey::Std => (4, 0.0),
        }
    }

    /// The key as reports write it (`mean`, `p99`, `p99.9`): its Display text, borrowed for the
    /// usual keys rather than formatted (every statistic of every run is written with one).
    pub fn name(&self) -> std::borrow::Cow<'static, str> {
        const USUAL: [(f64, &str); 13] = [
            (1.0, "p1"),
            (5.0, "p5"),
            (10.0, "p10"),
            (25.0, "p25"),
            (50.0, "p50"),
            (75.0, "p75"),
            (80.0, "p80"),
            (90.0, "p90"),
            (95.0, "p95"),
            (99.0, "p99"),
            (99.5, "p99.5"),
            (99.9, "p99.9"),
            (99.99, "p99.99"),
        ];
        match self {
            StatKey::Mean => "mean".into(),
            StatKey::Min => "min".into(),
            StatKey::Max => "max".into(),
            StatKey::Std => "std".into(),
            StatKey::P(p) => match USUAL.iter().find(|(q, _)| q == p) {
                Some((_, name)) => (*name).into(),
                None => self.to_string().into(),
            },
        }
    }
}

impl fmt::Display for StatKey {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            StatKey::Mean => f.write_str("mean"),
            StatKey::Min => f.write_str("min"),
            StatKey::P(p) => write!(f, "p{p}"),
            StatKey::Max => f.write_str("max"),
            StatKey::Std => f.write_str("std"),
        }
    }
}

/// Statistics of one distribution, in the order mean, min, percentiles ascending, max, std.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stat {
    values: Vec<(StatKey, f64)>,
}

impl Stat {
    /// Where a statistic is, or would go (kept sorted: a block of many percentiles stays fast).
    fn position(&self, key: StatKey) -> Result<usize, usize> {
        let want = key.rank();
        self.values.binary_search_by(|(k, _)| k.rank().partial_cmp(&want).unwrap_or(std::cmp::Ordering::Less))
    }

    pub fn get(&self, key: StatKey) -> Option<f64> {
        self.position(key).ok().map(|i| self.values[i].1)
    }

    pub fn mean(&self) -> Option<f64> {
        self.get(StatKey::Mean)
    }

    /// Set a statistic; returns the previous value.
    pub fn set(&mut self, key: StatKey, v: f64) -> Option<f64> {
        match self.position(key) {
            Ok(i) => Some(std::mem::replace(&mut self.values[i].1, v)),
            Err(i) => {
                self.values.insert(i, (key, v));
                None
            }
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (StatKey, f64)> + '_ {
        self.values.iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl Serialize for Stat {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.values.len()))?;
        for (k, v) in &self.values {
            m.serialize_entry(&k.name(), v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_keys_parse_and_order() {
        let mut s = Stat::default();
        for (k, v) in [("Max", 9.0), ("P99", 5.0), ("Median", 3.0), ("Mean", 4.0), ("P99.9", 6.0), ("P90", 4.5)] {
            s.set(StatKey::parse(k).unwrap(), v);
        }
        let keys: Vec<String> = s.iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(keys, ["mean", "p50", "p90", "p99", "p99.9", "max"]);
        assert_eq!(StatKey::parse("P1000"), None);
        assert_eq!(StatKey::parse("Pfoo"), None);
    }

    #[test]
    fn stat_key_names_are_their_display() {
        let mut keys = vec![StatKey::Mean, StatKey::Min, StatKey::Max, StatKey::Std];
        keys.extend(
            [
                0.0, 0.1, 1.0, 5.0, 10.0, 25.0, 33.3, 50.0, 75.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 99.999,
                100.0,
            ]
            .map(StatKey::P),
        );
        for k in keys {
            assert_eq!(k.name(), k.to_string(), "{k:?}");
        }
        assert!(matches!(StatKey::P(99.9).name(), std::borrow::Cow::Borrowed("p99.9")));
    }

    #[test]
    fn figures_keep_vocabulary_order_and_nest() {
        let mut f = Figures::default();
        f.set("itl_ms", "reported.itl_ms", Figure::Text("x".into()));
        f.set("speculative.drafts", "reported.speculative.drafts", Figure::Count(3));
        f.set("ttft_ms", "reported.ttft_ms", Figure::Number(1.0));
        let names: Vec<&str> = f.iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["ttft_ms", "itl_ms", "speculative"]);
        assert_eq!(f.number("speculative.drafts"), Some(3.0));
    }

    #[test]
    fn figures_round_trip_through_json() {
        let mut f = Figures::default();
        let mut st = Stat::default();
        st.set(StatKey::Mean, 12.8);
        st.set(StatKey::P(99.0), 13.0);
        f.set("tpot_ms", "reported.tpot_ms", Figure::Stat(st));
        f.set("accept_length", "reported.accept_length", Figure::Number(2.5));
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(json, r#"{"tpot_ms":{"mean":12.8,"p99":13.0},"accept_length":2.5}"#);
        let back: Figures = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn figures_read_from_json_are_ranked_when_one_is_added() {
        // Written by hand out of report order: a new figure goes before the first entry that
        // ranks after it (the model below), the others stay where they were.
        let rank = |k: &str| rank_in_report(&format!("reported.{k}"));
        let model = |names: &mut Vec<String>, k: &str| {
            let at = names.iter().position(|n| rank(n) > rank(k)).unwrap_or(names.len());
            names.insert(at, k.to_string());
        };
        let mut f: Figures =
            serde_json::from_str(r#"{"itl_ms":{"mean":2.0},"ttft_ms":{"mean":1.0},"e2e_ms":{"mean":3.0}}"#).unwrap();
        let mut want: Vec<String> = ["itl_ms", "ttft_ms", "e2e_ms"].map(String::from).to_vec();
        let names = |f: &Figures| f.iter().map(|(k, _)| k.to_string()).collect::<Vec<_>>();
        for (k, v) in [("tpot_ms", 4.0), ("request_per_s", 5.0), ("unknown_figure", 6.0)] {
            f.set(k, &format!("reported.{k}"), Figure::Number(v));
            model(&mut want, k);
            assert_eq!(names(&f), want);
        }
        assert!(f.remove("itl_ms").is_some());
        want.retain(|n| n != "itl_ms");
        f.set("itl_ms", "reported.itl_ms", Figure::Number(7.0));
        model(&mut want, "itl_ms");
        assert_eq!(names(&f), want);
        assert!(
            want.windows(2).any(|w| rank(&w[0]) > rank(&w[1])),
            "the hand-written order is kept, not sorted: {want:?}"
        );
    }
}
