//! `bench-normalize compare BASELINE OTHER...`: runs of two or more configurations lined up by
//! workload, their figures side by side with ratios to the baseline, and every difference in what
//! the figures *mean* named (docs/compare.md).
//!
//! * A **side** is one command-line argument (a file, or a directory read file by file): one
//!   configuration. Its runs are grouped by their **workload key** ([`Workload`]): runs with the
//!   same key are repeated runs of one configuration, summarised by median and min-max.
//! * Each OTHER side's groups are **paired** with the baseline's: exactly equal keys first, then a
//!   key with an unknown field pairs with the one group it fits, if only one (`pair_groups`).
//! * Each pair's **meaning checks** (`issues`) name what differs between the two sides' figures
//!   and decide, per figure, whether it is compared, compared with a warning, or refused (not
//!   compared, with the reason). A rejected or unusable run never feeds a figure.
//!
//! Every figure a run gives is read through one accessor function below (`tpot`,
//! `ttft`, ...), so a change in the report's shape is one place to change here.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use bench_normalize_core::error::printable;
use bench_normalize_core::number::show;
use bench_normalize_core::report::{E2eEnd, ItlPer, Run, StatKey, Status, TokenCount, TpotMethod, Verdict};
use bench_normalize_core::vocabulary::{reported, totals, workload};
use bench_normalize_core::{Error, ExitCode, Options};

mod key;
mod meaning;
mod output;
mod sides;

#[allow(unused_imports)]
use key::*;
pub use key::{KeyField, Workload, WorkloadKey};
#[allow(unused_imports)]
use meaning::*;
/// The one escaping of input text in Markdown (see `output::md`); `sweep` and the store's
/// `regress` use it too.
#[doc(hidden)]
pub use output::md as markdown_text;
pub use output::{markdown, table};
#[allow(unused_imports)]
use sides::*;
pub use sides::{RunRef, Side, Skipped, read_side};

/// Version of the JSON document `compare --format json` writes (docs/compare.md); its field names
/// do not change within a version.
pub const COMPARE_VERSION: u32 = 1;

// ------------------------------------------------------------------------------------------------
// The figures a run gives: one accessor each.

fn tpot(run: &Run) -> Option<f64> {
    run.derived.tpot_ms.mean
}

fn tpot_method(run: &Run) -> Option<TpotMethod> {
    run.derived.tpot_ms.method
}

fn tpot_approximate(run: &Run) -> Option<&str> {
    run.derived.tpot_ms.approximate.as_deref()
}

fn tpot_unverified(run: &Run) -> Option<&str> {
    match run.derived.tpot_ms.verified {
        Some(false) => Some(run.derived.tpot_ms.unverified_reason.as_deref().unwrap_or("no rule could test it")),
        _ => None,
    }
}

fn per_user(run: &Run) -> Option<f64> {
    run.derived.per_user_decode_tok_per_s
}

/// Output throughput: recomputed from the totals, else as the tool printed it (same meaning:
/// output tokens over the benchmark's duration).
fn output_throughput(run: &Run) -> Option<f64> {
    run.derived.output_tok_per_s.or_else(|| run.number(reported::OUTPUT_TOK_PER_S))
}

fn ttft(run: &Run, key: StatKey) -> Option<f64> {
    run.stat(reported::TTFT_MS)?.get(key)
}

/// The TTFT mean, which `compare` does not line up (`sweep`, the store and `aggregate` do).
fn ttft_mean(run: &Run) -> Option<f64> {
    ttft(run, StatKey::Mean)
}

/// The E2E latency's p99 as measured.
fn e2e_p99(run: &Run) -> Option<f64> {
    run.stat(reported::E2E_MS)?.get(StatKey::P(99.0))
}

/// E2E latency as measured; for the mean, the approximate derived one when the tool printed none
/// (`true` in the second place).
fn e2e(run: &Run, key: StatKey) -> Option<(f64, bool)> {
    if let Some(v) = run.stat_of(reported::E2E_MS, key) {
        return Some((v, false));
    }
    match key {
        StatKey::Mean => run.derived.e2e_ms.as_ref().map(|e| (e.mean, true)),
        _ => None,
    }
}

fn itl_mean(run: &Run) -> Option<f64> {
    run.stat(reported::ITL_MS)?.mean()
}

fn itl_per(run: &Run) -> Option<ItlPer> {
    run.source.semantics.itl
}

fn tokens_per_chunk(run: &Run) -> Option<f64> {
    run.derived.tokens_per_chunk
}

