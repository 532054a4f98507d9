//! The rules' per-tool knowledge is definition data: `[semantics] rates` says which printed rates
//! `throughput-totals` holds to the totals, `[semantics] percentiles` whether the percentiles are
//! numpy's (the bounds of `distribution-possible` and `decode-within-e2e`). Each test reads one
//! block with a definition written here, with and without the key, and shows the rule follow it.
//! A stored report that predates the keys is checked as it was when it was written.

use crate::common;

use std::path::PathBuf;

use bench_normalize::report::Status;
use bench_normalize::{Definitions, Options, Run, normalize};
use serde_json::Value;

/// A toy client's definition, with `semantics` added to its `[semantics]` table and `variant` to
/// its one variant.
fn definition(semantics: &str, variant: &str) -> String {
    format!(
        r#"id = "toysem"
tool = "toysem"
format = "stdout"
description = "toysem result block (a test definition)"

[block]
banner = '^-+ toysem results -+$'
end = '^-+$'

[semantics]
itl = "chunk"
output_tokens = "server"
{semantics}

[[variant]]
id = "1"
description = "toysem 1.x"
has = ["requests ok:"]
{variant}

[[row]]
label = "requests ok:"
field = "totals.successful_requests"

[[row]]
label = "requests failed:"
field = "totals.failed_requests"

[[row]]
label = "duration (s):"
field = "totals.duration_s"

[[row]]
label = "input tokens:"
field = "totals.input_tokens"

[[row]]
label = "output tokens:"
field = "totals.output_tokens"

[[row]]
label = "request rate (req/s):"
field = "reported.request_per_s"

[[row]]
label = "input rate (tok/s):"
field = "reported.input_tok_per_s"

[[row]]
label = "output rate (tok/s):"
field = "reported.output_tok_per_s"

[[row]]
label = "ttft {{stat}} (ms):"
field = "reported.ttft_ms"

[[row]]
label = "tpot {{stat}} (ms):"
field = "reported.tpot_ms"

[[row]]
label = "latency {{stat}} (ms):"
field = "reported.e2e_ms"
"#
    )
}

/// A fresh directory holding `text` as its one definition.
fn dir_with(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bn-semantics-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("toysem.toml"), text).unwrap();
    dir
}

/// The definitions of `text` over the built-ins, or the error loading them gives.
fn load(name: &str, text: &str) -> Result<Definitions, String> {
    let dir = dir_with(name, text);
    let defs = Definitions::with_dir(&dir).map_err(|e| e.to_string());
    let _ = std::fs::remove_dir_all(&dir);
    defs
}

/// The one run of `block` (the rows between the banner and the closing line) read with `defs`.
fn read(defs: &Definitions, rows: &str) -> Run {
    let text = format!("---------- toysem results ----------\n{rows}--------------------------------------\n");
    let runs = read_all(defs, text.as_bytes(), false);
    assert_eq!(runs.len(), 1, "{text}");
    runs.into_iter().next().unwrap()
}

