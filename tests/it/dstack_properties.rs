//! Property test of `--format dstack` (emit::dstack): over simulated vLLM runs (random lengths,
//! early stops, per-request TPOTs that differ by up to 4x, failed requests, TPOT rows that are
//! the per-chunk ITL), a run is either written as dstack accepts it, with dstack's definitions and
//! no figure of another source, or refused with a message saying how to get what is missing.

use bench_normalize::normalize_str;
use proptest::prelude::*;

use crate::sim;
use sim::{Rng, cases, percentile, row};

fn stats(label: &str, v: &[f64]) -> String {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    [("Mean", mean), ("Median", percentile(v, 50.0)), ("P99", percentile(v, 99.0))]
        .iter()
        .map(|(s, x)| format!("{:<40} {x:.2}\n", format!("{s} {label} (ms):")))
        .collect()
}

/// A vLLM 0.33 log: the argument dump, then the block with E2E rows. Returns the log and the
/// printed mean and percentiles of its TPOT rows.
fn log(
    requests: usize,
    failed: usize,
    concurrency: usize,
    spread: f64,
    k: usize,
    copied_itl: bool,
    seed: u64,
) -> (String, [f64; 3]) {
    let mut rng = Rng(seed | 1);
    let (mut ttft, mut tpot, mut itl, mut e2e, mut out) = (vec![], vec![], vec![], vec![], 0usize);
    for _ in 0..requests {
        // Early stops: some requests end after a few tokens.
        let n = if rng.next() < 0.2 { 2 + (rng.next() * 4.0) as usize } else { 64 + (rng.next() * 448.0) as usize };
        let t = 10.0 * (1.0 + spread * rng.next());
        let f = 50.0 + 100.0 * rng.next();
        let mut left = n - 1;
        while left > 0 {
            let c = left.min(k);
            itl.push(c as f64 * t);
            left -= c;
        }
        ttft.push(f);
        tpot.push(t);
        e2e.push(f + (n - 1) as f64 * t);
        out += n;
    }
    let duration = e2e.iter().sum::<f64>() / 1000.0 / concurrency.min(requests) as f64 + 0.5;
    let tpot_rows = if copied_itl { &itl } else { &tpot };
    let shown = |x: f64| format!("{x:.2}").parse::<f64>().unwrap();
    let printed = [
        shown(tpot_rows.iter().sum::<f64>() / tpot_rows.len() as f64),
        shown(percentile(tpot_rows, 50.0)),
        shown(percentile(tpot_rows, 99.0)),
    ];
    let mut b = format!(
        "Namespace(subparser='bench', num_prompts={}, dataset_name='random', backend='openai', endpoint='/v1/completions', max_concurrency={concurrency})\n",
        requests + failed
    );
    b += "============ Serving Benchmark Result ============\n";
    b += &row("Successful requests:", requests.to_string());
    b += &row("Failed requests:", failed.to_string());
    b += &row("Maximum request concurrency:", concurrency.to_string());
    b += &row("Benchmark duration (s):", format!("{duration:.2}"));
    b += &row("Total input tokens:", (512 * requests).to_string());
    b += &row("Total generated tokens:", out.to_string());
    b += &row("Request throughput (req/s):", format!("{:.2}", requests as f64 / duration));
    b += &row("Output token throughput (tok/s):", format!("{:.2}", out as f64 / duration));
    b += "---------------Time to First Token----------------\n";
    b += &stats("TTFT", &ttft);
    b += "-----Time per Output Token (excl. 1st token)------\n";
    b += &stats("TPOT", tpot_rows);
    b += "---------------Inter-token Latency----------------\n";
    b += &stats("ITL", &itl);
    b += "----------------End-to-end Latency----------------\n";
    b += &stats("E2EL", &e2e);
    (b + "==================================================\n", printed)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), ..ProptestConfig::default() })]

    #[test]
    fn dstack_output_is_what_dstack_accepts_or_refused_with_how(
        requests in 1usize..40, failed in 0usize..3, concurrency in 1usize..64, spread in 0.0f64..3.0,
        k in 1usize..12, copied_itl in any::<bool>(), seed in any::<u64>(),
    ) {
        let (text, tool) = log(requests, failed, concurrency, spread, k, copied_itl, seed);
        let run = normalize_str(&text, "sim").unwrap().remove(0);
        match bench_normalize::emit::dstack(&run) {
            Ok(m) => {
                prop_assert_eq!(failed, 0, "a run with failed requests is never written");
                prop_assert_eq!(m["failed_requests"].as_u64(), Some(0));
                prop_assert_eq!(m["successful_requests"].as_u64(), Some(requests as u64));
                // TPOT from the derivation, percentiles only from rows whose mean agrees with it.
                let mean = m["tpot_ms"]["mean"].as_f64().unwrap();
                prop_assert_eq!(Some(mean), run.derived.tpot_ms.mean);
                prop_assert!((tool[0] - mean).abs() <= 0.01 * mean, "tool mean {} beside derived {}", tool[0], mean);
                prop_assert_eq!(m["tpot_ms"]["p50"].as_f64(), Some(tool[1]));
                prop_assert_eq!(m["tpot_ms"]["p99"].as_f64(), Some(tool[2]));
                // dstack's definitions.
                let (n, d) = (m["total_output_tokens"].as_f64().unwrap(), m["duration_seconds"].as_f64().unwrap());
                let rate = m["output_tok_per_s"].as_f64().unwrap();
                prop_assert!((rate - n / d).abs() <= 1e-5 * rate);
                let per_user = m["per_user_tok_per_s"].as_f64().unwrap();
                prop_assert!((per_user - rate / concurrency as f64).abs() <= 1e-5 * per_user);
                for (_, v) in m.as_object().unwrap() {
                    let numbers: Vec<f64> = match v {
                        serde_json::Value::Object(o) => o.values().map(|x| x.as_f64().unwrap()).collect(),
                        x => vec![x.as_f64().unwrap()],
                    };
                    prop_assert!(numbers.iter().all(|x| x.is_finite() && *x >= 0.0));
                }
            }
            Err(u) => {
                let msg = u.message();
                prop_assert!(!u.problems.is_empty() && (msg.contains("to get them") || msg.contains("run it again")), "{}", msg);
                if failed > 0 {
                    prop_assert!(msg.contains("requests failed"), "{}", msg);
                }
            }
        }
    }
}

/// Both outcomes occur over the simulated runs (the property above is not vacuous): equal
/// per-request TPOTs are written, widely spread ones with early stops are refused (the tool's
/// request-weighted rows then disagree with the derived mean), as are copied per-chunk ITLs.
#[test]
fn both_outcomes_occur() {
    let outcome = |spread: f64, k: usize, copied: bool, seed: u64| {
        let (text, _) = log(30, 0, 8, spread, k, copied, seed);
        bench_normalize::emit::dstack(&normalize_str(&text, "sim").unwrap()[0]).is_ok()
    };
    let seeds = 1..40u64;
    let written = seeds.clone().filter(|s| outcome(0.0, 1, false, *s)).count();
    let spread = seeds.clone().filter(|s| outcome(3.0, 1, false, *s)).count();
    let copied = seeds.clone().filter(|s| outcome(0.0, 8, true, *s)).count();
    assert!(written > 30, "{written}");
    assert!(spread < 10, "{spread}");
    assert_eq!(copied, 0);
}
