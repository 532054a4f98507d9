//! The pipeline driver: one input, whatever it is (a text log read a line at a time, a JSON result
//! file or report read whole), through detect -> extract -> canonical -> derive -> validate, each
//! run handed to the caller's [`Out`] as soon as it is complete.
//!
//! It reads top to bottom: [`classify`] decides once, from the input's first bytes, what the
//! input is (an encoding to take off, JSON, or text), and the input is read as that: [`json`]
//! reads JSON documents (each made runs by [`doc`]), [`text`] scans a text ([`scan`], the JSON
//! records in it by [`embedded`], on a second thread with [`threads`]) and makes each block a run
//! ([`block`]). Every run, from whichever path, ends in [`close()`]: derive, validate, and for a
//! report read back, verify. The steps import each other in that order and take only the shared
//! types from here (`tests/it/driver.rs`).

// An input goes: classify -> json (documents: doc) | text (scan -> embedded records: doc;
// threads) -> block -> close; fold on the way out.
pub(crate) mod block;
pub(crate) mod classify;
pub(crate) mod close;
pub(crate) mod doc;
pub(crate) mod embedded;
pub(crate) mod fold;
pub(crate) mod json;
pub(crate) mod scan;
pub(crate) mod text;
pub(crate) mod threads;

use std::io::{BufRead, Read};

use crate::validate::Policy;
use crate::{Definitions, Error, Options, Run, Sink, input};
use classify::Kind;

pub use close::{Claims, close};

/// [`crate::normalize`]; `live`: the input may make a read wait (a pipe, a terminal), and runs already
/// found are handed out before such a read.
/// How to read an input: the caller's [`Options`], and the speed machinery the command line
/// drives (no public API: see docs/decisions.md, "The crate's public API").
#[derive(Clone, Copy)]
pub struct Config<'a> {
    pub definitions: &'a Definitions,
    pub policy: Policy,
    /// Accept only reports (canonical, or a report shape in `parsers/`), as `check` does.
    pub reports_only: bool,
    /// Read the blocks of a text input on a second thread while the first goes on scanning. Runs
    /// are still handed out in order, and, from a stream, each before a read of the input that
    /// would wait (see `ready`), so `tail -f log | bench-normalize` prints each as its block ends.
    pub pipelined: bool,
    /// Whether the input has bytes to read at once (a `poll` of a pipe or a terminal). Without
    /// it, a pipelined read of a stream takes every read as one that may wait, and waits for the
    /// second thread's runs before it: correct, but little is left of the second thread.
    pub ready: Option<&'a (dyn Fn() -> bool + Sync)>,
    /// What this input may hold whole ([`input::decode::Budget`]): set when a compression is
    /// taken off, unbounded otherwise.
    pub budget: &'a input::decode::Budget,
}

impl<'a> From<&Options<'a>> for Config<'a> {
    /// A library caller's options: one thread, no readiness probe.
    fn from(opts: &Options<'a>) -> Self {
        Config {
            definitions: opts.definitions,
            policy: opts.policy,
            reports_only: opts.reports_only,
            pipelined: false,
            ready: None,
            budget: &input::decode::UNBOUNDED,
        }
    }
}

/// Where the pipeline hands runs (and problems that do not stop the input): a caller's [`Sink`]
/// ([`Plain`]), or the command line's output, which may have runs rendered on the second thread.
pub trait Out {
    fn run(&mut self, run: Run) -> Result<(), Error>;
    /// A problem with part of an input (a malformed JSONL line) while the rest is still read.
    fn diagnostic(&mut self, _error: Error) {}
    /// How this output turns a run into its bytes, when that needs nothing but the run (JSON
    /// Lines, say). A pipelined read ([`Config::pipelined`]) then renders some runs on its second
    /// thread, when the first one (reading the input and handing out runs) is the busier, and
    /// hands them to [`Out::rendered`] instead of [`Out::run`]: an output that gives a function
    /// here implements both.
    fn render(&self) -> Option<Render> {
        None
    }
    /// A run's bytes, as [`Out::render`]'s function made them, and its [`Run::outline`] (source,
    /// checks, verdict; the figures, notes and rows are in the bytes). Called only for an output
    /// that gives [`Out::render`] a function; this default, for the others, is never used.
    fn rendered(&mut self, run: Run, _bytes: Vec<u8>) -> Result<(), Error> {
        self.run(run)
    }
    /// The input is about to be read where the read may wait (a live stream): whatever is held
    /// goes out now ([`fold::Fold`] holds runs a summary may repeat).
    fn idle(&mut self) -> Result<(), Error> {
        Ok(())
    }
    /// Whether [`Out::idle`] would hand anything out.
    fn holds(&self) -> bool {
        false
    }
}

/// An output's rendering of a run (see [`Out::render`]); `None` when it cannot render it, and the
/// run then goes to [`Out::run`] (which reports why).
pub use crate::emit::Render;

/// A library caller's [`Sink`], which renders nothing.
pub(crate) struct Plain<'s>(pub(crate) &'s mut dyn Sink);

impl Out for Plain<'_> {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.0.run(run)
    }

    fn diagnostic(&mut self, error: Error) {
        self.0.diagnostic(error)
    }
}

