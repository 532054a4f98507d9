//! dstack's documents read back, walked as a schema validator walks them (the walker is
//! `crate::shape`): dstack 0.22.5's preset benchmark (`PresetBenchmark` in
//! `dstack/_internal/core/models/presets.py`) and a bare `metrics` object (dstack's, or
//! dstack#4230's proposal), every place where one is not the shape it claims to be returned with
//! its JSON path. `check` re-exports these walks, beside the canonical report's.

use serde_json::Value;

use crate::shape::{ShapeError, Ty, object};

/// Every shape error of dstack's `PresetBenchmark` document, as dstack's pydantic model reads it:
/// unknown keys forbidden at every level, `tool`, `tool_version`, `command` non-empty strings,
/// `workload.api` `chat_completions` or `completions`, `num_requests`, `input_tokens`,
/// `concurrency` whole numbers `>= 1`, `output_tokens` `>= 2`, `shared_prefix_tokens` `>= 0`
/// (optional), every metric required (counts whole `>= 0`, `duration_seconds` and both rates
/// `> 0`, `ttft_ms` and `tpot_ms` each `{mean, p50, p99}` numbers `>= 0`), no bearer token in
/// `command`. One addition: `metrics.e2e_ms` (dstack#4230's proposal, which lets TPOT be derived
/// rather than trusted) may be given, `{mean, p50, p99}` numbers `>= 0` or null. Stricter than
/// pydantic's lax mode in one way: a number must be a JSON number and a string a JSON string (no
/// `"16"` for 16).
pub fn dstack_shape(doc: &Value) -> Vec<ShapeError> {
    let mut out = Vec::new();
    object(
        doc,
        "",
        "dstack's PresetBenchmark",
        &[
            ("tool", Ty::NonEmptyStr, true),
            ("tool_version", Ty::NonEmptyStr, true),
            ("command", Ty::NonEmptyStr, true),
            ("workload", Ty::Walk(dstack_workload), true),
            ("metrics", Ty::Walk(dstack_metrics), true),
        ],
        &mut out,
    );
    if let Some(Value::String(command)) = doc.get("command")
        && let Some(token) = super::model::bearer_token(command)
    {
        let shown: String = token.chars().take(4).collect();
        out.push(ShapeError {
            path: "command".into(),
            expected: "a command without a credential (dstack refuses a bearer token value; write $TOKEN)".into(),
            found: format!("a bearer token ({shown}...)"),
        });
    }
    out
}

/// Every shape error of a bare `metrics` object: dstack's `PresetBenchmarkMetrics` as dstack's model
/// reads it (what `--format dstack` writes for a run that does not state the client's version and
/// command), or, with an `e2e_ms` key, the metrics object of dstack#4230's proposal (what `--format
/// dstack-e2e` writes: every key present, each a value of its type or `null`).
pub fn dstack_metrics_shape(doc: &Value) -> Vec<ShapeError> {
    let mut out = Vec::new();
    if doc.get("e2e_ms").is_none() {
        dstack_metrics(doc, "", &mut out);
        return out;
    }
    fn trio(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
        const N: Ty = Ty::Null(&Ty::NumMin0);
        object(
            v,
            at,
            "the proposal's latency statistics",
            &[("mean", N, true), ("p50", N, true), ("p99", N, true)],
            out,
        )
    }
    object(
        doc,
        "",
        "dstack#4230's proposed metrics object",
        &[
            ("successful_requests", Ty::Null(&Ty::Int(0)), true),
            ("failed_requests", Ty::Null(&Ty::Int(0)), true),
            ("duration_seconds", Ty::Null(&Ty::PosNum), true),
            ("total_input_tokens", Ty::Null(&Ty::Int(0)), true),
            ("total_output_tokens", Ty::Null(&Ty::Int(0)), true),
            ("output_tok_per_s", Ty::Null(&Ty::PosNum), true),
            ("per_user_tok_per_s", Ty::Null(&Ty::PosNum), true),
            ("ttft_ms", Ty::Walk(trio), true),
            ("tpot_ms", Ty::Walk(trio), true),
            ("e2e_ms", Ty::Walk(trio), true),
        ],
        &mut out,
    );
    out
}

fn dstack_workload(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "dstack's PresetWorkload",
        &[
            ("api", Ty::Enum(&["chat_completions", "completions"]), true),
            ("dataset", Ty::Null(&Ty::Str), false),
            ("num_requests", Ty::Int(1), true),
            ("input_tokens", Ty::Int(1), true),
            ("output_tokens", Ty::Int(2), true),
            ("concurrency", Ty::Int(1), true),
            ("shared_prefix_tokens", Ty::Int(0), false),
        ],
        out,
    );
}

fn dstack_metrics(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "dstack's PresetBenchmarkMetrics",
        &[
            ("successful_requests", Ty::Int(0), true),
            ("failed_requests", Ty::Int(0), true),
            ("duration_seconds", Ty::PosNum, true),
            ("total_input_tokens", Ty::Int(0), true),
            ("total_output_tokens", Ty::Int(0), true),
            ("output_tok_per_s", Ty::PosNum, true),
            ("per_user_tok_per_s", Ty::PosNum, true),
            ("ttft_ms", Ty::Walk(dstack_latency), true),
            ("tpot_ms", Ty::Walk(dstack_latency), true),
            (
                "e2e_ms",
                Ty::Null(&Ty::Walk(|v, at, out| {
                    const N: Ty = Ty::Null(&Ty::NumMin0);
                    object(
                        v,
                        at,
                        "the proposed e2e_ms",
                        &[("mean", N, false), ("p50", N, false), ("p99", N, false)],
                        out,
                    )
                })),
                false,
            ),
        ],
        out,
    );
}

fn dstack_latency(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "dstack's PresetBenchmarkLatency",
        &[("mean", Ty::NumMin0, true), ("p50", Ty::NumMin0, true), ("p99", Ty::NumMin0, true)],
        out,
    );
}
