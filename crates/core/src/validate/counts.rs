//! Rules on the run's counts: printed rates against the totals over the duration, which token
//! count the output total is, and failed requests.

use crate::derive::Inputs;
use crate::number::shown as f;
use crate::report::{Rates, Run, Status, TokenCount};
use crate::vocabulary::{reported, totals, workload};

use super::{Outcome, ROUNDING_MS, Tolerances, skip};

/// A printed rate against its totals over the duration: `rate = total / D` is how a client
/// computes it, so a printed rate outside what the printed digits of the rate and of `D` allow
/// (plus the relative tolerance) contradicts the block: the rate, the total or the duration is
/// wrong, and every figure derived from the totals with it.
///
/// Which rates are held to the totals is the definition's `[semantics] rates`
/// (`run.source.semantics.rates`): the output-token and request rates unless it says otherwise;
/// with `all`, the input and total token rates too (`vllm bench serve` / `benchmark_serving.py` /
/// vllm-rs: `total_input / dur_s`, `(total_input + total_output) / dur_s`; `sglang.bench_serving`
/// the same); with `own-window`, none (guidellm computes its rates over its own measured window:
/// its published 0.2 sweeps print `5.1` output tok/s beside 128 tokens in 29.8 s, and `973`
/// beside 28,672 in 29.8 s), and the rule is skipped.
pub(super) fn throughput_totals(run: &Run, i: &Inputs, t: &Tolerances) -> Outcome {
    let rates = run.source.semantics.rates();
    if rates == Rates::OwnWindow {
        return skip(format!(
            "{}'s printed rates are not its printed totals over its printed duration",
            run.source.tool
        ));
    }
    let d = i.duration_s.filter(|d| *d > 0.0);
    if d.is_none() && i.per_request_tokens.is_none() {
        return skip("no duration");
    }
    // Half a unit of each figure's last printed digit; 2 decimals when no row says (a report
    // written by hand).
    let slack = |path: &str, v: f64| run.printed_slack(path, v).unwrap_or(ROUNDING_MS + 1e-9 * v.abs());
    let mut parts = Vec::new();
    let mut failed = false;
    // Input and total rates only where the client is known to print them over the same totals.
    let input = run.number(totals::INPUT_TOKENS).filter(|_| rates == Rates::All);
    let both = input.zip(i.output_tokens).map(|(a, b)| a + b);
    for (key, total, label) in [
        (reported::OUTPUT_TOK_PER_S, i.output_tokens, "output tokens"),
        (reported::REQUEST_PER_S, i.successful, "successful requests"),
        (reported::INPUT_TOK_PER_S, input, "input tokens"),
        (reported::TOTAL_TOK_PER_S, both, "input and output tokens"),
    ] {
        let (Some(p), Some(n), Some(d)) = (run.number(key), total, d) else { continue };
        let ud = slack(totals::DURATION_S.path(), d).min(d / 2.0);
        let up = slack(key.path(), p);
        // The exact rate lies in [n / (D + ud), n / (D - ud)], widened by the tolerance; the
        // exact printed one in [p - up, p + up].
        let (lo, hi) = (n / (d + ud) * (1.0 - t.throughput), n / (d - ud) * (1.0 + t.throughput));
        let ok = p + up >= lo && p - up <= hi;
        failed |= !ok;
        parts.push(format!("{} printed {} vs {} {label} / {} s = {}", key.rel(), f(p), f(n), f(d), f(n / d)));
    }
    // With tokens per request printed instead of a total (genai-perf): both rates are over the
    // same window, so their ratio is the mean output tokens per request.
    if let (None, Some(per), Some(out), Some(req)) = (
        i.output_tokens,
        i.per_request_tokens,
        run.number(reported::OUTPUT_TOK_PER_S),
        run.number(reported::REQUEST_PER_S),
    ) {
        let (uo, ur) = (slack(reported::OUTPUT_TOK_PER_S.path(), out), slack(reported::REQUEST_PER_S.path(), req));
        if req - ur > 0.0 && per > 0.0 {
            let (lo, hi) = ((out - uo) / (req + ur), (out + uo) / (req - ur));
            let ok = per >= lo * (1.0 - t.throughput) - 0.5 && per <= hi * (1.0 + t.throughput) + 0.5;
            failed |= !ok;
            parts.push(format!(
                "{} printed {} / {} printed {} = {} output tokens per request vs {} printed",
                reported::OUTPUT_TOK_PER_S.rel(),
                f(out),
                reported::REQUEST_PER_S.rel(),
                f(req),
                f(out / req),
                f(per)
            ));
        }
    }
    if parts.is_empty() {
        return skip("no printed throughput with its totals");
    }
    let msg = parts.join("; ");
    if failed {
        (
            Status::Fail,
            format!(
                "{msg}: the printed rate does not follow from the totals (beyond the rounding of the printed digits and {}%), so the rate, the total or the duration is wrong",
                t.throughput * 100.0
            ),
        )
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
