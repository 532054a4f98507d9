//! Rules on each value alone: latencies in order, statistic blocks that non-negative values can
//! have, finite numbers, and a physically possible range.

use crate::derive::Inputs;
use crate::number::ROUNDED_REL;
use crate::number::shown as f;
use crate::report::{Figure, Figures, Run, Stat, StatKey, Status, TpotMethod};
use crate::vocabulary;
use crate::vocabulary::{Key, Kind, reported};

use super::decode::tpot_row_counts;
use super::order::Layout;
use super::{Outcome, skip};

pub(super) fn latency_order(run: &Run, i: &Inputs) -> Outcome {
    let mut problems = Vec::new();
    let mut checked = 0;
    // Each mean as printed, within its rounding. A printed E2E mean of zero beside a positive TTFT
    // is below its row's resolution (guidellm's console prints a 30 ms latency as 0.0 s), in a
    // unit a zero does not tell: not compared.
    let slack = |key: Key, v: f64| run.printed_slack(&format!("{}.mean", key.path()), v);
    let unresolved = i.e2e_mean == Some(0.0) && slack(reported::E2E_MS, 0.0).is_some();
    if let (Some(ttft), Some(e2e), false) = (i.ttft_mean, i.e2e_mean, unresolved) {
        checked += 1;
        let (a, b) = (slack(reported::TTFT_MS, ttft).unwrap_or(0.0), slack(reported::E2E_MS, e2e).unwrap_or(0.0));
        if ttft < 0.0 || ttft - a > e2e + b {
            problems.push(format!("mean TTFT {} ms is not within 0..mean E2E {} ms", f(ttft), f(e2e)));
        }
    }
    // Every statistic block, its path built in one buffer as the walk goes.
    walk(&run.reported, "reported", &mut |path, fig| {
        let Figure::Stat(stat) = fig else { return };
        checked += 1;
        // Min, the percentiles and max, each against the one before it.
        let mut before: Option<(StatKey, f64)> = None;
        for (k, v) in stat.iter().filter(|(k, _)| !matches!(k, StatKey::Mean | StatKey::Std)) {
            if let Some((bk, bv)) = before.filter(|(_, bv)| *bv > v) {
                problems.push(format!("{path}: {bk} {} > {k} {}", f(bv), f(v)));
            }
            before = Some((k, v));
        }
        if let Some(mean) = stat.mean() {
            let lo = stat.get(StatKey::Min);
            let hi = stat.get(StatKey::Max);
            if lo.is_some_and(|lo| mean < lo) || hi.is_some_and(|hi| mean > hi) {
                problems.push(format!("{path}: mean {} is outside min..max", f(mean)));
            }
        }
    });
    let fed = fed_row_groups(run);
    checked += fed.len();
    for group in &fed {
        problems.extend(group.problem());
    }
    if checked == 0 {
        return skip("no latency statistics");
    }
    if problems.is_empty() {
        (Status::Pass, format!("TTFT <= E2E and every statistic block is ordered ({checked} checked)"))
    } else {
        (Status::Fail, problems.join("; "))
    }
}

/// A statistic group of the printed rows (`Output Sequence Length (tokens) (avg)`, `(min)`,
/// `(max)`, ... or `number_output_tokens p25`) of which at least one row fed a figure, while the
/// others fed none: the figure is one statistic of a block the report does not keep, so the
/// block's order is tested on the rows themselves (a mean of 5,120 tokens per request over
/// requests of at most 512 feeds a TPOT ten times too fast).
struct RowGroup<'a> {
    /// The rows' section, and their label without the statistic (borrowed from the rows: this
    /// runs for every row of every run).
    section: Option<&'a str>,
    base: &'a str,
    /// The first figure a row of the group fed.
    fed: Option<&'a str>,
    /// Whether a row of the group fed no figure.
    unfed: bool,
    stats: Vec<(StatKey, f64)>,
}

