//! The canonical report: the data every stage passes on, and what `emit` writes.
//!
//! The names are a contract (see docs/report.md): `schema_version`, `runs[]`,
//! `source`, `workload`, `totals`, `reported`, `derived`, `checks`, `verdict`, `rows`.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::vocabulary;

pub const SCHEMA_VERSION: u32 = 1;

/// The JSON Schema of a whole report (draft 2020-12), `bench-normalize schema`.
pub fn schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Report)).expect("a schema is JSON");
    schema["title"] = serde_json::json!("bench-normalize report");
    schema
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    pub runs: Vec<Run>,
}

impl Report {
    pub fn new(runs: Vec<Run>) -> Report {
        Report { schema_version: SCHEMA_VERSION, runs }
    }
}

/// One benchmark run: one result block, one JSONL line, one JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Run {
    #[serde(default)]
    pub source: Source,
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::workload")]
    pub workload: Figures,
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::totals")]
    pub totals: Figures,
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::reported")]
    pub reported: Figures,
    #[serde(default)]
    pub derived: Derived,
    #[serde(default)]
    pub checks: Vec<Check>,
    #[serde(default = "Verdict::accepted")]
    pub verdict: Verdict,
    /// What the normalizer noticed on the way: corrections, unreadable values, ambiguities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// `--slo`: each objective judged on this run, in the order given; absent without `--slo`.
    /// Never read from an input: `check` judges a report again when `--slo` is given.
    #[serde(default, skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub objectives: Option<Vec<ObjectiveResult>>,
    /// Every row as printed, in order: nothing the tool printed is lost.
    #[serde(default)]
    pub rows: Vec<Row>,
    /// Per-request arrays of a result file, for the derivation; not written out.
    #[serde(skip)]
    pub requests: Option<Box<Requests>>,
}

impl Run {
    /// The run's source, checks and verdict alone: its figures, notes and rows dropped here.
    pub fn outline(self) -> Run {
        Run {
            source: self.source,
            checks: self.checks,
            verdict: self.verdict,
            workload: Figures::default(),
            totals: Figures::default(),
            reported: Figures::default(),
            derived: Derived::default(),
            notes: Vec::new(),
            objectives: self.objectives,
            rows: Vec::new(),
            requests: None,
        }
    }

    /// The group a canonical path lives in and the path inside it:
    /// `totals.duration_s` is `duration_s` in `totals`.
    pub fn group<'p>(&self, path: &'p str) -> (&Figures, &'p str) {
        let (head, rel) = path.split_once('.').unwrap_or(("reported", path));
        let g = match head {
            "workload" => &self.workload,
            "totals" => &self.totals,
            _ => &self.reported,
        };
        (g, rel)
    }

    pub fn group_mut<'p>(&mut self, path: &'p str) -> (&mut Figures, &'p str) {
        let (head, rel) = path.split_once('.').unwrap_or(("reported", path));
        let g = match head {
            "workload" => &mut self.workload,
            "totals" => &mut self.totals,
            _ => &mut self.reported,
        };
        (g, rel)
    }

    /// The figure at a full canonical path (`reported.ttft_ms`).
    pub fn figure(&self, path: &str) -> Option<&Figure> {
        let (g, rel) = self.group(path);
        g.get(rel)
    }
}

