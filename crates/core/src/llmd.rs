//! `--format llmd-br`: a run as an llm-d Benchmark Report v0.2 (the `llmd-benchmark-report`
//! package's `BenchmarkReportV02`), one JSON document per run.
//!
//! The meanings are ours, not the peers' (docs/report.md, "llm-d Benchmark Report"):
//!
//! * `time_per_output_token` is the derived TPOT (`derived.tpot_ms`), never an ITL row; its
//!   percentiles come only from a source whose mean is that mean: the per-request arrays, or the
//!   tool's own per-token TPOT rows when their mean agrees with the derived one within
//!   [`TPOT_STATS_AGREEMENT`].
//! * `inter_token_latency` only when the tool times ITL per token (`source.semantics.itl ==
//!   token`). An ITL timed per streamed chunk is left out, and the report's
//!   `scenario.load.metadata.description` says so (the schema has no other free-text field
//!   beside a load; without a load, `run.description`).
//! * guidellm's and llmperf's TTFT-inclusive per-token figure (`reported.latency_per_output_token_ms`)
//!   goes to `normalized_time_per_output_token`.
//! * Rates are recomputed from the totals (`N_out / D`, `R / D`, `N_in / D`).
//! * `requests.failures` is the count of failed requests; `requests.total` the requests sent.
//!
//! Only what the run states is written: no stack (`scenario.stack`), no hardware, no time. The
//! schema requires little (`run.uid`, `results`; a `Statistics` needs `units` and `mean`; a load
//! needs its tool, version, token source and input length; `requests` needs `total`): a group
//! whose required figure the run does not give is left out, with a line in the description, so
//! every run can be written. `run.uid` is a hash of the run's canonical report (same run, same
//! uid), and `load.standardized.tool_version` is the empty string when the run does not state
//! the client's version (as llm-d's own converters write it).

use serde_json::{Map, Value, json};

use crate::number::{round, show};
use crate::report::{ItlPer, Run, Stat, StatKey, TpotMethod};
use crate::vocabulary::{Key, reported, totals, workload};

/// The schema version written: the 0.2 line (`load_benchmark_report` accepts `0.2` and `0.2.1`;
/// nothing of 0.2.1's additions is written).
pub const VERSION: &str = "0.2";

/// The tool's TPOT rows lend their percentiles to a derived TPOT only when their mean is within
/// this fraction of it (then both describe the same quantity).
pub const TPOT_STATS_AGREEMENT: f64 = 0.01;

/// The Benchmark Report of one run, and the lines its description holds (also returned, for
/// tests and diagnostics).
pub fn report(run: &Run) -> (Value, Vec<String>) {
    let mut notes: Vec<String> = vec![format!(
        "written by bench-normalize {} from {} (run {}, {}, parser {})",
        env!("CARGO_PKG_VERSION"),
        run.source.input,
        run.source.block,
        run.source.tool,
        run.source.parser
    )];
    let latency = latency(run, &mut notes);
    let throughput = throughput(run);
    let requests = requests(run, &mut notes);

    let mut aggregate = Map::new();
    if let Some(r) = requests {
        aggregate.insert("requests".into(), r);
    }
    if !latency.is_empty() {
        aggregate.insert("latency".into(), Value::Object(latency));
    }
    if !throughput.is_empty() {
        aggregate.insert("throughput".into(), Value::Object(throughput));
    }
    let mut results = Map::new();
    if !aggregate.is_empty() {
        results.insert("request_performance".into(), json!({ "aggregate": aggregate }));
    }

    let load = load(run, &mut notes);
    let description = notes.join("\n");
    let mut doc = Map::new();
    doc.insert("version".into(), VERSION.into());
    let mut run_obj = Map::new();
    run_obj.insert("uid".into(), uid(run).into());
    match load {
        Some(mut load) => {
            load["metadata"]["description"] = description.into();
            doc.insert("run".into(), Value::Object(run_obj));
            doc.insert("scenario".into(), json!({ "load": load }));
        }
        None => {
            run_obj.insert("description".into(), description.into());
            doc.insert("run".into(), Value::Object(run_obj));
        }
    }
    doc.insert("results".into(), Value::Object(results));
    (Value::Object(doc), notes)
}

