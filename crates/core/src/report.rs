//! The canonical report: the data every stage passes on, and what `emit` writes.
//!
//! The names are a contract (see docs/report.md): `schema_version`, `runs[]`,
//! `source`, `workload`, `totals`, `reported`, `derived`, `checks`, `verdict`, `rows`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocabulary::{Group, Key};

mod figures;
mod rules;

pub use figures::{Figure, Figures, Stat, StatKey};
pub use rules::{RuleId, RuleStage, verdict};

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
        let (head, rel) = split_dot(path).unwrap_or(("reported", path));
        let g = match head {
            "workload" => &self.workload,
            "totals" => &self.totals,
            _ => &self.reported,
        };
        (g, rel)
    }

    pub fn group_mut<'p>(&mut self, path: &'p str) -> (&mut Figures, &'p str) {
        let (head, rel) = split_dot(path).unwrap_or(("reported", path));
        let g = match head {
            "workload" => &mut self.workload,
            "totals" => &mut self.totals,
            _ => &mut self.reported,
        };
        (g, rel)
    }

    /// The figure at a full canonical path, as the report writes it (`reported.ttft_ms`); a
    /// group's figures by their path in it are [`Figures::get`] and its siblings.
    pub fn figure(&self, path: &str) -> Option<&Figure> {
        let (g, rel) = self.group(path);
        g.get(rel)
    }

    /// The group a key's figure is written in.
    #[doc(hidden)]
    pub fn figures(&self, key: Key) -> &Figures {
        match key.group() {
            Group::Workload => &self.workload,
            Group::Totals => &self.totals,
            Group::Reported => &self.reported,
        }
    }

    pub(crate) fn figures_mut(&mut self, key: Key) -> &mut Figures {
        match key.group() {
            Group::Workload => &mut self.workload,
            Group::Totals => &mut self.totals,
            Group::Reported => &mut self.reported,
        }
    }

    /// The figure of a canonical key (`vocabulary::reported::TTFT_MS`).
    #[doc(hidden)]
    pub fn get(&self, key: Key) -> Option<&Figure> {
        self.figures(key).get(key.rel())
    }

    /// Whether the run has the figure.
    #[doc(hidden)]
    pub fn has(&self, key: Key) -> bool {
        self.get(key).is_some()
    }

    /// A count or a number, as `f64`.
    #[doc(hidden)]
    pub fn number(&self, key: Key) -> Option<f64> {
        self.figures(key).number(key.rel())
    }

    #[doc(hidden)]
    pub fn text(&self, key: Key) -> Option<&str> {
        self.figures(key).text(key.rel())
    }

    #[doc(hidden)]
    pub fn stat(&self, key: Key) -> Option<&Stat> {
        self.figures(key).stat(key.rel())
    }

    /// The mean of a figure's statistic block.
    #[doc(hidden)]
    pub fn stat_mean(&self, key: Key) -> Option<f64> {
        self.stat(key).and_then(Stat::mean)
    }

    /// One statistic of a figure's block.
    #[doc(hidden)]
    pub fn stat_of(&self, key: Key, which: StatKey) -> Option<f64> {
        self.stat(key).and_then(|s| s.get(which))
    }

    /// Set a figure, replacing what was there (in report order when new).
    #[doc(hidden)]
    pub fn set(&mut self, key: Key, value: Figure) {
        self.figures_mut(key).set(key.rel(), key.path(), value);
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
    /// Sum of each request's gaps: without a latency array it gives the E2E latency (read
    /// exactly); beside one it is checked against it (to within 16 significant digits).
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

/// How `bench-normalize run -- <client command>` ran the client (see `src/client/`).
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

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Format {
    Stdout,
    ResultJson,
    ResultJsonl,
    /// A CSV export read as text, line by line (AIPerf's `profile_export_aiperf.csv`).
    ResultCsv,
    Report,
}

impl Format {
    /// The name the report writes (serde's, the same convention through strum: stated once).
    pub fn as_str(self) -> &'static str {
        self.into()
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
    /// Which printed rates are the printed totals over the printed duration (rule
    /// `throughput-totals`). Absent: the output-token and request rates only
    /// ([`Rates::OutputAndRequest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<Rates>,
    /// How the tool computes its percentiles. Absent: not known, so no bound is drawn from them
    /// (rules `distribution-possible`, `decode-within-e2e`, `tpot-bounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentiles: Option<PercentileMethod>,
    /// How the tool weighs the per-request TPOTs its TPOT rows summarize. Absent: `request`, one
    /// value per request ([`TpotWeighting::Request`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_weighting: Option<TpotWeighting>,
}

impl Semantics {
    /// The rates `throughput-totals` may hold to the totals: what the definition said, else the
    /// output-token and request rates (every client computes those as `total / duration` unless
    /// its definition says otherwise).
    pub fn rates(&self) -> Rates {
        self.rates.unwrap_or(Rates::OutputAndRequest)
    }

    /// Whether the per-request percentiles are numpy's default over the successful requests.
    pub fn numpy_percentiles(&self) -> bool {
        self.percentiles == Some(PercentileMethod::NumpyLinear)
    }

    /// How the TPOT rows are weighted: what the definition said, else one value per request.
    pub fn tpot_weighting(&self) -> TpotWeighting {
        self.tpot_weighting.unwrap_or(TpotWeighting::Request)
    }

    /// Whether the TPOT rows are token-weighted (each request's TPOT once per decode token).
    pub fn token_weighted_tpot(&self) -> bool {
        self.tpot_weighting() == TpotWeighting::Token
    }
}

/// How a tool's TPOT rows weigh its requests' TPOTs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TpotWeighting {
    /// One value per request with two or more output tokens (vLLM, SGLang: `mean_i TPOT_i`); the
    /// default.
    Request,
    /// Each request's TPOT counted once per decode token (`n_i - 1` times: guidellm), so the rows'
    /// mean is `sum_i (last_i - first_i) / (N_out - R)`, the token-weighted TPOT.
    Token,
}

