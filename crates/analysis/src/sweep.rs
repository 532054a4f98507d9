//! Sweeps: several runs of one configuration at increasing load (concurrency or request rate)
//! summarized as a frontier of output throughput against the per-user decode rate.
//!
//! A *series* is the runs of one configuration: by default the runs that share the benchmark
//! tool and its version variant, the model (when the run names it) and the input and output lengths per request
//! ([`GroupBy::Workload`]), or the runs of one input file ([`GroupBy::Input`]). Its *points* are
//! ordered by load: the client's concurrency cap, then its request rate (an unset or infinite one
//! last), then input order.
//!
//! Each point carries two figures that peers confuse:
//!
//! * `per_user_decode_tok_per_s` = `1000 / TPOT_ms`, with TPOT derived from E2E latency, TTFT and
//!   token counts: how fast one user's tokens arrive once decoding started;
//! * `output_tok_per_s_per_concurrency` = output throughput / configured concurrency: what vLLM's
//!   and NVIDIA's Pareto tools print as "tokens/s per user". It is no decode rate: it counts TTFT,
//!   queueing and idle slots, and at a concurrency above what the server serves at once it falls
//!   while the decode rate stays (`samples/captured/vllm-s4`, concurrency 8 on 4 server slots).
//!
//! A point is *Pareto-optimal* in its series when no other point of the series has at least its
//! output throughput and at least its per-user decode rate, one of them strictly more.
//!
//! A run that was rejected by a rule, is unusable, or lacks a derived TPOT or an output throughput
//! is no point: it is listed in [`Sweep::excluded`] with the reason. A point whose TPOT is
//! approximate or unverified says so (`marks`).
//!
//! Every figure a run gives is read through one small function below, so that a change in how
//! reports hold figures touches only them.

use std::path::PathBuf;

use serde::Serialize;

use crate::compare::Fig;
use bench_normalize_core::report::{RuleId, Run, Severity, StatKey, Status, Verdict};
use bench_normalize_core::vocabulary::{Key, reported, totals, workload};
use bench_normalize_core::{Error, Options, Sink};

/// Read every run of the inputs (`-` is standard input), in input order; the problems met on the
/// way (an unreadable file, an input with no result, a malformed line) are returned beside them.
pub fn read_runs(paths: &[PathBuf], opts: &Options) -> (Vec<Run>, Vec<Error>) {
    struct Collect {
        runs: Vec<Run>,
        errors: Vec<Error>,
    }
    impl Sink for Collect {
        fn run(&mut self, run: Run) -> Result<(), Error> {
            self.runs.push(run);
            Ok(())
        }
        fn diagnostic(&mut self, error: Error) {
            self.errors.push(error);
        }
    }
    let mut got = Collect { runs: Vec::new(), errors: Vec::new() };
    for path in paths {
        let name = path.display().to_string();
        let result = if name == "-" {
            bench_normalize_core::normalize(std::io::BufReader::new(std::io::stdin()), &name, opts, &mut got)
        } else {
            match std::fs::File::open(path) {
                Ok(f) => bench_normalize_core::normalize_file(f, &name, opts, &mut got),
                Err(source) => Err(Error::Io { input: name, source }),
            }
        };
        if let Err(e) = result {
            got.errors.push(e);
        }
    }
    (got.runs, got.errors)
}

/// How runs are put into series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// Tool and its version variant, model, input and output length per request.
    #[default]
    Workload,
    /// Each input file is a series (a sweep printed into one log).
    Input,
}

/// The summary of every sweep found in a set of runs.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    pub series: Vec<Series>,
    /// Runs that are no frontier point, with the reason.
    pub excluded: Vec<Excluded>,
    /// What the figures of a point mean.
    pub definitions: Definitions,
}

/// What the per-point figures mean (written into the JSON so a reader need not guess).
#[derive(Debug, Clone, Serialize)]
pub struct Definitions {
    pub per_user_decode_tok_per_s: &'static str,
    pub output_tok_per_s_per_concurrency: &'static str,
    pub pareto: &'static str,
}

pub const PER_USER_DEFINITION: &str = "1000 / derived TPOT (ms): the rate at which one request's output tokens arrive \
     once decoding has started (TPOT derived from E2E latency, TTFT and token counts, never from ITL)";
pub const PER_CONCURRENCY_DEFINITION: &str = "output throughput (tok/s) / the client's configured concurrency: the figure \
     vLLM's and NVIDIA's Pareto tools call 'tokens/s per user'; it includes TTFT, queueing and idle slots and is not a \
     decode rate; null when the run states no concurrency";
