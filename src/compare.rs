//! `bench-normalize compare BASELINE OTHER...`: runs of two or more configurations lined up by
//! workload, their figures side by side with ratios to the baseline, and every difference in what
//! the figures *mean* named (docs/compare.md).
//!
//! * A **side** is one command-line argument (a file, or a directory read file by file): one
//!   configuration. Its runs are grouped by their **workload key** ([`Workload`]): runs with the
//!   same key are repeated runs of one configuration, summarised by median and min-max.
//! * Each OTHER side's groups are **paired** with the baseline's: exactly equal keys first, then a
//!   key with an unknown field pairs with the one group it fits, if only one ([`pair_groups`]).
//! * Each pair's **meaning checks** ([`issues`]) name what differs between the two sides' figures
//!   and decide, per figure, whether it is compared, compared with a warning, or refused (not
//!   compared, with the reason). A rejected or unusable run never feeds a figure.
//!
//! Every figure a run gives is read through one accessor function below ([`tpot`],
//! [`ttft`], ...), so a change in the report's shape is one place to change here.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::derive::show;
use crate::error::printable;
use crate::report::{E2eEnd, ItlPer, Run, StatKey, Status, TokenCount, TpotMethod, Verdict};
use crate::vocabulary::{reported, totals, workload};
use crate::{Error, ExitCode, Options};

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

/// E2E latency as measured; for the mean, the approximate derived one when the tool printed none
/// (`true` in the second place).
fn e2e(run: &Run, key: StatKey) -> Option<(f64, bool)> {
    if let Some(v) = run.stat(reported::E2E_MS).and_then(|s| s.get(key)) {
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
    run.stat(reported::LATENCY_PER_OUTPUT_TOKEN_MS).and_then(|s| s.mean())
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

fn check_failed(run: &Run, id: &str) -> Option<String> {
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
// The workload key

/// A field of the workload key (`--key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyField {
    Concurrency,
    RequestRate,
    InputLen,
    OutputLen,
    Model,
}

impl KeyField {
    pub const ALL: [KeyField; 5] =
        [KeyField::Concurrency, KeyField::RequestRate, KeyField::InputLen, KeyField::OutputLen, KeyField::Model];

    pub fn name(self) -> &'static str {
        match self {
            KeyField::Concurrency => "concurrency",
            KeyField::RequestRate => "request_rate",
            KeyField::InputLen => "input_len",
            KeyField::OutputLen => "output_len",
            KeyField::Model => "model",
        }
    }

    /// `concurrency`, `rate`/`request_rate`, `input`/`input_len`, `output`/`output_len`, `model`.
    pub fn parse(s: &str) -> Option<KeyField> {
        Some(match s.trim().replace('-', "_").as_str() {
            "concurrency" | "max_concurrency" => KeyField::Concurrency,
            "rate" | "request_rate" => KeyField::RequestRate,
            "input" | "input_len" => KeyField::InputLen,
            "output" | "output_len" => KeyField::OutputLen,
            "model" => KeyField::Model,
            _ => return None,
        })
    }

    /// A `--key` value: a comma-separated list of fields (at least one, none twice).
    pub fn parse_list(s: &str) -> Result<Vec<KeyField>, Error> {
        let mut v = Vec::new();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let f = KeyField::parse(part).ok_or_else(|| {
                Error::Usage(format!(
                    "--key: unknown field {:?}; the fields are concurrency, rate, input, output, model",
                    part.trim()
                ))
            })?;
            if !v.contains(&f) {
                v.push(f);
            }
        }
        if v.is_empty() {
            return Err(Error::Usage("--key: give at least one of concurrency, rate, input, output, model".into()));
        }
        v.sort();
        Ok(v)
    }
}

/// What a run was asked to do, as far as it says: the key runs are lined up by.
///
/// * `max_concurrency`: the client's cap, or the load step of a table of runs (`concurrent@4`,
///   `concurrency=4`);
/// * `request_rate`: the configured rate; absent when infinite or not stated (the two cannot be
///   told apart: a rate of `inf` is absent in the report), and absent matches only absent;
/// * `input_len`, `output_len`: the requested lengths, else the run's mean per request
///   (`totals.input_tokens / successful_requests`, rounded);
/// * `model`: the model id's last path component (`/models/m` and `m` are one model).
///
/// An absent field other than the rate is *unknown*: it pairs with any value, said as a warning.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Workload {
    pub max_concurrency: Option<u64>,
    pub request_rate: Option<f64>,
    pub input_len: Option<u64>,
    pub output_len: Option<u64>,
    pub model: Option<String>,
}

impl Workload {
    pub fn of(run: &Run) -> Workload {
        let per_request = |total: Option<f64>| match (total, successful(run)) {
            (Some(t), Some(r)) if r > 0.0 && t > 0.0 => Some((t / r).round() as u64),
            _ => None,
        };
        let concurrency = run.number(workload::MAX_CONCURRENCY).map(|c| c as u64).or_else(|| {
            let step = run.text(workload::STRATEGY)?;
            let n = step.strip_prefix("concurrent@").or_else(|| step.strip_prefix("concurrency="))?;
            n.trim().parse().ok()
        });
        Workload {
            max_concurrency: concurrency,
            request_rate: run.number(workload::REQUEST_RATE),
            input_len: run.number(workload::INPUT_LEN).map(|n| n as u64).or_else(|| per_request(input_tokens(run))),
            output_len: run.number(workload::OUTPUT_LEN).map(|n| n as u64).or_else(|| per_request(output_tokens(run))),
            model: run.text(workload::MODEL).map(|m| {
                let m = m.trim().trim_end_matches('/');
                m.rsplit('/').next().unwrap_or(m).to_string()
            }),
        }
    }

