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
//!
//! This module is the compiled model the engine reads and the set of definitions in use; the file
//! format is in `raw`, its checks and compilation in `compile` (one function per section),
//! the `parsers` listing in `listing`. What the text scanner derives from the definitions to
//! skip noise is the scanner's (`detect::prefilter`): the definitions do not import the scanner.

use rustc_hash::FxHashMap as HashMap;
use std::any::Any;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;
use serde::Deserialize;

use crate::error::Error;
use crate::lex::normalize_label;
use crate::report::{E2eEnd, Format, ItlPer, PercentileMethod, Rates, StatKey, TokenCount, TpotWeighting};
use crate::vocabulary::{FieldDef, Unit};

mod compile;
mod file;
mod first_bytes;
mod fold;
mod lazy;
mod listing;
mod pattern;
mod raw;

pub use compile::parse;
pub use first_bytes::FirstBytes;
pub use fold::FoldSpec;
pub use lazy::Pattern;
pub use listing::listing;
pub use pattern::ContextPattern;

include!(concat!(env!("OUT_DIR"), "/builtin_parsers.rs"));

/// All definitions in use, built-ins first, overrides replacing by id.
#[derive(Debug)]
pub struct Definitions {
    list: Vec<Definition>,
    /// What the text scanner derives from the whole set (its prefilter, `detect::prefilter`),
    /// built on first use: see [`Definitions::derived`].
    derived: OnceLock<Box<dyn Any + Send + Sync>>,
    /// [`Definitions::json_keys`], built on first use.
    json_keys: OnceLock<crate::input::json::Keys>,
    /// [`Definitions::record_keys`], built on first use.
    record_keys: OnceLock<aho_corasick::AhoCorasick>,
}

/// What opens an argument dump in a log line: Python's repr of argparse's result,
/// `Namespace(name=value, ...)` (vLLM prints it alone, SGLang also as `benchmark_args=Namespace(...)`).
pub const ARGS_DUMP: &str = "Namespace(";

/// The context label of an argument `name` of an argument dump.
pub fn arg_label(name: &str) -> String {
    format!("args.{name}:")
}

/// After this many lines in a row that are neither rows a definition knows nor section headers,
/// an unclosed block is taken to have been cut off (the scanner's rule, `detect`), and a table
/// block's default `max_noise`.
pub(crate) const MAX_NOISE_RUN: usize = 8;

/// Most lines after a block's end that its `[[footer]]` lines are looked for on (AIPerf prints
/// its duration under a telemetry box and its command line, about twenty lines down).
pub const MAX_FOOTER_DISTANCE: usize = 40;

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
    /// `[[footer]]`: `label: value` lines printed after the block (within
    /// [`MAX_FOOTER_DISTANCE`] lines of its end) that belong to the run it closes (AIPerf's
    /// `Benchmark Duration: 26.82 sec` under its tables).
    pub footer: Vec<RowSpec>,
    /// `[fold]`: each run of this definition (a row of a summary table) repeats a run read
    /// earlier in the same input, and is folded into it as a cross-check (`pipeline::fold`).
    pub fold: Option<FoldSpec>,
    /// Specs of `rows` by literal label, and the specs with a placeholder (checked in turn).
    label_index: HashMap<String, Vec<usize>>,
    templated: Vec<usize>,
}

/// A block printed right after the result block, for the same run (vllm-rs's "Steady-State
/// Metrics"): its rows are read as one section of the run, never mixed into the main figures.
#[derive(Debug)]
pub struct TrailerSpec {
    pub banner: Pattern,
    pub end: Pattern,
    /// The section its rows are read under (rows in `[[row]]` with this `section`).
    pub section: String,
    /// The variants that print it; blocks of other variants are not held back waiting for it.
    pub variants: Vec<String>,
    /// Lines allowed between the result block's closing line and the trailer's banner.
    pub max_gap: usize,
}

