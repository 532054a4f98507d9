//! Property tests of noise robustness: every captured stdout log in `samples/captured/`,
//! `samples/versions/` and `samples/peers/`, buried in what real merged stdout/stderr looks like, normalizes to the same
//! runs as the clean sample.
//!
//! The transformations, each tested alone and then all together:
//!
//! * noise lines (server log lines, tqdm `\r` bars, Python warnings, `Namespace(...)` dumps, blank
//!   lines) inserted at random places outside the result blocks and between them;
//! * complete log lines of *other* processes (vLLM / SGLang server logs, torch warnings)
//!   interleaved inside a block, at most two in a row (a longer run of non-rows legitimately
//!   ends a block as cut off), and never a line with the shape of a `label: value` row;
//! * every line ending converted to CRLF;
//! * random lines (block lines included) wrapped in ANSI colour codes.
//!
//! Compared per run: parser, variant, whether the block was cut off, `workload`, `totals`,
//! `reported`, `derived`, each check's id, severity and status, the verdict, and the rows without
//! their `line` (line numbers legitimately shift; so do check messages that quote them, and notes:
//! a log line inside a block is noted as `not-a-row`).

use crate::common;

use std::collections::HashMap;
use std::sync::OnceLock;

use bench_normalize::Run;
use common::run_all;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

// ------------------------------------------------------------------------------------------------
// Noise

/// Lines printed around a benchmark in merged stdout/stderr, for anywhere outside a block.
const OUTSIDE_NOISE: &[&str] = &[
    "INFO 08-28 22:41:28 [metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 312.4 tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.2%, CPU KV cache usage: 0.0%.",
    "(APIServer pid=2957) INFO:     127.0.0.1:40312 - \"POST /v1/completions HTTP/1.1\" 200 OK",
    "INFO:     127.0.0.1:40312 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "\r  0%|          | 0/16 [00:00<?, ?it/s]\r 50%|█████     | 8/16 [00:05<00:05,  1.50it/s]\r100%|██████████| 16/16 [00:10<00:00,  1.54it/s]",
    " 42%|████▏     | 420/1000 [01:02<01:26,  6.70it/s]",
    "/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:61: FutureWarning: The pynvml package is deprecated. Please install nvidia-ml-py instead.",
    "  warnings.warn(",
    "Namespace(backend='vllm', base_url=None, host='127.0.0.1', port=8000, endpoint='/v1/completions', dataset_name='random', max_concurrency=4, request_rate=inf, percentile_metrics='ttft,tpot,itl', metric_percentiles='99')",
    "benchmark_args=Namespace(backend='sglang-oai', base_url=None, host='127.0.0.1', port=30000, dataset_name='random', random_input_len=1024, random_output_len=512, max_concurrency=4, extra_request_body='{\"temperature\": 0}')",
    "",
    "   ",
    "[2025-08-28 22:41:28] Decode batch. #running-req: 4, #token: 1234, token usage: 0.01, gen throughput (token/s): 300.00, #queue-req: 0",
    "W1129 18:50:53.011000 2957 torch/_opaque_base.py:6] torch._opaque_base is deprecated, use torch._custom_class_base instead",
    "(EngineCore_DP0 pid=3001) INFO 08-28 22:41:29 [loggers.py:123] Engine 000: Avg prompt throughput: 409.6 tokens/s, Avg generation throughput: 204.8 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.9%, Prefix cache hit rate: 0.0%",
    "WARNING 08-28 22:41:30 [scheduler.py:1560] Sequence group 7 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.",
    "tip: install termplotlib and gnuplot to plot the metrics",
    "Starting main benchmark run...",
];