    /// Only the fields of `key`; the others absent.
    fn keyed(&self, key: &[KeyField]) -> Workload {
        let has = |f| key.contains(&f);
        Workload {
            max_concurrency: self.max_concurrency.filter(|_| has(KeyField::Concurrency)),
            request_rate: self.request_rate.filter(|_| has(KeyField::RequestRate)),
            input_len: self.input_len.filter(|_| has(KeyField::InputLen)),
            output_len: self.output_len.filter(|_| has(KeyField::OutputLen)),
            model: self.model.clone().filter(|_| has(KeyField::Model)),
        }
    }

    /// Each field as text (`None` when absent), in key order.
    fn fields(&self) -> [(KeyField, Option<String>); 5] {
        [
            (KeyField::Concurrency, self.max_concurrency.map(|c| c.to_string())),
            (KeyField::RequestRate, self.request_rate.map(show)),
            (KeyField::InputLen, self.input_len.map(|c| c.to_string())),
            (KeyField::OutputLen, self.output_len.map(|c| c.to_string())),
            (KeyField::Model, self.model.clone()),
        ]
    }

    /// For a person: `concurrency 4, rate not set, input 1024, output 512, model m`.
    pub fn describe(&self, key: &[KeyField]) -> String {
        let mut parts = Vec::new();
        for (f, v) in self.fields() {
            if !key.contains(&f) {
                continue;
            }
            let name = match f {
                KeyField::Concurrency => "concurrency",
                KeyField::RequestRate => "rate",
                KeyField::InputLen => "input",
                KeyField::OutputLen => "output",
                KeyField::Model => "model",
            };
            let v = match (f, v) {
                (KeyField::RequestRate, None) => "not set".to_string(),
                (KeyField::RequestRate, Some(v)) => format!("{v}/s"),
                (_, Some(v)) => v,
                (_, None) => "unknown".to_string(),
            };
            parts.push(format!("{name} {v}"));
        }
        parts.join(", ")
    }
}

/// Whether two keyed workloads may pair: every field equal, or (the rate aside) unknown on one
/// side. `Some(exact)`: `exact` when no field is unknown on either side.
fn fits(a: &Workload, b: &Workload, key: &[KeyField]) -> Option<bool> {
    let mut exact = true;
    for ((f, x), (_, y)) in a.fields().into_iter().zip(b.fields()) {
        if !key.contains(&f) {
            continue;
        }
        match (x, y) {
            (Some(x), Some(y)) if x != y => return None,
            (Some(_), Some(_)) => {}
            (None, None) if f == KeyField::RequestRate => {}
            (Some(_), None) | (None, Some(_)) if f == KeyField::RequestRate => return None,
            _ => exact = false,
        }
    }
    Some(exact)
}

// ------------------------------------------------------------------------------------------------
// Sides and groups

/// One command-line argument's runs: one configuration.
#[derive(Debug, Clone)]
pub struct Side {
    /// The argument as given.
    pub label: String,
    pub runs: Vec<Run>,
    /// Files of a directory with no benchmark result in them, and runs left out.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub input: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    pub reason: String,
}

/// Read one side: a file, or every file below a directory (sorted; hidden ones skipped). In a
/// directory, a file with no benchmark result in it (a README, a truth file: no result found, or
/// a document that cannot be read as one) is skipped and listed with the error;
/// any other error, and every error of a named file, is returned beside the side (the caller says
/// it; the exit code follows it).
pub fn read_side(arg: &Path, opts: &Options) -> (Side, Vec<Error>) {
    let label = arg.display().to_string();
    let mut side = Side { label: label.clone(), runs: Vec::new(), skipped: Vec::new() };
    let mut errors = Vec::new();
    let meta = match std::fs::metadata(arg) {
        Ok(m) => m,
        Err(source) => {
            errors.push(Error::Io { input: label, source });
            return (side, errors);
        }
    };
    let (files, in_dir) = if meta.is_dir() {
        let mut files = Vec::new();
        if let Err(source) = walk(arg, &mut files) {
            errors.push(Error::Io { input: label, source });
        }
        files.sort();
        (files, true)
    } else {
        (vec![arg.to_path_buf()], false)
    };
    for path in files {
        let name = path.display().to_string();
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(source) => {
                errors.push(Error::Io { input: name, source });
                continue;
            }
        };
        let mut runs = Vec::new();
        let mut diagnostics = Vec::new();
        let mut sink = Collect { runs: &mut runs, diagnostics: &mut diagnostics };
        let result = crate::normalize_file(file, &name, opts, &mut sink);
        match result {
            // A file of a directory with no result in it (a README, a truth file, a JSON document
            // of no known shape) is listed, not an error: a results directory holds other files.
            Err(e @ (Error::NoResult { .. } | Error::Parse { .. })) if in_dir && runs.is_empty() => {
                side.skipped.push(Skipped { input: name, block: None, reason: e.to_string() })
            }
            Err(e) => errors.push(e),
            Ok(_) => {}
        }
        errors.append(&mut diagnostics);
        side.runs.append(&mut runs);
    }
    (side, errors)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let ty = entry.file_type()?;
        if ty.is_dir() {
            walk(&path, files)?;
        } else if path.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

