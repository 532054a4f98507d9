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

use bench_normalize::normalize_str;
use bench_normalize::report::{Run, Severity, Status, Verdict};
use proptest::prelude::*;

use crate::sim;
use sim::*;

/// Mean, median, P90, P99 as both tools print them; 0 for an empty list (numpy's `or 0`).
fn stats(v: &[f64]) -> [(&'static str, f64); 4] {
    if v.is_empty() {
        return [("Mean", 0.0), ("Median", 0.0), ("P90", 0.0), ("P99", 0.0)];
    }
    [("Mean", mean(v)), ("Median", percentile(v, 50.0)), ("P90", percentile(v, 90.0)), ("P99", percentile(v, 99.0))]
}

fn stat_rows(name: &str, v: &[f64], tool: &str) -> String {
    stat_rows_rounded(name, v, tool, 2)
}

/// The rows printed with `decimals` decimals (a paste retyped with whole milliseconds: 0).
fn stat_rows_rounded(name: &str, v: &[f64], tool: &str, decimals: usize) -> String {
    let mut out = String::new();
    for (label, x) in stats(v) {
        let l = if tool == "sglang" && name == "E2E" {
            format!("{label} E2E Latency (ms):")
        } else {
            format!("{label} {name} (ms):")
        };
        out += &row(&l, format!("{x:.decimals$}"));
    }
    out
}

/// What vLLM prints before its block: the argument dump (the requested output length of the
/// random dataset, the rate and the cap) and the rate and concurrency lines. `rate`: `inf`
/// (closed loop) or a number of requests per second.
fn vllm_preamble(p: &Printed, max_len: usize, rate: &str) -> String {
    format!(
        "Namespace(subparser='bench', bench_type='serve', seed=0, num_prompts={}, dataset_name='random', random_input_len=512, random_output_len={max_len}, random_range_ratio='0.0', max_concurrency={}, request_rate={rate}, percentile_metrics='ttft,tpot,itl')\n\
         INFO Sampling input_len from [512, 512] and output_len from [{max_len}, {max_len}]\n\
         Starting main benchmark run...\n\
         Traffic request rate: {rate}\n\
         Burstiness factor: 1.0 (Poisson process)\n\
         Maximum request concurrency: {}\n",
        p.ok + p.failed,
        p.concurrency,
        p.concurrency
    )
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
    #![proptest_config(ProptestConfig { cases: cases(600), ..ProptestConfig::default() })]

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

    /// Every new bound on an honest run: closed loop with no rate limit (`e2e-capacity`'s lower
    /// side), the requested length in the argument dump (equal lengths from the totals), the
    /// rows' floor (`tpot-bounds`), blocks printed with 2 or 0 decimals, with and without E2E.
    #[test]
    fn honest_runs_pass_every_lower_bound(s in scenario(), whole in any::<bool>(), rate in prop_oneof![Just("inf"), Just("4.0")]) {
        let p = simulate(&s);
        prop_assume!(!p.tpot.is_empty());
        let decimals = if whole { 0 } else { 2 };
        for with_e2e in [true, false] {
            let mut block = vllm_block(&p, with_e2e, Forge::None);
            for name in ["TTFT", "TPOT", "ITL", "E2EL"] {
                let v = match name { "TTFT" => &p.ttft, "TPOT" => &p.tpot, "ITL" => &p.itl, _ => &p.e2e };
                block = block.replace(&stat_rows(name, v, "vllm"), &stat_rows_rounded(name, v, "vllm", decimals));
            }
            let text = vllm_preamble(&p, s.max_len, rate) + &block;
            let run = run_of(&text);
            let e = errors(&run);
            prop_assert!(e.is_empty(), "{e:?}\n{text}");
        }
    }

    /// The seed's mistake in the commonest configuration: a plain vLLM log (no E2E rows) whose
    /// TPOT rows hold the per-chunk ITL, with the requested length stated, is rejected when the
    /// slots were busy (a run mostly idle leaves room for a TPOT three times too slow).
    #[test]
    fn itl_as_tpot_in_a_plain_log_with_stated_lengths_is_caught(
        s in chunky_scenario().prop_map(|s| Scenario { lengths: Lengths::Fixed, failed: 0, ..s })
    ) {
        let p = simulate(&s);
        prop_assume!(p.chunk_tokens >= 3.0 && p.busy >= 0.5);
        let text = vllm_preamble(&p, s.max_len, "inf") + &vllm_block(&p, false, Forge::ItlAsTpot);
        let run = run_of(&text);
        prop_assert_eq!(run.verdict, Verdict::Rejected, "{:?}\n{}", errors(&run), text);
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
        // with E2E by decode-within-e2e and tpot-bounds, without it when the slots are busy, by
        // a capacity rule: decode-capacity (decode work), or e2e-capacity (time in flight) where
        // the decode work of a busy run lands a hair under decode-capacity's 1.5x (a TPOT three
        // times too slow in slots half busy: 1.4998x in a case proptest found).
        if p.output_tokens == p.ok * s.max_len {
            let run = run_of(&dstack_report(&p, s.max_len, true, Forge::ItlAsTpot));
            prop_assert!(failed(&run, "decode-within-e2e") && failed(&run, "tpot-bounds"), "{:?}", errors(&run));
            if p.busy >= 0.5 {
                let run = run_of(&dstack_report(&p, s.max_len, false, Forge::ItlAsTpot));
                prop_assert_eq!(run.verdict, Verdict::Rejected, "{:?}", errors(&run));
                prop_assert!(failed(&run, "decode-capacity") || failed(&run, "e2e-capacity"), "{:?}", errors(&run));
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

/// CI's counterexample to `honest_runs_pass_every_lower_bound`: one request of two tokens whose
/// second token came a minute after the first. The derived TPOT (60042.13 ms) is rounded to six
/// significant digits (60042.1), 0.03 ms below the TPOT rows' floor: that rounding is slack, not
/// a contradiction.
#[test]
fn a_derived_tpot_rounded_to_six_digits_is_not_below_its_rows() {
    let s = Scenario {
        requests: 1,
        failed: 0,
        concurrency: 1,
        tokens_per_chunk: 1,
        tpot_ms: 40.13136536462301,
        ttft_ms: 15.0,
        max_len: 2,
        lengths: Lengths::EarlyEos(0.0),
        latency: Latency::ShortSlow(1956.7146020313567),
        seed: 15233855633184039710,
    };
    let p = simulate(&s);
    for with_e2e in [true, false] {
        let text = vllm_preamble(&p, s.max_len, "inf") + &vllm_block(&p, with_e2e, Forge::None);
        let run = run_of(&text);
        assert!(errors(&run).is_empty(), "{:?}\n{text}", errors(&run));
        // And the figure it keeps is the run's own, to its six digits.
        let m = run.derived.tpot_ms.mean.or(run.reported.stat("tpot_ms").and_then(|s| s.mean()));
        assert!(m.is_some_and(|m| (m - 60042.13).abs() < 0.5), "{m:?}");
    }
}

/// The mean E2E latency of a guidellm console printed `factor` times too large (one decimal of
/// seconds, its "± x" kept).
fn guidellm_e2e_scaled(text: &str, g: &Guidellm, factor: f64) -> String {
    let m = mean(&g.e2e) / 1000.0;
    let line =
        text.lines().find(|l| l.starts_with(&format!("| concurrent@{} ", g.concurrency)) && l.contains(" ± ")).unwrap();
    let printed = format!("| {m:.1} ± ");
    let scaled = format!("| {:.1} ± ", m * factor);
    text.replacen(line, &line.replacen(&printed, &scaled, 1), 1)
}

proptest! {
    // (The halved E2E is only sure to be caught on runs where it moves the derived TPOT past the
    // slack: about one run in five is not, and is left out.)
    #![proptest_config(ProptestConfig { cases: cases(600), max_global_rejects: 100_000, ..ProptestConfig::default() })]

    /// guidellm's console (its ITL token-weighted, `tpot_weighting = "token"`; latency in seconds
    /// with one decimal): honest runs are accepted, and their token-weighted ITL mean is held to
    /// the derived TPOT both ways.
    #[test]
    fn honest_guidellm_consoles_are_accepted(s in scenario()) {
        let p = simulate(&s);
        prop_assume!(!p.tpot.is_empty());
        let g = guidellm_run(&p, &s);
        let text = guidellm_console(&g);
        let run = run_of(&text);
        prop_assert_eq!(run.source.parser.as_str(), "guidellm-console");
        let e = errors(&run);
        prop_assert!(e.is_empty(), "{e:?}\n{text}");
    }

    /// The mean E2E latency halved in an honest guidellm console: the derived TPOT falls below the
    /// ITL mean by more than the rounding allows, and `tpot-bounds` rejects it, whenever the
    /// halving moves the derived TPOT past the printed digits' slack.
    #[test]
    fn guidellm_mean_e2e_halved_is_caught(s in scenario()) {
        let p = simulate(&s);
        prop_assume!(!p.tpot.is_empty());
        let g = guidellm_run(&p, &s);
        let (r, n) = (g.ok as f64, g.output_tokens as f64);
        prop_assume!(n - r >= 1.0);
        let e2e = (mean(&g.e2e) / 1000.0 * 10.0).round() * 100.0;
        let half = (e2e / 2.0 / 100.0).round() * 100.0;
        let ttft = mean(&g.ttft);
        // The derived TPOT moves by (E2E - E2E/2) / (N/R - 1); the slack is the ITL's 0.05, the
        // E2E and TTFT means' rounding and one decode step a request for the ends of stream.
        let itl = g.itl.iter().map(|(x, w)| x * w).sum::<f64>() / (n - r);
        let step = g.itl.iter().map(|x| x.0).fold(itl, f64::max);
        let slack = 0.05 + 50.1 * r / (n - r) + step * r / (n - r);
        prop_assume!(half > ttft + 100.0 && (e2e - half) * r / (n - r) > 2.0 * slack + 0.2);
        let text = guidellm_e2e_scaled(&guidellm_console(&g), &g, 0.5);
        let run = run_of(&text);
        prop_assert!(failed(&run, "tpot-bounds"), "{:?}\n{text}", errors(&run));
        prop_assert_eq!(run.verdict, Verdict::Rejected);
    }
}

/// The simulated console is read as guidellm-s2's capture is: 16 requests of 512 tokens at
/// concurrency 4, TPOT 12.8 ms, TTFT about 137 ms, the figures where the capture has them.
#[test]
fn a_simulated_guidellm_console_reads_as_the_capture() {
    let s = Scenario {
        requests: 16,
        failed: 0,
        concurrency: 4,
        tokens_per_chunk: 10,
        tpot_ms: 12.8,
        ttft_ms: 125.0,
        max_len: 512,
        lengths: Lengths::Fixed,
        latency: Latency::Tight,
        seed: 7,
    };
    let p = simulate(&s);
    let g = guidellm_run(&p, &s);
    let text = guidellm_console(&g);
    let run = run_of(&text);
    assert_eq!(run.source.parser, "guidellm-console", "{text}");
    assert_eq!(run.source.variant.as_deref(), Some("0.8"));
    assert!(errors(&run).is_empty(), "{:?}\n{text}", errors(&run));
    let tpot = run.reported.stat("tpot_ms").and_then(|s| s.mean()).unwrap();
    assert!((tpot - (p.token_weighted * 10.0).round() / 10.0).abs() < 1e-9, "{tpot} vs {}", p.token_weighted);
    let check = run.checks.iter().find(|c| c.id == "tpot-bounds").unwrap();
    assert_eq!(check.status, Status::Pass);
    assert!(check.message.contains("= the rows' mean"), "{}", check.message);
    assert_eq!(run.derived.tpot_ms.verified, Some(true));
    // Halved, the mean E2E is caught; as printed, the derived TPOT is within 2% of the truth.
    let derived = run.derived.tpot_ms.mean.unwrap();
    assert!((derived - p.token_weighted).abs() < 0.02 * p.token_weighted, "{derived}");
    let halved = run_of(&guidellm_e2e_scaled(&text, &g, 0.5));
    assert!(failed(&halved, "tpot-bounds"), "{:?}", errors(&halved));
}
