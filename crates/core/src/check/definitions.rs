//! Layers 2 and 3: a report's derived section recomputed from its own figures (restated), and
//! every headline figure held to its definition, with rounding-aware tolerances.

use crate::number::show;
use crate::report::{Check, Derived, RuleId, Run, StatKey, Status, TpotMethod, verdict};
use crate::validate::Policy;
use crate::vocabulary::{reported, totals, workload};

/// Half a unit of the last decimal written, as the shortest text that reads back as `x` shows it
/// (`26.75` -> 0.005, `4096` -> 0.5).
pub(super) fn written_half_unit(x: f64) -> f64 {
    let s = format!("{x}");
    match s.split_once('.') {
        Some((_, frac)) => 0.5 * 10f64.powi(-(frac.len() as i32)),
        None => 0.5,
    }
}

/// Rounding of a stated figure: what its written digits allow (an integer-valued figure, `78` or
/// `78.0`, at most 0.5%: JSON does not say which was written), at least what 6 significant digits
/// (the derivation's rounding) and float noise allow.
pub(super) fn slack(stated: f64) -> f64 {
    let a = stated.abs();
    let half = written_half_unit(stated);
    let half = if stated.fract() == 0.0 { half.min(0.005 * a) } else { half };
    half.max(5e-6 * a).max(1e-9)
}

/// An interval `[lo, hi]` a written input lies in.
pub(super) fn interval(x: f64) -> (f64, f64) {
    let h = written_half_unit(x);
    (x - h, x + h)
}

/// Whether `stated` agrees with a value known to lie in `[lo, hi]`.
pub(super) fn within(stated: f64, (lo, hi): (f64, f64)) -> bool {
    let s = slack(stated);
    stated + s >= lo * (1.0 - 1e-12) && stated - s <= hi * (1.0 + 1e-12)
}

/// `a / b` over intervals (`b` positive).
pub(super) fn divide((alo, ahi): (f64, f64), (blo, bhi): (f64, f64)) -> (f64, f64) {
    if blo <= 0.0 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    (alo / bhi, ahi / blo)
}

/// Add a check to a run, and settle its verdict again.
pub(super) fn add(run: &mut Run, policy: &Policy, id: RuleId, (status, message): (Status, String)) {
    run.checks.push(Check::new(id, status, message));
    run.verdict = verdict(&run.checks, policy.strict);
}

pub(super) fn outcome(failures: Vec<String>, passed: String) -> (Status, String) {
    if failures.is_empty() { (Status::Pass, passed) } else { (Status::Fail, failures.join("; ")) }
}

/// The report-level rules of a run read back from a report (a canonical run, or a report shape
/// such as dstack's): for a canonical run the outcome of [`restated`] (called before validation,
/// as it may put a verified per-request TPOT back), headline definitions, and dstack's model rules
/// for a dstack report. Call after `crate::validate::validate`: the checks are added to its, and
/// a failed error rejects the run.
pub fn verify(
    run: &mut Run,
    restated: Option<(Status, String)>,
    declared: Option<(Vec<String>, Option<String>)>,
    policy: &Policy,
) {
    if let Some(o) = restated {
        add(run, policy, RuleId::DerivedRestated, o);
    }
    let o = headlines(run);
    add(run, policy, RuleId::HeadlineDefinitions, o);
    if let Some(d) = declared {
        let o = super::semantics::outcome(run, d);
        add(run, policy, RuleId::SemanticsDeclared, o);
    }
    // dstack's model rules (`dstack-model`) are `validate`'s, for every dstack document.
}

/// Before derivation, for a report that leaves a figure implicit: a bare dstack `metrics` object
/// states no concurrency, but its `per_user_tok_per_s` is `output_tok_per_s / workload.concurrency`
/// by dstack's definition, so the concurrency is `output_tok_per_s / per_user_tok_per_s` when that
/// is a whole number within the rounding of the two rates (then the capacity rules use it, and a
/// note says where it came from); otherwise it stays unknown and `headline-definitions` fails.
pub fn implicit(run: &mut Run) {
    if run.source.parser != "dstack-metrics"
        || crate::dstack::model::is_proposal(run)
        || run.number(workload::MAX_CONCURRENCY).is_some()
    {
        return;
    }
    let (Some(r), Some(u)) = (run.number(reported::OUTPUT_TOK_PER_S), run.number(reported::PER_USER_TOK_PER_S)) else {
        return;
    };
    if !(r > 0.0 && u > 0.0 && r.is_finite() && u.is_finite()) {
        return;
    }
    let c = (r / u).round();
    if (1.0..1e9).contains(&c) && within(u, divide(interval(r), (c, c))) {
        run.set(workload::MAX_CONCURRENCY, crate::report::Figure::Count(c as u64));
        run.notes.push(crate::report::Note {
            code: "implicit-concurrency".into(),
            message: format!(
                "the concurrency {} is output_tok_per_s / per_user_tok_per_s = {} / {} (dstack's definition; the metrics object does not state it)",
                c as u64,
                show(r),
                show(u)
            ),
            line: None,
        });
    }
}

