//! Rules that hold a TPOT (claimed or derived) and the E2E latency to what the run's requests,
//! tokens, duration and concurrency slots allow; with them, the ITL-per-chunk note and the
//! agreement between the tool's TPOT and the derived one.

use crate::derive::Inputs;
use crate::number::ROUNDED_REL;
use crate::number::shown as f;
use crate::report::{ItlPer, Run, Stat, StatKey, Status, TpotMethod};
use crate::vocabulary::{reported, workload};

use super::order::{Sorted, smallest_of};
use super::{Outcome, ROUNDING_MS, Tolerances, skip};

/// Why every successful request is known to have the same output length, when it is: the
/// requested length `L` is each request's cap (`max_tokens`), so `N_out = R x L` leaves no room
/// for a shorter one. The requested length is what the input states, in a log (its argument
/// dump's `random_output_len`, printed beside `Sampling ... output_len from [L, L]`) as in a
/// report (dstack's preset reports: fixed-length `ignore_eos` runs).
pub(super) fn equal_lengths(run: &Run, i: &Inputs) -> Option<String> {
    let l = run.number(workload::OUTPUT_LEN)?;
    let (n, r) = (i.output_tokens?, i.successful?);
    (r >= 1.0 && l >= 1.0 && (n - r * l).abs() < 0.5).then(|| {
        format!(
            "every request has {} output tokens ({} tokens = {} requests x the requested {}, each request's cap)",
            l as u64, n as u64, r as u64, l as u64
        )
    })
}

/// The largest of `n` values that numpy's interpolated `q`-percentile `p` allows, when the
/// percentile falls between the two largest values: `p = s[n-2] + f (s[n-1] - s[n-2])` with
/// `f = q (n - 1) - (n - 2)`, so `s[n-1] <= p / f` (the values are non-negative). None when
/// the percentile lies lower (more than one value can be above it, unbounded).
pub(super) fn max_from_percentile(p: f64, q: f64, n: f64) -> Option<f64> {
    if n < 2.0 {
        return None;
    }
    let rank = q * (n - 1.0);
    let f = rank - (n - 2.0);
    (rank.floor() == n - 2.0 && f > 0.0).then(|| p / f)
}

