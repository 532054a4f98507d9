//! `bench-normalize aggregate FILES...`: repetitions of one configuration summarized honestly
//! (docs/store.md, "Repetitions"). A feature on top of the library, outside the data path.
//!
//! * Every repetition is read and validated as `bench-normalize FILE` reads it; a rejected or
//!   unusable one is **excluded and named**, never averaged in.
//! * The accepted runs are grouped by what makes them repetitions of one configuration: the tool,
//!   the definition that read them, the semantics their figures have (ITL per chunk or per token,
//!   where E2E ends, ...) and the workload key `compare` and the store use (and, for stored
//!   runs, their labels). Runs whose figures mean different things are never in one group.
//! * Per figure: each run's own value, their median, mean, sample standard deviation, coefficient
//!   of variation and a t-based confidence interval of the mean (as AIPerf reports repeated runs).
//!   When every run of a group kept its per-request arrays (result files), TTFT, E2E and TPOT are
//!   also **pooled over the requests**: percentiles of all requests together, and TPOT derived
//!   from the pooled requests exactly as each run's own is (by the derive stage).
//! * The document says what it is (`"kind": "aggregate"`): it has no `runs`, so no reader of a
//!   run's report takes it for one.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::compare::{Fig, WorkloadKey};
use crate::stats;
use bench_normalize_core::ExitCode;
use bench_normalize_core::derive::percentile;
use bench_normalize_core::error::printable;
use bench_normalize_core::number::{round, show};
use bench_normalize_core::report::{Requests, Run, Semantics, Verdict};

/// Version of the document `aggregate --format json` writes.
pub const AGGREGATE_VERSION: u32 = 1;

/// How a figure's `value` was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Over the requests of every run together.
    PooledRequests,
    /// The median of the runs' own figures.
    MedianOfRuns,
}

/// A confidence interval of the mean of the runs' figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    pub level: f64,
    pub low: f64,
    pub high: f64,
}

/// One figure of a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub figure: Fig,
    /// The summary value: pooled over requests when the group allows it, else the median.
    pub value: f64,
    pub method: Method,
    /// How many runs gave the figure, and their values (in the order read).
    pub runs: usize,
    pub values: Vec<f64>,
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1); null for one run.
    pub sd: Option<f64>,
    /// Coefficient of variation, sd / mean; null for one run or a zero mean.
    pub cv: Option<f64>,
    /// The t-based interval of the mean; null for one run.
    pub ci: Option<Interval>,
    /// Requests pooled, for a pooled figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooled_requests: Option<usize>,
}

/// A run, named.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    pub input: String,
    pub block: usize,
}

/// A run left out, with why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excluded {
    pub input: String,
    pub block: usize,
    pub verdict: Verdict,
    pub reason: String,
}

/// The repetitions of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub tool: String,
    pub parser: String,
    pub semantics: Semantics,
    pub workload: WorkloadKey,
    /// The labels the runs were stored with (`aggregate --from-store`): part of a configuration.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    pub runs: Vec<RunRef>,
    /// Why figures are not pooled over requests (absent when they are).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_pooled: Option<String>,
    pub figures: Vec<Figure>,
}

/// The whole summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aggregate {
    pub aggregate_version: u32,
    /// Always `aggregate`: this is a summary of repetitions, not a run's report.
    pub kind: &'static str,
    pub confidence: f64,
    pub groups: Vec<Group>,
    pub excluded: Vec<Excluded>,
}

impl Aggregate {
    /// 1: a repetition was rejected (excluded); 3: one was unusable, or no group at all.
    pub fn exit_code(&self) -> ExitCode {
        let mut code = if self.groups.is_empty() { ExitCode::NoResult } else { ExitCode::Ok };
        for e in &self.excluded {
            code = code.max(match e.verdict {
                Verdict::Rejected => ExitCode::Rejected,
                _ => ExitCode::NoResult,
            });
        }
        code
    }
}

/// Why a run is left out: its failed checks (info ones aside).
fn reason(run: &Run) -> String {
    match run.failures() {
        failed if failed.is_empty() => "no derived TPOT could be checked".into(),
        failed => failed,
    }
}

/// Summarize `runs` (each already read and validated) at the confidence `level` (0 < level < 1).
pub fn aggregate(runs: &[Run], level: f64) -> Aggregate {
    aggregate_labelled(runs, &[], level)
}

