//! `bench_normalize._native`: the library's entry points for the Python module. Each takes and
//! gives JSON text and plain values, and works with the GIL released (`Python::detach`): the typed
//! API, its exceptions and its documentation are `python/bench_normalize/__init__.py`.
//!
//! A failure is returned, not raised: `(None, notes, diagnostic)`, the diagnostic as the CLI's
//! `--error-format json` writes it (`code`, `message`, `input`, `line`, `column`, `exit_code`), so
//! that the Python side raises one exception class carrying those fields.

use std::path::Path;

use bench_normalize::compare::{self, KeyField};
use bench_normalize::emit;
use bench_normalize::{Collect, Error, ExitCode, Options, Report, Run};
use pyo3::prelude::*;
use serde_json::json;

/// What a call gives Python: the answer's JSON text, diagnostics that did not stop it (JSON
/// texts), and the diagnostic that did.
type Answer = (Option<String>, Vec<String>, Option<String>);

/// A file to read, and the name its runs carry (the path unless one is given); an unreadable
/// file is the answer itself (the CLI's `io` diagnostic).
fn open(path: String, name: Option<String>) -> Result<(std::fs::File, String), Answer> {
    let name = name.unwrap_or_else(|| path.clone());
    match std::fs::File::open(&path) {
        Ok(f) => Ok((f, name)),
        Err(source) => Err((None, Vec::new(), Some(diagnostic(&Error::Io { input: name, source })))),
    }
}

fn diagnostic(e: &Error) -> String {
    e.to_json().to_string()
}

fn usage(message: &str) -> String {
    json!({
        "code": "usage", "message": message, "input": null, "line": null, "column": null,
        "exit_code": ExitCode::Usage as i32,
    })
    .to_string()
}

/// The runs of one input, as the CLI reads it: runs read before a failure are kept and the
/// failure becomes a note (the CLI writes them and exits with the failure's code).
fn finish(result: Result<usize, Error>, sink: Collect) -> Answer {
    let mut notes: Vec<String> = sink.notes.iter().map(diagnostic).collect();
    match result {
        Err(e) if sink.runs.is_empty() => (None, notes, Some(diagnostic(&e))),
        other => {
            if let Err(e) = other {
                notes.push(diagnostic(&e));
            }
            let text = serde_json::to_string(&Report::new(sink.runs)).expect("a report serializes");
            (Some(text), notes, None)
        }
    }
}

/// The runs of an input written in a format at once, from the runs as read: exactly what
/// `bench-normalize FILE --format FORMAT` writes, state the canonical JSON does not hold (the
/// client's argument dump) included.
fn render(answer_of: impl FnOnce() -> (Result<usize, Error>, Collect), format: &str) -> Answer {
    let (result, sink) = answer_of();
    let mut notes: Vec<String> = sink.notes.iter().map(diagnostic).collect();
    match result {
        Err(e) if sink.runs.is_empty() => (None, notes, Some(diagnostic(&e))),
        other => {
            if let Err(e) = other {
                notes.push(diagnostic(&e));
            }
            match write_runs(sink.runs, format) {
                Ok((text, more)) => {
                    notes.extend(more);
                    (Some(text), notes, None)
                }
                Err(d) => (None, notes, Some(d)),
            }
        }
    }
}

/// [`render`] of a file.
#[pyfunction]
#[pyo3(signature = (path, name, strict, format))]
fn render_path(py: Python<'_>, path: String, name: Option<String>, strict: bool, format: String) -> Answer {
    py.detach(move || {
        let (file, name) = match open(path, name) {
            Ok(opened) => opened,
            Err(failed) => return failed,
        };
        render(
            || {
                let mut sink = Collect::default();
                let r = bench_normalize::normalize_file(file, &name, &Options::builtin(strict, false), &mut sink);
                (r, sink)
            },
            &format,
        )
    })
}

/// [`render`] of an input held in memory.
#[pyfunction]
#[pyo3(signature = (data, name, strict, format))]
fn render_bytes(py: Python<'_>, data: Vec<u8>, name: String, strict: bool, format: String) -> Answer {
    py.detach(move || {
        render(
            || {
                let mut sink = Collect::default();
                let r = bench_normalize::normalize(&data[..], &name, &Options::builtin(strict, false), &mut sink);
                (r, sink)
            },
            &format,
        )
    })
}

/// The canonical report (JSON text) of a file.
#[pyfunction]
#[pyo3(signature = (path, name, strict, reports_only))]
fn normalize_path(py: Python<'_>, path: String, name: Option<String>, strict: bool, reports_only: bool) -> Answer {
    py.detach(move || {
        let (file, name) = match open(path, name) {
            Ok(opened) => opened,
            Err(failed) => return failed,
        };
        let mut sink = Collect::default();
        let result = bench_normalize::normalize_file(file, &name, &Options::builtin(strict, reports_only), &mut sink);
        finish(result, sink)
    })
}

/// The canonical report (JSON text) of an input held in memory.
#[pyfunction]
#[pyo3(signature = (data, name, strict, reports_only))]
fn normalize_bytes(py: Python<'_>, data: Vec<u8>, name: String, strict: bool, reports_only: bool) -> Answer {
    py.detach(move || {
        let mut sink = Collect::default();
        let result = bench_normalize::normalize(&data[..], &name, &Options::builtin(strict, reports_only), &mut sink);
        finish(result, sink)
    })
}

