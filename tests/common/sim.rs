//! Benchmark runs simulated the way vLLM and SGLang compute their figures, for the property tests
//! (tests/it/no_false_rejections.rs, tests/it/dstack_properties.rs): the scenario strategy, the
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
    /// Each successful request's output tokens and decode time (first token to last, or to the
    /// end of stream for a one-token answer), ms, in order.
    pub lens: Vec<usize>,
    pub decode: Vec<f64>,
}

pub fn simulate(s: &Scenario) -> Printed {
    let mut rng = Rng(s.seed | 1);
    let (mut ttft, mut tpot, mut itl, mut e2e, mut lens) = (vec![], vec![], vec![], vec![], vec![]);
    let mut decode = vec![];
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
        decode.push(d);
        ttft.push(f);
        e2e.push(f + d);
        lens.push(n);
    }
    let duration_s = closed_loop(&e2e, s.failed, s.concurrency) + rng.between(0.0, 0.3);
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
        lens,
        decode,
    }
}

/// The end of a closed-loop run, s: each request takes the first free slot of `concurrency`
/// (failed ones hold a slot briefly).
fn closed_loop(e2e: &[f64], failed: usize, concurrency: usize) -> f64 {
    let slots = concurrency.min(e2e.len() + failed);
    let mut free: BinaryHeap<Reverse<u64>> = (0..slots).map(|_| Reverse(0)).collect();
    let mut end = 0u64;
    let micros = |ms: f64| (ms * 1000.0).round() as u64;
    for ms in e2e.iter().copied().chain(std::iter::repeat_n(5.0, failed)) {
        let Reverse(start) = free.pop().expect("a slot");
        let done = start + micros(ms);
        end = end.max(done);
        free.push(Reverse(done));
    }
    end as f64 / 1e6
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

/// A run as guidellm 0.8 measures it (its benchmarks.json's per-request stats): each request's
/// latency ends with its response, a moment after its last token (within a quarter of an
/// ordinary decode step, as a one-token answer's end of stream, already in its decode time).
pub struct Guidellm {
    pub ok: usize,
    pub failed: usize,
    pub concurrency: usize,
    pub duration_s: f64,
    pub input_tokens: usize,
    pub output_tokens: usize,
    /// Per request: TTFT and E2E latency (ms), and output tokens.
    pub ttft: Vec<f64>,
    pub e2e: Vec<f64>,
    pub lens: Vec<usize>,
    /// Per request with 2+ tokens: `(last - first) / (n - 1)`, and its decode tokens.
    pub itl: Vec<(f64, f64)>,
    /// Per request: `(last - start) / n`, and its output tokens.
    pub tpot: Vec<(f64, f64)>,
}

pub fn guidellm_run(p: &Printed, s: &Scenario) -> Guidellm {
    let mut rng = Rng(s.seed.rotate_left(17) | 1);
    let (mut e2e, mut itl, mut tpot) = (vec![], vec![], vec![]);
    for ((&n, &d), &f) in p.lens.iter().zip(&p.decode).zip(&p.ttft) {
        let tail = if n >= 2 { 0.25 * rng.next() * s.tpot_ms } else { 0.0 };
        e2e.push(f + d + tail);
        if n >= 2 {
            itl.push((d / (n - 1) as f64, (n - 1) as f64));
            tpot.push(((f + d) / n as f64, n as f64));
        } else {
            tpot.push((f, 1.0));
        }
    }
    Guidellm {
        ok: p.ok,
        failed: p.failed,
        concurrency: p.concurrency,
        duration_s: closed_loop(&e2e, p.failed, p.concurrency) + rng.between(0.0, 0.3),
        input_tokens: p.input_tokens,
        output_tokens: p.output_tokens,
        ttft: p.ttft.clone(),
        e2e,
        lens: p.lens.clone(),
        itl,
        tpot,
    }
}

/// guidellm's percentile: the inverted CDF over the values counted by their weights (numpy's
/// `inverted_cdf`: the smallest value whose cumulative weight reaches `q` of the total).
pub fn weighted_percentile(v: &[(f64, f64)], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = s.iter().map(|x| x.1).sum();
    let mut cum = 0.0;
    for (x, w) in &s {
        cum += w;
        if cum >= q * total * (1.0 - 1e-12) {
            return *x;
        }
    }
    s.last().map_or(0.0, |x| x.0)
}

fn weighted_mean(v: &[(f64, f64)]) -> f64 {
    let total: f64 = v.iter().map(|x| x.1).sum();
    if total > 0.0 { v.iter().map(|(x, w)| x * w).sum::<f64>() / total } else { 0.0 }
}

/// One ruled table as guidellm's console draws it: header lines of `(text, span)` cells (a cell
/// spanning `k` columns is their widths together, then `k` bars), then the data row.
fn ruled_table(title: &str, headers: &[Vec<(&str, usize)>], row: &[String]) -> String {
    let mut w: Vec<usize> = row.iter().map(|c| c.chars().count() + 2).collect();
    for line in headers {
        let mut at = 0;
        for (text, span) in line {
            let need = text.chars().count() + 2;
            let have: usize = w[at..at + span].iter().sum();
            if need > have {
                w[at + span - 1] += need - have;
            }
            at += span;
        }
    }
    let rule = |c: char| format!("|{}\n", w.iter().map(|n| c.to_string().repeat(*n) + "|").collect::<String>());
    let mut out = format!("\n\nℹ {title}\n{}", rule('='));
    for line in headers {
        out.push('|');
        let mut at = 0;
        for (text, span) in line {
            let width: usize = w[at..at + span].iter().sum::<usize>() - 2;
            out += &format!(" {text:<width$} {}", "|".repeat(*span));
            at += span;
        }
        out.push('\n');
    }
    out += &rule('-');
    out.push('|');
    for (cell, width) in row.iter().zip(&w) {
        out += &format!(" {cell:<0$} |", width - 2);
    }
    out + "\n" + &rule('=')
}

/// A mean as guidellm prints it beside its 95% confidence half-width: `140.8 ± 1.8`.
fn with_ci(mean: f64, sample: &[f64], scale: f64) -> String {
    let n = sample.len() as f64;
    let var = if n > 1.0 { sample.iter().map(|x| (x - mean * scale).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    let ci = 2.0 * var.sqrt() / n.sqrt() / scale;
    if ci < 0.1 { format!("{mean:.1} ± {ci:.3}") } else { format!("{mean:.1} ± {ci:.1}") }
}

/// guidellm 0.8's console tables of the run (samples/peers/guidellm-s2.stdout.txt): latency in
/// seconds and the rest in ms with one decimal, `*` beside a percentile guidellm has too few
/// samples to give an interval for; its rates over its own window.
pub fn guidellm_console(g: &Guidellm) -> String {
    let d = g.duration_s;
    let strategy = format!("concurrent@{}", g.concurrency);
    let one = |v: &[f64]| v.iter().map(|x| (*x, 1.0)).collect::<Vec<_>>();
    let star = if g.ok < 20 { "*" } else { "" };
    let e2e_s: Vec<f64> = g.e2e.iter().map(|x| x / 1000.0).collect();
    let e2e_mean = mean(&e2e_s);
    let ttft_mean = mean(&g.ttft);
    let dist = |v: &[(f64, f64)], scale: f64| {
        [
            format!("{:.1}", weighted_percentile(v, 0.5) / scale),
            format!("{:.1}{star}", weighted_percentile(v, 0.95) / scale),
        ]
    };
    let mut text = String::from(
        "✔ Setup complete, starting benchmarks...\n\n26-11-29 20:03:08|INFO     |guidellm.benchmark.benchmarker:run:116 - Starting benchmark\n",
    );
    let span = |names: &[&'static str]| names.iter().map(|n| (*n, 1)).collect::<Vec<_>>();
    text += &ruled_table(
        "Run Summary Info",
        &[
            [("Benchmark", 1), ("Timings", 5), ("Requests", 3), ("Input Tokens", 3), ("Output Tokens", 3)].to_vec(),
            span(&[
                "Strategy", "Start", "End", "Dur", "Warm", "Cool", "Comp", "Inc", "Err", "Comp", "Inc", "Err", "Comp",
                "Inc", "Err",
            ]),
            span(&["", "", "", "Sec", "Sec", "Sec", "Tot", "Tot", "Tot", "Tot", "Tot", "Tot", "Tot", "Tot", "Tot"]),
        ],
        &[
            strategy.clone(),
            "20:03:12".into(),
            "20:03:39".into(),
            format!("{d:.1}"),
            "0.0".into(),
            "0.0".into(),
            g.ok.to_string(),
            "0".into(),
            g.failed.to_string(),
            format!("{:.1}", g.input_tokens as f64),
            "0.0".into(),
            "0.0".into(),
            format!("{:.1}", g.output_tokens as f64),
            "0.0".into(),
            "0.0".into(),
        ],
    );
    let [e50, e95] = dist(&one(&e2e_s), 1.0);
    let [t50, t95] = dist(&one(&g.ttft), 1.0);
    let [i50, i95] = dist(&g.itl, 1.0);
    let [p50, p95] = dist(&g.tpot, 1.0);
    let mut row = vec![strategy.clone(), with_ci(e2e_mean, &g.e2e, 1000.0), e50, e95];
    row.extend([
        with_ci(ttft_mean, &g.ttft, 1.0),
        t50.clone(),
        t95.clone(),
        with_ci(ttft_mean, &g.ttft, 1.0),
        t50,
        t95,
    ]);
    row.extend([format!("{:.1}", weighted_mean(&g.itl)), i50, i95.trim_end_matches('*').into()]);
    row.extend([format!("{:.1}", weighted_mean(&g.tpot)), p50, p95.trim_end_matches('*').into()]);
    text += &ruled_table(
        "Request Latency Statistics (Completed Requests)",
        &[
            [("Benchmark", 1), ("Request Latency", 3), ("TTFT", 3), ("TTFOT", 3), ("ITL", 3), ("TPOT", 3)].to_vec(),
            [("Strategy", 1), ("Sec", 3), ("ms", 3), ("ms", 3), ("ms", 3), ("ms", 3)].to_vec(),
            span(&[
                "", "Mean", "Mdn", "p95", "Mean", "Mdn", "p95", "Mean", "Mdn", "p95", "Mean", "Mdn", "p95", "Mean",
                "Mdn", "p95",
            ]),
        ],
        &row,
    );
    if !star.is_empty() {
        text += "* confidence interval unavailable at this sample size\n";
    }
    let in_flight = g.e2e.iter().sum::<f64>() / 1000.0 / d;
    text += &ruled_table(
        "Server Throughput Statistics (All Requests)",
        &[
            [("Benchmark", 1), ("Requests", 3), ("Input Tokens", 1), ("Output Tokens", 1), ("Total Tokens", 1)]
                .to_vec(),
            [("Strategy", 1), ("Concurrency", 2), ("Per Sec", 1), ("Per Sec", 1), ("Per Sec", 1), ("Per Sec", 1)]
                .to_vec(),
            [("", 1), ("Mdn", 1), ("Mean", 1), ("Mean", 4)].to_vec(),
        ],
        &[
            strategy,
            format!("{:.1}", in_flight.round()),
            format!("{in_flight:.1}"),
            format!("{:.1}", g.ok as f64 / d),
            format!("{:.1}", g.input_tokens as f64 / d),
            format!("{:.1}", g.output_tokens as f64 / d),
            format!("{:.1}", (g.input_tokens + g.output_tokens) as f64 / d),
        ],
    );
    text + "\n\n\n✔ Benchmarking complete, generated 1 benchmark(s)\n"
}