/// Complete log lines another process may print while the block is being written. None has the
/// shape of a row (`split_row` rejects each: see `crates/core/src/lex.rs`).
const INSIDE_NOISE: &[&str] = &[
    "INFO 08-28 22:41:28 [metrics.py:351] Avg prompt throughput: 0.0 tokens/s",
    "INFO 08-28 22:41:38 [metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 312.4 tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.2%, CPU KV cache usage: 0.0%.",
    "(EngineCore_DP0 pid=3001) INFO 08-28 22:41:29 [loggers.py:123] Engine 000: Avg prompt throughput: 409.6 tokens/s, Avg generation throughput: 204.8 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.9%, Prefix cache hit rate: 0.0%",
    "[2025-08-28 22:41:28] Decode batch. #running-req: 4, #token: 1234, token usage: 0.01, gen throughput (token/s): 300.00, #queue-req: 0",
    "[2025-08-28 22:41:29 TP0] Prefill batch. #new-seq: 1, #new-token: 1024, #cached-token: 0, token usage: 0.02, #running-req: 3, #queue-req: 0",
    "WARNING 08-28 22:41:30 [scheduler.py:1560] Sequence group 7 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.",
    "W1129 18:50:53.011000 2957 torch/_opaque_base.py:6] torch._opaque_base is deprecated, use torch._custom_class_base instead",
    "/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:61: FutureWarning: The pynvml package is deprecated. Please install nvidia-ml-py instead.",
];

/// JSON log records (structured logging of the harness or the server), for before the log (a text
/// log whose first line is one was read as JSON Lines and its blocks missed: issue 16) and between
/// its lines. One is cut short; the last has escaped line breaks, one of whose lines has the shape
/// of a row (`ValueError: bad`): it is not put inside a block (see [`INSIDE_NOISE`]).
const JSON_NOISE: &[&str] = &[
    r#"{"level":"info","msg":"starting"}"#,
    r#"{"ts": "2026-11-29T19:00:00Z", "level": "info", "logger": "harness", "msg": "benchmark starting", "pid": 2957}"#,
    r#"{"level":"warning","msg":"retrying request 7","attempt":2,"latency_ms":140.74,"ok":false,"tags":["a","b"]}"#,
    r#"{"event": "metrics", "values": {"running": 4, "waiting": 0, "kv_cache_usage": 0.012}}"#,
    r#"[{"step": 1}, {"step": 2}]"#,
    r#"{"level":"info","msg":"cut short"#,
    r#"{}"#,
    r#"{"level":"error","msg":"Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad"}"#,
];

/// Colours to wrap a line in (each closed by `ESC[0m`).
const COLOURS: &[&str] = &["\x1b[32m", "\x1b[1;31m", "\x1b[0;36m", "\x1b[38;5;208m", "\x1b[1m\x1b[33m"];

/// At most this many lines are inserted at one place inside a block.
const MAX_INSIDE_RUN: usize = 2;

// ------------------------------------------------------------------------------------------------
// Samples and their clean runs

struct Sample {
    name: String,
    /// Physical lines (split on `\n`, a trailing `\r` removed), as the line numbers count them.
    lines: Vec<String>,
    /// (first_line, last_line) of each run: the banner and the closing line (of its trailer,
    /// when the run has one).
    blocks: Vec<(usize, usize)>,
    /// Whether each run's block was cut off (no closing line): what follows it up to the next
    /// banner may still be read as part of it, so no line is inserted there or inside it.
    cut_off: Vec<bool>,
    /// (closing line, trailer banner) of each run whose block is followed by a trailer (vllm-rs
    /// `Steady-State Metrics`): the lines between them belong to the run too.
    trailers: Vec<(usize, usize)>,
    expected: Vec<Value>,
}