pub fn read<R: BufRead>(reader: R, input: &str, opts: &Config, sink: &mut dyn Out, live: bool) -> Result<usize, Error> {
    read_layer(reader, input, opts, sink, live, Layers::default())
}

/// The encodings peeled off an input so far (see [`input::decode`]).
#[derive(Default)]
struct Layers {
    depth: usize,
    /// The compressed bytes read, counted under the first compression (to bound what a JSON
    /// document read whole may decode to).
    compressed: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

/// [`read`], of an input whose first `layers.depth` encodings were taken off: what it is is decided
/// from its first bytes ([`classify`]), and it is read as that.
fn read_layer<R: BufRead>(
    mut reader: R,
    input: &str,
    opts: &Config,
    sink: &mut dyn Out,
    live: bool,
    layers: Layers,
) -> Result<usize, Error> {
    let io = |source| input::decode::error(input, source);
    // Look at the start without losing it.
    let mut head = Vec::new();
    loop {
        let chunk = reader.fill_buf().map_err(io)?;
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len().min(classify::HEAD - head.len());
        head.extend_from_slice(&chunk[..n]);
        reader.consume(n);
        if classify::decided(&head, opts) {
            break;
        }
    }
    let kind = classify::kind(&head, opts, layers.depth < input::decode::MAX_LAYERS);
    read_as(kind, std::io::Cursor::new(head).chain(reader), input, opts, sink, live, layers)
}

/// An input read as what [`classify`] decided it is.
fn read_as<R: BufRead>(
    kind: Kind,
    mut reader: R,
    input: &str,
    opts: &Config,
    sink: &mut dyn Out,
    live: bool,
    layers: Layers,
) -> Result<usize, Error> {
    use input::decode;
    let io = |source| decode::error(input, source);
    if let Kind::Encoded(layer) = kind {
        let counted = std::sync::Arc::default();
        let compressed = layers.compressed.or_else(|| layer.compressed().then(|| std::sync::Arc::clone(&counted)));
        let decoded = decode::decoder(layer, reader, counted);
        return read_layer(decoded, input, opts, sink, live, Layers { depth: layers.depth + 1, compressed });
    }
    // A decompressed input holds whole (a JSON document, a record in a text) within its budget.
    let budget = layers.compressed.map(decode::Budget::compressed);
    let with_budget;
    let opts = match &budget {
        Some(budget) => {
            with_budget = Config { budget, ..*opts };
            &with_budget
        }
        None => opts,
    };
    // Kept as long as the text it holds (declared first: dropped last).
    let mut held = decode::Held::default();
    if let Kind::Json = kind {
        let mut text = Vec::new();
        let read = match &budget {
            // A decompressed document: bounded (a decompression bomb), and what decoded before a
            // cut or a corrupt block is still read.
            Some(budget) => decode::read_json(&mut reader, &mut text, budget, &mut held),
            None => reader.read_to_end(&mut text).map(|_| ()),
        };
        return match read.map_err(io) {
            Ok(()) => json::normalize_json(&mut text, input, opts, sink),
            Err(e @ Error::Decode { .. }) => {
                if !text.is_empty() {
                    // The runs of the lines that decoded (JSON Lines); the cut is the error said.
                    let _ = json::normalize_json(&mut text, input, opts, sink);
                }
                Err(e)
            }
            Err(e) => Err(e),
        };
    }
    if opts.reports_only {
        return Err(Error::NoResult {
            input: input.to_string(),
            looked_for: "a JSON report (a canonical report, or a report shape in parsers/)".into(),
        });
    }
    // A text may change its encoding partway (a run appended by PowerShell's `>>`).
    text::normalize_text(input::mixed::Mixed::utf8(reader), input, opts, sink, live)
}

/// [`crate::normalize_file`]: a regular file, as [`read`] reads a stream. A JSON file is read in place from a
/// private memory map instead of being copied into memory (a vLLM result file with
/// `--save-detailed` is hundreds of MB; reading it costs a copy and a page fault per page).
pub fn read_file(mut file: std::fs::File, input: &str, opts: &Config, sink: &mut dyn Out) -> Result<usize, Error> {
    use std::io::Seek;
    // The same look at the start as `read` takes through its reader, decided once; a text log is
    // not mapped, nor a compressed or UTF-16 file (streamed through its decoder).
    let mut head = Vec::new();
    let kind = match (&file).take(classify::HEAD as u64).read_to_end(&mut head) {
        Ok(_) => classify::kind(&head, opts, true),
        Err(_) => Kind::Text,
    };
    file.rewind().map_err(|source| Error::Io { input: input.to_string(), source })?;
    if let Kind::Json = kind {
        // SAFETY: the map is private (copy on write): what the parser writes stays in this
        // process. A file truncated by someone else while it is read would fault, as it would
        // for any program that maps its input (ripgrep, for one); a result file is written once.
        if let Ok(mut map) = unsafe { memmap2::MmapOptions::new().map_copy(&file) } {
            return json::normalize_json(&mut map, input, opts, sink);
        }
    }
    let reader = std::io::BufReader::with_capacity(256 * 1024, file);
    read_as(kind, reader, input, opts, sink, false, Layers::default())
}
