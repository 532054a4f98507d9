//! How long writing the report takes by itself: the runs of a `--format jsonl` output, read into
//! memory first, written again with the executable's own JSON Lines writer, on one core.
//!
//!     cargo run --release --example serialize_only -- RUNS.jsonl [REPS]
//!
//! Prints `runs`, `reps`, `bytes` and `serialize_s` (the fastest of REPS passes, default 5) as
//! tab-separated lines, for bench/run.sh: no way of reading a log can produce that report in less
//! CPU time than this. It fails (exit 1) unless the bytes written are the file's own bytes, so
//! what is timed is the real report.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use bench_normalize::Run;
use bench_normalize::emit::write_jsonl;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: serialize_only RUNS.jsonl [REPS]");
        return ExitCode::from(2);
    };
    let reps: usize = match args.next().map(|r| r.parse()) {
        None => 5,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("serialize_only: REPS must be a whole number above 0");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("serialize_only: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut runs = Vec::new();
    for (i, line) in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()).enumerate() {
        match serde_json::from_slice::<Run>(line) {
            Ok(run) => runs.push(run),
            Err(e) => {
                eprintln!("serialize_only: {path}:{}: not a run: {e}", i + 1);
                return ExitCode::from(2);
            }
        }
    }

    let mut best = f64::INFINITY;
    for _ in 0..reps {
        // Into a buffer and out to a sink, as the executable writes a run (into its line buffer,
        // then to stdout).
        let mut sink = std::io::sink();
        let mut line = Vec::with_capacity(1 << 16);
        let started = Instant::now();
        for run in &runs {
            line.clear();
            write_jsonl(&mut line, run).expect("writing to memory");
            sink.write_all(&line).expect("writing to a sink");
        }
        best = best.min(started.elapsed().as_secs_f64());
    }
    let mut written = Vec::with_capacity(text.len());
    for run in &runs {
        write_jsonl(&mut written, run).expect("writing to memory");
    }
    if written != text {
        eprintln!(
            "serialize_only: the runs written again differ from {path}: not a --format jsonl output of this version"
        );
        return ExitCode::FAILURE;
    }
    println!("runs\t{}", runs.len());
    println!("reps\t{reps}");
    println!("bytes\t{}", written.len());
    println!("serialize_s\t{best:.4}");
    ExitCode::SUCCESS
}
