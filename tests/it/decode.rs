//! Logs and result files kept compressed (gzip, zstd, xz) or written as UTF-16 read to exactly
//! the figures of the plain file, from a file and from a stream; a cut, corrupt or fake stream
//! never panics and exits 3 (docs/formats.md, "Compressed and UTF-16 inputs").

use crate::common;

use std::io::{Read, Write};
use std::process::Command;

use bench_normalize::{Error, Options, Run, normalize, normalize_file};
use proptest::prelude::*;
use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

/// samples/compressed/manifest.json: (file, the captured file it decodes to, cut off).
fn manifest() -> Vec<(String, String, bool)> {
    let m = common::read_json(&common::samples_dir().join("compressed/manifest.json"));
    let m = m.as_object().unwrap();
    assert!(m.len() >= 10, "{}", m.len());
    m.iter()
        .map(|(k, v)| (k.clone(), v["from"].as_str().unwrap().to_string(), v["cut_off"].as_bool().unwrap()))
        .collect()
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(common::samples_dir().join(path)).unwrap()
}

fn figures(runs: &[Run]) -> Vec<Value> {
    runs.iter().map(common::figures_of).collect()
}

/// The figures of a plain captured file.
fn clean(from: &str) -> Vec<Value> {
    figures(&common::normalize_file(&common::samples_dir().join(from)).unwrap())
}

/// Every run of `bytes` read as a stream, and the error that ended the input, if one did.
fn stream(bytes: &[u8]) -> (Vec<Run>, Option<Error>) {
    let mut runs = Vec::new();
    let r = normalize(std::io::BufReader::with_capacity(4096, bytes), "in", &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    });
    (runs, r.err())
}

/// The same, of `bytes` written to a file and read as a file (the memory-mapped path for JSON).
fn file(bytes: &[u8]) -> (Vec<Run>, Option<Error>) {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(bytes).unwrap();
    std::io::Seek::rewind(&mut f).unwrap();
    let mut runs = Vec::new();
    let r = normalize_file(f, "in", &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    });
    (runs, r.err())
}

#[test]
fn every_sample_reads_as_the_file_it_was_made_from() {
    for (name, from, cut_off) in manifest() {
        let bytes = read(&format!("compressed/{name}"));
        for (how, (runs, err)) in [("stream", stream(&bytes)), ("file", file(&bytes))] {
            if cut_off {
                continue;
            }
            assert!(err.is_none(), "{name} ({how}): {err:?}");
            assert!(!runs.is_empty(), "{name} ({how})");
            assert_eq!(figures(&runs), clean(&from), "{name} ({how}) and {from}");
        }
    }
}

/// The figures against the truth files of the captures (what the emulator was set to).
#[test]
fn decoded_samples_give_the_true_tpot() {
    let mut checked = 0;
    for (name, from, cut_off) in manifest() {
        let truth = common::samples_dir().join(
            from.replace(".stdout.txt", "").replace(".result.jsonl", "").replace(".result.json", "") + ".truth.json",
        );
        let truth = common::read_json(&truth);
        let (runs, _) = stream(&read(&format!("compressed/{name}")));
        if cut_off || runs.len() != 1 {
            continue;
        }
        let tpot = runs[0].derived.tpot_ms.mean.expect("a derived TPOT");
        let want = truth["true_tpot_ms"].as_f64().unwrap();
        assert!(common::is_truth(tpot, want, false), "{name}: TPOT {tpot} ms, truth {want} ms");
        checked += 1;
    }
    assert!(checked >= 8, "{checked}");
}

/// A run as the executable prints it, without the input's name.
fn printed_runs(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["source"]["input"] = Value::Null;
            v
        })
        .collect()
}

