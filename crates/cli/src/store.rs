//! `bench-normalize store ...` and `regress`: the command line of [`bench_normalize_store`] (docs/store.md).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::args::{
    ErrorFormat, ExportFormat, HistoryFigure, ListFormat, PlotArgs, ReadArgs, RegressArgs, RegressFormat, StoreAction,
    StoreArgs, TestArg,
};
use super::diagnostics::{emit, report_checks, report_error};
use super::load_definitions;
use bench_normalize_analysis::compare::Fig;
use bench_normalize_core::error::printable;
use bench_normalize_core::{Error, ExitCode, Options, Policy, Run, Tolerances};
use bench_normalize_store::history;
use bench_normalize_store::regress::{self, Settings, Test};
use bench_normalize_store::{self as store, Added, Filter, Labels, Store, StoreError};

/// A store error on stderr, as the other diagnostics are (code `store`).
fn report_store_error(format: ErrorFormat, e: &StoreError) {
    let line = match format {
        ErrorFormat::Human => format!("bench-normalize: {}\n", printable(&e.to_string())),
        ErrorFormat::Json => format!(
            "{}\n",
            serde_json::json!({
                "code": "store",
                "message": e.to_string(),
                "input": e.path(),
                "line": null,
                "column": null,
                "exit_code": e.exit_code() as i32,
            })
        ),
    };
    emit(&line, &line);
}

/// `--store`, else the variable (clap reads it), else the default under the user's data folder;
/// none of them: said in `format`, and the exit code.
fn store_path(given: Option<PathBuf>, format: ErrorFormat) -> Result<PathBuf, ExitCode> {
    given.filter(|p| !p.as_os_str().is_empty()).or_else(store::default_path).ok_or_else(|| {
        let e = Error::Usage(format!(
            "no store: give --store PATH or set ${} (neither $XDG_DATA_HOME nor $HOME is set)",
            store::STORE_VAR
        ));
        report_error(format, &e);
        e.exit_code()
    })
}

fn write_out(text: &str, format: ErrorFormat, code: ExitCode) -> ExitCode {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(source) => {
            report_error(format, &Error::Write { output: "stdout".into(), source });
            code.max(ExitCode::Io)
        }
    }
}

/// The options the inputs are read with, after the diagnostics file is open.
fn setup(read: &ReadArgs, files: &[PathBuf]) -> Result<Options<'static>, ExitCode> {
    let guard = super::guard::Guard::new(files);
    super::open_diagnostics(read.diagnostics_file.as_deref(), &guard, read.error_format)?;
    if let Err(e) = guard.streams() {
        report_error(read.error_format, &e);
        return Err(e.exit_code());
    }
    match load_definitions(read.parsers.as_deref()) {
        Ok(definitions) => Ok(Options {
            definitions,
            policy: Policy { strict: read.strict, tolerances: Tolerances::default() },
            reports_only: false,
        }),
        Err(e) => {
            report_error(read.error_format, &e);
            Err(e.exit_code())
        }
    }
}

/// Read every input: (its runs with their source hash), and the worst exit code of its errors.
fn read_all(files: &[PathBuf], opts: &Options, read: &ReadArgs) -> (Vec<(Run, String)>, ExitCode) {
    let mut worst = ExitCode::Ok;
    let mut runs = Vec::new();
    for f in files {
        let input = store::read_input(f, opts);
        for e in &input.errors {
            report_error(read.error_format, e);
            worst = worst.max(e.exit_code());
        }
        for run in input.runs {
            report_checks(read.error_format, &run, read.strict);
            worst = worst.max(match run.verdict {
                bench_normalize_core::report::Verdict::Accepted => ExitCode::Ok,
                bench_normalize_core::report::Verdict::Rejected => ExitCode::Rejected,
                bench_normalize_core::report::Verdict::Unusable => ExitCode::NoResult,
            });
            runs.push((run, input.sha256.clone()));
        }
    }
    (runs, worst)
}

