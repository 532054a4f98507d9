//! `bench-normalize`: serving-benchmark output (vLLM `vllm bench serve`, SGLang
//! `sglang.bench_serving`) to one canonical report, with TPOT derived from E2E latency, TTFT and
//! token counts (never from ITL), and runs that contradict their own totals rejected.
//!
//! The data path, one module per stage, each feeding the next:
//!
//! ```text
//! input -> detect -> extract -> canonical -> derive -> validate -> emit
//! ```
//!
//! * [`input`] reads bytes into clean lines (colour codes, `\r` progress bars, bad UTF-8);
//! * [`detect`] finds result blocks and which tool and variant printed them, using the
//!   definitions in `parsers/` ([`definition`]);
//! * [`extract`] reads every row and the value of each known one ([`lex`], [`value`]);
//! * [`canonical`] builds a [`Run`] of canonical figures ([`vocabulary`], [`report`]);
//! * [`derive`] computes TPOT and what follows from it;
//! * [`validate`] checks the run against its own totals;
//! * [`emit`] writes the report.
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

pub mod canonical;
pub mod check;
pub mod client;
pub mod definition;
pub mod derive;
pub mod detect;
pub mod dstack_model;
pub mod emit;
pub mod error;
pub mod extract;
pub mod input;
pub mod lex;
pub mod llmd;
pub mod report;
pub mod schema;
pub mod validate;
pub mod value;
pub mod vocabulary;

mod pipeline;

use std::io::BufRead;

pub use definition::Definitions;
pub use error::{Error, ExitCode};
pub use report::{Report, Run};
pub use validate::{Policy, Tolerances};

/// How to normalize.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    pub definitions: &'a Definitions,
    pub policy: Policy,
    /// Accept only reports (canonical, or a report shape in `parsers/`), as `check` does.
    pub reports_only: bool,
    /// Read the blocks of a text input on a second thread while the first goes on scanning. Runs
    /// are still handed out in order, and, from a stream ([`normalize`]), each before a read of
    /// the input that would wait (see `ready`), so `tail -f log | bench-normalize` prints each as
    /// its block ends.
    pub pipelined: bool,
    /// Whether the input has bytes to read at once (a `poll` of a pipe or a terminal). Without
    /// it, a pipelined read of a stream takes every read as one that may wait, and waits for the
    /// second thread's runs before it: correct, but little is left of the second thread.
    pub ready: Option<&'a (dyn Fn() -> bool + Sync)>,
}

impl Default for Options<'static> {
    fn default() -> Self {
        Options {
            definitions: Definitions::builtin(),
            policy: Policy::default(),
            reports_only: false,
            pipelined: false,
            ready: None,
        }
    }
}

/// Where runs (and problems that do not stop the input) go, as soon as they are found.
pub trait Sink {
    fn run(&mut self, run: Run) -> Result<(), Error>;
    /// A problem with part of an input (a malformed JSONL line) while the rest is still read.
    fn diagnostic(&mut self, _error: Error) {}
    /// How this sink turns a run into its output, when that needs nothing but the run (JSON
    /// Lines, say). A pipelined read ([`Options::pipelined`]) then renders some runs on its second
    /// thread, when the first one (reading the input and handing out runs) is the busier, and
    /// hands them to [`Sink::rendered`] instead of [`Sink::run`]: a sink that gives a function
    /// here implements both.
    fn render(&self) -> Option<Render> {
        None
    }
    /// A run's bytes, as [`Sink::render`]'s function made them, and its [`Run::outline`]
    /// (source, checks, verdict; the figures, notes and rows are in the bytes). Called only for
    /// a sink that gives [`Sink::render`] a function; this default, for the others, is never used.
    fn rendered(&mut self, run: Run, _bytes: Vec<u8>) -> Result<(), Error> {
        self.run(run)
    }
}

/// A sink's rendering of a run (see [`Sink::render`]); `None` when it cannot render it, and the
/// run then goes to [`Sink::run`] (which reports why).
pub type Render = fn(&Run) -> Option<Vec<u8>>;

impl<F: FnMut(Run) -> Result<(), Error>> Sink for F {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self(run)
    }
}

/// Normalize one input, handing each run to `sink` as soon as it is complete. Text logs are read
/// incrementally; JSON result files and reports are recognized by their first character.
/// Returns how many runs were found; none is an error ([`Error::NoResult`], or the first
/// problem met).
pub fn normalize<R: BufRead>(reader: R, input: &str, opts: &Options, sink: &mut dyn Sink) -> Result<usize, Error> {
    pipeline::read(reader, input, opts, sink, true)
}

/// Normalize a regular file, as [`normalize`] does. A JSON file is read in place from a
/// private memory map instead of being copied into memory (a vLLM result file with
/// `--save-detailed` is hundreds of MB; reading it costs a copy and a page fault per page).
pub fn normalize_file(file: std::fs::File, input: &str, opts: &Options, sink: &mut dyn Sink) -> Result<usize, Error> {
    pipeline::read_file(file, input, opts, sink)
}

/// Normalize a text held in memory, with the built-in definitions and default policy.
pub fn normalize_str(text: &str, input: &str) -> Result<Vec<Run>, Error> {
    let mut runs = Vec::new();
    normalize(text.as_bytes(), input, &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })?;
    Ok(runs)
}