/// Why a run cannot be written as a Benchmark Report: `None` when it can. A report whose `results`
/// would be empty (no TTFT or TPOT with a mean, no request counts, no rate from the totals) holds
/// no figure for llm-d to store, and `check` would find nothing usable in it: it is not written.
pub fn unwritable(run: &Run) -> Option<String> {
    let (doc, notes) = report(run);
    let empty = doc.get("results").and_then(Value::as_object).is_none_or(|r| r.is_empty());
    empty.then(|| {
        format!(
            "no figure a Benchmark Report holds: {}",
            notes.iter().skip(1).map(String::as_str).collect::<Vec<_>>().join("; ")
        )
    })
}

/// One line of JSON per run (newline included): a single run's output is one document that
/// `import_benchmark_report` reads as it is; several runs are JSON Lines.
pub fn write_line(out: &mut dyn std::io::Write, run: &Run) -> std::io::Result<()> {
    let (doc, _) = report(run);
    serde_json::to_writer(&mut *out, &doc)?;
    out.write_all(b"\n")
}

/// `bn-` and 16 hex digits: FNV-1a (64 bits) of the run's canonical JSON, which holds its input
/// name, block and every row.
fn uid(run: &Run) -> String {
    let bytes = serde_json::to_vec(run).unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("bn-{h:016x}")
}

/// The schema's name for a statistic (`p99.9` is `p99p9`); `None` for one it has no field for.
fn stat_name(k: StatKey) -> Option<&'static str> {
    Some(match k {
        StatKey::Mean => "mean",
        StatKey::Min => "min",
        StatKey::Max => "max",
        StatKey::Std => "stddev",
        StatKey::P(p) => match p {
            _ if p == 0.1 => "p0p1",
            _ if p == 1.0 => "p1",
            _ if p == 5.0 => "p5",
            _ if p == 10.0 => "p10",
            _ if p == 25.0 => "p25",
            _ if p == 50.0 => "p50",
            _ if p == 75.0 => "p75",
            _ if p == 90.0 => "p90",
            _ if p == 95.0 => "p95",
            _ if p == 99.0 => "p99",
            _ if p == 99.9 => "p99p9",
            _ => return None,
        },
    })
}

/// A `Statistics` object: `units`, then the statistics the schema has fields for. `None` when
/// there is no mean (the schema requires one).
fn statistics(units: &str, stats: impl IntoIterator<Item = (StatKey, f64)>) -> Option<Value> {
    let mut m = Map::new();
    m.insert("units".into(), units.into());
    for (k, v) in stats {
        if let Some(name) = stat_name(k) {
            if k == StatKey::Std && v < 0.0 {
                continue;
            }
            m.insert(name.into(), json!(v));
        }
    }
    m.contains_key("mean").then_some(Value::Object(m))
}

fn stat_of(units: &str, s: &Stat) -> Option<Value> {
    statistics(units, s.iter())
}

fn mean_only(units: &str, mean: f64) -> Value {
    json!({ "units": units, "mean": mean })
}

/// The derived TPOT as a `Statistics`, with percentiles only from a source whose mean is its mean.
fn tpot(run: &Run, notes: &mut Vec<String>) -> Option<Value> {
    let d = &run.derived.tpot_ms;
    let Some(mean) = d.mean else {
        notes.push(format!(
            "time_per_output_token left out: {}",
            d.reason.as_deref().unwrap_or("the run gives no TPOT and not what derives it")
        ));
        return None;
    };
    let method = d.method.map(TpotMethod::as_str).unwrap_or("unknown");
    let tool = run.stat(reported::TPOT_MS);
    let mut stats: Vec<(StatKey, f64)> = vec![(StatKey::Mean, mean)];
    let why = match d.method {
        // The tool's own rows are the TPOT (or the report's claim): every statistic of them.
        Some(TpotMethod::ToolTpot) | Some(TpotMethod::Claimed) if tool.and_then(Stat::mean) == Some(mean) => {
            stats.extend(tool.into_iter().flat_map(Stat::iter).filter(|(k, _)| *k != StatKey::Mean));
            format!("the tool's own TPOT rows (method {method})")
        }
        Some(TpotMethod::E2eTtftTokens) => match tool.and_then(|t| t.mean().map(|m| (t, m))) {
            Some((t, m)) if mean > 0.0 && ((m - mean) / mean).abs() <= TPOT_STATS_AGREEMENT => {
                stats.extend(t.iter().filter(|(k, _)| *k != StatKey::Mean));
                format!(
                    "derived by bench-normalize: {}; its other statistics are the run's own TPOT rows \
                     (reported.tpot_ms), whose mean {} agrees within {}%",
                    d.formula.as_deref().unwrap_or(method),
                    show(m),
                    TPOT_STATS_AGREEMENT * 100.0
                )
            }
            Some((_, m)) => format!(
                "derived by bench-normalize: {}; mean only (the run's own TPOT rows, mean {}, do not agree with it \
                 within {}%, so their percentiles are not this TPOT's)",
                d.formula.as_deref().unwrap_or(method),
                show(m),
                TPOT_STATS_AGREEMENT * 100.0
            ),
            None => format!(
                "derived by bench-normalize: {}; mean only (a TPOT derived from means has no percentiles)",
                d.formula.as_deref().unwrap_or(method)
            ),
        },
        _ => {
            for (k, v) in [(50.0, d.p50), (90.0, d.p90), (99.0, d.p99)] {
                if let Some(v) = v {
                    stats.push((StatKey::P(k), v));
                }
            }
            format!("derived by bench-normalize (method {method})")
        }
    };
    notes.push(format!("time_per_output_token: {why}"));
    statistics("ms/token", stats)
}