struct Collect<'a> {
    runs: &'a mut Vec<Run>,
    diagnostics: &'a mut Vec<Error>,
}

impl crate::Sink for Collect<'_> {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.runs.push(run);
        Ok(())
    }

    fn diagnostic(&mut self, error: Error) {
        self.diagnostics.push(error);
    }
}

/// A run as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    pub input: String,
    pub block: usize,
    pub verdict: Verdict,
    /// Why the run's figures are not used (rejected or unusable), with the failed rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
}

impl RunRef {
    fn of(run: &Run) -> RunRef {
        let failed: Vec<String> = run
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail && c.severity == crate::report::Severity::Error)
            .map(|c| format!("{}: {}", c.id, c.message))
            .collect();
        let excluded = match run.verdict {
            Verdict::Accepted => None,
            Verdict::Rejected => Some(format!("rejected ({})", failed.join("; "))),
            Verdict::Unusable => Some(format!("unusable ({})", failed.join("; "))),
        };
        RunRef { input: run.source.input.clone(), block: run.source.block, verdict: run.verdict, excluded }
    }

    fn name(&self) -> String {
        format!("{} #{}", self.input, self.block)
    }
}

/// Runs of one side with one workload key.
struct Group<'a> {
    workload: Workload,
    runs: Vec<&'a Run>,
}

impl Group<'_> {
    /// The runs whose figures may be used: accepted ones.
    fn usable(&self) -> Vec<&Run> {
        self.runs.iter().copied().filter(|r| r.verdict == Verdict::Accepted).collect()
    }
}

/// A summary line of a table of runs that repeats a step's full block printed before it (the
/// vllm-rs Sweep Summary): the step is already a run, so the line is not one more.
fn repeats_a_block(run: &Run) -> bool {
    run.source.parser.ends_with("sweep-summary")
}

fn group_side<'a>(side: &'a Side, key: &[KeyField], skipped: &mut Vec<Skipped>) -> Vec<Group<'a>> {
    let mut groups: Vec<Group> = Vec::new();
    for run in &side.runs {
        if repeats_a_block(run) {
            skipped.push(Skipped {
                input: run.source.input.clone(),
                block: Some(run.source.block),
                reason: "a summary line repeating a run's full block, which is compared instead".into(),
            });
            continue;
        }
        let w = Workload::of(run).keyed(key);
        match groups.iter_mut().find(|g| g.workload == w) {
            Some(g) => g.runs.push(run),
            None => groups.push(Group { workload: w, runs: vec![run] }),
        }
    }
    groups
}

/// Pairs of (baseline group, other group) indexes: exactly equal keys first, then a key with an
/// unknown field pairs with the one remaining group it fits. The unpaired ones get a reason.
/// A group left unpaired: whether it is the baseline's, its index, and why.
type Left = (bool, usize, String);

fn pair_groups(base: &[Group], other: &[Group], key: &[KeyField]) -> (Vec<(usize, usize)>, Vec<Left>) {
    let mut pairs = Vec::new();
    let mut used_b = vec![false; base.len()];
    let mut used_o = vec![false; other.len()];
    for (i, b) in base.iter().enumerate() {
        if let Some(j) =
            (0..other.len()).find(|&j| !used_o[j] && fits(&b.workload, &other[j].workload, key) == Some(true))
        {
            pairs.push((i, j));
            used_b[i] = true;
            used_o[j] = true;
        }
    }
    let mut unpaired = Vec::new();
    for (i, b) in base.iter().enumerate() {
        if used_b[i] {
            continue;
        }
        let fit: Vec<usize> =
            (0..other.len()).filter(|&j| !used_o[j] && fits(&b.workload, &other[j].workload, key).is_some()).collect();
        // The candidate must also have no other baseline group it could go with.
        if let [j] = fit[..] {
            let rivals = (0..base.len())
                .filter(|&k| k != i && !used_b[k] && fits(&base[k].workload, &other[j].workload, key).is_some())
                .count();
            if rivals == 0 {
                pairs.push((i, j));
                used_b[i] = true;
                used_o[j] = true;
                continue;
            }
        }
        if fit.len() > 1 {
            unpaired.push((
                true,
                i,
                format!(
                    "ambiguous: it fits {} workloads of the other side, which says less about its workload",
                    fit.len()
                ),
            ));
        }
    }
    for (i, b) in base.iter().enumerate() {
        if !used_b[i] && !unpaired.iter().any(|(is_base, k, _)| *is_base && *k == i) {
            unpaired.push((true, i, no_partner(&b.workload, other, key)));
        }
    }
    for (j, o) in other.iter().enumerate() {
        if !used_o[j] {
            unpaired.push((false, j, no_partner(&o.workload, base, key)));
        }
    }
    pairs.sort();
    (pairs, unpaired)
}

