//! dstack's preset benchmark: a run written as the document dstack's model reads, or the reasons
//! it cannot be.

use serde_json::{Value, json};

use crate::number::show;
use crate::report::{Run, StatKey, TpotMethod};
use crate::vocabulary::{Key, reported, totals, workload};

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

/// How to get the figures a run lacks, for the tool that printed it. A run of `bench-normalize
/// run` is never told to run what it just ran: what is missing is said with its own remedy.
pub(super) fn how_to_get(run: &Run) -> String {
    if let Some(client) = &run.source.run {
        let mut how = Vec::new();
        if client.client.is_none() {
            how.push(
                "`run` did not recognise the client in this command, so it could add no flag and state no tool: give \
                 it the client's own command (`vllm bench serve ...`, `python -m sglang.bench_serving ...`, \
                 `genai-perf profile ...`, `aiperf profile ...`), behind wrappers such as timeout, nohup, env or uv run \
                 if need be, or in a shell's -c string holding that one command alone"
                    .to_string(),
            );
        } else if client.tool_version.is_none() {
            how.push(format!(
                "the client's version could not be found ({}): state it with `--tool-version VERSION`",
                client.version_from.trim_start_matches("unknown: ")
            ));
        }
        if how.is_empty() {
            how.push(
                "`run` added the flags that give these figures (source.run.added_flags) and the client's output and \
                 result file still lack them: each item above says which figure and why; an older client may need \
                 them asked differently"
                    .to_string(),
            );
        }
        return how.join("; ");
    }
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
        Some(TpotMethod::E2eTtftTokens) | None => match run.stat(reported::TPOT_MS) {
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
pub(crate) fn failed_requests(run: &Run) -> Option<u64> {
    if let Some(f) = run.number(totals::FAILED_REQUESTS) {
        return Some(f as u64);
    }
    if let Some(failed) = run.requests.as_ref().and_then(|r| r.failed.as_ref()) {
        return Some(failed.iter().filter(|f| **f).count() as u64);
    }
    match (run.number(totals::SUCCESSFUL_REQUESTS), run.number(workload::NUM_PROMPTS)) {
        (Some(r), Some(n)) if r == n => Some(0),
        _ => None,
    }
}

/// dstack's `api` of a run: from its endpoint, else its backend (`sglang` native requests are
/// neither of dstack's two APIs).
pub(super) fn dstack_api(run: &Run) -> Option<&'static str> {
    if let Some(api) = run.text(workload::API) {
        return ["chat_completions", "completions"].into_iter().find(|a| *a == api);
    }
    if let Some(e) = run.text(workload::ENDPOINT) {
        let e = e.trim_end_matches('/');
        return if e.ends_with("/chat/completions") {
            Some("chat_completions")
        } else if e.ends_with("/completions") {
            Some("completions")
        } else {
            None
        };
    }
    match run.text(workload::BACKEND)? {
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
    let successful =
        need("successful_requests", run.number(totals::SUCCESSFUL_REQUESTS), "the run does not give it", false);
    let num_prompts = run.number(workload::NUM_PROMPTS);
    let failed_unknown = if num_prompts.is_some() {
        "the run does not print it, and it is proven zero only when every one of the num_prompts requests succeeded"
    } else {
        "the run does not print it, and without the client's argument dump (its `num_prompts`) it cannot be \
         proven zero"
    };
    let failed = need("failed_requests", failed_requests(run).map(|f| f as f64), failed_unknown, false);

    let duration = need("duration_seconds", run.number(totals::DURATION_S), "the run does not give it", true);
    let input = need("total_input_tokens", run.number(totals::INPUT_TOKENS), "the run does not give it", false);
    let output = need("total_output_tokens", run.number(totals::OUTPUT_TOKENS), "the run does not give it", false);
    let output_rate =
        need("output_tok_per_s", run.derived.output_tok_per_s, "needs total_output_tokens and duration_seconds", true);
    let concurrency = need(
        "workload.concurrency",
        run.number(workload::MAX_CONCURRENCY),
        "the client's concurrency cap is not in the run (dstack's per_user_tok_per_s is output_tok_per_s / \
         workload.concurrency): run the client with `--max-concurrency N` and keep the lines it prints before the \
         result block",
        true,
    );
    let per_user = match (output_rate, concurrency) {
        (Some(r), Some(c)) => Some(crate::number::round(r / c)),
        _ => None,
    };
    let ttft = run.stat(reported::TTFT_MS);
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
    if let (Some(r), Some(n)) = (successful, num_prompts)
        && r != n
    {
        refused.push(format!(
            "successful_requests: {} of the {} requests asked for (num_prompts) succeeded, and dstack requires \
                 successful_requests == workload.num_requests",
            show(r),
            show(n)
        ));
    }
    // In `run` mode dstack's whole `benchmark` object is asked for: never a part of it.
    let whole = run.text(workload::BENCHMARK_TOOL_VERSION).is_some()
        || run.text(workload::COMMAND).is_some()
        || run.source.run.is_some();
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
pub(super) fn dstack_benchmark_head(
    run: &Run,
    successful: Option<f64>,
    input: Option<f64>,
    output: Option<f64>,
    concurrency: Option<f64>,
    num_prompts: Option<f64>,
    problems: &mut Vec<String>,
) -> Option<Value> {
    let mut text = |name: &str, key: Key| match run.text(key).filter(|t| !t.trim().is_empty()) {
        Some(t) => Some(t.to_string()),
        None => {
            problems.push(format!("{name}: the run does not state it"));
            None
        }
    };
    let tool = text("tool", workload::BENCHMARK_TOOL);
    let version = text("tool_version", workload::BENCHMARK_TOOL_VERSION);
    let command = text("command", workload::COMMAND);
    let api = dstack_api(run);
    if api.is_none() {
        problems.push(format!(
            "workload.api: dstack knows chat_completions and completions, and this run's {} is neither or unknown",
            match (run.text(workload::ENDPOINT), run.text(workload::BACKEND)) {
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
    let dataset = run.text(workload::DATASET).filter(|d| *d != "random");
    let prefix = run.number(workload::SHARED_PREFIX_TOKENS);
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
        run.stat_mean(reported::TTFT_MS),
        run.stat_of(reported::TTFT_MS, StatKey::P(50.0)),
        run.stat_of(reported::TTFT_MS, StatKey::P(99.0)),
    );
    // Measured E2E only (printed, or the per-request arrays' mean without their percentiles,
    // which are not summarized): never the approximation rebuilt from TPOT.
    let (e2e_mean, e2e_p50, e2e_p99) = match run.stat(reported::E2E_MS) {
        Some(st) => (st.mean(), st.get(StatKey::P(50.0)), st.get(StatKey::P(99.0))),
        None => (d.per_request.as_ref().and_then(|p| p.e2e_mean_ms), None, None),
    };
    let e2e = trio("e2e_ms", e2e_mean, e2e_p50, e2e_p99);
    if let (Some(_), Some(a)) = (d.tpot_ms.mean, &d.tpot_ms.approximate) {
        warnings.push(format!("tpot_ms.mean is approximate: {a}"));
    }
    if let Err(why) = percentiles
        && tpot_mean.is_some()
    {
        warnings.push(format!("tpot_ms.p50 and p99 are null: {why}"));
    }
    let count = |name: &str, v: Option<f64>, warnings: &mut Vec<String>| {
        if v.is_none() {
            warnings.push(format!("{name} is null: the run does not give it"));
        }
        v.map(|x| x as u64)
    };
    let successful = count("successful_requests", run.number(totals::SUCCESSFUL_REQUESTS), &mut warnings);
    let failed = count("failed_requests", failed_requests(run).map(|f| f as f64), &mut warnings);
    let input = count("total_input_tokens", run.number(totals::INPUT_TOKENS), &mut warnings);
    let output = count("total_output_tokens", run.number(totals::OUTPUT_TOKENS), &mut warnings);
    let metrics = json!({
        "successful_requests": successful,
        "failed_requests": failed,
        "duration_seconds": run.number(totals::DURATION_S),
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
