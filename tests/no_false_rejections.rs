//! Property tests of the rules: runs simulated the way the tools compute them (random output
//! lengths, TTFTs, TPOTs, 1-16 tokens per chunk, concurrency 1-256, failed requests), printed as
//! vLLM and SGLang print them (2 decimals), are never rejected; the same runs with the per-chunk
//! ITL copied into the TPOT rows are, when chunks carry 3+ tokens and the slots are busy.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bench_normalize::normalize_str;
use bench_normalize::report::{Severity, Status, Verdict};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Scenario {
    requests: usize,
    failed: usize,
    concurrency: usize,
    tokens_per_chunk: usize,
    tpot_ms: f64,
    ttft_ms: f64,
    max_len: usize,
    fixed_len: bool,
    seed: u64,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        1usize..48,
        0usize..4,
        1usize..=256,
        1usize..=16,
        2.0f64..120.0,
        15.0f64..3000.0,
        2usize..1500,
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(
            |(requests, failed, concurrency, tokens_per_chunk, tpot_ms, ttft_ms, max_len, fixed_len, seed)| Scenario {
                requests,
                failed: failed.min(requests.saturating_sub(1)),
                concurrency,
                tokens_per_chunk,
                tpot_ms,
                ttft_ms,
                max_len,
                fixed_len,
                seed,
            },
        )
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
    tpot: Vec<f64>,
    itl: Vec<f64>,
    e2e: Vec<f64>,
    /// Tokens per chunk after the first, over all requests.
    chunk_tokens: f64,
    /// Decode work over the slots' time.
    busy: f64,
}

