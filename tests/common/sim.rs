//! Benchmark runs simulated the way vLLM and SGLang compute their figures, for the property tests
//! (tests/no_false_rejections.rs, tests/dstack_properties.rs): the scenario strategy, the
//! simulation, and the statistics as the tools print them. Included with `#[path] mod sim;`.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
pub enum Lengths {
    /// Every request `max_len` tokens (`ignore_eos`).
    Fixed,
    /// Uniform in `max_len / 2 ..= max_len`.
    Uniform,
    /// Early EOS: a share of the requests stop after 1-3 tokens, the others uniform in
    /// `2 ..= max_len`.
    EarlyEos(f64),
}

#[derive(Debug, Clone, Copy)]
pub enum Latency {
    /// Each request's TPOT within +-15% of the base.
    Tight,
    /// Log-normal around the base (sigma 0.3-2).
    HeavyTail(f64),
    /// Requests of at most 3 tokens wait up to `x` times the base per token (queueing after
    /// the first token), the others tight.
    ShortSlow(f64),
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub requests: usize,
    pub failed: usize,
    pub concurrency: usize,
    pub tokens_per_chunk: usize,
    pub tpot_ms: f64,
    pub ttft_ms: f64,
    pub max_len: usize,
    pub lengths: Lengths,
    pub latency: Latency,
    pub seed: u64,
}

pub fn lengths() -> impl Strategy<Value = Lengths> {
    prop_oneof![Just(Lengths::Fixed), Just(Lengths::Uniform), (0.0f64..0.9).prop_map(Lengths::EarlyEos)]
}

pub fn latency() -> impl Strategy<Value = Latency> {
    prop_oneof![
        Just(Latency::Tight),
        (0.3f64..2.0).prop_map(Latency::HeavyTail),
        (2.0f64..2000.0).prop_map(Latency::ShortSlow)
    ]
}

pub fn scenario() -> impl Strategy<Value = Scenario> {
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
pub fn chunky_scenario() -> impl Strategy<Value = Scenario> {
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

/// The number of cases a property runs: `default` in the test suite, `PROPTEST_CASES` when set
/// (a long local or nightly run: `PROPTEST_CASES=20000 cargo test --release --test
/// no_false_rejections`).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A small deterministic generator (xorshift), so a failing case replays exactly.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn between(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    /// A standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u = self.next().max(1e-12);
        let v = self.next();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// What both tools print, computed as they compute it.
pub struct Printed {
    pub ok: usize,
    pub failed: usize,
    pub concurrency: usize,
    pub duration_s: f64,
    pub output_tokens: usize,
    pub input_tokens: usize,
    pub ttft: Vec<f64>,
    /// Per-request TPOT of the requests with 2+ tokens (the tools leave the others out).
    pub tpot: Vec<f64>,
    pub itl: Vec<f64>,
    pub e2e: Vec<f64>,
    /// Streamed chunks, first ones included, over all requests.
    pub chunks: usize,
    /// Tokens per chunk after the first, over all requests.
    pub chunk_tokens: f64,
    /// The token-weighted TPOT: decode time over decode tokens.
    pub token_weighted: f64,
    /// Every request has the same length.
    pub equal_lengths: bool,
    /// Decode work over the slots' time.
    pub busy: f64,
}

pub fn simulate(s: &Scenario) -> Printed {
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

pub fn percentile(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let r = p / 100.0 * (s.len() - 1) as f64;
    let (lo, hi) = (r.floor() as usize, r.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (r - lo as f64)
}

pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

pub fn row(label: &str, value: String) -> String {
    format!("{label:<40} {value:<10}\n")
}