/// guidellm's "TPOT", llmperf's "inter token latency", inference-perf's NTPOT: TTFT included.
fn ttft_inclusive_per_token(run: &Run) -> Option<f64> {
    run.stat_mean(reported::LATENCY_PER_OUTPUT_TOKEN_MS)
}

fn token_source(run: &Run) -> Option<TokenCount> {
    run.source.semantics.output_tokens
}

fn e2e_end(run: &Run) -> Option<E2eEnd> {
    run.source.semantics.e2e_end
}

fn output_tokens(run: &Run) -> Option<f64> {
    run.number(totals::OUTPUT_TOKENS)
}

fn output_tokens_retokenized(run: &Run) -> Option<f64> {
    run.number(totals::OUTPUT_TOKENS_RETOKENIZED)
}

fn input_tokens(run: &Run) -> Option<f64> {
    run.number(totals::INPUT_TOKENS)
}

fn successful(run: &Run) -> Option<f64> {
    run.number(totals::SUCCESSFUL_REQUESTS)
}

fn duration(run: &Run) -> Option<f64> {
    run.number(totals::DURATION_S)
}

fn check_failed(run: &Run, id: bench_normalize_core::report::RuleId) -> Option<String> {
    run.checks.iter().find(|c| c.id == id && c.status == Status::Fail).map(|c| c.message.clone())
}

/// How many requests failed, and how that is known.
fn failed(run: &Run) -> Option<(u64, &'static str)> {
    if let Some(f) = run.number(totals::FAILED_REQUESTS) {
        return Some((f as u64, "printed"));
    }
    if let Some(p) = &run.derived.per_request {
        return Some((p.failed as u64, "per-request errors"));
    }
    let (prompts, ok) = (run.number(workload::NUM_PROMPTS)?, successful(run)?);
    // The clients send `num_prompts` requests (a warm-up aside, which is not counted): those that
    // did not succeed failed.
    (prompts >= ok).then_some(((prompts - ok) as u64, "num_prompts - successful requests"))
}

// ------------------------------------------------------------------------------------------------
// Figures compared

/// A headline figure of a run: the one list `compare`, `aggregate`, `regress` and the history
/// plot take their figures from, each its own subset ([`Fig::COMPARED`], [`Fig::AGGREGATED`],
/// [`Fig::REGRESSED`]), so that a figure has one name, one label and one way to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Fig {
    #[serde(rename = "tpot_ms")]
    Tpot,
    #[serde(rename = "per_user_decode_tok_per_s")]
    PerUser,
    #[serde(rename = "output_tok_per_s")]
    OutputThroughput,
    #[serde(rename = "request_per_s")]
    RequestThroughput,
    #[serde(rename = "ttft_ms.mean")]
    TtftMean,
    #[serde(rename = "ttft_ms.p50")]
    TtftP50,
    #[serde(rename = "ttft_ms.p99")]
    TtftP99,
    #[serde(rename = "e2e_ms.mean")]
    E2eMean,
    #[serde(rename = "e2e_ms.p50")]
    E2eP50,
    #[serde(rename = "e2e_ms.p99")]
    E2eP99,
    #[serde(rename = "itl_ms.mean")]
    ItlMean,
}

impl Fig {
    /// What `compare` compares, in order.
    pub const COMPARED: [Fig; 8] = [
        Fig::Tpot,
        Fig::PerUser,
        Fig::OutputThroughput,
        Fig::TtftP50,
        Fig::TtftP99,
        Fig::E2eMean,
        Fig::E2eP50,
        Fig::ItlMean,
    ];

    /// What `aggregate` summarizes over repetitions, in order.
    pub const AGGREGATED: [Fig; 9] = [
        Fig::Tpot,
        Fig::PerUser,
        Fig::TtftMean,
        Fig::TtftP50,
        Fig::TtftP99,
        Fig::E2eMean,
        Fig::E2eP99,
        Fig::OutputThroughput,
        Fig::RequestThroughput,
    ];

    /// What `regress` judges (and the store keeps a column of), in order.
    pub const REGRESSED: [Fig; 6] =
        [Fig::Tpot, Fig::PerUser, Fig::TtftMean, Fig::TtftP99, Fig::E2eMean, Fig::OutputThroughput];

