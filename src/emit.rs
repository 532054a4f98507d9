//! Writing the report: JSON (the contract), JSON Lines, a human table, CSV, dstack's `metrics`
//! object, and a written-out explanation of each run.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Value, json};

use crate::derive::show;
use crate::report::{Check, ItlPer, Report, Row, Run, Severity, StatKey, Status, TpotMethod, Verdict};

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
    /// dstack's preset `metrics` object (one per run).
    Dstack,
    /// The derivation of each run written out.
    Explain,
}

impl OutputFormat {
    /// Formats that print each run as soon as it is complete.
    pub fn streams(self) -> bool {
        matches!(self, OutputFormat::Jsonl | OutputFormat::Csv | OutputFormat::Explain)
    }
}

/// Write the whole report as JSON (pretty when `pretty`).
pub fn write_json(out: &mut dyn Write, report: &Report, pretty: bool) -> io::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(&mut *out, report)?;
    } else {
        serde_json::to_writer(&mut *out, report)?;
    }
    out.write_all(b"\n")
}

/// The report as one JSON document, written a run at a time: the bytes of [`write_json`] of all
/// the runs, without holding them (a log of thousands of runs is written in the memory of one).
/// Nothing is written before the first run: no run, no report.
pub struct JsonReport {
    pretty: bool,
    runs: usize,
    /// The document up to its `runs` list, and after it (from `Report::new(vec![])`, so that the
    /// framing is serde's).
    head: String,
    tail: String,
    /// Each run's indentation, pretty: one level deeper than the `runs` key.
    indent: String,
}

impl JsonReport {
    pub fn new(pretty: bool) -> JsonReport {
        let empty = if pretty {
            serde_json::to_string_pretty(&Report::new(Vec::new()))
        } else {
            serde_json::to_string(&Report::new(Vec::new()))
        }
        .expect("a report serializes");
        let at = empty.rfind("[]").expect("an empty runs list");
        let (head, tail) = (empty[..at + 1].to_string(), &empty[at + 1..]);
        let key_indent: String =
            head[head.rfind('\n').map_or(0, |i| i + 1)..].chars().take_while(|c| *c == ' ').collect();
        let tail = if pretty { format!("\n{key_indent}{tail}\n") } else { format!("{tail}\n") };
        JsonReport { pretty, runs: 0, head, tail, indent: format!("{key_indent}  ") }
    }

    /// One more run.
    pub fn run(&mut self, out: &mut dyn Write, run: &Run) -> io::Result<()> {
        if self.pretty {
            let text = serde_json::to_string_pretty(run)?;
            self.open(out)?;
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                out.write_all(self.indent.as_bytes())?;
                out.write_all(line.as_bytes())?;
            }
            Ok(())
        } else {
            with_jsonl_line(run, |line| self.compact(out, line))
        }
    }

    /// One more run, as [`write_jsonl`] wrote it (compact documents only).
    pub fn compact(&mut self, out: &mut dyn Write, jsonl: &[u8]) -> io::Result<()> {
        debug_assert!(!self.pretty);
        self.open(out)?;
        out.write_all(jsonl.strip_suffix(b"\n").unwrap_or(jsonl))
    }

    /// The head before the first run, a separator before the others.
    fn open(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.runs += 1;
        match (self.runs, self.pretty) {
            (1, false) => out.write_all(self.head.as_bytes()),
            (1, true) => out.write_all(self.head.as_bytes()).and_then(|_| out.write_all(b"\n")),
            (_, false) => out.write_all(b","),
            (_, true) => out.write_all(b",\n"),
        }
    }

    /// The document's end, when a run was written.
    pub fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.runs == 0 {
            return Ok(());
        }
        out.write_all(self.tail.as_bytes())
    }
}

/// Write one run as one line of JSON.
pub fn write_jsonl(out: &mut dyn Write, run: &Run) -> io::Result<()> {
    with_jsonl_line(run, |line| out.write_all(line))
}