fn latency(run: &Run, notes: &mut Vec<String>) -> Map<String, Value> {
    let mut m = Map::new();
    let put = |m: &mut Map<String, Value>, notes: &mut Vec<String>, name: &str, v: Option<Value>, from: Key| match v {
        Some(v) => {
            m.insert(name.into(), v);
        }
        None if run.stat(from).is_some() => {
            notes.push(format!("{name} left out: {from} has no mean (the schema requires one)"));
        }
        None => {}
    };
    let ttft = run.stat(reported::TTFT_MS).and_then(|s| stat_of("ms", s));
    put(&mut m, notes, "time_to_first_token", ttft, reported::TTFT_MS);
    let ntpot = run.stat(reported::LATENCY_PER_OUTPUT_TOKEN_MS).and_then(|s| stat_of("ms/token", s));
    if ntpot.is_some() {
        notes.push(
            "normalized_time_per_output_token: the tool's request latency / output tokens (time to first token \
             included; not a TPOT)"
                .into(),
        );
    }
    put(&mut m, notes, "normalized_time_per_output_token", ntpot, reported::LATENCY_PER_OUTPUT_TOKEN_MS);
    if let Some(t) = tpot(run, notes) {
        m.insert("time_per_output_token".into(), t);
    }
    if let Some(itl) = run.stat(reported::ITL_MS) {
        let per = run.source.semantics.itl.or(match run.text(reported::ITL_PER) {
            Some("token") => Some(ItlPer::Token),
            Some("chunk") => Some(ItlPer::Chunk),
            _ => None,
        });
        match per {
            Some(ItlPer::Token) => {
                put(&mut m, notes, "inter_token_latency", stat_of("ms/token", itl), reported::ITL_MS)
            }
            Some(ItlPer::Chunk) => {
                let chunk = match (itl.mean(), run.derived.tokens_per_chunk) {
                    (Some(i), Some(k)) => format!(": its mean {} ms spans ~{} tokens per chunk", show(i), show(k)),
                    (Some(i), None) => format!(": its mean {} ms may span several tokens", show(i)),
                    _ => String::new(),
                };
                let why = run.source.semantics.itl_why.as_deref().map(|w| format!(" ({w})")).unwrap_or_default();
                notes.push(format!(
                    "inter_token_latency left out: {} times ITL per streamed chunk{why}, not per token{chunk}; \
                     time_per_output_token is the per-token figure",
                    run.source.tool
                ));
            }
            None => notes.push(format!(
                "inter_token_latency left out: it is not known whether {} times ITL per token or per streamed chunk",
                run.source.tool
            )),
        }
    }
    let e2e = match run.stat(reported::E2E_MS) {
        Some(s) => stat_of("ms", s),
        None => run.derived.per_request.as_ref().and_then(|p| p.e2e_mean_ms).map(|e| mean_only("ms", e)),
    };
    put(&mut m, notes, "request_latency", e2e, reported::E2E_MS);
    m
}

