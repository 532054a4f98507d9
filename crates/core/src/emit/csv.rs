//! CSV: one row per run in stable columns, cells that a spreadsheet would run as a formula
//! quoted.

use std::io;
use std::io::Write;

use crate::report::{ObjectiveStatus, Run, StatKey, Verdict};
use crate::vocabulary::{reported, totals, workload};

use super::failed_ids;

/// The CSV columns, in order (stable: scripts read them by name).
pub const CSV_COLUMNS: &[&str] = &[
    "input",
    "block",
    "parser",
    "tool",
    "variant",
    "format",
    "verdict",
    "failed_checks",
    "tpot_ms",
    "tpot_method",
    "per_user_decode_tok_per_s",
    "output_tok_per_s",
    "request_per_s",
    "mean_in_flight",
    "slot_utilization",
    "tokens_per_chunk",
    "successful_requests",
    "failed_requests",
    "duration_s",
    "input_tokens",
    "output_tokens",
    "max_concurrency",
    "backend",
    "ttft_ms_mean",
    "ttft_ms_p50",
    "ttft_ms_p99",
    "e2e_ms_mean",
    "e2e_ms_p50",
    "e2e_ms_p99",
    "reported_tpot_ms_mean",
    "itl_ms_mean",
    "itl_per",
    "accept_length",
];

/// A figure in a CSV cell: the number as Rust writes it (`-3.5` is a negative number, read as
/// one by every spreadsheet, never a formula). A value that is no finite number (none reaches the
/// report, but a cell must not depend on that) is text, and neutralized as text is.
pub(super) fn num(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => v.to_string(),
        Some(v) => csv_text(&v.to_string()).into_owned(),
        None => String::new(),
    }
}

/// The characters that make a spreadsheet read a cell as a formula when the cell begins with
/// them (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
pub const CSV_FORMULA_TRIGGERS: &[char] = &['=', '+', '-', '@', '\t', '\r'];

/// A text cell of the CSV output (a file name, a tool, variant or backend name, anything that
/// may come from an input), neutralized as OWASP recommends against CSV injection: a cell that
/// begins with a formula trigger ([`CSV_FORMULA_TRIGGERS`]) gets a leading `'`, which makes a
/// spreadsheet show it as text (`=cmd|' /C calc'!A0` is written `'=cmd|' /C calc'!A0`). Quoting
/// (a cell holding `,`, `"` or a line break) is the CSV writer's. Figures are written by `num`,
/// never through here. One exception: `-` alone, the name standard input is reported under,
/// which is no formula (no operand) and which scripts match as is.
pub fn csv_text(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell != "-" && cell.starts_with(CSV_FORMULA_TRIGGERS) {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

pub(super) fn csv_record(run: &Run) -> Vec<String> {
    let s = &run.source;
    let d = &run.derived;
    let text = |t: &str| csv_text(t).into_owned();
    vec![
        text(&s.input),
        s.block.to_string(),
        text(&s.parser),
        text(&s.tool),
        text(s.variant.as_deref().unwrap_or_default()),
        text(s.format.as_str()),
        run.verdict.as_str().into(),
        text(&failed_ids(run).join(" ")),
        num(d.tpot_ms.mean),
        text(d.tpot_ms.method.map(|m| m.as_str()).unwrap_or_default()),
        num(d.per_user_decode_tok_per_s),
        num(d.output_tok_per_s),
        num(d.request_per_s),
        num(d.mean_in_flight),
        num(d.slot_utilization),
        num(d.tokens_per_chunk),
        num(run.number(totals::SUCCESSFUL_REQUESTS)),
        num(run.number(totals::FAILED_REQUESTS)),
        num(run.number(totals::DURATION_S)),
        num(run.number(totals::INPUT_TOKENS)),
        num(run.number(totals::OUTPUT_TOKENS)),
        num(run.number(workload::MAX_CONCURRENCY)),
        text(run.text(workload::BACKEND).unwrap_or_default()),
        num(run.stat_mean(reported::TTFT_MS)),
        num(run.stat_of(reported::TTFT_MS, StatKey::P(50.0))),
        num(run.stat_of(reported::TTFT_MS, StatKey::P(99.0))),
        num(run.stat_mean(reported::E2E_MS)),
        num(run.stat_of(reported::E2E_MS, StatKey::P(50.0))),
        num(run.stat_of(reported::E2E_MS, StatKey::P(99.0))),
        num(run.stat_mean(reported::TPOT_MS)),
        num(run.stat_mean(reported::ITL_MS)),
        text(run.text(reported::ITL_PER).unwrap_or_default()),
        num(run.number(reported::ACCEPT_LENGTH)),
    ]
}

/// The columns added after [`CSV_COLUMNS`] when the runs were judged on objectives (`--slo`):
/// `objectives` is `met` (every objective passed), `not-met` or `not-judged` (a rejected or
/// unusable run); `objectives_not_met` lists each objective not met as `objective:status`.
pub const CSV_OBJECTIVE_COLUMNS: &[&str] = &["objectives", "objectives_not_met"];

fn csv_objectives(run: &Run) -> Vec<String> {
    let Some(os) = &run.objectives else { return vec![String::new(), String::new()] };
    let summary = if run.verdict != Verdict::Accepted {
        "not-judged"
    } else if os.iter().all(|o| o.status == ObjectiveStatus::Pass) {
        "met"
    } else {
        "not-met"
    };
    let not_met: Vec<String> = os
        .iter()
        .filter(|o| crate::objectives::is_missed(o))
        .map(|o| format!("{}:{}", o.objective, o.status.as_str()))
        .collect();
    vec![summary.to_string(), csv_text(&not_met.join(" ")).into_owned()]
}

/// Writes CSV: the header once, then one row per run as runs come.
pub struct CsvWriter {
    header_written: bool,
    /// The first run was judged on objectives: so is every run, and their columns are written.
    objectives: bool,
}

impl CsvWriter {
    pub fn new() -> CsvWriter {
        CsvWriter { header_written: false, objectives: false }
    }

    pub fn write(&mut self, out: &mut dyn Write, run: &Run) -> io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        if !self.header_written {
            self.objectives = run.objectives.is_some();
            let mut header = CSV_COLUMNS.to_vec();
            if self.objectives {
                header.extend_from_slice(CSV_OBJECTIVE_COLUMNS);
            }
            w.write_record(header)?;
            self.header_written = true;
        }
        let mut record = csv_record(run);
        if self.objectives {
            record.extend(csv_objectives(run));
        }
        w.write_record(record)?;
        w.flush()
    }
}

impl Default for CsvWriter {
    fn default() -> Self {
        CsvWriter::new()
    }
}
