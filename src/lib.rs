//! `bench-normalize`: serving-benchmark output (vLLM `vllm bench serve`, SGLang
//! `sglang.bench_serving`) to one canonical report, with TPOT derived from E2E latency, TTFT and
//! token counts (never from ITL), and runs that contradict their own totals rejected.
//!
//! The public API is this page: [`normalize_str`], [`normalize`] (a reader) and [`normalize_file`];
//! the [`Options`] ([`Definitions`], [`Policy`], [`Tolerances`]) and the [`Sink`] runs go to; the
//! report's types ([`Run`], [`Report`], module [`report`]); writing a report in a format
//! ([`emit`], [`llmd`]); judging runs on service-level objectives ([`objectives`]); comparing
//! configurations ([`compare`]); sweeps summarized ([`sweep`]) and plotted ([`plot`]); [`Error`],
//! its [`ExitCode`] and the [`Location`] in an input it points at.
//!
//! This package is the library's face: the code is in the layers under `crates/` (the pipeline
//! and the report model in `bench-normalize-core`, the features on reports in
//! `bench-normalize-analysis`, the history of runs in `bench-normalize-store`, the command line in
//! `bench-normalize-cli`), and this page re-exports what a user of the library calls. Inside, the
//! data path is one module per stage, each feeding the next:
//!
//! ```text
//! input -> detect -> extract -> canonical -> derive -> validate -> emit
//! ```
//!
//! ```
//! let log = "\n============ Serving Benchmark Result ============\n\
//! Backend:                                 sglang-oai\n\
//! Successful requests:                     16\n\
//! Benchmark duration (s):                  26.74\n\
//! Total generated tokens:                  8192\n\
//! Mean E2E Latency (ms):                   6682.24\n\
//! Mean TTFT (ms):                          140.14\n\
//! Mean ITL (ms):                           125.81\n\
//! ==================================================\n";
//! let runs = bench_normalize::normalize_str(log, "-").unwrap();
//! assert_eq!(runs[0].derived.tpot_ms.mean, Some(12.8025));
//! ```

#[doc(inline)]
pub use bench_normalize_analysis::{aggregate, compare, plot, stats, sweep};
#[doc(inline)]
pub use bench_normalize_core::{
    Collect, Definitions, Error, ExitCode, Location, Options, Policy, Report, Run, Sink, Tolerances,
};
#[doc(inline)]
pub use bench_normalize_core::{
    emit, llmd, normalize, normalize_file, normalize_str, objectives, output_schema, report,
};
/// The history of accepted runs (SQLite or PostgreSQL) and the regression verdict: docs/store.md.
/// Only with the `store` cargo feature (default).
#[cfg(feature = "store")]
#[doc(inline)]
pub use bench_normalize_store as store;