/// Rates recomputed from the totals, never the printed ones.
fn throughput(run: &Run) -> Map<String, Value> {
    let mut m = Map::new();
    let d = &run.derived;
    let dur = run.number(totals::DURATION_S).filter(|s| *s > 0.0);
    let n_in = run.number(totals::INPUT_TOKENS);
    let n_out = run.number(totals::OUTPUT_TOKENS);
    if let (Some(n), Some(s)) = (n_in, dur) {
        m.insert("input_token_rate".into(), mean_only("tokens/s", round(n / s)));
    }
    if let Some(v) = d.output_tok_per_s {
        m.insert("output_token_rate".into(), mean_only("tokens/s", v));
    }
    if let (Some(a), Some(b), Some(s)) = (n_in, n_out, dur) {
        m.insert("total_token_rate".into(), mean_only("tokens/s", round((a + b) / s)));
    }
    if let Some(v) = d.request_per_s {
        m.insert("request_rate".into(), mean_only("queries/s", v));
    }
    m
}

/// `requests`: `total` sent and `failures`, when the run states both or proves them; the mean
/// input and output lengths per successful request.
fn requests(run: &Run, notes: &mut Vec<String>) -> Option<Value> {
    let ok = run.number(totals::SUCCESSFUL_REQUESTS);
    let asked = run.number(workload::NUM_PROMPTS);
    // The count of failed requests: printed, counted in the per-request arrays, or proven 0 when
    // every one of the requests asked for succeeded.
    let failed = run
        .number(totals::FAILED_REQUESTS)
        .or_else(|| run.derived.per_request.as_ref().map(|p| p.failed as f64))
        .or(match (ok, asked) {
            (Some(r), Some(n)) if r == n => Some(0.0),
            _ => None,
        });
    let total = run.number(totals::SENT_REQUESTS).or(match (ok, failed) {
        (Some(r), Some(f)) => Some(r + f),
        _ => None,
    });
    let Some(total) = total else {
        notes.push(match ok {
            Some(r) => format!(
                "requests left out: the run gives {} successful requests but not how many failed, so not the \
                 total sent",
                show(r)
            ),
            None => "requests left out: the run gives no request counts".into(),
        });
        return None;
    };
    let mut m = Map::new();
    m.insert("total".into(), json!(total as u64));
    if let Some(f) = failed {
        m.insert("failures".into(), json!(f as u64));
    }
    if let Some(r) = ok.filter(|r| *r > 0.0) {
        if let Some(n) = run.number(totals::INPUT_TOKENS) {
            m.insert("input_length".into(), mean_only("count", round(n / r)));
        }
        match run.number(totals::OUTPUT_TOKENS) {
            Some(n) => {
                m.insert("output_length".into(), mean_only("count", round(n / r)));
            }
            None => {
                if let Some(n) = run.number(totals::OUTPUT_TOKENS_PER_REQUEST) {
                    m.insert("output_length".into(), mean_only("count", n));
                }
            }
        }
    }
    Some(Value::Object(m))
}

