//! Hostile input: text from inputs never reaches a terminal raw (table, `--explain`, human
//! diagnostics), and never starts a CSV cell as a formula.
//!
//! Each class has a property test over random strings mixed with the characters that do harm
//! (ESC, CSI, OSC, C1 controls, BEL, CR, LF, DEL, NUL, bidirectional overrides and isolates,
//! line separators), and the examples of issue 16 are regression tests. The property of human
//! diagnostics is a unit test beside the code that renders them (crates/core/src/error.rs).

use crate::common;
use crate::sim;

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
    // (A check's id is a typed rule, never input text.)
    for (i, c) in run.checks.iter_mut().enumerate() {
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

// ---------------------------------------------------------------------------------------------
// `--parsers DIR` and $BENCH_NORMALIZE_PARSERS read regular files only, of at most 1 MiB.

/// The executable with `dir` as its definitions, by the flag and by the variable, on a log, with
/// a time limit: a read that blocks (a FIFO) fails the test instead of hanging it.
fn with_parsers(dir: &std::path::Path) -> Vec<Output> {
    let log = sample("captured/vllm-s2.stdout.txt");
    let mut outs = Vec::new();
    for by_env in [false, true] {
        let mut cmd = bin();
        if by_env {
            cmd.env("BENCH_NORMALIZE_PARSERS", dir);
        } else {
            cmd.arg("--parsers").arg(dir);
        }
        let mut child =
            cmd.arg(&log).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(30) {
                child.kill().unwrap();
                panic!("the definitions of {} were waited for", dir.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        outs.push(child.wait_with_output().unwrap());
    }
    outs
}

/// A definition error: exit 2, naming the file and what it is.
fn refused(dir: &std::path::Path, file: &str, what: &str) {
    for out in with_parsers(dir) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(stderr.contains(file) && stderr.contains(what), "{file}: {stderr}");
        assert!(out.stdout.is_empty(), "{file}");
    }
}

#[cfg(unix)]
#[test]
fn a_definition_that_is_no_regular_file_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    // A link to /dev/zero: would read forever (a gigabyte and more).
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.toml")).unwrap();
    refused(dir.path(), "zero.toml", "a character device, not a regular file");
    std::fs::remove_file(dir.path().join("zero.toml")).unwrap();
    // A FIFO no one writes to: an ordinary open would block forever.
    let fifo = dir.path().join("pipe.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    refused(dir.path(), "pipe.toml", "a FIFO, not a regular file");
    std::fs::remove_file(&fifo).unwrap();
    // A directory named like a definition.
    std::fs::create_dir(dir.path().join("dir.toml")).unwrap();
    refused(dir.path(), "dir.toml", "a directory, not a regular file");
    std::fs::remove_dir(dir.path().join("dir.toml")).unwrap();
    // A link to a regular file is read as the file: the toy definition, through a link.
    let toy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins/toybench/toybench.toml");
    std::os::unix::fs::symlink(&toy, dir.path().join("toy.toml")).unwrap();
    for out in with_parsers(dir.path()) {
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn a_definition_file_over_1_mib_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let toy = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins/toybench/toybench.toml"),
    )
    .unwrap();
    // The toy definition and a comment: a valid definition, of 1 MiB + 1 byte, then of 1 MiB.
    let big = format!("{toy}\n#{}\n", "x".repeat((1 << 20) - toy.len() - 2));
    assert_eq!(big.len(), (1 << 20) + 1);
    std::fs::write(dir.path().join("big.toml"), &big).unwrap();
    refused(dir.path(), "big.toml", "larger than 1024 KiB");
    let fits = format!("{toy}\n#{}\n", "x".repeat((1 << 20) - toy.len() - 3));
    std::fs::write(dir.path().join("big.toml"), &fits).unwrap();
    for out in with_parsers(dir.path()) {
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

// ---------------------------------------------------------------------------------------------
// What a definition does not claim is never read as a run: a table of another tool with a row or
// two whose labels a definition knows gives no run. EvalScope's `Benchmarking summary` holds
// `Output token throughput (tok/s)` and `Request throughput (req/s)`, vLLM's labels: it is read by
// its own definitions (evalscope-perf, evalscope-perf-0.x), never by another one.

/// EvalScope's `evalscope perf` summary grids, as its documentation shows them: the 0.x grid
/// (`Key | Value`), the later box table written with `|` (as pasted), and a Markdown table of it.
fn evalscope_grids() -> Vec<(&'static str, String)> {
    let rows = [
        ("Time taken for tests (s)", "10.739"),
        ("Number of concurrency", "1"),
        ("Total requests", "15"),
        ("Succeed requests", "15"),
        ("Failed requests", "0"),
        ("Output token throughput (tok/s)", "183.089"),
        ("Total token throughput (tok/s)", "207.107"),
        ("Request throughput (req/s)", "1.3968"),
        ("Average latency (s)", "0.7159"),
        ("Average time to first token (s)", "0.0219"),
        ("Average time per output token (s)", "0.0053"),
        ("Average input tokens per request", "17.2"),
        ("Average output tokens per request", "131.0667"),
        ("Average package latency (s)", "0.0053"),
        ("Average package per request", "130.0667"),
    ];
    let grid = summary_grid("Benchmarking summary:", "Key", &rows);
    let mut markdown = "Benchmarking summary:\n\n| Key | Value |\n|---|---|\n".to_string();
    for (k, v) in rows {
        markdown.push_str(&format!("| {k} | {v} |\n"));
    }
    let boxed = [
        ("Test Duration (s)", "38.31"),
        ("Concurrency", "200"),
        ("Request Rate (req/s)", "-1.00"),
        ("Total / Success / Failed", "400 / 400 / 0"),
        ("Req Throughput (req/s)", "10.44"),
        ("Avg Latency (s)", "18.78"),
        ("TTFT (ms)", "717.63"),
        ("TPOT (ms)", "17.66"),
        ("ITL (ms)", "17.64"),
        ("Avg Input Tokens", "1024.00"),
        ("Avg Output Tokens", "1024.00"),
        ("Output Throughput (tok/s)", "10692.45"),
        ("Total Throughput (tok/s)", "21384.91"),
    ];
    let mut pipes = "Benchmarking summary:\n| Metric                    |         Value |\n".to_string();
    for (k, v) in boxed {
        pipes.push_str(&format!("| {k:<25} | {v:>13} |\n"));
    }
    vec![("grid", grid), ("markdown", markdown), ("box as pipes", pipes)]
}

/// A tabulate `grid` of `Key | Value` rows under `banner`, drawn as EvalScope 0.x to 1.6 drew it
/// (a rule between every two rows).
fn summary_grid(banner: &str, key: &str, rows: &[(&str, &str)]) -> String {
    let w = rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(3).max(key.len()) + 2;
    let v = rows.iter().map(|(_, v)| v.chars().count()).max().unwrap_or(5).max(5) + 2;
    let line = format!("+{}+{}+", "-".repeat(w), "-".repeat(v));
    let mut grid = format!(
        "{banner}\n{line}\n| {key:<w1$} | {:>v1$} |\n+{}+{}+\n",
        "Value",
        "=".repeat(w),
        "=".repeat(v),
        w1 = w - 2,
        v1 = v - 2
    );
    for (k, val) in rows {
        grid.push_str(&format!("| {k:<w1$} | {val:>v1$} |\n{line}\n", w1 = w - 2, v1 = v - 2));
    }
    grid
}

#[test]
fn an_evalscope_summary_gives_no_run_of_another_parser() {
    for (how, text) in evalscope_grids() {
        let out = run_with_stdin(&["-f", "jsonl"], text.as_bytes());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let runs: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        // No run of another definition, whatever else knows a row or two of it.
        for run in &runs {
            let parser = run["source"]["parser"].as_str().unwrap_or_default();
            assert!(parser.starts_with("evalscope-perf"), "{how}: read by {parser}");
            assert_eq!(run["source"]["tool"], "evalscope perf", "{how}");
        }
        // The grid and its Markdown table are EvalScope's run; the box retyped with bars and
        // no rule under its header is no table the engine cuts (no run, and no other's).
        if how == "box as pipes" {
            assert!(runs.is_empty(), "{how}: {stdout}");
            assert_eq!(out.status.code(), Some(3), "{how}: {stderr}");
        } else {
            assert_eq!(runs.len(), 1, "{how}: {stdout}\n{stderr}");
            assert_eq!(out.status.code(), Some(0), "{how}: {stderr}");
            // 0.15-0.17.0 rows: its "Average time per output token" is no TPOT; the TPOT is
            // derived, (715.9 - 21.9) / (131.0667 - 1).
            assert_eq!(runs[0]["source"]["parser"], "evalscope-perf-0.x", "{how}");
            let tpot = runs[0]["derived"]["tpot_ms"]["mean"].as_f64().unwrap();
            assert!((tpot - (715.9 - 21.9) / (131.0667 - 1.0)).abs() < 1e-3, "{how}: {tpot}");
            assert!(runs[0]["reported"].get("tpot_ms").is_none(), "{how}");
        }
    }
    // Another tool's table with the two rows vLLM's and EvalScope's definitions share, under
    // a title of its own: no run of anyone.
    let leftover = "Load test summary:\n| Key | Value |\n|---|---|\n| Output token throughput (tok/s) | 183.089 |\n| Request throughput (req/s) | 1.3968 |\n| Cache hit rate (%) | 3.1 |\n";
    let out = run_with_stdin(&["-f", "jsonl"], leftover.as_bytes());
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(out.status.code(), Some(3));
}

/// Words of a table no definition reads: the labels of a tool we do not read.
const WORDS: &[&str] = &[
    "Warmup", "Decode", "Prefill", "Cache", "hit", "rate", "Queue", "depth", "Batch", "size", "GPU", "memory", "Shard",
    "Replica", "Tensor", "Stage", "Window", "Budget", "Goodput", "Jitter", "Spread", "Backlog",
];
const UNITS: &[&str] = &["(s)", "(ms)", "(%)", "(GiB)", "(tok/s)", "(req/s)", "", "(count)"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A grid of a tool we do not read, drawn as EvalScope draws its own (a tabulate grid, a box
    /// table with section rows, a pipe table), under a banner of its own or under EvalScope's:
    /// random labels give no run of any parser.
    #[test]
    fn a_grid_of_a_tool_we_do_not_read_gives_no_run(
        labels in proptest::collection::vec((proptest::collection::vec(proptest::sample::select(WORDS), 1..4), proptest::sample::select(UNITS)), 3..16),
        values in proptest::collection::vec(0.0f64..5000.0, 16),
        style in 0usize..3,
        evalscope_banner in any::<bool>(),
    ) {
        let rows: Vec<(String, String)> = labels
            .iter()
            .zip(&values)
            .map(|((words, unit), v)| (format!("{} {unit}", words.join(" ")).trim().to_string(), format!("{v:.4}")))
            .collect();
        let rows: Vec<(&str, &str)> = rows.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let banner = if evalscope_banner { "Benchmarking summary:" } else { "Loadgen results:" };
        let text = match style {
            0 => summary_grid(banner, "Key", &rows),
            1 => {
                let mut t = format!("{banner}\n┌──────────────────────────────┬────────────┐\n│ Metric                       │      Value │\n├──────────────────────────────┼────────────┤\n│ ── General ──                │            │\n");
                for (k, v) in &rows {
                    t.push_str(&format!("│ {k:<28} │ {v:>10} │\n"));
                }
                t.push_str("└──────────────────────────────┴────────────┘\n");
                t
            }
            _ => {
                let mut t = format!("{banner}\n| Metric | Value |\n|---|---|\n");
                for (k, v) in &rows {
                    t.push_str(&format!("| {k} | {v} |\n"));
                }
                t
            }
        };
        let runs = common::run_all(text.as_bytes(), "foreign.txt").unwrap_or_default();
        prop_assert!(runs.is_empty(), "{text}\n{:?}", runs.iter().map(|r| &r.source.parser).collect::<Vec<_>>());
    }
}

/// Labels no definition knows, as other tools print them. (EvalScope's labels were the example
/// here until EvalScope was read: its definitions know them now.)
const FOREIGN: &[&str] = &[
    "Prefill time (s)",
    "Queue depth",
    "Mean batch size",
    "Shard latency (ms)",
    "Replica count",
    "Warm pool hits (req/s)",
    "Cache hit rate (%)",
    "GPU memory (GiB)",
    "Warmup requests",
    "Decode (tok/s)",
];

/// Rows a vLLM or SGLang block has.
const OURS: &[&str] = &[
    "Output token throughput (tok/s)",
    "Total token throughput (tok/s)",
    "Request throughput (req/s)",
    "Successful requests",
    "Benchmark duration (s)",
    "Mean TTFT (ms)",
    "Total input tokens",
    "Max request concurrency",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A foreign table (any number of other rows, a header, a separator or a grid border) with one
    /// or two of our rows anywhere in it: no run.
    #[test]
    fn a_row_or_two_of_ours_in_a_foreign_table_is_no_run(
        foreign in proptest::sample::subsequence(FOREIGN, 3..FOREIGN.len()),
        ours in proptest::sample::subsequence(OURS, 1..=2),
        positions in proptest::collection::vec(0usize..100, 2),
        values in proptest::collection::vec(0.0f64..5000.0, 12),
        header in any::<bool>(),
    ) {
        let mut rows: Vec<String> = foreign.iter().map(|l| l.to_string()).collect();
        for (i, l) in ours.iter().enumerate() {
            let at = positions[i] % (rows.len() + 1);
            rows.insert(at, l.to_string());
        }
        let mut text = String::from("summary:\n");
        if header {
            text.push_str("| Metric | Value |\n|---|---|\n");
        }
        for (i, r) in rows.iter().enumerate() {
            text.push_str(&format!("| {r} | {:.2} |\n", values[i % values.len()]));
        }
        let runs = common::run_all(text.as_bytes(), "foreign.md").unwrap_or_default();
        prop_assert!(runs.is_empty(), "{text}\n{:?}", runs.iter().map(|r| &r.source.parser).collect::<Vec<_>>());
    }

    /// Our own block as a Markdown table is still read, with a few rows of commentary beside it.
    #[test]
    fn our_block_as_a_markdown_table_is_still_read(extra in proptest::sample::subsequence(FOREIGN, 0..3), at in 0usize..40) {
        let text = std::fs::read_to_string(sample("captured/vllm-s2.stdout.txt")).unwrap();
        let start = text.find("Successful requests").unwrap();
        let end = text[start..].find("=====").map_or(text.len(), |e| start + e);
        let mut rows: Vec<String> = text[start..end]
            .lines()
            .filter_map(|l| l.split_once(':'))
            .filter(|(_, v)| !v.trim().is_empty())
            .map(|(k, v)| format!("| {} | {} |", k.trim(), v.trim()))
            .collect();
        for e in &extra {
            let i = at % (rows.len() + 1);
            rows.insert(i, format!("| {e} | 1.0 |"));
        }
        let md = format!("| Metric | Value |\n|---|---|\n{}\n", rows.join("\n"));
        let runs = common::run_all(md.as_bytes(), "ours.md").unwrap();
        prop_assert_eq!(runs.len(), 1);
        prop_assert!((runs[0].derived.tpot_ms.mean.unwrap() - 12.8).abs() < 0.05);
    }
}

// ---------------------------------------------------------------------------------------------
// Two blocks interleaved line by line (two clients writing to one log) never give a run with
// figures of both, accepted: the block that mixes them is unusable, saying that two blocks are
// interleaved and where their banners are.

/// The result block of a captured log: from its banner to its closing line.
fn result_block(name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(sample(&format!("captured/{name}.stdout.txt"))).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.contains("Serving Benchmark Result")).unwrap();
    let end = (start + 1..lines.len()).find(|&i| lines[i].trim_start().starts_with("=====")).unwrap();
    lines[start..=end].iter().map(|l| l.to_string()).collect()
}

const LOGS: &[&str] = &["vllm-s2", "vllm-s3", "vllm-s5", "sglang-s2", "sglang-oai-s3", "sglang-s6", "vllm-chat-s2"];

/// Whether every figure of `part` (an object of figures, nested) is the same in `whole`: a run
/// cut short has fewer, each still the block's own.
fn within(part: &serde_json::Value, whole: &serde_json::Value) -> bool {
    match part.as_object() {
        Some(o) => o.iter().all(|(k, v)| whole.get(k).is_some_and(|w| within(v, w))),
        None => part == whole,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: sim::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn interleaved_blocks_never_give_an_accepted_run_of_both(
        a in 0..LOGS.len(), b in 0..LOGS.len(), picks in proptest::collection::vec(any::<bool>(), 120),
        chunk in prop_oneof![Just(1usize), 1usize..16],
    ) {
        prop_assume!(a != b);
        let (ba, bb) = (result_block(LOGS[a]), result_block(LOGS[b]));
        let one = |lines: &[String]| {
            let runs = common::run_all(format!("{}\n", lines.join("\n")).as_bytes(), "one").unwrap();
            serde_json::to_value(&runs[0]).unwrap()
        };
        let (fa, fb) = (one(&ba), one(&bb));
        // Any merge of the two blocks' lines, each in its order: line by line, or in chunks of up
        // to 15 lines (two clients whose output is buffered).
        let (mut i, mut j, mut merged) = (0, 0, Vec::new());
        for k in 0.. {
            let take_a = match (i < ba.len(), j < bb.len()) {
                (false, false) => break,
                (true, false) => true,
                (false, true) => false,
                _ => picks[k % picks.len()],
            };
            let (from, at) = if take_a { (&ba, &mut i) } else { (&bb, &mut j) };
            let end = (*at + chunk).min(from.len());
            merged.extend_from_slice(&from[*at..end]);
            *at = end;
        }
        let text = format!("{}\n", merged.join("\n"));
        for run in common::run_all(text.as_bytes(), "mixed").unwrap_or_default() {
            if run.verdict != bench_normalize::report::Verdict::Accepted {
                continue;
            }
            let v = serde_json::to_value(&run).unwrap();
            let of = |f: &serde_json::Value| within(&v["reported"], &f["reported"]) && within(&v["totals"], &f["totals"]);
            prop_assert!(of(&fa) || of(&fb), "{} and {}: an accepted run mixes them:\n{text}\n{}", LOGS[a], LOGS[b], v["reported"]);
        }
    }
}

#[test]
fn two_blocks_interleaved_line_by_line_are_said_to_be() {
    let (a, b) = (result_block("vllm-s2"), result_block("sglang-s2"));
    let mut text = String::new();
    for k in 0..a.len().max(b.len()) {
        for block in [&a, &b] {
            if let Some(l) = block.get(k) {
                text.push_str(l);
                text.push('\n');
            }
        }
    }
    let out = run_with_stdin(&["-f", "jsonl"], text.as_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("two result blocks are interleaved")
            && stderr.contains("at line 1")
            && stderr.contains("at line 2"),
        "{stderr}"
    );
}

/// Two blocks of one tool written in chunks: the second block's first rows, then the rest of the
/// first block (its sections and closing line), then the rest of the second. The second block is
/// its top rows and the first block's sections, closed early: only the rows after that closing
/// line, with no banner of their own, give it away. Its honest counterpart, a block cut off by
/// a whole one, gives the whole one accepted.
#[test]
fn a_block_closed_by_another_blocks_closing_line_is_said_to_be() {
    let (a, b) = (result_block("vllm-s2"), result_block("vllm-s3"));
    let top = a.iter().position(|l| l.contains("Time to First Token")).unwrap();
    let lines = |parts: &[&[String]]| parts.iter().flat_map(|p| p.iter()).map(|l| format!("{l}\n")).collect::<String>();

    let mixed = lines(&[&a[..top], &b[..top], &a[top..], &b[top..]]);
    let out = run_with_stdin(&["-f", "jsonl"], mixed.as_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("two result blocks are interleaved") && stderr.contains("right after its closing line"),
        "{stderr}"
    );

    let honest = lines(&[&a[..top], &b]);
    let runs = common::run_all(honest.as_bytes(), "honest").unwrap();
    let whole: Vec<_> = runs.iter().filter(|r| r.verdict == bench_normalize::report::Verdict::Accepted).collect();
    assert_eq!(whole.len(), 1, "{runs:?}");
    // The whole block's figures, as it gives alone.
    let alone = common::run_all(lines(&[&b]).as_bytes(), "alone").unwrap();
    assert_eq!(whole[0].derived.tpot_ms.mean, alone[0].derived.tpot_ms.mean);
    assert_eq!(whole[0].reported, alone[0].reported);
}

/// A block cut off by a whole one, and then the next run's start as vLLM prints it: its
/// `Maximum request concurrency: 128` line (a label of the block's tool) right after the whole
/// block's closing line, then its progress bar and its block. One row of the tool after a closing
/// line is how a run starts, not the rest of a block: the whole blocks are accepted, with their
/// own figures (the bench log's concatenated samples found this).
#[test]
fn a_runs_start_after_a_closing_line_is_not_the_rest_of_a_block() {
    let (a, b, c) = (result_block("vllm-s2"), result_block("vllm-s3"), result_block("vllm-s2"));
    let top = a.iter().position(|l| l.contains("Time to First Token")).unwrap();
    let mut text: Vec<String> = a[..top].to_vec();
    text.extend(b.iter().cloned());
    text.push("Maximum request concurrency: 128".into());
    text.push("100%|##########| 200/200 [00:41<00:00,  4.80it/s]".into());
    text.extend(c.iter().cloned());
    let text: String = text.iter().map(|l| format!("{l}\n")).collect();
    let runs = common::run_all(text.as_bytes(), "back to back").unwrap();
    let whole: Vec<_> = runs.iter().filter(|r| r.verdict == bench_normalize::report::Verdict::Accepted).collect();
    assert_eq!(whole.len(), 2, "{runs:?}");
    for (run, block) in whole.iter().zip([&b, &c]) {
        let alone =
            common::run_all(block.iter().map(|l| format!("{l}\n")).collect::<String>().as_bytes(), "alone").unwrap();
        assert_eq!(run.derived.tpot_ms.mean, alone[0].derived.tpot_ms.mean);
        assert_eq!(run.reported, alone[0].reported);
    }
}

/// SGLang's banner cuts vLLM's block off, and SGLang's block takes vLLM's later rows (CI's case):
/// `Mean E2EL (ms)`, which only vLLM prints, gives it away.
#[test]
fn a_row_only_the_other_tool_prints_gives_the_mix_away() {
    let (a, b) = (result_block("vllm-s2"), result_block("sglang-s2"));
    let top = a.iter().position(|l| l.contains("Time to First Token")).unwrap();
    let stop = b.iter().position(|l| l.contains("End-to-End Latency")).unwrap();
    let text: String = [&a[..top], &b[..stop], &a[top..], &b[stop..]]
        .iter()
        .flat_map(|p| p.iter())
        .map(|l| format!("{l}\n"))
        .collect();
    let out = run_with_stdin(&["-f", "jsonl"], text.as_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("two result blocks are interleaved"), "{stderr}");
    let mixed = common::run_all(text.as_bytes(), "mixed").unwrap();
    assert!(
        mixed.iter().all(|r| r.verdict != bench_normalize::report::Verdict::Accepted || r.reported.is_empty()),
        "{mixed:?}"
    );
}

/// A block cut off and then the next run is no mix, whatever comes between: the next run's own
/// preamble (`Maximum request concurrency: 128`, which vLLM prints before its progress bar and
/// also reads as a row), a sweep script's `--- run 35 of 99 ---` after the next block's closing
/// line (a dashed line, but no section of its tool), or the next block's own repeated rows
/// (vllm-rs's steady-state section repeats two throughput rows). Each whole block gives what it
/// gives alone; none is said to be interleaved (all three were, found on bench/run.sh's log).
#[test]
fn a_cut_block_then_the_next_run_is_no_mix() {
    let cut = result_block("vllm-s2");
    let cut = &cut[..cut.iter().position(|l| l.contains("End-to-end Latency")).unwrap()];
    let text = std::fs::read_to_string(sample("versions/vllmrs0.33.0-s2.stdout.txt")).unwrap();
    let rs: Vec<String> =
        text.lines().skip_while(|l| !l.contains("Serving Benchmark Result")).map(String::from).collect();
    let cases: [(&str, Vec<String>, Vec<String>); 3] = [
        (
            "preamble row",
            vec!["Maximum request concurrency: 128".into(), "100%|██████████| 16/16 [00:10<00:00,  1.54it/s]".into()],
            result_block("vllm-s3"),
        ),
        (
            "sweep script line",
            vec!["INFO:     127.0.0.1:40888 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK".into()],
            [result_block("sglang-s2"), vec!["--- run 35 of 99 (c=1) ---".into(), "ERROR engine died".into()]].concat(),
        ),
        ("repeated rows of its own", vec!["(Bench pid=17243) INFO raised open-file limit".into()], rs),
    ];
    let lines = |parts: &[&[String]]| parts.iter().flat_map(|p| p.iter()).map(|l| format!("{l}\n")).collect::<String>();
    for (what, between, next) in cases {
        let log = lines(&[cut, &between, &next]);
        let out = run_with_stdin(&["-f", "jsonl"], log.as_bytes());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("interleaved"), "{what}: {stderr}");
        let runs = common::run_all(log.as_bytes(), what).unwrap();
        let alone = common::run_all(lines(&[&next]).as_bytes(), "alone").unwrap();
        let whole = runs.last().unwrap();
        assert_eq!(whole.verdict, bench_normalize::report::Verdict::Accepted, "{what}: {:?}", whole.checks);
        assert_eq!(whole.reported, alone[0].reported, "{what}");
        assert_eq!(whole.derived.tpot_ms.mean, alone[0].derived.tpot_ms.mean, "{what}");
    }
}
