//! Parser definitions: one TOML file per tool output format, under `parsers/`.
//!
//! A definition says how to find a result in the input (banner, closing line, section headers),
//! which label feeds which canonical figure (with aliases, sections and occurrences), how to tell
//! the tool's version variants apart, and what the tool's numbers mean (ITL per chunk or per
//! token, where output token counts come from). The engine knows none of this by itself: a new
//! label variant is a change to a definition, not to Rust code.
//!
//! The built-in definitions are compiled into the binary (`build.rs`); `--parsers DIR` adds or
//! overrides definitions at run time.

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;
use serde::Deserialize;

use crate::error::Error;
use crate::lex::normalize_label;
use crate::report::{E2eEnd, Format, ItlPer, StatKey, TokenCount};
use crate::vocabulary::{FieldDef, Unit};

mod compile;
mod raw;

pub use compile::parse;

include!(concat!(env!("OUT_DIR"), "/builtin_parsers.rs"));

/// All definitions in use, built-ins first, overrides replacing by id.
#[derive(Debug)]
pub struct Definitions {
    list: Vec<Definition>,
    /// Built on first use: see [`Definitions::literals`].
    literals: OnceLock<Literals>,
}

/// The literal text a scanner of text logs looks for, over every text definition: built once per
/// set of definitions (building it takes longer than reading a small log, and a run over many
/// files reads them all with the same definitions).
#[derive(Debug)]
pub struct Literals {
    /// The literal text every banner, trailer banner and context label contains, in one
    /// automaton: outside a block, a buffer is skipped up to the first of them.
    pub any: Finder,
    /// The literal text of the banners alone: a line inside a block is only tried as a new banner
    /// when it has one.
    pub banners: Finder,
    /// Each text definition's banner needles, in the order of the text definitions: its banner
    /// pattern is only tried on a line that has one of them.
    pub banner: Vec<Needles>,
    /// Every text definition's `[[context]]` labels, normalized.
    pub context_labels: Vec<String>,
    /// Each text definition's `[args] requires` that has `[[context]]` arguments: a dump is
    /// read when it names every argument of one of these lists.
    pub args_requires: Vec<Vec<String>>,
}

/// What opens an argument dump in a log line: Python's repr of argparse's result,
/// `Namespace(name=value, ...)` (vLLM prints it alone, SGLang also as `benchmark_args=Namespace(...)`).
pub const ARGS_DUMP: &str = "Namespace(";

/// The context label of an argument `name` of an argument dump.
pub fn arg_label(name: &str) -> String {
    format!("args.{name}:")
}

impl Literals {
    fn of(defs: &Definitions) -> Literals {
        let text_defs: Vec<&Definition> = defs.iter().filter(|d| d.block.is_some()).collect();
        let context_labels: Vec<String> =
            text_defs.iter().flat_map(|d| &d.context).map(|spec| normalize_label(&spec.label)).collect();
        let banner: Vec<Needles> =
            text_defs.iter().map(|d| Needles::of(d.block.as_ref().expect("text definition").banner.as_str())).collect();
        let mut others: Vec<Needles> = text_defs
            .iter()
            .flat_map(|d| &d.trailers)
            .map(|t| Needles::of(t.banner.as_str()))
            // A trailer is only looked for while its block is held, when every line is read.
            .filter(|n| n.0.is_some())
            .collect();
        // An argument's label is not in the line: the dump's opening is.
        others.extend(
            context_labels.iter().filter(|l| !l.starts_with("args.")).map(|l| Needles::exact(l.trim_end_matches(':'))),
        );
        let args_requires: Vec<Vec<String>> = text_defs
            .iter()
            .filter(|d| d.context.iter().any(|c| c.label.starts_with("args.")))
            .map(|d| d.args_requires.clone())
            .collect();
        if !args_requires.is_empty() {
            others.push(Needles::exact(ARGS_DUMP));
        }
        others.extend(banner.iter().cloned());
        Literals { any: Finder::of(&others), banners: Finder::of(&banner), banner, context_labels, args_requires }
    }
}

/// Text that every match of a regular expression contains: at least one of its needles (`None`:
/// no such text was found, and every line must be tried).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needles(pub Option<Vec<Needle>>);

/// A piece of literal text; `folded`: compared ignoring ASCII case (`text` is then lower case),
/// for a pattern written with `(?i)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needle {
    pub text: String,
    pub folded: bool,
}

impl Needles {
    fn exact(text: &str) -> Needles {
        Needles(Some(vec![Needle { text: text.to_string(), folded: false }]).filter(|_| !text.is_empty()))
    }

    /// The needles of a pattern, found with regex-syntax: the longest run of literal text in its
    /// top-level sequence (`Serving Benchmark Result` in `=+ Serving Benchmark Result =+`), letters
    /// written case-insensitively included; without one, what a group, repetition or alternation
    /// in it requires (`(Summary Info|Statistics)`: either). Sound: a line without any of them
    /// cannot match, so skipping it loses nothing.
    pub fn of(pattern: &str) -> Needles {
        match regex_syntax::parse(pattern) {
            Ok(hir) => Needles(required(&hir)),
            Err(_) => Needles(None),
        }
    }