/// `scenario.load`, when the run gives what the schema requires of one (an input length);
/// `None` otherwise, with a line saying so.
fn load(run: &Run, notes: &mut Vec<String>) -> Option<Value> {
    let input_len = match (
        run.number(workload::INPUT_LEN),
        run.number(totals::INPUT_TOKENS),
        run.number(totals::SUCCESSFUL_REQUESTS),
    ) {
        (Some(n), _, _) => Some(n),
        (None, Some(n), Some(r)) if r > 0.0 => Some(round(n / r)),
        _ => None,
    };
    let Some(input_len) = input_len else {
        notes.push(
            "scenario.load left out: the run gives no input length (requested or measured), which a load requires"
                .into(),
        );
        return None;
    };
    let tool = run.text(workload::BENCHMARK_TOOL).unwrap_or(&run.source.tool);
    let version = run.text(workload::BENCHMARK_TOOL_VERSION).unwrap_or("");
    let source = match run.text(workload::DATASET).map(str::to_ascii_lowercase).as_deref() {
        Some("random") => "random",
        Some("sharegpt" | "sonnet" | "burstgpt" | "hf") => "sampled",
        _ => "unknown",
    };
    let mut std = Map::new();
    std.insert("tool".into(), tool.into());
    std.insert("tool_version".into(), version.into());
    std.insert("source".into(), source.into());
    // The shape of the length distribution is not stated by any run: `other`; except where the
    // run proves every request had the requested output length (each request's cap, and `N_out =
    // R x L` leaves no room for a shorter one): `fixed`, which a reader (`check`) takes back as
    // that proof, so the capacity rules hold the report's TPOT as they held the run's.
    std.insert("input_seq_len".into(), json!({ "distribution": "other", "value": input_len }));
    if let Some(l) = run.number(workload::OUTPUT_LEN) {
        let every = match (run.number(totals::OUTPUT_TOKENS), run.number(totals::SUCCESSFUL_REQUESTS)) {
            (Some(n), Some(r)) => r >= 1.0 && l >= 1.0 && l.fract() == 0.0 && (n - r * l).abs() < 0.5,
            _ => false,
        };
        let distribution = if every { "fixed" } else { "other" };
        let value = if every { json!(l as u64) } else { json!(l) };
        std.insert("output_seq_len".into(), json!({ "distribution": distribution, "value": value }));
    }
    if let Some(r) = run.number(workload::REQUEST_RATE).filter(|r| *r > 0.0 && r.is_finite()) {
        std.insert("rate_qps".into(), json!(r));
    }
    if let Some(c) = run.number(workload::MAX_CONCURRENCY).filter(|c| *c >= 1.0) {
        std.insert("concurrency".into(), json!(c as u64));
    }
    let mut native = Map::new();
    if let Some(cmd) = run.text(workload::COMMAND) {
        native.insert("config".into(), json!({ "command": cmd }));
    }
    Some(json!({ "metadata": {}, "standardized": std, "native": native }))
}

// ------------------------------------------------------------------------------------------------
// Reading a Benchmark Report (`check`)

/// A document that is an llm-d Benchmark Report of the 0.2 line: `version` `0.2` or `0.2.1`, with
/// `run` and `results` objects.
pub(crate) fn is_benchmark_report(doc: &Value) -> bool {
    matches!(doc.get("version").and_then(Value::as_str), Some("0.2" | "0.2.1"))
        && doc.get("run").is_some_and(Value::is_object)
        && doc.get("results").is_some_and(Value::is_object)
}

