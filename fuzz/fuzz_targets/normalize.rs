//! Arbitrary bytes through `bench_normalize::normalize` with the default options (what the main
//! command does). The first byte chooses how the rest is presented:
//!
//! * even: as it is (a text log, or JSON when it happens to start with `{` / `[`);
//! * odd: prefixed with `{"` so that it takes the JSON path (result files, reports).
//!
//! Any result (runs or an error) is fine; a panic is the bug.
#![no_main]

use bench_normalize::{Options, normalize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes: Vec<u8> = if mode & 1 == 1 {
        let mut v = b"{\"".to_vec();
        v.extend_from_slice(rest);
        v
    } else {
        rest.to_vec()
    };
    let opts = Options::default();
    let _ = normalize(&bytes[..], "fuzz", &opts, &mut |run: bench_normalize::Run| {
        // Emitting is part of the entry point's job: a run must serialize.
        let _ = bench_normalize::emit::write_jsonl(&mut std::io::sink(), &run);
        Ok(())
    });
});
