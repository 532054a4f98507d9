//! The table: runs side by side, one column per run, for a person reading a terminal.

use crate::error::printable;
use crate::number::show;
use crate::report::{ItlPer, ObjectiveResult, ObjectiveStatus, Run, StatKey, Verdict};
use crate::vocabulary::{reported, totals, workload};

use super::failed_ids;

/// Runs side by side: one column per run, the figures that matter as rows (derived TPOT and the
/// per-user decode rate first), units in the row names, failed checks marked.
pub fn table(runs: &[Run], color: bool) -> String {
    use comfy_table::{Attribute, Cell, CellAlignment, Color, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    if !color {
        t.force_no_tty();
    } else {
        t.enforce_styling();
    }
    let mut header = vec![Cell::new("")];
    for r in runs {
        header.push(
            Cell::new(format!("{} #{}", printable(short_input(&r.source.input)), r.source.block))
                .add_attribute(Attribute::Bold),
        );
    }
    t.set_header(header);
    let opt = |x: Option<f64>| x.map(show).unwrap_or_else(|| "-".into());
    type Getter = Box<dyn Fn(&Run) -> String>;
    let mut rows: Vec<(&str, Getter)> = vec![
        ("TPOT, derived (ms)", Box::new(move |r: &Run| opt(r.derived.tpot_ms.mean))),
        (
            "  method",
            Box::new(|r: &Run| r.derived.tpot_ms.method.map(|m| m.as_str().to_string()).unwrap_or_else(|| "-".into())),
        ),
        ("Per-user decode rate (tok/s)", Box::new(move |r: &Run| opt(r.derived.per_user_decode_tok_per_s))),
        ("Output throughput (tok/s)", Box::new(move |r: &Run| opt(r.derived.output_tok_per_s))),
        (
            "Tool",
            Box::new(|r: &Run| {
                format!("{} {}", r.source.tool, r.source.variant.clone().unwrap_or_default()).trim().to_string()
            }),
        ),
        ("Backend", Box::new(|r: &Run| r.text(workload::BACKEND).unwrap_or("-").to_string())),
        (
            "Requests ok / failed",
            Box::new(move |r: &Run| {
                format!("{} / {}", opt(r.number(totals::SUCCESSFUL_REQUESTS)), opt(r.number(totals::FAILED_REQUESTS)))
            }),
        ),
        ("Max concurrency", Box::new(move |r: &Run| opt(r.number(workload::MAX_CONCURRENCY)))),
        ("Duration (s)", Box::new(move |r: &Run| opt(r.number(totals::DURATION_S)))),
        ("Output tokens", Box::new(move |r: &Run| opt(r.number(totals::OUTPUT_TOKENS)))),
        (
            "TTFT mean / p99 (ms)",
            Box::new(move |r: &Run| {
                format!(
                    "{} / {}",
                    opt(r.stat_mean(reported::TTFT_MS)),
                    opt(r.stat_of(reported::TTFT_MS, StatKey::P(99.0)))
                )
            }),
        ),
        (
            "E2E mean (ms)",
            Box::new(move |r: &Run| opt(r.stat_mean(reported::E2E_MS).or(r.derived.e2e_ms.as_ref().map(|e| e.mean)))),
        ),
        ("TPOT printed by the tool (ms)", Box::new(move |r: &Run| opt(r.stat_mean(reported::TPOT_MS)))),
        (
            "ITL printed by the tool (ms)",
            Box::new(move |r: &Run| match (r.stat_mean(reported::ITL_MS), r.source.semantics.itl) {
                (Some(v), Some(ItlPer::Chunk)) => format!("{} per chunk", show(v)),
                (Some(v), Some(ItlPer::Token)) => format!("{} per token", show(v)),
                (v, _) => opt(v),
            }),
        ),
        ("Tokens per chunk", Box::new(move |r: &Run| opt(r.derived.tokens_per_chunk))),
        ("Accept length", Box::new(move |r: &Run| opt(r.number(reported::ACCEPT_LENGTH)))),
        ("Slot utilization", Box::new(move |r: &Run| opt(r.derived.slot_utilization))),
    ];
    // Runs read from a table of runs are named by their load step (`concurrent@4`, `rate=inf`).
    if runs.iter().any(|r| r.text(workload::STRATEGY).is_some()) {
        let at = rows.iter().position(|(name, _)| *name == "Max concurrency").map_or(rows.len(), |i| i + 1);
        rows.insert(at, ("Load step", Box::new(|r: &Run| r.text(workload::STRATEGY).unwrap_or("-").to_string())));
    }
    for (name, get) in &rows {
        let mut row = vec![Cell::new(*name)];
        for r in runs {
            // Every cell's text through `printable`: names and values come from inputs.
            row.push(Cell::new(printable(&get(r))).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    // `--slo`: a row per objective (every run is judged on the same list).
    let objectives: Vec<&str> = runs
        .iter()
        .find_map(|r| r.objectives.as_ref())
        .map(|os| os.iter().map(|o| o.objective.as_str()).collect())
        .unwrap_or_default();
    for (i, name) in objectives.iter().enumerate() {
        let unit = runs.iter().find_map(|r| r.objectives.as_ref()?.get(i)).map_or("", |o| o.unit.as_str());
        let mut row = vec![Cell::new(printable(&format!("SLO {name} ({unit})")))];
        for r in runs {
            let cell = match r.objectives.as_ref().and_then(|os| os.get(i)) {
                Some(o) => objective_cell(o),
                None => Cell::new("-"),
            };
            row.push(cell.set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    let mut verdict = vec![Cell::new("Verdict").add_attribute(Attribute::Bold)];
    for r in runs {
        let failed = failed_ids(r);
        let text = match r.verdict {
            Verdict::Accepted if failed.is_empty() => "accepted".to_string(),
            Verdict::Accepted => format!("accepted (warn: {})", failed.join(", ")),
            Verdict::Rejected => format!("REJECTED: {}", failed.join(", ")),
            Verdict::Unusable => "UNUSABLE: no usable key figure".to_string(),
        };
        let cell = Cell::new(printable(&text)).set_alignment(CellAlignment::Right);
        verdict.push(match r.verdict {
            Verdict::Rejected | Verdict::Unusable => cell.fg(Color::Red).add_attribute(Attribute::Bold),
            Verdict::Accepted if failed.is_empty() => cell.fg(Color::Green),
            Verdict::Accepted => cell.fg(Color::Yellow),
        });
    }
    t.add_row(verdict);
    format!("{t}\n")
}

/// A judged objective in the table: `pass 145.44 (margin 1854.56)`, `MISSED 2100 (margin -100)`,
/// or why it was not judged.
fn objective_cell(o: &ObjectiveResult) -> comfy_table::Cell {
    use comfy_table::{Attribute, Cell, Color};
    let figures = |word: &str| match (o.value, o.margin) {
        // To 6 significant digits, as the margin (`show`'s 2 decimals beside it would not add up).
        (Some(v), Some(m)) => format!("{word} {} (margin {m})", crate::number::round(v)),
        _ => word.to_string(),
    };
    match o.status {
        ObjectiveStatus::Pass => Cell::new(figures("pass")).fg(Color::Green),
        ObjectiveStatus::Fail => Cell::new(figures("MISSED")).fg(Color::Red).add_attribute(Attribute::Bold),
        ObjectiveStatus::NotAvailable => Cell::new("NOT AVAILABLE").fg(Color::Yellow),
        ObjectiveStatus::NotComparable => Cell::new("NOT COMPARABLE").fg(Color::Yellow),
        ObjectiveStatus::NotJudged => Cell::new("not judged"),
    }
}

pub(super) fn short_input(input: &str) -> &str {
    input.rsplit('/').next().unwrap_or(input)
}