/// Which of a tool's printed rates are its printed totals over its printed duration. The names
/// say which rates the rule `throughput-totals` holds to the totals (`all`, `output-and-request`)
/// or why it holds none (`own-window`), in the words a definition's author checks in the tool's
/// source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Rates {
    /// Output-token, request, input-token and total-token rates are all `total / duration`:
    /// `request_throughput = completed / dur_s`, `input_throughput = total_input / dur_s`,
    /// `total_token_throughput = (total_input + total_output) / dur_s` (vLLM, vllm-rs, SGLang).
    All,
    /// Only the output-token and request rates are known to be `total / duration`; the input and
    /// total rates are not held to the totals (the default).
    OutputAndRequest,
    /// No printed rate is the printed totals over the printed duration: the tool computes its
    /// rates over its own measured window (guidellm), so `throughput-totals` is skipped.
    OwnWindow,
}

/// How a tool computes the percentiles it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PercentileMethod {
    /// numpy's default `np.percentile` (linear interpolation between the closest ranks, `p =
    /// s[lo] + f (s[lo+1] - s[lo])` at rank `q (n - 1)`), with the TTFT and E2E latency taken over
    /// one value per successful request (vLLM, vllm-rs, SGLang), so `n` is the successful request
    /// count.
    NumpyLinear,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum ItlPer {
    Chunk,
    Token,
}

impl ItlPer {
    /// The name the report writes (serde's, the same convention through strum: stated once).
    pub fn as_str(self) -> &'static str {
        self.into()
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
    /// Why the TPOT could not be tested both ways (with `verified: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified_reason: Option<String>,
    /// The rules that tested `mean` against figures independent of it, each with the sides it
    /// could have failed it on: `above` (a TPOT too slow for the run), `below` (too fast).
    /// `verified` is `true` only when both sides were tested.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tested_by: Vec<String>,
    /// Set when the method stands an estimate in for an input the run lacks: why the figure is
    /// approximate and by how much it can be off (`e2e-median-ttft-tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approximate: Option<String>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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
    /// The name the report writes (serde's, the same convention through strum: stated once).
    pub fn as_str(self) -> &'static str {
        self.into()
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
    pub id: RuleId,
    pub severity: Severity,
    pub status: Status,
    pub message: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    Skipped,
}

