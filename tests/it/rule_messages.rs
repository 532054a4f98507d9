//! What each consistency rule says when it passes or cannot run. `tests/it/validation.rs` asserts
//! the failures' messages; the per-sample snapshots hold no message at all (they are one file of
//! lines, `snapshots/sample-checks.snap`: `tests/it/snapshots.rs`), so the wording and figures of
//! the passes and the skips most runs carry are asserted here, on a real log and on a bare run.

use crate::common;

use bench_normalize::normalize_str;
use bench_normalize::report::{RuleStage, Run, Status};
use serde_json::json;

fn said<'r>(run: &'r Run, id: &str) -> (Status, &'r str) {
    let c = run.checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no check {id}"));
    (c.status, c.message.as_str())
}

/// vllm bench serve's block in `captured/vllm-s2.stdout.txt` (lines 17 to 45): 16 requests of
/// 512 tokens at concurrency 4, TTFT, TPOT, ITL and E2E blocks of mean, median and p99 each.
#[test]
fn a_captured_vllm_run_says_what_each_passing_rule_held() {
    let log = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap();
    let run = &normalize_str(&log, "vllm-s2").unwrap()[0];
    for (id, message) in [
        (
            "key-figures",
            "usable: TPOT (derived.tpot_ms.mean, or the TPOT rows), TTFT (reported.ttft_ms), E2E latency \
             (reported.e2e_ms), output throughput, request throughput",
        ),
        (
            "complete-block",
            "the block is complete: it ends at line 45 (its closing line, or the last line of its tables)",
        ),
        // TTFT against E2E, and the 4 blocks.
        ("latency-order", "TTFT <= E2E and every statistic block is ordered (5 checked)"),
        ("distribution-possible", "4 statistic blocks are possible for non-negative values"),
        // 6 of the workload (prompts, concurrency, burstiness, input, output and prefix lengths),
        // 5 totals, 12 statistics and 5 rates.
        ("finite-values", "28 numbers, all finite and non-negative, counts whole"),
        // The derived decode rate, 1000 / the derived and the printed TPOT, mean TTFT and E2E.
        ("physical-range", "5 figures within physically possible ranges"),
        ("failed-requests", "no failed requests"),
    ] {
        assert_eq!(said(run, id), (Status::Pass, message), "{id}");
    }
    // The bounds of the derived TPOT, (6681.67 - 139.89) / (8192 / 16 - 1) = 12.8 ms, and why the
    // two means must be equal.
    let (s, m) = said(run, "tpot-bounds");
    assert_eq!(s, Status::Pass, "{m}");
    for part in [
        "derived TPOT 12.8 ms (e2e-ttft-tokens) >= 12.56 ms, the smallest per-request TPOT the rows allow, <= 1.5 x (p99 12.81",
        "/ 8176 decode tokens) + one-token requests' ends = 20.69 ms, = the rows' mean 12.8 ms",
        "so the request- and token-weighted means are equal",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    // A closed loop: the duration bounded from above too.
    let (s, m) = said(run, "e2e-capacity");
    assert_eq!(s, Status::Pass, "{m}");
    assert!(
        m.starts_with("16 requests x E2E 6681.67 ms = 106.91 s in flight; 4 slots x 26.73 s = 106.92 s (1.00x)"),
        "{m}"
    );
    assert!(
        m.contains("closed loop, no rate limit: the run lasts at most 16 requests x E2E 6681.67 ms / 4 slots"),
        "{m}"
    );
    assert!(m.ends_with("= 31.74 s (+5% and 0.7 s of the client's own time: 34.03 s) vs 26.73 s"), "{m}");
    // One count of output tokens (the server's), no per-request arrays in a stdout log.
    assert_eq!(said(run, "token-count-source"), (Status::Skipped, "only one output token count, from the server"));
    assert_eq!(said(run, "per-request-consistency"), (Status::Skipped, "no per-request arrays"));
}

/// A per-chunk ITL within 1.3x of TPOT: about one token per chunk.
#[test]
fn an_itl_near_tpot_is_one_token_per_chunk() {
    let run = json!({
        "source": { "semantics": { "itl": "chunk" } },
        "totals": { "successful_requests": 16, "duration_s": 26.74, "output_tokens": 8192 },
        "reported": { "ttft_ms": { "mean": 140.14 }, "e2e_ms": { "mean": 6682.24 }, "itl_ms": { "mean": 13.0 } }
    });
    let runs = normalize_str(&run.to_string(), "case.json").unwrap();
    // Derived TPOT (6682.24 - 140.14) / (8192 / 16 - 1) = 12.8 ms; 13 / 12.8 = 1.02.
    assert_eq!(
        said(&runs[0], "itl-is-per-chunk"),
        (Status::Pass, "mean ITL 13 ms is 1.02x TPOT 12.8 ms: about one token per chunk")
    );
}

/// A run that gives only its concurrency and request count: every rule it carries is skipped, never passed, and
/// says what it lacks.
#[test]
fn a_bare_run_says_what_each_rule_needs() {
    let bare = json!({ "workload": { "max_concurrency": 4 }, "totals": { "successful_requests": 4 } });
    let runs = normalize_str(&bare.to_string(), "bare.json").unwrap();
    let skipped = [
        ("complete-block", "not a text block"),
        ("decode-capacity", "no TPOT claimed (no TPOT row)"),
        ("decode-within-e2e", "needs a TPOT and the longest E2E latency or the duration"),
        ("tpot-bounds", "no TPOT rows to compare with"),
        ("e2e-capacity", "needs successful requests, mean E2E latency and duration"),
        ("latency-order", "no latency statistics"),
        ("distribution-possible", "no statistic block with a mean"),
        ("physical-range", "no TPOT, rate or latency"),
        ("throughput-totals", "no duration"),
        ("tpot-agreement", "no TPOT claimed (no TPOT row)"),
        ("itl-is-per-chunk", "no mean ITL"),
        ("token-count-source", "only one output token count"),
        ("failed-requests", "the tool printed no failure count"),
        ("per-request-consistency", "no per-request arrays"),
    ];
    for (id, message) in skipped {
        assert_eq!(said(&runs[0], id), (Status::Skipped, message), "{id}");
    }
    // The other two: nothing usable, and the two numbers there are.
    let (s, m) = said(&runs[0], "key-figures");
    assert_eq!(s, Status::Fail);
    assert!(m.starts_with("no usable key figure: missing TPOT"), "{m}");
    assert_eq!(said(&runs[0], "finite-values"), (Status::Pass, "2 numbers, all finite and non-negative, counts whole"));
    // Every check of the validation stage is one of these: a rule added to it is said here too.
    let named: Vec<&str> = skipped.iter().map(|(id, _)| *id).chain(["key-figures", "finite-values"]).collect();
    let carried: Vec<&str> =
        runs[0].checks.iter().filter(|c| c.id.stage() == RuleStage::Validate).map(|c| c.id.as_str()).collect();
    assert_eq!(carried.len(), named.len(), "{carried:?}");
    assert!(carried.iter().all(|id| named.contains(id)), "{carried:?}");
}