impl RowGroup<'_> {
    /// `Section / Label`, as the messages name the group.
    fn label(&self) -> String {
        match self.section {
            Some(s) => format!("{s} / {}", self.base),
            None => self.base.to_string(),
        }
    }

    fn problem(&self) -> Option<String> {
        let get = |k: StatKey| self.stats.iter().find(|(s, _)| *s == k).map(|(_, v)| *v);
        let (lo, hi) = (get(StatKey::Min), get(StatKey::Max));
        let mut order: Vec<(StatKey, f64)> =
            self.stats.iter().copied().filter(|(k, _)| !matches!(k, StatKey::Mean | StatKey::Std)).collect();
        let rank = |k: StatKey| match k {
            StatKey::Min => -1.0,
            StatKey::P(p) => p,
            _ => 101.0,
        };
        order.sort_by(|a, b| rank(a.0).total_cmp(&rank(b.0)));
        if let Some(w) = order.windows(2).find(|w| w[0].1 > w[1].1) {
            return Some(format!(
                "rows {}: {} {} > {} {} (they feed {})",
                self.label(),
                w[0].0,
                f(w[0].1),
                w[1].0,
                f(w[1].1),
                self.fed.unwrap_or_default()
            ));
        }
        let mean = get(StatKey::Mean)?;
        (lo.is_some_and(|lo| mean < lo) || hi.is_some_and(|hi| mean > hi)).then(|| {
            format!(
                "rows {}: mean {} is outside min..max (they feed {})",
                self.label(),
                f(mean),
                self.fed.unwrap_or_default()
            )
        })
    }
}

/// The printed statistic groups with a row that fed a figure and a row that fed none.
fn fed_row_groups(run: &Run) -> Vec<RowGroup<'_>> {
    let mut groups: Vec<RowGroup> = Vec::new();
    for row in &run.rows {
        let Some(value) = row.value.as_deref() else { continue };
        let label = row.label.trim_end();
        let Some((base, stat)) = split_stat(label) else { continue };
        let (Some(key), false) = (StatKey::parse(stat), base.trim().is_empty()) else { continue };
        let Some((crate::value::Token::Number { value, .. }, _)) = crate::value::lex(value) else { continue };
        let section = row.section.as_deref();
        let i = match groups.iter().position(|g| g.base == base && g.section == section) {
            Some(i) => i,
            None => {
                groups.push(RowGroup { section, base, fed: None, unfed: false, stats: Vec::new() });
                groups.len() - 1
            }
        };
        match &row.field {
            Some(field) => {
                groups[i].fed.get_or_insert(field.as_str());
            }
            None => groups[i].unfed = true,
        }
        groups[i].stats.push((key, value));
    }
    groups.retain(|g| g.fed.is_some() && g.unfed);
    groups
}

/// A row label cut into its base and its statistic: `Label (avg)` at its last ` (`, else
/// `Label p25` at its last space. (By bytes: a str pattern's searcher costs more to set up than
/// these labels are long, and this runs for every row of every run.)
pub(super) fn split_stat(label: &str) -> Option<(&str, &str)> {
    let b = label.as_bytes();
    let paren = label.strip_suffix(')').and_then(|l| {
        let at = memchr::memrchr_iter(b'(', l.as_bytes()).find(|&i| i > 0 && b[i - 1] == b' ')?;
        Some((&l[..at - 1], &l[at + 1..]))
    });
    paren.or_else(|| memchr::memrchr(b' ', b).map(|at| (&label[..at], &label[at + 1..])))
}

/// The largest magnitude a statistic block shows, for its rounding slack.
pub(super) fn slack_of(stat: &Stat, rounding: f64) -> f64 {
    let big = stat.iter().map(|(_, v)| v.abs()).fold(0.0, f64::max);
    rounding + big * 1e-9
}

