//! Hostile input: text from inputs never reaches a terminal raw (table, `--explain`, human
//! diagnostics), and never starts a CSV cell as a formula.
//!
//! Each class has a property test over random strings mixed with the characters that do harm
//! (ESC, CSI, OSC, C1 controls, BEL, CR, LF, DEL, NUL, bidirectional overrides and isolates,
//! line separators), and the examples of issue 16 are regression tests. The property of human
//! diagnostics is a unit test beside the code that renders them (src/error.rs).

mod common;

use std::process::{Command, Output};

use bench_normalize::emit::{self, CSV_COLUMNS, CSV_FORMULA_TRIGGERS, CsvWriter};
use bench_normalize::report::{Figure, Run};
use proptest::prelude::*;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

fn sample(name: &str) -> std::path::PathBuf {
    common::samples_dir().join(name)
}

use common::{HARMFUL, harmful};

/// A string of printable text, formula triggers and harmful characters, in any mix.
fn hostile() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        4 => proptest::char::range(' ', '~'),
        3 => proptest::sample::select(HARMFUL),
        1 => proptest::sample::select(&['=', '+', '-', '@', '|', '!', '"', ',', '\''][..]),
        1 => any::<char>(),
    ];
    proptest::collection::vec(c, 0..24).prop_map(|v| v.into_iter().collect())
}

/// Characters of human output that are not allowed there: any [`harmful`] one but the line
/// breaks the output makes itself.
fn raw(text: &str) -> Vec<char> {
    text.chars().filter(|c| harmful(*c) && *c != '\n').collect()
}

fn base_run() -> Run {
    let runs = common::normalize_file(&sample("captured/vllm-s2.result.json")).unwrap();
    runs.into_iter().next().unwrap()
}

/// Every text of a run a human output may print, set to `s` (a different one per place: the
/// strings are `s` with the place's index, so that a table cell cannot hide another's).
fn poisoned(mut run: Run, s: &str) -> Run {
    run.source.input = format!("{s}/{s}0");
    run.source.tool = format!("{s}1");
    run.source.parser = format!("{s}2");
    run.source.variant = Some(format!("{s}3"));
    run.source.semantics.itl_why = Some(format!("{s}4"));
    run.workload.set("backend", "workload.backend", Figure::Text(format!("{s}5")));
    run.workload.set("strategy", "workload.strategy", Figure::Text(format!("{s}6")));
    run.reported.set("itl_per", "reported.itl_per", Figure::Text(format!("{s}7")));
    for (i, r) in run.rows.iter_mut().enumerate() {
        r.label = format!("{s}r{i}");
        r.value = Some(format!("{s}v{i}"));
    }
    for (i, n) in run.notes.iter_mut().enumerate() {
        n.code = format!("{s}c{i}");
        n.message = format!("{s}n{i}");
    }
    for (i, c) in run.checks.iter_mut().enumerate() {
        c.id = format!("{s}i{i}");
        c.message = format!("{s}m{i}");
    }
    if let Some(f) = run.derived.tpot_ms.formula.as_mut() {
        *f = format!("{f} {s}");
    }
    run
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// `--explain` and `table`: no raw control character, bidi override or line separator from
    /// any input text, and as many lines as with harmless text (no forged line).
    #[test]
    fn explain_and_table_print_no_raw_control_from_inputs(s in hostile()) {
        let base = base_run();
        let (evil, tame) = (poisoned(base.clone(), &s), poisoned(base, "x"));
        let text = emit::explain(&evil);
        prop_assert!(raw(&text).is_empty(), "{:?} in {text}", raw(&text));
        prop_assert_eq!(text.lines().count(), emit::explain(&tame).lines().count(), "{}", text);
        let table = emit::table(std::slice::from_ref(&evil), false);
        prop_assert!(raw(&table).is_empty(), "{:?} in {table}", raw(&table));
        prop_assert_eq!(table.lines().count(), emit::table(&[tame], false).lines().count(), "{}", table);
    }

    /// CSV: a cell of text from an input never begins with a formula trigger; it is the text, or
    /// the text after a `'` when it began with one. Figures are numbers (a `-` there is a sign).
    #[test]
    fn csv_text_cells_never_start_a_formula(s in hostile(), t in hostile()) {
        let mut run = base_run();
        run.source.input = s.clone();
        run.source.tool = t.clone();
        run.source.variant = Some(s.clone());
        run.source.parser = t.clone();
        run.workload.set("backend", "workload.backend", Figure::Text(t.clone()));
        run.reported.set("itl_per", "reported.itl_per", Figure::Text(s.clone()));
        let mut out = Vec::new();
        CsvWriter::new().write(&mut out, &run).unwrap();
        let mut reader = csv::Reader::from_reader(out.as_slice());
        let row = reader.records().next().unwrap().unwrap();
        let texts = [("input", &s), ("parser", &t), ("tool", &t), ("variant", &s), ("backend", &t), ("itl_per", &s)];
        for (name, cell) in CSV_COLUMNS.iter().zip(row.iter()) {
            // The others are ours: figures, the verdict, rule ids, the method.
            if let Some((_, text)) = texts.iter().find(|(n, _)| n == name) {
                let neutralized = text.starts_with(CSV_FORMULA_TRIGGERS) && text.as_str() != "-";
                let want = if neutralized { format!("'{text}") } else { text.to_string() };
                prop_assert_eq!(cell, want.as_str(), "{}", name);
            }
            prop_assert!(!cell.starts_with(CSV_FORMULA_TRIGGERS) || cell == "-"
                || cell.parse::<f64>().is_ok_and(f64::is_finite), "{} = {:?}", name, cell);
        }
    }
}

