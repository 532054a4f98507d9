//! `bench-normalize regress NEW...`: new runs judged against a baseline of stored runs of the same
//! workload, figure by figure (docs/store.md, "The verdict"). A change counts only when it is
//! both large (`min_change`) and significant (a test fit for the samples), as asv decides; a
//! figure whose meaning differs between the two sides is not comparable (`compare`'s meaning
//! guard, and the tool).

use std::fmt::Write as _;

use serde::Serialize;

use super::{Filter, Labels, Store, StoreError, WorkloadKey, stats};
use bench_normalize_analysis::compare::{self, Fig, KeyField, Outcome, Side};
use bench_normalize_core::ExitCode;
use bench_normalize_core::error::printable;
use bench_normalize_core::number::show;
use bench_normalize_core::report::{Run, Verdict};

/// Version of the JSON document `regress --format json` writes.
pub const REGRESS_VERSION: u32 = 1;

/// `compare`'s figure whose meaning checks apply to `fig` (TTFT's mean has the checks of its p50).
fn guard(fig: Fig) -> Fig {
    match fig {
        Fig::TtftMean => Fig::TtftP50,
        other => other,
    }
}

/// The test significance is decided with when both sides have enough runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    Welch,
    MannWhitney,
}

/// How a figure's status was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Welch's t-test (both sides >= `MIN_SAMPLES` runs).
    WelchT,
    /// The Mann-Whitney U test (both sides >= `MIN_SAMPLES` runs).
    MannWhitneyU,
    /// Fewer runs a side: the size of the change alone (and the baseline's own range).
    ThresholdOnly,
    /// Not judged.
    None,
}

/// A figure's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, strum::IntoStaticStr, strum::VariantArray)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum FigStatus {
    Regression,
    Improvement,
    Unchanged,
    Noisy,
    NotComparable,
}

impl FigStatus {
    /// The name the verdict writes (serde's).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The fewest runs a side needs for a test; below it the verdict is threshold-only.
pub const MIN_SAMPLES: usize = 3;

/// How to judge.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Baseline: the latest `last` accepted stored runs of the workload.
    pub last: usize,
    /// Baseline: only stored runs carrying every one of these labels.
    pub labels: Labels,
    /// Baseline: only stored runs added in the last this many seconds.
    pub within_s: Option<u64>,
    /// The smallest relative change of the mean that counts (0.05: 5%).
    pub min_change: f64,
    /// The test with enough runs.
    pub test: Test,
    /// The significance level of the test.
    pub alpha: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { last: 10, labels: Labels::new(), within_s: None, min_change: 0.05, test: Test::Welch, alpha: 0.05 }
    }
}

/// A side's values of one figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    pub runs: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation; `null` for one run.
    pub sd: Option<f64>,
}

impl Sample {
    fn of(v: &[f64]) -> Option<Sample> {
        let (mean, var) = stats::mean_var(v)?;
        Some(Sample {
            runs: v.len(),
            mean: bench_normalize_core::number::round(mean),
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            sd: (v.len() > 1).then(|| bench_normalize_core::number::round(var.sqrt())),
        })
    }
}

/// One figure's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureVerdict {
    pub figure: Fig,
    pub higher_is_better: bool,
    pub baseline: Option<Sample>,
    pub new: Option<Sample>,
    /// `(new mean - baseline mean) / baseline mean`, signed (6 significant digits).
    pub change: Option<f64>,
    pub status: FigStatus,
    pub method: Method,
    pub p_value: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// A stored or new run as the verdict names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunName {
    /// The store's id (baseline runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    pub input: String,
    pub block: usize,
    pub tool: String,
}

/// The new runs of one workload against their baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub workload: WorkloadKey,
    pub new_runs: Vec<RunName>,
    pub baseline_runs: Vec<RunName>,
    pub figures: Vec<FigureVerdict>,
}

/// The whole verdict: what `--format json` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdicts {
    pub regress_version: u32,
    pub min_change: f64,
    pub alpha: f64,
    pub test: Test,
    pub min_samples: usize,
    pub groups: Vec<Group>,
}