pub const PARETO_DEFINITION: &str = "no other point of the series has at least this output throughput and at least this \
     per-user decode rate, one of them strictly more";

/// The runs of one configuration, ordered by load.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// For people: tool (variant), model, lengths (or the input file).
    pub label: String,
    pub tool: String,
    /// The tool's output layout (version variant), as the parser named it.
    pub variant: Option<String>,
    pub model: Option<String>,
    /// Input tokens per request: the requested length, else total input tokens / successful requests.
    pub input_len: Option<f64>,
    /// Output tokens per request, likewise.
    pub output_len: Option<f64>,
    /// The input file, with `--group-by input`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    pub points: Vec<Point>,
    /// Something about the series as a whole (two runs at one load).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One run of a series.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub input: String,
    pub block: usize,
    /// The load, for people: `concurrency 4`, `concurrency 4, rate 2 req/s`.
    pub load: String,
    pub max_concurrency: Option<f64>,
    /// The configured request rate; `null` when unset or infinite.
    pub request_rate: Option<f64>,
    /// The tool's own name for the step (guidellm `concurrent@4`, vllm-rs `concurrency=4`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    pub output_tok_per_s: f64,
    pub per_user_decode_tok_per_s: f64,
    pub tpot_ms: f64,
    pub tpot_method: Option<String>,
    pub output_tok_per_s_per_concurrency: Option<f64>,
    pub ttft_ms_mean: Option<f64>,
    pub ttft_ms_p99: Option<f64>,
    /// Requests in flight on average (Little's law: requests x mean E2E / duration).
    pub mean_in_flight: Option<f64>,
    pub pareto: bool,
    /// `approximate: ...` or `unverified: ...` when the TPOT is; failed warnings by rule id.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<String>,
}

/// A run that is no point.
#[derive(Debug, Clone, Serialize)]
pub struct Excluded {
    pub input: String,
    pub block: usize,
    pub verdict: &'static str,
    pub reason: String,
}

// One function per figure read from a run.

fn tpot_ms(run: &Run) -> Option<f64> {
    run.derived.tpot_ms.mean.filter(|v| v.is_finite() && *v > 0.0)
}

fn per_user_decode(run: &Run) -> Option<f64> {
    run.derived.per_user_decode_tok_per_s.filter(|v| v.is_finite() && *v > 0.0)
}

fn output_throughput(run: &Run) -> Option<f64> {
    run.derived.output_tok_per_s.filter(|v| v.is_finite() && *v >= 0.0)
}

fn max_concurrency(run: &Run) -> Option<f64> {
    run.number(workload::MAX_CONCURRENCY).filter(|v| v.is_finite() && *v > 0.0)
}

fn request_rate(run: &Run) -> Option<f64> {
    run.number(workload::REQUEST_RATE).filter(|v| v.is_finite() && *v > 0.0)
}

fn strategy(run: &Run) -> Option<&str> {
    run.text(workload::STRATEGY)
}

fn model(run: &Run) -> Option<&str> {
    run.text(workload::MODEL)
}

fn ttft_p99(run: &Run) -> Option<f64> {
    run.stat_of(reported::TTFT_MS, StatKey::P(99.0))
}

fn mean_in_flight(run: &Run) -> Option<f64> {
    run.derived.mean_in_flight
}

/// Tokens per request: the requested length, else the total over successful requests, to the
/// nearest token (a series is one configuration, not one exact mean).
fn per_request_len(run: &Run, requested: Key, total: Key) -> Option<f64> {
    if let Some(v) = run.number(requested).filter(|v| v.is_finite() && *v > 0.0) {
        return Some(v);
    }
    let r = run.number(totals::SUCCESSFUL_REQUESTS).filter(|r| *r > 0.0)?;
    let n = run.number(total)?;
    Some((n / r).round())
}

fn input_len(run: &Run) -> Option<f64> {
    per_request_len(run, workload::INPUT_LEN, totals::INPUT_TOKENS)
}

fn output_len(run: &Run) -> Option<f64> {
    per_request_len(run, workload::OUTPUT_LEN, totals::OUTPUT_TOKENS)
}

/// The key that lines runs of one configuration up. (The `compare` subcommand has its own
/// workload key; the two are to be folded into one.)
#[derive(Debug, Clone, PartialEq)]
struct SeriesKey {
    tool: String,
    variant: Option<String>,
    model: Option<String>,
    input_len: Option<f64>,
    output_len: Option<f64>,
    input: Option<String>,
}