    /// Whether `text` holds one of the needles (always, without needles).
    pub fn found_in(&self, text: &str) -> bool {
        match &self.0 {
            None => true,
            Some(v) => v.iter().any(|n| {
                if n.folded {
                    contains_folded(text.as_bytes(), n.text.as_bytes())
                } else {
                    text.contains(n.text.as_str())
                }
            }),
        }
    }
}

/// Whether `hay` contains `needle` (lower case) ignoring ASCII case.
fn contains_folded(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

/// Needles of many patterns, searched in one pass: one automaton for the exact ones (the
/// built-in definitions have only those, and this is the scanner's fast path over noise), one
/// that ignores ASCII case for the others; `always`: some pattern has none, and every position
/// may matter.
#[derive(Debug)]
pub struct Finder {
    exact: aho_corasick::AhoCorasick,
    folded: Option<aho_corasick::AhoCorasick>,
    always: bool,
}

impl Finder {
    fn of(all: &[Needles]) -> Finder {
        let always = all.iter().any(|n| n.0.is_none());
        let needles = || all.iter().flat_map(|n| n.0.iter().flatten()).filter(|n| !n.text.is_empty());
        let exact: Vec<&str> = needles().filter(|n| !n.folded).map(|n| n.text.as_str()).collect();
        let folded: Vec<&str> = needles().filter(|n| n.folded).map(|n| n.text.as_str()).collect();
        Finder {
            exact: literal_automaton(&exact, false),
            folded: (!folded.is_empty()).then(|| literal_automaton(&folded, true)),
            always,
        }
    }

    /// Where the first needle in `hay` starts (`Some(0)` when every position may matter).
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        if self.always {
            return Some(0);
        }
        let exact = self.exact.find(hay).map(|m| m.start());
        match &self.folded {
            None => exact,
            Some(f) => {
                // Only the part before the exact match can hold an earlier folded one.
                let upto = exact.map_or(hay.len(), |e| (e + f.max_pattern_len()).min(hay.len()));
                match f.find(&hay[..upto]).map(|m| m.start()) {
                    Some(s) if exact.is_none_or(|e| s < e) => Some(s),
                    _ => exact,
                }
            }
        }
    }

    /// Whether `hay` holds a needle (always, when every position may matter).
    pub fn is_match(&self, hay: impl AsRef<[u8]>) -> bool {
        let hay = hay.as_ref();
        self.always || self.exact.is_match(hay) || self.folded.as_ref().is_some_and(|f| f.is_match(hay))
    }
}

/// Several literal strings in one automaton, to find the first of any of them in a buffer.
fn literal_automaton(patterns: &[&str], ascii_case_insensitive: bool) -> aho_corasick::AhoCorasick {
    aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
        .ascii_case_insensitive(ascii_case_insensitive)
        .build(patterns)
        .expect("a few short literals")
}

/// A set of needles every match of `hir` contains one of; `None` when none is known.
fn required(hir: &regex_syntax::hir::Hir) -> Option<Vec<Needle>> {
    use regex_syntax::hir::HirKind;
    let trimmed = |text: String, folded: bool| {
        let t = text.trim();
        (!t.is_empty()).then(|| Needle { text: t.to_string(), folded })
    };
    match hir.kind() {
        HirKind::Concat(parts) => {
            // The longest run of literal text (letters of either case included), as before;
            // without one, the first part that requires something.
            let mut best: Option<Needle> = None;
            let mut run = String::new();
            let mut folded = false;
            let close = |run: &mut String, folded: &mut bool, best: &mut Option<Needle>| {
                if let Some(n) = trimmed(std::mem::take(run), *folded) {
                    if best.as_ref().is_none_or(|b| n.text.len() > b.text.len()) {
                        *best = Some(n);
                    }
                }
                *folded = false;
            };
            for p in parts {
                match (literal_text(p), p.kind()) {
                    (Some((text, f)), _) => {
                        if f && !folded {
                            folded = true;
                            run.make_ascii_lowercase();
                        }
                        run.push_str(&if folded { text.to_ascii_lowercase() } else { text });
                    }
                    // A zero-width assertion (`^`, `$`, `\b`) keeps the text on both sides together.
                    (None, HirKind::Look(_)) => {}
                    _ => close(&mut run, &mut folded, &mut best),
                }
            }
            close(&mut run, &mut folded, &mut best);
            match best {
                Some(n) => Some(vec![n]),
                None => parts.iter().find_map(required),
            }
        }
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for b in branches {
                all.extend(required(b)?);
            }
            Some(all)
        }
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min > 0 => required(&r.sub),
        _ => literal_text(hir).and_then(|(text, folded)| trimmed(text, folded)).map(|n| vec![n]),
    }
}