#[test]
fn the_executable_reads_them_from_a_file_and_from_stdin() {
    for (name, from, cut_off) in manifest() {
        let path = common::samples_dir().join("compressed").join(&name);
        let plain = bin().args(["-f", "jsonl"]).arg(common::samples_dir().join(&from)).output().unwrap();
        let by_path = bin().args(["-f", "jsonl"]).arg(&path).output().unwrap();
        let piped = common::output_with_stdin(bin().args(["-f", "jsonl"]), &read(&format!("compressed/{name}")));
        for (how, out) in [("file", &by_path), ("stdin", &piped)] {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if cut_off {
                assert_eq!(out.status.code(), Some(3), "{name} ({how}): {stderr}");
                assert!(stderr.contains("cannot decode gzip") && stderr.contains("cut off"), "{name}: {stderr}");
                let runs = printed_runs(&out.stdout);
                assert_eq!(runs.len(), 1, "{name} ({how})");
                assert!(!runs[0]["source"]["truncated"].is_null(), "{name} ({how}): the run is cut off");
            } else {
                assert_eq!(out.status.code(), plain.status.code(), "{name} ({how}): {stderr}");
                assert_eq!(printed_runs(&out.stdout), printed_runs(&plain.stdout), "{name} ({how})");
            }
        }
    }
}

/// The gzip'd log cut inside its result block: the rows before the cut are read, the run is cut
/// off, and the cut is a `decode` error (exit 3), not an I/O error.
#[test]
fn a_cut_gzip_gives_the_rows_before_the_cut_and_exit_3() {
    let (runs, err) = stream(&read("compressed/vllm-s2-cut.stdout.txt.gz"));
    let err = err.expect("the cut is said");
    assert!(matches!(err, Error::Decode { format: "gzip", .. }), "{err:?}");
    assert_eq!(err.exit_code() as i32, 3);
    assert_eq!(err.code(), "decode");
    assert_eq!(runs.len(), 1);
    assert!(runs[0].source.truncated.is_some());
    // Every figure read is the plain log's.
    let plain = &common::normalize_file(&common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap()[0];
    let (got, want) =
        (serde_json::to_value(&runs[0].reported).unwrap(), serde_json::to_value(&plain.reported).unwrap());
    let got = got.as_object().unwrap();
    assert!(!got.is_empty());
    for (k, v) in got {
        assert_eq!(Some(v), want.get(k), "{k}");
    }
}

// ---------------------------------------------------------------------------------------------
// Every encoding of every captured file

#[derive(Debug, Clone, Copy)]
enum Enc {
    Gzip,
    Zstd,
    Xz,
    Utf16LeBom,
    Utf16BeBom,
    Utf16LeNoBom,
}

fn utf16(bytes: &[u8], big_endian: bool) -> Vec<u8> {
    String::from_utf8_lossy(bytes)
        .encode_utf16()
        .flat_map(|u| if big_endian { u.to_be_bytes() } else { u.to_le_bytes() })
        .collect()
}

fn encode(bytes: &[u8], enc: Enc) -> Vec<u8> {
    match enc {
        Enc::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        }
        Enc::Zstd => ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest),
        Enc::Xz => {
            let mut w = lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1)).unwrap();
            w.write_all(bytes).unwrap();
            w.finish().unwrap()
        }
        Enc::Utf16LeBom => [&b"\xff\xfe"[..], &utf16(bytes, false)].concat(),
        Enc::Utf16BeBom => [&b"\xfe\xff"[..], &utf16(bytes, true)].concat(),
        Enc::Utf16LeNoBom => utf16(bytes, false),
    }
}

fn enc() -> impl Strategy<Value = Enc> {
    prop_oneof![
        Just(Enc::Gzip),
        Just(Enc::Zstd),
        Just(Enc::Xz),
        Just(Enc::Utf16LeBom),
        Just(Enc::Utf16BeBom),
        Just(Enc::Utf16LeNoBom)
    ]
}

/// A captured file: its name, its bytes and its figures.
type Captured = (String, Vec<u8>, Vec<Value>);