/// The longest any request can have spent decoding, ms: its E2E latency is at most the
/// printed maximum (or the maximum numpy's p99 over `R` requests allows, when the definition says
/// `percentiles = "numpy-linear"`: `run.source.semantics.percentiles`), and never more than the
/// benchmark's duration.
pub(super) fn decode_cap(run: &Run, i: &Inputs, rounding: f64) -> Option<(f64, String)> {
    let e2e = run.stat(reported::E2E_MS);
    if let Some(max) = e2e.and_then(|s| s.get(StatKey::Max)) {
        return Some((max + rounding, format!("the longest E2E latency, {} ms", f(max))));
    }
    let from_p99 = match (e2e.and_then(|s| s.get(StatKey::P(99.0))), i.successful) {
        (Some(p99), Some(r)) if run.source.semantics.numpy_percentiles() => {
            max_from_percentile(p99 + rounding, 0.99, r).map(|m| {
                (
                    m,
                    format!(
                        "the longest E2E latency numpy's P99 {} ms over {} requests allows, {} ms",
                        f(p99),
                        r as u64,
                        f(m)
                    ),
                )
            })
        }
        _ => None,
    };
    let by_duration = i.duration_s.map(|d| (d * 1000.0 + 5.0, format!("the duration, {} s", f(d))));
    match (from_p99, by_duration) {
        (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// A ratio in a message: `5.82x`.
pub(super) fn x(r: f64) -> String {
    format!("{r:.2}x")
}

/// Concurrency slots available: the client's cap, and never more than the requests.
pub(super) fn slots(i: &Inputs) -> Option<(f64, &'static str)> {
    let r = i.successful?;
    Some(match i.max_concurrency {
        Some(c) if c > 0.0 && c < r => (c, "slots"),
        Some(_) => (r, "slots"),
        None => (r, "requests (no concurrency cap)"),
    })
}

/// Proof sketch: a request decodes its `n_i - 1` tokens in `(n_i - 1) x TPOT_i` ms, within the
/// run, and at most `slots` requests are in flight at once, so `sum (n_i - 1) x TPOT_i <= slots x
/// D`. The tools' mean TPOT is request-weighted (`mean_i TPOT_i`); it equals the token-weighted
/// `sum (n_i - 1) TPOT_i / (N_out - R)` only when every request has the same length, so the rule
/// runs only when that is known ([`equal_lengths`]). Otherwise a few 2-token requests with
/// TPOTs of seconds (early EOS under load) raise the request-weighted mean without decode work:
/// no bound from the totals holds, and the rule is skipped (the TPOT is then marked unverified).
pub(super) fn decode_capacity(i: &Inputs, claimed: Option<f64>, equal: Option<&str>, t: &Tolerances) -> Outcome {
    let Some(tpot) = claimed else { return skip("no TPOT claimed (no TPOT row)") };
    let (Some(n), Some(r), Some(d), Some((c, unit))) = (i.output_tokens, i.successful, i.duration_s, slots(i)) else {
        return skip("needs total output tokens, successful requests and duration");
    };
    let Some(equal) = equal else {
        return skip(
            "output lengths are not known to be equal: a request-weighted mean TPOT does not bound the decode work (a 2-token request with a TPOT of seconds weighs as much as a long one), so the totals cannot test it",
        );
    };
    let decode_tokens = n - r;
    if decode_tokens <= 0.0 || d <= 0.0 {
        return skip("no decode tokens or zero duration");
    }
    let need = decode_tokens * tpot / 1000.0;
    let supply = c * d;
    let ratio = need / supply;
    let msg = format!(
        "claimed TPOT {} ms needs {} s of decode work for {} tokens; {} {unit} x {} s supply {} s ({}); {equal}",
        f(tpot),
        f(need),
        decode_tokens as u64,
        c as u64,
        f(d),
        f(supply),
        x(ratio)
    );
    if ratio > t.capacity {
        (Status::Fail, format!("{msg}: more than the {}x allowed", t.capacity))
    } else {
        (Status::Pass, msg)
    }
}

/// The largest TPOT statistic a block shows (its max, else its highest percentile or mean).
pub(super) fn largest(stat: &Stat) -> Option<(StatKey, f64)> {
    stat.iter().filter(|(k, _)| *k != StatKey::Std).max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Proof sketch: `TPOT_i = (E2E_i - TTFT_i) / (n_i - 1) <= E2E_i - TTFT_i` for every request
/// with `n_i >= 2`: no request decodes a token longer than it lives, and none lives longer than
/// the longest E2E latency printed, or the run. So every statistic of the TPOT rows (mean,
/// percentiles, max), and every derived TPOT figure, is at most that. With equal output lengths
/// (known: [`equal_lengths`]) the request-weighted mean equals `(E2E - TTFT) / (n - 1)`, and the
/// claimed mean is held to it (x `--capacity-tolerance`).
pub(super) fn decode_within_e2e(
    run: &Run,
    i: &Inputs,
    cap: Option<&(f64, String)>,
    claimed: Option<f64>,
    equal: Option<&str>,
    t: &Tolerances,
) -> Outcome {
    let mut parts = Vec::new();
    let mut failed = Vec::new();
    if let Some(&(cap, ref what)) = cap {
        let mut figures: Vec<(String, f64)> = Vec::new();
        if let Some((k, v)) = run.stat(reported::TPOT_MS).and_then(largest) {
            figures.push((format!("the TPOT rows' {k}"), v));
        }
        // A derived TPOT that is not the rows themselves (the rows are checked just above).
        let dt = &run.derived.tpot_ms;
        // Per-request TPOTs only: a token-weighted mean also spreads one-token requests' end of
        // stream over the decode tokens (its capacity bound is e2e-capacity).
        let own = dt.method == Some(TpotMethod::PerRequest);
        if let Some((k, v)) =
            [("p99", dt.p99), ("mean", dt.mean)].into_iter().find_map(|(k, v)| Some((k, v?))).filter(|_| own)
        {
            figures.push((format!("the derived TPOT {k}"), v));
        }
        for (name, v) in figures {
            let msg = format!("{name} {} ms vs {what}", f(v));
            if v > cap + v * ROUNDED_REL {
                failed.push(format!("{msg}: a request cannot take longer per token than it lives"));
            } else {
                parts.push(msg);
            }
        }
    }
    if let (Some(tpot), Some(equal)) = (claimed, equal)
        && let (Some(e2e), Some(ttft), Some(n)) = (i.e2e_mean, i.ttft_mean, i.n_avg())
        && n > 1.0
        && e2e > ttft
    {
        let bound = (e2e - ttft) / (n - 1.0);
        let ratio = tpot / bound;
        let msg = format!(
            "claimed TPOT {} ms vs (E2E {} - TTFT {}) / ({} - 1) = {} ms of decode time per token ({}); {equal}",
            f(tpot),
            f(e2e),
            f(ttft),
            f(n),
            f(bound),
            x(ratio)
        );
        if ratio > t.capacity {
            failed.push(format!("{msg}: requests cannot decode longer than they live (allowed {}x)", t.capacity));
        } else {
            parts.push(msg);
        }
    }
    if !failed.is_empty() {
        return (Status::Fail, failed.join("; "));
    }
    if parts.is_empty() {
        return skip("needs a TPOT and the longest E2E latency or the duration");
    }
    (Status::Pass, parts.join("; "))
}

/// How many of `n` values can lie strictly above their `q`-quantile (`q` in 0..1), whatever
/// the percentile method (numpy's linear interpolation, nearest rank, lower, higher): at most
/// `floor((1 - q) n) + 1`.
pub(super) fn above_quantile(n: f64, q: f64) -> f64 {
    ((1.0 - q) * n).floor() + 1.0
}

/// The counts of requests a tool's TPOT rows may cover: every successful request when output
/// lengths are equal (none has one token), else any count up to them (one-token requests have no
/// TPOT), laid out only for runs of at most [`FLOOR_MAX_REQUESTS`].
pub(super) fn tpot_row_counts(r: f64, equal: bool) -> Option<std::ops::RangeInclusive<usize>> {
    let r = r as usize;
    match (equal, r) {
        (_, 0) => None,
        (true, _) => Some(r..=r),
        (false, r) if r <= FLOOR_MAX_REQUESTS => Some(1..=r),
        _ => None,
    }
}

/// Runs with more requests are bounded only when their lengths are equal (one count to lay out).
pub(super) const FLOOR_MAX_REQUESTS: usize = 256;

/// The smallest per-request TPOT the tool's TPOT rows allow ([`smallest_of`]), ms.
fn rows_floor(run: &Run, rows: &Stat, r: f64, rounding: f64, cap: Option<f64>, equal: bool) -> Option<f64> {
    // Only where the definition says how the tool computes its percentiles.
    run.source.semantics.percentiles?;
    let counts = tpot_row_counts(r, equal)?;
    // The rows' own printed digits (a run's coarsest latency rounding may be another block's:
    // guidellm prints E2E in seconds with one decimal, TPOT in ms with one).
    // (One path buffer for the six: this runs for every run with TPOT rows.)
    let mut path = String::with_capacity(32);
    let own = ["mean", "p50", "p90", "p99", "min", "max"]
        .iter()
        .filter_map(|k| {
            let v = rows.get(StatKey::parse(k)?)?;
            path.clear();
            path.push_str(reported::TPOT_MS.path());
            path.push('.');
            path.push_str(k);
            run.printed_slack(&path, v)
        })
        .reduce(f64::max);
    let e = own.unwrap_or(rounding).max(ROUNDING_MS) + 1e-9 * rows.mean()?;
    let floor = smallest_of(rows, counts, run.source.semantics.numpy_percentiles(), e, cap.unwrap_or(f64::INFINITY))?;
    floor.is_finite().then_some(floor.max(0.0))
}

/// Token-weighted TPOT rows (the definition's `tpot_weighting = "token"`: each request's TPOT
/// counted once per decode token, guidellm's ITL) have the mean `sum_i (last_i - first_i) /
/// (N_out - R)`, and the derived `(sum E2E_i - sum TTFT_i) / (N_out - R)` is that plus each
/// request's end of stream after its last token (`E2E_i` ends with the response, at most an
/// ordinary decode step later: `single`), so they are equal within the printed digits' rounding:
/// the rows' mean, and the E2E and TTFT means spread over the `N_out / R - 1` decode tokens per
/// request. Derived below the rows' mean or above it by more than that is a contradiction (an
/// E2E, TTFT, request count or token total that is not the run's). `ends`: the allowance for the
/// ends of stream, spread over the decode tokens. `Ok`: the comparison; `Err`: what differs.
fn token_weighted_mean(run: &Run, i: &Inputs, tw: f64, c: f64, ends: f64) -> Result<String, String> {
    let own = |key: crate::vocabulary::Key, v: f64| {
        run.printed_slack(&format!("{}.mean", key.path()), v).unwrap_or(ROUNDING_MS).max(ROUNDING_MS)
    };
    // From per-request arrays the derived figure is exact; from means, their rounding.
    let spread = match (run.derived.tpot_ms.method, i.e2e_mean, i.ttft_mean, i.n_avg()) {
        (Some(TpotMethod::E2eTtftTokens), Some(e2e), Some(ttft), Some(n)) if n > 1.0 => {
            (own(reported::E2E_MS, e2e) + own(reported::TTFT_MS, ttft)) / (n - 1.0)
        }
        _ => 0.0,
    };
    let slack = own(reported::TPOT_MS, c) + spread + tw * ROUNDED_REL;
    let (lo, hi) = (c - slack, c + slack + ends);
    let m = format!(
        "the rows' mean {} ms (token-weighted rows: their mean is the token-weighted TPOT, {} to {} ms with the printed digits' rounding and the ends of stream)",
        f(c),
        f(lo),
        f(hi)
    );
    if tw < lo {
        Err(format!("is below {m}"))
    } else if tw > hi {
        Err(format!("is above {m}"))
    } else {
        Ok(format!("= {m}"))
    }
}

/// The token-weighted TPOT (derived from E2E, TTFT and totals, or from per-request arrays) must
/// be one the tool's request-weighted TPOT rows allow.
///
/// Proof sketch: the token-weighted mean `T = sum d_i / sum m_i` (`d_i` a request's decode time,
/// `m_i = n_i - 1` its decode tokens) is a weighted mean of the per-request `TPOT_i = d_i / m_i`,
/// so `min TPOT_i <= T <= max TPOT_i`. Above a printed `q`-quantile `p_q` there are at most
/// `h = floor((1 - q) R) + 1` requests, each with `d_i <= d_max` (the longest E2E, or the
/// duration); the others have `d_i <= p_q x m_i`; so `T <= p_q + h x d_max / (N_out - R)`. A
/// run whose derived TPOT is above that has an output-token total too low for its TPOT rows (a
/// total that counts streamed chunks), or rows from another run. The rows can be far *above*
/// the derived figure in honest runs (short requests with long TPOTs: early EOS under load), so
/// only the upper side is a contradiction, and, when output lengths are known to be equal, the
/// two are the same number (within rounding).
///
/// A request with one output token is left out of the tools' TPOT rows but its end-of-stream
/// time is in `E2E - TTFT`: assumed at most an ordinary decode step (the rows' median or mean),
/// `R x step / (N_out - R)` is added to the upper bounds for them, and a 1.5x margin to the
/// percentile bound.
pub(super) fn tpot_bounds(
    run: &Run,
    i: &Inputs,
    cap: Option<&(f64, String)>,
    rounding: f64,
    claimed: Option<f64>,
    equal: Option<&str>,
) -> Outcome {
    let Some(rows) = run.stat(reported::TPOT_MS).filter(|s| !s.is_empty()) else {
        return skip("no TPOT rows to compare with");
    };
    let dt = &run.derived.tpot_ms;
    let (derived, how) = match dt.method {
        Some(TpotMethod::E2eTtftTokens) => (dt.mean, "e2e-ttft-tokens"),
        Some(TpotMethod::PerRequest) => (dt.token_weighted_mean, "per-request token-weighted mean"),
        _ => (None, ""),
    };
    let Some(tw) = derived.filter(|v| *v > 0.0) else {
        return skip("no token-weighted TPOT derived independently of the rows");
    };
    let (Some(n), Some(r)) = (i.output_tokens, i.successful) else {
        return skip("needs total output tokens and successful requests");
    };
    let decode_tokens = n - r;
    if decode_tokens <= 0.0 || r <= 0.0 {
        return skip("no decode tokens");
    }
    // Rounding of the printed E2E and TTFT means, spread over the tokens per request, and the
    // derived figure's own rounding to six significant digits.
    let slack = 2.0 * rounding / (n / r - 1.0).max(1.0) + ROUNDING_MS + tw * ROUNDED_REL;
    // One-token requests are not in the rows, but their end of stream is in E2E - TTFT: at most
    // an ordinary decode step each (the rows' median or mean), spread over the decode tokens.
    let step = rows.get(StatKey::P(50.0)).into_iter().chain(rows.mean()).fold(0.0, f64::max);
    let single = r * step / decode_tokens;
    let mut failed = Vec::new();
    let mut parts = Vec::new();
    let head = format!("derived TPOT {} ms ({how})", f(tw));
    if let Some(max) = rows.get(StatKey::Max) {
        let bound = (max + slack) * 1.02 + single;
        let m = format!("the TPOT rows' max {} ms", f(max));
        if tw > bound { failed.push(format!("{head} is above {m}")) } else { parts.push(format!("<= {m}")) }
    }
    if let Some(min) = rows.get(StatKey::Min) {
        let m = format!("the TPOT rows' min {} ms", f(min));
        if tw < min - slack { failed.push(format!("{head} is below {m}")) } else { parts.push(format!(">= {m}")) }
    }
    // Token-weighted rows (`tpot_weighting = "token"`) are not one value per request: no bound
    // that counts requests is drawn from them; their mean is the derived figure itself.
    let token = run.source.semantics.token_weighted_tpot();
    if let (true, Some(c)) = (token, claimed) {
        // Each request's end of stream after its last token: at most an ordinary decode step, the
        // rows' largest mean or percentile (a max is no ordinary step).
        let step =
            rows.iter().filter(|(k, _)| matches!(k, StatKey::Mean | StatKey::P(_))).fold(step, |a, (_, v)| a.max(v));
        match token_weighted_mean(run, i, tw, c, r * step / decode_tokens) {
            Ok(m) => parts.push(m),
            Err(m) => failed.push(format!("{head} {m}")),
        }
    }
    let cap = cap.filter(|_| !token);
    let floor =
        if token { None } else { rows_floor(run, rows, r, rounding, cap.as_ref().map(|c| c.0), equal.is_some()) };
    if let Some(floor) = floor {
        let m = format!("{} ms, the smallest per-request TPOT the rows allow", f(floor));
        if tw < floor - slack {
            failed.push(format!("{head} is below {m} (a token-weighted mean lies between its requests' TPOTs)"));
        } else if floor > 0.0 {
            parts.push(format!(">= {m}"));
        }
    }
    if let Some((cap, what)) = cap {
        let best = rows
            .iter()
            .filter_map(|(k, v)| match k {
                StatKey::P(p) if p > 0.0 && p < 100.0 => Some((p, v)),
                _ => None,
            })
            .map(|(p, v)| {
                let h = above_quantile(r, p / 100.0);
                (p, v, h, 1.5 * (v + slack + h * cap / decode_tokens) + single)
            })
            .min_by(|a, b| a.3.total_cmp(&b.3));
        if let Some((p, v, h, bound)) = best {
            let m = format!(
                "1.5 x (p{p} {} + {} requests above it x {what} / {} decode tokens) + one-token requests' ends = {} ms",
                f(v),
                h as u64,
                decode_tokens as u64,
                f(bound)
            );
            if tw > bound { failed.push(format!("{head} is above {m}")) } else { parts.push(format!("<= {m}")) }
        }
    }
    if let (Some(c), Some(equal), false) = (claimed, equal, token) {
        let m = format!("the rows' mean {} ms ({equal}, so the request- and token-weighted means are equal)", f(c));
        // The rows' mean is printed with the run's latency rounding too.
        if (c - tw).abs() > 0.02 * c + slack + rounding {
            failed.push(format!("{head} differs from {m}"));
        } else {
            parts.push(format!("= {m}"));
        }
    }
    if !failed.is_empty() {
        let below = claimed.is_some_and(|c| c > tw);
        let itl = i.itl_mean.filter(|_| i.itl_per == Some(ItlPer::Chunk));
        let near = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * b;
        let cause = match (itl, claimed) {
            (Some(itl), _) if near(tw, itl, 0.15) => format!(
                "the derived TPOT is the per-chunk ITL {} ms: the output-token total counts streamed chunks, not tokens",
                f(itl)
            ),
            (Some(itl), Some(c)) if near(c, itl, 0.05) && c > tw => {
                format!("the TPOT rows' mean is the per-chunk ITL {} ms: ITL was copied into the TPOT rows", f(itl))
            }
            _ if claimed.is_some_and(|c| c < tw) || rows.get(StatKey::Max).is_some_and(|m| m < tw) => {
                "the output-token total is too low for these TPOT rows (tokens counted per streamed chunk?), or the rows are from another run".into()
            }
            _ if below => "the output-token total is too high for these TPOT rows, or the latencies are in another unit, or the rows are from another run".into(),
            _ => "the output-token total or the TPOT rows are not of this run".into(),
        };
        return (Status::Fail, format!("{}: {cause}", failed.join("; ")));
    }
    if parts.is_empty() {
        return skip("the TPOT rows give no bound (no min, max or percentile with a duration)");
    }
    (Status::Pass, format!("{head} {}", parts.join(", ")))
}

/// Whether the client sent its requests with no rate limit: a printed request rate of `inf`
/// (vLLM's `Traffic request rate: inf`, its argument dump's `request_rate=inf`, a result file's
/// `"request_rate": "inf"`). An absent rate is not known to be unlimited.
pub(super) fn rate_unlimited(run: &Run) -> bool {
    run.number(workload::REQUEST_RATE).is_none()
        && run.rows.iter().any(|r| {
            // The value first: it rules out almost every row without lower-casing its label.
            let inf = r.value.as_deref().is_some_and(|v| {
                let v = v.trim().trim_matches(|c| c == '\'' || c == '"');
                v.eq_ignore_ascii_case("inf") || v.eq_ignore_ascii_case("infinity")
            });
            inf && {
                let label = r.label.to_ascii_lowercase();
                label.contains("request rate") || label.contains("request_rate")
            }
        })
}

/// The longest E2E latency the run's E2E block allows, ms: its printed max, what numpy's
/// percentiles and the mean allow ([`Sorted`]), never more than the duration.
fn e2e_max(run: &Run, i: &Inputs, cap: Option<&(f64, String)>, rounding: f64) -> Option<(f64, String)> {
    let r = i.successful.filter(|r| *r >= 1.0)? as usize;
    let cap = cap.map_or(f64::INFINITY, |c| c.0);
    let known = run.source.semantics.percentiles.is_some();
    let largest = |stat: &Stat, n: usize| {
        if !known {
            return stat.get(StatKey::Max);
        }
        let m = stat.mean()?;
        let e = rounding + 1e-9 * m;
        let max = Sorted::of(stat, n, run.source.semantics.numpy_percentiles(), e, cap)?.largest(m, e);
        max.is_finite().then_some(max)
    };
    if let Some(stat) = run.stat(reported::E2E_MS) {
        let max = largest(stat, r)?;
        return Some((max, format!("the longest E2E latency its block allows, {} ms", f(max))));
    }
    // Equal lengths `L`: `E2E_i = TTFT_i + (L - 1) TPOT_i <= TTFT_max + (L - 1) TPOT_max` (the
    // rows' largest over `R` requests: not for token-weighted rows).
    if run.source.semantics.token_weighted_tpot() {
        return None;
    }
    let l = i.n_avg()?;
    let ttft = largest(run.stat(reported::TTFT_MS)?, r)?;
    let tpot = largest(run.stat(reported::TPOT_MS)?, r)?;
    let max = (ttft + (l - 1.0) * tpot).min(cap);
    Some((max, format!("the longest TTFT + ({} - 1) x the longest TPOT their blocks allow, {} ms", f(l), f(max))))
}

/// With every request of `L` output tokens (known: [`equal_lengths`]), each request's E2E
/// latency is `TTFT_i + (L - 1) TPOT_i` (the definition of its TPOT), so the mean E2E is
/// `TTFT_mean + (L - 1) TPOT_mean` exactly: a log without E2E rows (vLLM's default
/// `--percentile-metrics ttft,tpot,itl`) is held to the slots by it.
pub(super) fn rebuilt_e2e(i: &Inputs, equal: bool) -> Option<f64> {
    let (true, None, Some(ttft), Some(tpot), Some(l)) = (equal, i.e2e_mean, i.ttft_mean, i.tool_tpot_mean, i.n_avg())
    else {
        return None;
    };
    (l >= 1.0).then_some(ttft + (l - 1.0) * tpot)
}

/// `e2e-capacity`, both sides. Upper: at most `slots` requests are in flight at once, so
/// `R x E2E_mean <= slots x D`. Lower, for a closed-loop client with no rate limit (a capped
/// concurrency, `request_rate = inf`, no failed request): a slot that frees takes the next
/// request at once, so until the last request starts every slot is busy (Graham's list-scheduling
/// bound): `D <= R x E2E_mean / slots + (1 - 1 / slots) x E2E_max`, plus the client's own time
/// between requests ([`E2E_OVERHEAD_S`] per request a slot runs, [`E2E_START_S`] to start and end).
pub(super) fn e2e_capacity(
    run: &Run,
    i: &Inputs,
    cap: Option<&(f64, String)>,
    rounding: f64,
    equal: bool,
    t: &Tolerances,
) -> Outcome {
    let mut parts = Vec::new();
    let mut failed = false;
    let mut fast = false;
    let rebuilt = rebuilt_e2e(i, equal);
    let note = rebuilt.map(|e2e| {
        format!(
            "no E2E rows: E2E {} ms = TTFT {} + ({} - 1) x TPOT {} (every request has that many output tokens)",
            f(e2e),
            f(i.ttft_mean.unwrap_or(0.0)),
            f(i.n_avg().unwrap_or(0.0)),
            f(i.tool_tpot_mean.unwrap_or(0.0))
        )
    });
    if let (Some(r), Some(e2e), Some(d), Some((c, unit))) =
        (i.successful, i.e2e_mean.or(rebuilt), i.duration_s, slots(i))
    {
        parts.extend(note);
        let busy = r * e2e / 1000.0;
        let supply = c * d;
        let ratio = if supply > 0.0 { busy / supply } else { f64::INFINITY };
        failed |= ratio > t.e2e_capacity;
        parts.push(format!(
            "{} requests x E2E {} ms = {} s in flight; {} {unit} x {} s = {} s ({})",
            r as u64,
            f(e2e),
            f(busy),
            c as u64,
            f(d),
            f(supply),
            x(ratio)
        ));
        let closed = i.max_concurrency.is_some() && i.failed == Some(0.0) && rate_unlimited(run);
        if let (true, Some((max, why))) = (closed && r >= 1.0 && d > 0.0, e2e_max(run, i, cap, rounding)) {
            let per_slot = (r / c).ceil();
            let overhead = E2E_START_S + E2E_OVERHEAD_S * per_slot;
            let longest = (r * (e2e + rounding) / c + (1.0 - 1.0 / c) * max) / 1000.0;
            let most = longest * t.e2e_capacity + overhead;
            let short = d > most;
            fast |= short;
            parts.push(format!(
                "closed loop, no rate limit: the run lasts at most {} requests x E2E {} ms / {} {unit} + (1 - 1/{}) x {why} = {} s (+{}% and {} s of the client's own time: {} s) vs {} s",
                r as u64,
                f(e2e),
                c as u64,
                c as u64,
                f(longest),
                ((t.e2e_capacity - 1.0) * 100.0).round(),
                f(overhead),
                f(most),
                f(d)
            ));
        }
    }
    // SGLang prints `Concurrency:` as `sum_i E2E_i / D`: it is the in-flight time over the
    // duration, both ways (a mean E2E halved beside it is a contradiction).
    if let (true, Some(conc), Some(r), Some(e2e), Some(d)) = (
        run.source.tool.contains("sglang"),
        run.number(reported::MEAN_IN_FLIGHT),
        i.successful,
        i.e2e_mean,
        i.duration_s,
    ) && d > 0.0
        && conc > 0.0
    {
        let busy = r * e2e / 1000.0 / d;
        let ratio = busy / conc;
        let off = ratio > t.e2e_capacity || ratio < 1.0 / t.e2e_capacity;
        failed |= off && ratio > 1.0;
        fast |= off && ratio < 1.0;
        parts.push(format!(
            "printed Concurrency {} = sum of E2E / D; {} requests x E2E {} ms / {} s = {} ({})",
            f(conc),
            r as u64,
            f(e2e),
            f(d),
            f(busy),
            x(ratio)
        ));
    }
    if let (Some(conc), Some(c)) = (run.number(reported::MEAN_IN_FLIGHT), i.max_concurrency) {
        failed |= conc > c * t.e2e_capacity;
        parts.push(format!("printed Concurrency {} vs max concurrency {}", f(conc), c as u64));
    }
    if parts.is_empty() {
        return skip("needs successful requests, mean E2E latency and duration");
    }
    let msg = parts.join("; ");
    if failed {
        (Status::Fail, format!("{msg}: more time in flight than the slots allow (allowed {}x)", t.e2e_capacity))
    } else if fast {
        (
            Status::Fail,
            format!(
                "{msg}: the requests are too short to fill the run (a latency in seconds under a millisecond name, or a wrong E2E, duration or request count)"
            ),
        )
    } else {
        (Status::Pass, msg)
    }
}

/// The client's own time per request between one request's end and the next one's start on a
/// slot, s (event loop, prompt preparation): generous beside the ~1 ms a Python client takes.
const E2E_OVERHEAD_S: f64 = 0.05;
/// The client's time to start the run and to gather its results, s.
const E2E_START_S: f64 = 0.5;

pub(super) fn tpot_agreement(run: &Run, i: &Inputs, claimed: Option<f64>, t: &Tolerances) -> Outcome {
    let Some(c) = claimed else { return skip("no TPOT claimed (no TPOT row)") };
    let derived = &run.derived.tpot_ms;
    let independent = matches!(derived.method, Some(TpotMethod::E2eTtftTokens) | Some(TpotMethod::PerRequest));
    let Some(d) = derived.mean.filter(|_| independent) else {
        return skip("no TPOT derived independently of the claimed one");
    };
    let rel = (c - d).abs() / d;
    let msg = format!(
        "claimed TPOT {} ms vs derived {} ms ({}, {:.1}% apart)",
        f(c),
        f(d),
        derived.method.map_or("", |m| m.as_str()),
        rel * 100.0
    );
    if rel <= t.tpot_agreement {
        return (Status::Pass, msg);
    }
    let looks_like_itl =
        i.itl_mean.is_some_and(|itl| (itl - c).abs() <= 0.05 * itl) && i.itl_per == Some(ItlPer::Chunk) && c > d;
    let why = if looks_like_itl {
        format!(
            "the claimed figure equals the per-chunk mean ITL {} ms: ITL was copied as TPOT",
            f(i.itl_mean.unwrap_or(0.0))
        )
    } else {
        "if output lengths vary, the tool's request-weighted mean differs from the token-weighted derivation; otherwise the claimed figure is not a TPOT of this run".into()
    };
    (Status::Fail, format!("{msg}: {why}"))
}

pub(super) fn itl_is_per_chunk(run: &Run, i: &Inputs, t: &Tolerances) -> Outcome {
    let Some(itl) = i.itl_mean else { return skip("no mean ITL") };
    match i.itl_per {
        Some(ItlPer::Token) => return skip("this tool and backend time ITL per token"),
        None => return skip("unknown how this tool times ITL"),
        Some(ItlPer::Chunk) => {}
    }
    let Some(tpot) = run.derived.tpot_ms.mean.filter(|m| *m > 0.0) else { return skip("no TPOT") };
    let ratio = itl / tpot;
    let accept = run
        .number(reported::ACCEPT_LENGTH)
        .map(|a| format!("; the server reports accept length {}", f(a)))
        .unwrap_or_default();
    if ratio > t.itl_chunk_ratio {
        (
            Status::Fail,
            format!(
                "mean ITL {} ms is {} TPOT {} ms: streamed chunks carry ~{} tokens (speculative decoding or stream batching); ITL is per chunk, never a TPOT{accept}",
                f(itl),
                x(ratio),
                f(tpot),
                f(ratio)
            ),
        )
    } else {
        (
            Status::Pass,
            format!("mean ITL {} ms is {} TPOT {} ms: about one token per chunk{accept}", f(itl), x(ratio), f(tpot)),
        )
    }
}
