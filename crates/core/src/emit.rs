//! Writing the report: JSON (the contract), JSON Lines, a human table, CSV, dstack's `benchmark`
//! or `metrics` object, and a written-out explanation of each run.

use crate::report::{Run, Severity, Status};

mod csv;
mod emitter;
mod explain;
mod json;
mod sglang_skill;
mod shaped;
mod table;

pub use crate::dstack::entries::{dstack_document, entry as dstack_entry};
pub use crate::dstack::write::{TPOT_SOURCE_AGREEMENT, Unwritable, dstack, dstack_e2e_metrics, tpot_trio};
pub use csv::{CSV_COLUMNS, CSV_FORMULA_TRIGGERS, CSV_OBJECTIVE_COLUMNS, CsvWriter, csv_text};
pub use emitter::{Emitter, Notice, Render, unfit_to_store};
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
    /// Every format, in the order the command line lists them.
    pub const ALL: [OutputFormat; 9] = [
        OutputFormat::Json,
        OutputFormat::Jsonl,
        OutputFormat::Table,
        OutputFormat::Csv,
        OutputFormat::Dstack,
        OutputFormat::DstackE2e,
        OutputFormat::LlmdBr,
        OutputFormat::SglangSkill,
        OutputFormat::Explain,
    ];

    /// The format's name on the command line (`--format`), in the Python module and the MCP
    /// server.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Json => "json",
            OutputFormat::Jsonl => "jsonl",
            OutputFormat::Table => "table",
            OutputFormat::Csv => "csv",
            OutputFormat::Dstack => "dstack",
            OutputFormat::DstackE2e => "dstack-e2e",
            OutputFormat::LlmdBr => "llmd-br",
            OutputFormat::SglangSkill => "sglang-skill",
            OutputFormat::Explain => "explain",
        }
    }

    /// The format of a name ([`OutputFormat::name`]).
    pub fn from_name(name: &str) -> Option<OutputFormat> {
        OutputFormat::ALL.into_iter().find(|f| f.name() == name)
    }

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

fn failed_ids(run: &Run) -> Vec<&str> {
    run.checks
        .iter()
        .filter(|c| c.status == Status::Fail && c.severity != Severity::Info)
        .map(|c| c.id.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    /// One list of names: the command line's (clap's, from the variant names) are the same, so
    /// that the Python module and `schema --format` accept what `--format` accepts.
    #[cfg(feature = "clap")]
    #[test]
    fn names_are_the_command_lines() {
        use super::OutputFormat;
        use clap::ValueEnum;
        for f in OutputFormat::ALL {
            assert_eq!(OutputFormat::from_name(f.name()), Some(f));
            match f.to_possible_value() {
                Some(v) => assert_eq!(v.get_name(), f.name()),
                // `--explain`, not `--format explain`.
                None => assert_eq!(f, OutputFormat::Explain),
            }
        }
        assert_eq!(OutputFormat::value_variants().len() + 1, OutputFormat::ALL.len());
        assert_eq!(OutputFormat::from_name("JSON"), None);
    }
}