/// The text a pattern piece matches when it is literal text, or one ASCII letter in either case
/// (`[Tt]`, how `(?i)t` reads); `true` for the latter. A letter whose case folding reaches beyond
/// ASCII (`k`: `[Kk\u{212A}]`) is no literal text: an ASCII-only comparison could miss a match.
fn literal_text(h: &regex_syntax::hir::Hir) -> Option<(String, bool)> {
    use regex_syntax::hir::{Class, HirKind};
    match h.kind() {
        HirKind::Literal(l) => std::str::from_utf8(&l.0).ok().map(|s| (s.to_string(), false)),
        HirKind::Class(Class::Unicode(c)) => {
            let chars: Vec<char> = c.iter().flat_map(|r| r.start()..=r.end()).take(3).collect();
            match chars[..] {
                [a, b] if a.is_ascii_uppercase() && b == a.to_ascii_lowercase() => Some((b.to_string(), true)),
                _ => None,
            }
        }
        HirKind::Class(Class::Bytes(c)) => {
            let bytes: Vec<u8> = c.iter().flat_map(|r| r.start()..=r.end()).take(3).collect();
            match bytes[..] {
                [a, b] if a.is_ascii_uppercase() && b == a.to_ascii_lowercase() => {
                    Some(((b as char).to_string(), true))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// After this many lines in a row that are neither rows a definition knows nor section headers,
/// an unclosed block is taken to have been cut off (the scanner's rule, `detect`), and a table
/// block's default `max_noise`.
pub(crate) const MAX_NOISE_RUN: usize = 8;

/// One tool output format.
#[derive(Debug)]
pub struct Definition {
    pub id: String,
    pub tool: String,
    pub format: Format,
    pub description: String,
    /// Said on every run this definition reads (what the tool's output is, and is not).
    pub note: Option<String>,
    /// Where the definition came from: `built-in parsers/x.toml` or a path.
    pub origin: String,
    pub block: Option<BlockSpec>,
    pub semantics: SemanticsSpec,
    pub variants: Vec<Variant>,
    /// Lines before the banner read for the same run: `Label: value` lines, and the arguments
    /// of an argument dump (labels `args.NAME:`, see [`ARGS_DUMP`]).
    pub context: Vec<RowSpec>,
    /// `[args] requires`: an argument dump is this tool's only when it names every one of these
    /// arguments (a server's `Namespace(...)` in the same log is not the client's).
    pub args_requires: Vec<String>,
    /// Text formats: rows of the block. JSON formats: keys of the document (dotted paths into
    /// nested objects; a `{stat}` placeholder as in `{stat}_ttft_ms`).
    pub rows: Vec<RowSpec>,
    /// JSON formats: when a document is this format.
    pub detect: Option<DetectSpec>,
    /// JSON formats: the per-request arrays, by role.
    pub requests: RequestsSpec,
    /// JSON formats: a number must be a JSON number and text a string (hand-written reports);
    /// otherwise values are read leniently (`"inf"` is an absent number).
    pub strict_types: bool,
    /// JSON formats holding several runs in a list (guidellm's `benchmarks`): the key of the
    /// list. Each element is a run; the rest of the document is readable under `top.`.
    pub runs_at: Option<String>,
    /// JSON formats whose metric objects state their unit (AIPerf's `{"unit": "ms", "avg": ...}`):
    /// the key holding it. A key read from such an object is converted from the stated unit.
    pub unit_key: Option<String>,
    /// Finds where known rows start in a line that lost its line breaks (built on first use).
    row_finder: OnceLock<Regex>,
    /// Blocks printed right after a result block that belong to the same run.
    pub trailers: Vec<TrailerSpec>,
    /// Specs of `rows` by literal label, and the specs with a placeholder (checked in turn).
    label_index: HashMap<String, Vec<usize>>,
    templated: Vec<usize>,
}

/// A block printed right after the result block, for the same run (vllm-rs's "Steady-State
/// Metrics"): its rows are read as one section of the run, never mixed into the main figures.
#[derive(Debug)]
pub struct TrailerSpec {
    pub banner: Regex,
    pub end: Regex,
    /// The section its rows are read under (rows in `[[row]]` with this `section`).
    pub section: String,
    /// The variants that print it; blocks of other variants are not held back waiting for it.
    pub variants: Vec<String>,
    /// Lines allowed between the result block's closing line and the trailer's banner.
    pub max_gap: usize,
}

/// When a JSON document is of a format: keys it must have, and keys of which it needs one.
#[derive(Debug, Default)]
pub struct DetectSpec {
    pub keys_all: Vec<String>,
    pub keys_any: Vec<String>,
}

/// A per-request array of a JSON format.
#[derive(Debug, Clone)]
pub struct ArraySpec {
    pub key: String,
    pub unit: Option<Unit>,
}

/// The per-request arrays of a JSON format, by what they hold.
#[derive(Debug, Clone, Default)]
pub struct RequestsSpec {
    pub ttft: Option<ArraySpec>,
    pub latency: Option<ArraySpec>,
    pub output_len: Option<ArraySpec>,
    pub input_len: Option<ArraySpec>,
    /// Gaps between streamed chunks (or tokens), one list per request.
    pub gaps: Option<ArraySpec>,
    pub error: Option<ArraySpec>,
    /// Other per-request arrays: kept compact, counted, not used.
    pub other: Vec<String>,
}

impl RequestsSpec {
    /// Every array key with how it is kept.
    pub fn kinds(&self) -> Vec<(String, crate::input::json::ArrayKind)> {
        use crate::input::json::ArrayKind::*;
        let mut v = Vec::new();
        for a in [&self.ttft, &self.latency, &self.output_len, &self.input_len].into_iter().flatten() {
            v.push((a.key.clone(), Numbers));
        }
        if let Some(a) = &self.gaps {
            v.push((a.key.clone(), Gaps));
        }
        if let Some(a) = &self.error {
            v.push((a.key.clone(), Errors));
        }
        for k in &self.other {
            v.push((k.clone(), Counted));
        }
        v
    }
}

/// How a text block is found and divided.
#[derive(Debug)]
pub struct BlockSpec {
    /// Searched anywhere in the line, so a pasted `` ```===== Serving... `` still opens a block.
    pub banner: Regex,
    /// The banner line is itself the first row (formats without a banner).
    pub banner_is_row: bool,
    /// Matched against the trimmed line.
    pub end: Option<Regex>,
    /// The block ends after the row with this label.
    pub end_after_label: Option<String>,
    /// A section header line; its name is the line without the `section_strip` characters around
    /// it (empty: a plain rule).
    pub section: Option<Regex>,
    pub section_strip: String,
    /// Lines inside a block that are known noise (log lines of other processes).
    pub noise: Vec<Regex>,
    /// The block is one or more tables of several columns (console tables, CSV exports).
    pub table: Option<TableSpec>,
    /// What `end` and `section` can start with: most lines of a block are rows, and are not tried.
    pub end_first: FirstBytes,
    pub section_first: FirstBytes,
}

/// The bytes a match of a regular expression anchored at the start (`^...`) can begin with, so
/// that a text starting with none of them is not searched. Unknown (no `^`, a class too large, a
/// pattern that matches the empty text): every text may match.
#[derive(Debug, Clone, Default)]
pub struct FirstBytes(Option<Box<[bool; 256]>>);

impl FirstBytes {
    pub fn of(re: Option<&Regex>) -> FirstBytes {
        use regex_syntax::hir::{Look, literal::Extractor};
        let Some(hir) = re.and_then(|re| regex_syntax::parse(re.as_str()).ok()) else { return FirstBytes(None) };
        if !hir.properties().look_set_prefix().contains(Look::Start) {
            return FirstBytes(None);
        }
        let seq = Extractor::new().extract(&hir);
        let Some(lits) = seq.literals() else { return FirstBytes(None) };
        let mut table = Box::new([false; 256]);
        for l in lits {
            match l.as_bytes().first() {
                Some(b) => table[*b as usize] = true,
                None => return FirstBytes(None),
            }
        }
        FirstBytes(Some(table))
    }

    /// False only when the regular expression cannot match `text`.
    pub fn may_match(&self, text: &str) -> bool {
        match &self.0 {
            None => true,
            Some(t) => text.as_bytes().first().is_some_and(|b| t[*b as usize]),
        }
    }
}

/// A block made of tables: how a line is cut into cells, and what a row is.
///
/// The engine turns every cell into a row `label: value` before anything else reads the block,
/// so the `[[row]]` specs of a table format are written like those of any other format: with
/// `rows = "metrics"`, the cell of row `Inter Token Latency (ms)` under the column `avg` is the
/// row `Inter Token Latency (ms) (avg):`; with `rows = "runs"`, each table row is a run of its
/// own and its cells are the rows `<column header>:` (the header lines joined by spaces).
#[derive(Debug, Clone)]
pub struct TableSpec {
    pub cells: CellStyle,
    pub rows: RowsAre,
    /// Header lines at the top of each table (CSV); `None`: the lines before a rule.
    pub header_rows: Option<usize>,
    /// Columns that hold a row's single value (`Value`): read as the row label alone.
    pub value_columns: Vec<String>,
    /// Lines that are not part of a table (blank lines aside) after which the block is over.
    pub max_noise: usize,
}

/// How a table line is cut into cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStyle {
    /// Cells between `|`, `│`, `┃` or `║`; rules are made of box-drawing characters or `-=+:|`.
    /// A header cell with nothing between its bars continues the cell on its left (a span).
    Ruled,
    /// Comma-separated values.
    Csv,
    /// Columns aligned by spaces, cut where the dash runs of the rule under the header are.
    Aligned,
}

/// What a table row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RowsAre {
    /// One metric per row, its statistics in the columns (AIPerf).
    Metrics,
    /// One run per row, keyed by its first cell; the tables of a block are joined by that key
    /// (guidellm, sweep summaries).
    Runs,
}

#[derive(Debug, Clone, Default)]
pub struct SemanticsSpec {
    /// Said (as a note) on a run of this format that has no E2E latency: how to get one.
    pub missing_e2e_hint: Option<String>,
    pub itl: Option<ItlPer>,
    pub itl_why: Option<String>,
    pub output_tokens: Option<TokenCount>,
    pub e2e_end: Option<E2eEnd>,
    pub itl_rules: Vec<ItlRule>,
}

/// ITL timing for some backends and variants.
#[derive(Debug, Clone)]
pub struct ItlRule {
    pub backends: Vec<String>,
    pub variants: Vec<String>,
    /// The rule applies only when this canonical figure is present.
    pub when_present: Option<&'static str>,
    pub itl: ItlPer,
    pub itl_why: String,
}

/// One version variant of a tool's output, recognized by what its block contains.
#[derive(Debug)]
pub struct Variant {
    pub id: String,
    pub description: String,
    pub has: Vec<String>,
    pub has_any: Vec<String>,
    pub lacks: Vec<String>,
    pub has_section: Vec<String>,
    pub lacks_section: Vec<String>,
    pub banner_width: Option<usize>,
    pub context_has: Vec<String>,
    pub context_lacks: Vec<String>,
    pub output_tokens: Option<TokenCount>,
    pub e2e_end: Option<E2eEnd>,
    pub itl: Option<ItlPer>,
    /// Pairs of figures this variant printed under each other's label.
    pub swap: Vec<(Target, Target)>,
    pub note: Option<String>,
}

/// What a block shows, for telling variants apart.
pub struct Evidence<'a> {
    pub labels: &'a [&'a str],
    pub sections: &'a [String],
    pub banner_width: usize,
    pub context_labels: &'a [String],
}

impl Variant {
    pub fn matches(&self, ev: &Evidence) -> bool {
        let has = |l: &String| ev.labels.contains(&l.as_str());
        let has_sec = |s: &String| ev.sections.contains(s);
        let ctx = |l: &String| ev.context_labels.contains(l);
        self.has.iter().all(has)
            && (self.has_any.is_empty() || self.has_any.iter().any(has))
            && !self.lacks.iter().any(has)
            && self.has_section.iter().all(has_sec)
            && !self.lacks_section.iter().any(has_sec)
            && self.banner_width.is_none_or(|w| w == ev.banner_width)
            && self.context_has.iter().all(ctx)
            && !self.context_lacks.iter().any(ctx)
    }
}

/// A canonical figure a row feeds: a path of the vocabulary, and for a stat block, which
/// statistic (fixed here, or read from the label's `{stat}`).
#[derive(Debug, Clone)]
pub struct Target {
    pub field: &'static FieldDef,
    pub stat: Option<StatKey>,
}

impl PartialEq for Target {
    fn eq(&self, other: &Target) -> bool {
        self.field.path == other.field.path && self.stat == other.stat
    }
}

impl Target {
    pub fn path(&self) -> String {
        let Some(k) = self.stat else { return self.field.path.to_string() };
        // Built by hand: this runs for every row read, and format! cost several times more.
        let mut s = String::with_capacity(self.field.path.len() + 8);
        s.push_str(self.field.path);
        s.push('.');
        s.push_str(&k.name());
        s
    }
}

/// A label with at most one placeholder.
#[derive(Debug, Clone)]
pub struct LabelPattern {
    prefix: String,
    hole: Option<Hole>,
    suffix: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    /// `{stat}`: Mean, Median, P99, P99.9, Max, Min, Std
    Stat,
    /// `{index}`: a whole number
    Index,
    /// `{text}`: anything
    Text,
}

/// What a placeholder matched.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Captured {
    pub stat: Option<StatKey>,
    pub index: Option<usize>,
}