    pub fn id(self) -> &'static str {
        match self {
            Fig::Tpot => "tpot_ms",
            Fig::PerUser => "per_user_decode_tok_per_s",
            Fig::OutputThroughput => "output_tok_per_s",
            Fig::TtftP50 => "ttft_ms.p50",
            Fig::TtftP99 => "ttft_ms.p99",
            Fig::E2eMean => "e2e_ms.mean",
            Fig::E2eP50 => "e2e_ms.p50",
            Fig::E2eP99 => "e2e_ms.p99",
            Fig::TtftMean => "ttft_ms.mean",
            Fig::RequestThroughput => "request_per_s",
            Fig::ItlMean => "itl_ms.mean",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Fig::Tpot => "TPOT, derived (ms)",
            Fig::PerUser => "Per-user decode rate (tok/s)",
            Fig::OutputThroughput => "Output throughput (tok/s)",
            Fig::TtftP50 => "TTFT p50 (ms)",
            Fig::TtftP99 => "TTFT p99 (ms)",
            Fig::E2eMean => "E2E mean (ms)",
            Fig::E2eP50 => "E2E p50 (ms)",
            Fig::E2eP99 => "E2E p99 (ms)",
            Fig::TtftMean => "TTFT mean (ms)",
            Fig::RequestThroughput => "Request throughput (req/s)",
            Fig::ItlMean => "ITL mean, as printed (ms)",
        }
    }

    /// Whether a larger value is better (throughputs) or worse (latencies).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Fig::PerUser | Fig::OutputThroughput | Fig::RequestThroughput)
    }

    /// The figure of one run (`None` when the run does not give it).
    pub fn value(self, run: &Run) -> Option<f64> {
        match self {
            Fig::Tpot => tpot(run),
            Fig::PerUser => per_user(run),
            Fig::OutputThroughput => output_throughput(run),
            Fig::TtftP50 => ttft(run, StatKey::P(50.0)),
            Fig::TtftP99 => ttft(run, StatKey::P(99.0)),
            Fig::E2eMean => e2e(run, StatKey::Mean).map(|(v, _)| v),
            Fig::E2eP50 => e2e(run, StatKey::P(50.0)).map(|(v, _)| v),
            Fig::E2eP99 => e2e_p99(run),
            Fig::TtftMean => ttft_mean(run),
            Fig::RequestThroughput => run.derived.request_per_s,
            Fig::ItlMean => itl_mean(run),
        }
    }
}

/// A figure over the runs of one side's group: the median, the range, and how many runs gave it.
/// The median of an even number of runs is the mean of the middle two (rounded to 6 significant
/// digits, as derived figures are).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: usize,
}

impl Spread {
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            // Rounding never takes it out of the middle two.
            bench_normalize_core::number::round((v[n / 2 - 1] + v[n / 2]) / 2.0).clamp(v[n / 2 - 1], v[n / 2])
        };
        Some(Spread { median, min: v[0], max: v[n - 1], runs: n })
    }
}

/// How a figure fared in a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Compared; nothing differs in what the two figures mean.
    Compared,
    /// Compared, with a difference in meaning or measurement named in `reasons`.
    Warned,
    /// Not compared: the figures do not mean the same thing (`reasons` says how); no ratio.
    Refused,
    /// A side does not give the figure.
    Missing,
}

/// One figure of a pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureRow {
    pub figure: Fig,
    pub baseline: Option<Spread>,
    pub other: Option<Spread>,
    /// `other.median / baseline.median` (6 significant digits); `null` when refused or missing.
    pub ratio: Option<f64>,
    /// `true` when the two sides' ranges (min-max) overlap and one side has repeated runs: the
    /// difference is within the runs' own spread. `null` when neither side has two runs giving it.
    pub within_spread: Option<bool>,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// Whether a difference refuses the figures it touches or only warns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Refuse,
    Warn,
}

/// A difference between the two sides (or within one) found by the meaning checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    pub code: &'static str,
    pub level: Level,
    pub figures: Vec<Fig>,
    pub message: String,
}

// ------------------------------------------------------------------------------------------------
// The comparison

/// One side as the comparison document names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideInfo {
    pub label: String,
    pub runs: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
}

/// A baseline group and an other side's group, compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    /// The other side's label.
    pub other: String,
    /// The baseline group's workload (keyed fields only).
    pub workload: Workload,
    /// The other group's, when a field differs (unknown on one side).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_workload: Option<Workload>,
    pub baseline_runs: Vec<RunRef>,
    pub other_runs: Vec<RunRef>,
    pub figures: Vec<FigureRow>,
    pub issues: Vec<Issue>,
}

/// A group of runs with no partner on the other side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unpaired {
    /// The side's label.
    pub side: String,
    /// Compared against (the baseline's label for an other side's group, the other side's for a
    /// baseline group).
    pub against: String,
    pub workload: Workload,
    pub runs: Vec<RunRef>,
    pub reason: String,
}

