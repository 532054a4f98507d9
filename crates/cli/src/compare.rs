//! `bench-normalize compare BASELINE OTHER...`: each side read (errors said, as for logs), lined
//! up and compared by [`bench_normalize_analysis::compare`], written as a table, Markdown or JSON.

use std::io::{self, IsTerminal, Write};

use super::args::{CompareArgs, CompareFormat};
use super::diagnostics::{color_on, report_checks, report_error};
use super::load_definitions;
use bench_normalize_analysis::compare;
use bench_normalize_core::{Error, ExitCode, Options, Policy, Tolerances};

/// The exit code is the highest of the inputs' errors and the comparison's own (a rejected run 1,
/// an unusable run or no pair 3); refused figures are said in the output, not in the code.
pub(crate) fn compare_sides(a: CompareArgs) -> ExitCode {
    let inputs: Vec<std::path::PathBuf> = std::iter::once(&a.baseline).chain(&a.others).cloned().collect();
    let guard = super::guard::Guard::new(&inputs);
    if let Err(code) = super::open_diagnostics(a.read.diagnostics_file.as_deref(), &guard, a.read.error_format) {
        return code;
    }
    if let Err(e) = guard.streams() {
        report_error(a.read.error_format, &e);
        return e.exit_code();
    }
    let setup =
        compare::KeyField::parse_list(&a.key).and_then(|key| Ok((key, load_definitions(a.read.parsers.as_deref())?)));
    let (key, definitions) = match setup {
        Ok(s) => s,
        Err(e) => {
            report_error(a.read.error_format, &e);
            return e.exit_code();
        }
    };
    let policy = Policy { strict: a.read.strict, tolerances: Tolerances::default() };
    let opts = Options { definitions, policy, reports_only: false };
    let mut worst = ExitCode::Ok;
    let mut sides = Vec::new();
    for arg in std::iter::once(&a.baseline).chain(&a.others) {
        let (side, errors) = compare::read_side(arg, &opts);
        for e in errors {
            report_error(a.read.error_format, &e);
            worst = worst.max(e.exit_code());
        }
        for run in &side.runs {
            report_checks(a.read.error_format, run, a.read.strict);
        }
        sides.push(side);
    }
    let (baseline, others) = sides.split_first().expect("the baseline is a required argument");
    let comparison = compare::compare(baseline, others, &key);
    let stdout = io::stdout();
    let text = match a.format {
        CompareFormat::Table => compare::table(&comparison, color_on(stdout.is_terminal())),
        CompareFormat::Markdown => compare::markdown(&comparison),
        CompareFormat::Json => {
            let mut t = serde_json::to_string_pretty(&comparison).expect("a comparison serializes");
            t.push('\n');
            t
        }
    };
    let code = worst.max(comparison.exit_code());
    let mut out = stdout.lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(source) => {
            report_error(a.read.error_format, &Error::Write { output: "stdout".into(), source });
            code.max(ExitCode::Io)
        }
    }
}