impl LabelPattern {
    fn parse(template: &str) -> Result<LabelPattern, String> {
        let t = normalize_label(template);
        let Some(open) = t.find('{') else {
            return Ok(LabelPattern { prefix: t, hole: None, suffix: String::new() });
        };
        let close = t[open..].find('}').ok_or("a '{' without '}'")? + open;
        let hole = match &t[open + 1..close] {
            "stat" => Hole::Stat,
            "index" => Hole::Index,
            "text" => Hole::Text,
            other => return Err(format!("unknown placeholder {{{other}}} (known: {{stat}}, {{index}}, {{text}})")),
        };
        let suffix = t[close + 1..].to_string();
        if suffix.contains('{') {
            return Err("at most one placeholder per label".into());
        }
        Ok(LabelPattern { prefix: t[..open].to_string(), hole: Some(hole), suffix })
    }

    /// The text before the placeholder (the whole text when there is none).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Match a normalized label.
    pub fn matches(&self, label: &str) -> Option<Captured> {
        let Some(hole) = self.hole else {
            return (label == self.prefix).then(Captured::default);
        };
        let middle = label.strip_prefix(&self.prefix)?.strip_suffix(&self.suffix)?;
        match hole {
            Hole::Stat => {
                Some(Captured { stat: Some(StatKey::parse(middle).filter(|_| !middle.is_empty())?), index: None })
            }
            Hole::Index => Some(Captured { stat: None, index: Some(middle.parse().ok()?) }),
            Hole::Text => Some(Captured::default()),
        }
    }

