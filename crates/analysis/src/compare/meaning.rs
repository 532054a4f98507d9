//! The meaning checks: what differs between two sides' figures, and what that refuses or warns.

#[allow(unused_imports)]
use super::*;

// ------------------------------------------------------------------------------------------------
// Meaning checks

pub(super) const TOKEN_FIGS: [Fig; 3] = [Fig::Tpot, Fig::PerUser, Fig::OutputThroughput];
pub(super) const LATENCY_FIGS: [Fig; 6] =
    [Fig::Tpot, Fig::PerUser, Fig::TtftP50, Fig::TtftP99, Fig::E2eMean, Fig::E2eP50];

/// What a run's ITL is timed over: a token, or a chunk of about `k` tokens (`None`: unknown).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ItlUnit {
    Token,
    /// ITL timed per chunk and chunks carry one token: per token in effect.
    ChunkOfOne,
    Chunk(Option<f64>),
}

/// Tokens per chunk up to this count as one (rounding of the printed ITL and TPOT).
pub(super) const ONE_TOKEN_CHUNK: f64 = 1.1;
/// Two per-chunk ITLs compare only when their chunks carry this close a number of tokens.
pub(super) const SAME_CHUNK_SIZE: f64 = 0.1;
/// A token count corroborated by the re-tokenized one within this fraction.
pub(super) const RETOKENIZED_AGREES: f64 = 0.01;

pub(super) fn itl_unit(run: &Run) -> Option<ItlUnit> {
    itl_mean(run)?;
    Some(match itl_per(run)? {
        ItlPer::Token => ItlUnit::Token,
        ItlPer::Chunk => match tokens_per_chunk(run) {
            Some(k) if k <= ONE_TOKEN_CHUNK => ItlUnit::ChunkOfOne,
            k => ItlUnit::Chunk(k),
        },
    })
}

pub(super) fn describe_itl(u: ItlUnit) -> String {
    match u {
        ItlUnit::Token => "per token".into(),
        ItlUnit::ChunkOfOne => "per streamed chunk of one token".into(),
        ItlUnit::Chunk(Some(k)) => format!("per streamed chunk of ~{} tokens", show(k)),
        ItlUnit::Chunk(None) => "per streamed chunk (tokens per chunk unknown: no TPOT to divide by)".into(),
    }
}

pub(super) fn token_source_name(t: Option<TokenCount>) -> &'static str {
    match t {
        Some(TokenCount::Server) => "the server's usage counts",
        Some(TokenCount::ServerOrRequested) => "the server's counts when sent, else the requested lengths",
        Some(TokenCount::Requested) => "the requested lengths, whatever was generated",
        Some(TokenCount::Retokenized) => "the client re-tokenizing the text",
        None => "an unknown source",
    }
}

/// Whether a run's output token total is confirmed by its own re-tokenized total.
pub(super) fn retokenized_agrees(run: &Run) -> bool {
    match (output_tokens(run), output_tokens_retokenized(run)) {
        (Some(n), Some(r)) if n > 0.0 => ((r - n) / n).abs() <= RETOKENIZED_AGREES,
        _ => false,
    }
}