impl Severity {
    /// The name the report writes (serde's, the same convention through strum: stated once).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl Status {
    /// The name the report writes (serde's, the same convention through strum: stated once).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
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
    /// The name the report writes (serde's, the same convention through strum: stated once).
    pub fn as_str(self) -> &'static str {
        self.into()
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

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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
    /// The name the report writes (serde's, the same convention through strum: stated once).
    pub fn as_str(self) -> &'static str {
        self.into()
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
    /// `preamble` for a line printed before the block that belongs to the same run, `footer` for
    /// one printed after it (`[[footer]]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl Run {
    /// Why the run is not accepted, for a message: its failed checks (info ones aside), each
    /// `id: message`, joined by `; `; empty when none failed.
    pub fn failures(&self) -> String {
        let failed: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail && c.severity != Severity::Info)
            .map(|c| format!("{}: {}", c.id.as_str(), c.message))
            .collect();
        failed.join("; ")
    }

    /// How far the exact value of the figure at `path` may lie from `value`, its printed row's
    /// reading: half a unit of the row's last printed digit; `None` without such a row.
    pub(crate) fn printed_slack(&self, path: &str, value: f64) -> Option<f64> {
        self.rows.iter().find(|r| r.field.as_deref() == Some(path))?.slack(value)
    }
}

impl Row {
    /// How far the exact figure `figure` (in the canonical unit) may lie from this row's printed
    /// value: half a unit of its last printed digit. `None` when the value is not a plain number.
    #[doc(hidden)]
    pub fn slack(&self, figure: f64) -> Option<f64> {
        printed_slack(self.value.as_deref()?, figure)
    }
}

/// A dotted path cut at its first dot (`str::split_once('.')` a byte at a time: paths are a few
/// bytes long and are cut for every figure set or looked up, where a `memchr` costs more).
pub(crate) fn split_dot(path: &str) -> Option<(&str, &str)> {
    let at = path.bytes().position(|b| b == b'.')?;
    Some((&path[..at], &path[at + 1..]))
}

/// How far the exact figure `figure` (in the canonical unit) may lie from its printed value
/// `row_value` (in the row's unit): half a unit of the printed value's last digit, in the
/// figure's unit. `None` when the value does not start with a plain number.
pub(crate) fn printed_slack(row_value: &str, figure: f64) -> Option<f64> {
    // The first number of the printed value: `6,677.95`, `139.89`, `6.7 ± 0.002`.
    let s = row_value.trim_start();
    // (Bytes, not chars: the set is ASCII. Every latency row of every run is read here.)
    let end =
        s.bytes().position(|c| !(c.is_ascii_digit() || matches!(c, b'.' | b',' | b'-' | b'+'))).unwrap_or(s.len());
    let token = &s[..end];
    if token.is_empty() || s[end..].starts_with(['e', 'E']) {
        return None;
    }
    // (Without a copy when there is no thousands separator, the usual case.)
    let number =
        if token.contains(',') { crate::number::parse(&token.replace(',', ""))? } else { crate::number::parse(token)? };
    let decimals = token.bytes().position(|c| c == b'.').map_or(0, |at| token.len() - at - 1) as i32;
    // The row's unit against the figure's (seconds printed, milliseconds kept).
    let scale = if number != 0.0 && figure != 0.0 { (figure / number).abs() } else { 1.0 };
    let scale = if (scale - 1.0).abs() < 0.02 { 1.0 } else { 10f64.powf(scale.log10().round()) };
    Some(0.5 * 10f64.powi(-decimals) * scale * 1.0001 + 1e-9 * figure.abs())
}

#[cfg(test)]
mod tests;