    pub fn hole(&self) -> Option<Hole> {
        self.hole
    }

    /// The text after the placeholder (empty when there is none).
    pub fn suffix(&self) -> &str {
        &self.suffix
    }

    /// A regular expression matching the labels this pattern matches (spaces may be runs).
    pub fn to_regex(&self) -> String {
        let esc = |s: &str| regex::escape(s).replace(' ', r"\s+");
        let hole = match self.hole {
            None => "",
            Some(Hole::Stat) => r"(?:Mean|Median|Min|Max|Std|P[0-9]+(?:\.[0-9]+)?)",
            Some(Hole::Index) => r"[0-9]+",
            Some(Hole::Text) => r"[^:]{0,40}?",
        };
        format!("{}{hole}{}", esc(&self.prefix), esc(&self.suffix))
    }
}

/// Which rows a spec reads, and where their values go.
#[derive(Debug)]
pub struct RowSpec {
    pub labels: Vec<LabelPattern>,
    /// The label as written in the definition (for listings).
    pub label: String,
    /// Section headers the row may stand under; `None`: above the first header.
    pub sections: Option<Vec<String>>,
    /// `None`: a known row that feeds no figure (a heading).
    pub target: Option<Target>,
    /// Unit the tool prints the value in, when it differs from the figure's.
    pub unit: Option<Unit>,
    /// 1-based: only the n-th row with this label in its section.
    pub occurrence: Option<usize>,
    /// What the format prints after the value (`s`, `\(Poisson process\)`), anchored.
    pub suffix: Option<Regex>,
    /// For `a/b` values: where `b` goes.
    pub total: Option<Target>,
    /// JSON formats: the document must have this key (a hand-written report without it is an
    /// error naming the key).
    pub required: bool,
    /// The tool writes 0 for "does not apply" (vLLM's `rtfx` outside audio runs).
    pub zero_is_absent: bool,
    /// `[[context]]` of an argument dump: the figure is read only when another argument of the
    /// same dump has this value (`random_input_len` only when `dataset_name` is `random`).
    pub when_arg: Option<(String, String)>,
}