/// Per-request arrays of a result file, in ms (one entry per request, failed ones included).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Requests {
    pub ttft_ms: Vec<Option<f64>>,
    /// Request latency, when the file has it.
    pub latency_ms: Option<Vec<Option<f64>>>,
    pub output_len: Vec<Option<f64>>,
    /// Prompt length, when the file has it.
    pub input_len: Option<Vec<Option<f64>>>,
    /// Number of each request's gaps between chunks (or tokens).
    pub gap_counts: Option<Vec<u32>>,
    /// Sum of each request's gaps, only when there is no latency array (it then gives the E2E
    /// latency).
    pub gap_sums_ms: Option<Vec<f64>>,
    /// Failed (a non-empty error), per request.
    pub failed: Option<Vec<bool>>,
    /// The first few error messages.
    pub first_errors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Source {
    /// Id of the definition in `parsers/` that read this run (`report` for a canonical run
    /// written by hand).
    pub parser: String,
    pub tool: String,
    pub format: Format,
    /// Which version variant of the tool's output matched, when known.
    #[serde(default)]
    pub variant: Option<String>,
    /// File name, or `-` for standard input.
    pub input: String,
    /// 1-based index of this run in its input.
    pub block: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_line: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_line: Option<usize>,
    /// Present when a text block ended before its closing line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncation>,
    /// How this tool and variant measure what they print.
    #[serde(default)]
    pub semantics: Semantics,
    /// Present when `bench-normalize run` ran the client itself: the command, what was added to
    /// it, the client's version, when it ran and how it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<ClientRun>,
}

/// How `bench-normalize run -- <client command>` ran the client (see `src/client.rs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientRun {
    /// The client recognised from the command line (`vllm-bench-serve`, `sglang-bench-serving`,
    /// ...), `null` for a command run as given.
    pub client: Option<String>,
    /// The command as given after `--`.
    pub given: Vec<String>,
    /// The command as run: the given one with `added_flags`.
    pub command: Vec<String>,
    /// The flags added (or, for a merged list, changed) so that the figures are exact, each with
    /// its value: `--percentile-metrics ttft,tpot,e2el (was ttft,tpot)`.
    pub added_flags: Vec<String>,
    /// The client's version, `null` when it could not be asked.
    pub tool_version: Option<String>,
    /// How the version was asked, or why it is unknown.
    pub version_from: String,
    /// Start and end of the client, RFC 3339 UTC.
    pub started: String,
    pub ended: String,
    pub duration_s: f64,
    /// The client's exit status; `null` when a signal ended it (then `signal`).
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Signals received by bench-normalize while the client ran and passed on to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forwarded_signals: Vec<i32>,
    /// The result file read with the client's output as one run, `null` when there was none.
    pub result_file: Option<String>,
    /// Where the client's output and the result file were kept (`--keep DIR`); `null` when they
    /// were removed.
    pub kept: Option<String>,
}

impl Default for Source {
    fn default() -> Self {
        Source {
            parser: "report".into(),
            tool: "hand-written".into(),
            format: Format::Report,
            variant: None,
            input: String::new(),
            block: 0,
            first_line: None,
            last_line: None,
            truncated: None,
            semantics: Semantics::default(),
            run: None,
        }
    }
}

/// Where and why a block ended before its closing line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Truncation {
    pub after_line: usize,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    Stdout,
    ResultJson,
    ResultJsonl,
    /// A CSV export read as text, line by line (AIPerf's `profile_export_aiperf.csv`).
    ResultCsv,
    Report,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Stdout => "stdout",
            Format::ResultJson => "result-json",
            Format::ResultJsonl => "result-jsonl",
            Format::ResultCsv => "result-csv",
            Format::Report => "report",
        }
    }

    /// Read as lines of text (blocks), not as JSON documents.
    pub fn is_text(self) -> bool {
        matches!(self, Format::Stdout | Format::ResultCsv)
    }
}

/// How the tool measured what it printed, from the parser definition and variant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Semantics {
    /// `chunk`: one ITL sample per streamed chunk; `token`: per token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl: Option<ItlPer>,
    /// Why ITL is timed that way for this backend and variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_why: Option<String>,
    /// Where the output token counts come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<TokenCount>,
    /// When a request's E2E latency stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_end: Option<E2eEnd>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ItlPer {
    Chunk,
    Token,
}

