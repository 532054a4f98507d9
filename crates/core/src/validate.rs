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
use crate::report::{Check, RuleId, Run, Stat, StatKey, Status, TpotMethod, verdict};
use crate::vocabulary::{Key, reported};

mod counts;
mod coverage;
mod decode;
mod order;
mod values;

use counts::{failed_requests, throughput_totals, token_count_source};
use coverage::{complete_block, dstack_model, key_figures, per_request_consistency};
use decode::{
    decode_cap, decode_capacity, decode_within_e2e, e2e_capacity, equal_lengths, itl_is_per_chunk, tpot_agreement,
    tpot_bounds,
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
            let (figure, stat) = crate::report::split_dot(r.field.as_deref()?.strip_prefix("reported.")?)?;
            let at = LATENCIES.iter().position(|(name, _)| *name == figure)?;
            r.slack(stats[at]?.get(StatKey::parse(stat)?)?)
        })
        .fold(ROUNDING_MS, f64::max)
}

/// What every rule reads, found once per run: the run, the derivation's inputs, the claimed TPOT
/// mean, whether every output length is known to be equal (and why), the printed rounding, and
/// the tolerances.
pub(crate) struct Ctx<'a> {
    run: &'a Run,
    i: &'a Inputs,
    claimed: Option<f64>,
    equal: Option<&'a str>,
    rounding: f64,
    t: &'a Tolerances,
    /// [`decode_cap`], found once when a rule first asks (four rules read it).
    cap: std::cell::OnceCell<Option<(f64, String)>>,
}

impl Ctx<'_> {
    /// The longest any request can have spent decoding ([`decode_cap`]).
    fn cap(&self) -> Option<&(f64, String)> {
        self.cap.get_or_init(|| decode_cap(self.run, self.i, self.rounding)).as_ref()
    }
}

/// A rule: its outcome on a run, or `None` when the rule does not apply to this kind of input at
/// all (it is then not listed, rather than listed as skipped).
type Rule = fn(&Ctx) -> Option<Outcome>;

/// The consistency rules, in the order their checks are reported: one line per rule. Each rule's
/// id, severity and stage are data (`crates/core/src/rules.toml`); its proof is in its function's doc and
/// docs/metrics.md.
const TABLE: &[(RuleId, Rule)] = &[
    (RuleId::KeyFigures, |c| Some(key_figures(c.run, c.i))),
    (RuleId::CompleteBlock, |c| Some(complete_block(c.run))),
    (RuleId::DecodeCapacity, |c| Some(decode_capacity(c.i, c.claimed, c.equal, c.t))),
    (RuleId::DecodeWithinE2e, |c| Some(decode_within_e2e(c.run, c.i, c.cap(), c.claimed, c.equal, c.t))),
    (RuleId::TpotBounds, |c| Some(tpot_bounds(c.run, c.i, c.cap(), c.rounding, c.claimed, c.equal))),
    (RuleId::E2eCapacity, |c| Some(e2e_capacity(c.run, c.i, c.cap(), c.rounding, c.equal.is_some(), c.t))),
    (RuleId::LatencyOrder, |c| Some(latency_order(c.run, c.i))),
    (RuleId::DistributionPossible, |c| Some(distribution_possible(c.run, c.i, c.cap(), c.rounding, c.equal.is_some()))),
    (RuleId::FiniteValues, |c| Some(finite_values(c.run))),
    (RuleId::PhysicalRange, |c| Some(physical_range(c.run))),
    (RuleId::ThroughputTotals, |c| Some(throughput_totals(c.run, c.i, c.t))),
    (RuleId::TpotAgreement, |c| Some(tpot_agreement(c.run, c.i, c.claimed, c.t))),
    (RuleId::ItlIsPerChunk, |c| Some(itl_is_per_chunk(c.run, c.i, c.t))),
    (RuleId::TokenCountSource, |c| Some(token_count_source(c.run, c.t))),
    (RuleId::FailedRequests, |c| Some(failed_requests(c.i))),
    (RuleId::PerRequestConsistency, |c| Some(per_request_consistency(c.run))),
    // Only a dstack document has it (listed as skipped on every other run, it would say nothing).
    (RuleId::DstackModel, |c| dstack_model(c.run)),
];

