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

use crate::derive::Inputs;
use crate::report::{Check, Run, Severity, Stat, StatKey, Status, TpotMethod, Verdict};
use crate::vocabulary::{Key, reported};

mod counts;
mod coverage;
mod decode;
mod values;

use counts::{failed_requests, throughput_totals, token_count_source};
use coverage::{complete_block, dstack_model, key_figures, per_request_consistency};
use decode::{
    decode_capacity, decode_within_e2e, e2e_capacity, equal_lengths, itl_is_per_chunk, tpot_agreement, tpot_bounds,
};
use values::{distribution_possible, finite_values, latency_order, physical_range};

/// Tolerances of the rules (defaults in [`Tolerances::default`], flags in the CLI).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// `decode-capacity` and `decode-within-e2e`: how far a claimed TPOT may exceed its bound.
    pub capacity: f64,
    /// `e2e-capacity`: how far `R x E2E` may exceed `C x D` (and `Concurrency:` exceed `C`).
    pub e2e_capacity: f64,
    /// `throughput-totals`: relative slack beyond the rounding of the printed digits.
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
    ("throughput-totals", Severity::Error),
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

/// The rounding of a run's printed latencies, ms: half a unit of the last printed digit of its
/// coarsest latency row (guidellm's console prints request latency in seconds with one decimal:
/// 50 ms), and never less than that of 2 decimals of ms (a result file's full-precision numbers
/// are held to the same slack as a printed block).
fn rounding_ms(run: &Run) -> f64 {
    const LATENCIES: [(&str, Key); 4] = [
        ("ttft_ms", reported::TTFT_MS),
        ("e2e_ms", reported::E2E_MS),
        ("tpot_ms", reported::TPOT_MS),
        ("itl_ms", reported::ITL_MS),
    ];
    let stats = LATENCIES.map(|(_, key)| run.stat(key));
    run.rows
        .iter()
        .filter_map(|r| {
            let (figure, stat) = r.field.as_deref()?.strip_prefix("reported.")?.split_once('.')?;
            let at = LATENCIES.iter().position(|(name, _)| *name == figure)?;
            r.slack(stats[at]?.get(StatKey::parse(stat)?)?)
        })
        .fold(ROUNDING_MS, f64::max)
}

/// Run every rule and set `checks`, `verdict` and whether the TPOT could be verified.
pub fn validate(run: &mut Run, policy: &Policy) {
    let t = &policy.tolerances;
    let i = Inputs::of(run);
    let claimed = run.stat(reported::TPOT_MS).and_then(Stat::mean).filter(|m| *m > 0.0);
    let equal = equal_lengths(run, &i);
    // (Found once: it reads every row.)
    let rounding = rounding_ms(run);
    let outcomes: [Outcome; 16] = [
        key_figures(run, &i),
        complete_block(run),
        decode_capacity(&i, claimed, equal.as_deref(), t),
        decode_within_e2e(run, &i, rounding, claimed, equal.as_deref(), t),
        tpot_bounds(run, &i, rounding, claimed, equal.as_deref()),
        e2e_capacity(run, &i, t),
        latency_order(run, &i),
        distribution_possible(run, &i, rounding),
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

#[cfg(test)]
mod rounding_tests {
    use super::rounding_ms;
    use crate::{Options, Run, normalize};

    fn runs(text: &[u8]) -> Vec<Run> {
        let mut runs = Vec::new();
        normalize(text, "t", &Options::default(), &mut |r| {
            runs.push(r);
            Ok(())
        })
        .unwrap();
        runs
    }

    fn sample(path: &str) -> Vec<Run> {
        runs(&std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(path)).unwrap())
    }

    #[test]
    fn the_latencies_rounding_is_read_from_their_printed_digits() {
        // guidellm's console: request latency in seconds with one decimal, 50 ms.
        let g = sample("peers/guidellm-s2.stdout.txt");
        assert!(g.iter().all(|r| r.source.parser == "guidellm-console"));
        assert!(
            g.iter().all(|r| (rounding_ms(r) - 50.0).abs() < 0.1),
            "{:?}",
            g.iter().map(rounding_ms).collect::<Vec<_>>()
        );
        // vLLM: milliseconds with 2 decimals.
        let v = sample("captured/vllm-s2.stdout.txt");
        assert!((rounding_ms(&v[0]) - 0.005).abs() < 1e-4);
        // The same block retyped with whole milliseconds: half a millisecond.
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captured/vllm-s2.stdout.txt"),
        )
        .unwrap();
        let whole: String = text
            .lines()
            .map(|l| match (l.contains("TTFT (ms)"), l.trim_end().rsplit_once(' ')) {
                (true, Some((head, v))) => {
                    format!("{head} {}\n", v.parse::<f64>().map_or(v.to_string(), |x| format!("{x:.0}")))
                }
                _ => format!("{l}\n"),
            })
            .collect();
        let w = runs(whole.as_bytes());
        assert!((rounding_ms(&w[0]) - 0.5).abs() < 1e-3, "{}", rounding_ms(&w[0]));
        assert_eq!(w[0].verdict, crate::report::Verdict::Accepted, "{:?}", w[0].checks);
    }
}

#[cfg(test)]
mod tests {
    use super::decode::{above_quantile, max_from_percentile};
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
