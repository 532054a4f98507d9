//! Writing the report: JSON (the contract), JSON Lines, a human table, CSV, dstack's `benchmark`
//! or `metrics` object, and a written-out explanation of each run.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::derive::show;
use crate::error::printable;
use crate::report::{
    Check, ItlPer, ObjectiveResult, ObjectiveStatus, Report, Row, Run, Severity, StatKey, Status, TpotMethod, Verdict,
};

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
    /// What dstack's preset model accepts: its `benchmark` object, or its `metrics` (one per run).
    Dstack,
    /// The metrics object of dstack's proposal dstack#4230 (`e2e_ms`, TPOT derived).
    DstackE2e,
    /// An llm-d Benchmark Report v0.2 per run, one JSON document a line (see [`crate::llmd`]).
    LlmdBr,
    /// The derivation of each run written out.
    Explain,
}

impl OutputFormat {
    /// Formats that print each run as soon as it is complete.
    pub fn streams(self) -> bool {
        matches!(self, OutputFormat::Jsonl | OutputFormat::Csv | OutputFormat::LlmdBr | OutputFormat::Explain)
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

/// A figure in a CSV cell: the number as Rust writes it (`-3.5` is a negative number, read as
/// one by every spreadsheet, never a formula). A value that is no finite number (none reaches the
/// report, but a cell must not depend on that) is text, and neutralized as text is.
fn num(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => v.to_string(),
        Some(v) => csv_text(&v.to_string()).into_owned(),
        None => String::new(),
    }
}

/// The characters that make a spreadsheet read a cell as a formula when the cell begins with
/// them (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
pub const CSV_FORMULA_TRIGGERS: &[char] = &['=', '+', '-', '@', '\t', '\r'];

/// A text cell of the CSV output (a file name, a tool, variant or backend name, anything that
/// may come from an input), neutralized as OWASP recommends against CSV injection: a cell that
/// begins with a formula trigger ([`CSV_FORMULA_TRIGGERS`]) gets a leading `'`, which makes a
/// spreadsheet show it as text (`=cmd|' /C calc'!A0` is written `'=cmd|' /C calc'!A0`). Quoting
/// (a cell holding `,`, `"` or a line break) is the CSV writer's. Figures are written by [`num`],
/// never through here. One exception: `-` alone, the name standard input is reported under,
/// which is no formula (no operand) and which scripts match as is.
pub fn csv_text(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell != "-" && cell.starts_with(CSV_FORMULA_TRIGGERS) {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

fn csv_record(run: &Run) -> Vec<String> {
    let s = &run.source;
    let d = &run.derived;
    let text = |t: &str| csv_text(t).into_owned();
    vec![
        text(&s.input),
        s.block.to_string(),
        text(&s.parser),
        text(&s.tool),
        text(s.variant.as_deref().unwrap_or_default()),
        text(s.format.as_str()),
        run.verdict.as_str().into(),
        text(&failed_ids(run).join(" ")),
        num(d.tpot_ms.mean),
        text(d.tpot_ms.method.map(|m| m.as_str()).unwrap_or_default()),
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
        text(run.workload.text("backend").unwrap_or_default()),
        num(mean(run, "ttft_ms")),
        num(stat(run, "ttft_ms", StatKey::P(50.0))),
        num(stat(run, "ttft_ms", StatKey::P(99.0))),
        num(mean(run, "e2e_ms")),
        num(stat(run, "e2e_ms", StatKey::P(50.0))),
        num(stat(run, "e2e_ms", StatKey::P(99.0))),
        num(mean(run, "tpot_ms")),
        num(mean(run, "itl_ms")),
        text(run.reported.text("itl_per").unwrap_or_default()),
        num(run.reported.number("accept_length")),
    ]
}

/// The columns added after [`CSV_COLUMNS`] when the runs were judged on objectives (`--slo`):
/// `objectives` is `met` (every objective passed), `not-met` or `not-judged` (a rejected or
/// unusable run); `objectives_not_met` lists each objective not met as `objective:status`.
pub const CSV_OBJECTIVE_COLUMNS: &[&str] = &["objectives", "objectives_not_met"];

fn csv_objectives(run: &Run) -> Vec<String> {
    let Some(os) = &run.objectives else { return vec![String::new(), String::new()] };
    let summary = if run.verdict != Verdict::Accepted {
        "not-judged"
    } else if os.iter().all(|o| o.status == ObjectiveStatus::Pass) {
        "met"
    } else {
        "not-met"
    };
    let not_met: Vec<String> = os
        .iter()
        .filter(|o| crate::objectives::is_missed(o))
        .map(|o| format!("{}:{}", o.objective, o.status.as_str()))
        .collect();
    vec![summary.to_string(), csv_text(&not_met.join(" ")).into_owned()]
}

/// Writes CSV: the header once, then one row per run as runs come.
pub struct CsvWriter {
    header_written: bool,
    /// The first run was judged on objectives: so is every run, and their columns are written.
    objectives: bool,
}

impl CsvWriter {
    pub fn new() -> CsvWriter {
        CsvWriter { header_written: false, objectives: false }
    }

    pub fn write(&mut self, out: &mut dyn Write, run: &Run) -> io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        if !self.header_written {
            self.objectives = run.objectives.is_some();
            let mut header = CSV_COLUMNS.to_vec();
            if self.objectives {
                header.extend_from_slice(CSV_OBJECTIVE_COLUMNS);
            }
            w.write_record(header)?;
            self.header_written = true;
        }
        let mut record = csv_record(run);
        if self.objectives {
            record.extend(csv_objectives(run));
        }
        w.write_record(record)?;
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

/// Why a run cannot be written in a dstack format: what is missing or what dstack's model would
/// reject, and how to get a run that can be written. Never replaced by a guess.
#[derive(Debug, Clone, PartialEq)]
pub struct Unwritable {
    /// Each figure missing or unacceptable, with why (`tpot_ms.p50: ...`).
    pub problems: Vec<String>,
    /// What to run to get them.
    pub how: String,
}

impl Unwritable {
    /// One message: the problems, then how to get a run that can be written.
    pub fn message(&self) -> String {
        format!("{}; {}", self.problems.join("; "), self.how)
    }
}

/// How to get the figures a run lacks, for the tool that printed it.
fn how_to_get(run: &Run) -> String {
    let p = run.source.parser.as_str();
    if p.starts_with("vllm") {
        "to get them, run vLLM with `--percentile-metrics ttft,tpot,itl,e2el --save-result --save-detailed` \
         and give bench-normalize the result file, or run the benchmark as \
         `bench-normalize run -- vllm bench serve ...`"
            .into()
    } else if p.starts_with("sglang") {
        "to get them, run SGLang with `--output-file FILE --output-details` and give bench-normalize FILE, or \
         run the benchmark as `bench-normalize run -- python -m sglang.bench_serving ...`"
            .into()
    } else {
        "to get them, give bench-normalize the client's result file with per-request details, or run the \
         benchmark as `bench-normalize run -- <client command>`"
            .into()
    }
}

/// Relative difference allowed between the tool's mean TPOT and the derived one for the tool's
/// TPOT percentiles to be written beside the derived mean: within it the two means describe one
/// distribution (equal output lengths make the request-weighted and token-weighted means equal;
/// 2-decimal printing and SGLang's E2E ending at `[DONE]` move them by far less than 1%). Beyond
/// it the percentiles would belong to another figure than the mean they sit beside.
pub const TPOT_SOURCE_AGREEMENT: f64 = 0.01;

/// The TPOT `{mean, p50, p99}` an output format may write: the derived mean, and percentiles only
/// from a source whose mean agrees with it (the per-request arrays the mean came from; the tool's
/// own per-token TPOT rows when their mean agrees within [`TPOT_SOURCE_AGREEMENT`]). `Err` says
/// why the percentiles are absent.
pub fn tpot_trio(run: &Run) -> (Option<f64>, Result<(f64, f64), String>) {
    let d = &run.derived.tpot_ms;
    let Some(mean) = d.mean else {
        let why = d.reason.clone().unwrap_or_else(|| "the run gives no TPOT".into());
        return (None, Err(format!("TPOT is unknown ({why})")));
    };
    let pair = |p50: Option<f64>, p99: Option<f64>, what: &str| match (p50, p99) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(format!("{what} give no TPOT median and p99")),
    };
    let percentiles = match d.method {
        // One source: the mean and its percentiles come from the same arrays or rows.
        Some(TpotMethod::PerRequest) => pair(d.p50, d.p99, "the per-request arrays"),
        Some(TpotMethod::ToolTpot) | Some(TpotMethod::Claimed) => pair(d.p50, d.p99, "the TPOT rows"),
        // dstack stores exact figures: an estimate (the median TTFT standing in for the mean) is not one.
        Some(TpotMethod::E2eMedianTtftTokens) => Err(format!(
            "TPOT {} ms is approximate ({}), and has no percentiles",
            show(mean),
            d.approximate.as_deref().unwrap_or("an input the run lacks stood in")
        )),
        Some(TpotMethod::E2eTtftTokens) | None => match run.reported.stat("tpot_ms") {
            None => Err(format!(
                "TPOT {} ms is derived from E2E latency as a mean only, and the tool printed no TPOT rows to take \
                 percentiles from",
                show(mean)
            )),
            Some(st) => match st.mean() {
                Some(tool) if (tool - mean).abs() <= TPOT_SOURCE_AGREEMENT * mean => {
                    pair(st.get(StatKey::P(50.0)), st.get(StatKey::P(99.0)), "the tool's TPOT rows")
                }
                Some(tool) => Err(format!(
                    "the tool's TPOT rows (mean {} ms) disagree with the derived TPOT {} ms by more than {}%, so \
                     their percentiles describe another figure",
                    show(tool),
                    show(mean),
                    TPOT_SOURCE_AGREEMENT * 100.0
                )),
                None => Err("the tool's TPOT rows have no mean to compare with the derived one".into()),
            },
        },
    };
    (Some(mean), percentiles)
}

/// Failed requests: printed, counted in the per-request arrays, or proven zero (every one of
/// the `num_prompts` requests the client was asked to send succeeded: the client never sends
/// more, so none failed).
fn failed_requests(run: &Run) -> Option<u64> {
    if let Some(f) = run.totals.number("failed_requests") {
        return Some(f as u64);
    }
    if let Some(failed) = run.requests.as_ref().and_then(|r| r.failed.as_ref()) {
        return Some(failed.iter().filter(|f| **f).count() as u64);
    }
    match (run.totals.number("successful_requests"), run.workload.number("num_prompts")) {
        (Some(r), Some(n)) if r == n => Some(0),
        _ => None,
    }
}

/// dstack's `api` of a run: from its endpoint, else its backend (`sglang` native requests are
/// neither of dstack's two APIs).
fn dstack_api(run: &Run) -> Option<&'static str> {
    if let Some(api) = run.workload.text("api") {
        return ["chat_completions", "completions"].into_iter().find(|a| *a == api);
    }
    if let Some(e) = run.workload.text("endpoint") {
        let e = e.trim_end_matches('/');
        return if e.ends_with("/chat/completions") {
            Some("chat_completions")
        } else if e.ends_with("/completions") {
            Some("completions")
        } else {
            None
        };
    }
    match run.workload.text("backend")? {
        "openai-chat" | "sglang-oai-chat" | "vllm-chat" => Some("chat_completions"),
        "sglang-oai" => Some("completions"),
        _ => None,
    }
}

/// What `--format dstack` writes for a run: exactly what dstack 0.22.5's models accept, with
/// dstack's definitions. The `benchmark` object (`PresetBenchmark`: `tool`, `tool_version`,
/// `command`, `workload`, `metrics`) when the run states the client's exact version and command
/// (`run` mode, or a dstack document read back); otherwise its `metrics` object
/// (`PresetBenchmarkMetrics`), which is all a log or result file can state. TPOT comes from the
/// derivation; `output_tok_per_s` is `total_output_tokens / duration_seconds` and
/// `per_user_tok_per_s` is `output_tok_per_s / workload.concurrency`, as dstack's agent is told.
/// A figure the run does not give, or one dstack's model would reject, is an [`Unwritable`].
pub fn dstack(run: &Run) -> Result<Value, Unwritable> {
    let mut problems: Vec<String> = Vec::new();
    let mut need = |name: &str, v: Option<f64>, why_missing: &str, positive: bool| -> Option<f64> {
        match v {
            None => {
                problems.push(format!("{name}: {why_missing}"));
                None
            }
            Some(x) if !x.is_finite() || x < 0.0 || (positive && x == 0.0) => {
                let bound = if positive { "above 0" } else { "0 or more" };
                problems.push(format!("{name}: {} is not a figure dstack accepts (it must be {bound})", show(x)));
                None
            }
            Some(x) => Some(x),
        }
    };
    let t = &run.totals;
    let successful = need("successful_requests", t.number("successful_requests"), "the run does not give it", false);
    let num_prompts = run.workload.number("num_prompts");
    let failed_unknown = if num_prompts.is_some() {
        "the run does not print it, and it is proven zero only when every one of the num_prompts requests succeeded"
    } else {
        "the run does not print it, and without the client's argument dump (its `num_prompts`) it cannot be \
         proven zero"
    };
    let failed = need("failed_requests", failed_requests(run).map(|f| f as f64), failed_unknown, false);

    let duration = need("duration_seconds", t.number("duration_s"), "the run does not give it", true);
    let input = need("total_input_tokens", t.number("input_tokens"), "the run does not give it", false);
    let output = need("total_output_tokens", t.number("output_tokens"), "the run does not give it", false);
    let output_rate =
        need("output_tok_per_s", run.derived.output_tok_per_s, "needs total_output_tokens and duration_seconds", true);
    let concurrency = need(
        "workload.concurrency",
        run.workload.number("max_concurrency"),
        "the client's concurrency cap is not in the run (dstack's per_user_tok_per_s is output_tok_per_s / \
         workload.concurrency): run the client with `--max-concurrency N` and keep the lines it prints before the \
         result block",
        true,
    );
    let per_user = match (output_rate, concurrency) {
        (Some(r), Some(c)) => Some(crate::derive::round(r / c)),
        _ => None,
    };
    let ttft = run.reported.stat("ttft_ms");
    let ttft_stat = |k: StatKey| ttft.and_then(|s| s.get(k));
    let ttft_trio = [
        need("ttft_ms.mean", ttft_stat(StatKey::Mean), "the run does not give it", false),
        need("ttft_ms.p50", ttft_stat(StatKey::P(50.0)), "the run does not give the TTFT median", false),
        need("ttft_ms.p99", ttft_stat(StatKey::P(99.0)), "the run does not give the TTFT p99", false),
    ];
    let (tpot_mean, tpot_percentiles) = tpot_trio(run);
    let tpot_mean = need("tpot_ms.mean", tpot_mean, "TPOT cannot be derived from this run", false);
    let (p50, p99) = match tpot_percentiles {
        Ok((a, b)) => (need("tpot_ms.p50", Some(a), "", false), need("tpot_ms.p99", Some(b), "", false)),
        Err(why) if tpot_mean.is_some() => {
            problems.push(format!("tpot_ms.p50, tpot_ms.p99: {why}"));
            (None, None)
        }
        Err(_) => (None, None),
    };
    // dstack's model: every request succeeded, and all the requests asked for were measured.
    // (Refusals of the run's own figures: other flags cannot help, another run can.)
    let mut refused = Vec::new();
    if let Some(f) = failed.filter(|f| *f > 0.0) {
        refused.push(format!(
            "failed_requests: {} requests failed, and dstack accepts only a benchmark in which every request \
             succeeded",
            show(f)
        ));
    }
    if let (Some(r), Some(n)) = (successful, num_prompts) {
        if r != n {
            refused.push(format!(
                "successful_requests: {} of the {} requests asked for (num_prompts) succeeded, and dstack requires \
                 successful_requests == workload.num_requests",
                show(r),
                show(n)
            ));
        }
    }
    let whole = run.workload.text("benchmark_tool_version").is_some() || run.workload.text("command").is_some();
    let mut benchmark = None;
    if whole {
        benchmark = dstack_benchmark_head(run, successful, input, output, concurrency, num_prompts, &mut problems);
    }
    if !problems.is_empty() || !refused.is_empty() {
        let how = if problems.is_empty() {
            "dstack stores only a benchmark in which every request asked for succeeded: find why requests failed \
             (the client's per-request errors: vLLM `--save-detailed`, SGLang `--output-details`) and run it again"
                .to_string()
        } else {
            how_to_get(run)
        };
        problems.append(&mut refused);
        return Err(Unwritable { problems, how });
    }
    let num = |x: Option<f64>| x.expect("checked above");
    let count = |x: Option<f64>| num(x) as u64;
    let metrics = json!({
        "successful_requests": count(successful),
        "failed_requests": count(failed),
        "duration_seconds": num(duration),
        "total_input_tokens": count(input),
        "total_output_tokens": count(output),
        "output_tok_per_s": num(output_rate),
        "per_user_tok_per_s": num(per_user),
        "ttft_ms": { "mean": num(ttft_trio[0]), "p50": num(ttft_trio[1]), "p99": num(ttft_trio[2]) },
        "tpot_ms": { "mean": num(tpot_mean), "p50": num(p50), "p99": num(p99) },
    });
    Ok(match benchmark {
        Some(mut b) => {
            b["metrics"] = metrics;
            b
        }
        None => metrics,
    })
}

/// `tool`, `tool_version`, `command` and `workload` of dstack's `benchmark` object, from what the
/// run states (`run` mode, a dstack document), with dstack's definitions: `input_tokens` and
/// `output_tokens` are the measured means per request, rounded.
fn dstack_benchmark_head(
    run: &Run,
    successful: Option<f64>,
    input: Option<f64>,
    output: Option<f64>,
    concurrency: Option<f64>,
    num_prompts: Option<f64>,
    problems: &mut Vec<String>,
) -> Option<Value> {
    let w = &run.workload;
    let mut text = |name: &str, path: &str| match w.text(path).filter(|t| !t.trim().is_empty()) {
        Some(t) => Some(t.to_string()),
        None => {
            problems.push(format!("{name}: the run does not state it"));
            None
        }
    };
    let tool = text("tool", "benchmark_tool");
    let version = text("tool_version", "benchmark_tool_version");
    let command = text("command", "command");
    let api = dstack_api(run);
    if api.is_none() {
        problems.push(format!(
            "workload.api: dstack knows chat_completions and completions, and this run's {} is neither or unknown",
            match (w.text("endpoint"), w.text("backend")) {
                (Some(e), _) => format!("endpoint '{e}'"),
                (None, Some(b)) => format!("backend '{b}'"),
                (None, None) => "API".into(),
            }
        ));
    }
    if num_prompts.is_none() {
        problems.push("workload.num_requests: the run does not state how many requests were asked for".into());
    }
    let per_request = |total: Option<f64>| match (total, successful) {
        (Some(n), Some(r)) if r > 0.0 => Some((n / r).round()),
        _ => None,
    };
    let (input_tokens, output_tokens) = (per_request(input), per_request(output));
    if input_tokens.is_none_or(|x| x < 1.0) {
        problems.push("workload.input_tokens: needs total_input_tokens and at least one successful request".into());
    }
    if output_tokens.is_none_or(|x| x < 2.0) {
        problems.push(format!(
            "workload.output_tokens: dstack needs a mean output length of 2 tokens or more, this run's is {}",
            output_tokens.map(show).unwrap_or_else(|| "unknown".into())
        ));
    }
    let dataset = w.text("dataset").filter(|d| *d != "random");
    let prefix = w.number("shared_prefix_tokens");
    let prefixed = dataset.is_some_and(|d| d.contains("prefix"));
    if prefixed && prefix.is_none() {
        problems.push("workload.shared_prefix_tokens: the run's dataset shares a prefix the run does not state".into());
    }
    let mut workload = json!({
        "api": api?,
        "num_requests": num_prompts? as u64,
        "input_tokens": input_tokens? as u64,
        "output_tokens": output_tokens? as u64,
        "concurrency": concurrency? as u64,
    });
    if let Some(d) = dataset {
        workload["dataset"] = json!(d);
    }
    if let Some(p) = prefix {
        workload["shared_prefix_tokens"] = json!(p as u64);
    }
    Some(json!({ "tool": tool?, "tool_version": version?, "command": command?, "workload": workload }))
}

/// `--format dstack-e2e`: the metrics object of the proposal in dstack#4230 (not dstack's model):
/// dstack's fields plus the measured `e2e_ms`, TPOT derived (a figure the run does not give is
/// `null`, which the proposal allows, with a warning), and `per_user_tok_per_s = 1000 /
/// tpot_ms.mean`. TPOT percentiles only from a source that agrees with the mean ([`tpot_trio`]).
pub fn dstack_e2e_metrics(run: &Run) -> (Value, Vec<String>) {
    let mut warnings = Vec::new();
    let d = &run.derived;
    let mut trio = |name: &str, mean: Option<f64>, p50: Option<f64>, p99: Option<f64>| {
        for (k, v) in [("mean", mean), ("p50", p50), ("p99", p99)] {
            if v.is_none() {
                warnings.push(format!("{name}.{k} is null: the run does not give it"));
            }
        }
        json!({ "mean": mean, "p50": p50, "p99": p99 })
    };
    let (tpot_mean, percentiles) = tpot_trio(run);
    let (p50, p99) = match &percentiles {
        Ok((a, b)) => (Some(*a), Some(*b)),
        Err(_) => (None, None),
    };
    let tpot = trio("tpot_ms", tpot_mean, p50, p99);
    let ttft = trio(
        "ttft_ms",
        mean(run, "ttft_ms"),
        stat(run, "ttft_ms", StatKey::P(50.0)),
        stat(run, "ttft_ms", StatKey::P(99.0)),
    );
    // Measured E2E only (printed, or the per-request arrays' mean without their percentiles,
    // which are not summarized): never the approximation rebuilt from TPOT.
    let (e2e_mean, e2e_p50, e2e_p99) = match run.reported.stat("e2e_ms") {
        Some(st) => (st.mean(), st.get(StatKey::P(50.0)), st.get(StatKey::P(99.0))),
        None => (d.per_request.as_ref().and_then(|p| p.e2e_mean_ms), None, None),
    };
    let e2e = trio("e2e_ms", e2e_mean, e2e_p50, e2e_p99);
    if let (Some(_), Some(a)) = (d.tpot_ms.mean, &d.tpot_ms.approximate) {
        warnings.push(format!("tpot_ms.mean is approximate: {a}"));
    }
    if let Err(why) = percentiles {
        if tpot_mean.is_some() {
            warnings.push(format!("tpot_ms.p50 and p99 are null: {why}"));
        }
    }
    let count = |name: &str, v: Option<f64>, warnings: &mut Vec<String>| {
        if v.is_none() {
            warnings.push(format!("{name} is null: the run does not give it"));
        }
        v.map(|x| x as u64)
    };
    let successful = count("successful_requests", run.totals.number("successful_requests"), &mut warnings);
    let failed = count("failed_requests", failed_requests(run).map(|f| f as f64), &mut warnings);
    let input = count("total_input_tokens", run.totals.number("input_tokens"), &mut warnings);
    let output = count("total_output_tokens", run.totals.number("output_tokens"), &mut warnings);
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
    for k in ["duration_seconds", "output_tok_per_s", "per_user_tok_per_s"] {
        if metrics[k].is_null() {
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
            Cell::new(format!("{} #{}", printable(short_input(&r.source.input)), r.source.block))
                .add_attribute(Attribute::Bold),
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
            // Every cell's text through `printable`: names and values come from inputs.
            row.push(Cell::new(printable(&get(r))).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    // `--slo`: a row per objective (every run is judged on the same list).
    let objectives: Vec<&str> = runs
        .iter()
        .find_map(|r| r.objectives.as_ref())
        .map(|os| os.iter().map(|o| o.objective.as_str()).collect())
        .unwrap_or_default();
    for (i, name) in objectives.iter().enumerate() {
        let unit = runs.iter().find_map(|r| r.objectives.as_ref()?.get(i)).map_or("", |o| o.unit.as_str());
        let mut row = vec![Cell::new(printable(&format!("SLO {name} ({unit})")))];
        for r in runs {
            let cell = match r.objectives.as_ref().and_then(|os| os.get(i)) {
                Some(o) => objective_cell(o),
                None => Cell::new("-"),
            };
            row.push(cell.set_alignment(CellAlignment::Right));
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
            Verdict::Unusable => "UNUSABLE: no usable key figure".to_string(),
        };
        let cell = Cell::new(printable(&text)).set_alignment(CellAlignment::Right);
        verdict.push(match r.verdict {
            Verdict::Rejected | Verdict::Unusable => cell.fg(Color::Red).add_attribute(Attribute::Bold),
            Verdict::Accepted if failed.is_empty() => cell.fg(Color::Green),
            Verdict::Accepted => cell.fg(Color::Yellow),
        });
    }
    t.add_row(verdict);
    format!("{t}\n")
}

/// A judged objective in the table: `pass 145.44 (margin 1854.56)`, `MISSED 2100 (margin -100)`,
/// or why it was not judged.
fn objective_cell(o: &ObjectiveResult) -> comfy_table::Cell {
    use comfy_table::{Attribute, Cell, Color};
    let figures = |word: &str| match (o.value, o.margin) {
        // To 6 significant digits, as the margin (`show`'s 2 decimals beside it would not add up).
        (Some(v), Some(m)) => format!("{word} {} (margin {m})", crate::derive::round(v)),
        _ => word.to_string(),
    };
    match o.status {
        ObjectiveStatus::Pass => Cell::new(figures("pass")).fg(Color::Green),
        ObjectiveStatus::Fail => Cell::new(figures("MISSED")).fg(Color::Red).add_attribute(Attribute::Bold),
        ObjectiveStatus::NotAvailable => Cell::new("NOT AVAILABLE").fg(Color::Yellow),
        ObjectiveStatus::NotComparable => Cell::new("NOT COMPARABLE").fg(Color::Yellow),
        ObjectiveStatus::NotJudged => Cell::new("not judged"),
    }
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
        .map(|r| {
            format!("line {} \"{}: {}\"", r.line, printable(&r.label), printable(r.value.as_deref().unwrap_or("")))
        })
        .collect()
}

/// The derivation of a run written out with its numbers, for a person deciding whether to trust a
/// figure. Every text in it that is not the explanation's own (names, labels, values, messages
/// that quote an input) goes through [`printable`]: a line of the explanation is always one.
pub fn explain(run: &Run) -> String {
    let p = |t: &str| printable(t).into_owned();
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
        p(&s.input),
        p(&s.tool),
        p(&s.parser),
        p(s.variant.as_deref().unwrap_or("unknown"))
    );
    let t = &run.derived.tpot_ms;
    match (t.mean, t.method) {
        (Some(m), Some(method)) => {
            o += &format!("  TPOT {} ms, method {}\n", show(m), method.as_str());
            if let Some(f) = &t.formula {
                o += &format!("    = {}\n", p(f));
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
            if let Some(pr) = &run.derived.per_request {
                o += &format!(
                    "    over {} requests in the file ({} failed, {} with one token), E2E from {}\n",
                    pr.requests,
                    pr.failed,
                    pr.single_token,
                    p(&pr.e2e_source)
                );
            }
        }
        _ => o += &format!("  TPOT unknown: {}\n", p(t.reason.as_deref().unwrap_or("no method applies"))),
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
            o += &format!(" ({})", p(why));
        }
        o += "; it is never used as TPOT";
        if let Some(k) = run.derived.tokens_per_chunk {
            o += &format!("; chunks carry ~{} tokens", show(k));
        }
        o += "\n";
    }
    if let Some(e) = &run.derived.e2e_ms {
        o += &format!("  E2E approximated: {} ms = {}\n", show(e.mean), p(&e.formula));
    }
    o += "  checks:\n";
    for c in &run.checks {
        o += &format!("    {:<7} {:<19} {}\n", check_mark(c), p(&c.id), p(&c.message));
    }
    if let Some(objectives) = &run.objectives {
        o += "  objectives:\n";
        for r in objectives {
            o += &format!(
                "    {:<14} {}: {}\n",
                objective_mark(r.status),
                p(&r.objective),
                p(&crate::objectives::describe(r))
            );
        }
    }
    for n in &run.notes {
        let at = n.line.map(|l| format!(" (line {l})")).unwrap_or_default();
        o += &format!("  note {}{at}: {}\n", p(&n.code), p(&n.message));
    }
    o += &format!(
        "  verdict: {}\n\n",
        match run.verdict {
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "REJECTED",
            Verdict::Unusable => "UNUSABLE",
        }
    );
    o
}

fn objective_mark(s: ObjectiveStatus) -> &'static str {
    match s {
        ObjectiveStatus::Pass => "pass",
        ObjectiveStatus::Fail => "MISSED",
        ObjectiveStatus::NotAvailable => "NOT AVAILABLE",
        ObjectiveStatus::NotComparable => "NOT COMPARABLE",
        ObjectiveStatus::NotJudged => "not judged",
    }
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