impl RowSpec {
    /// The figure a row matched by this spec feeds: its target, with the stat the label named
    /// (`P99 TTFT (ms):` feeds `reported.ttft_ms` at p99). None for a row kept as printed only.
    pub fn target_for(&self, captured: &Captured) -> Option<Target> {
        let mut target = self.target.clone()?;
        if target.stat.is_none() {
            target.stat = captured.stat;
        }
        Some(target)
    }

    /// Does this spec read a row with this (normalized) label?
    pub fn matches_label(&self, label: &str) -> Option<Captured> {
        self.labels.iter().find_map(|p| p.matches(label))
    }

    pub fn matches_section(&self, section: Option<&str>, sectionless_block: bool) -> bool {
        match (&self.sections, section) {
            (None, None) => true,
            (None, Some(_)) => false,
            (Some(list), Some(s)) => list.iter().any(|x| x == s),
            // A block pasted without its section headers: rows are matched by label alone.
            (Some(_), None) => sectionless_block,
        }
    }
}

impl Definition {
    /// The specs that may read a label, in definition order.
    fn specs_for(&self, label: &str) -> impl Iterator<Item = &RowSpec> {
        let literal = self.label_index.get(label).map(Vec::as_slice).unwrap_or(&[]);
        // Both lists are ascending: merge them (this runs for every row, so without a Vec).
        let (mut a, mut b) = (literal.iter().copied().peekable(), self.templated.iter().copied().peekable());
        std::iter::from_fn(move || {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => *x.min(y),
                (Some(x), None) => *x,
                (None, Some(y)) => *y,
                (None, None) => return None,
            };
            while a.next_if_eq(&next).is_some() || b.next_if_eq(&next).is_some() {}
            Some(next)
        })
        .map(|i| &self.rows[i])
    }

    /// The spec for a row, by section, label and occurrence.
    pub fn row_spec(
        &self,
        section: Option<&str>,
        label: &str,
        occurrence: usize,
        sectionless_block: bool,
    ) -> Option<(&RowSpec, Captured)> {
        self.specs_for(label).find_map(|spec| {
            if !spec.matches_section(section, sectionless_block) {
                return None;
            }
            if spec.occurrence.is_some_and(|n| n != occurrence) {
                return None;
            }
            spec.matches_label(label).map(|c| (spec, c))
        })
    }

    /// Does any row spec read this label (in any section)? Used to tell tools apart.
    pub fn knows_label(&self, label: &str) -> bool {
        self.label_index.contains_key(label)
            || self.templated.iter().any(|i| self.rows[*i].matches_label(label).is_some())
    }

    pub fn context_spec(&self, label: &str) -> Option<(&RowSpec, Captured)> {
        self.context.iter().find_map(|s| s.matches_label(label).map(|c| (s, c)))
    }

    /// Where rows, section headers and closing lines start in a line that holds several of them
    /// (a block pasted on one line): byte offsets.
    pub fn row_starts(&self, text: &str) -> Vec<usize> {
        let re = self.row_finder.get_or_init(|| {
            let mut alts: Vec<String> =
                self.rows.iter().flat_map(|r| r.labels.iter().map(LabelPattern::to_regex)).collect();
            // Longest first, so that `Total generated tokens (retokenized):` wins over its prefix.
            alts.sort_by_key(|a| std::cmp::Reverse(a.len()));
            alts.push(r"-{3,}[^-]*?-{3,}".into());
            alts.push(r"={10,}".into());
            Regex::new(&format!("(?:^|\\s)(?:{})", alts.join("|"))).expect("labels are escaped")
        });
        // No capture groups: the DFA finds the matches; a match may begin with its white space.
        re.find_iter(text)
            .map(|m| if text[m.start()..].starts_with(char::is_whitespace) { m.start() + 1 } else { m.start() })
            .collect()
    }

    /// The spec of a JSON key (a dotted path).
    pub fn key_spec(&self, key: &str) -> Option<(&RowSpec, Captured)> {
        self.specs_for(key).find_map(|spec| spec.labels.iter().find_map(|p| p.matches(key)).map(|c| (spec, c)))
    }

    pub fn is_json(&self) -> bool {
        matches!(self.format, Format::ResultJson | Format::ResultJsonl | Format::Report)
    }
}