fn simulate(s: &Scenario) -> Printed {
    let mut rng = Rng(s.seed | 1);
    let (mut ttft, mut tpot, mut itl, mut e2e, mut lens) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut decode_tokens, mut chunks, mut decode_work) = (0usize, 0usize, 0.0);
    for _ in 0..s.requests {
        let n = if s.fixed_len {
            s.max_len
        } else {
            rng.between((s.max_len / 2).max(2) as f64, s.max_len as f64 + 1.0) as usize
        };
        let t = s.tpot_ms * rng.between(0.85, 1.15);
        let f = s.ttft_ms * rng.between(0.8, 1.25);
        // After the first token, chunks of k tokens, written when their last token is produced.
        let mut left = n - 1;
        while left > 0 {
            let k = left.min(s.tokens_per_chunk);
            itl.push(k as f64 * t);
            left -= k;
            chunks += 1;
        }
        decode_tokens += n - 1;
        decode_work += (n - 1) as f64 * t;
        ttft.push(f);
        tpot.push(t);
        e2e.push(f + (n - 1) as f64 * t);
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
        chunk_tokens: decode_tokens as f64 / chunks.max(1) as f64,
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

fn stat_rows(name: &str, v: &[f64], tool: &str) -> String {
    let mut out = String::new();
    let stats: &[(&str, f64)] = &[
        ("Mean", mean(v)),
        ("Median", percentile(v, 50.0)),
        ("P90", percentile(v, 90.0)),
        ("P99", percentile(v, 99.0)),
    ];
    for (label, x) in stats {
        let l = if tool == "sglang" && name == "E2E" {
            format!("{label} E2E Latency (ms):")
        } else {
            format!("{label} {name} (ms):")
        };
        out += &row(&l, format!("{x:.2}"));
    }
    out
}

/// The block as `vllm bench serve` 0.33 prints it (`--percentile-metrics ttft,tpot,itl[,e2el]`).
fn vllm_block(p: &Printed, with_e2e: bool, tpot_from_itl: bool) -> String {
    let d = p.duration_s;
    let mut b = String::from("============ Serving Benchmark Result ============\n");
    b += &row("Successful requests:", p.ok.to_string());
    b += &row("Failed requests:", p.failed.to_string());
    b += &row("Maximum request concurrency:", p.concurrency.to_string());
    b += &row("Benchmark duration (s):", format!("{d:.2}"));
    b += &row("Total input tokens:", p.input_tokens.to_string());
    b += &row("Total generated tokens:", p.output_tokens.to_string());
    b += &row("Request throughput (req/s):", format!("{:.2}", p.ok as f64 / d));
    b += &row("Output token throughput (tok/s):", format!("{:.2}", p.output_tokens as f64 / d));
    b += &row("Total token throughput (tok/s):", format!("{:.2}", (p.input_tokens + p.output_tokens) as f64 / d));
    b += "---------------Time to First Token----------------\n";
    b += &stat_rows("TTFT", &p.ttft, "vllm");
    b += "-----Time per Output Token (excl. 1st token)------\n";
    b += &stat_rows("TPOT", if tpot_from_itl { &p.itl } else { &p.tpot }, "vllm");
    b += "---------------Inter-token Latency----------------\n";
    b += &stat_rows("ITL", &p.itl, "vllm");
    if with_e2e {
        b += "----------------End-to-end Latency----------------\n";
        b += &stat_rows("E2EL", &p.e2e, "vllm");
    }
    b + "==================================================\n"
}

/// The block as `sglang.bench_serving` 0.5.14+ prints it for the sglang-oai backend.
fn sglang_block(p: &Printed, tpot_from_itl: bool) -> String {
    let d = p.duration_s;
    let mut b = String::from("\n============ Serving Benchmark Result ============\n");
    b += &row("Backend:", "sglang-oai".into());
    b += &row("Traffic request rate:", "inf".into());
    b += &row("Max request concurrency:", p.concurrency.to_string());
    b += &row("Successful requests:", p.ok.to_string());
    b += &row("Benchmark duration (s):", format!("{d:.2}"));
    b += &row("Total input tokens:", p.input_tokens.to_string());
    b += &row("Total generated tokens:", p.output_tokens.to_string());
    b += &row("Total generated tokens (retokenized):", p.output_tokens.to_string());
    b += &row("Request throughput (req/s):", format!("{:.2}", p.ok as f64 / d));
    b += &row("Output token throughput (tok/s):", format!("{:.2}", p.output_tokens as f64 / d));
    b += &row("Concurrency:", format!("{:.2}", p.e2e.iter().sum::<f64>() / 1000.0 / d));
    b += "----------------End-to-End Latency----------------\n";
    b += &stat_rows("E2E", &p.e2e, "sglang");
    b += "---------------Time to First Token----------------\n";
    b += &stat_rows("TTFT", &p.ttft, "sglang");
    b += "-----Time per Output Token (excl. 1st token)------\n";
    b += &stat_rows("TPOT", if tpot_from_itl { &p.itl } else { &p.tpot }, "sglang");
    b += "---------------Inter-Token Latency----------------\n";
    b += &stat_rows("ITL", &p.itl, "sglang");
    b + "==================================================\n"
}

fn errors(block: &str) -> Vec<String> {
    let runs = normalize_str(block, "sim").unwrap();
    runs[0]
        .checks
        .iter()
        .filter(|c| c.severity == Severity::Error && c.status == Status::Fail)
        .map(|c| format!("{}: {}", c.id, c.message))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn consistent_runs_are_never_rejected(s in scenario()) {
        let p = simulate(&s);
        for block in [vllm_block(&p, true, false), vllm_block(&p, false, false), sglang_block(&p, false)] {
            let e = errors(&block);
            prop_assert!(e.is_empty(), "{e:?}\n{block}");
        }
    }

    #[test]
    fn itl_copied_as_tpot_is_rejected(s in scenario()) {
        let p = simulate(&s);
        prop_assume!(p.chunk_tokens >= 3.0);
        // With E2E printed, decode-within-e2e catches it whatever the load.
        for block in [vllm_block(&p, true, true), sglang_block(&p, true)] {
            let runs = normalize_str(&block, "sim").unwrap();
            prop_assert_eq!(runs[0].verdict, Verdict::Rejected, "{}", block);
        }
        // Without E2E (vLLM's default), decode-capacity catches it when the slots are busy.
        if p.busy >= 0.5 {
            let block = vllm_block(&p, false, true);
            let e = errors(&block);
            prop_assert!(e.iter().any(|m| m.starts_with("decode-capacity")), "{e:?}\n{block}");
        }
    }
}