/// Every statistic block must be possible for a sample of non-negative values.
///
/// Proof sketches (`n` values `x_i >= 0`, mean `m`; printed values may be rounded to 2 decimals,
/// so each bound has that slack):
/// * at least a `1 - q` share of the values are `>= p_q` (for numpy's interpolated percentile
///   too: with `lo = floor(q (n - 1))`, the `n - lo` values from `lo` up sum to at least
///   `n (1 - q) p_q`), and the others are `>= 0`, so `m >= (1 - q) p_q`; for the median,
///   `m >= p50 / 2`;
/// * for the per-request blocks (TTFT, TPOT, E2E) of `R` requests, `m >= max / R` (not for
///   token-weighted TPOT rows, `tpot_weighting = "token"`: they hold `N_out - R` values);
/// * Bhatia-Davis: a population standard deviation `s` satisfies `s^2 <= (max - m)(m - min)`
///   (`min` is `>= 0` when not printed); a sample standard deviation (`ddof = 1`) is at most
///   `sqrt(n / (n - 1)) <= sqrt(2)` times it;
/// * `|m - p50| <= s` (the mean and any median are within one standard deviation);
/// * from above, for the TTFT and E2E blocks of numpy's percentiles over the `R` successful
///   requests (a definition's `percentiles = "numpy-linear"`: vLLM, vllm-rs, SGLang): numpy's `p_q` lies between the sorted values `x_lo` and `x_lo+1`
///   (`lo = floor(q (R - 1))`), so the `lo + 1` smallest values are `<= p_q`; each of the others
///   is at most the longest E2E latency the run allows (`cap`: its printed maximum, what its P99
///   allows, or its duration), and a TTFT is at most its request's E2E. So
///   `m <= ((lo + 1) p_q + (R - lo - 1) cap) / R`: a mean TTFT of 1398.9 ms over 16 requests with
///   a P99 of 145.44 ms and a longest E2E of 7,868 ms is impossible (at most 628 ms).
pub(super) fn distribution_possible(
    run: &Run,
    i: &Inputs,
    cap: Option<&(f64, String)>,
    rounding: f64,
    equal: bool,
) -> Outcome {
    let mut problems = Vec::new();
    let mut checked = 0;
    // Token-weighted TPOT rows are not one value per request: no request count bounds them.
    let token = run.source.semantics.token_weighted_tpot();
    let per_request: Vec<_> = [reported::TTFT_MS, reported::TPOT_MS, reported::E2E_MS]
        .into_iter()
        .filter(|k| !(token && *k == reported::TPOT_MS))
        .map(Key::path)
        .collect();
    let bounded_above = [reported::TTFT_MS, reported::E2E_MS].map(Key::path);
    let tpot_path = reported::TPOT_MS.path();
    let numpy = run.source.semantics.numpy_percentiles();
    let mut check = |path: &str, stat: &Stat| {
        let Some(m) = stat.mean() else { return };
        checked += 1;
        let mut e = slack_of(stat, rounding);
        if path.starts_with("derived") {
            // Derived figures are rounded to six significant digits (`number::round`).
            e += stat.iter().map(|(_, v)| v.abs()).fold(0.0, f64::max) * ROUNDED_REL;
        }
        if let (true, true, Some(r), Some((cap, why))) =
            (numpy, bounded_above.contains(&path), i.successful.filter(|r| *r >= 1.0), cap.as_ref())
        {
            for (k, v) in stat.iter() {
                let StatKey::P(p) = k else { continue };
                let lo = ((p / 100.0) * (r - 1.0)).floor();
                let bound = ((lo + 1.0) * (v + e) + (r - lo - 1.0) * cap) / r;
                if m - e > bound {
                    problems.push(format!(
                        "{path}: mean {} is above {}: {} of the {} requests are at most {k} {}, the rest at most {why}",
                        f(m),
                        f(bound),
                        (lo + 1.0) as u64,
                        r as u64,
                        f(v),
                    ));
                    break;
                }
            }
        }
        // The range of means the block's percentiles, min and max allow its sorted values.
        let counts = match (i.successful, path) {
            (Some(r), p) if p == tpot_path && !token => tpot_row_counts(r, equal),
            (Some(r), p) if bounded_above.contains(&p) && r >= 1.0 => Some(r as usize..=r as usize),
            _ => None,
        };
        // Only where the definition says how the tool computes its percentiles.
        let known = run.source.semantics.percentiles.is_some();
        if let Some(counts) = counts.filter(|_| known && stat.iter().any(|(k, _)| matches!(k, StatKey::P(_)))) {
            let c = cap.as_ref().map_or(f64::INFINITY, |c| c.0);
            let (lo, hi) = Layout::new(stat, numpy, e, c).means_missing(counts, m, e).unwrap_or((f64::NAN, f64::NAN));
            if lo.is_finite() && m + e < lo {
                problems.push(format!(
                    "{path}: mean {} is below {}, the least its percentiles allow (the values above each percentile are at least it)",
                    f(m),
                    f(lo)
                ));
            } else if hi.is_finite() && m - e > hi {
                problems.push(format!(
                    "{path}: mean {} is above {}, the most its percentiles allow with every value at most {}",
                    f(m),
                    f(hi),
                    cap.as_ref().map_or("its max".to_string(), |c| c.1.clone())
                ));
            }
        }
        for (k, v) in stat.iter() {
            if let StatKey::P(p) = k {
                let q = p / 100.0;
                if q < 1.0 && m + e < (1.0 - q) * (v - e) {
                    problems.push(format!(
                        "{path}: mean {} is below (1 - {q}) x {k} {} = {}: at least {:.0}% of the values are >= {k}, so the mean of non-negative values is at least that",
                        f(m),
                        f(v),
                        f((1.0 - q) * v),
                        (1.0 - q) * 100.0
                    ));
                }
            }
        }
        let max = stat.get(StatKey::Max);
        if let (Some(max), Some(r), true) = (max, i.successful, per_request.contains(&path))
            && r >= 1.0
            && m + e < (max - e) / r
        {
            problems.push(format!(
                "{path}: mean {} is below max {} / {} requests: one value alone gives a larger mean",
                f(m),
                f(max),
                r as u64
            ));
        }
        if let Some(s) = stat.get(StatKey::Std) {
            if let Some(max) = max {
                let min = stat.get(StatKey::Min).unwrap_or(0.0).max(0.0);
                let limit = ((max - m + e).max(0.0) * (m - min + e).max(0.0)).sqrt() * std::f64::consts::SQRT_2 + e;
                if s > limit {
                    problems.push(format!(
                        "{path}: std {} is more than values within {}..{} around mean {} can have ({})",
                        f(s),
                        f(min),
                        f(max),
                        f(m),
                        f(limit)
                    ));
                }
            }
            if let Some(p50) = stat.get(StatKey::P(50.0))
                && (m - p50).abs() > s + 2.0 * e
            {
                problems.push(format!(
                    "{path}: mean {} and median {} are more than one std {} apart",
                    f(m),
                    f(p50),
                    f(s)
                ));
            }
        }
    };
    walk(&run.reported, "reported", &mut |path, fig| {
        if let Figure::Stat(stat) = fig {
            check(path, stat);
        }
    });
    // The derived per-request TPOT statistics are emitted too (other methods copy the rows or
    // give a mean alone).
    let dt = &run.derived.tpot_ms;
    if let Some(m) = dt.mean.filter(|_| dt.method == Some(TpotMethod::PerRequest)) {
        let mut st = Stat::default();
        st.set(StatKey::Mean, m);
        for (p, v) in [(50.0, dt.p50), (90.0, dt.p90), (99.0, dt.p99)] {
            if let Some(v) = v {
                st.set(StatKey::P(p), v);
            }
        }
        if st.iter().count() > 1 {
            check("derived.tpot_ms", &st);
        }
    }
    if checked == 0 {
        return skip("no statistic block with a mean");
    }
    if problems.is_empty() {
        (Status::Pass, format!("{checked} statistic blocks are possible for non-negative values"))
    } else {
        (Status::Fail, format!("impossible statistics: {}", problems.join("; ")))
    }
}

