//! The client's printed runs and its result file's read as one run, the printed figures checked
//! against the file's ([`AGREEMENT_RULE`]).

use bench_normalize_core::report::{Check, Figure, Figures, Note, Row, RuleId, Status, verdict};
use bench_normalize_core::{Policy, Run};

/// The check that the client's printed figures are its result file's.
pub const AGREEMENT_RULE: RuleId = RuleId::OutputMatchesResultFile;

/// The client's printed runs and the runs of its result file, read as one: the last printed run
/// with the last run of the file (a client invocation writes one, appended last), any others as
/// they are. The merged run is the file's (exact figures, per-request arrays: TPOT method
/// `per-request`) with the printed figures the file lacks, derived and validated again, and the
/// printed figures checked against the file's ([`AGREEMENT_RULE`]).
pub fn combine(mut printed: Vec<Run>, mut filed: Vec<Run>, policy: &Policy) -> Vec<Run> {
    let (p, f) = match (printed.pop(), filed.pop()) {
        (Some(p), Some(f)) => (p, f),
        (p, f) => {
            printed.extend(p);
            filed.extend(f);
            printed.append(&mut filed);
            return printed;
        }
    };
    let merged = merge(f, p, policy);
    printed.append(&mut filed);
    printed.push(merged);
    printed
}

/// One printed figure against the file's: `None` when they agree.
fn disagreement(path: &str, printed: f64, filed: f64, rows: &[Row]) -> Option<String> {
    let row = rows.iter().find(|r| r.field.as_deref() == Some(path))?;
    let slack = row.slack(printed)?;
    ((printed - filed).abs() > slack).then(|| {
        format!(
            "{path}: printed {printed} (line {} \"{}\") vs file {filed}",
            row.line,
            row.value.as_deref().unwrap_or("")
        )
    })
}

/// Merge the figures of `printed` into `into` (the file's): a figure the file lacks is taken from
/// the output; one it has is compared ([`disagreement`]).
fn merge_figures(
    into: &mut Figures,
    printed: &Figures,
    prefix: &str,
    rows: &[Row],
    found: &mut Vec<String>,
    compared: &mut usize,
) {
    for (name, fig) in printed.iter() {
        let full = format!("{prefix}.{name}");
        match (into.get(name).cloned(), fig) {
            (None, f) => into.set(name, &full, f.clone()),
            (Some(Figure::Group(_)), Figure::Group(g)) => {
                if let Figure::Group(mine) = into.slot(name, &full, || Figure::Group(Figures::default())) {
                    merge_figures(mine, g, &full, rows, found, compared);
                }
            }
            (Some(Figure::Stat(have)), Figure::Stat(st)) => {
                let mut have = have;
                for (k, v) in st.iter() {
                    match have.get(k) {
                        Some(f) => {
                            *compared += 1;
                            found.extend(disagreement(&format!("{full}.{}", k.name()), v, f, rows));
                        }
                        None => {
                            have.set(k, v);
                        }
                    }
                }
                into.set(name, &full, Figure::Stat(have));
            }
            (Some(have), f) => {
                if let (Some(h), Some(p)) = (have.as_f64(), f.as_f64()) {
                    *compared += 1;
                    found.extend(disagreement(&full, p, h, rows));
                }
            }
        }
    }
}

