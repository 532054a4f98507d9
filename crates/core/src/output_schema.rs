//! A JSON Schema for each output format with a JSON shape (`bench-normalize schema --format F`),
//! and its strict variant (`--strict`): the subset that OpenAI's strict structured outputs and
//! Claude's `--json-schema` accept ([`strict`], rules in docs/agents.md).
//!
//! The canonical report's schema is derived from its types ([`crate::report::schema`]); dstack's
//! from the fields of its preset model, with the rest of dstack (`dstack/schema.rs`); the SGLang
//! auto-benchmark row's from the skill's `references/result-schema.md` (docs/agents.md). Each is
//! tested by validating every sample's output in its format against it (`tests/it/agent.rs`).

use serde_json::{Value, json};

use crate::dstack::schema::dstack;
use crate::emit::{OutputFormat, SGLANG_SKILL_STATUSES};
use crate::schema::{DRAFT, object};

pub mod strict;

pub use strict::{STAT_KEYS, strict_violations, strictify};

/// The schema of `format`'s documents (one line's, for the formats written a line a run), strict
/// or not; `Err` says why a format has none.
pub fn schema(format: OutputFormat, strict: bool) -> Result<Value, String> {
    let loose = match format {
        OutputFormat::Json => crate::report::schema(),
        OutputFormat::Jsonl => run_schema(),
        OutputFormat::Dstack => dstack(false),
        OutputFormat::DstackE2e => dstack(true),
        OutputFormat::SglangSkill => sglang_skill(),
        OutputFormat::LlmdBr => {
            return Err("llmd-br has no schema here: its documents are llm-d's Benchmark Report v0.2, whose \
                        schema is llm-d-benchmark's own model"
                .into());
        }
        OutputFormat::Csv | OutputFormat::Table | OutputFormat::Explain => {
            return Err(format!("{} is not JSON: it has no JSON Schema", format.name()));
        }
    };
    if !strict {
        return Ok(loose);
    }
    let root = match format {
        // The strict root is one object: the `benchmark` object (what dstack stores), or the
        // `metrics` object of dstack#4230; a `metrics` object alone and the entries of several
        // runs are its `$defs`.
        OutputFormat::Dstack => pick_root(loose, "benchmark"),
        OutputFormat::DstackE2e => pick_root(loose, "metrics"),
        _ => loose,
    };
    strictify(&root)
}

/// One JSON Lines line: a run, with the report's definitions.
fn run_schema() -> Value {
    let mut report = crate::report::schema();
    let defs = report["$defs"].take();
    let mut run = defs["Run"].clone();
    run["$schema"] = json!(DRAFT);
    run["title"] = json!("bench-normalize run (one JSON Lines line)");
    run["$defs"] = defs;
    run
}

/// `{ "$ref": "#/$defs/NAME" }` made the root, with the same `$defs`.
fn pick_root(schema: Value, name: &str) -> Value {
    let mut root = schema["$defs"][name].clone();
    root["$schema"] = schema["$schema"].clone();
    root["title"] = schema["title"].clone();
    root["$defs"] = schema["$defs"].clone();
    root
}

