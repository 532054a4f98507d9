//! The file format of a definition: the TOML as written in `parsers/*.toml`, read by serde and
//! nothing more. Spans are kept where a later check must point at the offending text; every
//! check and conversion is in [`compile`](super::compile).
//!
//! `deny_unknown_fields` everywhere: a misspelt key is an error, not a silent no-op.

use serde::Deserialize;
use toml::Spanned;

use super::{CellStyle, MAX_NOISE_RUN, RowsAre};
use crate::report::{E2eEnd, ItlPer, PercentileMethod, Rates, TokenCount, TpotWeighting};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDefinition {
    pub id: Spanned<String>,
    pub tool: String,
    pub format: Spanned<String>,
    pub description: String,
    pub note: Option<String>,
    pub block: Option<RawBlock>,
    #[serde(default)]
    pub semantics: RawSemantics,
    #[serde(default)]
    pub variant: Vec<RawVariant>,
    #[serde(default)]
    pub context: Vec<RawRow>,
    pub args: Option<RawArgs>,
    #[serde(default)]
    pub row: Vec<RawRow>,
    #[serde(default)]
    pub key: Vec<RawKey>,
    pub detect: Option<RawDetect>,
    #[serde(default)]
    pub requests: RawRequests,
    #[serde(default)]
    pub strict_types: bool,
    pub runs_at: Option<String>,
    pub unit_key: Option<String>,
    #[serde(default)]
    pub trailer: Vec<RawTrailer>,
    #[serde(default)]
    pub footer: Vec<RawRow>,
    pub fold: Option<RawFold>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFold {
    pub into: Vec<String>,
    #[serde(default)]
    pub into_variants: Vec<String>,
    pub key: Spanned<String>,
    #[serde(default)]
    pub names: std::collections::BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub unset: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTrailer {
    pub banner: Spanned<String>,
    pub end: Spanned<String>,
    pub section: String,
    #[serde(default)]
    pub variants: Vec<Spanned<String>>,
    #[serde(default = "default_gap")]
    pub max_gap: usize,
}

fn default_gap() -> usize {
    2
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArgs {
    #[serde(default)]
    pub requires: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDetect {
    #[serde(default)]
    pub keys_all: Vec<String>,
    #[serde(default)]
    pub keys_any: Vec<String>,
    pub min_keys: Option<usize>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawRequests {
    pub ttft: Option<RawArray>,
    pub latency: Option<RawArray>,
    pub output_len: Option<RawArray>,
    pub input_len: Option<RawArray>,
    pub gaps: Option<RawArray>,
    pub error: Option<RawArray>,
    #[serde(default)]
    pub other: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArray {
    pub key: String,
    pub unit: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKey {
    pub key: Spanned<String>,
    #[serde(default)]
    pub aliases: Vec<Spanned<String>>,
    pub field: Option<Spanned<String>>,
    pub unit: Option<Spanned<String>>,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub zero_is_absent: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBlock {
    pub banner: Spanned<String>,
    pub header: Option<Spanned<String>>,
    #[serde(default)]
    pub banner_is_row: bool,
    pub end: Option<Spanned<String>>,
    pub end_after_label: Option<String>,
    pub section: Option<Spanned<String>>,
    #[serde(default = "default_strip")]
    pub section_strip: String,
    #[serde(default)]
    pub noise: Vec<Spanned<String>>,
    pub table: Option<RawTable>,
    pub groups: Option<RawGroups>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGroups {
    pub header: Spanned<String>,
    pub row: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTable {
    pub cells: CellStyle,
    pub rows: RowsAre,
    pub header_rows: Option<usize>,
    #[serde(default)]
    pub value_columns: Vec<String>,
    #[serde(default = "default_table_noise")]
    pub max_noise: usize,
}

/// As for a printed block: a footnote and a few log lines of other processes between two tables
/// do not end them.
fn default_table_noise() -> usize {
    MAX_NOISE_RUN
}

fn default_strip() -> String {
    "-".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawSemantics {
    pub missing_e2e_hint: Option<String>,
    pub itl: Option<ItlWord>,
    pub itl_why: Option<String>,
    pub output_tokens: Option<TokenCount>,
    pub e2e_end: Option<E2eEnd>,
    pub rates: Option<Rates>,
    pub percentiles: Option<PercentileMethod>,
    pub tpot_weighting: Option<TpotWeighting>,
    #[serde(default)]
    pub itl_rule: Vec<RawItlRule>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
pub enum ItlWord {
    Chunk,
    Token,
}

impl From<ItlWord> for ItlPer {
    fn from(w: ItlWord) -> ItlPer {
        match w {
            ItlWord::Chunk => ItlPer::Chunk,
            ItlWord::Token => ItlPer::Token,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawItlRule {
    #[serde(default)]
    pub backends: Vec<String>,
    #[serde(default)]
    pub variants: Vec<Spanned<String>>,
    pub when_present: Option<Spanned<String>>,
    pub itl: ItlWord,
    pub itl_why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub id: String,
    pub description: String,
    /// The tool this variant is reported as, when it is another program's copy of the block (a
    /// fork's client); absent: the definition's `tool`.
    pub tool: Option<String>,
    #[serde(default)]
    pub has: Vec<String>,
    #[serde(default)]
    pub has_any: Vec<String>,
    #[serde(default)]
    pub lacks: Vec<String>,
    #[serde(default)]
    pub has_section: Vec<String>,
    #[serde(default)]
    pub lacks_section: Vec<String>,
    pub banner_width: Option<usize>,
    #[serde(default)]
    pub context_has: Vec<Spanned<String>>,
    #[serde(default)]
    pub context_lacks: Vec<Spanned<String>>,
    /// `false`: this variant's client prints no argument dump (a Rust client), so a dump before
    /// its block is another program's and is not read.
    pub reads_args: Option<bool>,
    pub output_tokens: Option<TokenCount>,
    pub e2e_end: Option<E2eEnd>,
    pub itl: Option<ItlWord>,
    pub rates: Option<Rates>,
    pub percentiles: Option<PercentileMethod>,
    pub tpot_weighting: Option<TpotWeighting>,
    #[serde(default)]
    pub swap: Vec<[Spanned<String>; 2]>,
    pub note: Option<String>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawRow {
    pub label: Spanned<String>,
    #[serde(default)]
    pub aliases: Vec<Spanned<String>>,
    pub section: Option<OneOrMany>,
    pub field: Option<Spanned<String>>,
    pub unit: Option<Spanned<String>>,
    pub occurrence: Option<usize>,
    pub suffix: Option<Spanned<String>>,
    pub total_field: Option<Spanned<String>>,
    /// `[[row]]` only: the value is a list (`0.068, 4.066, 0.285`, `[0, 0.094]`); each item feeds
    /// the figure named at its place, in order (instead of `field`).
    #[serde(default)]
    pub items: Vec<Spanned<String>>,
    /// `[[context]]` only: `label` is an argument of the client's argument dump, not a line.
    #[serde(default)]
    pub arg: bool,
    /// With `arg`: read only when the dump's argument `[0]` is `[1]`.
    pub when_arg: Option<Spanned<[String; 2]>>,
    /// `[[context]]` only: a regex found anywhere in a line (a log line in prose, `Sampling
    /// input_len from [1024, 1024] ...`); its named group `value`, or `lo` and `hi` when equal,
    /// is the figure. `label` is then the row's name, not text of the line.
    pub pattern: Option<Spanned<String>>,
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}