/// When a JSON document is of a format: keys it must have, and keys of which it needs one (its
/// markers); or, without them, how many of the format's own keys it must fill to be recognised by
/// its structure alone.
#[derive(Debug, Default)]
pub struct DetectSpec {
    pub keys_all: Vec<String>,
    pub keys_any: Vec<String>,
    /// Keys of the format (read or marker) a document lacking a marker must have (0: never by
    /// structure).
    pub min_keys: usize,
}

/// Keys of its format a document lacking the format's markers must have, read keys (a templated
/// one once per statistic) and marker keys together, unless the definition says otherwise
/// (`[detect] min_keys`): a full export has 40 to 200, a metric object of a few statistics cut
/// short by a paste 8 or more; a record of another tool that shares a few generic names
/// (`duration`, `completed`) fewer.
pub const MIN_KEYS: usize = 8;

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
    pub banner: Pattern,
    /// A table's column header line (`┃ Metric ┃ avg ┃ min ┃ ...`), searched anywhere in the line:
    /// it opens a block as the banner does when the table's title was edited away. The block is
    /// read only when its rows are rows the definition knows (as for a banner).
    pub header: Option<Pattern>,
    /// The banner line is itself the first row (formats without a banner).
    pub banner_is_row: bool,
    /// Matched against the trimmed line.
    pub end: Option<Pattern>,
    /// The block ends after the row with this label.
    pub end_after_label: Option<String>,
    /// A section header line; its name is the line without the `section_strip` characters around
    /// it (empty: a plain rule).
    pub section: Option<Pattern>,
    pub section_strip: String,
    /// Lines inside a block that are known noise (log lines of other processes).
    pub noise: Vec<Pattern>,
    /// The block is one or more tables of several columns (console tables, CSV exports).
    pub table: Option<TableSpec>,
    /// Figures printed as stat groups (`[block.groups]`).
    pub groups: Option<GroupSpec>,
    /// What `end` and `section` can start with: most lines of a block are rows, and are not tried.
    pub end_first: FirstBytes,
    pub section_first: FirstBytes,
    /// What a `noise` line can start with (every row of the block is tried).
    pub noise_first: FirstBytes,
}

/// Figures printed as stat groups (`[block.groups]`, llmperf's stdout): a header line names the
/// figure (`ttft_s`), and the `key = value` lines under it give its statistics (`    p50 = 2.44`).
/// Each such line is read as the row `<name> <key>: <value>` (`ttft_s p50: 2.44`), so the
/// definition's `[[row]]` labels are written `"ttft_s {stat}:"`. A group lasts until the next
/// header or the next `label: value` row; lines between (an abridging `...`) are noise.
#[derive(Debug, Clone)]
pub struct GroupSpec {
    /// A header line (matched against the trimmed line); its name is its first capture group, or
    /// the whole trimmed line.
    pub header: Pattern,
    /// A statistic line under a header (matched against the trimmed line), with the captures
    /// `key` and `value`.
    pub row: Pattern,
}

impl GroupSpec {
    /// The name of a group header line.
    pub fn header_name(&self, trimmed: &str) -> Option<String> {
        let caps = self.header.captures(trimmed)?;
        Some(caps.get(1).map_or(trimmed, |m| m.as_str()).trim().to_string())
    }