impl Sample {
    /// Places (0 = before line 1, k = after line k) where a line is outside every block.
    fn outside_gaps(&self) -> Vec<usize> {
        let reach: Vec<(usize, usize)> = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, &(f, l))| {
                if self.cut_off[i] { (f, self.blocks.get(i + 1).map_or(self.lines.len() + 1, |b| b.0)) } else { (f, l) }
            })
            .collect();
        (0..=self.lines.len()).filter(|&k| !reach.iter().any(|&(f, l)| f <= k && k < l)).collect()
    }

    /// Places strictly inside a block: after the banner and before the closing line (or inside
    /// its trailer), not between a block and its trailer.
    fn inside_gaps(&self) -> Vec<usize> {
        let closed = self.blocks.iter().zip(&self.cut_off).filter(|(_, c)| !**c).map(|(b, _)| *b);
        let closed: Vec<(usize, usize)> = closed.collect();
        (0..=self.lines.len())
            .filter(|&k| closed.iter().any(|&(f, l)| f <= k && k < l) && !self.in_trailer_gap(k))
            .collect()
    }

    /// Places between a block's closing line and its trailer's banner.
    fn trailer_gaps(&self) -> Vec<usize> {
        (0..=self.lines.len()).filter(|&k| self.in_trailer_gap(k)).collect()
    }

    /// Places inside a closed printed block (`Serving Benchmark Result`, not a table) where a row
    /// may go, with the column where the block's values start (the most common one among its rows).
    fn unknown_row_gaps(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, &(f, l)) in self.blocks.iter().enumerate() {
            if self.cut_off[i] || !self.lines[f - 1].contains("Serving Benchmark Result") {
                continue;
            }
            let mut columns: HashMap<usize, usize> = HashMap::new();
            for line in &self.lines[f..l - 1] {
                if let Some(colon) = line.find(": ") {
                    let value = colon + 1 + line[colon + 1..].len() - line[colon + 1..].trim_start().len();
                    if value < line.len() {
                        *columns.entry(value).or_default() += 1;
                    }
                }
            }
            let Some((&column, _)) = columns.iter().max_by_key(|(c, n)| (**n, **c)) else { continue };
            out.extend((f..l - 1).filter(|&k| !self.in_trailer_gap(k)).map(|k| (k, column)));
        }
        out
    }

    fn in_trailer_gap(&self, k: usize) -> bool {
        self.trailers.iter().any(|&(c, t)| c <= k && k < t)
    }
}

/// What must not change: see the module documentation.
fn project(run: &Run) -> Value {
    let v = serde_json::to_value(run).expect("a run serializes");
    let rows: Vec<Value> = v["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let mut r = r.clone();
            if let Some(o) = r.as_object_mut() {
                o.remove("line");
            }
            r
        })
        .collect();
    let mut p = common::figures_of(run);
    p["rows"] = Value::Array(rows);
    p
}

fn samples() -> &'static [Sample] {
    static SAMPLES: OnceLock<Vec<Sample>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut paths = common::sample_files("captured", ".stdout.txt");
        paths.extend(common::sample_files("versions", ".stdout.txt"));
        // The peers' console logs: their results are tables (AIPerf, genai-perf, guidellm).
        paths.extend(common::sample_files("peers", ".stdout.txt"));
        assert!(!paths.is_empty(), "no stdout samples");
        paths
            .iter()
            .map(|p| {
                let name = common::sample_name(p);
                let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{name}: {e}"));
                let runs = run_all(&bytes, &name)
                    .unwrap_or_else(|e| panic!("{name}: the clean sample does not normalize: {e}"));
                // Where every block is, a summary's rows too (folded into the runs they repeat).
                let spans = common::run_all_unfolded(&bytes, &name).unwrap();
                let blocks: Vec<(usize, usize)> = spans
                    .iter()
                    .map(|r| {
                        (
                            r.source.first_line.expect("a text run has a first line"),
                            r.source.last_line.expect("a text run has a last line"),
                        )
                    })
                    .collect();
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let body = text.strip_suffix('\n').unwrap_or(&text);
                let lines: Vec<String> =
                    body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect();
                let trailers = blocks.iter().filter_map(|&(f, l)| trailer_of(&lines, f, l)).collect();
                let cut_off = spans.iter().map(|r| r.source.truncated.is_some()).collect();
                Sample { name, lines, blocks, cut_off, trailers, expected: runs.iter().map(project).collect() }
            })
            .collect()
    })
}