/// One run as one line of JSON (newline included), in a buffer kept per thread, handed to `use_line`.
fn with_jsonl_line<T>(run: &Run, use_line: impl FnOnce(&[u8]) -> io::Result<T>) -> io::Result<T> {
    // Serialized into a buffer first: serde_json writes token by token, and through `dyn Write`
    // each token would be a call into the writer (a run is ~7 KB of JSON in hundreds of pieces).
    // One buffer, kept: a fresh 8 KB one per run cost more in malloc than it saved.
    thread_local! {
        static LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    LINE.with_borrow_mut(|line| {
        line.clear();
        // sonic-rs writes the same bytes as `serde_json::to_writer` (the same serde
        // serialization, the same float and escape forms: tests/outputs.rs holds it to that on
        // every sample), checking strings for escapes with SIMD: a run is mostly strings, and
        // serde_json's byte-at-a-time check was the largest single cost of `--format jsonl`.
        sonic_rs::to_writer(&mut *line, run).map_err(io::Error::other)?;
        line.push(b'\n');
        let written = use_line(line);
        if line.capacity() > 1 << 20 {
            // Not kept for the rest of the input after one huge run.
            *line = Vec::new();
        }
        written
    })
}

fn mean(run: &Run, name: &str) -> Option<f64> {
    run.reported.stat(name).and_then(|s| s.mean())
}

fn stat(run: &Run, name: &str, key: StatKey) -> Option<f64> {
    run.reported.stat(name).and_then(|s| s.get(key))
}

fn failed_ids(run: &Run) -> Vec<&str> {
    run.checks
        .iter()
        .filter(|c| c.status == Status::Fail && c.severity != Severity::Info)
        .map(|c| c.id.as_str())
        .collect()
}

// ------------------------------------------------------------------------------------------------
// CSV

/// The CSV columns, in order (stable: scripts read them by name).
pub const CSV_COLUMNS: &[&str] = &[
    "input",
    "block",
    "parser",
    "tool",
    "variant",
    "format",
    "verdict",
    "failed_checks",
    "tpot_ms",
    "tpot_method",
    "per_user_decode_tok_per_s",
    "output_tok_per_s",
    "request_per_s",
    "mean_in_flight",
    "slot_utilization",
    "tokens_per_chunk",
    "successful_requests",
    "failed_requests",
    "duration_s",
    "input_tokens",
    "output_tokens",
    "max_concurrency",
    "backend",
    "ttft_ms_mean",
    "ttft_ms_p50",
    "ttft_ms_p99",
    "e2e_ms_mean",
    "e2e_ms_p50",
    "e2e_ms_p99",
    "reported_tpot_ms_mean",
    "itl_ms_mean",
    "itl_per",
    "accept_length",
];

fn num(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

fn csv_record(run: &Run) -> Vec<String> {
    let s = &run.source;
    let d = &run.derived;
    vec![
        s.input.clone(),
        s.block.to_string(),
        s.parser.clone(),
        s.tool.clone(),
        s.variant.clone().unwrap_or_default(),
        s.format.as_str().to_string(),
        match run.verdict {
            Verdict::Accepted => "accepted".into(),
            Verdict::Rejected => "rejected".into(),
        },
        failed_ids(run).join(" "),
        num(d.tpot_ms.mean),
        d.tpot_ms.method.map(|m| m.as_str().to_string()).unwrap_or_default(),
        num(d.per_user_decode_tok_per_s),
        num(d.output_tok_per_s),
        num(d.request_per_s),
        num(d.mean_in_flight),
        num(d.slot_utilization),
        num(d.tokens_per_chunk),
        num(run.totals.number("successful_requests")),
        num(run.totals.number("failed_requests")),
        num(run.totals.number("duration_s")),
        num(run.totals.number("input_tokens")),
        num(run.totals.number("output_tokens")),
        num(run.workload.number("max_concurrency")),
        run.workload.text("backend").unwrap_or_default().to_string(),
        num(mean(run, "ttft_ms")),
        num(stat(run, "ttft_ms", StatKey::P(50.0))),
        num(stat(run, "ttft_ms", StatKey::P(99.0))),
        num(mean(run, "e2e_ms")),
        num(stat(run, "e2e_ms", StatKey::P(50.0))),
        num(stat(run, "e2e_ms", StatKey::P(99.0))),
        num(mean(run, "tpot_ms")),
        num(mean(run, "itl_ms")),
        run.reported.text("itl_per").unwrap_or_default().to_string(),
        num(run.reported.number("accept_length")),
    ]
}

/// Writes CSV: the header once, then one row per run as runs come.
pub struct CsvWriter {
    header_written: bool,
}

impl CsvWriter {
    pub fn new() -> CsvWriter {
        CsvWriter { header_written: false }
    }

    pub fn write(&mut self, out: &mut dyn Write, run: &Run) -> io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        if !self.header_written {
            w.write_record(CSV_COLUMNS)?;
            self.header_written = true;
        }
        w.write_record(csv_record(run))?;
        w.flush()
    }
}

impl Default for CsvWriter {
    fn default() -> Self {
        CsvWriter::new()
    }
}

// ------------------------------------------------------------------------------------------------
// dstack

/// `{mean, p50, p99}` with `null` for what cannot be known.
#[derive(Serialize)]
struct Trio {
    mean: Option<f64>,
    p50: Option<f64>,
    p99: Option<f64>,
}

/// dstack's preset `metrics` object for a run, and warnings for every figure that is `null`.
/// TPOT comes from the derivation (never from ITL); `per_user_tok_per_s = 1000 / tpot_ms.mean`.
pub fn dstack_metrics(run: &Run) -> (Value, Vec<String>) {
    let mut warnings = Vec::new();
    let d = &run.derived;
    let mut trio = |name: &str, mean: Option<f64>, p50: Option<f64>, p99: Option<f64>| {
        for (k, v) in [("mean", mean), ("p50", p50), ("p99", p99)] {
            if v.is_none() {
                warnings.push(format!("{name}.{k} is null: the run does not give it"));
            }
        }
        Trio { mean, p50, p99 }
    };
    // TPOT percentiles: from the per-request arrays or the tool's own rows (both per token);
    // a mean derived from E2E comes without them.
    let tool = |k| stat(run, "tpot_ms", k);
    let (p50, p99) = match d.tpot_ms.method {
        Some(TpotMethod::PerRequest) | Some(TpotMethod::ToolTpot) | Some(TpotMethod::Claimed) => {
            (d.tpot_ms.p50, d.tpot_ms.p99)
        }
        _ if d.tpot_ms.mean.is_some() => (tool(StatKey::P(50.0)), tool(StatKey::P(99.0))),
        _ => (None, None),
    };
    let tpot = trio("tpot_ms", d.tpot_ms.mean, p50, p99);
    let ttft = trio(
        "ttft_ms",
        mean(run, "ttft_ms"),
        stat(run, "ttft_ms", StatKey::P(50.0)),
        stat(run, "ttft_ms", StatKey::P(99.0)),
    );
    let e2e_mean = mean(run, "e2e_ms").or(d.per_request.as_ref().and_then(|p| p.e2e_mean_ms));
    let e2e = trio("e2e_ms", e2e_mean, stat(run, "e2e_ms", StatKey::P(50.0)), stat(run, "e2e_ms", StatKey::P(99.0)));
    if let (Some(_), Some(a)) = (d.tpot_ms.mean, &d.tpot_ms.approximate) {
        warnings.push(format!("tpot_ms.mean is approximate: {a}"));
    }
    let count = |name: &str, path: &str, warnings: &mut Vec<String>| {
        let v = run.totals.number(path).map(|x| x as u64);
        if v.is_none() {
            warnings.push(format!("{name} is null: the run does not give it"));
        }
        v
    };
    let successful = count("successful_requests", "successful_requests", &mut warnings);
    let failed = count("failed_requests", "failed_requests", &mut warnings);
    let input = count("total_input_tokens", "input_tokens", &mut warnings);
    let output = count("total_output_tokens", "output_tokens", &mut warnings);
    let metrics = json!({
        "successful_requests": successful,
        "failed_requests": failed,
        "duration_seconds": run.totals.number("duration_s"),
        "total_input_tokens": input,
        "total_output_tokens": output,
        "output_tok_per_s": d.output_tok_per_s,
        "per_user_tok_per_s": d.per_user_decode_tok_per_s,
        "ttft_ms": ttft,
        "tpot_ms": tpot,
        "e2e_ms": e2e,
    });
    for (k, v) in [
        ("duration_seconds", &metrics["duration_seconds"]),
        ("output_tok_per_s", &metrics["output_tok_per_s"]),
        ("per_user_tok_per_s", &metrics["per_user_tok_per_s"]),
    ] {
        if v.is_null() {
            warnings.push(format!("{k} is null: the run does not give it"));
        }
    }
    (metrics, warnings)
}

// ------------------------------------------------------------------------------------------------
// Table

/// Runs side by side: one column per run, the figures that matter as rows (derived TPOT and the
/// per-user decode rate first), units in the row names, failed checks marked.
pub fn table(runs: &[Run], color: bool) -> String {
    use comfy_table::{Attribute, Cell, CellAlignment, Color, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    if !color {
        t.force_no_tty();
    } else {
        t.enforce_styling();
    }
    let mut header = vec![Cell::new("")];
    for r in runs {
        header.push(
            Cell::new(format!("{} #{}", short_input(&r.source.input), r.source.block)).add_attribute(Attribute::Bold),
        );
    }
    t.set_header(header);
    let opt = |x: Option<f64>| x.map(show).unwrap_or_else(|| "-".into());
    type Getter = Box<dyn Fn(&Run) -> String>;
    let mut rows: Vec<(&str, Getter)> = vec![
        ("TPOT, derived (ms)", Box::new(move |r: &Run| opt(r.derived.tpot_ms.mean))),
        (
            "  method",
            Box::new(|r: &Run| r.derived.tpot_ms.method.map(|m| m.as_str().to_string()).unwrap_or_else(|| "-".into())),
        ),
        ("Per-user decode rate (tok/s)", Box::new(move |r: &Run| opt(r.derived.per_user_decode_tok_per_s))),
        ("Output throughput (tok/s)", Box::new(move |r: &Run| opt(r.derived.output_tok_per_s))),
        (
            "Tool",
            Box::new(|r: &Run| {
                format!("{} {}", r.source.tool, r.source.variant.clone().unwrap_or_default()).trim().to_string()
            }),
        ),
        ("Backend", Box::new(|r: &Run| r.workload.text("backend").unwrap_or("-").to_string())),
        (
            "Requests ok / failed",
            Box::new(move |r: &Run| {
                format!("{} / {}", opt(r.totals.number("successful_requests")), opt(r.totals.number("failed_requests")))
            }),
        ),
        ("Max concurrency", Box::new(move |r: &Run| opt(r.workload.number("max_concurrency")))),
        ("Duration (s)", Box::new(move |r: &Run| opt(r.totals.number("duration_s")))),
        ("Output tokens", Box::new(move |r: &Run| opt(r.totals.number("output_tokens")))),
        (
            "TTFT mean / p99 (ms)",
            Box::new(move |r: &Run| {
                format!("{} / {}", opt(mean(r, "ttft_ms")), opt(stat(r, "ttft_ms", StatKey::P(99.0))))
            }),
        ),
        (
            "E2E mean (ms)",
            Box::new(move |r: &Run| opt(mean(r, "e2e_ms").or(r.derived.e2e_ms.as_ref().map(|e| e.mean)))),
        ),
        ("TPOT printed by the tool (ms)", Box::new(move |r: &Run| opt(mean(r, "tpot_ms")))),
        (
            "ITL printed by the tool (ms)",
            Box::new(move |r: &Run| match (mean(r, "itl_ms"), r.source.semantics.itl) {
                (Some(v), Some(ItlPer::Chunk)) => format!("{} per chunk", show(v)),
                (Some(v), Some(ItlPer::Token)) => format!("{} per token", show(v)),
                (v, _) => opt(v),
            }),
        ),
        ("Tokens per chunk", Box::new(move |r: &Run| opt(r.derived.tokens_per_chunk))),
        ("Accept length", Box::new(move |r: &Run| opt(r.reported.number("accept_length")))),
        ("Slot utilization", Box::new(move |r: &Run| opt(r.derived.slot_utilization))),
    ];
    // Runs read from a table of runs are named by their load step (`concurrent@4`, `rate=inf`).
    if runs.iter().any(|r| r.workload.text("strategy").is_some()) {
        let at = rows.iter().position(|(name, _)| *name == "Max concurrency").map_or(rows.len(), |i| i + 1);
        rows.insert(at, ("Load step", Box::new(|r: &Run| r.workload.text("strategy").unwrap_or("-").to_string())));
    }
    for (name, get) in &rows {
        let mut row = vec![Cell::new(*name)];
        for r in runs {
            row.push(Cell::new(get(r)).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    let mut verdict = vec![Cell::new("Verdict").add_attribute(Attribute::Bold)];
    for r in runs {
        let failed = failed_ids(r);
        let text = match r.verdict {
            Verdict::Accepted if failed.is_empty() => "accepted".to_string(),
            Verdict::Accepted => format!("accepted (warn: {})", failed.join(", ")),
            Verdict::Rejected => format!("REJECTED: {}", failed.join(", ")),
        };
        let cell = Cell::new(text).set_alignment(CellAlignment::Right);
        verdict.push(match r.verdict {
            Verdict::Rejected => cell.fg(Color::Red).add_attribute(Attribute::Bold),
            Verdict::Accepted if failed.is_empty() => cell.fg(Color::Green),
            Verdict::Accepted => cell.fg(Color::Yellow),
        });
    }
    t.add_row(verdict);
    format!("{t}\n")
}

fn short_input(input: &str) -> &str {
    input.rsplit('/').next().unwrap_or(input)
}

// ------------------------------------------------------------------------------------------------
// Explanation

/// Rows that fed a figure, as `line N "Label: value"`.
fn source_rows(run: &Run, field_prefix: &str) -> Vec<String> {
    run.rows
        .iter()
        .filter(|r: &&Row| {
            r.field.as_deref().is_some_and(|f| f == field_prefix || f.starts_with(&format!("{field_prefix}.")))
        })
        .map(|r| format!("line {} \"{}: {}\"", r.line, r.label, r.value.as_deref().unwrap_or("")))
        .collect()
}

/// The derivation of a run written out with its numbers, for a person deciding whether to trust a
/// figure.
pub fn explain(run: &Run) -> String {
    let mut o = String::new();
    let s = &run.source;
    let lines = match (s.first_line, s.last_line) {
        (Some(a), Some(b)) => format!(", lines {a}-{b}"),
        (Some(a), None) => format!(", line {a}"),
        _ => String::new(),
    };
    o += &format!(
        "Run {} of {}: {} ({}, variant {}){lines}\n",
        s.block,
        s.input,
        s.tool,
        s.parser,
        s.variant.as_deref().unwrap_or("unknown")
    );
    let t = &run.derived.tpot_ms;
    match (t.mean, t.method) {
        (Some(m), Some(method)) => {
            o += &format!("  TPOT {} ms, method {}\n", show(m), method.as_str());
            if let Some(f) = &t.formula {
                o += &format!("    = {f}\n");
            }
            if let Some(a) = &t.approximate {
                o += &format!("    approximate: {a}\n");
            }
            let inputs: &[&str] = match method {
                TpotMethod::E2eTtftTokens => &[
                    "reported.e2e_ms.mean",
                    "reported.ttft_ms.mean",
                    "totals.output_tokens",
                    "totals.successful_requests",
                ],
                TpotMethod::E2eMedianTtftTokens => &[
                    "reported.e2e_ms.mean",
                    "reported.ttft_ms.p50",
                    "totals.output_tokens",
                    "totals.successful_requests",
                ],
                TpotMethod::ToolTpot | TpotMethod::Claimed => &["reported.tpot_ms"],
                TpotMethod::PerRequest => &[],
            };
            for field in inputs {
                for r in source_rows(run, field) {
                    o += &format!("    from {r}\n");
                }
            }
            if let Some(p) = &run.derived.per_request {
                o += &format!(
                    "    over {} requests in the file ({} failed, {} with one token), E2E from {}\n",
                    p.requests, p.failed, p.single_token, p.e2e_source
                );
            }
        }
        _ => o += &format!("  TPOT unknown: {}\n", t.reason.as_deref().unwrap_or("no method applies")),
    }
    if let (Some(rate), Some(m)) = (run.derived.per_user_decode_tok_per_s, t.mean) {
        o += &format!("  per-user decode rate {} tok/s = 1000 / {}\n", show(rate), show(m));
    }
    if let (Some(n), Some(dur)) = (run.totals.number("output_tokens"), run.totals.number("duration_s")) {
        o += &format!(
            "  output throughput {} tok/s = {} tokens / {} s\n",
            run.derived.output_tok_per_s.map(show).unwrap_or_default(),
            show(n),
            show(dur)
        );
    }
    if let Some(itl) = mean(run, "itl_ms") {
        let how = match run.source.semantics.itl {
            Some(ItlPer::Chunk) => "per streamed chunk",
            Some(ItlPer::Token) => "per token",
            None => "in an unknown way",
        };
        o += &format!("  the printed mean ITL {} ms is timed {how}", show(itl));
        if let Some(why) = &run.source.semantics.itl_why {
            o += &format!(" ({why})");
        }
        o += "; it is never used as TPOT";
        if let Some(k) = run.derived.tokens_per_chunk {
            o += &format!("; chunks carry ~{} tokens", show(k));
        }
        o += "\n";
    }
    if let Some(e) = &run.derived.e2e_ms {
        o += &format!("  E2E approximated: {} ms = {}\n", show(e.mean), e.formula);
    }
    o += "  checks:\n";
    for c in &run.checks {
        o += &format!("    {:<7} {:<19} {}\n", check_mark(c), c.id, c.message);
    }
    for n in &run.notes {
        let at = n.line.map(|l| format!(" (line {l})")).unwrap_or_default();
        o += &format!("  note {}{at}: {}\n", n.code, n.message);
    }
    o += &format!(
        "  verdict: {}\n\n",
        match run.verdict {
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "REJECTED",
        }
    );
    o
}

fn check_mark(c: &Check) -> &'static str {
    match (c.status, c.severity) {
        (Status::Pass, _) => "pass",
        (Status::Skipped, _) => "skipped",
        (Status::Fail, Severity::Error) => "FAIL",
        (Status::Fail, Severity::Warning) => "warn",
        (Status::Fail, Severity::Info) => "note",
    }
}