impl ItlPer {
    pub fn as_str(self) -> &'static str {
        match self {
            ItlPer::Chunk => "chunk",
            ItlPer::Token => "token",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TokenCount {
    /// The server's usage count, re-tokenized text as a fallback (vLLM >= 0.8).
    Server,
    /// The server's count when it sends one, else the requested length (SGLang >= 0.4.3.post3).
    ServerOrRequested,
    /// The requested output length, whatever was generated (SGLang 0.1.24-0.4.3.post2).
    Requested,
    /// The client re-tokenized the generated text.
    Retokenized,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum E2eEnd {
    /// At the last token-bearing chunk (vLLM >= 0.8).
    LastChunk,
    /// At the last line read, `data: [DONE]` included (SGLang, vLLM script <= 0.6).
    DoneLine,
}

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

/// A group of figures in report order (the order of [`vocabulary::FIELDS`]).
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
        let (head, rest) = match path.split_once('.') {
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
        let (head, rest) = match path.split_once('.') {
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
fn rank_in_report(path: &str) -> usize {
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
        let p: f64 = num.parse().ok()?;
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

/// What bench-normalize computed from the run's own figures (see docs/metrics.md, "Derivation").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Derived {
    #[serde(default)]
    pub tpot_ms: DerivedTpot,
    #[serde(default)]
    pub per_user_decode_tok_per_s: Option<f64>,
    #[serde(default)]
    pub output_tok_per_s: Option<f64>,
    #[serde(default)]
    pub request_per_s: Option<f64>,
    #[serde(default)]
    pub mean_in_flight: Option<f64>,
    #[serde(default)]
    pub slot_utilization: Option<f64>,
    #[serde(default)]
    pub tokens_per_chunk: Option<f64>,
    /// Present only when the tool printed no E2E latency: `TTFT + (n_avg - 1) x TPOT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<DerivedE2e>,
    /// Present when the input had per-request arrays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request: Option<PerRequest>,
    /// Why a figure above is null.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub undefined: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DerivedTpot {
    pub mean: Option<f64>,
    pub method: Option<TpotMethod>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    /// Sum of decode time over sum of decode tokens (per-request method).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_weighted_mean: Option<f64>,
    /// The formula with the run's numbers in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<String>,
    /// Why TPOT is null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Set by the validation when `mean` is present: `true` when the figure was derived from
    /// measured latencies and totals, or is a claim that a rule tested against an independent
    /// figure; `false` when it is the tool's (or a report's) claim that no rule could test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// Why the claimed TPOT could not be tested (with `verified: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified_reason: Option<String>,
    /// Set when the method stands an estimate in for an input the run lacks: why the figure is
    /// approximate and by how much it can be off (`e2e-median-ttft-tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approximate: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TpotMethod {
    /// Exact per-request TPOT from per-request arrays.
    PerRequest,
    /// `(E2E_mean - TTFT_mean) / (N_out / R - 1)`.
    E2eTtftTokens,
    /// `(E2E_mean - TTFT_median) / (N_out / R - 1)`: the median TTFT stands in for a mean the run
    /// does not give (SGLang 0.3.6.post3-0.4.1 result lines); always `approximate`.
    E2eMedianTtftTokens,
    /// The tool's own TPOT rows.
    ToolTpot,
    /// A hand-written report's `tpot_ms`, as claimed.
    Claimed,
}

impl TpotMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            TpotMethod::PerRequest => "per-request",
            TpotMethod::E2eTtftTokens => "e2e-ttft-tokens",
            TpotMethod::E2eMedianTtftTokens => "e2e-median-ttft-tokens",
            TpotMethod::ToolTpot => "tool-tpot",
            TpotMethod::Claimed => "claimed",
        }
    }
}

/// What the per-request arrays gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PerRequest {
    /// Entries in the arrays.
    pub requests: usize,
    /// Requests with a non-empty error, left out.
    pub failed: usize,
    /// Successful requests with at most one output token, left out of TPOT.
    pub single_token: usize,
    /// Where each request's E2E latency came from: `latencies`, or `ttft + sum of gaps`.
    pub e2e_source: String,
    pub e2e_mean_ms: Option<f64>,
    /// Output tokens per streamed chunk, over requests (when the gaps are per chunk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_chunk: Option<ChunkStats>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChunkStats {
    pub mean: f64,
    pub p50: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DerivedE2e {
    pub mean: f64,
    pub approximate: bool,
    pub formula: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    pub id: String,
    pub severity: Severity,
    pub status: Status,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    Skipped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every error rule passed, and the run has a usable key figure.
    Accepted,
    /// An error rule failed: the figures contradict each other (exit 1).
    Rejected,
    /// No key figure is usable (TPOT, TTFT, throughput: all absent, unreadable, or no request
    /// succeeded; or a cut-off block lost what TPOT needs): the `key-figures` check says which
    /// (exit 3). A contradiction is not looked for in what is not there.
    Unusable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "rejected",
            Verdict::Unusable => "unusable",
        }
    }
}