/// The meaning checks of one pair: `b` the baseline's runs, `o` the other's (usable ones), by
/// side name.
pub(super) fn issues(b: &[&Run], o: &[&Run], bname: &str, oname: &str) -> Vec<Issue> {
    let mut out = Vec::new();
    let sides: [(&str, &[&Run]); 2] = [(bname, b), (oname, o)];

    // ITL: per token against per chunk of several tokens is no comparison; nor is an ITL whose
    // timing the run does not state.
    for (name, runs) in sides {
        for r in runs.iter().filter(|r| itl_mean(r).is_some() && itl_per(r).is_none()) {
            out.push(Issue {
                code: "itl-meaning",
                level: Level::Refuse,
                figures: vec![Fig::ItlMean],
                message: format!(
                    "{name} ({}): it is not known whether its ITL is timed per token or per streamed chunk",
                    RunRef::of(r).name()
                ),
            });
        }
    }
    let units: Vec<Vec<ItlUnit>> =
        sides.iter().map(|(_, runs)| runs.iter().filter_map(|r| itl_unit(r)).collect()).collect();
    let per_token = |u: &ItlUnit| matches!(u, ItlUnit::Token | ItlUnit::ChunkOfOne);
    let mut itl_refused = false;
    for (i, (name, _)) in sides.iter().enumerate() {
        let u = &units[i];
        if u.iter().any(per_token) && u.iter().any(|x| !per_token(x)) {
            itl_refused = true;
            out.push(Issue {
                code: "itl-meaning",
                level: Level::Refuse,
                figures: vec![Fig::ItlMean],
                message: format!("the runs of {name} time ITL differently (per token and per chunk of several tokens)"),
            });
        }
    }
    if !itl_refused && !units[0].is_empty() && !units[1].is_empty() {
        let (ub, uo) = (units[0][0], units[1][0]);
        let chunk_sizes = |u: &[ItlUnit]| -> Vec<Option<f64>> {
            u.iter().map(|x| if let ItlUnit::Chunk(k) = x { *k } else { Some(1.0) }).collect()
        };
        if per_token(&ub) != per_token(&uo) {
            out.push(Issue {
                code: "itl-meaning",
                level: Level::Refuse,
                figures: vec![Fig::ItlMean],
                message: format!(
                    "ITL is timed {} in {bname} and {} in {oname}: a chunk gap is not a per-token latency \
                     (compare TPOT instead)",
                    describe_itl(ub),
                    describe_itl(uo)
                ),
            });
        } else if !per_token(&ub) {
            let all: Vec<Option<f64>> = chunk_sizes(&units[0]).into_iter().chain(chunk_sizes(&units[1])).collect();
            let known: Vec<f64> = all.iter().flatten().copied().collect();
            let (lo, hi) = known.iter().fold((f64::INFINITY, 0.0f64), |(l, h), &k| (l.min(k), h.max(k)));
            if known.len() < all.len() || hi > lo * (1.0 + SAME_CHUNK_SIZE) {
                out.push(Issue {
                    code: "itl-meaning",
                    level: Level::Refuse,
                    figures: vec![Fig::ItlMean],
                    message: format!(
                        "ITL is timed per streamed chunk on both sides, but the chunks differ ({} in {bname}, {} in \
                         {oname}): the gaps are not over the same number of tokens (compare TPOT instead)",
                        describe_itl(ub),
                        describe_itl(uo)
                    ),
                });
            } else {
                out.push(Issue {
                    code: "itl-meaning",
                    level: Level::Warn,
                    figures: vec![Fig::ItlMean],
                    message: format!(
                        "ITL is timed per streamed chunk of ~{} tokens on both sides: it is a chunk gap, not a \
                         per-token latency",
                        show(lo)
                    ),
                });
            }
        }
    }

    // TPOT: a side that has only a TTFT-inclusive per-token latency has no TPOT to compare.
    for (name, runs) in sides {
        for r in runs.iter().filter(|r| tpot(r).is_none()) {
            if let Some(v) = ttft_inclusive_per_token(r) {
                out.push(Issue {
                    code: "tpot-includes-ttft",
                    level: Level::Refuse,
                    figures: vec![Fig::Tpot, Fig::PerUser],
                    message: format!(
                        "{name} ({}) gives only a per-output-token latency that includes TTFT ({} ms, guidellm's \
                         and llmperf's meaning of TPOT), not a TPOT; and not enough to derive one",
                        RunRef::of(r).name(),
                        show(v)
                    ),
                });
            }
        }
        for r in runs.iter().filter(|r| tpot(r).is_some()) {
            if let Some(why) = tpot_approximate(r) {
                out.push(Issue {
                    code: "tpot-approximate",
                    level: Level::Warn,
                    figures: vec![Fig::Tpot, Fig::PerUser],
                    message: format!("{name} ({}): the TPOT is approximate: {why}", RunRef::of(r).name()),
                });
            }
            if let Some(why) = tpot_unverified(r) {
                let method = tpot_method(r).map_or("unknown", TpotMethod::as_str);
                out.push(Issue {
                    code: "tpot-unverified",
                    level: Level::Warn,
                    figures: vec![Fig::Tpot, Fig::PerUser],
                    message: format!(
                        "{name} ({}): the TPOT is the tool's claim (method {method}), not derived from E2E \
                         latency: {why}",
                        RunRef::of(r).name()
                    ),
                });
            }
        }
    }

    // Output token counts: a count a run's own check contradicts refuses; different sources warn.
    for (name, runs) in sides {
        for r in runs {
            if let Some(msg) = check_failed(r, bench_normalize_core::report::RuleId::TokenCountSource) {
                out.push(Issue {
                    code: "token-count-source",
                    level: Level::Refuse,
                    figures: TOKEN_FIGS.to_vec(),
                    message: format!(
                        "{name} ({}): its output token count is contradicted by its own figures (token-count-source: \
                         {msg})",
                        RunRef::of(r).name()
                    ),
                });
            }
        }
    }
    let sources: Vec<BTreeSet<String>> = sides
        .iter()
        .map(|(_, runs)| runs.iter().map(|r| format!("{:?}", token_source(r))).collect::<BTreeSet<_>>())
        .collect();
    let corroborated = |runs: &[&Run]| {
        runs.iter().all(|r| matches!(token_source(r), Some(TokenCount::Server)) || retokenized_agrees(r))
    };
    let (sb, so) = (b.first().and_then(|r| token_source(r)), o.first().and_then(|r| token_source(r)));
    let differ = sources[0] != sources[1] || sources[0].len() > 1 || sources[1].len() > 1;
    let both_corroborated = corroborated(b) && corroborated(o);
    if !b.is_empty() && !o.is_empty() && differ && !both_corroborated {
        out.push(Issue {
            code: "token-count-source",
            level: Level::Warn,
            figures: TOKEN_FIGS.to_vec(),
            message: format!(
                "output tokens are counted from {} in {bname} and from {} in {oname}; the counts agree only when \
                 every request generated what was asked (ignore_eos)",
                token_source_name(sb),
                token_source_name(so)
            ),
        });
    }

    // Failed requests: throughput over a different set of completed requests is no comparison.
    let fails: Vec<Vec<Option<(u64, &str)>>> =
        sides.iter().map(|(_, runs)| runs.iter().map(|r| failed(r)).collect()).collect();
    let known = |v: &[Option<(u64, &str)>]| -> Option<BTreeSet<u64>> { v.iter().map(|f| f.map(|(n, _)| n)).collect() };
    match (known(&fails[0]), known(&fails[1])) {
        (Some(fb), Some(fo)) if !fails[0].is_empty() && !fails[1].is_empty() && fb != fo => {
            let list = |s: &BTreeSet<u64>| s.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            let message = format!(
                "{} failed request(s) in {bname}, {} in {oname}: the figures are over different sets of completed \
                 requests",
                list(&fb),
                list(&fo)
            );
            out.push(Issue {
                code: "failed-requests",
                level: Level::Refuse,
                figures: vec![Fig::OutputThroughput],
                message: format!("{message}, and a failed request frees its slot early"),
            });
            out.push(Issue { code: "failed-requests", level: Level::Warn, figures: LATENCY_FIGS.to_vec(), message });
        }
        (Some(_), Some(_)) => {}
        _ if !b.is_empty() && !o.is_empty() => {
            let unknown: Vec<&str> =
                sides.iter().zip(&fails).filter(|(_, f)| f.iter().any(Option::is_none)).map(|((n, _), _)| *n).collect();
            out.push(Issue {
                code: "failed-requests",
                level: Level::Warn,
                figures: vec![Fig::OutputThroughput],
                message: format!(
                    "{} does not say how many requests failed: the throughputs may be over different numbers of \
                     requests",
                    unknown.join(" and ")
                ),
            });
        }
        _ => {}
    }

    // E2E: where a request's latency stops, and an E2E derived rather than measured.
    let ends: Vec<BTreeSet<String>> = sides
        .iter()
        .map(|(_, runs)| runs.iter().filter_map(|r| e2e_end(r).map(|e| format!("{e:?}"))).collect())
        .collect();
    if !ends[0].is_empty() && !ends[1].is_empty() && (ends[0] != ends[1] || ends[0].len() > 1) {
        let name = |runs: &[&Run]| match runs.iter().find_map(|r| e2e_end(r)) {
            Some(E2eEnd::LastChunk) => "at the last token chunk",
            Some(E2eEnd::DoneLine) => "at the data: [DONE] line",
            None => "at an unknown point",
        };
        out.push(Issue {
            code: "e2e-end",
            level: Level::Warn,
            figures: vec![Fig::E2eMean, Fig::E2eP50],
            message: format!(
                "E2E latency ends {} in {bname} and {} in {oname} (a few ms per request)",
                name(b),
                name(o)
            ),
        });
    }
    for (name, runs) in sides {
        for r in runs.iter().filter(|r| e2e(r, StatKey::Mean).is_some_and(|(_, approx)| approx)) {
            out.push(Issue {
                code: "e2e-approximate",
                level: Level::Warn,
                figures: vec![Fig::E2eMean],
                message: format!(
                    "{name} ({}) printed no E2E latency: its mean is derived (TTFT + (n - 1) x TPOT), not measured",
                    RunRef::of(r).name()
                ),
            });
        }
    }
    out
}

/// Runs of one side that look like the same run read twice (its log and its result file, or one
/// file given twice): same requests, tokens and duration.
pub(super) fn same_run_twice(runs: &[&Run], name: &str) -> Vec<Issue> {
    let mut out = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        for c in &runs[i + 1..] {
            let same = |x: Option<f64>, y: Option<f64>, tol: f64| match (x, y) {
                (Some(x), Some(y)) => (x - y).abs() <= tol * x.abs().max(y.abs()),
                _ => false,
            };
            if same(successful(a), successful(c), 0.0)
                && same(output_tokens(a), output_tokens(c), 0.0)
                && same(duration(a), duration(c), 0.001)
                && same(ttft(a, StatKey::Mean), ttft(c, StatKey::Mean), 0.001)
            {
                out.push(Issue {
                    code: "same-run-twice",
                    level: Level::Warn,
                    figures: Vec::new(),
                    message: format!(
                        "{name}: {} and {} look like one run read twice (same requests, tokens, duration and TTFT): \
                         it counts twice in the median and the spread",
                        RunRef::of(a).name(),
                        RunRef::of(c).name()
                    ),
                });
            }
        }
    }
    out
}