/// Issue 16's example: `=cmd|' /C calc'!A0` from an input is written as text; the figures beside
/// it are numbers, negative ones included.
#[test]
fn a_formula_from_an_input_is_written_as_text() {
    let mut run = base_run();
    run.workload.set("backend", "workload.backend", Figure::Text("=cmd|' /C calc'!A0".into()));
    run.source.input = "@SUM(A1:A9).json".into();
    run.reported.set("accept_length", "reported.accept_length", Figure::Number(-2.5));
    let mut out = Vec::new();
    CsvWriter::new().write(&mut out, &run).unwrap();
    let mut reader = csv::Reader::from_reader(out.as_slice());
    let row = reader.records().next().unwrap().unwrap();
    let col = |name: &str| &row[CSV_COLUMNS.iter().position(|c| *c == name).unwrap()];
    assert_eq!(col("backend"), "'=cmd|' /C calc'!A0");
    assert_eq!(col("input"), "'@SUM(A1:A9).json");
    assert_eq!(col("accept_length"), "-2.5", "a figure is a number, its sign no formula");
    assert_eq!(col("tpot_ms"), run.derived.tpot_ms.mean.unwrap().to_string());
}

fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    common::output_with_stdin(bin().args(args).env("NO_COLOR", "1"), stdin)
}

/// A vLLM result file whose backend sets the window title, clears the screen and is a formula.
fn evil_result() -> Vec<u8> {
    let mut doc = common::read_json(&sample("captured/vllm-s2.result.json"));
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J=cmd|' /C calc'!A0";
    for key in ["backend", "endpoint_type"] {
        if doc.get(key).is_some() {
            doc[key] = evil.into();
        }
    }
    serde_json::to_vec(&doc).unwrap()
}

/// Issue 16's examples: a JSON value that sets the window title and clears the screen reaches
/// neither the table nor `--explain` raw; the CSV cell is neutralized; JSON stays escaped JSON.
#[test]
fn a_json_value_cannot_drive_the_terminal() {
    let evil = evil_result();
    for args in [&["-f", "table"][..], &["--explain"][..]] {
        let out = run_with_stdin(args, &evil);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(raw(&text).is_empty(), "{args:?}: {:?}", raw(&text));
        if args[0] == "-f" {
            // (`--explain` does not name the backend.)
            assert!(text.contains("\\x1b]0;pwned\\x07\\x1b[2J"), "{args:?}: {text}");
        }
    }
    let out = run_with_stdin(&["-f", "csv"], &evil);
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    let row = reader.records().next().unwrap().unwrap();
    let backend = &row[CSV_COLUMNS.iter().position(|c| *c == "backend").unwrap()];
    assert_eq!(backend, "\u{1b}]0;pwned\u{7}\u{1b}[2J=cmd|' /C calc'!A0", "no trigger first: kept as is");
    let out = run_with_stdin(&["-f", "jsonl"], &evil);
    assert!(!out.stdout.contains(&0x1b), "JSON escapes ESC as \\u001b");
}