/// The captured logs and result files (with their figures), read once.
fn captured() -> &'static [Captured] {
    static ALL: std::sync::OnceLock<Vec<Captured>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut v = Vec::new();
        for suffix in [".stdout.txt", ".result.json", ".result.jsonl"] {
            for p in common::sample_files("captured", suffix) {
                let name = common::sample_name(&p);
                v.push((name.clone(), std::fs::read(&p).unwrap(), clean(&name)));
            }
        }
        assert!(v.len() > 30, "{}", v.len());
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any captured file in any encoding, from a stream or a file: the plain file's figures.
    #[test]
    fn any_encoding_reads_as_the_plain_file(which in any::<prop::sample::Index>(), enc in enc(), as_file in any::<bool>()) {
        let (name, bytes, want) = &captured()[which.index(captured().len())];
        let encoded = encode(bytes, enc);
        let (runs, err) = if as_file { file(&encoded) } else { stream(&encoded) };
        prop_assert!(err.is_none(), "{name} {enc:?}: {err:?}");
        prop_assert_eq!(&figures(&runs), want, "{} {:?}", name, enc);
    }

    /// Cut at any byte: never a panic; exit 3 when nothing is found or the stream is cut; and
    /// every run read whole (not cut off) is one of the plain file's.
    #[test]
    fn a_cut_at_any_byte_never_gives_a_wrong_run(which in any::<prop::sample::Index>(), enc in enc(), at in any::<prop::sample::Index>()) {
        let (name, bytes, want) = &captured()[which.index(captured().len())];
        let encoded = encode(bytes, enc);
        let at = at.index(encoded.len());
        let (runs, err) = stream(&encoded[..at]);
        if let Some(e) = &err {
            prop_assert_eq!(e.exit_code() as i32, 3, "{} {:?} cut at {}: {}", name, enc, at, e);
        }
        for run in runs.iter().filter(|r| r.source.truncated.is_none()) {
            let got = common::figures_of(run);
            // A JSON document's run is whole or absent; a text block's rows are the plain file's.
            prop_assert!(want.contains(&got), "{} {:?} cut at {}: {}", name, enc, at, got);
        }
    }

    /// Random bytes behind a magic number or byte-order mark: an error of the input (exit 3),
    /// never a panic, never an I/O error.
    #[test]
    fn random_bytes_behind_a_magic_number_are_an_input_error(
        magic in prop::sample::select(vec![
            &b"\x1f\x8b"[..], b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", b"\x28\xb5\x2f\xfd",
            b"\x50\x2a\x4d\x18", b"\xfd7zXZ\x00", b"\xfd7zXZ\x00\x00\x01", b"\xff\xfe", b"\xfe\xff",
        ]),
        tail in prop::collection::vec(any::<u8>(), 0..3000),
        as_file in any::<bool>(),
    ) {
        let bytes = [magic, &tail[..]].concat();
        let (runs, err) = if as_file { file(&bytes) } else { stream(&bytes) };
        prop_assert!(runs.is_empty());
        let e = err.expect("an error");
        prop_assert_eq!(e.exit_code() as i32, 3, "{}", e);
    }

    /// One byte of a committed compressed sample changed: exit 0 only with the plain file's
    /// figures (gzip's CRC-32, xz's CRC-64 and zstd's content checksum catch what changes the
    /// text; a changed header field that does not, such as gzip's time stamp, changes nothing).
    #[test]
    fn a_changed_byte_never_passes_with_other_figures(which in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), x in 1..=255u8) {
        let all: Vec<(String, String, bool)> = manifest().into_iter().filter(|(n, _, cut)| !cut && !n.ends_with(".txt")).collect();
        let (name, from, _) = &all[which.index(all.len())];
        let mut bytes = read(&format!("compressed/{name}"));
        let at = at.index(bytes.len());
        bytes[at] ^= x;
        let (runs, err) = stream(&bytes);
        if err.is_none() {
            prop_assert_eq!(figures(&runs), clean(from), "{} changed at {}", name, at);
        }
    }
}

/// Concatenated streams (`cat a.gz b.gz`, `cat a.zst b.zst`, `cat a.xz b.xz`): every one read.
#[test]
fn concatenated_streams_are_all_read() {
    let (_, bytes, want) = captured().iter().find(|(n, ..)| n == "captured/vllm-s2.stdout.txt").unwrap();
    for enc in [Enc::Gzip, Enc::Zstd, Enc::Xz] {
        let one = encode(bytes, enc);
        let (runs, err) = stream(&[&one[..], &one[..]].concat());
        assert!(err.is_none(), "{enc:?}: {err:?}");
        assert_eq!(figures(&runs), [want.clone(), want.clone()].concat(), "{enc:?}");
    }
}