fn read_all(defs: &Definitions, bytes: &[u8], reports_only: bool) -> Vec<Run> {
    let opts = Options { definitions: defs, reports_only, ..Options::default() };
    let mut runs = Vec::new();
    normalize(bytes, "toysem.txt", &opts, &mut |r| {
        runs.push(r);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    runs
}

/// The outcome and message of rule `id` on `run`.
fn rule(run: &Run, id: &str) -> (Status, String) {
    let c = run.checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no check {id}"));
    (c.status, c.message.clone())
}

/// 16 requests, 16,384 input and 8,192 output tokens in `duration` s; the rates as vLLM prints
/// them for 26.75 s (16 / 26.75 = 0.598, 16384 / 26.75 = 612.486, 8192 / 26.75 = 306.243).
fn rates_block(duration: &str, input_rate: &str) -> String {
    format!(
        "requests ok:          16\nrequests failed:      0\nduration (s):         {duration}\ninput tokens:         16384\noutput tokens:        8192\nrequest rate (req/s): 0.60\ninput rate (tok/s):   {input_rate}\noutput rate (tok/s):  306.24\n"
    )
}

#[test]
fn own_window_rates_skip_throughput_totals_that_otherwise_reject_a_retyped_duration() {
    let plain = load("plain", &definition("", "")).unwrap();
    let own = load("own", &definition(r#"rates = "own-window""#, "")).unwrap();
    // 26.75 s retyped as 2.675 s: 8,192 tokens over it are 3,062 tok/s, not the printed 306.24.
    let retyped = rates_block("2.675", "612.49");
    let (status, msg) = rule(&read(&plain, &retyped), "throughput-totals");
    assert_eq!(status, Status::Fail, "{msg}");
    let run = read(&own, &retyped);
    let (status, msg) = rule(&run, "throughput-totals");
    assert_eq!(status, Status::Skipped, "{msg}");
    assert!(msg.contains("not its printed totals over its printed duration"), "{msg}");
    assert_eq!(serde_json::to_value(&run).unwrap()["source"]["semantics"]["rates"], "own-window");
    // The honest duration passes without the key.
    assert_eq!(rule(&read(&plain, &rates_block("26.75", "612.49")), "throughput-totals").0, Status::Pass);
}

#[test]
fn all_rates_hold_the_input_rate_to_the_input_total() {
    let plain = load("plain-in", &definition("", "")).unwrap();
    let all = load("all", &definition(r#"rates = "all""#, "")).unwrap();
    // An input rate printed ten times too large (6124.86 for 612.49).
    let wrong = rates_block("26.75", "6124.86");
    let (status, msg) = rule(&read(&plain, &wrong), "throughput-totals");
    assert_eq!(status, Status::Pass, "without the key the input rate is not held to its total: {msg}");
    assert!(!msg.contains("input tokens"), "{msg}");
    let (status, msg) = rule(&read(&all, &wrong), "throughput-totals");
    assert_eq!(status, Status::Fail, "{msg}");
    assert!(msg.contains("6124.86 vs 16384 input tokens / 26.75 s"), "{msg}");
    // The right one passes, and was tested.
    let (status, msg) = rule(&read(&all, &rates_block("26.75", "612.49")), "throughput-totals");
    assert_eq!(status, Status::Pass, "{msg}");
    assert!(msg.contains("input tokens"), "{msg}");
}

#[test]
fn a_variant_overrides_the_rates_of_its_definition() {
    let defs = load("variant", &definition(r#"rates = "all""#, r#"rates = "own-window""#)).unwrap();
    let run = read(&defs, &rates_block("2.675", "612.49"));
    assert_eq!(rule(&run, "throughput-totals").0, Status::Skipped);
}

#[test]
fn numpy_percentiles_bound_a_mean_ttft_from_above() {
    let plain = load("plain-p", &definition("", "")).unwrap();
    let numpy = load("numpy", &definition(r#"percentiles = "numpy-linear""#, "")).unwrap();
    // docs/metrics.md's example: over 16 requests numpy's P99 lies between the two largest values,
    // so 15 TTFTs are at most 145.44 ms and the 16th at most the longest E2E, 7,868 ms: the mean
    // is at most (15 x 145.44 + 7868) / 16 = 628.1 ms, not 1398.90.
    let rows = "requests ok:          16\nduration (s):         26.75\noutput tokens:        8192\nttft mean (ms):       1398.90\nttft p99 (ms):        145.44\nlatency mean (ms):    3000.00\nlatency max (ms):     7868.00\n";
    let (status, msg) = rule(&read(&plain, rows), "distribution-possible");
    assert_eq!(status, Status::Pass, "an unknown percentile method bounds nothing from above: {msg}");
    let (status, msg) = rule(&read(&numpy, rows), "distribution-possible");
    assert_eq!(status, Status::Fail, "{msg}");
    assert!(msg.contains("15 of the 16 requests are at most p99 145.44"), "{msg}");
}

#[test]
fn numpy_percentiles_bound_the_longest_e2e_by_the_p99() {
    let plain = load("plain-cap", &definition("", "")).unwrap();
    let numpy = load("numpy-cap", &definition(r#"percentiles = "numpy-linear""#, "")).unwrap();
    // Over 16 requests numpy's P99 is s[14] + 0.85 (s[15] - s[14]) >= 0.85 s[15]: no E2E is above
    // 2000 / 0.85 = 2352.9 ms, so no request decodes a token in 2500 ms. Without the method the
    // only bound is the duration, 26.75 s.
    let rows = "requests ok:          16\nduration (s):         26.75\noutput tokens:        8192\nttft mean (ms):       100.00\ntpot mean (ms):       50.00\ntpot max (ms):        2500.00\nlatency mean (ms):    1500.00\nlatency p99 (ms):     2000.00\n";
    let (status, msg) = rule(&read(&plain, rows), "decode-within-e2e");
    assert_eq!(status, Status::Pass, "{msg}");
    assert!(msg.contains("the duration"), "{msg}");
    let (status, msg) = rule(&read(&numpy, rows), "decode-within-e2e");
    assert_eq!(status, Status::Fail, "{msg}");
    assert!(msg.contains("numpy's P99 2000 ms over 16 requests allows"), "{msg}");
}

#[test]
fn a_misspelt_value_or_key_is_a_definition_error() {
    for (bad, quoted) in [
        (r#"rates = "own_window""#, "own_window"),
        (r#"rates = "totals""#, "totals"),
        (r#"percentiles = "numpy""#, "numpy"),
        (r#"percentile = "numpy-linear""#, "percentile"),
    ] {
        let err = load("typo", &definition(bad, "")).err().unwrap_or_else(|| panic!("{bad} was accepted"));
        assert!(err.contains(quoted), "{bad}: {err}");
        assert!(err.contains("toysem.toml"), "{bad}: {err}");
    }
    let Err(err) = load("typo-variant", &definition("", r#"rates = "al""#)) else {
        panic!("a variant's typo is refused")
    };
    assert!(err.contains("al"), "{err}");
}

/// A run written as a canonical run document (as `bench-normalize` writes each run), with
/// `source.semantics` passed through `edit`.
fn stored(run: &Run, edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v = serde_json::to_value(run).unwrap();
    edit(&mut v);
    serde_json::to_vec(&v).unwrap()
}

fn strip(v: &mut Value) {
    let s = v["source"]["semantics"].as_object_mut().unwrap();
    s.remove("rates");
    s.remove("percentiles");
    s.remove("tpot_weighting");
}

fn outcomes(run: &Run) -> Vec<(String, Status, String)> {
    run.checks.iter().map(|c| (c.id.to_string(), c.status, c.message.clone())).collect()
}

#[test]
fn a_report_written_before_the_keys_is_checked_as_it_was() {
    let defs = Definitions::builtin();
    for (sample, rates, percentiles) in [
        ("captured/sglang-s2.stdout.txt", Some("all"), Some("numpy-linear")),
        ("captured/vllm-s2.result.json", Some("all"), Some("numpy-linear")),
        ("public/044-guidellm.txt", Some("own-window"), None),
        ("peers/guidellm-s2.stdout.txt", Some("own-window"), None),
        ("captured/vllm-s2.stdout.txt", Some("all"), Some("numpy-linear")),
    ] {
        let bytes = std::fs::read(common::samples_dir().join(sample)).unwrap();
        let runs = read_all(defs, &bytes, false);
        assert!(!runs.is_empty(), "{sample}");
        for run in &runs {
            let v = serde_json::to_value(run).unwrap();
            assert_eq!(v["source"]["semantics"]["rates"].as_str(), rates, "{sample}");
            assert_eq!(v["source"]["semantics"]["percentiles"].as_str(), percentiles, "{sample}");
            // guidellm's console: its ITL (the TPOT rows) is token-weighted, and tpot-bounds holds
            // the rows' mean to the derived TPOT both ways, read back or not.
            let guidellm = run.source.parser == "guidellm-console";
            let weighting = guidellm.then_some("token");
            assert_eq!(v["source"]["semantics"]["tpot_weighting"].as_str(), weighting, "{sample}");
            let now = read_all(defs, &stored(run, |_| {}), true);
            let before = read_all(defs, &stored(run, strip), true);
            assert_eq!(outcomes(&before[0]), outcomes(&now[0]), "{sample}");
            assert_eq!(before[0].source.semantics, now[0].source.semantics, "{sample}");
            if rates == Some("own-window") {
                assert_eq!(rule(&before[0], "throughput-totals").0, Status::Skipped, "{sample}");
            }
            if guidellm && run.reported.stat("tpot_ms").is_some() {
                let (status, message) = rule(&before[0], "tpot-bounds");
                assert_eq!(status, Status::Pass, "{sample}");
                assert!(message.contains("= the rows' mean 12.8 ms (token-weighted rows"), "{message}");
            }
        }
    }
}

#[test]
fn a_report_naming_no_known_definition_without_the_keys_only_skips() {
    let defs = Definitions::builtin();
    let bytes = std::fs::read(common::samples_dir().join("captured/sglang-s2.stdout.txt")).unwrap();
    let run = read_all(defs, &bytes, false).remove(0);
    let input_rate =
        serde_json::to_value(&run).unwrap()["reported"]["input_tok_per_s"].as_f64().expect("an input rate");
    // The input rate retyped ten times too large.
    let retype = |v: &mut Value| {
        strip(v);
        v["reported"]["input_tok_per_s"] = serde_json::json!(input_rate * 10.0);
    };
    let known = read_all(defs, &stored(&run, retype), true).remove(0);
    assert_eq!(rule(&known, "throughput-totals").0, Status::Fail, "its definition says rates = all");
    let by_hand = read_all(
        defs,
        &stored(&run, |v| {
            retype(v);
            v["source"]["parser"] = serde_json::json!("by-hand");
        }),
        true,
    )
    .remove(0);
    assert_eq!(by_hand.source.semantics.rates, None);
    assert_eq!(by_hand.source.semantics.percentiles, None);
    let (status, msg) = rule(&by_hand, "throughput-totals");
    assert_eq!(status, Status::Pass, "unknown rates: the input rate is not held to its total: {msg}");
}

/// The toy definition three ways: saying nothing, saying the most (`all`, `numpy-linear`), and
/// saying its rates are its own window. Loaded once.
fn three() -> &'static [Definitions; 3] {
    static DEFS: std::sync::OnceLock<[Definitions; 3]> = std::sync::OnceLock::new();
    DEFS.get_or_init(|| {
        [
            load("prop-none", &definition("", "")).unwrap(),
            load("prop-most", &definition("rates = \"all\"\npercentiles = \"numpy-linear\"", "")).unwrap(),
            load("prop-own", &definition(r#"rates = "own-window""#, "")).unwrap(),
        ]
    })
}

fn failed(run: &Run) -> std::collections::BTreeSet<String> {
    run.checks.iter().filter(|c| c.status == Status::Fail).map(|c| c.id.to_string()).collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// Saying less never rejects more: whatever the figures (consistent or not), the rules that
    /// fail with the keys absent also fail with `all` and `numpy-linear`, and those that fail with
    /// `own-window` also fail with the keys absent. So a report whose semantics are unknown is
    /// only ever checked less.
    #[test]
    fn saying_less_never_rejects_more(
        r in 2u32..200,
        d in 1.0f64..500.0,
        per_in in 1u32..4000,
        per_out in 2u32..2000,
        skew in proptest::prop_oneof![proptest::strategy::Just(1.0f64), 0.05f64..20.0],
        out_skew in proptest::prop_oneof![proptest::strategy::Just(1.0f64), 0.05f64..20.0],
        ttft in 1.0f64..5000.0,
        e2e_extra in 0.0f64..60000.0,
        p99_factor in 0.01f64..3.0,
        max_factor in 0.5f64..40.0,
        tpot in 0.1f64..500.0,
        tpot_max_factor in 1.0f64..100.0,
    ) {
        let (n_in, n_out) = (f64::from(r * per_in), f64::from(r * per_out));
        let e2e = ttft + e2e_extra;
        let rows = format!(
            "requests ok:          {r}\nrequests failed:      0\nduration (s):         {d:.2}\ninput tokens:         {n_in}\noutput tokens:        {n_out}\nrequest rate (req/s): {:.2}\ninput rate (tok/s):   {:.2}\noutput rate (tok/s):  {:.2}\nttft mean (ms):       {ttft:.2}\nttft p99 (ms):        {:.2}\ntpot mean (ms):       {tpot:.2}\ntpot max (ms):        {:.2}\nlatency mean (ms):    {e2e:.2}\nlatency p99 (ms):     {:.2}\nlatency max (ms):     {:.2}\n",
            f64::from(r) / d,
            n_in / d * skew,
            n_out / d * out_skew,
            ttft * p99_factor,
            tpot * tpot_max_factor,
            e2e * p99_factor,
            e2e * max_factor,
        );
        let [none, most, own] = three();
        let (none, most, own) = (failed(&read(none, &rows)), failed(&read(most, &rows)), failed(&read(own, &rows)));
        proptest::prop_assert!(none.is_subset(&most), "absent {none:?} vs all + numpy-linear {most:?}\n{rows}");
        proptest::prop_assert!(own.is_subset(&none), "own-window {own:?} vs absent {none:?}\n{rows}");
    }
}

/// guidellm's console (`tpot_weighting = "token"`): the ITL mean 12.8 ms is the token-weighted
/// TPOT, so the derived one is held to it both ways. The capture passes (derived 12.84 ms); its
/// mean TTFT x0.1 makes the derived TPOT 13.08 ms, too high, x10 makes it 10.36 ms, and the mean
/// E2E halved 6.38 ms, too low: each is rejected by tpot-bounds.
#[test]
fn guidellms_token_weighted_itl_mean_holds_the_derived_tpot_both_ways() {
    let defs = Definitions::builtin();
    let text = std::fs::read_to_string(common::samples_dir().join("peers/guidellm-s2.stdout.txt")).unwrap();
    let honest = read_all(defs, text.as_bytes(), false).remove(0);
    let (status, message) = rule(&honest, "tpot-bounds");
    assert_eq!(status, Status::Pass, "{message}");
    assert!(message.contains("derived TPOT 12.84 ms (e2e-ttft-tokens) = the rows' mean 12.8 ms"), "{message}");
    assert_eq!(honest.derived.tpot_ms.verified, Some(true));
    for (from, to, side, derived) in [
        ("| 140.8 ± 1.8 |", "| 14.1 ± 1.8 |", "is above", "13.08"),
        ("| 140.8 ± 1.8 |", "| 1408.0 ± 1.8 |", "is below", "10.36"),
        ("| 6.7 ± 0.002 |", "| 3.4 ± 0.002 |", "is below", "6.38"),
    ] {
        // (The first occurrence: the TTFT column, before TTFOT's.)
        let forged = text.replacen(from, to, 1);
        assert_ne!(forged, text);
        let run = read_all(defs, forged.as_bytes(), false).remove(0);
        let (status, message) = rule(&run, "tpot-bounds");
        assert_eq!(status, Status::Fail, "{to}: {message}");
        assert!(message.contains(&format!("derived TPOT {derived}")) && message.contains(side), "{to}: {message}");
        assert_eq!(run.verdict, bench_normalize::report::Verdict::Rejected);
    }
}

/// What `tpot_weighting = "token"` rests on, read from the capture's own benchmarks.json: guidellm
/// 0.8's ITL distribution has one value per decode token (count N - R), and its mean is the sum of
/// the requests' `E2E_i - TTFT_i` over N - R, short only of each response's end after its last
/// token (between 0 and one decode step a request).
#[test]
fn guidellms_itl_distribution_is_token_weighted_in_its_capture() {
    let doc = common::read_json(&common::samples_dir().join("peers/guidellm-s2.benchmarks.json"));
    let b = &doc["benchmarks"][0];
    let m = &b["metrics"];
    let itl = &m["inter_token_latency_ms"]["successful"];
    let reqs = b["requests"]["successful"].as_array().unwrap();
    let r = reqs.len() as f64;
    let n: f64 = reqs.iter().map(|q| q["output_tokens"].as_f64().unwrap()).sum();
    assert_eq!((r, n), (16.0, 8192.0));
    assert_eq!(itl["count"].as_f64(), Some(n - r));
    let decode: f64 = reqs
        .iter()
        .map(|q| q["request_latency"].as_f64().unwrap() * 1000.0 - q["time_to_first_token_ms"].as_f64().unwrap())
        .sum();
    let (mean, derived) = (itl["mean"].as_f64().unwrap(), decode / (n - r));
    assert!((itl["total_sum"].as_f64().unwrap() - mean * (n - r)).abs() < 1e-6 * decode);
    // Per request: E2E - TTFT - (n - 1) ITL is the end after the last token, 0 to one step.
    for q in reqs {
        let tail = q["request_latency"].as_f64().unwrap() * 1000.0
            - q["time_to_first_token_ms"].as_f64().unwrap()
            - (q["output_tokens"].as_f64().unwrap() - 1.0) * q["inter_token_latency_ms"].as_f64().unwrap();
        assert!((0.0..=mean).contains(&tail), "{tail}");
    }
    assert!(derived >= mean && derived - mean <= r * mean / (n - r), "{derived} vs {mean}");
    assert!((mean - 12.8003).abs() < 1e-3 && (derived - 12.8021).abs() < 1e-3, "{mean} {derived}");
}
