//! A decompression bomb in a text input is read in bounded memory: the decoded bytes stream
//! through the line splitter, whose line cap (64 KiB) holds whatever the decoded size. One test
//! in this binary, so that the counting allocator sees nothing else.

mod common;

use std::io::Write;
use std::sync::atomic::Ordering;

use bench_normalize::{Options, normalize};

#[path = "common/counting.rs"]
mod counting;

use counting::{NOW, PEAK};

#[test]
fn a_gzip_bomb_before_a_log_is_read_in_bounded_memory() {
    let log = std::fs::read(common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap();
    // 96 MiB of one line with no line break, then 32 MiB of blank lines, then the log:
    // compressed ~1000 to 1.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..96 {
        e.write_all(&chunk).unwrap();
    }
    let blank = vec![b'\n'; 1 << 20];
    for _ in 0..32 {
        e.write_all(&blank).unwrap();
    }
    e.write_all(&log).unwrap();
    let gz = e.finish().unwrap();
    assert!(gz.len() < 256 << 10, "{}", gz.len());

    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut runs = Vec::new();
    normalize(&gz[..], "bomb.log.gz", &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })
    .unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert_eq!(runs.len(), 1);
    assert!((runs[0].derived.tpot_ms.mean.unwrap() - 12.8).abs() < 0.01);
    eprintln!("peak {peak} bytes for 128 MiB decoded from {} bytes", gz.len());
    // The decoder's window and buffers, the line cap and one run: a few MiB, not 128.
    assert!(peak < 8 << 20, "peak {peak} bytes");
}
