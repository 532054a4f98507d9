//! Deriving TPOT and the figures that follow from it, from the run's own totals.
//!
//! Order of preference (never a printed ITL):
//! 1. per-request arrays (result files with details): exact `(E2E_i - TTFT_i) / (n_i - 1)`;
//! 2. means and totals: `(E2E_mean - TTFT_mean) / (N_out / R - 1)`;
//! 3. the tool's own TPOT rows (computed per token by both tools);
//! 4. nothing: `null`, with the reason.

pub mod requests;

use crate::number::{round, show};
use crate::report::{
    ChunkStats, Derived, DerivedE2e, DerivedTpot, ItlPer, PerRequest, Requests, Run, StatKey, TpotMethod,
};
use crate::vocabulary::{reported, totals, workload};

/// Figures of a run that the derivation reads, gathered once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Inputs {
    pub successful: Option<f64>,
    pub failed: Option<f64>,
    pub duration_s: Option<f64>,
    pub output_tokens: Option<f64>,
    pub max_concurrency: Option<f64>,
    pub ttft_mean: Option<f64>,
    pub e2e_mean: Option<f64>,
    pub tool_tpot_mean: Option<f64>,
    pub itl_mean: Option<f64>,
    pub itl_per: Option<ItlPer>,
    /// Mean output tokens per request, when the tool prints that instead of a total.
    pub per_request_tokens: Option<f64>,
}

impl Inputs {
    pub fn of(run: &Run) -> Inputs {
        let mean = |key| run.stat_mean(key);
        Inputs {
            successful: run.number(totals::SUCCESSFUL_REQUESTS),
            failed: run.number(totals::FAILED_REQUESTS),
            duration_s: run.number(totals::DURATION_S),
            output_tokens: run.number(totals::OUTPUT_TOKENS),
            max_concurrency: run.number(workload::MAX_CONCURRENCY),
            ttft_mean: mean(reported::TTFT_MS),
            // A measured E2E: printed, or the mean of the per-request latencies.
            e2e_mean: mean(reported::E2E_MS).or(run.derived.per_request.as_ref().and_then(|p| p.e2e_mean_ms)),
            tool_tpot_mean: mean(reported::TPOT_MS),
            itl_mean: mean(reported::ITL_MS),
            itl_per: run.source.semantics.itl,
            per_request_tokens: run.number(totals::OUTPUT_TOKENS_PER_REQUEST),
        }
    }

    /// Mean output tokens per successful request, `N_out / R`.
    pub fn n_avg(&self) -> Option<f64> {
        match (self.output_tokens, self.successful) {
            (Some(n), Some(r)) if r > 0.0 => Some(n / r),
            _ => self.per_request_tokens,
        }
    }
}