/// Fastest per-user decode rate flagged as beyond any engine, tok/s (TPOT 0.05 ms).
pub const MAX_PER_USER_TOK_PER_S: f64 = 20_000.0;
/// Shortest mean TTFT or E2E latency flagged, ms (10 microseconds).
pub const MIN_LATENCY_MS: f64 = 0.01;

/// Figures outside any physically possible range for their kind, flagged (a warning: a mock
/// server can answer faster than any engine; a unit read wrong does the same).
///
/// Limits: the fastest per-user decode rates published for any engine are ~2,000-3,000 tok/s
/// (wafer-scale and LPU hardware on small models; diffusion LMs ~1,000-1,500), so 20,000 tok/s
/// per user (a TPOT of 0.05 ms) is ~7x beyond any of them; a TPOT below a microsecond is 1M
/// tok/s. A first token or a whole request over HTTP within 10 microseconds is below the cost of
/// one loopback round trip.
pub(super) fn physical_range(run: &Run) -> Outcome {
    let mut problems = Vec::new();
    let mut n = 0;
    let rate_of = |tpot: f64| 1000.0 / tpot;
    let mut rates: Vec<(String, f64)> = Vec::new();
    if let Some(r) = run.derived.per_user_decode_tok_per_s {
        rates.push(("derived.per_user_decode_tok_per_s".into(), r));
    }
    if let Some(t) = run.derived.tpot_ms.mean.filter(|t| *t > 0.0) {
        rates.push((format!("1000 / derived.tpot_ms.mean {}", f(t)), rate_of(t)));
    }
    if let Some(t) = run.stat(reported::TPOT_MS).and_then(Stat::mean).filter(|t| *t > 0.0) {
        rates.push((format!("1000 / reported.tpot_ms.mean {}", f(t)), rate_of(t)));
    }
    if let Some(r) = run.number(reported::PER_USER_TOK_PER_S) {
        rates.push((reported::PER_USER_TOK_PER_S.path().into(), r));
    }
    for (name, r) in rates {
        n += 1;
        if r > MAX_PER_USER_TOK_PER_S {
            problems.push(format!(
                "{name} = {} tok/s per user, above {} (no engine decodes a user's tokens faster than ~3,000 tok/s): a unit read wrong, or a mock server",
                f(r),
                MAX_PER_USER_TOK_PER_S as u64
            ));
        }
    }
    for key in [reported::TTFT_MS, reported::E2E_MS] {
        if let Some(m) = run.stat(key).and_then(Stat::mean) {
            n += 1;
            if m < MIN_LATENCY_MS {
                problems.push(format!(
                    "{key}.mean = {} ms, below {} ms: no HTTP response arrives that fast",
                    f(m),
                    MIN_LATENCY_MS
                ));
            }
        }
    }
    if n == 0 {
        return skip("no TPOT, rate or latency");
    }
    if problems.is_empty() {
        (Status::Pass, format!("{n} figures within physically possible ranges"))
    } else {
        (Status::Fail, problems.join("; "))
    }
}