/// Issue 16's example: a line break in a report's recorded `source.input` cannot forge a
/// diagnostic line: each rejection is one line starting `bench-normalize: `, escaped.
#[test]
fn a_recorded_input_name_cannot_forge_a_diagnostic_line() {
    let out = run_with_stdin(&["-f", "jsonl"], &std::fs::read(sample("captured/vllm-s2.result.json")).unwrap());
    let mut run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    run["source"]["input"] = "x\nbench-normalize: all runs accepted\u{1b}[2J\u{202e}".into();
    run["totals"]["duration_s"] = 1.0.into();
    let out = run_with_stdin(&["check", "-", "--explain"], &serde_json::to_vec(&run).unwrap());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(raw(&err).is_empty(), "{:?}", raw(&err));
    assert!(err.lines().count() >= 1);
    for line in err.lines() {
        assert!(
            line.starts_with("bench-normalize: x\\nbench-normalize: all runs accepted\\x1b[2J\\u{202e}:"),
            "{line}"
        );
        assert!(line.contains(" rejected: "), "{line}");
    }
    let explained = String::from_utf8(out.stdout).unwrap();
    assert!(raw(&explained).is_empty(), "{:?}", raw(&explained));
    assert!(explained.starts_with("Run 1 of x\\nbench-normalize: all runs accepted\\x1b[2J\\u{202e}: "), "{explained}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Through the executable: a report whose recorded names and values are hostile gives
    /// stderr lines that are each one diagnostic (as many as the failed rules), and table and
    /// explain output with no raw control character.
    #[test]
    fn the_executable_prints_no_raw_control_from_a_report(s in hostile()) {
        let out = run_with_stdin(&["-f", "jsonl"], &std::fs::read(sample("captured/vllm-s2.result.json")).unwrap());
        let mut run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        run["source"]["input"] = s.clone().into();
        run["source"]["tool"] = s.clone().into();
        run["source"]["variant"] = s.clone().into();
        run["workload"]["backend"] = s.clone().into();
        run["totals"]["duration_s"] = 1.0.into();
        let doc = serde_json::to_vec(&run).unwrap();
        let json = run_with_stdin(&["check", "-", "-f", "jsonl"], &doc);
        let checked: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        let failed = checked["checks"].as_array().unwrap().iter()
            .filter(|c| c["status"] == "fail" && c["severity"] == "error").count();
        prop_assert!(failed > 0);
        let err = String::from_utf8(json.stderr).unwrap();
        prop_assert!(raw(&err).is_empty(), "{:?}", raw(&err));
        prop_assert_eq!(err.lines().count(), failed, "{}", err);
        prop_assert!(err.lines().all(|l| l.starts_with("bench-normalize: ")), "{}", err);
        for args in [&["check", "-", "-f", "table"][..], &["check", "-", "--explain"][..]] {
            let out = run_with_stdin(args, &doc);
            let text = String::from_utf8(out.stdout).unwrap();
            prop_assert!(raw(&text).is_empty(), "{:?}: {:?}", args, raw(&text));
        }
    }
}

/// A file name with a line break and escape sequences (any byte but `/` and NUL can be in one)
/// is said escaped, on one line.
#[cfg(unix)]
#[test]
fn a_hostile_file_name_is_said_on_one_line() {
    let dir = std::env::temp_dir().join(format!("bn-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = dir.join("run\n-: no benchmark result found\u{1b}]0;x\u{7}.log");
    std::fs::write(&name, "nothing here\n").unwrap();
    let out = bin().arg(&name).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(raw(&err).is_empty(), "{:?}", raw(&err));
    assert!(err.contains("run\\n-: no benchmark result found\\x1b]0;x\\x07.log: no benchmark result found"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A malformed JSON Lines line quoted in a parse error (the line, with its column marked) is
/// escaped; the mark still points into it.
#[test]
fn a_quoted_input_line_is_escaped() {
    let mut text = std::fs::read(sample("captured/sglang-s1.result.jsonl")).unwrap();
    text.extend("{\"backend\": \"\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}\", \"completed\": \n".as_bytes());
    let out = run_with_stdin(&["-f", "jsonl"], &text);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(raw(&err).is_empty(), "{:?}", raw(&err));
    assert!(err.contains("\\x1b]0;pwned\\x07\\x1b[2J\\u{202e}"), "{err}");
    assert!(err.contains('^'), "{err}");
}