/// Compute the derived figures of a run.
pub fn derive(run: &Run) -> Derived {
    let mut d = Derived::default();
    let per_request = match &run.requests {
        Some(req) => {
            let (tpot, summary) = per_request(req, run.source.semantics.itl);
            d.per_request = Some(summary);
            tpot
        }
        None => None,
    };
    let i = {
        let mut i = Inputs::of(run);
        if i.e2e_mean.is_none() {
            i.e2e_mean = d.per_request.as_ref().and_then(|p| p.e2e_mean_ms);
        }
        i
    };
    let undefined = |d: &mut Derived, name: &str, why: String| {
        d.undefined.insert(name.to_string(), why);
    };

    d.tpot_ms = match (one_chunk_per_request(&i), per_request) {
        (Some(why), _) => DerivedTpot { reason: Some(why), ..Default::default() },
        (None, Some(t)) => t,
        (None, None) => tpot_from_run(run, &i),
    };
    let tpot = d.tpot_ms.mean;

    match tpot {
        Some(t) if t > 0.0 => d.per_user_decode_tok_per_s = Some(round(1000.0 / t)),
        _ => undefined(&mut d, "per_user_decode_tok_per_s", "TPOT is undefined".into()),
    }

    match (i.output_tokens, i.duration_s) {
        (Some(n), Some(s)) if s > 0.0 => d.output_tok_per_s = Some(round(n / s)),
        (Some(_), Some(_)) => undefined(&mut d, "output_tok_per_s", "the duration is zero".into()),
        _ => undefined(
            &mut d,
            "output_tok_per_s",
            missing(&[("total output tokens", i.output_tokens), ("duration", i.duration_s)]),
        ),
    }
    match (i.successful, i.duration_s) {
        (Some(r), Some(s)) if s > 0.0 => d.request_per_s = Some(round(r / s)),
        (Some(_), Some(_)) => undefined(&mut d, "request_per_s", "the duration is zero".into()),
        _ => undefined(
            &mut d,
            "request_per_s",
            missing(&[("successful requests", i.successful), ("duration", i.duration_s)]),
        ),
    }
    // Little's law, from the measured E2E only: an E2E rebuilt from the claimed TPOT would make
    // the capacity checks circular.
    match (i.successful, i.e2e_mean, i.duration_s) {
        (Some(r), Some(e), Some(s)) if s > 0.0 => {
            let m = r * e / 1000.0 / s;
            d.mean_in_flight = Some(round(m));
            match i.max_concurrency {
                Some(c) if c > 0.0 => d.slot_utilization = Some(round(m / c)),
                _ => undefined(&mut d, "slot_utilization", "no max concurrency was set or printed".into()),
            }
        }
        _ => {
            let why = missing(&[
                ("successful requests", i.successful),
                ("mean E2E latency", i.e2e_mean),
                ("duration", i.duration_s),
            ]);
            undefined(&mut d, "mean_in_flight", why.clone());
            undefined(&mut d, "slot_utilization", why);
        }
    }
    let per_request_chunks = d.per_request.as_ref().and_then(|p| p.tokens_per_chunk.as_ref()).map(|c| c.mean);
    // ITL / TPOT, as docs/metrics.md defines it (decode tokens per later chunk); the per-request
    // arrays' own figure (output tokens over all chunks) stands in derived.per_request.
    match (i.itl_mean, tpot, i.itl_per) {
        (Some(itl), Some(t), Some(ItlPer::Chunk)) if t > 0.0 && itl > 0.0 => d.tokens_per_chunk = Some(round(itl / t)),
        (None, _, Some(ItlPer::Chunk)) if per_request_chunks.is_some() => d.tokens_per_chunk = per_request_chunks,
        (_, _, Some(ItlPer::Token)) => {
            undefined(&mut d, "tokens_per_chunk", "this tool and backend time ITL per token, not per chunk".into())
        }
        (None, _, _) => undefined(&mut d, "tokens_per_chunk", "no mean ITL was printed".into()),
        _ => undefined(&mut d, "tokens_per_chunk", "needs a per-chunk ITL and a TPOT".into()),
    }
    if i.e2e_mean.is_none()
        && let (Some(ttft), Some(t), Some(n)) = (i.ttft_mean, i.tool_tpot_mean, i.n_avg())
        && n >= 1.0
    {
        d.e2e_ms = Some(DerivedE2e {
            mean: round(ttft + (n - 1.0) * t),
            approximate: true,
            formula: format!(
                "TTFT {} + ({} tokens/request - 1) x TPOT {} (no E2E latency was printed)",
                show(ttft),
                show(n),
                show(t)
            ),
        });
    }
    d
}

/// numpy's default percentile: linear interpolation between the closest ranks.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// The per-request TPOT of `req` as [`derive`] computes it for one run: what `aggregate` pools
/// the requests of several repetitions with, so that the pooled figure has the runs' meaning.
pub fn per_request_tpot(req: &Requests, itl: Option<ItlPer>) -> Option<DerivedTpot> {
    per_request(req, itl).0
}

/// Request `i`'s TTFT, output length and E2E latency (from the latency list, else its TTFT plus
/// the sum of its gaps), when all three are finite numbers.
pub fn request_times(req: &Requests, i: usize) -> Option<(f64, f64, f64)> {
    let finite = |x: Option<f64>| x.filter(|x| x.is_finite());
    let (ttft, out) = (finite(req.ttft_ms[i])?, finite(req.output_len[i])?);
    let e2e = match (&req.latency_ms, &req.gap_sums_ms) {
        (Some(lat), _) => lat[i],
        (None, Some(sums)) => Some(ttft + sums[i]),
        (None, None) => None,
    };
    Some((ttft, out, finite(e2e)?))
}