impl Verdicts {
    /// 8 when a figure regressed; else 3 when a group has no figure compared (no baseline, or
    /// nothing comparable); else 0.
    pub fn exit_code(&self) -> ExitCode {
        let statuses = || self.groups.iter().flat_map(|g| g.figures.iter().map(|f| f.status));
        if statuses().any(|s| s == FigStatus::Regression) {
            return ExitCode::Regression;
        }
        if self.groups.is_empty()
            || self.groups.iter().any(|g| g.figures.iter().all(|f| f.status == FigStatus::NotComparable))
        {
            return ExitCode::NoResult;
        }
        ExitCode::Ok
    }
}

fn name(run: &Run, id: Option<i64>) -> RunName {
    RunName { id, input: run.source.input.clone(), block: run.source.block, tool: run.source.tool.clone() }
}

/// Judge the accepted runs among `new` against the store, one group per workload.
pub fn regress(store: &mut Store, new: &[Run], settings: &Settings) -> Result<Verdicts, StoreError> {
    let mut groups: Vec<(WorkloadKey, Vec<&Run>)> = Vec::new();
    for run in new.iter().filter(|r| r.verdict == Verdict::Accepted) {
        let key = WorkloadKey::of(run);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, runs)) => runs.push(run),
            None => groups.push((key, vec![run])),
        }
    }
    let mut out = Verdicts {
        regress_version: REGRESS_VERSION,
        min_change: settings.min_change,
        alpha: settings.alpha,
        test: settings.test,
        min_samples: MIN_SAMPLES,
        groups: Vec::new(),
    };
    for (key, runs) in groups {
        // The latest runs of the new runs' tool; of any tool when the store has none of it (then
        // not comparable, and said).
        let tools: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.source.tool.as_str()).collect();
        let mut filter = Filter {
            labels: settings.labels.clone(),
            workload: Some(key.clone()),
            tool: (tools.len() == 1).then(|| tools.iter().next().map(|t| t.to_string())).flatten(),
            last: Some(settings.last),
            within_s: settings.within_s,
        };
        let mut stored = store.list(&filter, true)?;
        if stored.is_empty() && filter.tool.is_some() {
            filter.tool = None;
            stored = store.list(&filter, true)?;
        }
        let mut baseline = Vec::new();
        for s in &stored {
            baseline.push((s.id, s.to_run()?));
        }
        out.groups.push(judge(key, &runs, &baseline, settings));
    }
    Ok(out)
}

