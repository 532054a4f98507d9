//! A result JSON whose unknown key holds a huge array is read without building that array: the
//! peak of heap memory while it is normalized stays near the text's size (it was 30x the text: a
//! tree of values, then its whole text again as a row). One test in this binary, so that the
//! counting allocator sees nothing else.

mod common;

use std::sync::atomic::Ordering;

use bench_normalize::report::Verdict;
use bench_normalize::{Options, Run, normalize};

#[path = "common/counting.rs"]
mod counting;

use counting::{NOW, PEAK};

/// Normalize `text`; the runs and the peak of heap bytes above what was allocated before.
fn measure(text: &[u8]) -> (Vec<Run>, usize) {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut runs = Vec::new();
    normalize(text, "big.result.json", &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })
    .unwrap();
    (runs, PEAK.load(Ordering::Relaxed) - base)
}

#[test]
fn an_unknown_huge_array_is_skipped_not_built() {
    let sample = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.result.json")).unwrap();
    let sample = sample.trim_end().strip_suffix('}').unwrap();
    let n = 2_000_000;
    let huge = format!("[{}0]", "0,".repeat(n - 1));
    for (how, extra) in [
        // One well-formed document: the fast path.
        ("fast path", String::new()),
        // A bare NaN sends the document through sanitizing and the serde path.
        ("serde path", r#", "nan_key": NaN"#.to_string()),
        // A small unknown value beside it is kept whole.
        ("beside a small one", r#", "small": [{"a": 1}]"#.to_string()),
    ] {
        let text = format!(r#"{sample}, "unknown_key": {huge}{extra}}}"#);
        let (runs, peak) = measure(text.as_bytes());
        assert_eq!(runs.len(), 1, "{how}");
        let run = &runs[0];
        assert_eq!(run.verdict, Verdict::Accepted, "{how}");
        // Still the run's figures, and the key still a row, counted.
        assert!((run.derived.tpot_ms.mean.unwrap() - 12.8).abs() < 0.01, "{how}");
        let row = run.rows.iter().find(|r| r.label == "unknown_key").expect("the key is a row");
        assert_eq!(row.value.as_deref(), Some("[2000000 values, not read]"), "{how}");
        // The text is 4 MB; building the array took ~100 MB (a value of 32 bytes and more for
        // each number, the list growing by doubling, and the row's copy of its text). What is
        // left is the input read into memory (its buffer grows by doubling) and, on the serde
        // path, one sanitized copy of it.
        eprintln!("{how}: peak {peak} bytes for a {} byte text", text.len());
        assert!(peak < 3 * text.len() + (1 << 20), "{how}: peak {peak} bytes for a {} byte text", text.len());
    }
}