/// Exact per-request TPOT, `(E2E_i - TTFT_i) / (n_i - 1)` for every successful request with
/// `n_i > 1`; request-weighted statistics (the tools' convention) and the token-weighted mean.
fn per_request(req: &Requests, itl: Option<ItlPer>) -> (Option<DerivedTpot>, PerRequest) {
    let n = req.output_len.len();
    let (mut failed, mut single) = (0, 0);
    let mut tpots = Vec::with_capacity(n);
    let mut e2es = Vec::with_capacity(n);
    let mut chunks = Vec::new();
    let (mut decode_sum, mut token_sum) = (0.0, 0.0);
    let e2e_source = if req.latency_ms.is_some() { "latencies" } else { "ttft + sum of gaps" };
    for i in 0..n {
        if req.failed.as_ref().is_some_and(|f| f[i]) {
            failed += 1;
            continue;
        }
        // A value that is no finite number leaves its request out (`per-request-consistency`
        // rejects the run for it).
        let Some((ttft, out, e2e)) = request_times(req, i) else { continue };
        e2es.push(e2e);
        if let Some(counts) = &req.gap_counts
            && out >= 1.0
        {
            chunks.push(out / (counts[i] as f64 + 1.0));
        }
        if out <= 1.0 {
            single += 1;
            continue;
        }
        tpots.push((e2e - ttft) / (out - 1.0));
        decode_sum += e2e - ttft;
        token_sum += out - 1.0;
    }
    let mean = |v: &[f64]| if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) };
    let tokens_per_chunk = if itl == Some(ItlPer::Chunk) && !chunks.is_empty() {
        let m = mean(&chunks).expect("not empty");
        chunks.sort_by(f64::total_cmp);
        Some(ChunkStats { mean: round(m), p50: round(percentile(&chunks, 50.0)) })
    } else {
        None
    };
    let summary = PerRequest {
        requests: n,
        failed,
        single_token: single,
        e2e_source: e2e_source.into(),
        e2e_mean_ms: mean(&e2es).map(round),
        tokens_per_chunk,
    };
    if tpots.is_empty() {
        return (None, summary);
    }
    let m = mean(&tpots).expect("not empty");
    tpots.sort_by(f64::total_cmp);
    let tpot = DerivedTpot {
        mean: Some(round(m)),
        method: Some(TpotMethod::PerRequest),
        p50: Some(round(percentile(&tpots, 50.0))),
        p90: Some(round(percentile(&tpots, 90.0))),
        p99: Some(round(percentile(&tpots, 99.0))),
        token_weighted_mean: Some(round(decode_sum / token_sum)),
        formula: Some(format!(
            "mean over {} requests of (E2E_i - TTFT_i) / (output_len_i - 1), E2E_i from {e2e_source} ({failed} failed and {single} single-token requests left out)",
            tpots.len()
        )),
        reason: None,
        ..Default::default()
    };
    (Some(tpot), summary)
}

fn missing(items: &[(&str, Option<f64>)]) -> String {
    let names: Vec<&str> = items.iter().filter(|(_, v)| v.is_none()).map(|(n, _)| *n).collect();
    if names.is_empty() { "inputs out of range".into() } else { format!("missing: {}", names.join(", ")) }
}

/// Why no TPOT can be measured when every request's output came in one streamed chunk: ITL is
/// timed per chunk and its mean is exactly 0 (the clients print 0 for an empty list of gaps, so no
/// request had a second chunk) while requests have more than one token. The whole output was
/// decoded before its one chunk arrived: E2E - TTFT is the time to receive that chunk, and any
/// TPOT from it (the tool's row included) is not a decode time.
fn one_chunk_per_request(i: &Inputs) -> Option<String> {
    let n = i.n_avg().filter(|n| *n > 1.0)?;
    (i.itl_per == Some(ItlPer::Chunk) && i.itl_mean == Some(0.0)).then(|| {
        format!(
            "the output came in one streamed chunk per request (mean ITL per chunk 0, {} tokens per request): it was decoded before that chunk arrived, so this run cannot measure a TPOT",
            show(n)
        )
    })
}