fn key_of(run: &Run, by: GroupBy) -> SeriesKey {
    SeriesKey {
        tool: run.source.tool.clone(),
        variant: run.source.variant.clone(),
        model: model(run).map(str::to_string),
        input_len: input_len(run),
        output_len: output_len(run),
        input: (by == GroupBy::Input).then(|| run.source.input.clone()),
    }
}

fn label_of(key: &SeriesKey) -> String {
    if let Some(input) = &key.input {
        return input.clone();
    }
    let len = |v: Option<f64>| v.map_or("?".to_string(), fmt_num);
    let mut s = key.tool.clone();
    if let Some(v) = &key.variant {
        s.push_str(&format!(" ({v})"));
    }
    if let Some(m) = &key.model {
        s.push_str(", ");
        s.push_str(m);
    }
    s.push_str(&format!(", {} in / {} out tokens", len(key.input_len), len(key.output_len)));
    s
}

/// A number as people write it: no trailing zeros, at most 3 decimals.
pub fn fmt_num(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn load_label(conc: Option<f64>, rate: Option<f64>, strategy: Option<&str>) -> String {
    match (conc, rate) {
        (Some(c), Some(r)) => format!("concurrency {}, rate {} req/s", fmt_num(c), fmt_num(r)),
        (Some(c), None) => format!("concurrency {}", fmt_num(c)),
        (None, Some(r)) => format!("rate {} req/s", fmt_num(r)),
        (None, None) => strategy.map_or_else(|| "unknown".to_string(), str::to_string),
    }
}

/// Why a run is no point, if it is none.
fn exclusion(run: &Run) -> Option<String> {
    let failed = |sev: Severity| {
        run.checks.iter().filter(move |c| c.status == Status::Fail && c.severity == sev).collect::<Vec<_>>()
    };
    match run.verdict {
        Verdict::Rejected => {
            let mut f = failed(Severity::Error);
            f.extend(failed(Severity::Warning));
            let said: Vec<String> = f.iter().map(|c| format!("{}: {}", c.id, c.message)).collect();
            return Some(format!("rejected by {}", said.join("; ")));
        }
        Verdict::Unusable => {
            let why = run.checks.iter().find(|c| c.id == RuleId::KeyFigures).map_or("", |c| c.message.as_str());
            return Some(format!("unusable: {why}"));
        }
        Verdict::Accepted => {}
    }
    if tpot_ms(run).is_none() {
        let mut why =
            format!("no derived TPOT: {}", run.derived.tpot_ms.reason.as_deref().unwrap_or("the derivation gave none"));
        for n in run.notes.iter().filter(|n| n.code == "parser-note") {
            why.push_str(" (");
            why.push_str(&n.message);
            why.push(')');
        }
        return Some(why);
    }
    if per_user_decode(run).is_none() {
        let why = run.derived.undefined.get("per_user_decode_tok_per_s").map_or("undefined", String::as_str);
        return Some(format!("no per-user decode rate: {why}"));
    }
    if output_throughput(run).is_none() {
        let why = run.derived.undefined.get("output_tok_per_s").map_or("undefined", String::as_str);
        return Some(format!("no output throughput: {why}"));
    }
    None
}

fn point_of(run: &Run) -> Point {
    let conc = max_concurrency(run);
    let rate = request_rate(run);
    let out = output_throughput(run).unwrap_or(0.0);
    let mut marks = Vec::new();
    if let Some(a) = &run.derived.tpot_ms.approximate {
        marks.push(format!("approximate TPOT: {a}"));
    }
    if run.derived.tpot_ms.verified == Some(false) {
        let why = run.derived.tpot_ms.unverified_reason.as_deref().unwrap_or("no rule could test it");
        marks.push(format!("unverified TPOT: {why}"));
    }
    for c in run.checks.iter().filter(|c| c.status == Status::Fail && c.severity == Severity::Warning) {
        marks.push(format!("warning {}", c.id));
    }
    Point {
        input: run.source.input.clone(),
        block: run.source.block,
        load: load_label(conc, rate, strategy(run)),
        max_concurrency: conc,
        request_rate: rate,
        strategy: strategy(run).map(str::to_string),
        output_tok_per_s: out,
        per_user_decode_tok_per_s: per_user_decode(run).unwrap_or(0.0),
        tpot_ms: tpot_ms(run).unwrap_or(0.0),
        tpot_method: run.derived.tpot_ms.method.map(|m| m.as_str().to_string()),
        output_tok_per_s_per_concurrency: conc.map(|c| bench_normalize_core::number::round(out / c)),
        ttft_ms_mean: Fig::TtftMean.value(run),
        ttft_ms_p99: ttft_p99(run),
        mean_in_flight: mean_in_flight(run),
        pareto: false,
        marks,
    }
}

/// An unset or infinite load sorts after every finite one.
fn load_order(p: &Point) -> (f64, f64) {
    (p.max_concurrency.unwrap_or(f64::INFINITY), p.request_rate.unwrap_or(f64::INFINITY))
}

/// Mark the Pareto-optimal points: none other is at least as good on both axes and better on one.
fn mark_pareto(points: &mut [Point]) {
    let dominated: Vec<bool> = points
        .iter()
        .map(|p| {
            points.iter().any(|q| {
                q.output_tok_per_s >= p.output_tok_per_s
                    && q.per_user_decode_tok_per_s >= p.per_user_decode_tok_per_s
                    && (q.output_tok_per_s > p.output_tok_per_s
                        || q.per_user_decode_tok_per_s > p.per_user_decode_tok_per_s)
            })
        })
        .collect();
    for (p, d) in points.iter_mut().zip(dominated) {
        p.pareto = !d;
    }
}

/// Put runs into series and summarize each.
pub fn summarize(runs: &[Run], by: GroupBy) -> Sweep {
    let mut keyed: Vec<(SeriesKey, Vec<Point>)> = Vec::new();
    let mut excluded = Vec::new();
    for run in runs {
        if let Some(reason) = exclusion(run) {
            excluded.push(Excluded {
                input: run.source.input.clone(),
                block: run.source.block,
                verdict: run.verdict.as_str(),
                reason,
            });
            continue;
        }
        let key = key_of(run, by);
        let point = point_of(run);
        match keyed.iter_mut().find(|(k, _)| *k == key) {
            Some((_, points)) => points.push(point),
            None => keyed.push((key, vec![point])),
        }
    }
    let series = keyed
        .into_iter()
        .map(|(key, mut points)| {
            // A stable sort: equal loads keep input order.
            points.sort_by(|a, b| load_order(a).partial_cmp(&load_order(b)).unwrap_or(std::cmp::Ordering::Equal));
            mark_pareto(&mut points);
            let mut warnings = Vec::new();
            for w in points.windows(2) {
                if load_order(&w[0]) == load_order(&w[1]) {
                    warnings.push(format!(
                        "two runs at {} ({} #{} and {} #{}): repeated runs, or two configurations the runs do not \
                         tell apart (--group-by input puts each file in a series of its own)",
                        w[1].load, w[0].input, w[0].block, w[1].input, w[1].block
                    ));
                }
            }
            Series {
                label: label_of(&key),
                tool: key.tool,
                variant: key.variant,
                model: key.model,
                input_len: key.input_len,
                output_len: key.output_len,
                input: key.input,
                points,
                warnings,
            }
        })
        .collect();
    Sweep {
        series,
        excluded,
        definitions: Definitions {
            per_user_decode_tok_per_s: PER_USER_DEFINITION,
            output_tok_per_s_per_concurrency: PER_CONCURRENCY_DEFINITION,
            pareto: PARETO_DEFINITION,
        },
    }
}

impl Sweep {
    /// Whether there is at least one point to show.
    pub fn has_points(&self) -> bool {
        self.series.iter().any(|s| !s.points.is_empty())
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

/// The columns of the table and Markdown forms.
const COLUMNS: [&str; 9] = [
    "load",
    "output tok/s",
    "per-user decode tok/s (1000/TPOT)",
    "TPOT ms (method)",
    "output tok/s / concurrency (peers' \"per user\")",
    "TTFT mean ms",
    "TTFT p99 ms",
    "Pareto",
    "marks",
];

fn cells(p: &Point) -> [String; 9] {
    [
        p.load.clone(),
        format!("{:.2}", p.output_tok_per_s),
        format!("{:.2}", p.per_user_decode_tok_per_s),
        format!("{:.3} ({})", p.tpot_ms, p.tpot_method.as_deref().unwrap_or("?")),
        opt(p.output_tok_per_s_per_concurrency, 2),
        opt(p.ttft_ms_mean, 2),
        opt(p.ttft_ms_p99, 2),
        if p.pareto { "yes".into() } else { "no".into() },
        p.marks.join("; "),
    ]
}

/// For people: one table per series, then what was left out. Text from the inputs is escaped.
pub fn to_table(sweep: &Sweep) -> String {
    use bench_normalize_core::error::printable;
    let mut out = String::new();
    for s in &sweep.series {
        out.push_str(&format!("Series: {}\n", printable(&s.label)));
        let mut t = comfy_table::Table::new();
        t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
        t.set_header(COLUMNS);
        for p in &s.points {
            t.add_row(cells(p).iter().map(|c| printable(c).into_owned()).collect::<Vec<_>>());
        }
        out.push_str(&format!("{t}\n"));
        for w in &s.warnings {
            out.push_str(&format!("warning: {}\n", printable(w)));
        }
        out.push('\n');
    }
    push_excluded(&mut out, sweep, |s| printable(s).into_owned());
    out.push_str(&format!(
        "per-user decode tok/s: {PER_USER_DEFINITION}.\noutput tok/s / concurrency: {PER_CONCURRENCY_DEFINITION}.\n"
    ));
    out
}

fn push_excluded(out: &mut String, sweep: &Sweep, esc: impl Fn(&str) -> String) {
    if sweep.excluded.is_empty() {
        return;
    }
    out.push_str("Not frontier points:\n");
    for e in &sweep.excluded {
        out.push_str(&format!("- {} #{} ({}): {}\n", esc(&e.input), e.block, e.verdict, esc(&e.reason)));
    }
    out.push('\n');
}

/// Markdown, for pasting into a PR: a table per series. Text from the inputs is escaped as in
/// every Markdown the tool writes (`compare`'s `markdown_text`): control characters written
/// as escapes, `|` and markup characters (`*`, `_`, `` ` ``, `[`, `]`, `<`, `>`, `\`) escaped.
pub fn to_markdown(sweep: &Sweep) -> String {
    let esc = crate::compare::markdown_text;
    let mut out = String::new();
    for s in &sweep.series {
        out.push_str(&format!("### {}\n\n", esc(&s.label)));
        out.push_str(&format!("| {} |\n", COLUMNS.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(COLUMNS.len())));
        for p in &s.points {
            let row: Vec<String> = cells(p)
                .iter()
                .enumerate()
                .map(|(i, c)| if i == 7 && p.pareto { "**yes**".to_string() } else { esc(c) })
                .collect();
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out.push('\n');
        for w in &s.warnings {
            out.push_str(&format!("> warning: {}\n\n", esc(w)));
        }
    }
    push_excluded(&mut out, sweep, esc);
    out.push_str(&format!(
        "*per-user decode tok/s*: {PER_USER_DEFINITION}. *output tok/s / concurrency*: {PER_CONCURRENCY_DEFINITION}.\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(out: f64, rate: f64, c: f64) -> Point {
        Point {
            input: "x".into(),
            block: 1,
            load: load_label(Some(c), None, None),
            max_concurrency: Some(c),
            request_rate: None,
            strategy: None,
            output_tok_per_s: out,
            per_user_decode_tok_per_s: rate,
            tpot_ms: 1000.0 / rate,
            tpot_method: None,
            output_tok_per_s_per_concurrency: Some(out / c),
            ttft_ms_mean: None,
            ttft_ms_p99: None,
            mean_in_flight: None,
            pareto: false,
            marks: vec![],
        }
    }

    #[test]
    fn pareto_marks_only_undominated_points() {
        // c1 fastest per user, c8 most throughput, c4 between, c16 worse than c8 on both.
        let mut p = vec![pt(100.0, 100.0, 1.0), pt(350.0, 90.0, 4.0), pt(500.0, 60.0, 8.0), pt(480.0, 30.0, 16.0)];
        mark_pareto(&mut p);
        assert_eq!(p.iter().map(|p| p.pareto).collect::<Vec<_>>(), [true, true, true, false]);
        // An exact tie dominates nothing.
        let mut p = vec![pt(100.0, 100.0, 1.0), pt(100.0, 100.0, 2.0)];
        mark_pareto(&mut p);
        assert!(p.iter().all(|p| p.pareto));
        // Equal throughput, higher rate: the other is dominated.
        let mut p = vec![pt(100.0, 100.0, 1.0), pt(100.0, 99.0, 2.0)];
        mark_pareto(&mut p);
        assert_eq!(p.iter().map(|p| p.pareto).collect::<Vec<_>>(), [true, false]);
    }

    #[test]
    fn numbers_are_written_short() {
        assert_eq!(fmt_num(4.0), "4");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(0.1234), "0.123");
    }

    #[test]
    fn loads_sort_unset_last() {
        let mut a = pt(1.0, 1.0, 4.0);
        a.request_rate = Some(2.0);
        let b = pt(1.0, 1.0, 4.0);
        assert!(load_order(&a) < load_order(&b));
        assert_eq!(load_label(None, None, Some("synchronous")), "synchronous");
    }
}
