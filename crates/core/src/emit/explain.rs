//! `--explain`: the derivation of a run written out with its numbers and the rows that fed them.

use crate::error::printable;
use crate::number::show;
use crate::report::{Check, ItlPer, ObjectiveStatus, Row, Run, Severity, StatKey, Status, TpotMethod, Verdict};
use crate::vocabulary::{Key, reported, totals};

/// Rows that fed a figure, as `line N "Label: value"`.
pub(super) fn source_rows(run: &Run, field_prefix: &str) -> Vec<String> {
    run.rows
        .iter()
        .filter(|r: &&Row| {
            r.field.as_deref().is_some_and(|f| f == field_prefix || f.starts_with(&format!("{field_prefix}.")))
        })
        .map(|r| {
            format!("line {} \"{}: {}\"", r.line, printable(&r.label), printable(r.value.as_deref().unwrap_or("")))
        })
        .collect()
}

/// The derivation of a run written out with its numbers, for a person deciding whether to trust a
/// figure. Every text in it that is not the explanation's own (names, labels, values, messages
/// that quote an input) is escaped as the diagnostics are: a line of the explanation is always one.
pub fn explain(run: &Run) -> String {
    let p = |t: &str| printable(t).into_owned();
    let mut o = String::new();
    let s = &run.source;
    let lines = match (s.first_line, s.last_line) {
        (Some(a), Some(b)) => format!(", lines {a}-{b}"),
        (Some(a), None) => format!(", line {a}"),
        _ => String::new(),
    };
    o += &format!(
        "Run {} of {}: {} ({}, variant {}){lines}\n",
        s.block,
        p(&s.input),
        p(&s.tool),
        p(&s.parser),
        p(s.variant.as_deref().unwrap_or("unknown"))
    );
    let t = &run.derived.tpot_ms;
    match (t.mean, t.method) {
        (Some(m), Some(method)) => {
            o += &format!("  TPOT {} ms, method {}\n", show(m), method.as_str());
            if let Some(f) = &t.formula {
                o += &format!("    = {}\n", p(f));
            }
            if let Some(a) = &t.approximate {
                o += &format!("    approximate: {a}\n");
            }
            // The figures the method read (a statistic of one when named), by the rows that fed them.
            let inputs: &[(Key, Option<StatKey>)] = match method {
                TpotMethod::E2eTtftTokens => &[
                    (reported::E2E_MS, Some(StatKey::Mean)),
                    (reported::TTFT_MS, Some(StatKey::Mean)),
                    (totals::OUTPUT_TOKENS, None),
                    (totals::SUCCESSFUL_REQUESTS, None),
                ],
                TpotMethod::E2eMedianTtftTokens => &[
                    (reported::E2E_MS, Some(StatKey::Mean)),
                    (reported::TTFT_MS, Some(StatKey::P(50.0))),
                    (totals::OUTPUT_TOKENS, None),
                    (totals::SUCCESSFUL_REQUESTS, None),
                ],
                TpotMethod::ToolTpot | TpotMethod::Claimed => &[(reported::TPOT_MS, None)],
                TpotMethod::PerRequest => &[],
            };
            for (key, stat) in inputs {
                let field = match stat {
                    Some(s) => format!("{key}.{}", s.name()),
                    None => key.path().to_string(),
                };
                for r in source_rows(run, &field) {
                    o += &format!("    from {r}\n");
                }
            }
            if let Some(pr) = &run.derived.per_request {
                o += &format!(
                    "    over {} requests in the file ({} failed, {} with one token), E2E from {}\n",
                    pr.requests,
                    pr.failed,
                    pr.single_token,
                    p(&pr.e2e_source)
                );
            }
        }
        _ => o += &format!("  TPOT unknown: {}\n", p(t.reason.as_deref().unwrap_or("no method applies"))),
    }
    if let (Some(rate), Some(m)) = (run.derived.per_user_decode_tok_per_s, t.mean) {
        o += &format!("  per-user decode rate {} tok/s = 1000 / {}\n", show(rate), show(m));
    }
    if let (Some(n), Some(dur)) = (run.number(totals::OUTPUT_TOKENS), run.number(totals::DURATION_S)) {
        o += &format!(
            "  output throughput {} tok/s = {} tokens / {} s\n",
            run.derived.output_tok_per_s.map(show).unwrap_or_default(),
            show(n),
            show(dur)
        );
    }
    if let Some(itl) = run.stat_mean(reported::ITL_MS) {
        let how = match run.source.semantics.itl {
            Some(ItlPer::Chunk) => "per streamed chunk",
            Some(ItlPer::Token) => "per token",
            None => "in an unknown way",
        };
        o += &format!("  the printed mean ITL {} ms is timed {how}", show(itl));
        if let Some(why) = &run.source.semantics.itl_why {
            o += &format!(" ({})", p(why));
        }
        o += "; it is never used as TPOT";
        if let Some(k) = run.derived.tokens_per_chunk {
            o += &format!("; chunks carry ~{} tokens", show(k));
        }
        o += "\n";
    }
    if let Some(e) = &run.derived.e2e_ms {
        o += &format!("  E2E approximated: {} ms = {}\n", show(e.mean), p(&e.formula));
    }
    o += "  checks:\n";
    for c in &run.checks {
        o += &format!("    {:<7} {:<19} {}\n", check_mark(c), p(c.id.as_str()), p(&c.message));
    }
    if let Some(objectives) = &run.objectives {
        o += "  objectives:\n";
        for r in objectives {
            o += &format!(
                "    {:<14} {}: {}\n",
                objective_mark(r.status),
                p(&r.objective),
                p(&crate::objectives::describe(r))
            );
        }
    }
    for n in &run.notes {
        let at = n.line.map(|l| format!(" (line {l})")).unwrap_or_default();
        o += &format!("  note {}{at}: {}\n", p(&n.code), p(&n.message));
    }
    o += &format!(
        "  verdict: {}\n\n",
        match run.verdict {
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "REJECTED",
            Verdict::Unusable => "UNUSABLE",
        }
    );
    o
}

fn objective_mark(s: ObjectiveStatus) -> &'static str {
    match s {
        ObjectiveStatus::Pass => "pass",
        ObjectiveStatus::Fail => "MISSED",
        ObjectiveStatus::NotAvailable => "NOT AVAILABLE",
        ObjectiveStatus::NotComparable => "NOT COMPARABLE",
        ObjectiveStatus::NotJudged => "not judged",
    }
}

pub(super) fn check_mark(c: &Check) -> &'static str {
    match (c.status, c.severity) {
        (Status::Pass, _) => "pass",
        (Status::Skipped, _) => "skipped",
        (Status::Fail, Severity::Error) => "FAIL",
        (Status::Fail, Severity::Warning) => "warn",
        (Status::Fail, Severity::Info) => "note",
    }
}