fn tpot_from_run(run: &Run, i: &Inputs) -> DerivedTpot {
    let null = |reason: String| DerivedTpot { reason: Some(reason), ..Default::default() };
    if i.successful == Some(0.0) {
        return null("no successful requests: every mean is undefined".into());
    }
    if let (Some(e2e), Some(ttft), Some(n)) = (i.e2e_mean, i.ttft_mean, i.n_avg()) {
        if n <= 1.0 {
            return null(format!(
                "mean output length is {} token(s) per request: TPOT is undefined for one-token outputs",
                show(n)
            ));
        }
        let decode = e2e - ttft;
        if decode <= 0.0 {
            return null(format!("mean E2E latency {} ms is not above mean TTFT {} ms", show(e2e), show(ttft)));
        }
        let tokens = match (i.output_tokens, i.successful) {
            (Some(n_out), Some(r)) if r > 0.0 => format!("{} tokens / {} requests", show(n_out), show(r)),
            _ => format!("{} tokens per request", show(n)),
        };
        return DerivedTpot {
            mean: Some(round(decode / (n - 1.0))),
            method: Some(TpotMethod::E2eTtftTokens),
            formula: Some(format!("(E2E {} - TTFT {}) / ({tokens} - 1)", show(e2e), show(ttft))),
            ..Default::default()
        };
    }
    if let Some(st) = run.stat(reported::TPOT_MS) {
        let hand_written = run.source.format == crate::report::Format::Report;
        match st.mean() {
            Some(m) if m > 0.0 => {
                let (method, formula) = if hand_written {
                    (TpotMethod::Claimed, format!("the report's tpot_ms.mean {}, as claimed (add e2e_ms to derive it)", show(m)))
                } else {
                    (TpotMethod::ToolTpot, format!("the tool's Mean TPOT row, {} (computed per request as (latency - ttft) / (output_len - 1))", show(m)))
                };
                return DerivedTpot {
                    mean: Some(m),
                    method: Some(method),
                    p50: st.get(StatKey::P(50.0)),
                    p90: st.get(StatKey::P(90.0)),
                    p99: st.get(StatKey::P(99.0)),
                    formula: Some(formula),
                    ..Default::default()
                };
            }
            Some(_) => return null("the tool printed a mean TPOT of 0: no request had more than one output token, or the run did not stream".into()),
            None => {}
        }
    }
    if let Some(t) = tpot_from_median_ttft(run, i) {
        return t;
    }
    let mut lacking = Vec::new();
    if i.e2e_mean.is_none() {
        lacking.push("mean E2E latency");
    }
    if i.ttft_mean.is_none() {
        lacking.push("mean TTFT");
    }
    if i.output_tokens.is_none() {
        lacking.push("total output tokens");
    }
    if i.successful.is_none() {
        lacking.push("successful requests");
    }
    null(format!("no TPOT row, and {} to derive one; ITL is never used as TPOT", lacking.join(", ")))
}

/// Method `e2e-median-ttft-tokens`: a run with a mean E2E latency and its token totals but only
/// the median TTFT (SGLang 0.3.6.post3-0.4.1 result lines write `median_ttft_ms` and no mean). The
/// median stands in for the mean: `(E2E_mean - TTFT_p50) / (n_avg - 1)`. That is off from method 2
/// by exactly `(TTFT_mean - TTFT_p50) / (n_avg - 1)`, which the run cannot tell; the figure is
/// flagged `approximate` with that reason and the size of the effect. None when the run has a mean
/// TTFT (method 2 applies) or no median TTFT.
fn tpot_from_median_ttft(run: &Run, i: &Inputs) -> Option<DerivedTpot> {
    if i.ttft_mean.is_some() {
        return None;
    }
    let ttft = run.stat(reported::TTFT_MS)?.get(StatKey::P(50.0)).filter(|t| t.is_finite())?;
    let (e2e, n) = (i.e2e_mean?, i.n_avg()?);
    let null = |reason: String| DerivedTpot { reason: Some(reason), ..Default::default() };
    if n <= 1.0 {
        return Some(null(format!(
            "mean output length is {} token(s) per request: TPOT is undefined for one-token outputs",
            show(n)
        )));
    }
    if e2e - ttft <= 0.0 {
        return Some(null(format!(
            "mean E2E latency {} ms is not above the median TTFT {} ms, the only TTFT the run gives: no TPOT can be estimated",
            show(e2e),
            show(ttft)
        )));
    }
    let tokens = match (i.output_tokens, i.successful) {
        (Some(n_out), Some(r)) if r > 0.0 => format!("{} tokens / {} requests", show(n_out), show(r)),
        _ => format!("{} tokens per request", show(n)),
    };
    Some(DerivedTpot {
        mean: Some(round((e2e - ttft) / (n - 1.0))),
        method: Some(TpotMethod::E2eMedianTtftTokens),
        formula: Some(format!("(E2E {} - median TTFT {}) / ({tokens} - 1)", show(e2e), show(ttft))),
        approximate: Some(format!(
            "the run gives only the median TTFT, which stands in for the mean: the TPOT is off by (mean TTFT - median TTFT) / {} decode tokens, {} ms for every ms the two differ",
            show(n - 1.0),
            show(1.0 / (n - 1.0))
        )),
        ..Default::default()
    })
}
