//! Decompression bombs are read in bounded memory: in a text input, the decoded bytes stream
//! through the line splitter, whose line cap (64 KiB) holds whatever the decoded size; a JSON
//! document (read whole) and a JSON record inside a text are held within their budget (16 MiB, or
//! 25 times the compressed bytes read), tested before the buffer grows. No input of under 1 MB
//! takes more than ~100 MB (docs/formats.md, "Compressed and UTF-16 inputs"). One test in this
//! binary, so that the counting allocator sees nothing else.

mod common;

use std::io::Write;
use std::sync::atomic::Ordering;

use bench_normalize::{Error, Options, normalize};

#[path = "common/counting.rs"]
mod counting;

use counting::{NOW, PEAK};

fn gzip(parts: &[&[u8]]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    for p in parts {
        e.write_all(p).unwrap();
    }
    e.finish().unwrap()
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut w = lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(6)).unwrap();
    w.write_all(bytes).unwrap();
    w.finish().unwrap()
}

/// A zstd frame of `head`, then `count` times 128 KiB of `fill` (RLE blocks, 4 bytes each), then
/// `tail`: a gigabyte in 32 KB. Its window: 2 MiB, or 8 MiB with `wide` (the most allowed).
fn zstd_rle(head: &[u8], fill: u8, count: usize, tail: &[u8], wide: bool) -> Vec<u8> {
    let block = |kind: u32, size: usize, last: bool| {
        let h = (size as u32) << 3 | kind << 1 | u32::from(last);
        h.to_le_bytes()[..3].to_vec()
    };
    // Magic, a descriptor without content size or checksum, a window of 2 or 8 MiB.
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, if wide { 0x68 } else { 0x58 }];
    f.extend(block(0, head.len(), false));
    f.extend_from_slice(head);
    for _ in 0..count {
        f.extend(block(1, 128 << 10, false));
        f.push(fill);
    }
    f.extend(block(0, tail.len(), true));
    f.extend_from_slice(tail);
    f
}

/// `member` repeated until just under 1 MB (gzip members and xz streams are read one after another).
fn repeated_under_1mb(head: Vec<u8>, member: &[u8], tail: &[u8]) -> Vec<u8> {
    let mut out = head;
    while out.len() + member.len() + tail.len() < 1_000_000 {
        out.extend_from_slice(member);
    }
    out.extend_from_slice(tail);
    out
}

/// Normalize `input`: the runs, the error, and the peak of heap bytes above what was allocated
/// before.
fn measure(name: &str, input: &[u8]) -> (usize, Option<Error>, usize) {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut runs = 0;
    let r = normalize(input, name, &Options::default(), &mut |_| {
        runs += 1;
        Ok(())
    });
    let peak = PEAK.load(Ordering::Relaxed) - base;
    eprintln!("{name}: {} bytes, peak {} KiB, {runs} runs, {:?}", input.len(), peak >> 10, r.as_ref().err());
    (runs, r.err(), peak)
}

#[test]
fn bombs_are_read_in_bounded_memory() {
    // A gzip bomb before a log: streamed. 96 MiB of one line with no line break, then 32 MiB of
    // blank lines, then the log.
    let log = std::fs::read(common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap();
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
    let mut runs = Vec::new();
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    normalize(&gz[..], "bomb.log.gz", &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })
    .unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert_eq!(runs.len(), 1);
    assert!((runs[0].derived.tpot_ms.mean.unwrap() - 12.8).abs() < 0.01);
    // The decoder's window and buffers, the line cap and one run: a few MiB, not 128.
    assert!(peak < 8 << 20, "peak {peak} bytes");
    drop(runs);

    // JSON bombs, each under 1 MB, each decoding to a gigabyte or so.
    let a16 = vec![b'a'; 16 << 20];
    let string_gz = repeated_under_1mb(gzip(&[b"{\"a\": \""]), &gzip(&[&a16]), &gzip(&[b"\"}"]));
    let string_xz = repeated_under_1mb(xz(b"{\"a\": \""), &xz(&a16), &xz(b"\"}"));
    let string_zst = zstd_rle(b"{\"a\": \"", b'a', 8192, b"\"}", false);
    // A text of a gigabyte of one line, in a frame with the widest window allowed: streamed.
    let text_zst = zstd_rle(b"INFO ", b'x', 8192, b"\n", true);
    // A result file whose per-request array of a known key is a gigabyte of zeros.
    let sample = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.result.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&sample).unwrap();
    doc.as_object_mut().unwrap().remove("itls");
    let doc = doc.to_string();
    let open = doc.strip_suffix('}').unwrap();
    let zeros = b"0, ".repeat((16 << 20) / 3);
    let others = format!("0]{}]}}", ", []".repeat(15));
    let itls_gz =
        repeated_under_1mb(gzip(&[open.as_bytes(), b", \"itls\": [["]), &gzip(&[&zeros]), &gzip(&[others.as_bytes()]));
    let itls_zst = zstd_rle(format!("{open}, \"itls\": [[").as_bytes(), b' ', 8192, others.as_bytes(), true);
    // JSON Lines: the same record, over and over.
    let line = std::fs::read(common::samples_dir().join("captured/sglang-s2.result.jsonl")).unwrap();
    let line = &line[..=memchr::memchr(b'\n', &line).unwrap()];
    let lines_xz = repeated_under_1mb(Vec::new(), &xz(&line.repeat(64)), b"");
    // A record in a text log: held whole by the finder of records in text.
    let embedded = repeated_under_1mb(
        gzip(&[b"INFO starting\n", open.as_bytes(), b", \"itls\": [["]),
        &gzip(&[&zeros]),
        &gzip(&[others.as_bytes(), b"\nINFO done\n"]),
    );
    for (name, input) in [
        ("string.json.gz", &string_gz),
        ("string.json.xz", &string_xz),
        ("string.json.zst", &string_zst),
        ("itls.json.gz", &itls_gz),
        ("itls.json.zst", &itls_zst),
        ("lines.jsonl.xz", &lines_xz),
        ("embedded.log.gz", &embedded),
        ("text.log.zst", &text_zst),
    ] {
        assert!(input.len() < 1_000_000, "{name}: {}", input.len());
        let (_, error, peak) = measure(name, input);
        assert!(peak < 100 << 20, "{name}: peak {peak} bytes from {} bytes", input.len());
        if name.contains(".json") {
            // Refused as a bomb (exit 3), not read whole and not an abort.
            let error = error.unwrap_or_else(|| panic!("{name}: read whole"));
            assert!(matches!(error, Error::Decode { .. }), "{name}: {error}");
            assert!(error.to_string().contains("decompression bomb"), "{name}: {error}");
        }
    }

    // A real result file larger than the floor, at a real file's ratio, is read whole: a result
    // with an unknown array of 24 MB of varied figures (~2.5 to 1).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut figures = String::with_capacity(25 << 20);
    while figures.len() < 24 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        figures.push_str(&format!("{:.6}, ", (state % 1_000_000_000) as f64 / 1e7));
    }
    let big = format!("{open}, \"timings\": [{figures}0]}}");
    let compressed = gzip(&[big.as_bytes()]);
    assert!((big.len() as u64) > 16 << 20 && big.len() < 25 * compressed.len());
    let (runs, error, _) = measure("big.result.json.gz", &compressed);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(runs, 1);
}