fn no_partner(w: &Workload, others: &[Group], key: &[KeyField]) -> String {
    if others.iter().any(|g| fits(w, &g.workload, key).is_some()) {
        "its workload fits more than one run group of the other side: no pair (name one of them)".into()
    } else {
        "no run of the other side has this workload".into()
    }
}

// ------------------------------------------------------------------------------------------------
// Figures compared

/// A figure in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Fig {
    #[serde(rename = "tpot_ms")]
    Tpot,
    #[serde(rename = "per_user_decode_tok_per_s")]
    PerUser,
    #[serde(rename = "output_tok_per_s")]
    OutputThroughput,
    #[serde(rename = "ttft_ms.p50")]
    TtftP50,
    #[serde(rename = "ttft_ms.p99")]
    TtftP99,
    #[serde(rename = "e2e_ms.mean")]
    E2eMean,
    #[serde(rename = "e2e_ms.p50")]
    E2eP50,
    #[serde(rename = "itl_ms.mean")]
    ItlMean,
}

impl Fig {
    pub const ALL: [Fig; 8] = [
        Fig::Tpot,
        Fig::PerUser,
        Fig::OutputThroughput,
        Fig::TtftP50,
        Fig::TtftP99,
        Fig::E2eMean,
        Fig::E2eP50,
        Fig::ItlMean,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Fig::Tpot => "tpot_ms",
            Fig::PerUser => "per_user_decode_tok_per_s",
            Fig::OutputThroughput => "output_tok_per_s",
            Fig::TtftP50 => "ttft_ms.p50",
            Fig::TtftP99 => "ttft_ms.p99",
            Fig::E2eMean => "e2e_ms.mean",
            Fig::E2eP50 => "e2e_ms.p50",
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
            Fig::ItlMean => "ITL mean, as printed (ms)",
        }
    }

    /// Whether a larger value is better (throughputs) or worse (latencies).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Fig::PerUser | Fig::OutputThroughput)
    }

    fn value(self, run: &Run) -> Option<f64> {
        match self {
            Fig::Tpot => tpot(run),
            Fig::PerUser => per_user(run),
            Fig::OutputThroughput => output_throughput(run),
            Fig::TtftP50 => ttft(run, StatKey::P(50.0)),
            Fig::TtftP99 => ttft(run, StatKey::P(99.0)),
            Fig::E2eMean => e2e(run, StatKey::Mean).map(|(v, _)| v),
            Fig::E2eP50 => e2e(run, StatKey::P(50.0)).map(|(v, _)| v),
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
            crate::derive::round((v[n / 2 - 1] + v[n / 2]) / 2.0).clamp(v[n / 2 - 1], v[n / 2])
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
// Meaning checks

const TOKEN_FIGS: [Fig; 3] = [Fig::Tpot, Fig::PerUser, Fig::OutputThroughput];
const LATENCY_FIGS: [Fig; 6] = [Fig::Tpot, Fig::PerUser, Fig::TtftP50, Fig::TtftP99, Fig::E2eMean, Fig::E2eP50];

/// What a run's ITL is timed over: a token, or a chunk of about `k` tokens (`None`: unknown).
#[derive(Debug, Clone, Copy, PartialEq)]
enum ItlUnit {
    Token,
    /// ITL timed per chunk and chunks carry one token: per token in effect.
    ChunkOfOne,
    Chunk(Option<f64>),
}

/// Tokens per chunk up to this count as one (rounding of the printed ITL and TPOT).
const ONE_TOKEN_CHUNK: f64 = 1.1;
/// Two per-chunk ITLs compare only when their chunks carry this close a number of tokens.
const SAME_CHUNK_SIZE: f64 = 0.1;
/// A token count corroborated by the re-tokenized one within this fraction.
const RETOKENIZED_AGREES: f64 = 0.01;

fn itl_unit(run: &Run) -> Option<ItlUnit> {
    itl_mean(run)?;
    Some(match itl_per(run)? {
        ItlPer::Token => ItlUnit::Token,
        ItlPer::Chunk => match tokens_per_chunk(run) {
            Some(k) if k <= ONE_TOKEN_CHUNK => ItlUnit::ChunkOfOne,
            k => ItlUnit::Chunk(k),
        },
    })
}

fn describe_itl(u: ItlUnit) -> String {
    match u {
        ItlUnit::Token => "per token".into(),
        ItlUnit::ChunkOfOne => "per streamed chunk of one token".into(),
        ItlUnit::Chunk(Some(k)) => format!("per streamed chunk of ~{} tokens", show(k)),
        ItlUnit::Chunk(None) => "per streamed chunk (tokens per chunk unknown: no TPOT to divide by)".into(),
    }
}

fn token_source_name(t: Option<TokenCount>) -> &'static str {
    match t {
        Some(TokenCount::Server) => "the server's usage counts",
        Some(TokenCount::ServerOrRequested) => "the server's counts when sent, else the requested lengths",
        Some(TokenCount::Requested) => "the requested lengths, whatever was generated",
        Some(TokenCount::Retokenized) => "the client re-tokenizing the text",
        None => "an unknown source",
    }
}

/// Whether a run's output token total is confirmed by its own re-tokenized total.
fn retokenized_agrees(run: &Run) -> bool {
    match (output_tokens(run), output_tokens_retokenized(run)) {
        (Some(n), Some(r)) if n > 0.0 => ((r - n) / n).abs() <= RETOKENIZED_AGREES,
        _ => false,
    }
}

/// The meaning checks of one pair: `b` the baseline's runs, `o` the other's (usable ones), by
/// side name.
fn issues(b: &[&Run], o: &[&Run], bname: &str, oname: &str) -> Vec<Issue> {
    let mut out = Vec::new();
    let sides: [(&str, &[&Run]); 2] = [(bname, b), (oname, o)];

    // ITL: per token against per chunk of several tokens is no comparison; nor is an ITL whose
    // timing the run does not state.
    for (name, runs) in sides {
        for r in runs.iter().filter(|r| itl_mean(r).is_some() && itl_per(r).is_none()) {
            out.push(Issue {
                code: "itl-meaning",
                level: Level::Refuse,
                figures: vec![Fig::ItlMean],
                message: format!(
                    "{name} ({}): it is not known whether its ITL is timed per token or per streamed chunk",
                    RunRef::of(r).name()
                ),
            });
        }
    }
    let units: Vec<Vec<ItlUnit>> =
        sides.iter().map(|(_, runs)| runs.iter().filter_map(|r| itl_unit(r)).collect()).collect();
    let per_token = |u: &ItlUnit| matches!(u, ItlUnit::Token | ItlUnit::ChunkOfOne);
    let mut itl_refused = false;
    for (i, (name, _)) in sides.iter().enumerate() {
        let u = &units[i];
        if u.iter().any(per_token) && u.iter().any(|x| !per_token(x)) {
            itl_refused = true;
            out.push(Issue {
                code: "itl-meaning",
                level: Level::Refuse,
                figures: vec![Fig::ItlMean],
                message: format!("the runs of {name} time ITL differently (per token and per chunk of several tokens)"),
            });
        }
    }
    if !itl_refused && !units[0].is_empty() && !units[1].is_empty() {
        let (ub, uo) = (units[0][0], units[1][0]);
        let chunk_sizes = |u: &[ItlUnit]| -> Vec<Option<f64>> {
            u.iter().map(|x| if let ItlUnit::Chunk(k) = x { *k } else { Some(1.0) }).collect()
        };
        if per_token(&ub) != per_token(&uo) {
            out.push(Issue {
                code: "itl-meaning",
                level: Level::Refuse,
                figures: vec![Fig::ItlMean],
                message: format!(
                    "ITL is timed {} in {bname} and {} in {oname}: a chunk gap is not a per-token latency \
                     (compare TPOT instead)",
                    describe_itl(ub),
                    describe_itl(uo)
                ),
            });
        } else if !per_token(&ub) {
            let all: Vec<Option<f64>> = chunk_sizes(&units[0]).into_iter().chain(chunk_sizes(&units[1])).collect();
            let known: Vec<f64> = all.iter().flatten().copied().collect();
            let (lo, hi) = known.iter().fold((f64::INFINITY, 0.0f64), |(l, h), &k| (l.min(k), h.max(k)));
            if known.len() < all.len() || hi > lo * (1.0 + SAME_CHUNK_SIZE) {
                out.push(Issue {
                    code: "itl-meaning",
                    level: Level::Refuse,
                    figures: vec![Fig::ItlMean],
                    message: format!(
                        "ITL is timed per streamed chunk on both sides, but the chunks differ ({} in {bname}, {} in \
                         {oname}): the gaps are not over the same number of tokens (compare TPOT instead)",
                        describe_itl(ub),
                        describe_itl(uo)
                    ),
                });
            } else {
                out.push(Issue {
                    code: "itl-meaning",
                    level: Level::Warn,
                    figures: vec![Fig::ItlMean],
                    message: format!(
                        "ITL is timed per streamed chunk of ~{} tokens on both sides: it is a chunk gap, not a \
                         per-token latency",
                        show(lo)
                    ),
                });
            }
        }
    }

    // TPOT: a side that has only a TTFT-inclusive per-token latency has no TPOT to compare.
    for (name, runs) in sides {
        for r in runs.iter().filter(|r| tpot(r).is_none()) {
            if let Some(v) = ttft_inclusive_per_token(r) {
                out.push(Issue {
                    code: "tpot-includes-ttft",
                    level: Level::Refuse,
                    figures: vec![Fig::Tpot, Fig::PerUser],
                    message: format!(
                        "{name} ({}) gives only a per-output-token latency that includes TTFT ({} ms, guidellm's \
                         and llmperf's meaning of TPOT), not a TPOT; and not enough to derive one",
                        RunRef::of(r).name(),
                        show(v)
                    ),
                });
            }
        }
        for r in runs.iter().filter(|r| tpot(r).is_some()) {
            if let Some(why) = tpot_approximate(r) {
                out.push(Issue {
                    code: "tpot-approximate",
                    level: Level::Warn,
                    figures: vec![Fig::Tpot, Fig::PerUser],
                    message: format!("{name} ({}): the TPOT is approximate: {why}", RunRef::of(r).name()),
                });
            }
            if let Some(why) = tpot_unverified(r) {
                let method = tpot_method(r).map_or("unknown", TpotMethod::as_str);
                out.push(Issue {
                    code: "tpot-unverified",
                    level: Level::Warn,
                    figures: vec![Fig::Tpot, Fig::PerUser],
                    message: format!(
                        "{name} ({}): the TPOT is the tool's claim (method {method}), not derived from E2E \
                         latency: {why}",
                        RunRef::of(r).name()
                    ),
                });
            }
        }
    }

    // Output token counts: a count a run's own check contradicts refuses; different sources warn.
    for (name, runs) in sides {
        for r in runs {
            if let Some(msg) = check_failed(r, "token-count-source") {
                out.push(Issue {
                    code: "token-count-source",
                    level: Level::Refuse,
                    figures: TOKEN_FIGS.to_vec(),
                    message: format!(
                        "{name} ({}): its output token count is contradicted by its own figures (token-count-source: \
                         {msg})",
                        RunRef::of(r).name()
                    ),
                });
            }
        }
    }
    let sources: Vec<BTreeSet<String>> = sides
        .iter()
        .map(|(_, runs)| runs.iter().map(|r| format!("{:?}", token_source(r))).collect::<BTreeSet<_>>())
        .collect();
    let corroborated = |runs: &[&Run]| {
        runs.iter().all(|r| matches!(token_source(r), Some(TokenCount::Server)) || retokenized_agrees(r))
    };
    let (sb, so) = (b.first().and_then(|r| token_source(r)), o.first().and_then(|r| token_source(r)));
    let differ = sources[0] != sources[1] || sources[0].len() > 1 || sources[1].len() > 1;
    let both_corroborated = corroborated(b) && corroborated(o);
    if !b.is_empty() && !o.is_empty() && differ && !both_corroborated {
        out.push(Issue {
            code: "token-count-source",
            level: Level::Warn,
            figures: TOKEN_FIGS.to_vec(),
            message: format!(
                "output tokens are counted from {} in {bname} and from {} in {oname}; the counts agree only when \
                 every request generated what was asked (ignore_eos)",
                token_source_name(sb),
                token_source_name(so)
            ),
        });
    }

    // Failed requests: throughput over a different set of completed requests is no comparison.
    let fails: Vec<Vec<Option<(u64, &str)>>> =
        sides.iter().map(|(_, runs)| runs.iter().map(|r| failed(r)).collect()).collect();
    let known = |v: &[Option<(u64, &str)>]| -> Option<BTreeSet<u64>> { v.iter().map(|f| f.map(|(n, _)| n)).collect() };
    match (known(&fails[0]), known(&fails[1])) {
        (Some(fb), Some(fo)) if !fails[0].is_empty() && !fails[1].is_empty() && fb != fo => {
            let list = |s: &BTreeSet<u64>| s.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            let message = format!(
                "{} failed request(s) in {bname}, {} in {oname}: the figures are over different sets of completed \
                 requests",
                list(&fb),
                list(&fo)
            );
            out.push(Issue {
                code: "failed-requests",
                level: Level::Refuse,
                figures: vec![Fig::OutputThroughput],
                message: format!("{message}, and a failed request frees its slot early"),
            });
            out.push(Issue { code: "failed-requests", level: Level::Warn, figures: LATENCY_FIGS.to_vec(), message });
        }
        (Some(_), Some(_)) => {}
        _ if !b.is_empty() && !o.is_empty() => {
            let unknown: Vec<&str> =
                sides.iter().zip(&fails).filter(|(_, f)| f.iter().any(Option::is_none)).map(|((n, _), _)| *n).collect();
            out.push(Issue {
                code: "failed-requests",
                level: Level::Warn,
                figures: vec![Fig::OutputThroughput],
                message: format!(
                    "{} does not say how many requests failed: the throughputs may be over different numbers of \
                     requests",
                    unknown.join(" and ")
                ),
            });
        }
        _ => {}
    }

    // E2E: where a request's latency stops, and an E2E derived rather than measured.
    let ends: Vec<BTreeSet<String>> = sides
        .iter()
        .map(|(_, runs)| runs.iter().filter_map(|r| e2e_end(r).map(|e| format!("{e:?}"))).collect())
        .collect();
    if !ends[0].is_empty() && !ends[1].is_empty() && (ends[0] != ends[1] || ends[0].len() > 1) {
        let name = |runs: &[&Run]| match runs.iter().find_map(|r| e2e_end(r)) {
            Some(E2eEnd::LastChunk) => "at the last token chunk",
            Some(E2eEnd::DoneLine) => "at the data: [DONE] line",
            None => "at an unknown point",
        };
        out.push(Issue {
            code: "e2e-end",
            level: Level::Warn,
            figures: vec![Fig::E2eMean, Fig::E2eP50],
            message: format!(
                "E2E latency ends {} in {bname} and {} in {oname} (a few ms per request)",
                name(b),
                name(o)
            ),
        });
    }
    for (name, runs) in sides {
        for r in runs.iter().filter(|r| e2e(r, StatKey::Mean).is_some_and(|(_, approx)| approx)) {
            out.push(Issue {
                code: "e2e-approximate",
                level: Level::Warn,
                figures: vec![Fig::E2eMean],
                message: format!(
                    "{name} ({}) printed no E2E latency: its mean is derived (TTFT + (n - 1) x TPOT), not measured",
                    RunRef::of(r).name()
                ),
            });
        }
    }
    out
}

/// Runs of one side that look like the same run read twice (its log and its result file, or one
/// file given twice): same requests, tokens and duration.
fn same_run_twice(runs: &[&Run], name: &str) -> Vec<Issue> {
    let mut out = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        for c in &runs[i + 1..] {
            let same = |x: Option<f64>, y: Option<f64>, tol: f64| match (x, y) {
                (Some(x), Some(y)) => (x - y).abs() <= tol * x.abs().max(y.abs()),
                _ => false,
            };
            if same(successful(a), successful(c), 0.0)
                && same(output_tokens(a), output_tokens(c), 0.0)
                && same(duration(a), duration(c), 0.001)
                && same(ttft(a, StatKey::Mean), ttft(c, StatKey::Mean), 0.001)
            {
                out.push(Issue {
                    code: "same-run-twice",
                    level: Level::Warn,
                    figures: Vec::new(),
                    message: format!(
                        "{name}: {} and {} look like one run read twice (same requests, tokens, duration and TTFT): \
                         it counts twice in the median and the spread",
                        RunRef::of(a).name(),
                        RunRef::of(c).name()
                    ),
                });
            }
        }
    }
    out
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
                figures: if usable.is_empty() { Fig::ALL.to_vec() } else { Vec::new() },
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

    let figures = Fig::ALL
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
                    let ratio = (x.median != 0.0).then(|| crate::derive::round(y.median / x.median));
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

// ------------------------------------------------------------------------------------------------
// Output

fn cell(s: Option<&Spread>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.runs == 1 => show(s.median),
        Some(s) => format!("{} ({}-{}, n={})", show(s.median), show(s.min), show(s.max), s.runs),
    }
}

