//! Consistency rules: a run must agree with its own totals.
//!
//! Every rule has a stable id and severity and runs on every run, whatever its source. A rule whose
//! inputs are absent is `skipped`, never `pass`. A failed `error` rule rejects the run; with
//! `strict`, a failed `warning` does too. `info` never rejects.

use crate::derive::{Inputs, show as f};
use crate::report::{
    Check, Figure, Figures, ItlPer, Run, Severity, Stat, StatKey, Status, TokenCount, TpotMethod, Verdict,
};
use crate::vocabulary::{self, Kind};

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
    ("complete-block", Severity::Error),
    ("decode-capacity", Severity::Error),
    ("decode-within-e2e", Severity::Error),
    ("e2e-capacity", Severity::Error),
    ("latency-order", Severity::Error),
    ("finite-values", Severity::Error),
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

/// Run every rule and set `checks` and `verdict`.
pub fn validate(run: &mut Run, policy: &Policy) {
    let t = &policy.tolerances;
    let i = Inputs::of(run);
    let claimed = run.reported.stat("tpot_ms").and_then(Stat::mean).filter(|m| *m > 0.0);
    let outcomes: [Outcome; 12] = [
        complete_block(run),
        decode_capacity(&i, claimed, t),
        decode_within_e2e(&i, claimed, t),
        e2e_capacity(run, &i, t),
        latency_order(run, &i),
        finite_values(run),
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
    run.verdict = if run.checks.iter().any(rejects) { Verdict::Rejected } else { Verdict::Accepted };
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
    let key = [
        ("totals.successful_requests", run.totals.get("successful_requests").is_some()),
        ("totals.duration_s", run.totals.get("duration_s").is_some()),
        ("totals.output_tokens", run.totals.get("output_tokens").is_some()),
        ("reported.ttft_ms", run.reported.get("ttft_ms").is_some()),
        (
            "reported.tpot_ms or reported.e2e_ms",
            run.reported.get("tpot_ms").is_some() || run.reported.get("e2e_ms").is_some(),
        ),
        ("reported.itl_ms", run.reported.get("itl_ms").is_some()),
    ];
    let missing: Vec<&str> = key.iter().filter(|(_, present)| !present).map(|(n, _)| *n).collect();
    let what = if missing.is_empty() {
        "no key figure is missing, but rows after it may be lost".to_string()
    } else {
        format!("missing: {}", missing.join(", "))
    };
    (Status::Fail, format!("the block was cut off after line {} ({}); {what}", t.after_line, t.reason))
}

fn decode_capacity(i: &Inputs, claimed: Option<f64>, t: &Tolerances) -> Outcome {
    let Some(tpot) = claimed else { return skip("no TPOT claimed (no TPOT row)") };
    let (Some(n), Some(r), Some(d), Some((c, unit))) = (i.output_tokens, i.successful, i.duration_s, slots(i)) else {
        return skip("needs total output tokens, successful requests and duration");
    };
    let decode_tokens = n - r;
    if decode_tokens <= 0.0 || d <= 0.0 {
        return skip("no decode tokens or zero duration");
    }
    let need = decode_tokens * tpot / 1000.0;
    let supply = c * d;
    let ratio = need / supply;
    let msg = format!(
        "claimed TPOT {} ms needs {} s of decode work for {} tokens; {} {unit} x {} s supply {} s ({})",
        f(tpot),
        f(need),
        decode_tokens as u64,
        c as u64,
        f(d),
        f(supply),
        x(ratio)
    );
    if ratio > t.capacity {
        (Status::Fail, format!("{msg}, more than the {}x allowed", t.capacity))
    } else {
        (Status::Pass, msg)
    }
}

fn decode_within_e2e(i: &Inputs, claimed: Option<f64>, t: &Tolerances) -> Outcome {
    let Some(tpot) = claimed else { return skip("no TPOT claimed (no TPOT row)") };
    let (Some(e2e), Some(ttft), Some(n)) = (i.e2e_mean, i.ttft_mean, i.n_avg()) else {
        return skip("needs mean E2E latency, mean TTFT and token totals");
    };
    if n <= 1.0 || e2e <= ttft {
        return skip("no decode time to compare with (one token per request, or E2E <= TTFT)");
    }
    let bound = (e2e - ttft) / (n - 1.0);
    let ratio = tpot / bound;
    let msg = format!(
        "claimed TPOT {} ms vs (E2E {} - TTFT {}) / ({} - 1) = {} ms of decode time per token ({})",
        f(tpot),
        f(e2e),
        f(ttft),
        f(n),
        f(bound),
        x(ratio)
    );
    if ratio > t.capacity {
        (Status::Fail, format!("{msg}: requests cannot decode longer than they live (allowed {}x)", t.capacity))
    } else {
        (Status::Pass, msg)
    }
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
    if let (Some(conc), Some(c)) = (run.reported.number("mean_in_flight"), i.max_concurrency) {
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
    for (name, total, label) in
        [("output_tok_per_s", i.output_tokens, "output tokens"), ("request_per_s", i.successful, "successful requests")]
    {
        if let (Some(p), Some(n)) = (run.reported.number(name), total) {
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
        .reported
        .number("accept_length")
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
    let server = run.totals.number("output_tokens");
    let retok = run.totals.number("output_tokens_retokenized");
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
        run.workload.number("output_len"),
        run.reported.number("tokens_per_chunk"),
        server,
        run.totals.number("successful_requests"),
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
