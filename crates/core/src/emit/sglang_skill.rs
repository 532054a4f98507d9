//! `-f sglang-skill`: one row of the SGLang `llm-serving-auto-benchmark` skill's normalized JSONL
//! per run (its `references/result-schema.md`), filled from the derived figures, so that the
//! skill ranks candidates on TPOT derived from E2E, TTFT and tokens instead of a hand-copied row.
//! What a client's output cannot know (hardware, server command, framework version) is `null`,
//! never a guess; a run bench-normalize does not accept is a `failed` row without figures.

use serde_json::{Value, json};

use crate::report::{ObjectiveStatus, Run, StatKey, Verdict};
use crate::vocabulary::{reported, totals, workload};

use super::{failed_ids, tpot_trio};
use crate::dstack::write::failed_requests;

/// The skill's `status` values (`ok`, and the failures it names).
pub const SGLANG_SKILL_STATUSES: [&str; 5] = ["ok", "failed", "oom", "timeout", "skipped"];

/// The row of one run.
pub fn sglang_skill_row(run: &Run) -> Value {
    let client = run.source.run.as_ref();
    let client_failed = client.is_some_and(|c| c.exit_code != Some(0));
    let failure_reason = match run.verdict {
        Verdict::Rejected => {
            format!("bench-normalize rejected the run (failed checks: {})", failed_ids(run).join(", "))
        }
        Verdict::Unusable => {
            format!("bench-normalize: the run is unusable (failed checks: {})", failed_ids(run).join(", "))
        }
        Verdict::Accepted if client_failed => match client.and_then(|c| c.exit_code) {
            Some(code) => format!("the benchmark client exited with code {code}"),
            None => "a signal ended the benchmark client".into(),
        },
        Verdict::Accepted => String::new(),
    };
    let status = if failure_reason.is_empty() { "ok" } else { "failed" };
    let count = |v: Option<f64>| v.filter(|x| x.is_finite() && *x >= 0.0).map(|x| x.round() as u64);
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let backend = run.text(workload::BACKEND).unwrap_or("");
    let framework = ["sglang", "vllm", "tensorrt-llm", "trt"]
        .iter()
        .find(|f| backend.starts_with(*f))
        .map(|f| if *f == "trt" { "tensorrt-llm" } else { f });
    let command = client.map(|c| c.command.join(" ")).or_else(|| run.text(workload::COMMAND).map(str::to_string));
    let metrics = if run.verdict == Verdict::Accepted { metrics(run) } else { empty_metrics() };
    json!({
        "framework": framework,
        "framework_version": null,
        "framework_commit": null,
        "candidate_id": format!("{}#{}", run.source.input, run.source.block),
        "model": run.text(workload::MODEL),
        "status": status,
        "failure_reason": failure_reason,
        "hardware": { "gpu_model": null, "gpu_count": null, "visible_devices": null },
        "workload": {
            "kind": run.text(workload::DATASET),
            "scenario": null,
            "dataset_path": null,
            "input_len": count(run.number(workload::INPUT_LEN)),
            "output_len": count(run.number(workload::OUTPUT_LEN)),
            "input_len_p50": null,
            "input_len_p95": null,
            "output_len_p50": null,
            "output_len_p95": null,
            "num_prompts": count(run.number(workload::NUM_PROMPTS)),
            "request_rate": finite(run.number(workload::REQUEST_RATE)),
            "max_concurrency": count(run.number(workload::MAX_CONCURRENCY)),
            "endpoint": run.text(workload::ENDPOINT),
        },
        "sla": sla(run),
        "metrics": metrics,
        "server_command": null,
        "benchmark_command": command,
        "validated_cli_flags": { "server": [], "benchmark": [] },
        "artifacts": {
            "server_log": null,
            "raw_result": client.and_then(|c| c.kept.clone()).unwrap_or_else(|| run.source.input.clone()),
            "server_help": null,
            "benchmark_help": null,
        },
        "bench_normalize": {
            "version": env!("CARGO_PKG_VERSION"),
            "input": run.source.input,
            "block": run.source.block,
            "verdict": run.verdict.as_str(),
            "tpot_method": run.derived.tpot_ms.method.map(|m| m.as_str()),
            "failed_checks": failed_ids(run),
        },
    })
}

fn empty_metrics() -> Value {
    json!({
        "request_throughput": null, "output_token_throughput": null, "total_token_throughput": null,
        "mean_ttft_ms": null, "p99_ttft_ms": null, "mean_tpot_ms": null, "p99_tpot_ms": null,
        "mean_e2e_ms": null, "p99_e2e_ms": null, "success_rate": null,
    })
}

fn metrics(run: &Run) -> Value {
    let d = &run.derived;
    let (tpot_mean, _) = tpot_trio(run);
    let duration = run.number(totals::DURATION_S).filter(|s| *s > 0.0);
    let total = match (run.number(totals::INPUT_TOKENS), run.number(totals::OUTPUT_TOKENS), duration) {
        (Some(i), Some(o), Some(s)) => Some(crate::number::round((i + o) / s)),
        _ => run.number(reported::TOTAL_TOK_PER_S),
    };
    let successful = run.number(totals::SUCCESSFUL_REQUESTS);
    let success_rate = match (successful, failed_requests(run)) {
        (Some(s), Some(f)) if s + f as f64 > 0.0 => Some(crate::number::round(s / (s + f as f64))),
        _ => None,
    };
    let e2e_mean = run.stat_mean(reported::E2E_MS).or_else(|| d.per_request.as_ref().and_then(|p| p.e2e_mean_ms));
    json!({
        "request_throughput": d.request_per_s.or_else(|| run.number(reported::REQUEST_PER_S)),
        "output_token_throughput": d.output_tok_per_s.or_else(|| run.number(reported::OUTPUT_TOK_PER_S)),
        "total_token_throughput": total,
        "mean_ttft_ms": run.stat_mean(reported::TTFT_MS),
        "p99_ttft_ms": run.stat_of(reported::TTFT_MS, StatKey::P(99.0)),
        "mean_tpot_ms": tpot_mean,
        "p99_tpot_ms": tpot_p99(run),
        "mean_e2e_ms": e2e_mean,
        "p99_e2e_ms": run.stat_of(reported::E2E_MS, StatKey::P(99.0)),
        "success_rate": success_rate,
    })
}

/// The p99 TPOT `--slo tpot.p99` judges on: the row's `p99_tpot_ms` and its `sla.passed` never
/// disagree (a p99 from the tool's own TPOT rows is written only when the objective takes it too).
fn tpot_p99(run: &Run) -> Option<f64> {
    let objective = crate::objectives::parse("tpot.p99<=1000000000").ok()?;
    crate::objectives::judge_one(objective.0.first()?, run).value
}

/// The skill's SLA keys from `--slo` (`ttft.p99<=X`, `tpot.p99<=X`), and `passed`: every
/// objective given is met (`null` when none is given).
fn sla(run: &Run) -> Value {
    let results = run.objectives.as_deref().unwrap_or_default();
    let limit = |metric: &str| {
        results
            .iter()
            .find(|r| r.metric == metric && r.stat.as_deref() == Some("p99") && r.op.starts_with('<'))
            .map(|r| r.limit)
    };
    let passed = (!results.is_empty())
        .then(|| run.verdict == Verdict::Accepted && results.iter().all(|r| r.status == ObjectiveStatus::Pass));
    json!({
        "max_p99_ttft_ms": limit("ttft"),
        "max_p99_tpot_ms": limit("tpot"),
        "min_success_rate": null,
        "passed": passed,
    })
}