/// A zstd frame that asks for more window than `zstd -d` decodes (2 GiB): refused before any
/// memory is taken for it, exit 3.
#[test]
fn a_zstd_frame_asking_for_a_huge_window_is_refused() {
    // Magic, frame header descriptor (no single segment, no checksum), window descriptor
    // exponent 21 (2 GiB), then a raw block of 3 bytes.
    let bytes = b"\x28\xb5\x2f\xfd\x00\xa8\x19\x00\x00abc";
    let (runs, err) = stream(bytes);
    assert!(runs.is_empty());
    let e = err.unwrap();
    assert!(e.to_string().contains("window of 2048 MiB"), "{e}");
    assert_eq!(e.exit_code() as i32, 3);
}

/// A gzip'd JSON report is read by `check` as the report (the classification sees decoded bytes).
#[test]
fn check_reads_a_compressed_report() {
    let plain =
        bin().args(["-f", "json"]).arg(common::samples_dir().join("captured/vllm-s2.stdout.txt")).output().unwrap();
    assert_eq!(plain.status.code(), Some(0));
    let gz = encode(&plain.stdout, Enc::Gzip);
    let out = common::output_with_stdin(bin().args(["check", "-"]), &gz);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut text).unwrap();
    assert_eq!(text.as_bytes(), plain.stdout);
}

/// A gzip stream cut inside a row: the row's partial value (`139` of `139.89`) is never read; the
/// incomplete last line is dropped, the run is cut off before it.
#[test]
fn a_cut_inside_a_row_never_reads_its_partial_value() {
    let log = read("captured/vllm-s2.stdout.txt");
    let row = String::from_utf8_lossy(&log).find("Mean TTFT (ms):").unwrap();
    let value = row + String::from_utf8_lossy(&log[row..]).find("139.89").unwrap();
    // Stored (level 0) blocks: the decoded bytes are the compressed bytes after a 10-byte gzip
    // header and a 5-byte block header, so a cut falls where it is aimed.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    e.write_all(&log).unwrap();
    let gz = e.finish().unwrap();
    for cut in [value + 1, value + 3, value + 5] {
        let (runs, err) = stream(&gz[..10 + 5 + cut]);
        assert!(matches!(err, Some(Error::Decode { .. })), "{err:?}");
        assert_eq!(runs.len(), 1);
        let ttft = serde_json::to_value(&runs[0].reported).unwrap()["ttft_ms"]["mean"].clone();
        assert!(ttft.is_null() || ttft == 139.89, "cut at {cut}: TTFT {ttft}");
        assert!(runs[0].source.truncated.is_some());
    }
}

/// `compare` and `sweep` read compressed inputs as `bench-normalize` does; in a results directory
/// an archive that does not decompress is listed as skipped, as any file with no result is.
#[test]
fn compare_and_sweep_read_compressed_inputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::samples_dir().join("compressed/vllm-s4-two-members.stdout.txt.gz"),
        dir.path().join("run.log.gz"),
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.gz"), b"\x1f\x8b\x08\x00 not gzip").unwrap();
    let plain = common::samples_dir().join("captured/vllm-s4.stdout.txt");
    let out = bin().args(["compare", "-f", "json"]).arg(&plain).arg(dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = doc.to_string();
    assert!(text.contains("broken.gz") && text.contains("cannot decode gzip"), "{text}");
    let swept = |path: &std::path::Path| {
        let out = bin().args(["sweep", "-f", "json"]).arg(path).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["series"][0]["points"].as_array_mut().unwrap().iter_mut().for_each(|p| p["input"] = Value::Null);
        v["series"][0]["points"].clone()
    };
    assert_eq!(swept(&dir.path().join("run.log.gz")), swept(&plain));
}

/// A gzip'd stream that is still being written hands out each run as its block ends: the first
/// run comes out before the writer sends the rest.
#[test]
fn a_live_gzip_stream_hands_out_runs_as_their_blocks_end() {
    use std::sync::mpsc;
    /// A pipe: chunks as the writer sends them, the end when it hangs up.
    struct Pipe(mpsc::Receiver<Vec<u8>>, Vec<u8>);
    impl Read for Pipe {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.1.is_empty() {
                match self.0.recv() {
                    Ok(chunk) => self.1 = chunk,
                    Err(_) => return Ok(0),
                }
            }
            let n = out.len().min(self.1.len());
            out[..n].copy_from_slice(&self.1[..n]);
            self.1.drain(..n);
            Ok(n)
        }
    }
    let log = read("captured/vllm-s2.stdout.txt");
    let (to_reader, chunks) = mpsc::channel();
    let (got_run, first_run) = mpsc::channel();
    let writer = std::thread::spawn(move || {
        // One member, flushed as `gzip` would at the end of a file; the run must come out of it
        // before the second is sent.
        to_reader.send(encode(&log, Enc::Gzip)).unwrap();
        first_run.recv_timeout(std::time::Duration::from_secs(20)).expect("the first run before the rest of the input");
        to_reader.send(encode(&log, Enc::Gzip)).unwrap();
    });
    let mut runs = 0;
    normalize(std::io::BufReader::new(Pipe(chunks, Vec::new())), "live", &Options::default(), &mut |_| {
        runs += 1;
        let _ = got_run.send(());
        Ok(())
    })
    .unwrap();
    writer.join().unwrap();
    assert_eq!(runs, 2);
}