/// A sample line as the reader sees it: terminal escape sequences (CSI `ESC [ ... final`, OSC
/// `ESC ] ... BEL`) and control characters other than tab dropped.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\u{1b}', Some('[')) => {
                chars.next();
                // parameters and intermediates, then one final byte in @..~
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            ('\u{1b}', Some(']')) => {
                chars.next();
                for d in chars.by_ref() {
                    if d == '\u{7}' {
                        break;
                    }
                }
            }
            (c, _) if c.is_control() && c != '\t' => {}
            (c, _) => out.push(c),
        }
    }
    out
}

/// A run spanning `first..=last` whose block closes (a line of `=` only) before `last` and is
/// followed by a second banner (`==== Name ====`): (closing line, trailer banner line).
fn trailer_of(lines: &[String], first: usize, last: usize) -> Option<(usize, usize)> {
    let text = |n: usize| lines.get(n - 1).map(|l| plain(l)).unwrap_or_default();
    let rule = |t: &str| t.len() >= 20 && t.chars().all(|c| c == '=');
    let closing = (first + 1..last).find(|&n| rule(text(n).trim()))?;
    let banner = (closing + 1..last).find(|&n| {
        let t = text(n);
        let t = t.trim();
        t.starts_with("===") && t.ends_with("===") && t.chars().any(|c| c.is_alphabetic())
    })?;
    Some((closing, banner))
}

// ------------------------------------------------------------------------------------------------
// Transformations

#[derive(Debug, Clone, Default)]
struct Noise {
    /// (place, line): inserted after that many original lines, in order.
    inserts: Vec<(usize, String)>,
    /// Lines of the result (after insertion) wrapped in a colour, with the colour.
    colour: HashMap<usize, &'static str>,
    crlf: bool,
}

fn render(sample: &Sample, noise: &Noise) -> Vec<u8> {
    let mut at: HashMap<usize, Vec<&str>> = HashMap::new();
    for (k, line) in &noise.inserts {
        at.entry(*k).or_default().push(line);
    }
    let mut out_lines: Vec<&str> = Vec::new();
    for k in 0..=sample.lines.len() {
        if let Some(v) = at.get(&k) {
            out_lines.extend(v.iter().copied());
        }
        if k < sample.lines.len() {
            out_lines.push(&sample.lines[k]);
        }
    }
    let eol = if noise.crlf { "\r\n" } else { "\n" };
    let mut out = String::new();
    for (i, line) in out_lines.iter().enumerate() {
        match noise.colour.get(&i) {
            Some(c) => {
                out.push_str(c);
                out.push_str(line);
                out.push_str("\x1b[0m");
            }
            None => out.push_str(line),
        }
        out.push_str(eol);
    }
    out.into_bytes()
}

/// Inserted lines, each at a place chosen among `gaps`; at most `max_per_place` at one place.
fn choose_inserts(
    gaps: &[usize],
    picks: &[(Index, usize)],
    lines: &[&str],
    max_per_place: usize,
) -> Vec<(usize, String)> {
    let mut count: HashMap<usize, usize> = HashMap::new();
    let mut out = Vec::new();
    if gaps.is_empty() {
        return out;
    }
    for (ix, which) in picks {
        let k = gaps[ix.index(gaps.len())];
        let n = count.entry(k).or_insert(0);
        if *n >= max_per_place {
            continue;
        }
        *n += 1;
        out.push((k, lines[which % lines.len()].to_string()));
    }
    out
}

fn choose_colours(total_lines: usize, picks: &[(Index, usize)]) -> HashMap<usize, &'static str> {
    picks.iter().map(|(ix, c)| (ix.index(total_lines.max(1)), COLOURS[c % COLOURS.len()])).collect()
}

/// The first place where two values differ, as `path: left != right`.
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (l, r) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                if let Some(d) = first_difference(&format!("{path}.{k}"), l, r) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) => {
            let n = x.len().max(y.len());
            (0..n).find_map(|i| {
                first_difference(
                    &format!("{path}[{i}]"),
                    x.get(i).unwrap_or(&Value::Null),
                    y.get(i).unwrap_or(&Value::Null),
                )
            })
        }
        (Value::Object(_), Value::Null) => first_difference(path, a, &Value::Object(Default::default())),
        (Value::Null, Value::Object(_)) => first_difference(path, &Value::Object(Default::default()), b),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

