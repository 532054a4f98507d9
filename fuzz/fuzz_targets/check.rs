//! Arbitrary bytes through `bench_normalize::normalize` with `reports_only` set, as the `check`
//! subcommand reads its inputs (hand-written JSON reports). Any result is fine; a panic is the bug.
#![no_main]

use bench_normalize::{Options, normalize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = Options { reports_only: true, ..Options::default() };
    let _ = normalize(data, "fuzz", &opts, &mut |run: bench_normalize::Run| {
        let _ = bench_normalize::emit::write_jsonl(&mut std::io::sink(), &run);
        Ok(())
    });
});
