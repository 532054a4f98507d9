//! Rules on what a run has: its key figures, a block that reached its closing line, per-request
//! arrays that agree with the printed figures, and dstack's own model for a dstack document.

use crate::derive::Inputs;
use crate::report::{Run, Status};
use crate::vocabulary::{Key, reported, totals};

use super::{Outcome, skip};

/// A dstack document (`check` of a preset report, `trial.json`, `final_report.json`) must be what
/// dstack's own model accepts: dstack would refuse to store it otherwise (see [`crate::dstack::model`]).
/// Proof: each violation is a validator of dstack 0.22.5's pydantic model that fails on the
/// document's own values; no tolerance.
/// Run on dstack documents only (`None` for other runs).
pub(super) fn dstack_model(run: &Run) -> Option<Outcome> {
    crate::dstack::model::outcome(run)
}

/// Nothing usable is not accepted. Proof sketch: not a contradiction but an absence; a run
/// whose TPOT, TTFT and throughputs are all unknown (every value unreadable or not finite, no
/// successful request, or a cut-off block that lost what TPOT needs) has nothing to paste.
pub(super) fn key_figures(run: &Run, i: &Inputs) -> Outcome {
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
    if let Some(t) = &run.source.truncated
        && d.tpot_ms.mean.is_none()
    {
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
pub(super) fn complete_block(run: &Run) -> Outcome {
    if !run.source.format.is_text() && run.source.truncated.is_none() {
        return skip("not a text block");
    }
    let what = if run.source.format.is_text() { "block" } else { "document" };
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
    let missing = if missing.is_empty() {
        "no key figure is missing; rows after the cut (if any) are not in the report".to_string()
    } else {
        format!("missing: {}", missing.join(", "))
    };
    (Status::Fail, format!("the {what} was cut off after line {} ({}); {missing}", t.after_line, t.reason))
}

/// The per-request arrays agree with themselves and with the file's summary figures (the rule
/// and its proof sketch: `derive::requests`).
pub(super) fn per_request_consistency(run: &Run) -> Outcome {
    crate::derive::requests::consistency(run)
}