/// Decompression bombs given together, with real result files over the 16 MiB floor, to the
/// executable (which reads many inputs in parallel): each bomb is refused with exit 3 and a
/// message, never an abort, both real files are read whole, and the process's memory stays
/// bounded (the bombs hold 16 MiB each, one document at a time holds more).
#[test]
fn bombs_read_in_parallel_are_refused_and_real_files_read() {
    let dir = tempfile::tempdir().unwrap();
    let gz = |parts: &[&[u8]]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        for p in parts {
            e.write_all(p).unwrap();
        }
        e.finish().unwrap()
    };
    // 1 MB of gzip decoding to 1 GiB of JSON: members one after another.
    let member = gz(&[&vec![b'a'; 16 << 20]]);
    let mut bomb = gz(&[b"{\"a\": \""]);
    for _ in 0..64 {
        bomb.extend_from_slice(&member);
    }
    bomb.extend(gz(&[b"\"}"]));
    let sample = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.result.json")).unwrap();
    let open = sample.trim_end().strip_suffix('}').unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut figures = String::new();
    while figures.len() < 20 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        figures.push_str(&format!("{}.{:04}, ", state % 1000, state % 10_000));
    }
    let real = gz(&[open.as_bytes(), b", \"timings\": [", figures.as_bytes(), b"0]}"]);
    let mut args = Vec::new();
    for i in 0..4 {
        let (name, bytes) =
            if i % 2 == 0 { (format!("bomb{i}.json.gz"), &bomb) } else { (format!("real{i}.json.gz"), &real) };
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        args.push(path);
    }
    #[cfg(target_os = "linux")]
    let (out, max_rss) = common::output_with_max_rss(bin().args(["-f", "jsonl"]).args(&args));
    #[cfg(not(target_os = "linux"))]
    let out = bin().args(["-f", "jsonl"]).args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("memory allocation"), "{stderr}");
    for i in [0, 2] {
        assert!(stderr.contains(&format!("bomb{i}.json.gz")) && stderr.contains("decompression bomb"), "{stderr}");
    }
    let runs = printed_runs(&out.stdout);
    assert_eq!(runs.len(), 2, "{stderr}");
    // The child's own largest resident set, in KiB.
    #[cfg(target_os = "linux")]
    assert!(max_rss < 300 << 10, "{max_rss} KiB");
}

// ---------------------------------------------------------------------------------------------
// A compressed input cut anywhere gives the runs of what decodes before the cut, as `gzip -dc`,
// `zstd -dc` and `xz -dc` write it.

