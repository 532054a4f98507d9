//! `sweep` and `plot`: read every run of the inputs, say the problems and the rejected runs on
//! stderr, and summarize them ([`bench_normalize_analysis::sweep`]), as a table, JSON or Markdown, or as an SVG
//! ([`bench_normalize_analysis::plot`]).

use std::io;
use std::path::{Path, PathBuf};

use super::args::{AggregateArgs, AggregateFormat, GroupByArg, ReadArgs, SweepArgs, SweepFormat};
use super::diagnostics::{report_checks, report_error, report_run_warning};
use super::{load_definitions, write_listing};
use bench_normalize_analysis::sweep;
use bench_normalize_core::report::{Run, Verdict};
use bench_normalize_core::{Error, ExitCode, Options};
use bench_normalize_core::{Policy, Tolerances};

/// Every run of `files`, read and validated, each problem and each rejected run said on stderr
/// (as for logs), with the worst exit code so far and the write guard (holding `target`, a file
/// to be written, to the inputs). `Err`: nothing could be read (the code to exit with).
pub(super) fn read_reported(
    files: &[PathBuf],
    read: &ReadArgs,
    target: Option<&Path>,
) -> Result<(Vec<Run>, ExitCode, super::guard::Guard), ExitCode> {
    // Every writer held to the inputs before any is read: the diagnostics' copy, stdout and
    // stderr, and the written file (checked again when it is written).
    let guard = super::guard::Guard::new(files);
    super::open_diagnostics(read.diagnostics_file.as_deref(), &guard, read.error_format)?;
    let target_ok = match target {
        Some(p) if !super::guard::names_stdout(p) => guard.check_target("plot -o", p),
        _ => Ok(()),
    };
    if let Err(e) = guard.streams().and(target_ok) {
        report_error(read.error_format, &e);
        return Err(e.exit_code());
    }
    let definitions = load_definitions(read.parsers.as_deref()).map_err(|e| {
        report_error(read.error_format, &e);
        e.exit_code()
    })?;
    if files.iter().any(|p| p.as_os_str() == "-") && std::io::IsTerminal::is_terminal(&io::stdin()) {
        super::diagnostics::report_notice(read.error_format, super::diagnostics::STDIN_NOTICE);
    }
    let policy = Policy { tolerances: Tolerances::default(), strict: read.strict };
    let opts = Options { definitions, policy, reports_only: false };
    let (runs, errors) = sweep::read_runs(files, &opts);
    let mut worst = ExitCode::Ok;
    for e in &errors {
        report_error(read.error_format, e);
        worst = worst.max(e.exit_code());
    }
    for run in &runs {
        match run.verdict {
            Verdict::Rejected => worst = worst.max(ExitCode::Rejected),
            Verdict::Unusable => worst = worst.max(ExitCode::NoResult),
            Verdict::Accepted => {}
        }
        report_checks(read.error_format, run, read.strict);
    }
    Ok((runs, worst, guard))
}

/// `aggregate`: the repetitions summarized ([`bench_normalize_analysis::aggregate`]), Markdown or JSON on stdout.
/// Exit code: as for logs (1 a repetition rejected and left out, 3 one unusable or an input with
/// no result, 4 I/O); 3 with nothing printed when no run is accepted.
pub(crate) fn aggregate_command(a: AggregateArgs) -> ExitCode {
    #[cfg(feature = "store")]
    if a.from_store {
        return match super::store::stored_runs(a.store.clone(), &a.labels, a.read.error_format) {
            Ok((runs, labels)) => aggregate_runs(&a, &runs, &labels, ExitCode::Ok),
            Err(code) => code,
        };
    }
    let (runs, worst, _guard) = match read_reported(&a.files, &a.read, None) {
        Ok(read) => read,
        Err(code) => return code,
    };
    aggregate_runs(&a, &runs, &[], worst)
}

fn aggregate_runs(
    a: &AggregateArgs,
    runs: &[Run],
    labels: &[std::collections::BTreeMap<String, String>],
    worst: ExitCode,
) -> ExitCode {
    let summary = bench_normalize_analysis::aggregate::aggregate_labelled(runs, labels, a.confidence);
    let worst = worst.max(summary.exit_code());
    if summary.groups.is_empty() {
        let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
        let e = Error::NoResult {
            input: names.join(", "),
            looked_for: format!("an accepted run to aggregate; {} run(s) read, none accepted", runs.len()),
        };
        report_error(a.read.error_format, &e);
        return worst.max(e.exit_code());
    }
    let text = match a.format {
        AggregateFormat::Markdown => bench_normalize_analysis::aggregate::markdown(&summary),
        AggregateFormat::Json => serde_json::to_string_pretty(&summary).expect("the summary serializes") + "\n",
    };
    worst.max(write_listing(text.as_bytes()))
}

/// The summary in `format`, or the SVG into `plot_to`. Exit code: as for logs (1 a run rejected,
/// 3 an input with no result or a run unusable, 4 I/O), and 3 when no run gives a point
/// (nothing is printed or written then).
pub(crate) fn sweep_command(a: SweepArgs, format: Option<SweepFormat>, plot_to: Option<PathBuf>) -> ExitCode {
    let (runs, worst, guard) = match read_reported(&a.files, &a.read, plot_to.as_deref()) {
        Ok(read) => read,
        Err(code) => return code,
    };
    let by = match a.group_by {
        GroupByArg::Workload => sweep::GroupBy::Workload,
        GroupByArg::Input => sweep::GroupBy::Input,
    };
    let summary = sweep::summarize(&runs, by);
    if !summary.has_points() {
        let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
        let e = Error::NoResult {
            input: names.join(", "),
            looked_for: format!(
                "a sweep point: an accepted run with a derived TPOT and an output throughput; {} run(s) read, none \
                 usable{}",
                runs.len(),
                if plot_to.is_some() { "; nothing was written" } else { "" }
            ),
        };
        report_error(a.read.error_format, &e);
        return worst.max(e.exit_code());
    }
    if plot_to.is_some() {
        // The summary carries them; the plot cannot.
        for w in summary.series.iter().flat_map(|s| &s.warnings) {
            report_run_warning(a.read.error_format, &bench_normalize_core::error::printable(w));
        }
    }
    let text = match (format, &plot_to) {
        (_, Some(path)) => {
            let svg = match bench_normalize_analysis::plot::render(&summary) {
                Ok(svg) => svg,
                Err(message) => {
                    let e = Error::Write { output: path.display().to_string(), source: io::Error::other(message) };
                    report_error(a.read.error_format, &e);
                    return worst.max(e.exit_code());
                }
            };
            if let Err(e) = guard.write_whole("plot -o", path, svg.as_bytes()) {
                report_error(a.read.error_format, &e);
                return worst.max(e.exit_code());
            }
            return worst;
        }
        (Some(SweepFormat::Json) | None, None) => {
            let mut t = serde_json::to_string_pretty(&summary).expect("the summary serializes");
            t.push('\n');
            t
        }
        (Some(SweepFormat::Table), None) => sweep::to_table(&summary),
        (Some(SweepFormat::Markdown), None) => sweep::to_markdown(&summary),
    };
    worst.max(write_listing(text.as_bytes()))
}