impl Definitions {
    /// The JSON keys these definitions read (with the canonical report's and the per-request
    /// arrays): what the JSON reader builds; any other large value is read past unbuilt.
    pub fn json_keys(&self) -> crate::input::json::Keys {
        let arrays = self.iter().flat_map(|d| d.requests.kinds()).collect();
        let reads: Vec<crate::input::json::Reads> = self
            .iter()
            .filter(|d| d.is_json())
            .map(|d| {
                let mut names: Vec<String> = Vec::new();
                for spec in &d.rows {
                    for p in &spec.labels {
                        names.push(match p.hole() {
                            Some(_) => format!("{}\0{}", p.prefix(), p.suffix()),
                            None => p.prefix().to_string(),
                        });
                    }
                }
                if let Some(det) = &d.detect {
                    names.extend(det.keys_all.iter().chain(&det.keys_any).cloned());
                }
                for v in &d.variants {
                    names.extend(v.has.iter().chain(&v.has_any).chain(&v.lacks).cloned());
                }
                crate::input::json::Reads { names, runs_at: d.runs_at.clone() }
            })
            .collect();
        crate::input::json::Keys::of(arrays, &reads)
    }

    /// What a text scanner looks for ([`Literals`]), built on first use.
    pub fn literals(&self) -> &Literals {
        self.literals.get_or_init(|| Literals::of(self))
    }

    /// The built-in definitions (compiled in from `parsers/`), parsed once per process.
    pub fn builtin() -> &'static Definitions {
        static BUILTIN: OnceLock<Definitions> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            let mut list = Vec::new();
            for (name, text) in BUILTIN_PARSERS {
                // A broken built-in definition is a bug caught by the test suite.
                list.push(
                    parse(text, &format!("parsers/{name}")).unwrap_or_else(|e| panic!("built-in definition: {e}")),
                );
            }
            Definitions { list, literals: OnceLock::new() }
        })
    }

    /// The built-ins plus every `*.toml` in `dir`; a definition with the id of a built-in
    /// replaces it.
    pub fn with_dir(dir: &Path) -> Result<Definitions, Error> {
        let mut list: Vec<Definition> = Vec::new();
        for (name, text) in BUILTIN_PARSERS {
            list.push(parse(text, &format!("parsers/{name}"))?);
        }
        let entries = std::fs::read_dir(dir).map_err(|e| Error::Usage(format!("--parsers {}: {e}", dir.display())))?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for path in paths {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|e| Error::Usage(format!("{name}: {e}")))?;
            let def = parse(&text, &name)?;
            match list.iter().position(|d| d.id == def.id) {
                Some(i) => list[i] = def,
                None => list.push(def),
            }
        }
        Ok(Definitions { list, literals: OnceLock::new() })
    }

    pub fn iter(&self) -> impl Iterator<Item = &Definition> {
        self.list.iter()
    }

    pub fn get(&self, id: &str) -> Option<&Definition> {
        self.list.iter().find(|d| d.id == id)
    }
}

