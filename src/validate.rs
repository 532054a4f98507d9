//! Consistency rules: a run must agree with its own totals.
//!
//! Every rule has a stable id and severity and runs on every run, whatever its source. A rule whose
//! inputs are absent is `skipped`, never `pass`. A failed `error` rule rejects the run; with
//! `strict`, a failed `warning` does too. `info` never rejects. A failed `key-figures` makes the
//! run `unusable` instead (nothing to paste: exit 3).
//!
//! An error rule rejects only what is provably contradictory for any honest run: each says its
//! proof sketch. The tools' TPOT rows are request-weighted (a mean over requests of
//! `(E2E_i - TTFT_i) / (n_i - 1)`), the E2E derivation token-weighted; with output lengths that
//! vary (early EOS), no bound between the two holds in one direction, so the rules use the ones
//! that hold for any lengths (a weighted mean lies between its values; no request decodes a token
//! longer than it lives) and the exact ones only when every length is known to be equal.

use crate::derive::{Inputs, show as f};
use crate::report::{
    Check, Figure, Figures, Format, ItlPer, Run, Severity, Stat, StatKey, Status, TokenCount, TpotMethod, Verdict,
};
use crate::vocabulary::{self, Key, Kind, reported, totals, workload};

/// Tolerances of the rules (defaults in [`Tolerances::default`], flags in the CLI).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// `decode-capacity` and `decode-within-e2e`: how far a claimed TPOT may exceed its bound.
    pub capacity: f64,
    /// `e2e-capacity`: how far `R x E2E` may exceed `C x D` (and `Concurrency:` exceed `C`).
    pub e2e_capacity: f64,
    /// `throughput-totals`: relative slack beyond 2-decimal rounding.
    pub throughput: f64,
    /// `tpot-agreement`: relative difference between claimed and derived TPOT.
    pub tpot_agreement: f64,
    /// `itl-is-per-chunk`: ITL / TPOT above this means chunks carry several tokens.
    pub itl_chunk_ratio: f64,
    /// `token-count-source`: relative difference between server and retokenized totals.
    pub token_count: f64,
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances {
            capacity: 1.5,
            e2e_capacity: 1.05,
            throughput: 0.005,
            tpot_agreement: 0.10,
            itl_chunk_ratio: 1.3,
            token_count: 0.05,
        }
    }
}

/// Options of the validation stage.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Policy {
    pub tolerances: Tolerances,
    /// Failed warnings reject the run too.
    pub strict: bool,
}

/// The ids of every rule, in the order they are reported.
pub const RULES: &[(&str, Severity)] = &[
    ("key-figures", Severity::Error),
    ("complete-block", Severity::Warning),
    ("decode-capacity", Severity::Error),
    ("decode-within-e2e", Severity::Error),
    ("tpot-bounds", Severity::Error),
    ("e2e-capacity", Severity::Error),
    ("latency-order", Severity::Error),
    ("distribution-possible", Severity::Error),
    ("finite-values", Severity::Error),
    ("physical-range", Severity::Warning),
    ("throughput-totals", Severity::Warning),
    ("tpot-agreement", Severity::Warning),
    ("itl-is-per-chunk", Severity::Info),
    ("token-count-source", Severity::Warning),
    ("failed-requests", Severity::Warning),
    ("per-request-consistency", Severity::Error),
];

type Outcome = (Status, String);

fn skip(why: impl Into<String>) -> Outcome {
    (Status::Skipped, why.into())
}

/// Half a unit of the last printed decimal: the tools print latencies with 2 decimals.
const ROUNDING_MS: f64 = 0.005;

/// The rounding of a run's printed latencies, ms: 2 decimals of ms, except guidellm's console,
/// which prints request latency in seconds with one decimal (half of 0.1 s).
fn rounding_ms(run: &Run) -> f64 {
    if run.source.parser == "guidellm-console" { 50.0 } else { ROUNDING_MS }
}