/// A Benchmark Report as a hand-written canonical run, each figure under our name for what the
/// report's field means by the schema: `time_per_output_token` is the report's claimed TPOT
/// (`reported.tpot_ms`), checked like any claim (a per-chunk ITL or a TTFT-inclusive figure put
/// there is caught by the same rules as in a dstack report); `normalized_time_per_output_token`
/// is `reported.latency_per_output_token_ms`; `inter_token_latency` states no timing (per token or
/// per chunk), so it is not read (a note says so). Times in `s` or `s/token` are converted to ms.
/// A field of the wrong type or unit is an error naming its path.
pub(crate) fn read(doc: &Value) -> Result<Run, (String, String)> {
    use crate::report::{Figure, Format, Source};
    let mut run = Run {
        source: Source {
            parser: "llmd-benchmark-report".into(),
            tool: "llm-d Benchmark Report".into(),
            format: Format::Report,
            ..Source::default()
        },
        workload: Default::default(),
        totals: Default::default(),
        reported: Default::default(),
        derived: Default::default(),
        checks: Vec::new(),
        verdict: crate::report::Verdict::Accepted,
        notes: Vec::new(),
        objectives: None,
        rows: Vec::new(),
        requests: None,
    };
    let at = |path: &[&str]| path.iter().try_fold(doc, |v, k| v.get(*k));
    let err = |path: &str, m: String| (path.to_string(), m);
    let number = |path: &str, v: &Value| v.as_f64().ok_or_else(|| err(path, format!("{v} is not a number")));
    let std_path = ["scenario", "load", "standardized"];
    if let Some(std) = at(&std_path) {
        let text = |k: &str| std.get(k).and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
        if let Some(t) = text("tool") {
            run.set(workload::BENCHMARK_TOOL, Figure::Text(t));
        }
        if let Some(t) = text("tool_version") {
            run.set(workload::BENCHMARK_TOOL_VERSION, Figure::Text(t));
        }
        if let Some(c) = std.get("concurrency").and_then(Value::as_u64) {
            run.set(workload::MAX_CONCURRENCY, Figure::Count(c));
        }
        if let Some(r) = std.get("rate_qps").and_then(Value::as_f64) {
            run.set(workload::REQUEST_RATE, Figure::Number(r));
        }
        // A `fixed` output length is every request's length as asked (its cap): with the totals it
        // can show that every request had that length, which the capacity rules need. Any other
        // distribution (ours write `other`: no run states the shape) says nothing of the spread.
        let seq = std.get("output_seq_len");
        if seq.and_then(|s| s.get("distribution")).and_then(Value::as_str) == Some("fixed") {
            let value = seq.and_then(|s| s.get("value")).and_then(Value::as_f64);
            if let Some(n) = value.filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n < 1e15) {
                run.set(workload::OUTPUT_LEN, Figure::Count(n as u64));
            }
        }
    }
    let agg = ["results", "request_performance", "aggregate"];
    let base = agg.join(".");
    if let Some(req) = at(&[agg[0], agg[1], agg[2], "requests"]) {
        let count = |k: &str| -> Result<Option<u64>, (String, String)> {
            match req.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| err(&format!("{base}.requests.{k}"), format!("{v} is not a count"))),
            }
        };
        let (total, failures) = (count("total")?, count("failures")?);
        if let Some(f) = failures {
            run.set(totals::FAILED_REQUESTS, Figure::Count(f));
        }
        if let (Some(t), Some(f)) = (total, failures) {
            if f > t {
                return Err(err(&format!("{base}.requests.failures"), format!("{f} failures of {t} requests sent")));
            }
            run.set(totals::SUCCESSFUL_REQUESTS, Figure::Count(t - f));
        }
        if let Some(n) = req.get("output_length").and_then(|s| s.get("mean")) {
            let n = number(&format!("{base}.requests.output_length.mean"), n)?;
            run.set(totals::OUTPUT_TOKENS_PER_REQUEST, Figure::Number(n));
            // The mean over the successful requests times their count is the total, to the
            // rounding of the written mean: the rules that weigh decode work need it.
            if let Some(r) = run.number(totals::SUCCESSFUL_REQUESTS).filter(|r| *r >= 1.0) {
                let total = (n * r).round();
                if total >= 0.0 && total.is_finite() {
                    run.set(totals::OUTPUT_TOKENS, Figure::Count(total as u64));
                }
            }
        }
    }
    // (report field, canonical figure, per token)
    const LATENCY: [(&str, Key, bool); 4] = [
        ("time_to_first_token", reported::TTFT_MS, false),
        ("time_per_output_token", reported::TPOT_MS, true),
        ("request_latency", reported::E2E_MS, false),
        ("normalized_time_per_output_token", reported::LATENCY_PER_OUTPUT_TOKEN_MS, true),
    ];
    if let Some(lat) = at(&[agg[0], agg[1], agg[2], "latency"]) {
        for (field, name, per_token) in LATENCY {
            let Some(st) = lat.get(field).filter(|v| !v.is_null()) else { continue };
            let path = format!("{base}.latency.{field}");
            let units = st.get("units").and_then(Value::as_str).unwrap_or("");
            let scale = match (units, per_token) {
                ("ms", false) | ("ms/token", true) => 1.0,
                ("s", false) | ("s/token", true) => 1000.0,
                _ => return Err(err(&format!("{path}.units"), format!("'{units}' is not a unit this field can have"))),
            };
            let Some(obj) = st.as_object() else { return Err(err(&path, "is not an object".into())) };
            let mut stat = Stat::default();
            for (k, v) in obj {
                let key = match k.as_str() {
                    "units" | "mode" => continue,
                    "stddev" => StatKey::Std,
                    "p0p1" => StatKey::P(0.1),
                    "p99p9" => StatKey::P(99.9),
                    other => match StatKey::parse(other) {
                        Some(k) => k,
                        None => continue,
                    },
                };
                if v.is_null() {
                    continue;
                }
                stat.set(key, number(&format!("{path}.{k}"), v)? * scale);
            }
            run.set(name, Figure::Stat(stat));
        }
    }
    if at(&[agg[0], agg[1], agg[2], "latency", "inter_token_latency"]).is_some_and(|v| !v.is_null()) {
        run.notes.push(crate::report::Note {
            code: "parser-note".into(),
            message: "latency.inter_token_latency not read: a Benchmark Report does not say whether it was timed per \
                      token or per streamed chunk"
                .into(),
            line: None,
        });
    }
    if let Some(thr) = at(&[agg[0], agg[1], agg[2], "throughput"]) {
        for (field, name) in
            [("output_token_rate", reported::OUTPUT_TOK_PER_S), ("request_rate", reported::REQUEST_PER_S)]
        {
            if let Some(m) = thr.get(field).and_then(|s| s.get("mean")) {
                let m = number(&format!("{base}.throughput.{field}.mean"), m)?;
                run.set(name, Figure::Number(m));
            }
        }
    }
    implicit_duration(&mut run);
    Ok(run)
}