/// [`aggregate`], each run with the labels it was stored with (`labels[i]` for `runs[i]`; none
/// past the end): runs with other labels are other configurations, never one group.
pub fn aggregate_labelled(runs: &[Run], labels: &[BTreeMap<String, String>], level: f64) -> Aggregate {
    let mut groups: Vec<(Group, Vec<&Run>)> = Vec::new();
    let mut excluded = Vec::new();
    let none = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        let labelled = labels.get(i).unwrap_or(&none);
        if run.verdict != Verdict::Accepted {
            excluded.push(Excluded {
                input: run.source.input.clone(),
                block: run.source.block,
                verdict: run.verdict,
                reason: reason(run),
            });
            continue;
        }
        let key = WorkloadKey::of(run);
        let same = |g: &Group| {
            g.tool == run.source.tool
                && g.parser == run.source.parser
                && g.semantics == run.source.semantics
                && g.workload == key
                && g.labels == *labelled
        };
        let at = match groups.iter().position(|(g, _)| same(g)) {
            Some(i) => i,
            None => {
                groups.push((
                    Group {
                        tool: run.source.tool.clone(),
                        parser: run.source.parser.clone(),
                        semantics: run.source.semantics.clone(),
                        workload: key,
                        labels: labelled.clone(),
                        runs: Vec::new(),
                        not_pooled: None,
                        figures: Vec::new(),
                    },
                    Vec::new(),
                ));
                groups.len() - 1
            }
        };
        groups[at].0.runs.push(RunRef { input: run.source.input.clone(), block: run.source.block });
        groups[at].1.push(run);
    }
    let groups = groups
        .into_iter()
        .map(|(mut g, members)| {
            let pooled = Pooled::of(&members);
            if let Err(why) = &pooled {
                g.not_pooled = Some(why.clone());
            }
            g.figures = Fig::AGGREGATED
                .iter()
                .filter_map(|&f| figure(f, &members, pooled.as_ref().ok(), &g.semantics, level))
                .collect();
            g
        })
        .collect();
    Aggregate { aggregate_version: AGGREGATE_VERSION, kind: "aggregate", confidence: level, groups, excluded }
}

/// The requests of every run of a group, side by side: successful ones with a finite TTFT,
/// output length and E2E latency (from the latency list, else TTFT plus the sum of gaps), as
/// each run's own derivation takes them.
struct Pooled {
    ttft: Vec<f64>,
    e2e: Vec<f64>,
    out: Vec<f64>,
}

impl Pooled {
    fn of(runs: &[&Run]) -> Result<Pooled, String> {
        let mut p = Pooled { ttft: Vec::new(), e2e: Vec::new(), out: Vec::new() };
        for run in runs {
            let Some(req) = run.requests.as_deref() else {
                return Err(format!(
                    "{}#{} has no per-request arrays (only a result file with per-request details has them)",
                    run.source.input, run.source.block
                ));
            };
            p.add(req);
        }
        if p.ttft.is_empty() {
            return Err("no successful request with a TTFT, an output length and an E2E latency".into());
        }
        Ok(p)
    }

    fn add(&mut self, req: &Requests) {
        for i in 0..req.output_len.len() {
            if req.failed.as_ref().is_some_and(|f| f[i]) {
                continue;
            }
            let Some((ttft, out, e2e)) = bench_normalize_core::derive::request_times(req, i) else { continue };
            self.ttft.push(ttft);
            self.e2e.push(e2e);
            self.out.push(out);
        }
    }

    /// The pooled value of `f`, when it is one requests give.
    fn value(&self, f: Fig, semantics: &Semantics) -> Option<f64> {
        let sorted = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let tpot = || {
            let req = Requests {
                ttft_ms: self.ttft.iter().copied().map(Some).collect(),
                latency_ms: Some(self.e2e.iter().copied().map(Some).collect()),
                output_len: self.out.iter().copied().map(Some).collect(),
                ..Requests::default()
            };
            bench_normalize_core::derive::per_request_tpot(&req, semantics.itl)?.mean.filter(|t| *t > 0.0)
        };
        let v = match f {
            Fig::Tpot => tpot()?,
            Fig::PerUser => 1000.0 / tpot()?,
            Fig::TtftMean => mean(&self.ttft),
            Fig::TtftP50 => percentile(&sorted(&self.ttft), 50.0),
            Fig::TtftP99 => percentile(&sorted(&self.ttft), 99.0),
            Fig::E2eMean => mean(&self.e2e),
            Fig::E2eP99 => percentile(&sorted(&self.e2e), 99.0),
            // Not pooled over requests: the runs' own figures are summarized.
            Fig::OutputThroughput | Fig::RequestThroughput | Fig::E2eP50 | Fig::ItlMean => return None,
        };
        Some(round(v))
    }
}