/// Run every rule and set `checks`, `verdict` and whether the TPOT could be verified.
pub fn validate(run: &mut Run, policy: &Policy) {
    let t = &policy.tolerances;
    let i = Inputs::of(run);
    let claimed = run.stat(reported::TPOT_MS).and_then(Stat::mean).filter(|m| *m > 0.0);
    let equal = equal_lengths(run, &i);
    let outcomes: [Outcome; 16] = [
        key_figures(run, &i),
        complete_block(run),
        decode_capacity(&i, claimed, equal.as_deref(), t),
        decode_within_e2e(run, &i, claimed, equal.as_deref(), t),
        tpot_bounds(run, &i, claimed, equal.as_deref()),
        e2e_capacity(run, &i, t),
        latency_order(run, &i),
        distribution_possible(run, &i),
        finite_values(run),
        physical_range(run),
        throughput_totals(run, &i, t),
        tpot_agreement(run, &i, claimed, t),
        itl_is_per_chunk(run, &i, t),
        token_count_source(run, t),
        failed_requests(&i),
        per_request_consistency(run),
    ];
    run.checks = RULES
        .iter()
        .zip(outcomes)
        .map(|((id, severity), (status, message))| Check { id: id.to_string(), severity: *severity, status, message })
        .collect();
    // Only a dstack document has it (listed as skipped on every other run, it would say nothing).
    if let Some((status, message)) = dstack_model(run) {
        run.checks.push(Check { id: "dstack-model".into(), severity: Severity::Error, status, message });
    }
    let rejects = |c: &Check| {
        c.status == Status::Fail
            && (c.severity == Severity::Error || (policy.strict && c.severity == Severity::Warning))
    };
    let unusable = run.checks.first().is_some_and(|c| c.id == "key-figures" && c.status == Status::Fail);
    run.verdict = if unusable {
        Verdict::Unusable
    } else if run.checks.iter().any(rejects) {
        Verdict::Rejected
    } else {
        Verdict::Accepted
    };
    mark_verified(run, equal.is_some());
}

/// `derived.tpot_ms.verified`: a derived figure is; the tool's or a report's claim only when a
/// rule tested it against an independent figure (equal output lengths make the decode work of
/// the claimed mean exact: `decode-capacity`).
fn mark_verified(run: &mut Run, equal: bool) {
    let tested = |id: &str| run.checks.iter().any(|c| c.id == id && c.status != Status::Skipped);
    let capacity_tested = equal && tested("decode-capacity");
    let lifetime = run
        .checks
        .iter()
        .find(|c| c.id == "decode-within-e2e" && c.status != Status::Skipped)
        .map(|c| format!(" ({})", c.message))
        .unwrap_or_default();
    let tp = &mut run.derived.tpot_ms;
    if tp.mean.is_none() {
        tp.verified = None;
        tp.unverified_reason = None;
        return;
    }
    let whose = match tp.method {
        // Derived from measured figures (an approximate one says so in `approximate`).
        Some(TpotMethod::PerRequest | TpotMethod::E2eTtftTokens | TpotMethod::E2eMedianTtftTokens) | None => {
            tp.verified = Some(true);
            tp.unverified_reason = None;
            return;
        }
        Some(TpotMethod::ToolTpot) => "the tool's",
        Some(TpotMethod::Claimed) => "the report's",
    };
    if capacity_tested {
        tp.verified = Some(true);
        tp.unverified_reason = None;
    } else {
        tp.verified = Some(false);
        tp.unverified_reason = Some(format!(
            "{whose} claim, unverified: no E2E latency to derive TPOT from, and output lengths not known to be equal; the totals then bound a request-weighted mean TPOT only by a request's lifetime{lifetime}, which does not tell a right TPOT from a wrong one"
        ));
    }
}

/// Why every successful request is known to have the same output length, when it is: the
/// requested length `L` is each request's cap (`max_tokens`), so `N_out = R x L` leaves no room
/// for a shorter one. Read from hand-written reports, whose requested output length is a cap
/// (dstack's preset reports: fixed-length `ignore_eos` runs).
fn equal_lengths(run: &Run, i: &Inputs) -> Option<String> {
    if run.source.format != Format::Report {
        return None;
    }
    let l = run.number(workload::OUTPUT_LEN)?;
    let (n, r) = (i.output_tokens?, i.successful?);
    (r >= 1.0 && l >= 1.0 && (n - r * l).abs() < 0.5).then(|| {
        format!(
            "every request has {} output tokens ({} tokens = {} requests x the requested {}, each request's cap)",
            l as u64, n as u64, r as u64, l as u64
        )
    })
}