pub(super) fn finite_values(run: &Run) -> Outcome {
    let mut problems = Vec::new();
    let mut n = 0;
    for (name, g) in [("workload", &run.workload), ("totals", &run.totals), ("reported", &run.reported)] {
        walk(g, name, &mut |path, fig| match fig {
            Figure::Count(_) => n += 1,
            Figure::Number(x) => {
                n += 1;
                if !x.is_finite() || *x < 0.0 {
                    problems.push(format!("{path} = {x}"));
                } else if x.fract() != 0.0 && vocabulary::field(path).is_some_and(|f| f.kind == Kind::Count) {
                    problems.push(format!("{path} = {x} is not a whole number"));
                }
            }
            Figure::Stat(s) => {
                for (k, v) in s.iter() {
                    n += 1;
                    if !v.is_finite() || v < 0.0 {
                        problems.push(format!("{path}.{k} = {v}"));
                    }
                }
            }
            Figure::List(l) => {
                for (idx, v) in l.iter().enumerate() {
                    n += 1;
                    if let Some(v) = v
                        && (!v.is_finite() || *v < 0.0)
                    {
                        problems.push(format!("{path}[{idx}] = {v}"));
                    }
                }
            }
            _ => {}
        });
    }
    if n == 0 {
        return skip("no numbers");
    }
    if problems.is_empty() {
        (Status::Pass, format!("{n} numbers, all finite and non-negative, counts whole"))
    } else {
        (Status::Fail, format!("not finite, negative or not whole: {}", problems.join(", ")))
    }
}

pub(super) fn walk(g: &Figures, prefix: &str, visit: &mut dyn FnMut(&str, &Figure)) {
    // (Room for the deepest path: it is built in place, never grown.)
    let mut path = String::with_capacity(prefix.len() + 64);
    path.push_str(prefix);
    walk_in(g, &mut path, visit);
}

/// [`walk`] with the path built in one buffer (`prefix`, restored on return).
pub(super) fn walk_in(g: &Figures, path: &mut String, visit: &mut dyn FnMut(&str, &Figure)) {
    for (k, v) in g.iter() {
        let len = path.len();
        path.push('.');
        path.push_str(k);
        match v {
            Figure::Group(sub) => walk_in(sub, path, visit),
            other => visit(path, other),
        }
        path.truncate(len);
    }
}