fn ratio_cell(r: &FigureRow) -> String {
    match (r.outcome, r.ratio) {
        (Outcome::Refused, _) => "refused".into(),
        (Outcome::Missing, _) => "-".into(),
        (_, Some(x)) => format!("{x:.3}"),
        (_, None) => "-".into(),
    }
}

fn note_cell(r: &FigureRow, marks: &[usize]) -> String {
    let mut parts = Vec::new();
    match r.within_spread {
        Some(true) => parts.push("within spread".to_string()),
        Some(false) => parts.push("beyond spread".to_string()),
        None => {}
    }
    if r.outcome == Outcome::Warned {
        parts.push("warning".into());
    }
    if !marks.is_empty() {
        parts.push(marks.iter().map(|m| format!("[{m}]")).collect::<String>());
    }
    parts.join(" ")
}

/// Footnotes of a pair: each reason once, numbered; per figure the numbers of its reasons.
fn footnotes(p: &Pair) -> (Vec<String>, Vec<Vec<usize>>) {
    let mut notes: Vec<String> = Vec::new();
    let mut marks = Vec::new();
    for r in &p.figures {
        let mut m = Vec::new();
        for reason in &r.reasons {
            let n = match notes.iter().position(|x| x == reason) {
                Some(i) => i + 1,
                None => {
                    notes.push(reason.clone());
                    notes.len()
                }
            };
            m.push(n);
        }
        marks.push(m);
    }
    (notes, marks)
}