/// The definitions as data, for `bench-normalize parsers`: id, tool, format, where from, variants,
/// and what a block or document of each is recognized by.
pub fn listing(defs: &Definitions) -> serde_json::Value {
    use serde_json::json;
    let list: Vec<serde_json::Value> = defs
        .iter()
        .map(|d| {
            let markers: Vec<String> = match (&d.block, &d.detect) {
                (Some(b), _) => {
                    let mut m = vec![format!("banner /{}/", b.banner.as_str())];
                    m.extend(d.trailers.iter().map(|t| format!("trailer /{}/", t.banner.as_str())));
                    if let Some(t) = &b.table {
                        let cells = match t.cells {
                            CellStyle::Ruled => "ruled",
                            CellStyle::Csv => "csv",
                            CellStyle::Aligned => "aligned",
                        };
                        let rows = match t.rows {
                            RowsAre::Metrics => "a metric per row",
                            RowsAre::Runs => "a run per row",
                        };
                        m.push(format!("{cells} tables, {rows}"));
                    }
                    m
                }
                (None, Some(det)) => {
                    let mut m: Vec<String> = det.keys_all.iter().map(|k| format!("key {k}")).collect();
                    if !det.keys_any.is_empty() {
                        m.push(format!("one of keys {}", det.keys_any.join(", ")));
                    }
                    m
                }
                _ => Vec::new(),
            };
            json!({
                "id": d.id,
                "tool": d.tool,
                "format": d.format.as_str(),
                "description": d.description,
                "origin": d.origin,
                "markers": markers,
                "variants": d.variants.iter().map(|v| json!({ "id": v.id, "description": v.description })).collect::<Vec<_>>(),
                "rows": d.rows.len(),
            })
        })
        .collect();
    serde_json::Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bytes_of_anchored_patterns() {
        let fb = |p: &str| FirstBytes::of(Some(&Regex::new(p).unwrap()));
        assert!(
            fb("^=+$").may_match("=====") && !fb("^=+$").may_match("Mean TTFT (ms): 1") && !fb("^=+$").may_match("")
        );
        assert!(fb("^-{3,}(.*-{3,})?$").may_match("---x---") && !fb("^-{3,}(.*-{3,})?$").may_match("x---"));
        // Not anchored, or matching the empty text: no filter.
        assert!(fb("=+$").may_match("x") && fb("^x*$").may_match("") && fb("^x*$").may_match("y"));
        assert!(FirstBytes::of(None).may_match("anything"));
    }

    fn needles(pattern: &str) -> Option<Vec<(String, bool)>> {
        Needles::of(pattern).0.map(|v| v.into_iter().map(|n| (n.text, n.folded)).collect())
    }

    #[test]
    fn banner_needles() {
        let one = |t: &str, folded| Some(vec![(t.to_string(), folded)]);
        // The built-in banners keep the one literal they always had.
        assert_eq!(needles("=+ Serving Benchmark Result =+"), one("Serving Benchmark Result", false));
        assert_eq!(needles(r"NVIDIA AIPerf \| LLM Metrics"), one("NVIDIA AIPerf | LLM Metrics", false));
        assert_eq!(needles(r"^\s*Total time: [0-9.]+ s\s*$"), one("Total time:", false));
        assert_eq!(needles("^ℹ .*(Summary Info|Statistics)"), one("ℹ", false));
        // Case-insensitive: the ASCII letters compared folded; `s` and `k`, whose folding reaches
        // beyond ASCII (ſ, the Kelvin sign), end the run.
        assert_eq!(needles("(?i)^-+ toybench results -+$"), one("toybench re", true));
        assert_eq!(needles("(?i)Serving Benchmark Result"), one("erving benchmar", true));
        assert_eq!(needles("(?i:tool) XYZ"), one("tool xyz", true));
        // Without a run of text, what a group or every branch requires; otherwise nothing.
        assert_eq!(needles("^(Alpha|Beta)+$"), Some(vec![("Alpha".to_string(), false), ("Beta".to_string(), false)]));
        assert_eq!(needles(r"^\w+ \d$"), None);
        assert_eq!(needles("^(Alpha|.)$"), None);
        // Found where the regular expression matches, whatever the case.
        for (pattern, line, hit) in [
            ("(?i)^-+ toybench results -+$", "--- TOYBENCH RESULTS ---", true),
            ("(?i)^-+ toybench results -+$", "--- toybench ---", false),
            (r"^\w+ \d$", "anything 1", true),
        ] {
            assert_eq!(Needles::of(pattern).found_in(line), hit, "{pattern} {line}");
            let finder = Finder::of(&[Needles::of(pattern), Needles::exact("Maximum request concurrency")]);
            assert_eq!(finder.is_match(line), hit, "{pattern} {line}");
            assert_eq!(finder.find(format!("x\n{line}\n").as_bytes()).is_some(), hit, "{pattern} {line}");
        }
    }

    #[test]
    fn builtins_load() {
        let defs = Definitions::builtin();
        assert!(defs.get("vllm-bench-serve").is_some());
        assert!(defs.get("sglang-bench-serving").is_some());
    }

    #[test]
    fn label_templates() {
        let p = LabelPattern::parse("{stat} TTFT (ms):").unwrap();
        assert_eq!(p.matches("Mean TTFT (ms):").unwrap().stat, Some(StatKey::Mean));
        assert_eq!(p.matches("P99.9 TTFT (ms):").unwrap().stat, Some(StatKey::P(99.9)));
        assert_eq!(p.matches("Median TTFT (ms):").unwrap().stat, Some(StatKey::P(50.0)));
        assert!(p.matches("Mean TPOT (ms):").is_none());
        assert!(p.matches(" TTFT (ms):").is_none());
        let i = LabelPattern::parse("Position {index}:").unwrap();
        assert_eq!(i.matches("Position 7:").unwrap().index, Some(7));
        assert!(i.matches("Position x:").is_none());
        assert!(LabelPattern::parse("{bogus} x:").is_err());
    }
}