pub(crate) fn store_command(a: StoreArgs) -> ExitCode {
    let human = ErrorFormat::Human;
    let path = match store_path(a.store, human) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match a.action {
        StoreAction::Add { files, labels, read } => add(&path, &files, labels.into_iter().collect(), &read),
        StoreAction::List { format, labels, last } => {
            let filter = Filter { labels: labels.into_iter().collect(), last, ..Filter::default() };
            match Store::open_existing(&path).and_then(|mut s| s.list(&filter, false)) {
                Ok(rows) => write_out(&list_text(&rows, format), human, ExitCode::Ok),
                Err(e) => fail(human, &e),
            }
        }
        StoreAction::Show { id } => match Store::open_existing(&path).and_then(|mut s| s.get(id)) {
            Ok(row) => {
                let text = serde_json::to_string_pretty(&row).expect("a stored run serializes") + "\n";
                write_out(&text, human, ExitCode::Ok)
            }
            Err(e) => fail(human, &e),
        },
        StoreAction::Export { format } => match Store::open_existing(&path).and_then(|mut s| s.export()) {
            Ok(rows) => write_out(&export_text(&rows, format), human, ExitCode::Ok),
            Err(e) => fail(human, &e),
        },
    }
}

fn fail(format: ErrorFormat, e: &StoreError) -> ExitCode {
    report_store_error(format, e);
    e.exit_code()
}

fn add(path: &Path, files: &[PathBuf], labels: Labels, read: &ReadArgs) -> ExitCode {
    let opts = match setup(read, files) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let (runs, worst) = read_all(files, &opts, read);
    let mut store = match Store::open(path) {
        Ok(s) => s,
        Err(e) => return fail(read.error_format, &e).max(worst),
    };
    let pairs: Vec<(&Run, &str)> = runs.iter().map(|(r, h)| (r, h.as_str())).collect();
    let added = match store.add(&pairs, &labels) {
        Ok(a) => a,
        Err(e) => return fail(read.error_format, &e).max(worst),
    };
    let mut text = String::new();
    for ((run, _), a) in runs.iter().zip(&added) {
        let at = format!("{}#{}", printable(&run.source.input), run.source.block);
        match a {
            Added::Stored(id) => text.push_str(&format!("stored {id}\t{at}\n")),
            Added::Already(id) => text.push_str(&format!("already stored {id}\t{at}\n")),
            Added::Refused(why) => {
                let line = format!("bench-normalize: {at}: not stored: {}\n", printable(why));
                if read.error_format == ErrorFormat::Human {
                    emit(&line, &line);
                }
            }
        }
    }
    write_out(&text, read.error_format, worst)
}

fn list_text(rows: &[store::Stored], format: ListFormat) -> String {
    match format {
        ListFormat::Json => serde_json::to_string_pretty(rows).expect("rows serialize") + "\n",
        ListFormat::Table => {
            let mut t = comfy_table::Table::new();
            t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
                .set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
            t.set_header([
                "id",
                "added",
                "tool",
                "model",
                "c",
                "in/out",
                "TPOT ms",
                "TTFT p99 ms",
                "out tok/s",
                "labels",
                "source",
            ]);
            let f = |v: Option<f64>| v.map(bench_normalize_core::number::show).unwrap_or_default();
            for r in rows {
                let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let row = [
                    r.id.to_string(),
                    r.added_at.clone(),
                    r.tool.clone(),
                    r.workload.model.clone().unwrap_or_default(),
                    r.workload.max_concurrency.map(|c| c.to_string()).unwrap_or_default(),
                    format!(
                        "{}/{}",
                        r.workload.input_len.map(|c| c.to_string()).unwrap_or_default(),
                        r.workload.output_len.map(|c| c.to_string()).unwrap_or_default()
                    ),
                    f(r.tpot_ms_mean),
                    f(r.ttft_ms_p99),
                    f(r.output_tok_per_s),
                    labels.join(" "),
                    format!("{}#{}", r.source_input, r.block),
                ];
                t.add_row(row.iter().map(|c| printable(c).into_owned()).collect::<Vec<_>>());
            }
            format!("{t}\n")
        }
    }
}

fn export_text(rows: &[store::Stored], format: ExportFormat) -> String {
    match format {
        ExportFormat::Jsonl => {
            rows.iter().map(|r| serde_json::to_string(r).expect("a stored run serializes") + "\n").collect()
        }
        ExportFormat::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let _ = w.write_record(store::CSV_COLUMNS);
            for r in rows {
                let _ = w.write_record(store::csv_record(r));
            }
            String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
        }
    }
}