/// What a cell `median (min-max, n=N)` and the spread notes mean.
const SPREAD_LEGEND: &str = "repeated runs: median (min-max, n=runs); \"within spread\" when the two sides' \
                             min-max ranges overlap, \"beyond spread\" when they do not";

fn has_spread(p: &Pair) -> bool {
    p.figures.iter().any(|r| r.within_spread.is_some())
}

fn pair_heading(p: &Pair, key: &[KeyField]) -> String {
    match &p.other_workload {
        Some(o) => format!("{} (other side: {})", p.workload.describe(key), o.describe(key)),
        None => p.workload.describe(key),
    }
}

fn runs_list(runs: &[RunRef]) -> String {
    runs.iter()
        .map(|r| match &r.excluded {
            Some(_) => format!("{} ({})", r.name(), r.verdict.as_str()),
            None => r.name(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The comparison for people: per pair a table (figure, baseline, other, ratio, note), its
/// footnotes, then the issues that touch no figure and the runs with no partner. Text from the
/// inputs goes through [`printable`].
pub fn table(c: &Comparison, color: bool) -> String {
    use comfy_table::{Attribute, Cell, CellAlignment, Color, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
    let mut s = String::new();
    let _ = writeln!(s, "baseline: {}", printable(&c.baseline.label));
    for (i, o) in c.others.iter().enumerate() {
        let _ = writeln!(s, "other {}: {}", i + 1, printable(&o.label));
    }
    for p in &c.pairs {
        let idx = c.others.iter().position(|o| o.label == p.other).map_or(0, |i| i + 1);
        let _ = writeln!(s, "\nother {idx} vs baseline: {}", printable(&pair_heading(p, &c.key)));
        let _ = writeln!(s, "  baseline runs: {}", printable(&runs_list(&p.baseline_runs)));
        let _ = writeln!(s, "  other runs:    {}", printable(&runs_list(&p.other_runs)));
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
        if color {
            t.enforce_styling();
        } else {
            t.force_no_tty();
        }
        t.set_header(
            ["figure", "baseline", &format!("other {idx}"), "ratio", "note"]
                .map(|h| Cell::new(h).add_attribute(Attribute::Bold)),
        );
        let (notes, marks) = footnotes(p);
        for (r, m) in p.figures.iter().zip(&marks) {
            let ratio = Cell::new(ratio_cell(r)).set_alignment(CellAlignment::Right);
            let ratio = match r.outcome {
                Outcome::Refused => ratio.fg(Color::Red).add_attribute(Attribute::Bold),
                Outcome::Warned => ratio.fg(Color::Yellow),
                _ => ratio,
            };
            t.add_row(vec![
                Cell::new(r.figure.label()),
                Cell::new(cell(r.baseline.as_ref())).set_alignment(CellAlignment::Right),
                Cell::new(cell(r.other.as_ref())).set_alignment(CellAlignment::Right),
                ratio,
                Cell::new(note_cell(r, m)),
            ]);
        }
        let _ = writeln!(s, "{t}");
        if has_spread(p) {
            let _ = writeln!(s, "  {SPREAD_LEGEND}");
        }
        for (i, n) in notes.iter().enumerate() {
            let _ = writeln!(s, "  [{}] {}", i + 1, printable(n));
        }
        for i in p.issues.iter().filter(|i| i.figures.is_empty()) {
            let _ = writeln!(s, "  warning: {}: {}", i.code, printable(&i.message));
        }
    }
    if !c.unpaired.is_empty() {
        let _ = writeln!(s, "\nno partner:");
        for u in &c.unpaired {
            let _ = writeln!(
                s,
                "  {}: {} [{}] vs {}: {}",
                printable(&u.side),
                printable(&u.workload.describe(&c.key)),
                printable(&runs_list(&u.runs)),
                printable(&u.against),
                printable(&u.reason)
            );
        }
    }
    skipped_lines(c, &mut s, |t| printable(t).into_owned());
    if c.pairs.is_empty() {
        let _ = writeln!(s, "\nnothing to compare: no workload of the baseline has a partner");
    }
    s
}

fn skipped_lines(c: &Comparison, s: &mut String, esc: impl Fn(&str) -> String) {
    let all: Vec<&Skipped> = std::iter::once(&c.baseline).chain(&c.others).flat_map(|side| &side.skipped).collect();
    if all.is_empty() {
        return;
    }
    let _ = writeln!(s, "\nnot compared:");
    for k in all {
        let at = match k.block {
            Some(b) => format!("{} #{b}", k.input),
            None => k.input.clone(),
        };
        let _ = writeln!(s, "- {}: {}", esc(&at), esc(&k.reason));
    }
}

/// Text for a Markdown table cell or line: control characters escaped, `|` and the characters
/// Markdown would read as markup escaped with a backslash.
fn md(text: &str) -> String {
    let mut out = String::new();
    for ch in printable(text).chars() {
        if matches!(ch, '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// The comparison as Markdown for a pull request: per pair a heading, a pipe table and its
/// footnotes as a list.
pub fn markdown(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "**Baseline:** {}  ", md(&c.baseline.label));
    for (i, o) in c.others.iter().enumerate() {
        let _ = writeln!(s, "**Other {}:** {}  ", i + 1, md(&o.label));
    }
    let _ = writeln!(s, "Runs lined up by {}.", c.key.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "));
    for p in &c.pairs {
        let idx = c.others.iter().position(|o| o.label == p.other).map_or(0, |i| i + 1);
        let _ = writeln!(s, "\n#### Other {idx} vs baseline: {}\n", md(&pair_heading(p, &c.key)));
        let _ = writeln!(s, "Baseline runs: {}  ", md(&runs_list(&p.baseline_runs)));
        let _ = writeln!(s, "Other runs: {}\n", md(&runs_list(&p.other_runs)));
        let _ = writeln!(s, "| figure | baseline | other {idx} | ratio | note |");
        let _ = writeln!(s, "|---|--:|--:|--:|---|");
        let (notes, marks) = footnotes(p);
        for (r, m) in p.figures.iter().zip(&marks) {
            let ratio = match r.outcome {
                Outcome::Refused => "**refused**".to_string(),
                _ => ratio_cell(r),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                r.figure.label(),
                md(&cell(r.baseline.as_ref())),
                md(&cell(r.other.as_ref())),
                ratio,
                note_cell(r, m)
            );
        }
        if has_spread(p) {
            let _ = writeln!(s, "\n{SPREAD_LEGEND}");
        }
        if !notes.is_empty() || p.issues.iter().any(|i| i.figures.is_empty()) {
            s.push('\n');
        }
        for (i, n) in notes.iter().enumerate() {
            let _ = writeln!(s, "{}. {}", i + 1, md(n));
        }
        for i in p.issues.iter().filter(|i| i.figures.is_empty()) {
            let _ = writeln!(s, "- warning: {}: {}", i.code, md(&i.message));
        }
    }
    if !c.unpaired.is_empty() {
        let _ = writeln!(s, "\n**No partner:**\n");
        for u in &c.unpaired {
            let _ = writeln!(
                s,
                "- {}: {} ({}) vs {}: {}",
                md(&u.side),
                md(&u.workload.describe(&c.key)),
                md(&runs_list(&u.runs)),
                md(&u.against),
                md(&u.reason)
            );
        }
    }
    skipped_lines(c, &mut s, md);
    if c.pairs.is_empty() {
        let _ = writeln!(s, "\nNothing to compare: no workload of the baseline has a partner.");
    }
    s
}