/// The whole comparison: what `--format json` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub compare_version: u32,
    pub key: Vec<KeyField>,
    pub baseline: SideInfo,
    pub others: Vec<SideInfo>,
    pub pairs: Vec<Pair>,
    pub unpaired: Vec<Unpaired>,
}

impl Comparison {
    /// The exit code of the comparison itself (errors reading the inputs aside): 1 when a run read
    /// was rejected by a rule (its figures were left out), 3 when a run was unusable or nothing
    /// could be paired, else 0. A refused or warned figure does not change it: it is said in the
    /// output.
    pub fn exit_code(&self) -> ExitCode {
        let mut code = ExitCode::Ok;
        let runs = self
            .pairs
            .iter()
            .flat_map(|p| p.baseline_runs.iter().chain(&p.other_runs))
            .chain(self.unpaired.iter().flat_map(|u| &u.runs));
        for r in runs {
            code = code.max(match r.verdict {
                Verdict::Accepted => ExitCode::Ok,
                Verdict::Rejected => ExitCode::Rejected,
                Verdict::Unusable => ExitCode::NoResult,
            });
        }
        if self.pairs.is_empty() {
            code = code.max(ExitCode::NoResult);
        }
        code
    }
}

/// Compare each of `others` with `baseline`, runs lined up by the workload fields in `key`.
pub fn compare(baseline: &Side, others: &[Side], key: &[KeyField]) -> Comparison {
    let mut base_skipped = baseline.skipped.clone();
    let base_groups = group_side(baseline, key, &mut base_skipped);
    let mut out = Comparison {
        compare_version: COMPARE_VERSION,
        key: key.to_vec(),
        baseline: SideInfo { label: baseline.label.clone(), runs: baseline.runs.len(), skipped: Vec::new() },
        others: Vec::new(),
        pairs: Vec::new(),
        unpaired: Vec::new(),
    };
    for side in others {
        let mut skipped = side.skipped.clone();
        let groups = group_side(side, key, &mut skipped);
        out.others.push(SideInfo { label: side.label.clone(), runs: side.runs.len(), skipped });
        let (pairs, unpaired) = pair_groups(&base_groups, &groups, key);
        for (i, j) in pairs {
            out.pairs.push(compare_pair(&base_groups[i], &groups[j], &baseline.label, &side.label, key));
        }
        // Each group with no partner, per other side: a baseline group missed by one side may
        // have paired with another.
        for (is_base, k, reason) in unpaired {
            let (g, label, against) = if is_base {
                (&base_groups[k], &baseline.label, &side.label)
            } else {
                (&groups[k], &side.label, &baseline.label)
            };
            out.unpaired.push(Unpaired {
                side: label.clone(),
                against: against.clone(),
                workload: g.workload.clone(),
                runs: g.runs.iter().map(|r| RunRef::of(r)).collect(),
                reason,
            });
        }
    }
    out.baseline.skipped = base_skipped;
    out
}

