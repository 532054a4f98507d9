//! The canonical vocabulary: every figure a parser definition may feed, with its kind and unit.
//!
//! Parser definitions (`parsers/*.toml`) name their targets by these paths; a path that is not
//! listed here is a definition error, so a typo cannot silently drop a figure. The order of this
//! table is the order in which figures are written in a report.

/// What sort of value a canonical figure holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (requests, tokens). `64.00` is accepted when it is integral.
    Count,
    /// A real number in the figure's unit.
    Number,
    /// Free text (backend name, SLO specification).
    Text,
    /// A block of statistics: `mean`, `p50`, `p90`, ..., `min`, `max`, `std`.
    Stat,
    /// A list indexed from 0 (per-position acceptance rates).
    List,
}

/// The unit of a canonical figure; a definition may name another unit for its source row and the
/// value is converted (`s` -> `ms`, `fraction` -> `pct`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    None,
    Ms,
    S,
    /// Nanoseconds: early genai-perf tables (converted into `ms` or `s`).
    Ns,
    Requests,
    Tokens,
    ReqPerS,
    TokPerS,
    Pct,
    Ratio,
}

impl Unit {
    pub fn parse(s: &str) -> Option<Unit> {
        Some(match s {
            "" | "none" => Unit::None,
            "ms" => Unit::Ms,
            "s" => Unit::S,
            "ns" => Unit::Ns,
            "requests" => Unit::Requests,
            "tokens" => Unit::Tokens,
            "req/s" => Unit::ReqPerS,
            "tok/s" => Unit::TokPerS,
            "pct" | "%" => Unit::Pct,
            "fraction" | "ratio" => Unit::Ratio,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::Ns => "ns",
            Unit::Requests => "requests",
            Unit::Tokens => "tokens",
            Unit::ReqPerS => "req/s",
            Unit::TokPerS => "tok/s",
            Unit::Pct => "%",
            Unit::Ratio => "ratio",
        }
    }

    /// Factor that converts a value in `self` into `to`, when the two are convertible.
    pub fn factor_to(self, to: Unit) -> Option<f64> {
        match (self, to) {
            (a, b) if a == b => Some(1.0),
            (Unit::S, Unit::Ms) => Some(1000.0),
            (Unit::Ms, Unit::S) => Some(0.001),
            (Unit::Ns, Unit::Ms) => Some(1e-6),
            (Unit::Ns, Unit::S) => Some(1e-9),
            (Unit::Ratio, Unit::Pct) => Some(100.0),
            (Unit::Pct, Unit::Ratio) => Some(0.01),
            _ => None,
        }
    }
}

/// One canonical figure.
#[derive(Debug)]
pub struct FieldDef {
    /// `group.name` or `group.sub.name`; the first part is `workload`, `totals` or `reported`.
    pub path: &'static str,
    pub kind: Kind,
    pub unit: Unit,
    pub doc: &'static str,
}

macro_rules! fields {
    ($( $path:literal $kind:ident $unit:ident $doc:literal ;)*) => {
        /// Every canonical figure, in report order.
        pub static FIELDS: &[FieldDef] = &[
            $( FieldDef { path: $path, kind: Kind::$kind, unit: Unit::$unit, doc: $doc }, )*
        ];
    };
}

fields! {
    "workload.benchmark_tool"        Text     None     "benchmark client named by a hand-written report";
    "workload.benchmark_tool_version" Text    None     "its version, as the report states it";
    "workload.command"               Text     None     "the benchmark command, as the report states it";
    "workload.api"                   Text     None     "API used (chat_completions, completions)";
    "workload.backend"               Text     None     "client backend (`--backend`)";
    "workload.endpoint"              Text     None     "API path the client sent requests to (`--endpoint`, e.g. `/v1/completions`)";
    "workload.model"                 Text     None     "model id the client sent";
    "workload.dataset"               Text     None     "dataset name";
    "workload.num_prompts"           Count    Requests "requests the client was asked to send";
    "workload.max_concurrency"       Count    Requests "client-side concurrency cap (`--max-concurrency`); absent when not set";
    "workload.request_rate"          Number   ReqPerS  "configured request rate; absent when infinite (`inf`) or replayed from a trace";
    "workload.burstiness"            Number   None     "arrival burstiness factor";
    "workload.input_len"             Count    Tokens   "requested input length per request";
    "workload.output_len"            Count    Tokens   "requested output length per request";
    "workload.shared_prefix_tokens"  Count    Tokens   "prompt tokens shared by every request";
    "workload.strategy"              Text     None     "the load step as the tool names it in a table of runs (guidellm `concurrent@4`, vllm-rs sweep `concurrency=4`)";
    "workload.goodput_slos"          Text     None     "goodput SLO specification as printed (ms)";
    "totals.successful_requests"     Count    Requests "completed requests (R)";
    "totals.failed_requests"         Count    Requests "failed requests (F)";
    "totals.sent_requests"           Count    Requests "requests sent, when the tool prints `ok/sent`";
    "totals.duration_s"              Number   S        "benchmark duration (D)";
    "totals.input_tokens"            Count    Tokens   "total input tokens (N_in)";
    "totals.input_text_tokens"       Count    Tokens   "input tokens that are text";
    "totals.input_vision_tokens"     Count    Tokens   "input tokens that are images";
    "totals.output_tokens"           Count    Tokens   "total output tokens (N_out); see source.semantics.output_tokens for how the tool counted them";
    "totals.output_tokens_retokenized" Count  Tokens   "output tokens re-counted by the client's tokenizer (SGLang)";
    "totals.output_tokens_per_request" Number Tokens   "mean output tokens per successful request, for tools that print no total (llmperf)";
    "reported.ttft_ms"               Stat     Ms       "time to first token, per request";
    "reported.tpot_ms"               Stat     Ms       "the tool's own time per output token (excl. first), per request";
    "reported.itl_ms"                Stat     Ms       "the tool's inter-token latency; per chunk or per token, see reported.itl_per";
    "reported.itl_per"               Text     None     "`chunk` when the tool times ITL per streamed chunk, `token` when per token";
    "reported.e2e_ms"                Stat     Ms       "end-to-end request latency";
    "reported.client_queue_ms"       Stat     Ms       "time a request waited for a client concurrency slot";
    "reported.e2e_incl_queue_ms"     Stat     Ms       "end-to-end latency including client queueing";
    "reported.latency_per_output_token_ms" Stat Ms     "request latency divided by its output length (includes TTFT: NOT a TPOT)";
    "reported.latency_per_token_ms"  Stat     Ms       "request latency divided by its input+output length (not a TPOT)";
    "reported.request_per_s"         Number   ReqPerS  "printed request throughput";
    "reported.input_tok_per_s"       Number   TokPerS  "printed input token throughput";
    "reported.input_seq_per_s"       Number   None     "printed input sequences per second (pooling)";
    "reported.output_tok_per_s"      Number   TokPerS  "printed output token throughput";
    "reported.total_tok_per_s"       Number   TokPerS  "printed total (input+output) token throughput";
    "reported.per_user_tok_per_s"    Number   TokPerS  "a claimed per-user rate (hand-written reports; dstack's agents have written both 1000/TPOT and throughput/concurrency here)";
    "reported.peak_output_tok_per_s" Number   TokPerS  "printed peak output throughput (both tools count chunks, not tokens, for chunked streams)";
    "reported.peak_concurrent_requests" Number Requests "printed peak concurrent requests (1-s buckets)";
    "reported.mean_in_flight"        Number   Requests "printed mean requests in flight (SGLang `Concurrency:`)";
    "reported.request_goodput_per_s" Number   ReqPerS  "printed goodput (requests meeting the SLOs per second)";
    "reported.rtfx"                  Number   Ratio    "inverse real-time factor (audio)";
    "reported.tokens_per_chunk"      Number   Ratio    "the tool's own mean output tokens per streamed chunk (guidellm iter_tokens_per_iteration)";
    "reported.accept_length"         Number   Ratio    "speculative decoding: tokens per verification step (vLLM `Acceptance length`, SGLang `Accept length`)";
    "reported.speculative.acceptance_rate_pct" Number Pct "accepted / drafted tokens";
    "reported.speculative.drafts"    Count    None     "draft steps";
    "reported.speculative.draft_tokens" Count Tokens   "drafted tokens";
    "reported.speculative.accepted_tokens" Count Tokens "accepted draft tokens";
    "reported.speculative.per_position_acceptance_pct" List Pct "acceptance rate per draft position";
    "reported.goodput.slo_attainment_pct" Number Pct   "share of requests meeting every SLO";
    "reported.goodput.ttft_slo_attainment_pct" Number Pct "share of requests meeting the TTFT SLO";
    "reported.goodput.tpot_slo_attainment_pct" Number Pct "share of requests meeting the TPOT SLO";
    "reported.goodput.e2el_slo_attainment_pct" Number Pct "share of requests meeting the E2E SLO";
    "reported.cache.prompt_tokens"   Count    Tokens   "prompt tokens (cache report)";
    "reported.cache.cached_tokens"   Count    Tokens   "prompt tokens served from cache";
    "reported.cache.device_cached_tokens" Count Tokens "cached tokens on device";
    "reported.cache.host_cached_tokens" Count Tokens   "cached tokens on host";
    "reported.cache.storage_cached_tokens" Count Tokens "cached tokens in storage";
    "reported.cache.hit_rate_pct"    Number   Pct      "cache hit rate";
    "reported.cache.device_hit_rate_pct" Number Pct    "device cache hit rate";
    "reported.cache.host_hit_rate_pct" Number Pct      "host cache hit rate";
    "reported.cache.storage_hit_rate_pct" Number Pct   "storage cache hit rate";
    "reported.probe.completed"       Count    Requests "probe requests completed";
    "reported.probe.failed"          Count    Requests "probe requests failed";
    "reported.probe.e2e_ms"          Stat     Ms       "probe request latency";
    "reported.diffusion.committed_tok_per_s" Number TokPerS "diffusion: committed tokens per second";
    "reported.diffusion.steps_per_canvas" Number Ratio "diffusion: denoising steps per canvas";
    "reported.diffusion.committed_per_step" Number Ratio "diffusion: committed tokens per denoising step";
    "reported.diffusion.committed_tokens" Count Tokens "diffusion: committed tokens";
    "reported.diffusion.denoising_steps" Count None    "diffusion: denoising steps";
    "reported.diffusion.canvas_positions" Count None   "diffusion: canvas positions evaluated";
    "reported.peak_memory_mb"        Stat     None     "peak device memory (MB), multimodal generation benchmarks";
    "reported.steady_state.concurrency_threshold" Text None "vllm-rs steady state: the in-flight threshold that defines the window";
    "reported.steady_state.window"   Text     None     "vllm-rs steady state: the window, as printed";
    "reported.steady_state.observed_peak_concurrency" Number Requests "vllm-rs steady state: peak requests in flight";
    "reported.steady_state.requests_started" Text None "vllm-rs steady state: requests started in the window, as printed (`13 / 16 (81.2%)`)";
    "reported.steady_state.requests_completed" Count Requests "vllm-rs steady state: requests completed in the window";
    "reported.steady_state.request_per_s" Number ReqPerS "vllm-rs steady state: completed requests per second in the window";
    "reported.steady_state.input_tok_per_s" Number TokPerS "vllm-rs steady state: input tokens of requests started in the window, per second";
    "reported.steady_state.output_chunks_per_s" Number None "vllm-rs steady state: streamed chunks per second in the window (printed as 'Output token throughput (tok/s)', but it counts chunks)";
    "reported.steady_state.ttft_ms"  Stat     Ms       "vllm-rs steady state: TTFT of requests in the window";
    "reported.steady_state.tpot_ms"  Stat     Ms       "vllm-rs steady state: TPOT of requests in the window";
}

/// Look up a canonical figure by its path.
pub fn field(path: &str) -> Option<&'static FieldDef> {
    FIELDS.iter().find(|f| f.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_grouped() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert!(
                ["workload.", "totals.", "reported."].iter().any(|g| f.path.starts_with(g)),
                "{} has no known group",
                f.path
            );
            assert!(!FIELDS[..i].iter().any(|g| g.path == f.path), "{} listed twice", f.path);
        }
    }

    #[test]
    fn units_convert_both_ways() {
        assert_eq!(Unit::S.factor_to(Unit::Ms), Some(1000.0));
        assert_eq!(Unit::Ns.factor_to(Unit::Ms), Some(1e-6));
        assert_eq!(Unit::parse("ns"), Some(Unit::Ns));
        assert_eq!(Unit::Ratio.factor_to(Unit::Pct), Some(100.0));
        assert_eq!(Unit::Tokens.factor_to(Unit::Ms), None);
    }
}
