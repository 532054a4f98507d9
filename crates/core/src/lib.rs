//! `bench-normalize-core`: the layer of `bench-normalize` that reads. Serving-benchmark output
//! (vLLM `vllm bench serve`, SGLang `sglang.bench_serving`) to one canonical report, with TPOT
//! derived from E2E latency, TTFT and token counts (never from ITL), and runs that contradict their
//! own totals rejected.
//!
//! The library's users depend on the root package, `bench_normalize`, which re-exports this
//! crate's API: [`normalize_str`], [`normalize`] (a reader) and [`normalize_file`]; the
//! [`Options`] ([`Definitions`], [`Policy`], [`Tolerances`]) and the [`Sink`] runs go to; the
//! report's types ([`Run`], [`Report`], module [`report`]); writing a report in a format
//! ([`emit`], [`llmd`]); judging runs on service-level objectives ([`objectives`]); [`Error`], its
//! [`ExitCode`] and the [`Location`] in an input it points at.
//!
//! Inside, the data path is one module per stage, each feeding the next:
//!
//! ```text
//! input -> detect -> extract -> canonical -> derive -> validate -> emit
//! ```
//!
//! `pipeline` drives it for one input (text or JSON, on one thread or two).
//!
//! For the layers above (`bench-normalize-analysis`, `-store`, `-cli`: docs/architecture.md), this
//! crate also makes public what they share with it: how a figure is rounded and shown
//! ([`number`]), the figure vocabulary ([`vocabulary`]) and how an error and input text are said
//! ([`error`]). The modules hidden from these pages (the stages and the driver the command line
//! drives directly, for its second thread per input and its `--explain` listings) are public only
//! so that those crates compile against them: they are not the library's API, and the root package
//! re-exports none of them.

mod canonical;
mod check;
// The layers above: `aggregate` reads per-request times and percentiles as `derive` does, the
// command line lists definitions and the banner patterns looked for, reads inputs through the
// driver and closes the runs `run` builds. Not API: hidden, and their docs (for readers of the
// source, who see private items too) may name private items.
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod definition;
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod derive;
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod detect;
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod dstack;
pub mod emit;
pub mod error;
mod extract;
// Public only for the layers above: the lints of a public API (`len` without `is_empty`) are
// not its rules.
#[doc(hidden)]
#[allow(clippy::len_without_is_empty, rustdoc::private_intra_doc_links)]
pub mod input;
mod lex;
pub mod llmd;
pub mod number;
pub mod objectives;
pub mod output_schema;
#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod pipeline;
pub mod report;
mod schema;
mod shape;
mod validate;
mod value;
pub mod vocabulary;

use std::io::BufRead;

pub use definition::Definitions;
pub use error::{Error, ExitCode, Location};
pub use report::{Report, Run};
pub use validate::{Policy, Tolerances};

/// How to normalize.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// The parser definitions: [`Definitions::builtin`], or those of a folder over them
    /// ([`Definitions::with_dir`]).
    pub definitions: &'a Definitions,
    /// How strict the rules are, and their tolerances.
    pub policy: Policy,
    /// Accept only reports (canonical, or a report shape in `parsers/`), as `check` does.
    pub reports_only: bool,
}

impl Default for Options<'static> {
    fn default() -> Self {
        Options { definitions: Definitions::builtin(), policy: Policy::default(), reports_only: false }
    }
}

/// Where runs (and problems that do not stop the input) go, as soon as they are found. A closure
/// `FnMut(Run) -> Result<(), Error>` is one.
pub trait Sink {
    /// A run, complete (derived and validated); an error returned stops the reading.
    fn run(&mut self, run: Run) -> Result<(), Error>;
    /// A problem with part of an input (a malformed JSONL line) while the rest is still read.
    fn diagnostic(&mut self, _error: Error) {}
}

/// A [`Sink`] that keeps everything it is handed: the runs in input order, and the problems that
/// did not stop the input (`notes`). What an in-process caller (the Python module, the MCP server)
/// reads whole.
#[derive(Debug, Default)]
pub struct Collect {
    /// The runs, in input order.
    pub runs: Vec<Run>,
    /// Problems with part of an input while the rest was still read.
    pub notes: Vec<Error>,
}

impl Sink for Collect {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.runs.push(run);
        Ok(())
    }

    fn diagnostic(&mut self, error: Error) {
        self.notes.push(error);
    }
}

impl Options<'static> {
    /// The built-in definitions with default tolerances, `strict` as `--strict`, and
    /// `reports_only` as `check` reads (reports only).
    pub fn builtin(strict: bool, reports_only: bool) -> Self {
        Options { definitions: Definitions::builtin(), policy: Policy { strict, ..Policy::default() }, reports_only }
    }
}

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
    pipeline::read(reader, input, &pipeline::Config::from(opts), &mut pipeline::Plain(sink), true)
}

/// Normalize a regular file, as [`normalize`] does. A JSON file is read in place from a
/// private memory map instead of being copied into memory (a vLLM result file with
/// `--save-detailed` is hundreds of MB; reading it costs a copy and a page fault per page).
pub fn normalize_file(file: std::fs::File, input: &str, opts: &Options, sink: &mut dyn Sink) -> Result<usize, Error> {
    pipeline::read_file(file, input, &pipeline::Config::from(opts), &mut pipeline::Plain(sink))
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