/// Parsers of tools that compute percentiles with numpy's default (linear interpolation between
/// closest ranks) over the successful requests' E2E latencies: `vllm bench serve`
/// (`np.percentile`) and `sglang.bench_serving` (`np.percentile`), stdout and result files.
const NUMPY_PERCENTILES: &[&str] =
    &["vllm-bench-serve", "vllm-result-json", "sglang-bench-serving", "sglang-result-jsonl"];

/// The largest of `n` values that numpy's interpolated `q`-percentile `p` allows, when the
/// percentile falls between the two largest values: `p = s[n-2] + f (s[n-1] - s[n-2])` with
/// `f = q (n - 1) - (n - 2)`, so `s[n-1] <= p / f` (the values are non-negative). None when
/// the percentile lies lower (more than one value can be above it, unbounded).
fn max_from_percentile(p: f64, q: f64, n: f64) -> Option<f64> {
    if n < 2.0 {
        return None;
    }
    let rank = q * (n - 1.0);
    let f = rank - (n - 2.0);
    (rank.floor() == n - 2.0 && f > 0.0).then(|| p / f)
}

/// The longest any request can have spent decoding, ms: its E2E latency is at most the
/// printed maximum (or the maximum numpy's p99 over `R` requests allows), and never more than
/// the benchmark's duration.
fn decode_cap(run: &Run, i: &Inputs) -> Option<(f64, String)> {
    let e2e = run.stat(reported::E2E_MS);
    if let Some(max) = e2e.and_then(|s| s.get(StatKey::Max)) {
        return Some((max + rounding_ms(run), format!("the longest E2E latency, {} ms", f(max))));
    }
    let from_p99 = match (e2e.and_then(|s| s.get(StatKey::P(99.0))), i.successful) {
        (Some(p99), Some(r)) if NUMPY_PERCENTILES.contains(&run.source.parser.as_str()) => {
            max_from_percentile(p99 + rounding_ms(run), 0.99, r).map(|m| {
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

/// A dstack document (`check` of a preset report, `trial.json`, `final_report.json`) must be what
/// dstack's own model accepts: dstack would refuse to store it otherwise (see [`crate::dstack_model`]).
/// Proof: each violation is a validator of dstack 0.22.5's pydantic model that fails on the
/// document's own values; no tolerance.
/// Run on dstack documents only (`None` for other runs).
fn dstack_model(run: &Run) -> Option<Outcome> {
    Some(match crate::dstack_model::violations(run)? {
        v if v.is_empty() => (Status::Pass, "dstack's model accepts the document".into()),
        v => (Status::Fail, format!("dstack's model would refuse it: {}", v.join("; "))),
    })
}

/// A ratio in a message: `5.82x`.
fn x(r: f64) -> String {
    format!("{r:.2}x")
}

/// Concurrency slots available: the client's cap, and never more than the requests.
fn slots(i: &Inputs) -> Option<(f64, &'static str)> {
    let r = i.successful?;
    Some(match i.max_concurrency {
        Some(c) if c > 0.0 && c < r => (c, "slots"),
        Some(_) => (r, "slots"),
        None => (r, "requests (no concurrency cap)"),
    })
}

/// Nothing usable is not accepted. Proof sketch: not a contradiction but an absence; a run
/// whose TPOT, TTFT and throughputs are all unknown (every value unreadable or not finite, no
/// successful request, or a cut-off block that lost what TPOT needs) has nothing to paste.
fn key_figures(run: &Run, i: &Inputs) -> Outcome {
    let d = &run.derived;
    if i.successful == Some(0.0) {
        return (
            Status::Fail,
            format!(
                "no request succeeded ({} failed): TPOT, TTFT, E2E and every rate are undefined",
                i.failed.map_or("all".into(), |f| (f as u64).to_string())
            ),
        );
    }
    let tpot_why = || d.tpot_ms.reason.clone().unwrap_or_else(|| "TPOT cannot be derived".into());
    if let Some(t) = &run.source.truncated {
        if d.tpot_ms.mean.is_none() {
            return (
                Status::Fail,
                format!(
                    "the block was cut off after line {} ({}), before what TPOT needs: {}",
                    t.after_line,
                    t.reason,
                    tpot_why()
                ),
            );
        }
    }
    let any_stat = |key| run.stat(key).and_then(|s| s.iter().next()).map(|(_, v)| v);
    let key = [
        ("TPOT (derived.tpot_ms.mean, or the TPOT rows)", d.tpot_ms.mean.or(any_stat(reported::TPOT_MS))),
        ("TTFT (reported.ttft_ms)", any_stat(reported::TTFT_MS)),
        ("E2E latency (reported.e2e_ms)", any_stat(reported::E2E_MS)),
        ("output throughput", d.output_tok_per_s.or(run.number(reported::OUTPUT_TOK_PER_S))),
        ("request throughput", d.request_per_s.or(run.number(reported::REQUEST_PER_S))),
    ];
    let have: Vec<&str> = key.iter().filter(|(_, v)| v.is_some()).map(|(n, _)| *n).collect();
    if have.is_empty() {
        return (
            Status::Fail,
            format!(
                "no usable key figure: missing {} (absent, unreadable or not finite); {}",
                key.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
                tpot_why()
            ),
        );
    }
    let missing: Vec<&str> = key.iter().filter(|(_, v)| v.is_none()).map(|(n, _)| *n).collect();
    let more = if missing.is_empty() { String::new() } else { format!("; missing {}", missing.join(", ")) };
    (Status::Pass, format!("usable: {}{more}", have.join(", ")))
}

/// A cut-off block is a warning: truncation is no contradiction, and the rows printed before
/// the cut are right. When the cut took what TPOT needs, `key-figures` makes the run unusable.
fn complete_block(run: &Run) -> Outcome {
    if !run.source.format.is_text() {
        return skip("not a text block");
    }
    let Some(t) = &run.source.truncated else {
        return (
            Status::Pass,
            format!(
                "the block is complete: it ends at line {} (its closing line, or the last line of its tables)",
                run.source.last_line.unwrap_or(0)
            ),
        );
    };
    let has = |k: Key| (k.path(), run.has(k));
    let key = [
        has(totals::SUCCESSFUL_REQUESTS),
        has(totals::DURATION_S),
        has(totals::OUTPUT_TOKENS),
        has(reported::TTFT_MS),
        ("reported.tpot_ms or reported.e2e_ms", run.has(reported::TPOT_MS) || run.has(reported::E2E_MS)),
        has(reported::ITL_MS),
    ];
    let missing: Vec<&str> = key.iter().filter(|(_, present)| !present).map(|(n, _)| *n).collect();
    let what = if missing.is_empty() {
        "no key figure is missing; rows after the cut (if any) are not in the report".to_string()
    } else {
        format!("missing: {}", missing.join(", "))
    };
    (Status::Fail, format!("the block was cut off after line {} ({}); {what}", t.after_line, t.reason))
}

/// Proof sketch: a request decodes its `n_i - 1` tokens in `(n_i - 1) x TPOT_i` ms, within the
/// run, and at most `slots` requests are in flight at once, so `sum (n_i - 1) x TPOT_i <= slots x
/// D`. The tools' mean TPOT is request-weighted (`mean_i TPOT_i`); it equals the token-weighted
/// `sum (n_i - 1) TPOT_i / (N_out - R)` only when every request has the same length, so the rule
/// runs only when that is known ([`equal_lengths`]). Otherwise a few 2-token requests with
/// TPOTs of seconds (early EOS under load) raise the request-weighted mean without decode work:
/// no bound from the totals holds, and the rule is skipped (the TPOT is then marked unverified).
fn decode_capacity(i: &Inputs, claimed: Option<f64>, equal: Option<&str>, t: &Tolerances) -> Outcome {
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
fn largest(stat: &Stat) -> Option<(StatKey, f64)> {
    stat.iter().filter(|(k, _)| *k != StatKey::Std).max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Proof sketch: `TPOT_i = (E2E_i - TTFT_i) / (n_i - 1) <= E2E_i - TTFT_i` for every request
/// with `n_i >= 2`: no request decodes a token longer than it lives, and none lives longer than
/// the longest E2E latency printed, or the run. So every statistic of the TPOT rows (mean,
/// percentiles, max), and every derived TPOT figure, is at most that. With equal output lengths
/// (known: [`equal_lengths`]) the request-weighted mean equals `(E2E - TTFT) / (n - 1)`, and the
/// claimed mean is held to it (x `--capacity-tolerance`).
fn decode_within_e2e(run: &Run, i: &Inputs, claimed: Option<f64>, equal: Option<&str>, t: &Tolerances) -> Outcome {
    let mut parts = Vec::new();
    let mut failed = Vec::new();
    if let Some((cap, what)) = decode_cap(run, i) {
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
            if v > cap {
                failed.push(format!("{msg}: a request cannot take longer per token than it lives"));
            } else {
                parts.push(msg);
            }
        }
    }
    if let (Some(tpot), Some(equal)) = (claimed, equal) {
        if let (Some(e2e), Some(ttft), Some(n)) = (i.e2e_mean, i.ttft_mean, i.n_avg()) {
            if n > 1.0 && e2e > ttft {
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
                    failed
                        .push(format!("{msg}: requests cannot decode longer than they live (allowed {}x)", t.capacity));
                } else {
                    parts.push(msg);
                }
            }
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
fn above_quantile(n: f64, q: f64) -> f64 {
    ((1.0 - q) * n).floor() + 1.0
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
fn tpot_bounds(run: &Run, i: &Inputs, claimed: Option<f64>, equal: Option<&str>) -> Outcome {
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
    // Rounding of the printed E2E and TTFT means, spread over the tokens per request.
    let slack = 2.0 * rounding_ms(run) / (n / r - 1.0).max(1.0) + ROUNDING_MS;
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
    if let Some((cap, what)) = decode_cap(run, i) {
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
    if let (Some(c), Some(equal)) = (claimed, equal) {
        let m = format!("the rows' mean {} ms ({equal}, so the request- and token-weighted means are equal)", f(c));
        if (c - tw).abs() > 0.02 * c + slack {
            failed.push(format!("{head} differs from {m}"));
        } else {
            parts.push(format!("= {m}"));
        }
    }
    if !failed.is_empty() {
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
            _ => "the output-token total or the TPOT rows are not of this run".into(),
        };
        return (Status::Fail, format!("{}: {cause}", failed.join("; ")));
    }
    if parts.is_empty() {
        return skip("the TPOT rows give no bound (no min, max or percentile with a duration)");
    }
    (Status::Pass, format!("{head} {}", parts.join(", ")))
}

fn e2e_capacity(run: &Run, i: &Inputs, t: &Tolerances) -> Outcome {
    let mut parts = Vec::new();
    let mut failed = false;
    if let (Some(r), Some(e2e), Some(d), Some((c, unit))) = (i.successful, i.e2e_mean, i.duration_s, slots(i)) {
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
    } else {
        (Status::Pass, msg)
    }
}

fn latency_order(run: &Run, i: &Inputs) -> Outcome {
    let mut problems = Vec::new();
    let mut checked = 0;
    if let (Some(ttft), Some(e2e)) = (i.ttft_mean, i.e2e_mean) {
        checked += 1;
        if ttft < 0.0 || ttft > e2e {
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
    if checked == 0 {
        return skip("no latency statistics");
    }
    if problems.is_empty() {
        (Status::Pass, format!("TTFT <= E2E and every statistic block is ordered ({checked} checked)"))
    } else {
        (Status::Fail, problems.join("; "))
    }
}

/// The largest magnitude a statistic block shows, for its rounding slack.
fn slack_of(stat: &Stat, rounding: f64) -> f64 {
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
/// * for the per-request blocks (TTFT, TPOT, E2E) of `R` requests, `m >= max / R`;
/// * Bhatia-Davis: a population standard deviation `s` satisfies `s^2 <= (max - m)(m - min)`
///   (`min` is `>= 0` when not printed); a sample standard deviation (`ddof = 1`) is at most
///   `sqrt(n / (n - 1)) <= sqrt(2)` times it;
/// * `|m - p50| <= s` (the mean and any median are within one standard deviation).
fn distribution_possible(run: &Run, i: &Inputs) -> Outcome {
    let mut problems = Vec::new();
    let mut checked = 0;
    let per_request = [reported::TTFT_MS, reported::TPOT_MS, reported::E2E_MS].map(Key::path);
    let rounding = rounding_ms(run);
    let mut check = |path: &str, stat: &Stat| {
        let Some(m) = stat.mean() else { return };
        checked += 1;
        let e = slack_of(stat, rounding);
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
        if let (Some(max), Some(r), true) = (max, i.successful, per_request.contains(&path)) {
            if r >= 1.0 && m + e < (max - e) / r {
                problems.push(format!(
                    "{path}: mean {} is below max {} / {} requests: one value alone gives a larger mean",
                    f(m),
                    f(max),
                    r as u64
                ));
            }
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
            if let Some(p50) = stat.get(StatKey::P(50.0)) {
                if (m - p50).abs() > s + 2.0 * e {
                    problems.push(format!(
                        "{path}: mean {} and median {} are more than one std {} apart",
                        f(m),
                        f(p50),
                        f(s)
                    ));
                }
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
fn physical_range(run: &Run) -> Outcome {
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

fn finite_values(run: &Run) -> Outcome {
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
                    if let Some(v) = v {
                        if !v.is_finite() || *v < 0.0 {
                            problems.push(format!("{path}[{idx}] = {v}"));
                        }
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

fn walk(g: &Figures, prefix: &str, visit: &mut dyn FnMut(&str, &Figure)) {
    walk_in(g, &mut prefix.to_string(), visit);
}

/// [`walk`] with the path built in one buffer (`prefix`, restored on return).
fn walk_in(g: &Figures, path: &mut String, visit: &mut dyn FnMut(&str, &Figure)) {
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

fn throughput_totals(run: &Run, i: &Inputs, t: &Tolerances) -> Outcome {
    let Some(d) = i.duration_s.filter(|d| *d > 0.0) else { return skip("no duration") };
    let mut parts = Vec::new();
    let mut failed = false;
    // A printed rate has 2 decimals, and so has the duration it was computed with.
    let agrees = |printed: f64, total: f64| {
        let expect = total / d;
        let slack = 0.005 + expect * (0.005 / d) + expect * t.throughput;
        ((printed - expect).abs() <= slack, expect)
    };
    for (key, total, label) in [
        (reported::OUTPUT_TOK_PER_S, i.output_tokens, "output tokens"),
        (reported::REQUEST_PER_S, i.successful, "successful requests"),
    ] {
        let name = key.rel();
        if let (Some(p), Some(n)) = (run.number(key), total) {
            let (ok, expect) = agrees(p, n);
            failed |= !ok;
            parts.push(format!("{name} printed {} vs {} {label} / {} s = {}", f(p), n as u64, f(d), f(expect)));
        }
    }
    if parts.is_empty() {
        return skip("no printed throughput with its totals");
    }
    let msg = parts.join("; ");
    if failed {
        (Status::Fail, format!("{msg}: the printed rate does not follow from the totals"))
    } else {
        (Status::Pass, msg)
    }
}

fn tpot_agreement(run: &Run, i: &Inputs, claimed: Option<f64>, t: &Tolerances) -> Outcome {
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

fn itl_is_per_chunk(run: &Run, i: &Inputs, t: &Tolerances) -> Outcome {
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

fn token_count_source(run: &Run, t: &Tolerances) -> Outcome {
    let server = run.number(totals::OUTPUT_TOKENS);
    let retok = run.number(totals::OUTPUT_TOKENS_RETOKENIZED);
    let requested = run.source.semantics.output_tokens == Some(TokenCount::Requested);
    let mut parts = Vec::new();
    let mut failed = false;
    let mut confirmed = false;
    if let (Some(s), Some(r)) = (server, retok) {
        let rel = if s > 0.0 {
            (s - r).abs() / s
        } else if r > 0.0 {
            1.0
        } else {
            0.0
        };
        failed |= rel > t.token_count;
        confirmed = rel <= t.token_count;
        parts.push(format!("generated {} vs retokenized {} ({:.1}% apart)", s as u64, r as u64, rel * 100.0));
    }
    // A tool that counts streamed chunks as tokens when the server sends no usage (guidellm):
    // one token per chunk, and far fewer tokens than were asked for.
    if let (Some(asked), Some(tpc), Some(n), Some(r)) = (
        run.number(workload::OUTPUT_LEN),
        run.number(reported::TOKENS_PER_CHUNK),
        server,
        run.number(totals::SUCCESSFUL_REQUESTS),
    ) {
        let per_request = if r > 0.0 { n / r } else { 0.0 };
        if (tpc - 1.0).abs() < 0.01 && per_request < 0.5 * asked {
            failed = true;
            parts.push(format!(
                "{} tokens per request counted at {} per streamed chunk where {} were asked: the tool counts chunks as tokens when the server sends no usage, so with several tokens per chunk the output tokens, TPOT and throughput are all undercounted",
                f(per_request),
                f(tpc),
                f(asked)
            ));
        }
    }
    if requested && !confirmed {
        failed = true;
        parts.push("this version counts the requested output length, not what was generated".into());
    } else if requested {
        parts.push("this version counts the requested length; the retokenized total confirms it".into());
    }
    if parts.is_empty() {
        return skip(match run.source.semantics.output_tokens {
            Some(TokenCount::Retokenized) => "only one output token count, from the client's tokenizer",
            Some(TokenCount::Server | TokenCount::ServerOrRequested) => "only one output token count, from the server",
            _ => "only one output token count",
        });
    }
    let msg = parts.join("; ");
    if failed {
        (Status::Fail, format!("{msg}: TPOT and throughput depend on this count"))
    } else {
        (Status::Pass, msg)
    }
}

/// The per-request arrays agree with themselves and with the file's summary figures (the rule
/// and its proof sketch: `derive::requests`).
fn per_request_consistency(run: &Run) -> Outcome {
    crate::derive::requests::consistency(run)
}

fn failed_requests(i: &Inputs) -> Outcome {
    match i.failed {
        None => skip("the tool printed no failure count"),
        Some(f) if f > 0.0 => (
            Status::Fail,
            format!(
                "{} requests failed; latency figures cover the {} successful ones only",
                f as u64,
                i.successful.map_or(0, |s| s as u64)
            ),
        ),
        Some(_) => (Status::Pass, "no failed requests".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::percentile;
    use proptest::prelude::*;

    /// Non-negative samples, heavy-tailed or not, some with many equal values.
    fn samples() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(
            prop_oneof![0.0f64..10.0, 0.0f64..1e5, Just(0.0), Just(5.0), (0.0f64..12.0).prop_map(f64::exp)],
            1..300,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// The lemmas the rules rest on, for numpy's interpolated percentile.
        #[test]
        fn the_bounds_hold_for_any_non_negative_sample(mut v in samples(), q in 0.01f64..0.999) {
            v.sort_by(f64::total_cmp);
            let n = v.len() as f64;
            let p = percentile(&v, q * 100.0);
            let mean = v.iter().sum::<f64>() / n;
            let tol = 1e-9 * (1.0 + v[v.len() - 1]);
            // At most floor((1 - q) n) + 1 values above the q-quantile.
            let above = v.iter().filter(|x| **x > p).count() as f64;
            prop_assert!(above <= above_quantile(n, q), "{above} above p{q}");
            // mean >= (1 - q) p_q.
            prop_assert!(mean + tol >= (1.0 - q) * p, "mean {mean} < (1 - {q}) x {p}");
            // The largest value numpy's P99 allows.
            let p99 = percentile(&v, 99.0);
            if let Some(max) = max_from_percentile(p99, 0.99, n) {
                prop_assert!(v[v.len() - 1] <= max * (1.0 + 1e-9) + tol, "max {} > {max}", v[v.len() - 1]);
            }
            // Bhatia-Davis (population std) and |mean - median| <= std.
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
            let (lo, hi) = (v[0], v[v.len() - 1]);
            prop_assert!(var <= (hi - mean) * (mean - lo) * (1.0 + 1e-9) + tol);
            prop_assert!((mean - percentile(&v, 50.0)).abs() <= var.sqrt() * (1.0 + 1e-9) + tol);
        }

        /// A weighted mean of per-request TPOTs lies between them, and above `p_q` by at most
        /// `h x d_max / decode tokens`.
        #[test]
        fn the_token_weighted_mean_is_bounded_by_the_rows(
            reqs in prop::collection::vec((1u32..2000, 0.01f64..5000.0), 1..200),
            q in 0.5f64..0.999,
        ) {
            let tpots: Vec<f64> = reqs.iter().map(|(_, t)| *t).collect();
            let mut sorted = tpots.clone();
            sorted.sort_by(f64::total_cmp);
            let decode: f64 = reqs.iter().map(|(m, _)| *m as f64).sum();
            let work: f64 = reqs.iter().map(|(m, t)| *m as f64 * t).sum();
            let d_max = reqs.iter().map(|(m, t)| *m as f64 * t).fold(0.0, f64::max);
            let tw = work / decode;
            let n = reqs.len() as f64;
            prop_assert!(tw <= sorted[sorted.len() - 1] * (1.0 + 1e-9));
            prop_assert!(tw >= sorted[0] * (1.0 - 1e-9));
            let p = percentile(&sorted, q * 100.0);
            prop_assert!(tw <= (p + above_quantile(n, q) * d_max / decode) * (1.0 + 1e-9));
        }
    }
}
