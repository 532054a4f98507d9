//! The JSON Schema of what `-f dstack` and `-f dstack-e2e` write (`bench-normalize schema --format
//! dstack`): dstack's `PresetBenchmark` and its `metrics` object, dstack#4230's proposed `metrics`,
//! and the entries of the list written for several runs. `output_schema` serves it with every
//! other format's, and makes its strict variant.

use serde_json::{Value, json};

use crate::schema::{DRAFT, object};

/// dstack 0.22.5's preset model (`PresetBenchmark` and the objects in it, all `extra="forbid"`),
/// as `crates/core/src/dstack/model.rs` holds it; `e2e`: dstack#4230's `metrics` (`e2e_ms` added, `null` for
/// what a run does not give).
pub(crate) fn dstack(e2e: bool) -> Value {
    let int = |min: i64, doc: &str| json!({ "type": "integer", "minimum": min, "description": doc });
    let positive = |doc: &str| json!({ "type": "number", "exclusiveMinimum": 0, "description": doc });
    let latency = |doc: &str| {
        let number = if e2e { json!(["number", "null"]) } else { json!("number") };
        let stat = |s: &str| json!({ "type": number, "minimum": 0, "description": format!("{s} (ms)") });
        object(vec![("mean", stat("mean"), true), ("p50", stat("median"), true), ("p99", stat("p99"), true)], doc)
    };
    let mut metrics = vec![
        ("successful_requests", int(0, "requests that completed"), true),
        ("failed_requests", int(0, "requests that failed"), true),
        ("duration_seconds", positive("the benchmark's duration (s)"), true),
        ("total_input_tokens", int(0, "prompt tokens of the successful requests"), true),
        ("total_output_tokens", int(0, "output tokens of the successful requests"), true),
        ("output_tok_per_s", positive("output tokens / duration (tok/s)"), true),
        ("per_user_tok_per_s", positive("output tokens per second seen by one user (tok/s)"), true),
        ("ttft_ms", latency("time to first token (ms)"), true),
        ("tpot_ms", latency("time per output token, derived by bench-normalize from E2E, TTFT and tokens (ms)"), true),
    ];
    if e2e {
        metrics.push(("e2e_ms", latency("end-to-end request latency (ms)"), true));
        for m in metrics.iter_mut().filter(|m| !m.0.ends_with("_ms")) {
            m.1["type"] = json!([m.1["type"].clone(), "null"]);
        }
        let metrics = object(metrics, "dstack#4230's `metrics` object: null for what the run does not give");
        return json!({
            "$schema": DRAFT,
            "title": "bench-normalize -f dstack-e2e",
            "description": "dstack#4230's `metrics` object for one run; for several runs a list of entries, each \
                            saying which run its `metrics` object is",
            "anyOf": [ { "$ref": "#/$defs/metrics" }, { "type": "array", "items": { "$ref": "#/$defs/metrics_entry" } } ],
            "$defs": { "metrics": metrics, "metrics_entry": entry("metrics"), "load": load() },
        });
    }
    let metrics = object(metrics, "PresetBenchmarkMetrics");
    let text = |doc: &str| json!({ "type": "string", "minLength": 1, "description": doc });
    let workload = object(
        vec![
            ("api", json!({ "type": "string", "enum": ["chat_completions", "completions"] }), true),
            ("dataset", json!({ "type": ["string", "null"], "description": "the dataset, when not random" }), false),
            ("num_requests", int(1, "requests sent"), true),
            ("input_tokens", int(1, "prompt tokens per request"), true),
            ("output_tokens", int(2, "output tokens per request"), true),
            ("concurrency", int(1, "requests in flight at most"), true),
            ("shared_prefix_tokens", json!({ "type": ["integer", "null"], "minimum": 0 }), false),
        ],
        "PresetWorkload",
    );
    let benchmark = object(
        vec![
            ("tool", text("the benchmark client"), true),
            ("tool_version", text("the client's version"), true),
            ("command", text("the client's command line"), true),
            ("workload", json!({ "$ref": "#/$defs/workload" }), true),
            ("metrics", json!({ "$ref": "#/$defs/metrics" }), true),
        ],
        "PresetBenchmark: what dstack stores",
    );
    let one = json!({ "anyOf": [ { "$ref": "#/$defs/benchmark" }, { "$ref": "#/$defs/metrics" } ] });
    let entries = json!({ "anyOf": [ { "$ref": "#/$defs/benchmark_entry" }, { "$ref": "#/$defs/metrics_entry" } ] });
    json!({
        "$schema": DRAFT,
        "title": "bench-normalize -f dstack",
        "description": "dstack's `benchmark` object (PresetBenchmark) when the run states the client's version and \
                        command, else its `metrics` object; for several runs a list of entries, each saying which \
                        run its object is",
        "anyOf": [ one, { "type": "array", "items": entries } ],
        "$defs": {
            "benchmark": benchmark, "workload": workload, "metrics": metrics,
            "benchmark_entry": entry("benchmark"), "metrics_entry": entry("metrics"), "load": load(),
        },
    })
}

/// An entry of the list `-f dstack` / `-f dstack-e2e` print for several runs
/// ([`crate::emit::dstack_entry`]): which run its object, under `key`, is.
fn entry(key: &str) -> Value {
    object(
        vec![
            ("input", json!({ "type": "string", "description": "the input the run was read from" }), true),
            ("block", json!({ "type": "integer", "minimum": 1, "description": "the run's place in its input" }), true),
            (
                "first_line",
                json!({ "type": ["integer", "null"], "minimum": 1, "description": "the run's first line" }),
                true,
            ),
            ("load", json!({ "$ref": "#/$defs/load" }), true),
            (key, json!({ "$ref": format!("#/$defs/{key}") }), true),
        ],
        "one run's object, with which input, block, first line and load it is",
    )
}

fn load() -> Value {
    object(
        vec![
            (
                "max_concurrency",
                json!({ "type": ["integer", "null"], "minimum": 0, "description": "the client's concurrency cap" }),
                true,
            ),
            (
                "request_rate",
                json!({ "type": ["number", "null"], "minimum": 0, "description": "configured rate (req/s); null: unlimited or not set" }),
                true,
            ),
        ],
        "the load the run was measured at",
    )
}