/// The quantile of Student's t with `df` degrees of freedom at two-sided level `level`: the `t`
/// with `P(|T| > t) = 1 - level`, by bisection on the distribution ([`stats::t_two_sided`]).
pub fn t_quantile(level: f64, df: f64) -> f64 {
    let alpha = 1.0 - level;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while stats::t_two_sided(hi, df) > alpha && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if stats::t_two_sided(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

fn figure(f: Fig, runs: &[&Run], pooled: Option<&Pooled>, semantics: &Semantics, level: f64) -> Option<Figure> {
    let values: Vec<f64> = runs.iter().filter_map(|r| f.value(r)).filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let (mean, var) = stats::mean_var(&values)?;
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    let median = percentile(&sorted, 50.0);
    let sd = (n > 1).then(|| var.sqrt());
    let cv = sd.filter(|_| mean != 0.0).map(|s| round(s / mean.abs()));
    let ci = sd.map(|s| {
        let half = t_quantile(level, (n - 1) as f64) * s / (n as f64).sqrt();
        Interval { level, low: round(mean - half), high: round(mean + half) }
    });
    let pooled_value =
        pooled.filter(|_| n == runs.len()).and_then(|p| p.value(f, semantics).map(|v| (v, p.ttft.len())));
    let (value, method, pooled_requests) = match pooled_value {
        Some((v, k)) => (v, Method::PooledRequests, Some(k)),
        None => (round(median), Method::MedianOfRuns, None),
    };
    Some(Figure {
        figure: f,
        value,
        method,
        runs: n,
        values,
        median: round(median),
        mean: round(mean),
        sd: sd.map(round),
        cv,
        ci,
        pooled_requests,
    })
}

/// Markdown: a section per group, a table of its figures, then the runs left out.
pub fn markdown(a: &Aggregate) -> String {
    let esc = |s: &str| {
        printable(s)
            .replace('\\', "\\\\")
            .replace('|', "\\|")
            .replace('*', "\\*")
            .replace('_', "\\_")
            .replace('`', "\\`")
    };
    let mut out = String::from("# Aggregate of repetitions\n\n");
    let _ = writeln!(
        out,
        "A summary of repetitions, not a run's report. Interval: t-based, {}% of the mean of the runs.\n",
        show(a.confidence * 100.0)
    );
    for g in &a.groups {
        let labels: Vec<String> = g.labels.iter().map(|(k, v)| format!(" · {k}={v}")).collect();
        let _ = writeln!(out, "## {} · {}{}\n", esc(&g.tool), esc(&g.workload.describe()), esc(&labels.concat()));
        let names: Vec<String> = g.runs.iter().map(|r| format!("{}#{}", esc(&r.input), r.block)).collect();
        let _ = writeln!(out, "{} run(s): {}\n", g.runs.len(), names.join(", "));
        if let Some(why) = &g.not_pooled {
            let _ = writeln!(out, "Not pooled over requests: {}.\n", esc(why));
        }
        out.push_str("| figure | value | method | runs | median | mean | interval | CV |\n");
        out.push_str("|---|---:|---|---:|---:|---:|---|---:|\n");
        for f in &g.figures {
            let method = match f.method {
                Method::PooledRequests => format!("pooled, {} requests", f.pooled_requests.unwrap_or(0)),
                Method::MedianOfRuns => "median of runs".into(),
            };
            let interval = f.ci.as_ref().map_or("-".into(), |c| format!("{} to {}", show(c.low), show(c.high)));
            let cv = f.cv.map_or("-".into(), |c| format!("{}%", show(round(c * 100.0))));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                f.figure.label(),
                show(f.value),
                method,
                f.runs,
                show(f.median),
                show(f.mean),
                interval,
                cv
            );
        }
        out.push('\n');
    }
    if !a.excluded.is_empty() {
        out.push_str("## Left out\n\n");
        for e in &a.excluded {
            let verdict = if e.verdict == Verdict::Rejected { "rejected" } else { "unusable" };
            let _ = writeln!(out, "- {}#{}: {verdict}: {}", esc(&e.input), e.block, esc(&e.reason));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_t_quantile_matches_its_tables() {
        // Student's t, two-sided 95%: df 1, 2, 4, 9, 30.
        for (df, t) in [(1.0, 12.706), (2.0, 4.303), (4.0, 2.776), (9.0, 2.262), (30.0, 2.042)] {
            assert!((t_quantile(0.95, df) - t).abs() < 0.001, "df {df}: {}", t_quantile(0.95, df));
        }
        assert!((t_quantile(0.99, 9.0) - 3.250).abs() < 0.001);
    }
}