/// One workload's new runs against its baseline runs (stored id, run).
pub fn judge(key: WorkloadKey, new: &[&Run], baseline: &[(i64, Run)], settings: &Settings) -> Group {
    let mut group = Group {
        workload: key,
        new_runs: new.iter().map(|r| name(r, None)).collect(),
        baseline_runs: baseline.iter().map(|(id, r)| name(r, Some(*id))).collect(),
        figures: Vec::new(),
    };
    // Whole-run reasons: no baseline, another tool.
    let mut whole = Vec::new();
    if baseline.is_empty() {
        whole.push("no stored baseline run of this workload (and labels)".to_string());
    }
    let tools = |runs: &mut dyn Iterator<Item = &Run>| -> std::collections::BTreeSet<String> {
        runs.map(|r| r.source.tool.clone()).collect()
    };
    let (tb, tn) = (tools(&mut baseline.iter().map(|(_, r)| r)), tools(&mut new.iter().copied()));
    if !baseline.is_empty() && tb != tn {
        whole.push(format!(
            "another tool: the baseline was measured by {} and the new runs by {}; its figures do not mean the same",
            tb.into_iter().collect::<Vec<_>>().join(", "),
            tn.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    // compare's meaning guard, the two sides as one pair.
    let base_side =
        Side { label: "baseline".into(), runs: baseline.iter().map(|(_, r)| r.clone()).collect(), skipped: Vec::new() };
    let new_side = Side { label: "new".into(), runs: new.iter().map(|r| (*r).clone()).collect(), skipped: Vec::new() };
    let comparison = (!baseline.is_empty()).then(|| compare::compare(&base_side, &[new_side], &KeyField::ALL));
    let pair = comparison.as_ref().and_then(|c| c.pairs.first());
    if comparison.is_some() && pair.is_none() && whole.is_empty() {
        whole.push("compare lines the two sides up with no pair".into());
    }
    for fig in Fig::REGRESSED {
        let vb: Vec<f64> = baseline.iter().filter_map(|(_, r)| fig.value(r)).filter(|x| x.is_finite()).collect();
        let vn: Vec<f64> = new.iter().filter_map(|r| fig.value(r)).filter(|x| x.is_finite()).collect();
        let mut v = FigureVerdict {
            figure: fig,
            higher_is_better: fig.higher_is_better(),
            baseline: Sample::of(&vb),
            new: Sample::of(&vn),
            change: None,
            status: FigStatus::NotComparable,
            method: Method::None,
            p_value: None,
            reasons: whole.clone(),
        };
        if let Some(row) = pair.and_then(|p| p.figures.iter().find(|f| f.figure == guard(fig))) {
            match row.outcome {
                Outcome::Refused => v.reasons.extend(row.reasons.iter().cloned()),
                Outcome::Warned => v.reasons.extend(row.reasons.iter().map(|r| format!("compared, but: {r}"))),
                _ => {}
            }
            if row.outcome == Outcome::Refused {
                group.figures.push(v);
                continue;
            }
        }
        if !whole.is_empty() {
            group.figures.push(v);
            continue;
        }
        if vb.is_empty() || vn.is_empty() {
            v.reasons.push(format!(
                "missing: {} does not give it",
                if vb.is_empty() { "the baseline" } else { "the new side" }
            ));
            group.figures.push(v);
            continue;
        }
        decide(&mut v, &vb, &vn, settings);
        group.figures.push(v);
    }
    group
}

/// Size and significance: the status of a figure both sides give.
fn decide(v: &mut FigureVerdict, vb: &[f64], vn: &[f64], s: &Settings) {
    let mb_exact = stats::mean_var(vb).map_or(0.0, |x| x.0);
    let mn_exact = stats::mean_var(vn).map_or(0.0, |x| x.0);
    let change = if mb_exact != 0.0 { (mn_exact - mb_exact) / mb_exact.abs() } else { 0.0 };
    v.change = Some(bench_normalize_core::number::round(change));
    let worse = if v.higher_is_better { change < 0.0 } else { change > 0.0 };
    let moved = if worse { FigStatus::Regression } else { FigStatus::Improvement };
    let tested = vb.len() >= MIN_SAMPLES && vn.len() >= MIN_SAMPLES;
    if tested {
        let (method, p) = match s.test {
            Test::Welch => (Method::WelchT, stats::welch(vb, vn)),
            Test::MannWhitney => (Method::MannWhitneyU, stats::mann_whitney(vb, vn)),
        };
        v.method = method;
        v.p_value = p.map(bench_normalize_core::number::round);
    } else {
        v.method = Method::ThresholdOnly;
    }
    if change.abs() < s.min_change {
        v.status = FigStatus::Unchanged;
        return;
    }
    if tested {
        v.status = if v.p_value.is_some_and(|p| p < s.alpha) { moved } else { FigStatus::Noisy };
        if v.status == FigStatus::Noisy {
            v.reasons.push(format!(
                "a change of {} but not significant (p = {} >= {})",
                percent(change),
                v.p_value.map_or("?".into(), show),
                show(s.alpha)
            ));
        }
        return;
    }
    // Threshold only: a new mean inside the baseline's own range (two or more runs) is noise.
    let (lo, hi) = (v.baseline.as_ref().map_or(0.0, |b| b.min), v.baseline.as_ref().map_or(0.0, |b| b.max));
    if vb.len() >= 2 && mn_exact >= lo && mn_exact <= hi {
        v.status = FigStatus::Noisy;
        v.reasons.push(format!("a change of {} but within the baseline runs' own range", percent(change)));
    } else {
        v.status = moved;
        v.reasons.push(format!(
            "threshold only: {} baseline and {} new run(s), fewer than {MIN_SAMPLES} a side for a test",
            vb.len(),
            vn.len()
        ));
    }
}

fn percent(x: f64) -> String {
    format!("{}{}%", if x > 0.0 { "+" } else { "" }, show(bench_normalize_core::number::round(x * 100.0)))
}

/// The verdict as Markdown, for `$GITHUB_STEP_SUMMARY` or a pull-request comment.
pub fn markdown(v: &Verdicts) -> String {
    let md = |s: &str| compare::markdown_text(&printable(s));
    let mut o = String::new();
    let regressions = v.groups.iter().flat_map(|g| &g.figures).filter(|f| f.status == FigStatus::Regression).count();
    let _ = writeln!(o, "## Benchmark regression check\n");
    let _ = writeln!(
        o,
        "{} · a change counts from {} and p < {} ({} with {MIN_SAMPLES}+ runs a side, else threshold only)\n",
        if regressions > 0 { format!("**{regressions} regression(s)**") } else { "no regression".into() },
        percent(v.min_change).trim_start_matches('+'),
        show(v.alpha),
        match v.test {
            Test::Welch => "Welch's t-test",
            Test::MannWhitney => "Mann-Whitney U",
        }
    );
    for g in &v.groups {
        let _ = writeln!(o, "### {}\n", md(&g.workload.describe()));
        let _ = writeln!(
            o,
            "{} new run(s) against {} baseline run(s){}\n",
            g.new_runs.len(),
            g.baseline_runs.len(),
            if g.baseline_runs.is_empty() {
                String::new()
            } else {
                format!(
                    " (store ids {})",
                    g.baseline_runs.iter().filter_map(|r| r.id).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
                )
            }
        );
        let _ = writeln!(o, "| figure | baseline | new | change | status | method | p |");
        let _ = writeln!(o, "|---|---|---|---|---|---|---|");
        let cell = |s: &Option<Sample>| {
            s.as_ref().map_or("–".into(), |s| match s.sd {
                Some(sd) => format!("{} ± {} (n={})", show(s.mean), show(sd), s.runs),
                None => format!("{} (n=1)", show(s.mean)),
            })
        };
        // Each reason once, with the figures it is about (all of them: none named).
        let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
        for f in &g.figures {
            let status = match f.status {
                FigStatus::Regression => "**regression**",
                s => s.as_str(),
            };
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} |",
                f.figure.label(),
                cell(&f.baseline),
                cell(&f.new),
                f.change.map_or("–".into(), percent),
                status,
                match f.method {
                    Method::WelchT => "Welch t",
                    Method::MannWhitneyU => "Mann-Whitney U",
                    Method::ThresholdOnly => "threshold only",
                    Method::None => "–",
                },
                f.p_value.map_or("–".into(), show)
            );
            for r in &f.reasons {
                match notes.iter_mut().find(|(n, _)| n == r) {
                    Some((_, figs)) => figs.push(f.figure.label()),
                    None => notes.push((r.clone(), vec![f.figure.label()])),
                }
            }
        }
        if !notes.is_empty() {
            o.push('\n');
        }
        for (r, figs) in &notes {
            if figs.len() == g.figures.len() {
                let _ = writeln!(o, "- {}", md(r));
            } else {
                let _ = writeln!(o, "- {}: {}", figs.join(", "), md(r));
            }
        }
        o.push('\n');
    }
    if v.groups.is_empty() {
        o.push_str("No accepted new run to judge.\n");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::FigStatus;
    use strum::VariantArray;

    /// A figure's status as the verdict writes it is serde's name, for every status.
    #[test]
    fn status_names_are_serdes() {
        for &v in FigStatus::VARIANTS {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
        assert_eq!(FigStatus::NotComparable.as_str(), "not-comparable");
    }
}