/// What a streaming decoder writes of `bytes` cut off: gzip and xz decoded until they stop (the
/// reference decoders, not the tool's readers); zstd to the end of the last complete block, by a
/// frame rebuilt to end there (the tool's reader never sees this frame).
fn reference_prefix(enc: Enc, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match enc {
        Enc::Gzip => {
            let mut d = flate2::read::MultiGzDecoder::new(bytes);
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = d.read(&mut buf) {
                out.extend_from_slice(&buf[..n]);
            }
        }
        Enc::Xz => {
            use lzma_rust2::{Action, Status, XzStream};
            let mut s = XzStream::new(true);
            let mut buf = vec![0u8; 4096];
            let mut at = 0;
            loop {
                let action = if at == bytes.len() { Action::Finish } else { Action::Run };
                let Ok(r) = s.process(&bytes[at..], &mut buf, action) else { break };
                at += r.bytes_consumed;
                out.extend_from_slice(&buf[..r.bytes_produced]);
                if r.status == Status::StreamEnd || (r.bytes_consumed == 0 && r.bytes_produced == 0) {
                    break;
                }
            }
        }
        Enc::Zstd => {
            let mut at = 0;
            while at + 4 <= bytes.len() {
                let magic = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
                if magic & 0xffff_fff0 == 0x184d_2a50 {
                    let Some(len) = bytes.get(at + 4..at + 8) else { break };
                    at += 8 + u32::from_le_bytes(len.try_into().unwrap()) as usize;
                    continue;
                }
                let Some(&d) = bytes.get(at + 4) else { break };
                let single = d & 0x20 != 0;
                let fcs = match d >> 6 {
                    0 => usize::from(single),
                    1 => 2,
                    2 => 4,
                    _ => 8,
                };
                let header_len = 5 + usize::from(!single) + [0, 1, 2, 4][usize::from(d & 3)] + fcs;
                if bytes.len() < at + header_len {
                    break;
                }
                let mut b = at + header_len;
                let mut last_complete = None;
                let mut finished = false;
                while let Some(h) = bytes.get(b..b + 3) {
                    let h = u32::from_le_bytes([h[0], h[1], h[2], 0]);
                    let payload = if (h >> 1) & 3 == 1 { 1 } else { (h >> 3) as usize };
                    if bytes.len() < b + 3 + payload {
                        break;
                    }
                    last_complete = Some(b);
                    b += 3 + payload;
                    if h & 1 != 0 {
                        finished = true;
                        break;
                    }
                }
                let checksum = if d & 4 != 0 { 4 } else { 0 };
                if finished && bytes.len() >= b + checksum {
                    let frame = &bytes[at..b + checksum];
                    let mut dec = ruzstd::decoding::StreamingDecoder::new(frame).unwrap();
                    dec.read_to_end(&mut out).unwrap();
                    at = b + checksum;
                    continue;
                }
                // Cut: the complete blocks, the last of them marked last, without a checksum.
                if let Some(last) = last_complete {
                    let mut frame = bytes[at..b].to_vec();
                    frame[4] &= !4;
                    frame[last - at] |= 1;
                    let mut dec = ruzstd::decoding::StreamingDecoder::new(&frame[..]).unwrap();
                    dec.read_to_end(&mut out).unwrap();
                }
                break;
            }
        }
        _ => unreachable!(),
    }
    out
}

/// The figures of the runs of `text` that are complete (not cut off).
fn complete_runs(runs: &[Run]) -> Vec<Value> {
    runs.iter().filter(|r| r.source.truncated.is_none()).map(common::figures_of).collect()
}

/// A log of several runs, with noise between them that compresses as real logs do: long enough
/// for many gzip blocks, zstd blocks and LZMA2 chunks.
fn long_log() -> Vec<u8> {
    let mut out = Vec::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for name in ["vllm-s2", "sglang-s2", "vllm-s4", "sglang-oai-s3", "vllm-s3"] {
        for i in 0..3000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out.extend_from_slice(format!("INFO {i} request {state:016x} done\n").as_bytes());
        }
        out.extend(std::fs::read(common::samples_dir().join(format!("captured/{name}.stdout.txt"))).unwrap());
    }
    out
}

