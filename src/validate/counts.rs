//! Rules on the run's counts: printed rates against the totals over the duration, which token
//! count the output total is, and failed requests.

use crate::derive::{Inputs, show as f};
use crate::report::{Run, Status, TokenCount};
use crate::vocabulary::{reported, totals, workload};

use super::{Outcome, Tolerances, skip};

pub(super) fn throughput_totals(run: &Run, i: &Inputs, t: &Tolerances) -> Outcome {
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

pub(super) fn token_count_source(run: &Run, t: &Tolerances) -> Outcome {
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

pub(super) fn failed_requests(i: &Inputs) -> Outcome {
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