/// Run every rule and set `checks`, `verdict` and whether the TPOT could be verified.
pub fn validate(run: &mut Run, policy: &Policy) {
    let i = Inputs::of(run);
    let equal = equal_lengths(run, &i);
    let ctx = Ctx {
        run,
        i: &i,
        claimed: run.stat(reported::TPOT_MS).and_then(Stat::mean).filter(|m| *m > 0.0),
        equal: equal.as_deref(),
        // (Found once: it reads every row.)
        rounding: rounding_ms(run),
        t: &policy.tolerances,
        cap: std::cell::OnceCell::new(),
    };
    let checks: Vec<Check> = TABLE
        .iter()
        .filter_map(|(id, rule)| rule(&ctx).map(|(status, message)| Check::new(*id, status, message)))
        .collect();
    run.checks = checks;
    run.verdict = verdict(&run.checks, policy.strict);
    mark_verified(run);
}

/// The sides on which a passed check tested the TPOT figure, by rule (`above`: it could have
/// found the figure too slow; `below`: too fast), read from what the rule says it compared.
/// `derived`: the figure is derived from E2E, TTFT and totals (else it is the tool's claim).
fn sides(c: &Check, derived: bool) -> (bool, bool) {
    let has = |s: &str| c.message.contains(s);
    match (c.id.as_str(), derived) {
        ("tpot-bounds", true) => {
            let both = has("= the rows' mean");
            (
                both || has("<= the TPOT rows' max") || has("<= 1.5 x (p"),
                both || has(">= the TPOT rows' min") || has("the smallest per-request TPOT"),
            )
        }
        ("e2e-capacity", true) => (has("in flight"), has("closed loop") || has("= sum of E2E / D")),
        // With no E2E rows, the E2E rebuilt from the claimed TPOT (equal lengths).
        ("e2e-capacity", false) if has("no E2E rows") => (has("in flight"), has("closed loop")),
        ("tpot-agreement", true) => (true, true),
        ("decode-capacity", false) | ("decode-within-e2e", _) => (true, false),
        _ => (false, false),
    }
}

/// `derived.tpot_ms.verified` and `tested_by`: `true` only when a rule tested the figure from
/// above (too slow) and one from below (too fast): a rule that holds it on one side only (a
/// capacity passing at 0.01x) says nothing about a figure that is wrong the other way.
fn mark_verified(run: &mut Run) {
    let tp = &run.derived.tpot_ms;
    if tp.mean.is_none() {
        let tp = &mut run.derived.tpot_ms;
        tp.verified = None;
        tp.unverified_reason = None;
        tp.tested_by.clear();
        return;
    }
    let derived = !matches!(tp.method, Some(TpotMethod::ToolTpot | TpotMethod::Claimed));
    let mut tested = Vec::new();
    let (mut above, mut below) = (false, false);
    for c in run.checks.iter().filter(|c| c.status == Status::Pass) {
        let (a, b) = sides(c, derived);
        above |= a;
        below |= b;
        let side = match (a, b) {
            (true, true) => "above and below",
            (true, false) => "above",
            (false, true) => "below",
            _ => continue,
        };
        tested.push(format!("{} ({side})", c.id));
    }
    let whose = match tp.method {
        Some(TpotMethod::ToolTpot) => "the tool's claim",
        Some(TpotMethod::Claimed) => "the report's claim",
        _ => "derived from the run's latencies and totals, but",
    };
    let missing = match (above, below) {
        (true, true) => None,
        (true, false) => Some(
            "no rule could have found it too fast (a latency in seconds under a millisecond name, an inflated token total)",
        ),
        (false, true) => Some("no rule could have found it too slow"),
        (false, false) => Some("no rule could test it"),
    };
    let reason = missing.map(|m| {
        if derived {
            format!("{whose} {m}")
        } else {
            format!(
                "{whose}, unverified: {m}; with no E2E latency to derive TPOT from, only equal output lengths (decode-capacity, e2e-capacity) or a closed-loop run test it"
            )
        }
    });
    let tp = &mut run.derived.tpot_ms;
    tp.verified = Some(reason.is_none());
    tp.unverified_reason = reason;
    tp.tested_by = tested;
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
        runs(&std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples").join(path)).unwrap())
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
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/captured/vllm-s2.stdout.txt"),
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
        /// A row label is cut where `str::rsplit_once` cuts it (`Label (avg)`, `Label p25`).
        #[test]
        fn a_label_is_cut_as_the_str_split_cuts_it(label in "[a-zé ()p0-9.]{0,24}") {
            let by_str = label.strip_suffix(')').and_then(|l| l.rsplit_once(" (")).or_else(|| label.rsplit_once(' '));
            prop_assert_eq!(super::values::split_stat(&label), by_str);
        }
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