pub(crate) fn regress_command(a: RegressArgs) -> ExitCode {
    let format = a.read.error_format;
    let path = match store_path(a.store.clone(), format) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let opts = match setup(&a.read, &a.files) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let (runs, worst) = read_all(&a.files, &opts, &a.read);
    let mut store = match Store::open_existing(&path) {
        Ok(s) => s,
        Err(e) => return fail(format, &e).max(worst),
    };
    let settings = Settings {
        last: a.baseline_last as usize,
        labels: a.baseline_labels.into_iter().collect(),
        within_s: a.baseline_within,
        min_change: a.min_change,
        test: match a.test {
            TestArg::Welch => Test::Welch,
            TestArg::MannWhitney => Test::MannWhitney,
        },
        alpha: a.alpha,
    };
    let new: Vec<Run> = runs.into_iter().map(|(r, _)| r).collect();
    let verdicts = match regress::regress(&mut store, &new, &settings) {
        Ok(v) => v,
        Err(e) => return fail(format, &e).max(worst),
    };
    let text = match a.format {
        RegressFormat::Markdown => regress::markdown(&verdicts),
        RegressFormat::Json => serde_json::to_string_pretty(&verdicts).expect("a verdict serializes") + "\n",
    };
    write_out(&text, format, worst.max(verdicts.exit_code()))
}

/// `plot --history FIGURE -o SVG`: the store's history of one figure ([`store::history`]).
/// Exit code: 0 written; 3 no store there, or no stored run gives the figure (nothing written);
/// 4 the store cannot be read or the SVG written; 2 the output is the store itself.
pub(crate) fn history_command(a: PlotArgs, output: PathBuf) -> ExitCode {
    let format = a.read.error_format;
    let h = a.history;
    let path = match store_path(h.store.clone(), format) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // The store is the input: the SVG never replaces it.
    let guard = super::guard::Guard::new(std::slice::from_ref(&path));
    let target_ok = if super::guard::names_stdout(&output) { Ok(()) } else { guard.check_target("plot -o", &output) };
    if let Err(e) = guard.streams().and(target_ok) {
        report_error(format, &e);
        return e.exit_code();
    }
    let figure = match h.history.expect("--history is given") {
        HistoryFigure::Tpot => Fig::Tpot,
        HistoryFigure::PerUser => Fig::PerUser,
        HistoryFigure::TtftMean => Fig::TtftMean,
        HistoryFigure::TtftP99 => Fig::TtftP99,
        HistoryFigure::E2eMean => Fig::E2eMean,
        HistoryFigure::OutputThroughput => Fig::OutputThroughput,
    };
    let settings = history::Settings {
        figure,
        by: if h.by == "time" { history::By::Time } else { history::By::Label(h.by.clone()) },
        labels: h.labels.into_iter().collect(),
        baseline_last: h.baseline_last as usize,
        min_change: h.min_change,
    };
    let mut store = match Store::open_existing(&path) {
        Ok(s) => s,
        Err(e) => return fail(format, &e),
    };
    let view = match history::history(&mut store, &settings) {
        Ok(v) => v,
        Err(e) => return fail(format, &e),
    };
    let svg = match history::render(&view, settings.min_change) {
        Ok(svg) => svg,
        Err(message) => {
            let e = Error::NoResult {
                input: store.name().to_string(),
                looked_for: format!("{message}; nothing was written"),
            };
            report_error(format, &e);
            return e.exit_code();
        }
    };
    match guard.write_whole("plot -o", &output, svg.as_bytes()) {
        Ok(()) => ExitCode::Ok,
        Err(e) => {
            report_error(format, &e);
            e.exit_code()
        }
    }
}

/// `aggregate --from-store`: the accepted stored runs carrying every label, oldest first, each with
/// its labels.
pub(crate) fn stored_runs(
    store: Option<PathBuf>,
    labels: &[(String, String)],
    format: ErrorFormat,
) -> Result<(Vec<Run>, Vec<Labels>), ExitCode> {
    let path = store_path(store, format)?;
    let filter = Filter { labels: labels.iter().cloned().collect(), ..Filter::default() };
    let rows = Store::open_existing(&path).and_then(|mut s| s.list(&filter, true)).map_err(|e| fail(format, &e))?;
    let runs = rows.iter().rev().map(|r| r.to_run().map_err(|e| fail(format, &e))).collect::<Result<_, _>>()?;
    Ok((runs, rows.into_iter().rev().map(|r| r.labels).collect()))
}