fn runs_of(runs_json: &str) -> Result<Vec<Run>, String> {
    serde_json::from_str(runs_json).map_err(|e| usage(&format!("not a list of canonical runs: {e}")))
}

/// Runs (a JSON list of canonical runs) written in a format, with the CLI's writers: `json` (the
/// report, compact, as the CLI writes it to a pipe), `jsonl`, `csv`, `table`, `dstack`,
/// `dstack-e2e`, `llmd-br`, `explain`. Warnings (a rejected run not written, dstack-e2e's notes)
/// are notes.
#[pyfunction]
fn to_format(py: Python<'_>, runs_json: String, format: String) -> Answer {
    py.detach(move || match write_format(&runs_json, &format) {
        Ok((text, notes)) => (Some(text), notes, None),
        Err(d) => (None, Vec::new(), Some(d)),
    })
}

fn write_format(runs_json: &str, format: &str) -> Result<(String, Vec<String>), String> {
    write_runs(runs_of(runs_json)?, format)
}

fn write_runs(runs: Vec<Run>, format: &str) -> Result<(String, Vec<String>), String> {
    // The command line's formats, but `sglang-skill` (whose SLA keys come from `--slo`).
    let written = |f: &emit::OutputFormat| *f != emit::OutputFormat::SglangSkill;
    let Some(format) = emit::OutputFormat::from_name(format).filter(written) else {
        let names: Vec<&str> = emit::OutputFormat::ALL.iter().filter(|f| written(f)).map(|f| f.name()).collect();
        return Err(usage(&format!("format {format:?}: one of {}", names.join(", "))));
    };
    let mut out: Vec<u8> = Vec::new();
    let mut notes = Vec::new();
    // The first run a format cannot hold fails the call (the command line goes on, exit 5).
    let mut failed: Option<String> = None;
    let mut say = |run: &Run, notice: emit::Notice| match notice {
        emit::Notice::Warning(message) => notes.push(
            json!({
                "code": "warning", "message": message, "input": run.source.input, "line": run.source.first_line,
                "column": null, "run": run.source.block, "exit_code": 0,
            })
            .to_string(),
        ),
        emit::Notice::Error(e) => {
            failed.get_or_insert_with(|| diagnostic(&e));
        }
    };
    let io = |e: std::io::Error| usage(&format!("cannot write: {e}"));
    let mut emitter = emit::Emitter::new(format, false, false);
    for run in runs {
        emitter.run(&mut out, run, &mut say).map_err(io)?;
    }
    emitter.finish(&mut out, &mut say).map_err(io)?;
    if let Some(d) = failed {
        return Err(d);
    }
    Ok((String::from_utf8(out).expect("the writers write UTF-8"), notes))
}

/// Each run judged on service-level objectives (`ttft.p99<=2000,tpot.mean<=40`): per run, the
/// list of results, as `--slo` writes them into the report.
#[pyfunction]
fn objectives(py: Python<'_>, runs_json: String, spec: String) -> Answer {
    py.detach(move || {
        let list = match bench_normalize::objectives::parse(&spec) {
            Ok(l) => l,
            Err(e) => return (None, Vec::new(), Some(usage(&format!("objectives: {e}")))),
        };
        let runs = match runs_of(&runs_json) {
            Ok(r) => r,
            Err(d) => return (None, Vec::new(), Some(d)),
        };
        let judged: Vec<_> = runs.iter().map(|r| bench_normalize::objectives::judge(&list, r)).collect();
        (Some(serde_json::to_string(&judged).expect("results serialize")), Vec::new(), None)
    })
}

/// `compare BASELINE OTHER...` over paths (files or directories), as `--format json`.
#[pyfunction]
#[pyo3(signature = (paths, key, strict))]
fn compare_paths(py: Python<'_>, paths: Vec<String>, key: String, strict: bool) -> Answer {
    py.detach(move || {
        let key = match KeyField::parse_list(&key) {
            Ok(k) => k,
            Err(e) => return (None, Vec::new(), Some(diagnostic(&e))),
        };
        if paths.len() < 2 {
            return (None, Vec::new(), Some(usage("compare: a baseline and at least one other")));
        }
        let opts = Options::builtin(strict, false);
        let mut notes = Vec::new();
        let mut sides = Vec::new();
        for p in &paths {
            let (side, errors) = compare::read_side(Path::new(p), &opts);
            notes.extend(errors.iter().map(diagnostic));
            sides.push(side);
        }
        let (baseline, others) = sides.split_first().expect("two sides");
        let c = compare::compare(baseline, others, &key);
        (Some(serde_json::to_string(&c).expect("a comparison serializes")), notes, None)
    })
}

/// The JSON Schema of the canonical report (JSON text).
#[pyfunction]
fn schema() -> String {
    serde_json::to_string(&bench_normalize::report::schema()).expect("a schema serializes")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(normalize_path, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(to_format, m)?)?;
    m.add_function(wrap_pyfunction!(render_path, m)?)?;
    m.add_function(wrap_pyfunction!(render_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(objectives, m)?)?;
    m.add_function(wrap_pyfunction!(compare_paths, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
