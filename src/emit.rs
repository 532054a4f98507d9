//! Writing the report: JSON (the contract), JSON Lines, a human table, CSV, dstack's `benchmark`
//! or `metrics` object, and a written-out explanation of each run.

use crate::report::{Run, Severity, StatKey, Status};
use crate::vocabulary::Key;

mod csv;
mod dstack;
mod explain;
mod json;
mod table;

pub use csv::{CSV_COLUMNS, CSV_FORMULA_TRIGGERS, CsvWriter, csv_text};
pub use dstack::{TPOT_SOURCE_AGREEMENT, Unwritable, dstack, dstack_e2e_metrics, tpot_trio};
pub use explain::explain;
pub use json::{JsonReport, write_json, write_jsonl};
pub use table::table;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// The whole report, one JSON document.
    Json,
    /// One run per line, written as soon as the run is complete.
    Jsonl,
    /// Runs side by side for people.
    Table,
    /// One row per run, stable columns.
    Csv,
    /// What dstack's preset model accepts: its `benchmark` object, or its `metrics` (one per run).
    Dstack,
    /// The metrics object of dstack's proposal dstack#4230 (`e2e_ms`, TPOT derived).
    DstackE2e,
    /// An llm-d Benchmark Report v0.2 per run, one JSON document a line (see [`crate::llmd`]).
    LlmdBr,
    /// The derivation of each run written out.
    Explain,
}

impl OutputFormat {
    /// Formats that print each run as soon as it is complete.
    pub fn streams(self) -> bool {
        matches!(self, OutputFormat::Jsonl | OutputFormat::Csv | OutputFormat::LlmdBr | OutputFormat::Explain)
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
