//! Every sample in `samples/` normalizes to its snapshots in `snapshots/`, in two parts:
//!
//! * `sample@<folder>__<file>.snap`, one per sample: the report `bench-normalize --format json`
//!   prints, every field as printed (figures, notes, each check's id, severity and status, the
//!   verdict) except each check's message, written as [`common::MESSAGE_ELSEWHERE`];
//! * `sample-checks.snap`, one for all the samples: a line per sample, run and check,
//!   `<sample> #<run>  <check id>  <status>  <message>`.
//!
//! A check's message is wording, and each rule writes one into nearly every report: with the
//! messages in the reports, rewording one rule changed ~210 files. Now it changes that rule's lines
//! of one file, and a change of figures still shows in the sample's own file. What the messages
//! must say is asserted by the rule tests (`tests/it/validation.rs` and each stage's module).
//!
//! After a deliberate change: `cargo insta review` (or `INSTA_UPDATE=always cargo test --test it
//! snapshots::`), then read the diff before committing it.

use crate::common;

use std::collections::BTreeSet;

use bench_normalize::Report;

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// The report of a sample as `--format json` prints it, or its diagnostic's text and exit code.
fn report_of(path: &std::path::Path) -> serde_json::Value {
    match common::normalize_file(path) {
        Ok(runs) => serde_json::to_value(Report::new(runs)).unwrap(),
        Err(e) => serde_json::json!({ "error": e.to_string(), "exit_code": e.exit_code() as i32 }),
    }
}

#[test]
fn sample() {
    settings().bind(|| {
        insta::glob!("../../samples", "*/*.{txt,json,jsonl,csv,md,yaml,gz,zst,xz}", |path| {
            let name = common::sample_name(path);
            if !common::is_sample(&name) {
                return;
            }
            // Exactly what `bench-normalize --format json` prints, in report order, less the
            // checks' messages (in `sample-checks.snap`, test below).
            let mut report = report_of(path);
            common::without_check_messages(&mut report);
            let text = serde_json::to_string_pretty(&report).unwrap();
            insta::assert_snapshot!(text);
        });
    });
}

/// The checks of every sample, with their messages: one line each. A sample with no run (an input
/// refused whole) has one line with its exit code; its diagnostic is in its own snapshot.
#[test]
fn sample_checks() {
    let samples = common::samples();
    let mut lines = Vec::new();
    for path in &samples {
        let name = common::sample_name(path);
        let report = report_of(path);
        if let Some(code) = report.get("exit_code") {
            lines.push(format!("{name}  (no run: exit {code})"));
            continue;
        }
        lines.extend(common::check_lines(&name, &report));
    }
    // The samples of the reports (the glob above snapshots each): no `sample@` snapshot is left of
    // a sample that is gone.
    let named: BTreeSet<String> =
        samples.iter().map(|p| format!("sample@{}.snap", common::sample_name(p).replace('/', "__"))).collect();
    let dir = common::samples_dir().parent().unwrap().join("snapshots");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sample@") && n.ends_with(".snap") && !named.contains(n))
        .collect();
    assert!(left.is_empty(), "snapshots of no sample: {left:?}");
    let text = lines.join("\n");
    settings().bind(|| insta::assert_snapshot!("sample-checks", text));
}