fn compare_pair(b: &Group, o: &Group, bname: &str, oname: &str, key: &[KeyField]) -> Pair {
    let (bu, ou) = (b.usable(), o.usable());
    let mut issues = Vec::new();
    // Runs left out: a rejected run's figures are never compared as if trusted.
    for (name, g, usable) in [(bname, b, &bu), (oname, o, &ou)] {
        for r in g.runs.iter().filter(|r| r.verdict != Verdict::Accepted) {
            let rr = RunRef::of(r);
            let level = if usable.is_empty() { Level::Refuse } else { Level::Warn };
            issues.push(Issue {
                code: if r.verdict == Verdict::Rejected { "run-rejected" } else { "run-unusable" },
                level,
                figures: if usable.is_empty() { Fig::COMPARED.to_vec() } else { Vec::new() },
                message: format!(
                    "{name}: {} is {}: its figures are left out{}",
                    rr.name(),
                    rr.excluded.unwrap_or_default(),
                    if usable.is_empty() { ", and no other run of this workload is usable" } else { "" }
                ),
            });
        }
    }
    // Key fields unknown on one side: paired on the others.
    let mut unknown = Vec::new();
    for ((f, x), (_, y)) in b.workload.fields().into_iter().zip(o.workload.fields()) {
        // (An absent rate pairs only with an absent one, and means "not set" as often.)
        if key.contains(&f) && f != KeyField::RequestRate && (x.is_none() || y.is_none()) {
            let which = match (x.is_none(), y.is_none()) {
                (true, true) => format!("{bname} and of {oname}"),
                (true, false) => bname.to_string(),
                _ => oname.to_string(),
            };
            unknown.push(format!("{} of {which}", f.name()));
        }
    }
    if !unknown.is_empty() {
        issues.push(Issue {
            code: "workload-unknown",
            level: Level::Warn,
            figures: Vec::new(),
            message: format!(
                "paired without knowing the {}: the only run group of the other side that fits",
                unknown.join(", ")
            ),
        });
    }
    // Workload fields left out of the key that differ.
    let (wb, wo) = (
        bu.first().or(b.runs.first()).map(|r| Workload::of(r)),
        ou.first().or(o.runs.first()).map(|r| Workload::of(r)),
    );
    if let (Some(wb), Some(wo)) = (wb, wo) {
        for ((f, x), (_, y)) in wb.fields().into_iter().zip(wo.fields()) {
            if !key.contains(&f) && x.is_some() && y.is_some() && x != y {
                issues.push(Issue {
                    code: "workload-differs",
                    level: Level::Warn,
                    figures: Vec::new(),
                    message: format!(
                        "the {} differs ({} in {bname}, {} in {oname}); it is not in --key",
                        f.name(),
                        x.unwrap_or_default(),
                        y.unwrap_or_default()
                    ),
                });
            }
        }
    }
    issues.extend(same_run_twice(&bu, bname));
    issues.extend(same_run_twice(&ou, oname));
    issues.extend(issues_of(&bu, &ou, bname, oname));

    let figures = Fig::COMPARED
        .iter()
        .map(|&fig| {
            let values = |runs: &[&Run]| Spread::of(&runs.iter().filter_map(|r| fig.value(r)).collect::<Vec<_>>());
            let (sb, so) = (values(&bu), values(&ou));
            let mut reasons = Vec::new();
            let mut outcome = Outcome::Compared;
            for i in issues.iter().filter(|i| i.figures.contains(&fig)) {
                reasons.push(format!("{}: {}", i.code, i.message));
                outcome = match (outcome, i.level) {
                    (_, Level::Refuse) | (Outcome::Refused, _) => Outcome::Refused,
                    _ => Outcome::Warned,
                };
            }
            for (name, s, runs) in [(bname, &sb, &bu), (oname, &so, &ou)] {
                if s.is_none() && !runs.is_empty() {
                    reasons.push(format!("missing: {name} does not give it{}", why_missing(fig, runs)));
                    if outcome != Outcome::Refused {
                        outcome = Outcome::Missing;
                    }
                } else if let Some(s) = s.as_ref().filter(|s| s.runs < runs.len()) {
                    reasons.push(format!("{name}: {} of {} runs give it", s.runs, runs.len()));
                }
            }
            let (ratio, within_spread) = match (&sb, &so, outcome) {
                (Some(x), Some(y), Outcome::Compared | Outcome::Warned) => {
                    let ratio = (x.median != 0.0).then(|| bench_normalize_core::number::round(y.median / x.median));
                    let within = (x.runs > 1 || y.runs > 1).then_some(x.min <= y.max && y.min <= x.max);
                    (ratio, within)
                }
                _ => (None, None),
            };
            FigureRow { figure: fig, baseline: sb, other: so, ratio, within_spread, outcome, reasons }
        })
        .collect();
    Pair {
        other: oname.to_string(),
        workload: b.workload.clone(),
        other_workload: (o.workload != b.workload).then(|| o.workload.clone()),
        baseline_runs: b.runs.iter().map(|r| RunRef::of(r)).collect(),
        other_runs: o.runs.iter().map(|r| RunRef::of(r)).collect(),
        figures,
        issues,
    }
}

fn issues_of(b: &[&Run], o: &[&Run], bname: &str, oname: &str) -> Vec<Issue> {
    if b.is_empty() || o.is_empty() {
        return Vec::new();
    }
    issues(b, o, bname, oname)
}

/// Why a side lacks a figure, from its first run, when the report says.
fn why_missing(fig: Fig, runs: &[&Run]) -> String {
    let r = runs[0];
    let why = match fig {
        Fig::Tpot => r.derived.tpot_ms.reason.clone(),
        Fig::PerUser => r.derived.undefined.get("per_user_decode_tok_per_s").cloned(),
        Fig::OutputThroughput => r.derived.undefined.get("output_tok_per_s").cloned(),
        Fig::E2eMean | Fig::E2eP50 if r.stat(reported::E2E_MS).is_none() => Some("no E2E latency".into()),
        Fig::ItlMean => Some("no ITL".into()),
        _ => None,
    };
    why.map(|w| format!(" ({w})")).unwrap_or_default()
}
