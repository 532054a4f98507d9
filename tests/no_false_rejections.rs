//! Property tests of the rules: runs simulated the way the tools compute them, printed as vLLM
//! and SGLang print them (2 decimals), are never rejected nor called unusable; forged ones are.
//!
//! The honest runs are not a +-15% spread around one TPOT: output lengths are fixed, uniform, or
//! cut by early EOS (many requests of 1-3 tokens), per-request TPOTs are tight or heavy-tailed
//! (log-normal), and short requests can be slow (a 2-token request waiting seconds for its
//! second token under load, as in the vLLM ROCm run of issue 16: mean TPOT 12x the median).
//! 1-16 tokens per streamed chunk, concurrency 1-256, failed requests.
//!
//! The forgeries: the per-chunk ITL copied into the TPOT rows, an output-token total that counts
//! streamed chunks, and statistic blocks impossible for non-negative values.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bench_normalize::normalize_str;
use bench_normalize::report::{Run, Severity, Status, Verdict};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Lengths {
    /// Every request `max_len` tokens (`ignore_eos`).
    Fixed,
    /// Uniform in `max_len / 2 ..= max_len`.
    Uniform,
    /// Early EOS: a share of the requests stop after 1-3 tokens, the others uniform in
    /// `2 ..= max_len`.
    EarlyEos(f64),
}

#[derive(Debug, Clone, Copy)]
enum Latency {
    /// Each request's TPOT within +-15% of the base.
    Tight,
    /// Log-normal around the base (sigma 0.3-2).
    HeavyTail(f64),
    /// Requests of at most 3 tokens wait up to `x` times the base per token (queueing after
    /// the first token), the others tight.
    ShortSlow(f64),
}

#[derive(Debug, Clone)]
struct Scenario {
    requests: usize,
    failed: usize,
    concurrency: usize,
    tokens_per_chunk: usize,
    tpot_ms: f64,
    ttft_ms: f64,
    max_len: usize,
    lengths: Lengths,
    latency: Latency,
    seed: u64,
}

fn lengths() -> impl Strategy<Value = Lengths> {
    prop_oneof![Just(Lengths::Fixed), Just(Lengths::Uniform), (0.0f64..0.9).prop_map(Lengths::EarlyEos)]
}

fn latency() -> impl Strategy<Value = Latency> {
    prop_oneof![
        Just(Latency::Tight),
        (0.3f64..2.0).prop_map(Latency::HeavyTail),
        (2.0f64..2000.0).prop_map(Latency::ShortSlow)
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        (1usize..200, 0usize..4, 1usize..=256, 1usize..=16),
        (2.0f64..120.0, 15.0f64..3000.0, 2usize..1500),
        (lengths(), latency(), any::<u64>()),
    )
        .prop_map(
            |(
                (requests, failed, concurrency, tokens_per_chunk),
                (tpot_ms, ttft_ms, max_len),
                (lengths, latency, seed),
            )| Scenario {
                requests,
                failed: failed.min(requests.saturating_sub(1)),
                concurrency,
                tokens_per_chunk,
                tpot_ms,
                ttft_ms,
                max_len,
                lengths,
                latency,
                seed,
            },
        )
}

/// Where `tpot-bounds` proves a chunk-count total wrong: 4+ tokens per chunk, tight TPOTs (the
/// rows' p99 near the true TPOT), no early EOS, 20-90 requests (numpy's p99 then bounds the
/// longest E2E latency), and decode time that outweighs the TTFT.
fn chunky_scenario() -> impl Strategy<Value = Scenario> {
    (
        (20usize..=90, 0usize..4, 1usize..=256, 4usize..=16),
        (2.0f64..120.0, 64usize..1500),
        (prop_oneof![Just(Lengths::Fixed), Just(Lengths::Uniform)], any::<u64>()),
    )
        .prop_map(|((requests, failed, concurrency, tokens_per_chunk), (tpot_ms, max_len), (lengths, seed))| {
            Scenario {
                requests,
                failed,
                concurrency,
                tokens_per_chunk,
                tpot_ms,
                // At most a fifth of the shortest request's decode time.
                ttft_ms: (max_len / 2) as f64 * tpot_ms / 5.0 / 1.25,
                max_len,
                lengths,
                latency: Latency::Tight,
                seed,
            }
        })
}