    /// A statistic line of the group `name`, as the row `<name> <key>: <value>`.
    pub fn row_text(&self, name: &str, trimmed: &str) -> Option<String> {
        let caps = self.row.captures(trimmed)?;
        let (key, value) = (caps.name("key")?.as_str().trim(), caps.name("value")?.as_str().trim());
        Some(format!("{name} {key}: {value}"))
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
    /// Cells between `|` with no outer border (`  synchronous|   0.23|  1.00`, guidellm 0.2):
    /// as `ruled`, but a line is a table line when it holds a bar anywhere, not only first.
    Bars,
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
    /// Which printed rates are the printed totals over the printed duration (`None`: the output
    /// and request rates, [`crate::report::Semantics::rates`]).
    pub rates: Option<Rates>,
    /// How the tool computes its percentiles (`None`: not known).
    pub percentiles: Option<PercentileMethod>,
    /// How the tool weighs the TPOT rows (`None`: one value per request).
    pub tpot_weighting: Option<TpotWeighting>,
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
    /// The tool a block of this variant is reported as (`source.tool`): a fork's copy of the
    /// block; `None`, the definition's.
    pub tool: Option<String>,
    pub has: Vec<String>,
    pub has_any: Vec<String>,
    pub lacks: Vec<String>,
    pub has_section: Vec<String>,
    pub lacks_section: Vec<String>,
    pub banner_width: Option<usize>,
    pub context_has: Vec<String>,
    pub context_lacks: Vec<String>,
    /// Whether this variant's client prints an argument dump before its block; `false` (a Rust
    /// client): a dump there is another program's, and its arguments are not this run's.
    pub reads_args: bool,
    pub output_tokens: Option<TokenCount>,
    pub e2e_end: Option<E2eEnd>,
    pub itl: Option<ItlPer>,
    pub rates: Option<Rates>,
    pub percentiles: Option<PercentileMethod>,
    pub tpot_weighting: Option<TpotWeighting>,
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
    pub suffix: Option<Pattern>,
    /// For `a/b` values: where `b` goes.
    pub total: Option<Target>,
    /// A list value (`0.068, 4.066, 0.285`): the figure each item feeds, in order.
    pub items: Vec<Target>,
    /// JSON formats: the document must have this key (a hand-written report without it is an
    /// error naming the key).
    pub required: bool,
    /// The tool writes 0 for "does not apply" (vLLM's `rtfx` outside audio runs).
    pub zero_is_absent: bool,
    /// `[[context]]` of an argument dump: the figure is read only when another argument of the
    /// same dump has this value (`random_input_len` only when `dataset_name` is `random`).
    pub when_arg: Option<(String, String)>,
    /// `[[context]]` of a line in prose: found by this anywhere in a line (see [`ContextPattern`]).
    pub pattern: Option<ContextPattern>,
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

    /// Whether a row of the definition is read under the section `name` (a section header of its
    /// tool, not any dashed line: a sweep script's `--- run 35 of 99 ---` is none).
    pub fn reads_section(&self, name: &str) -> bool {
        self.rows.iter().any(|r| r.sections.as_ref().is_some_and(|s| s.iter().any(|x| x == name)))
    }

    /// Whether the definition reads `label` more than once in a block (in several sections, or
    /// several times in one): a label such a block prints twice with different values honestly.
    pub fn reads_label_twice(&self, label: &str) -> bool {
        let exact = self.label_index.get(label).map_or(&[][..], Vec::as_slice);
        let templated = self.templated.iter().filter(|&&i| self.rows[i].matches_label(label).is_some());
        let specs: Vec<usize> = exact.iter().copied().chain(templated.copied()).collect();
        specs.len() > 1 || specs.iter().any(|&i| self.rows[i].occurrence.is_some_and(|o| o > 1))
    }

    pub fn context_spec(&self, label: &str) -> Option<(&RowSpec, Captured)> {
        self.context.iter().find_map(|s| s.matches_label(label).map(|c| (s, c)))
    }

    /// The `[[footer]]` spec of a line printed after the block.
    pub fn footer_spec(&self, label: &str) -> Option<(&RowSpec, Captured)> {
        self.footer.iter().find_map(|s| s.matches_label(label).map(|c| (s, c)))
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
    /// arrays): what the JSON reader builds; any other large value is read past unbuilt. Built
    /// once per set (a run over many files reads them all with the same definitions).
    pub fn json_keys(&self) -> &crate::input::json::Keys {
        self.json_keys.get_or_init(|| self.build_json_keys())
    }

    fn build_json_keys(&self) -> crate::input::json::Keys {
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

    /// The keys one of which every JSON record of these definitions has, quoted as in its text
    /// (`"duration"`, or `\"duration\"` when escaped): the first key of each JSON format's
    /// `keys_all`/`keys_any` (and of a canonical report or run, and an llm-d report). A record
    /// found inside text without any is not parsed. Built once per set: the automaton takes longer
    /// to build than a small log takes to read.
    pub(crate) fn record_keys(&self) -> &aho_corasick::AhoCorasick {
        self.record_keys.get_or_init(|| {
            let mut keys: Vec<String> = self
                .iter()
                .filter(|d| d.is_json())
                .filter_map(|d| d.detect.as_ref())
                .flat_map(|det| det.keys_all.iter().chain(det.keys_any.iter()))
                .map(|k| k.split(['.', '[']).next().unwrap_or(k).to_string())
                .collect();
            keys.extend(["runs", "totals", "reported", "results"].map(String::from));
            keys.sort();
            keys.dedup();
            let patterns: Vec<String> =
                keys.iter().flat_map(|k| [format!("\"{k}\""), format!("\\\"{k}\\\"")]).collect();
            // A contiguous NFA: a DFA of these ~130 keys took 4.8M instructions to build, 14% of
            // a small log's whole invocation, and searches few lines (those with a `{`).
            aho_corasick::AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(patterns)
                .expect("literal patterns")
        })
    }

    /// A value built from the whole set on first use and kept with it, for as long as the set
    /// lives: the text scanner's prefilter (building its automata takes longer than reading a
    /// small log, and a run over many files reads them all with the same definitions). Held
    /// without its type so that the definitions do not depend on the scanner that reads them; one
    /// kind of value per set.
    pub(crate) fn derived<T: Any + Send + Sync>(&self, build: impl FnOnce(&Definitions) -> T) -> &T {
        self.derived
            .get_or_init(|| Box::new(build(self)))
            .downcast_ref()
            .expect("one kind of value derived from a set of definitions")
    }

    /// The built-in definitions (compiled in from `parsers/`), parsed once per process.
    pub fn builtin() -> &'static Definitions {
        static BUILTIN: OnceLock<Definitions> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            let mut list = Vec::new();
            for (name, text) in BUILTIN_PARSERS {
                // A broken built-in definition is a bug caught by the test suite.
                list.push(
                    compile::parse_builtin(text, &format!("parsers/{name}"))
                        .unwrap_or_else(|e| panic!("built-in definition: {e}")),
                );
            }
            Definitions { list, derived: OnceLock::new(), json_keys: OnceLock::new(), record_keys: OnceLock::new() }
        })
    }

    /// The built-ins plus every `*.toml` in `dir`; a definition with the id of a built-in
    /// replaces it.
    pub fn with_dir(dir: &Path) -> Result<Definitions, Error> {
        let mut list: Vec<Definition> = Vec::new();
        for (name, text) in BUILTIN_PARSERS {
            list.push(compile::parse_builtin(text, &format!("parsers/{name}"))?);
        }
        let entries = std::fs::read_dir(dir).map_err(|e| Error::Usage(format!("--parsers {}: {e}", dir.display())))?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for path in paths {
            let name = path.display().to_string();
            let text = file::read_definition_file(&path, &name)?;
            let def = parse(&text, &name)?;
            match list.iter().position(|d| d.id == def.id) {
                Some(i) => list[i] = def,
                None => list.push(def),
            }
        }
        Ok(Definitions { list, derived: OnceLock::new(), json_keys: OnceLock::new(), record_keys: OnceLock::new() })
    }

    pub fn iter(&self) -> impl Iterator<Item = &Definition> {
        self.list.iter()
    }

    pub fn get(&self, id: &str) -> Option<&Definition> {
        self.list.iter().find(|d| d.id == id)
    }
}

#[cfg(test)]
mod tests;