/// A Benchmark Report states no duration, but its rates are totals over it (`request_rate` is the
/// successful requests over the duration, as vLLM, SGLang and this tool's writer compute it;
/// `output_token_rate` the output tokens over it): the duration is `R / request_rate`, or, when
/// some requests failed (a converter may count them in the rate or not), `N_out /
/// output_token_rate`. With it the capacity rules apply to the report as to a log. Each rate is
/// then held to the other by `throughput-totals`.
fn implicit_duration(run: &mut Run) {
    use crate::report::{Figure, Note};
    let positive = |k: Key| run.number(k).filter(|x| x.is_finite() && *x > 0.0);
    let from_requests = match (run.number(totals::FAILED_REQUESTS), positive(totals::SUCCESSFUL_REQUESTS)) {
        (Some(0.0), Some(r)) => {
            positive(reported::REQUEST_PER_S).map(|q| (r / q, "requests.total / throughput.request_rate"))
        }
        _ => None,
    };
    let from_tokens = match (positive(totals::OUTPUT_TOKENS), positive(reported::OUTPUT_TOK_PER_S)) {
        (Some(n), Some(rate)) => {
            Some((n / rate, "output_length.mean x successful requests / throughput.output_token_rate"))
        }
        _ => None,
    };
    let Some((d, how)) = from_requests.or(from_tokens) else { return };
    if !d.is_finite() || d <= 0.0 {
        return;
    }
    run.set(totals::DURATION_S, Figure::Number(round(d)));
    run.notes.push(Note {
        code: "implicit-duration".into(),
        message: format!(
            "the duration {} s is read as {how}: a Benchmark Report states its rates, not its duration",
            show(round(d))
        ),
        line: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every statistic lands under the schema's own name (`p99.9` is `p99p9`, `std` is
    /// `stddev`); one the schema has no field for is dropped (extra keys are forbidden).
    #[test]
    fn statistics_use_the_schema_names() {
        let mut s = Stat::default();
        for (k, v) in [("mean", 4.0), ("p99.9", 6.0), ("p80", 5.0), ("std", 0.5), ("min", 1.0), ("p0.1", 1.1)] {
            s.set(StatKey::parse(k).unwrap(), v);
        }
        let v = stat_of("ms", &s).unwrap();
        assert_eq!(v, json!({"units": "ms", "mean": 4.0, "min": 1.0, "p0p1": 1.1, "p99p9": 6.0, "stddev": 0.5}));
    }

    /// More failures than requests sent is no report to check: an error naming the field.
    #[test]
    fn more_failures_than_requests_is_an_error() {
        let doc = json!({"version": "0.2", "run": {"uid": "x"},
            "results": {"request_performance": {"aggregate": {"requests": {"total": 3, "failures": 5}}}}});
        assert!(is_benchmark_report(&doc));
        let (path, _) = read(&doc).unwrap_err();
        assert_eq!(path, "results.request_performance.aggregate.requests.failures");
        let ok = json!({"version": "0.2", "run": {"uid": "x"},
            "results": {"request_performance": {"aggregate": {"requests": {"total": 5, "failures": 1}}}}});
        let run = read(&ok).unwrap();
        assert_eq!(run.number(totals::SUCCESSFUL_REQUESTS), Some(4.0));
        assert!(!is_benchmark_report(&json!({"version": "0.1", "run": {}, "results": {}})));
    }

    /// `Statistics.mean` is required: a block without one is not written (never made up).
    #[test]
    fn a_block_without_a_mean_is_left_out() {
        let mut s = Stat::default();
        s.set(StatKey::P(50.0), 3.0);
        assert_eq!(stat_of("ms", &s), None);
    }
}