/// The file's run with what only the output gave, and the agreement check.
///
/// Why disagreement is an error: the printed block and the result file are written by one client
/// process from one in-memory result (vLLM prints `metrics` and dumps `result_json` built from
/// it; SGLang prints and appends the same `result` dict; AIPerf and genai-perf print the export
/// they write), each printed figure rounded to the decimals shown. A printed figure further from
/// the file's than half a unit of its last printed digit therefore cannot come from the same run:
/// one of the two is not this run's (a stale or foreign file, an edited log), and no figure of the
/// merged run can be trusted.
fn merge(mut file: Run, printed: Run, policy: &Policy) -> Run {
    let mut found = Vec::new();
    let mut compared = 0;
    let rows = &printed.rows;
    merge_figures(&mut file.workload, &printed.workload, "workload", rows, &mut found, &mut compared);
    merge_figures(&mut file.totals, &printed.totals, "totals", rows, &mut found, &mut compared);
    merge_figures(&mut file.reported, &printed.reported, "reported", rows, &mut found, &mut compared);
    let lines = match (printed.source.first_line, printed.source.last_line) {
        (Some(a), Some(b)) => format!(", lines {a}-{b}"),
        _ => String::new(),
    };
    file.notes.push(Note {
        code: "output-and-result-file".into(),
        message: format!(
            "read as one run: the result file {} and the client's output {} (parser {}{lines})",
            file.source.input, printed.source.input, printed.source.parser
        ),
        line: None,
    });
    file.notes.extend(printed.notes.iter().cloned());
    file.rows.extend(printed.rows.into_iter().map(|mut r| {
        r.scope = Some(match r.scope {
            Some(s) => format!("output {s}"),
            None => "output".into(),
        });
        r
    }));
    bench_normalize_core::pipeline::close(&mut file, policy, bench_normalize_core::pipeline::Claims::None);
    let (status, message) = if found.is_empty() {
        (Status::Pass, format!("{compared} printed figures agree with the result file within their printed precision"))
    } else {
        (
            Status::Fail,
            format!(
                "the client's output and its result file are not the same run's figures ({} of {compared} disagree beyond printing precision): {}",
                found.len(),
                found.join("; ")
            ),
        )
    };
    file.checks.push(Check::new(AGREEMENT_RULE, status, message));
    settle_verdict(&mut file, policy);
    file
}

pub(super) fn settle_verdict(run: &mut Run, policy: &Policy) {
    run.verdict = verdict(&run.checks, policy.strict);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every captured pair of printed block and result file agrees under the rule (no honest run
    /// is rejected by it), and a changed figure is caught.
    #[test]
    fn every_captured_output_agrees_with_its_result_file() {
        let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
        let read = |path: &std::path::Path| {
            let name = path.strip_prefix(&samples).unwrap().to_string_lossy().replace('\\', "/");
            let file = std::fs::File::open(path).unwrap();
            let mut runs = Vec::new();
            bench_normalize_core::normalize_file(file, &name, &bench_normalize_core::Options::default(), &mut |r| {
                runs.push(r);
                Ok(())
            })
            .unwrap();
            (name, runs)
        };
        let policy = Policy::default();
        let mut pairs = 0;
        for dir in ["captured", "versions", "peers"] {
            let mut files: Vec<_> = std::fs::read_dir(samples.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().ends_with(".stdout.txt"))
                .collect();
            files.sort();
            for file in files {
                let stem = file.to_string_lossy().replace(".stdout.txt", "");
                let result = [
                    ".result.json",
                    ".result.jsonl",
                    ".profile_export_aiperf.json",
                    ".profile_export_genai_perf.json",
                    ".benchmarks.json",
                ]
                .iter()
                .map(|s| format!("{stem}{s}"))
                .find(|p| std::path::Path::new(p).exists());
                let Some(result) = result else { continue };
                let (name, printed) = read(&file);
                let (_, filed) = read(std::path::Path::new(&result));
                if printed.len() != 1 || filed.len() != 1 {
                    continue;
                }
                pairs += 1;
                let merged = combine(printed, filed, &policy);
                assert_eq!(merged.len(), 1);
                let c = merged[0].checks.iter().find(|c| c.id == "output-matches-result-file").unwrap();
                assert_eq!(c.status, Status::Pass, "{name}: {}", c.message);
                // Not a vacuous pass: the figures compared are counted in the message.
                let compared: usize = c.message.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
                assert!(compared >= 8, "{name}: {}", c.message);
            }
        }
        assert!(pairs >= 30, "pairs checked: {pairs}");
    }
}