/// Headline figures against their definitions. A dstack report's (and a canonical run read from
/// one, `source.parser` `dstack-preset`): `output_tok_per_s = total_output_tokens /
/// duration_seconds`, `per_user_tok_per_s = output_tok_per_s / workload.concurrency`. A
/// hand-written canonical run's (`source.parser` `report`) `reported.per_user_tok_per_s` is `1000 /
/// TPOT` (the derived TPOT). (A tool's own printed per-user figure keeps the tool's definition.)
pub(super) fn headlines(run: &Run) -> (Status, String) {
    let mut fails = Vec::new();
    let mut passed = Vec::new();
    let stated_rate = run.number(reported::OUTPUT_TOK_PER_S);
    let per_user = run.number(reported::PER_USER_TOK_PER_S);
    // dstack#4230's proposed metrics object (`--format dstack-e2e`): its per-user rate is 1000 /
    // TPOT, as a hand-written canonical report's.
    let proposal = crate::dstack::model::is_proposal(run);
    if !proposal && matches!(run.source.parser.as_str(), "dstack-preset" | "dstack-agent-document" | "dstack-metrics") {
        let (n, d) = (run.number(totals::OUTPUT_TOKENS), run.number(totals::DURATION_S));
        match (stated_rate, n, d) {
            (Some(r), Some(n), Some(d)) if d > 0.0 => {
                let want = divide((n, n), interval(d));
                if within(r, want) {
                    passed.push(format!("output_tok_per_s {} = {} / {} s", show(r), show(n), show(d)));
                } else {
                    fails.push(format!(
                        "metrics.output_tok_per_s {} is not total_output_tokens / duration_seconds = {} / {} = {} (dstack's definition)",
                        show(r),
                        show(n),
                        show(d),
                        show(n / d)
                    ));
                }
            }
            (Some(r), ..) => fails.push(format!(
                "metrics.output_tok_per_s {} cannot be verified: total_output_tokens and a duration_seconds > 0 are needed",
                show(r)
            )),
            _ => {}
        }
        let c = run.number(workload::MAX_CONCURRENCY);
        match (per_user, stated_rate, c) {
            (Some(u), Some(r), Some(c)) if c > 0.0 => {
                let want = divide(interval(r), (c, c));
                if within(u, want) {
                    passed.push(format!("per_user_tok_per_s {} = {} / concurrency {}", show(u), show(r), show(c)));
                } else {
                    let tpot = run.stat_mean(reported::TPOT_MS).filter(|t| *t > 0.0);
                    let other = match tpot {
                        Some(t) if within(u, (1000.0 / t, 1000.0 / t)) => {
                            format!("; it is 1000 / tpot_ms.mean {}, which dstack does not call per_user_tok_per_s", show(t))
                        }
                        _ => String::new(),
                    };
                    fails.push(format!(
                        "metrics.per_user_tok_per_s {} is not output_tok_per_s / workload.concurrency = {} / {} = {} (dstack's definition){other}",
                        show(u),
                        show(r),
                        show(c),
                        show(r / c)
                    ));
                }
            }
            (Some(u), Some(r), None) if run.source.parser == "dstack-metrics" => fails.push(format!(
                "per_user_tok_per_s {} is not output_tok_per_s / a whole concurrency: {} / {} = {} (dstack's definition; the metrics object does not state the concurrency)",
                show(u),
                show(r),
                show(u),
                show(r / u)
            )),
            (Some(u), ..) => fails.push(format!(
                "metrics.per_user_tok_per_s {} cannot be verified: output_tok_per_s and workload.concurrency are needed",
                show(u)
            )),
            _ => {}
        }
    } else if let Some(u) = per_user.filter(|_| run.source.parser == "report" || proposal) {
        if proposal {
            // Its output rate is the totals over the duration, as dstack's.
            if let (Some(r), Some(n), Some(d)) =
                (stated_rate, run.number(totals::OUTPUT_TOKENS), run.number(totals::DURATION_S))
                && d > 0.0
                && !within(r, divide((n, n), interval(d)))
            {
                fails.push(format!(
                    "output_tok_per_s {} is not total_output_tokens / duration_seconds = {} / {} = {}",
                    show(r),
                    show(n),
                    show(d),
                    show(n / d)
                ));
            }
            // Its per-user rate is 1000 / its own tpot_ms.mean (which the rules hold to the run's
            // figures as any claimed TPOT).
            match run.stat_mean(reported::TPOT_MS).filter(|t| *t > 0.0) {
                Some(t) if within(u, divide((1000.0, 1000.0), interval(t))) => {
                    passed.push(format!("per_user_tok_per_s {} = 1000 / tpot_ms.mean {} ms", show(u), show(t)))
                }
                Some(t) => fails.push(format!(
                    "per_user_tok_per_s {} is not 1000 / tpot_ms.mean = 1000 / {} ms = {} (dstack#4230's definition)",
                    show(u),
                    show(t),
                    show(1000.0 / t)
                )),
                None => fails.push(format!(
                    "per_user_tok_per_s {} cannot be verified: it is 1000 / tpot_ms.mean, and tpot_ms.mean is null",
                    show(u)
                )),
            }
            return if fails.is_empty() { (Status::Pass, passed.join("; ")) } else { (Status::Fail, fails.join("; ")) };
        }
        // A figure a tool printed (AIPerf's per-user throughput, a mean of per-request rates) is
        // the tool's own; a hand-written canonical report's is 1000 / TPOT.
        match run.derived.tpot_ms.mean.filter(|t| *t > 0.0) {
            Some(t) => {
                if within(u, (1000.0 / t, 1000.0 / t)) {
                    passed.push(format!("per_user_tok_per_s {} = 1000 / TPOT {} ms", show(u), show(t)));
                } else {
                    fails.push(format!(
                        "reported.per_user_tok_per_s {} is not 1000 / TPOT = 1000 / {} ms = {} (TPOT method: {})",
                        show(u),
                        show(t),
                        show(1000.0 / t),
                        run.derived.tpot_ms.method.map_or("?", TpotMethod::as_str)
                    ));
                }
            }
            None => fails.push(format!(
                "reported.per_user_tok_per_s {} cannot be verified: it is 1000 / TPOT, and TPOT is undefined ({})",
                show(u),
                run.derived.tpot_ms.reason.as_deref().unwrap_or("no TPOT and no E2E latency to derive it from")
            )),
        }
    }
    if fails.is_empty() && passed.is_empty() {
        return (Status::Skipped, "no headline rate stated".into());
    }
    outcome(fails, passed.join("; "))
}