/// A small deterministic generator (xorshift), so a failing case replays exactly.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn between(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    /// A standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u = self.next().max(1e-12);
        let v = self.next();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// What both tools print, computed as they compute it.
struct Printed {
    ok: usize,
    failed: usize,
    concurrency: usize,
    duration_s: f64,
    output_tokens: usize,
    input_tokens: usize,
    ttft: Vec<f64>,
    /// Per-request TPOT of the requests with 2+ tokens (the tools leave the others out).
    tpot: Vec<f64>,
    itl: Vec<f64>,
    e2e: Vec<f64>,
    /// Streamed chunks, first ones included, over all requests.
    chunks: usize,
    /// Tokens per chunk after the first, over all requests.
    chunk_tokens: f64,
    /// The token-weighted TPOT: decode time over decode tokens.
    token_weighted: f64,
    /// Every request has the same length.
    equal_lengths: bool,
    /// Decode work over the slots' time.
    busy: f64,
}

fn simulate(s: &Scenario) -> Printed {
    let mut rng = Rng(s.seed | 1);
    let (mut ttft, mut tpot, mut itl, mut e2e, mut lens) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut decode_tokens, mut chunks, mut decode_work) = (0usize, 0usize, 0.0);
    for _ in 0..s.requests {
        let n = match s.lengths {
            Lengths::Fixed => s.max_len,
            Lengths::Uniform => rng.between((s.max_len / 2).max(2) as f64, s.max_len as f64 + 1.0) as usize,
            Lengths::EarlyEos(p) if rng.next() < p => 1 + (rng.next() * 3.0) as usize,
            Lengths::EarlyEos(_) => rng.between(2.0, s.max_len as f64 + 1.0) as usize,
        }
        .min(s.max_len.max(1));
        let t = match s.latency {
            Latency::Tight => s.tpot_ms * rng.between(0.85, 1.15),
            Latency::HeavyTail(sigma) => s.tpot_ms * (sigma * rng.normal()).exp(),
            Latency::ShortSlow(x) if n <= 3 => s.tpot_ms * rng.between(1.0, x),
            Latency::ShortSlow(_) => s.tpot_ms * rng.between(0.85, 1.15),
        };
        let f = s.ttft_ms * rng.between(0.8, 1.25);
        // After the first token, chunks of k tokens, written when their last token is produced;
        // a one-token answer still ends its stream a moment after its token (within a quarter
        // of an ordinary decode step: the end-of-stream message follows the token).
        let mut d = 0.0;
        let mut left = n - 1;
        while left > 0 {
            let k = left.min(s.tokens_per_chunk);
            itl.push(k as f64 * t);
            d += k as f64 * t;
            left -= k;
            chunks += 1;
        }
        if n == 1 {
            let end = 0.25 * s.tpot_ms * rng.next();
            itl.push(end);
            d = end;
        } else {
            tpot.push(d / (n - 1) as f64);
        }
        chunks += 1;
        decode_tokens += n - 1;
        decode_work += d;
        ttft.push(f);
        e2e.push(f + d);
        lens.push(n);
    }
    // Closed loop: each request takes the first free slot (failed ones hold a slot briefly).
    let slots = s.concurrency.min(s.requests + s.failed);
    let mut free: BinaryHeap<Reverse<u64>> = (0..slots).map(|_| Reverse(0)).collect();
    let mut end = 0u64;
    let micros = |ms: f64| (ms * 1000.0).round() as u64;
    for ms in e2e.iter().copied().chain(std::iter::repeat_n(5.0, s.failed)) {
        let Reverse(start) = free.pop().expect("a slot");
        let done = start + micros(ms);
        end = end.max(done);
        free.push(Reverse(done));
    }
    let duration_s = end as f64 / 1e6 + rng.between(0.0, 0.3);
    Printed {
        ok: s.requests,
        failed: s.failed,
        concurrency: s.concurrency,
        duration_s,
        output_tokens: lens.iter().sum(),
        input_tokens: 512 * s.requests,
        ttft,
        tpot,
        itl,
        e2e,
        chunks,
        chunk_tokens: decode_tokens as f64 / (chunks - s.requests).max(1) as f64,
        token_weighted: if decode_tokens > 0 { decode_work / decode_tokens as f64 } else { 0.0 },
        equal_lengths: lens.iter().all(|l| *l == lens[0]),
        busy: decode_work / 1000.0 / (s.concurrency.min(s.requests) as f64 * duration_s),
    }
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let r = p / 100.0 * (s.len() - 1) as f64;
    let (lo, hi) = (r.floor() as usize, r.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (r - lo as f64)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn row(label: &str, value: String) -> String {
    format!("{label:<40} {value:<10}\n")
}

/// Mean, median, P90, P99 as both tools print them; 0 for an empty list (numpy's `or 0`).
fn stats(v: &[f64]) -> [(&'static str, f64); 4] {
    if v.is_empty() {
        return [("Mean", 0.0), ("Median", 0.0), ("P90", 0.0), ("P99", 0.0)];
    }
    [("Mean", mean(v)), ("Median", percentile(v, 50.0)), ("P90", percentile(v, 90.0)), ("P99", percentile(v, 99.0))]
}

fn stat_rows(name: &str, v: &[f64], tool: &str) -> String {
    let mut out = String::new();
    for (label, x) in stats(v) {
        let l = if tool == "sglang" && name == "E2E" {
            format!("{label} E2E Latency (ms):")
        } else {
            format!("{label} {name} (ms):")
        };
        out += &row(&l, format!("{x:.2}"));
    }
    out
}

/// What a forged block changes.
#[derive(Clone, Copy, PartialEq)]
enum Forge {
    None,
    /// The per-chunk ITL rows copied into the TPOT rows.
    ItlAsTpot,
    /// The output-token total counts streamed chunks.
    ChunksAsTokens,
}

fn tpot_rows(p: &Printed, forge: Forge) -> &[f64] {
    if forge == Forge::ItlAsTpot { &p.itl } else { &p.tpot }
}

fn output_total(p: &Printed, forge: Forge) -> usize {
    if forge == Forge::ChunksAsTokens { p.chunks } else { p.output_tokens }
}

/// The block as `vllm bench serve` 0.33 prints it (`--percentile-metrics ttft,tpot,itl[,e2el]`).
fn vllm_block(p: &Printed, with_e2e: bool, forge: Forge) -> String {
    let d = p.duration_s;
    let out = output_total(p, forge);
    let mut b = String::from("============ Serving Benchmark Result ============\n");
    b += &row("Successful requests:", p.ok.to_string());
    b += &row("Failed requests:", p.failed.to_string());
    b += &row("Maximum request concurrency:", p.concurrency.to_string());
    b += &row("Benchmark duration (s):", format!("{d:.2}"));
    b += &row("Total input tokens:", p.input_tokens.to_string());
    b += &row("Total generated tokens:", out.to_string());
    b += &row("Request throughput (req/s):", format!("{:.2}", p.ok as f64 / d));
    b += &row("Output token throughput (tok/s):", format!("{:.2}", out as f64 / d));
    b += &row("Total token throughput (tok/s):", format!("{:.2}", (p.input_tokens + out) as f64 / d));
    b += "---------------Time to First Token----------------\n";
    b += &stat_rows("TTFT", &p.ttft, "vllm");
    b += "-----Time per Output Token (excl. 1st token)------\n";
    b += &stat_rows("TPOT", tpot_rows(p, forge), "vllm");
    b += "---------------Inter-token Latency----------------\n";
    b += &stat_rows("ITL", &p.itl, "vllm");
    if with_e2e {
        b += "----------------End-to-end Latency----------------\n";
        b += &stat_rows("E2EL", &p.e2e, "vllm");
    }
    b + "==================================================\n"
}

/// The block as `sglang.bench_serving` 0.5.14+ prints it for the sglang-oai backend.
fn sglang_block(p: &Printed, forge: Forge) -> String {
    let d = p.duration_s;
    let out = output_total(p, forge);
    let mut b = String::from("\n============ Serving Benchmark Result ============\n");
    b += &row("Backend:", "sglang-oai".into());
    b += &row("Traffic request rate:", "inf".into());
    b += &row("Max request concurrency:", p.concurrency.to_string());
    b += &row("Successful requests:", p.ok.to_string());
    b += &row("Benchmark duration (s):", format!("{d:.2}"));
    b += &row("Total input tokens:", p.input_tokens.to_string());
    b += &row("Total generated tokens:", out.to_string());
    b += &row("Total generated tokens (retokenized):", out.to_string());
    b += &row("Request throughput (req/s):", format!("{:.2}", p.ok as f64 / d));
    b += &row("Output token throughput (tok/s):", format!("{:.2}", out as f64 / d));
    b += &row("Concurrency:", format!("{:.2}", p.e2e.iter().sum::<f64>() / 1000.0 / d));
    b += "----------------End-to-End Latency----------------\n";
    b += &stat_rows("E2E", &p.e2e, "sglang");
    b += "---------------Time to First Token----------------\n";
    b += &stat_rows("TTFT", &p.ttft, "sglang");
    b += "-----Time per Output Token (excl. 1st token)------\n";
    b += &stat_rows("TPOT", tpot_rows(p, forge), "sglang");
    b += "---------------Inter-Token Latency----------------\n";
    b += &stat_rows("ITL", &p.itl, "sglang");
    b + "==================================================\n"
}

/// A hand-written dstack preset report of the run (2 decimals), with the requested output
/// length as each request's cap.
fn dstack_report(p: &Printed, output_len: usize, with_e2e: bool, forge: Forge) -> String {
    let st = |v: &[f64]| {
        let [(_, m), (_, p50), _, (_, p99)] = stats(v);
        let r2 = |x: f64| (x * 100.0).round() / 100.0;
        serde_json::json!({ "mean": r2(m), "p50": r2(p50), "p99": r2(p99) })
    };
    let out = output_total(p, forge);
    let d = (p.duration_s * 100.0).round() / 100.0;
    let tpot = st(tpot_rows(p, forge));
    let mut metrics = serde_json::json!({
        "successful_requests": p.ok, "failed_requests": p.failed, "duration_seconds": d,
        "total_input_tokens": p.input_tokens, "total_output_tokens": out,
        "output_tok_per_s": out as f64 / d,
        // dstack's definition (its instructions to its agent): the output rate per concurrency slot.
        "per_user_tok_per_s": out as f64 / d / p.concurrency as f64,
        "ttft_ms": st(&p.ttft), "tpot_ms": tpot
    });
    if with_e2e {
        metrics["e2e_ms"] = st(&p.e2e);
    }
    serde_json::json!({
        "tool": "vllm bench serve", "tool_version": "0.33.0", "command": "vllm bench serve ...",
        "workload": { "api": "completions", "dataset": "random", "num_requests": p.ok, "input_tokens": 512,
                      "output_tokens": output_len, "concurrency": p.concurrency },
        "metrics": metrics
    })
    .to_string()
}

fn run_of(text: &str) -> Run {
    normalize_str(text, "sim").unwrap().remove(0)
}

/// Failed error rules, and an unusable verdict.
fn errors(run: &Run) -> Vec<String> {
    let mut e: Vec<String> = run
        .checks
        .iter()
        .filter(|c| c.severity == Severity::Error && c.status == Status::Fail)
        .map(|c| format!("{}: {}", c.id, c.message))
        .collect();
    if run.verdict != Verdict::Accepted {
        e.push(format!("verdict {:?}", run.verdict));
    }
    e
}

fn failed(run: &Run, id: &str) -> bool {
    run.checks.iter().any(|c| c.id == id && c.status == Status::Fail)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn consistent_runs_are_never_rejected(s in scenario()) {
        let p = simulate(&s);
        prop_assume!(!p.tpot.is_empty());
        let mut blocks = vec![vllm_block(&p, true, Forge::None), vllm_block(&p, false, Forge::None), sglang_block(&p, Forge::None)];
        // dstack's model refuses a report with failed requests (`dstack-model`): an honest one has none.
        if p.equal_lengths && p.failed == 0 {
            blocks.push(dstack_report(&p, s.max_len, true, Forge::None));
            blocks.push(dstack_report(&p, s.max_len, false, Forge::None));
        }
        for block in blocks {
            let run = run_of(&block);
            let e = errors(&run);
            prop_assert!(e.is_empty(), "{e:?}\n{block}");
        }
    }

    #[test]
    fn itl_copied_as_tpot_never_gives_a_verified_wrong_tpot(s in scenario()) {
        let p = simulate(&s);
        prop_assume!(!p.tpot.is_empty() && p.chunk_tokens >= 3.0);
        let copied = mean(&p.itl);
        for block in [vllm_block(&p, true, Forge::ItlAsTpot), vllm_block(&p, false, Forge::ItlAsTpot), sglang_block(&p, Forge::ItlAsTpot)] {
            let run = run_of(&block);
            let t = &run.derived.tpot_ms;
            let emits_copy = t.mean.is_some_and(|m| (m - copied).abs() <= 0.01 * copied + 0.01);
            // Either rejected, or the copy is not the figure emitted, or it is marked unverified.
            prop_assert!(
                run.verdict == Verdict::Rejected || !emits_copy || t.verified == Some(false),
                "{t:?}\n{block}"
            );
            // With E2E printed the emitted TPOT is the run's own token-weighted figure.
            if t.method == Some(bench_normalize::report::TpotMethod::E2eTtftTokens) {
                let m = t.mean.unwrap();
                prop_assert!((m - p.token_weighted).abs() <= 0.01 * p.token_weighted + 0.05, "{m} vs {}\n{block}", p.token_weighted);
            }
        }
        // Equal lengths known (a report's requested length as each request's cap): rejected,
        // with E2E by decode-within-e2e and tpot-bounds, without it when the slots are busy.
        if p.output_tokens == p.ok * s.max_len {
            let run = run_of(&dstack_report(&p, s.max_len, true, Forge::ItlAsTpot));
            prop_assert!(failed(&run, "decode-within-e2e") && failed(&run, "tpot-bounds"), "{:?}", errors(&run));
            if p.busy >= 0.5 {
                let run = run_of(&dstack_report(&p, s.max_len, false, Forge::ItlAsTpot));
                prop_assert!(failed(&run, "decode-capacity"), "{:?}", errors(&run));
            }
        }
    }

    #[test]
    fn an_output_total_that_counts_chunks_is_rejected(s in chunky_scenario()) {
        let p = simulate(&s);
        for block in [vllm_block(&p, true, Forge::ChunksAsTokens), sglang_block(&p, Forge::ChunksAsTokens)] {
            let run = run_of(&block);
            prop_assert!(failed(&run, "tpot-bounds"), "{:?}\n{block}", errors(&run));
            prop_assert_eq!(run.verdict, Verdict::Rejected);
        }
    }

    #[test]
    fn impossible_statistic_blocks_are_rejected(s in scenario(), q in prop_oneof![Just(50.0), Just(90.0), Just(99.0)], cut in 2.5f64..50.0) {
        // A mean below what any non-negative sample with that percentile has.
        let p = simulate(&s);
        prop_assume!(!p.tpot.is_empty());
        let block = vllm_block(&p, true, Forge::None);
        let pq = percentile(&p.ttft, q);
        let bound = (1.0 - q / 100.0) * pq;
        let forged_mean = bound / cut;
        prop_assume!(bound - forged_mean > 0.02);
        let forged = block.replace(
            &row("Mean TTFT (ms):", format!("{:.2}", mean(&p.ttft))),
            &row("Mean TTFT (ms):", format!("{forged_mean:.2}")),
        );
        prop_assume!(forged != block);
        let run = run_of(&forged);
        prop_assert!(failed(&run, "distribution-possible"), "{:?}\n{forged}", errors(&run));
    }
}
