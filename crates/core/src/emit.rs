//! Writing the report: JSON (the contract), JSON Lines, a human table, CSV, dstack's `benchmark`
//! or `metrics` object, and a written-out explanation of each run.

use crate::report::{Run, Severity, StatKey, Status};
use crate::vocabulary::Key;

mod csv;
mod dstack;
mod entries;
mod explain;
mod json;
mod sglang_skill;
mod table;

pub use csv::{CSV_COLUMNS, CSV_FORMULA_TRIGGERS, CSV_OBJECTIVE_COLUMNS, CsvWriter, csv_text};
pub use dstack::{TPOT_SOURCE_AGREEMENT, Unwritable, dstack, dstack_e2e_metrics, tpot_trio};
pub use entries::{dstack_document, entry as dstack_entry};
pub use explain::explain;
pub use json::{JsonReport, write_json, write_jsonl};
pub use sglang_skill::{SGLANG_SKILL_STATUSES, sglang_skill_row};
pub use table::table;

/// Output formats (the command line's `--format`; `--explain` for [`OutputFormat::Explain`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum OutputFormat {
    /// The whole report (pretty on a terminal, compact otherwise)
    Json,
    /// One run per line, printed as soon as it is complete
    Jsonl,
    /// Runs side by side for people: derived TPOT and per-user decode rate first
    Table,
    /// One row per run, stable column names, header once
    Csv,
    /// What dstack's preset model accepts: the `benchmark` object when the run states the client's
    /// version and command, else its `metrics`; for several runs a list of entries
    /// `{input, block, first_line, load, benchmark|metrics}`; exit 5 for a run that lacks a figure
    /// dstack requires
    Dstack,
    /// The `metrics` object of dstack's proposal dstack#4230 (`e2e_ms` added, TPOT derived, null
    /// for what the run does not give; entries as for dstack for several runs); not what dstack
    /// 0.22.5 accepts
    DstackE2e,
    /// An llm-d Benchmark Report v0.2 per run, one JSON document a line (a rejected run is not
    /// written)
    LlmdBr,
    /// A row of the SGLang llm-serving-auto-benchmark skill's normalized result JSONL per run,
    /// its SLA keys from --slo, figures derived; a run not accepted is a `failed` row
    SglangSkill,
    /// The derivation of each run written out (`--explain`)
    #[cfg_attr(feature = "clap", value(skip))]
    Explain,
}

impl OutputFormat {
    /// Formats that print each run as soon as it is complete.
    pub fn streams(self) -> bool {
        matches!(
            self,
            OutputFormat::Jsonl
                | OutputFormat::Csv
                | OutputFormat::LlmdBr
                | OutputFormat::SglangSkill
                | OutputFormat::Explain
        )
    }
}

fn mean(run: &Run, figure: Key) -> Option<f64> {
    run.stat(figure).and_then(|s| s.mean())
}

fn stat(run: &Run, figure: Key, key: StatKey) -> Option<f64> {
    run.stat(figure).and_then(|s| s.get(key))
}

fn failed_ids(run: &Run) -> Vec<&str> {
    run.checks
        .iter()
        .filter(|c| c.status == Status::Fail && c.severity != Severity::Info)
        .map(|c| c.id.as_str())
        .collect()
}