/// A stated derived figure against the recomputed one.
pub(super) fn compare(
    fails: &mut Vec<String>,
    name: &str,
    stated: Option<f64>,
    recomputed: Option<f64>,
    why_none: Option<&str>,
) {
    let Some(s) = stated else { return };
    match recomputed {
        Some(r) if within(s, (r, r)) => {}
        Some(r) => fails.push(format!("derived.{name} is {s} but the report's own figures give {r}")),
        None => fails.push(format!(
            "derived.{name} is {s} but cannot be recomputed from the report ({})",
            why_none.unwrap_or("its inputs are absent")
        )),
    }
}

/// Tolerance between per-request figures and the figures they are checked against (the tool's
/// own per-request TPOT statistics, the token-weighted identity): see [`restated`].
pub(super) const PER_REQUEST_TOLERANCE: f64 = 0.02;

/// A canonical run's stated derived figures (`stated`) against the recomputation in
/// `run.derived`. Every stated figure must be what the run's own inputs give, within the rounding
/// of its written digits.
///
/// Figures from per-request arrays (`method: per-request`) cannot be recomputed: a report does
/// not carry the arrays. They are checked against what the report does carry, and then stand in
/// for the recomputed TPOT (so the per-user rate and tokens per chunk follow from them):
/// * the request-weighted `mean`, `p50`, `p90`, `p99` against the tool's own TPOT statistics
///   (`reported.tpot_ms`: vLLM and SGLang compute them per request as `(latency - ttft) /
///   (output_len - 1)` from the same requests), within 2% (the captures agree within 0.06%; the
///   slack is for a tool's own rounding);
/// * `token_weighted_mean` is `sum(E2E_i - TTFT_i) / sum(n_i - 1)`, which is exactly `(E2E_mean -
///   TTFT_mean) / (N_out / R - 1)` over the same successful requests (single-token requests add
///   nothing to either sum); checked against that formula with the report's E2E (printed, else the
///   stated per-request mean) within 2%.
///
/// Without the tool's TPOT mean the per-request mean cannot be verified, and that is the finding.
pub fn restated(run: &mut Run, stated: &Derived) -> (Status, String) {
    let mut fails = Vec::new();
    let r = run.derived.clone();
    let st = &stated.tpot_ms;
    if st.method == Some(TpotMethod::PerRequest) {
        let tool = run.stat(reported::TPOT_MS).cloned();
        let tool = tool.as_ref();
        let mut unverified: Vec<&str> = Vec::new();
        for (name, s, key) in [
            ("mean", st.mean, StatKey::Mean),
            ("p50", st.p50, StatKey::P(50.0)),
            ("p90", st.p90, StatKey::P(90.0)),
            ("p99", st.p99, StatKey::P(99.0)),
        ] {
            let Some(s) = s else { continue };
            match tool.and_then(|t| t.get(key)) {
                Some(t) if (s - t).abs() <= PER_REQUEST_TOLERANCE * t.abs() + slack(s) => {}
                Some(t) => fails.push(format!(
                    "derived.tpot_ms.{name} {} (per request) is not the tool's own per-request TPOT {name} {} (more than 2% apart)",
                    show(s),
                    show(t)
                )),
                None if name == "mean" => fails.push(format!(
                    "derived.tpot_ms.mean {} (per request) cannot be verified: the report has neither the per-request arrays nor the tool's TPOT mean (check the result file itself)",
                    show(s)
                )),
                // A percentile nothing in the report can confirm is not passed on as verified.
                None => unverified.push(name),
            }
        }
        if stated.per_request.is_none() {
            fails.push(
                "derived.tpot_ms.method is per-request but the report has no derived.per_request summary of the arrays"
                    .into(),
            );
        }
        if let Some(p) = &stated.per_request {
            let i = crate::derive::Inputs::of(run);
            if let (Some(s), Some(e)) = (p.e2e_mean_ms, run.stat_mean(reported::E2E_MS))
                && (s - e).abs() > PER_REQUEST_TOLERANCE * e.abs() + slack(s)
            {
                fails.push(format!(
                    "derived.per_request.e2e_mean_ms {} is not the report's mean E2E latency {} (more than 2% apart)",
                    show(s),
                    show(e)
                ));
            }
            if let Some(r) = i.successful {
                let measured = p.requests as f64 - p.failed as f64;
                if measured != r || p.single_token > p.requests.saturating_sub(p.failed) {
                    fails.push(format!(
                        "derived.per_request counts {} requests, {} failed, {} single-token, but the report's totals have {} successful requests",
                        p.requests,
                        p.failed,
                        p.single_token,
                        show(r)
                    ));
                }
            }
        }
        if let Some(tw) = st.token_weighted_mean {
            let i = crate::derive::Inputs::of(run);
            let e2e = i.e2e_mean.or(stated.per_request.as_ref().and_then(|p| p.e2e_mean_ms));
            match (e2e, i.ttft_mean, i.n_avg()) {
                (Some(e), Some(t), Some(n)) if n > 1.0 => {
                    let want = (e - t) / (n - 1.0);
                    if (tw - want).abs() > PER_REQUEST_TOLERANCE * want.abs() + slack(tw) {
                        fails.push(format!(
                            "derived.tpot_ms.token_weighted_mean {} is not (E2E {} - TTFT {}) / ({} tokens/request - 1) = {}",
                            show(tw),
                            show(e),
                            show(t),
                            show(n),
                            show(want)
                        ));
                    }
                }
                _ => fails.push(format!(
                    "derived.tpot_ms.token_weighted_mean {} cannot be verified: needs the mean E2E latency, the mean TTFT and the token and request totals",
                    show(tw)
                )),
            }
        }
        // The verified per-request TPOT stands in for the recomputed one.
        if let Some(m) = st.mean.filter(|m| *m > 0.0) {
            run.derived.tpot_ms = st.clone();
            for name in &unverified {
                match *name {
                    "p50" => run.derived.tpot_ms.p50 = None,
                    "p90" => run.derived.tpot_ms.p90 = None,
                    _ => run.derived.tpot_ms.p99 = None,
                }
            }
            if !unverified.is_empty() {
                run.notes.push(crate::report::Note {
                    code: "unverified-left-out".into(),
                    message: format!(
                        "derived.tpot_ms {} (per request) left out: the report has no per-request arrays and the tool printed no such TPOT percentile to confirm it",
                        unverified.join(", ")
                    ),
                    line: None,
                });
            }
            run.derived.per_request = stated.per_request.clone();
            if let Some(p) = run.derived.per_request.as_mut()
                && p.tokens_per_chunk.take().is_some()
            {
                run.notes.push(crate::report::Note {
                    code: "unverified-left-out".into(),
                    message: "derived.per_request.tokens_per_chunk left out: it needs the per-request arrays".into(),
                    line: None,
                });
            }
            run.derived.undefined.remove("per_user_decode_tok_per_s");
            run.derived.per_user_decode_tok_per_s = Some(crate::number::round(1000.0 / m));
            let itl = run.stat_mean(reported::ITL_MS);
            if run.source.semantics.itl == Some(crate::report::ItlPer::Chunk) {
                run.derived.tokens_per_chunk = match itl {
                    Some(itl) if itl > 0.0 => Some(crate::number::round(itl / m)),
                    _ => None,
                };
            }
        }
    } else {
        if let (Some(sm), Some(rm)) = (st.method, r.tpot_ms.method)
            && sm != rm
            && st.mean.is_some()
        {
            fails.push(format!(
                "derived.tpot_ms.method is {} but the report's own figures give {}",
                sm.as_str(),
                rm.as_str()
            ));
        }
        let why = r.tpot_ms.reason.as_deref();
        compare(&mut fails, "tpot_ms.mean", st.mean, r.tpot_ms.mean, why);
        compare(&mut fails, "tpot_ms.p50", st.p50, r.tpot_ms.p50, why);
        compare(&mut fails, "tpot_ms.p90", st.p90, r.tpot_ms.p90, why);
        compare(&mut fails, "tpot_ms.p99", st.p99, r.tpot_ms.p99, why);
        compare(&mut fails, "tpot_ms.token_weighted_mean", st.token_weighted_mean, r.tpot_ms.token_weighted_mean, why);
    }
    let d = run.derived.clone();
    let why = |name: &str| d.undefined.get(name).map(String::as_str);
    for (name, s, rc) in [
        ("per_user_decode_tok_per_s", stated.per_user_decode_tok_per_s, d.per_user_decode_tok_per_s),
        ("output_tok_per_s", stated.output_tok_per_s, d.output_tok_per_s),
        ("request_per_s", stated.request_per_s, d.request_per_s),
        ("mean_in_flight", stated.mean_in_flight, d.mean_in_flight),
        ("slot_utilization", stated.slot_utilization, d.slot_utilization),
        ("tokens_per_chunk", stated.tokens_per_chunk, d.tokens_per_chunk),
    ] {
        compare(&mut fails, name, s, rc, why(name));
    }
    compare(
        &mut fails,
        "e2e_ms.mean",
        stated.e2e_ms.as_ref().map(|e| e.mean),
        d.e2e_ms.as_ref().map(|e| e.mean),
        Some("the report has a measured E2E latency, or no TTFT and TPOT to approximate one"),
    );
    let any_stated = stated.tpot_ms.mean.is_some()
        || stated.per_user_decode_tok_per_s.is_some()
        || stated.output_tok_per_s.is_some()
        || stated.request_per_s.is_some()
        || stated.mean_in_flight.is_some()
        || stated.slot_utilization.is_some()
        || stated.tokens_per_chunk.is_some()
        || stated.e2e_ms.is_some();
    if !any_stated {
        return (Status::Skipped, "the report states no derived figure".into());
    }
    outcome(fails, "every stated derived figure is what the report's own figures give".into())
}