/// One row of the SGLang `llm-serving-auto-benchmark` skill's normalized JSONL
/// (`references/result-schema.md` in sglang's repository), as `-f sglang-skill` writes it.
fn sglang_skill() -> Value {
    let s = |doc: &str| json!({ "type": ["string", "null"], "description": doc });
    let n = |doc: &str| json!({ "type": ["number", "null"], "description": doc });
    let i = |doc: &str| json!({ "type": ["integer", "null"], "minimum": 0, "description": doc });
    let all = |v: Vec<(&'static str, Value)>| v.into_iter().map(|(k, s)| (k, s, true)).collect::<Vec<_>>();
    let hardware = object(
        all(vec![
            ("gpu_model", s("not in a client's output: null")),
            ("gpu_count", i("not in a client's output: null")),
            ("visible_devices", s("not in a client's output: null")),
        ]),
        "the hardware (a client's output does not state it)",
    );
    let workload = object(
        all(vec![
            ("kind", s("the dataset kind the client names (random, sharegpt, ...)")),
            ("scenario", s("not in a client's output: null")),
            ("dataset_path", s("the dataset file, when the run states it")),
            ("input_len", i("requested input length per request")),
            ("output_len", i("requested output length per request")),
            ("input_len_p50", n("not summarized: null")),
            ("input_len_p95", n("not summarized: null")),
            ("output_len_p50", n("not summarized: null")),
            ("output_len_p95", n("not summarized: null")),
            ("num_prompts", i("requests sent")),
            ("request_rate", n("requests per second offered; null for unlimited (inf)")),
            ("max_concurrency", i("requests in flight at most")),
            ("endpoint", s("the API endpoint, when the run states it")),
        ]),
        "the workload",
    );
    let sla = object(
        all(vec![
            ("max_p99_ttft_ms", n("from --slo ttft.p99<=X; null when not given")),
            ("max_p99_tpot_ms", n("from --slo tpot.p99<=X (derived TPOT); null when not given")),
            ("min_success_rate", n("no --slo objective gives it: null")),
            (
                "passed",
                json!({ "type": ["boolean", "null"], "description": "every given limit met; null when none is given" }),
            ),
        ]),
        "service-level objectives and whether the run meets them",
    );
    let metrics = object(
        all(vec![
            ("request_throughput", n("successful requests / duration (req/s)")),
            ("output_token_throughput", n("output tokens / duration (tok/s)")),
            ("total_token_throughput", n("(input + output tokens) / duration (tok/s)")),
            ("mean_ttft_ms", n("mean time to first token (ms)")),
            ("p99_ttft_ms", n("p99 time to first token (ms)")),
            ("mean_tpot_ms", n("mean TPOT derived by bench-normalize from E2E, TTFT and tokens, never ITL (ms)")),
            ("p99_tpot_ms", n("p99 TPOT, only from a source whose mean agrees with the derived one (ms)")),
            ("mean_e2e_ms", n("mean end-to-end latency (ms)")),
            ("p99_e2e_ms", n("p99 end-to-end latency (ms)")),
            ("success_rate", n("successful / (successful + failed) requests")),
        ]),
        "the run's figures; null for what the run does not give (never 0)",
    );
    let flags = object(
        all(vec![
            ("server", json!({ "type": "array", "items": { "type": "string" } })),
            ("benchmark", json!({ "type": "array", "items": { "type": "string" } })),
        ]),
        "flags checked against the CLI's help: none by bench-normalize",
    );
    let artifacts = object(
        all(vec![
            ("server_log", s("not in a client's output: null")),
            ("raw_result", s("the input the run was read from")),
            ("server_help", s("null")),
            ("benchmark_help", s("null")),
        ]),
        "files",
    );
    let provenance = object(
        all(vec![
            ("version", json!({ "type": "string" })),
            ("input", json!({ "type": "string" })),
            ("block", json!({ "type": "integer", "minimum": 1 })),
            ("verdict", json!({ "type": "string", "enum": ["accepted", "rejected", "unusable"] })),
            ("tpot_method", s("how TPOT was derived (docs/metrics.md)")),
            ("failed_checks", json!({ "type": "array", "items": { "type": "string" } })),
        ]),
        "which input, block and verdict the row is (bench-normalize's own key)",
    );
    let mut row = object(
        all(vec![
            ("framework", s("the serving framework, when the client names it (sglang, vllm)")),
            ("framework_version", s("not in a client's output: null")),
            ("framework_commit", s("not in a client's output: null")),
            ("candidate_id", json!({ "type": "string", "description": "input#block" })),
            ("model", s("the model served")),
            ("status", json!({ "type": "string", "enum": SGLANG_SKILL_STATUSES })),
            ("failure_reason", json!({ "type": "string", "description": "empty when status is ok" })),
            ("hardware", json!({ "$ref": "#/$defs/hardware" })),
            ("workload", json!({ "$ref": "#/$defs/workload" })),
            ("sla", json!({ "$ref": "#/$defs/sla" })),
            ("metrics", json!({ "$ref": "#/$defs/metrics" })),
            ("server_command", s("not in a client's output: null")),
            ("benchmark_command", s("the client's command, when the run states it")),
            ("validated_cli_flags", json!({ "$ref": "#/$defs/validated_cli_flags" })),
            ("artifacts", json!({ "$ref": "#/$defs/artifacts" })),
            ("bench_normalize", json!({ "$ref": "#/$defs/bench_normalize" })),
        ]),
        "one candidate's row of the SGLang llm-serving-auto-benchmark skill's normalized JSONL",
    );
    row["$schema"] = json!(DRAFT);
    row["title"] = json!("bench-normalize -f sglang-skill");
    row["$defs"] = json!({
        "hardware": hardware, "workload": workload, "sla": sla, "metrics": metrics,
        "validated_cli_flags": flags, "artifacts": artifacts, "bench_normalize": provenance,
    });
    row
}