impl Verdict {
    fn accepted() -> Verdict {
        Verdict::Accepted
    }
}

/// One service-level objective judged on a run (`--slo`, see `src/objectives.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ObjectiveResult {
    /// The objective as bench-normalize writes it (`ttft.p99<=2000`, `e2e.p50<=10s`).
    pub objective: String,
    /// `ttft`, `tpot` (the derived TPOT), `itl`, `e2e`, `decode_rate`, `output_throughput`,
    /// `request_throughput`.
    pub metric: String,
    /// `mean`, `min`, `max`, `p50`, `p99`, `p99.9`, ...; `null` for a metric that is one figure.
    pub stat: Option<String>,
    /// `<=`, `<`, `>=` or `>`.
    pub op: String,
    /// The limit, in `unit` (a limit given in seconds is written here in ms).
    pub limit: f64,
    /// `ms`, `tok/s` or `req/s`.
    pub unit: String,
    /// The run's figure, in `unit`; `null` when it is not available, not comparable or not judged.
    pub value: Option<f64>,
    /// How far the value is inside the limit, in `unit`: `limit - value` for `<=` and `<`,
    /// `value - limit` for `>=` and `>`; negative when the objective is missed.
    pub margin: Option<f64>,
    /// `margin` as a percentage of the limit (`null` for a limit of 0).
    pub margin_pct: Option<f64>,
    pub status: ObjectiveStatus,
    /// Where the value came from (`reported.ttft_ms.p99`, `derived.tpot_ms.mean`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Why the objective was not judged pass or fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ObjectiveStatus {
    /// The value meets the limit.
    Pass,
    /// The value misses the limit (exit 7).
    Fail,
    /// The run does not give the figure (a percentile the tool did not print, a TPOT that could
    /// not be derived): never approximated; not a pass (exit 7).
    NotAvailable,
    /// The run gives a figure of that name with another meaning (an ITL timed per streamed chunk
    /// is not a per-token latency): not a pass (exit 7).
    NotComparable,
    /// The run was rejected or unusable: its figures are not trusted, and its own exit code (1
    /// or 3) stands.
    NotJudged,
}

impl ObjectiveStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectiveStatus::Pass => "pass",
            ObjectiveStatus::Fail => "fail",
            ObjectiveStatus::NotAvailable => "not-available",
            ObjectiveStatus::NotComparable => "not-comparable",
            ObjectiveStatus::NotJudged => "not-judged",
        }
    }
}

/// Something the normalizer noticed: a correction, an unreadable value, an ambiguity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// A row as printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Row {
    /// The section header above the row, `null` at the top of the block.
    pub section: Option<String>,
    /// The label without its trailing colon.
    pub label: String,
    /// The value as printed, `null` for a bare heading such as `Per-position acceptance (%):`.
    pub value: Option<String>,
    pub line: usize,
    /// The canonical figure the row fed (`reported.ttft_ms.mean`), `null` when none.
    pub field: Option<String>,
    /// `preamble` for a line printed before the block that belongs to the same run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
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