#[test]
fn a_cut_compressed_input_gives_every_run_decoded_before_the_cut() {
    let log = long_log();
    let mut cases: Vec<(String, Enc, Vec<u8>)> = [Enc::Gzip, Enc::Zstd, Enc::Xz]
        .into_iter()
        .map(|enc| (format!("long log, {enc:?}"), enc, encode(&log, enc)))
        .collect();
    for (name, _, _) in manifest() {
        let bytes = read(&format!("compressed/{name}"));
        let enc = match bytes[..] {
            [0x1f, 0x8b, ..] => Enc::Gzip,
            [0xfd, b'7', ..] => Enc::Xz,
            [0x28, 0xb5, ..] | [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Enc::Zstd,
            _ => continue,
        };
        cases.push((name, enc, bytes));
    }
    let mut runs_before_cuts = 0;
    for (name, enc, bytes) in &cases {
        for per_mille in [100, 300, 500, 700, 850, 950, 990] {
            let cut = &bytes[..bytes.len() * per_mille / 1000];
            let prefix = reference_prefix(*enc, cut);
            let want = match common::run_all(&prefix, "in") {
                Ok(runs) => complete_runs(&runs),
                Err(_) => Vec::new(),
            };
            let (got, err) = stream(cut);
            assert!(err.is_some(), "{name} cut at {per_mille}‰: the cut is said");
            assert_eq!(
                complete_runs(&got),
                want,
                "{name} cut at {per_mille}‰ ({} of {} bytes decode)",
                prefix.len(),
                log.len()
            );
            runs_before_cuts += want.len();
        }
    }
    // The property is about runs, not only errors: the long logs' cuts hold many.
    assert!(runs_before_cuts > 40, "{runs_before_cuts}");
}

// ---------------------------------------------------------------------------------------------
// A log whose encoding changes partway (PowerShell's `>>` appends UTF-16LE to a UTF-8 log, a
// program appends UTF-8 to a PowerShell log): every part read, as if it were all UTF-8.

#[derive(Debug, Clone, Copy)]
enum Part {
    Utf8,
    Utf8Bom,
    Utf16(bool, bool),
}

fn part(text: &[u8], how: Part) -> Vec<u8> {
    match how {
        Part::Utf8 => text.to_vec(),
        Part::Utf8Bom => [&[0xef, 0xbb, 0xbf][..], text].concat(),
        Part::Utf16(big_endian, bom) => {
            let mark: &[u8] = match (bom, big_endian) {
                (false, _) => b"",
                (true, false) => b"\xff\xfe",
                (true, true) => b"\xfe\xff",
            };
            [mark, &utf16(text, big_endian)].concat()
        }
    }
}

fn how() -> impl Strategy<Value = Part> {
    prop_oneof![
        Just(Part::Utf8),
        Just(Part::Utf8Bom),
        (any::<bool>(), any::<bool>()).prop_map(|(be, bom)| Part::Utf16(be, bom)),
    ]
}

/// The captured console logs.
fn logs() -> Vec<&'static Captured> {
    captured().iter().filter(|(n, ..)| n.ends_with(".stdout.txt")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Two captured logs, each in any encoding, one after the other: the runs of both, figure for
    /// figure those of the two logs in UTF-8.
    #[test]
    fn a_log_appended_in_another_encoding_is_read_whole(
        a in 0usize..1000, b in 0usize..1000, first in how(), second in how()
    ) {
        let logs = logs();
        let (a, b) = (logs[a % logs.len()], logs[b % logs.len()]);
        let plain = [&a.1[..], b"\n", &b.1[..]].concat();
        let want = figures(&common::run_all(&plain, "in").unwrap());
        prop_assert!(want.len() >= 2);
        let mixed = [part(&a.1, first), part(b"\n", second), part(&b.1, second)].concat();
        let (runs, err) = stream(&mixed);
        prop_assert!(err.is_none(), "{:?}", err);
        prop_assert_eq!(figures(&runs), want, "{} as {:?}, then {} as {:?}", a.0, first, b.0, second);
    }
}

/// Through the executable: a UTF-8 vLLM log with an SGLang run appended by PowerShell (UTF-16LE,
/// no byte-order mark when appending), and the reverse.
#[test]
fn the_executable_reads_a_run_appended_by_powershell() {
    let vllm = read("captured/vllm-s2.stdout.txt");
    let sglang = read("captured/sglang-s2.stdout.txt");
    let plain = [&vllm[..], b"\n", &sglang[..]].concat();
    let want = printed_runs(&common::output_with_stdin(bin().args(["-f", "jsonl"]), &plain).stdout);
    assert_eq!(want.len(), 2);
    for mixed in [
        [&vllm[..], &utf16(b"\n", false), &utf16(&sglang, false)].concat(),
        [&b"\xff\xfe"[..], &utf16(&vllm, false), b"\n", &sglang].concat(),
    ] {
        let out = common::output_with_stdin(bin().args(["-f", "jsonl"]), &mixed);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let mut got = printed_runs(&out.stdout);
        for run in &mut got {
            run["source"]["first_line"] = Value::Null;
            run["source"]["last_line"] = Value::Null;
        }
        let mut want = want.clone();
        for run in &mut want {
            run["source"]["first_line"] = Value::Null;
            run["source"]["last_line"] = Value::Null;
        }
        assert_eq!(got, want);
    }
}