/// The noisy input normalizes to the clean sample's runs; otherwise a message with the input.
fn same_runs(sample: &Sample, noise: &Noise) -> Result<(), String> {
    let bytes = render(sample, noise);
    let shown = || {
        format!("sample {}, noise {:?}\ninput:\n{}", sample.name, noise, String::from_utf8_lossy(&bytes).escape_debug())
    };
    let runs = run_all(&bytes, &sample.name).map_err(|e| format!("error {e}\n{}", shown()))?;
    let got: Vec<Value> = runs.iter().map(project).collect();
    if got.len() != sample.expected.len() {
        return Err(format!("{} runs, expected {}\n{}", got.len(), sample.expected.len(), shown()));
    }
    for (i, (g, e)) in got.iter().zip(&sample.expected).enumerate() {
        if let Some(d) = first_difference(&format!("runs[{i}]"), e, g) {
            return Err(format!("expected != got at {d}\n{}", shown()));
        }
    }
    Ok(())
}

fn sample_of(ix: &Index) -> &'static Sample {
    let all = samples();
    &all[ix.index(all.len())]
}

fn total_lines(sample: &Sample, inserts: &[(usize, String)]) -> usize {
    sample.lines.len() + inserts.len()
}

fn picks(max: usize) -> impl Strategy<Value = Vec<(Index, usize)>> {
    prop::collection::vec((any::<Index>(), any::<usize>()), 1..max)
}

// ------------------------------------------------------------------------------------------------
// Properties

/// The clean samples themselves: every stdout sample has a result block, and most have a closed
/// one to interleave lines into.
#[test]
fn every_sample_has_a_block() {
    for s in samples() {
        assert!(!s.blocks.is_empty(), "{}", s.name);
    }
    assert!(samples().iter().filter(|s| !s.inside_gaps().is_empty()).count() * 2 > samples().len());
}

/// (b) CRLF line endings: every sample, no randomness needed.
#[test]
fn crlf_line_endings_change_nothing() {
    for s in samples() {
        same_runs(s, &Noise { crlf: true, ..Noise::default() }).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// (c) colour codes around every line at once.
#[test]
fn every_line_coloured_changes_nothing() {
    for s in samples() {
        let colour = (0..s.lines.len()).map(|i| (i, COLOURS[i % COLOURS.len()])).collect();
        same_runs(s, &Noise { colour, ..Noise::default() }).unwrap_or_else(|e| panic!("{e}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// (a) noise lines at random places outside the blocks and between them.
    #[test]
    fn noise_outside_blocks_changes_nothing(s in any::<Index>(), p in picks(24)) {
        let sample = sample_of(&s);
        let inserts = choose_inserts(&sample.outside_gaps(), &p, OUTSIDE_NOISE, usize::MAX);
        let r = same_runs(sample, &Noise { inserts, ..Noise::default() });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    /// (a) complete log lines of other processes interleaved inside a block.
    #[test]
    fn log_lines_inside_a_block_change_nothing(s in any::<Index>(), p in picks(12)) {
        let sample = sample_of(&s);
        let inserts = choose_inserts(&sample.inside_gaps(), &p, INSIDE_NOISE, MAX_INSIDE_RUN);
        let r = same_runs(sample, &Noise { inserts, ..Noise::default() });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    /// (a) log lines between a block's closing line and its trailer (vllm-rs prints a warning
    /// line there, then `Steady-State Metrics`). Only samples with a trailer are tried.
    #[test]
    fn log_lines_between_a_block_and_its_trailer_change_nothing(s in any::<Index>(), p in picks(6)) {
        let with_trailer: Vec<&Sample> = samples().iter().filter(|s| !s.trailers.is_empty()).collect();
        if with_trailer.is_empty() {
            return Ok(());
        }
        let sample = with_trailer[s.index(with_trailer.len())];
        let inserts = choose_inserts(&sample.trailer_gaps(), &p, INSIDE_NOISE, MAX_INSIDE_RUN);
        let r = same_runs(sample, &Noise { inserts, ..Noise::default() });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    /// (c) random lines wrapped in colour codes.
    #[test]
    fn colour_codes_change_nothing(s in any::<Index>(), c in picks(32)) {
        let sample = sample_of(&s);
        let colour = choose_colours(sample.lines.len(), &c);
        let r = same_runs(sample, &Noise { colour, ..Noise::default() });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    /// JSON log records before the log and between its lines (outside the blocks, and at most two
    /// in a row inside them): the same runs as the clean log.
    #[test]
    fn json_log_records_before_and_in_the_log_change_nothing(
        s in any::<Index>(),
        first in prop::collection::vec(any::<usize>(), 1..6),
        out in picks(16),
        inside in picks(6),
    ) {
        let sample = sample_of(&s);
        let mut inserts: Vec<(usize, String)> =
            first.iter().map(|w| (0, JSON_NOISE[w % JSON_NOISE.len()].to_string())).collect();
        inserts.extend(choose_inserts(&sample.outside_gaps(), &out, JSON_NOISE, usize::MAX));
        let inside_noise = &JSON_NOISE[..JSON_NOISE.len() - 1];
        inserts.extend(choose_inserts(&sample.inside_gaps(), &inside, inside_noise, MAX_INSIDE_RUN));
        let r = same_runs(sample, &Noise { inserts, ..Noise::default() });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    /// Rows the definitions do not know, in the block's format (`Label:` padded to where the
    /// block's values start), inserted inside a closed block: the same figures, a complete block,
    /// and each inserted row kept as a row that feeds nothing (issue 16: 8 or more of them cut the
    /// block off).
    #[test]
    fn unknown_rows_inside_a_block_change_no_figure(s in any::<Index>(), p in prop::collection::vec((any::<Index>(), 0u32..100_000), 0..50)) {
        let printed: Vec<&Sample> = samples().iter().filter(|s| !s.unknown_row_gaps().is_empty()).collect();
        let sample = printed[s.index(printed.len())];
        let gaps = sample.unknown_row_gaps();
        let inserts: Vec<(usize, String)> = p
            .iter()
            .enumerate()
            .map(|(i, (ix, v))| {
                let (k, column) = gaps[ix.index(gaps.len())];
                let label = format!("Frobnicated widgets {i} (zq):");
                (k, format!("{label:<column$}{}.{:02}", v / 100, v % 100))
            })
            .collect();
        let bytes = render(sample, &Noise { inserts: inserts.clone(), ..Noise::default() });
        let runs = run_all(&bytes, &sample.name).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(runs.len(), sample.expected.len());
        let mut kept = 0;
        for (i, (run, expected)) in runs.iter().zip(&sample.expected).enumerate() {
            let mut got = project(run);
            kept += got["rows"].as_array().unwrap().iter().filter(|r| {
                r["label"].as_str().is_some_and(|l| l.starts_with("Frobnicated widgets")) && r["field"].is_null()
            }).count();
            got["rows"] = expected["rows"].clone();
            if let Some(d) = first_difference(&format!("runs[{i}]"), expected, &got) {
                let input = String::from_utf8_lossy(&bytes).into_owned();
                return Err(TestCaseError::fail(format!("{}: {d}\ninput:\n{input}", sample.name)));
            }
        }
        prop_assert_eq!(kept, inserts.len());
    }

    /// (a) + (b) + (c) together.
    #[test]
    fn all_noise_together_changes_nothing(s in any::<Index>(), out in picks(24), inside in picks(12), c in picks(32), crlf in any::<bool>()) {
        let sample = sample_of(&s);
        let mut inserts = choose_inserts(&sample.outside_gaps(), &out, OUTSIDE_NOISE, usize::MAX);
        inserts.extend(choose_inserts(&sample.inside_gaps(), &inside, INSIDE_NOISE, MAX_INSIDE_RUN));
        let colour = choose_colours(total_lines(sample, &inserts), &c);
        let r = same_runs(sample, &Noise { inserts, colour, crlf });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}
