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
pub mod compare;
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

use std::io::{BufRead, Read};

pub use definition::Definitions;
pub use error::{Error, ExitCode};
pub use report::{Report, Run};
pub use validate::{Policy, Tolerances};

use detect::{Block, BlockEnd, DocKind, Scanner};
use error::Location;
use input::json::{Doc, DocSeed, Documents, read_doc_fast};
use report::{Format, Note, Truncation};
use serde::de::DeserializeSeed;

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
    normalize_read(reader, input, opts, sink, true)
}

/// [`normalize`]; `live`: the input may make a read wait (a pipe, a terminal), and runs already
/// found are handed out before such a read.
fn normalize_read<R: BufRead>(
    mut reader: R,
    input: &str,
    opts: &Options,
    sink: &mut dyn Sink,
    live: bool,
) -> Result<usize, Error> {
    let io = |source| Error::Io { input: input.to_string(), source };
    // Look at the start without losing it.
    let mut head = Vec::new();
    loop {
        let chunk = reader.fill_buf().map_err(io)?;
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len().min(64 * 1024 - head.len());
        head.extend_from_slice(&chunk[..n]);
        reader.consume(n);
        let started = head.iter().any(|b| !b.is_ascii_whitespace() && *b != 0xef && *b != 0xbb && *b != 0xbf);
        // A start like JSON is read on until what the input is shows (see `json_head_is_text`).
        if head.len() >= 64 * 1024
            || started
                && (!looks_like_json(&head)
                    || opts.reports_only
                    || json_head_is_text(&head, opts.definitions).is_some())
        {
            break;
        }
    }
    let mut reader = std::io::Cursor::new(head).chain(reader);
    let head = reader.get_ref().0.get_ref();
    if read_as_json(head, opts) {
        let mut text = Vec::new();
        reader.read_to_end(&mut text).map_err(io)?;
        return normalize_json(&mut text, input, opts, sink);
    }
    if opts.reports_only {
        return Err(Error::NoResult {
            input: input.to_string(),
            looked_for: "a JSON report (a canonical report, or a report shape in parsers/)".into(),
        });
    }
    normalize_text(reader, input, opts, sink, live)
}

/// Normalize a regular file, as [`normalize`] does. A JSON file is read in place from a
/// private memory map instead of being copied into memory (a vLLM result file with
/// `--save-detailed` is hundreds of MB; reading it costs a copy and a page fault per page).
pub fn normalize_file(
    mut file: std::fs::File,
    input: &str,
    opts: &Options,
    sink: &mut dyn Sink,
) -> Result<usize, Error> {
    use std::io::Seek;
    // The same look at the start as `normalize` takes through its reader; a text log is not mapped.
    let mut head = Vec::new();
    let json = (&file).take(64 * 1024).read_to_end(&mut head).is_ok() && read_as_json(&head, opts);
    file.rewind().map_err(|source| Error::Io { input: input.to_string(), source })?;
    if json {
        // SAFETY: the map is private (copy on write): what the parser writes stays in this
        // process. A file truncated by someone else while it is read would fault, as it would
        // for any program that maps its input (ripgrep, for one); a result file is written once.
        if let Ok(mut map) = unsafe { memmap2::MmapOptions::new().map_copy(&file) } {
            return normalize_json(&mut map, input, opts, sink);
        }
    }
    normalize_read(std::io::BufReader::with_capacity(256 * 1024, file), input, opts, sink, false)
}

/// A text that starts like a JSON object or list (after white space and a byte-order mark).
fn looks_like_json(head: &[u8]) -> bool {
    let mut it = head.iter().copied().skip_while(|b| b.is_ascii_whitespace() || matches!(b, 0xef | 0xbb | 0xbf));
    match it.next() {
        Some(b'{') => matches!(it.find(|b| !b.is_ascii_whitespace()), Some(b'"') | Some(b'}') | None),
        Some(b'[') => matches!(it.find(|b| !b.is_ascii_whitespace()), Some(b'{') | Some(b'[') | Some(b']') | None),
        _ => false,
    }
}

/// Whether an input whose first bytes are `head` is read as JSON: it starts like JSON, and is
/// no text log that starts with JSON log records (see [`json_head_is_text`]; `check` reads JSON
/// only).
fn read_as_json(head: &[u8], opts: &Options) -> bool {
    looks_like_json(head) && (opts.reports_only || json_head_is_text(head, opts.definitions) != Some(true))
}

/// Whether a text that starts like JSON is a text log all the same (a JSON log record on its first
/// line, then the tool's output): `Some(true)` when, after complete JSON documents none of which is
/// a known result file or report, comes a line that is no JSON; `Some(false)` when one is a known
/// one (the input is read as JSON, its text lines scanned too); `None` while `head` does not tell.
/// Such a log is then scanned as text a line at a time, in bounded memory, as any other.
fn json_head_is_text(head: &[u8], defs: &Definitions) -> Option<bool> {
    let arrays = defs.json_keys();
    let known = |doc: &Doc| !matches!(detect::classify_doc(doc, defs), DocKind::Unknown);
    let mut docs = Documents::new(head);
    while let Some(span) = docs.next() {
        let slice = &head[span.start..span.end];
        if !looks_like_json(slice) {
            // A line of text after the JSON.
            return Some(true);
        }
        if !span.complete {
            if span.end >= head.len() {
                return None;
            }
            docs.skip_to_next_line(span.start);
            continue;
        }
        let mut de = serde_json::Deserializer::from_slice(slice);
        if let Ok(doc) = (DocSeed { arrays: &arrays, line: span.line }).deserialize(&mut de) {
            if known(&doc) || doc.elements.iter().any(known) {
                return Some(false);
            }
        }
    }
    None
}

fn normalize_text<R: BufRead>(
    reader: R,
    input: &str,
    opts: &Options,
    sink: &mut dyn Sink,
    live: bool,
) -> Result<usize, Error> {
    let mut scanner = Scanner::new(opts.definitions);
    let found = if opts.pipelined {
        normalize_text_pipelined(reader, input, opts, &mut scanner, sink, live)?
    } else {
        let mut found = 0;
        scan(reader, input, &mut scanner, &mut |block| {
            found += 1;
            sink.run(run_of_block(&block, input, &opts.policy))
        })?;
        found
    };
    if found == 0 {
        return Err(Error::NoResult { input: input.to_string(), looked_for: scanner.looked_for() });
    }
    Ok(found)
}

/// Feed every line to the scanner and every completed block, in order, to `on_block`.
fn scan<'d, R: BufRead>(
    reader: R,
    input: &str,
    scanner: &mut Scanner<'d>,
    on_block: &mut dyn FnMut(Block<'d>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut lines = input::LineReader::new(reader);
    loop {
        if !scanner.in_block() {
            // Outside a block, pass over lines that cannot start one, a buffer at a time.
            lines.skip_unwanted(|hay| scanner.first_wanted(hay));
        }
        let more = match lines.next_raw() {
            Some(Ok(raw)) => {
                // Most of a log is noise: look at a line's bytes first, decode only what matters.
                if scanner.wants(raw.bytes) {
                    scanner.push(raw.to_line());
                }
                true
            }
            Some(Err(source)) => return Err(Error::Io { input: input.to_string(), source }),
            None => {
                scanner.finish();
                false
            }
        };
        while let Some(block) = scanner.pop() {
            on_block(block)?;
        }
        if !more {
            return Ok(());
        }
    }
}

/// [`scan`] on this thread, which also hands runs to the sink in order; a second thread extracts,
/// derives and validates each block (bounded queues keep memory bounded). Returns the runs found.
/// `live`: before the input is asked for more (a read that may wait, on a pipe or a terminal),
/// every run of a block already read is handed out, so that a live stream gets each run as its
/// block ends. (Not for a file, read to its end anyway: waiting for the worker there costs.)
fn normalize_text_pipelined<'d, R: BufRead>(
    reader: R,
    input: &str,
    opts: &Options,
    scanner: &mut Scanner<'d>,
    sink: &mut dyn Sink,
    live: bool,
) -> Result<usize, Error> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    /// Blocks waiting for the worker up to which it is keeping up, and renders runs too. Blocks
    /// come in bursts, so the queue is often longer than the worker's lag: at 2 it rendered a
    /// third of the bench log's runs, at 16 half (about 3% faster in interleaved timings), and
    /// rendering all of them makes it the slower thread (15% slower).
    const KEEPING_UP: usize = 16;
    let policy = opts.policy;
    let render = sink.render();
    // Blocks sent to the worker and not yet taken: few, and this thread is the busier one.
    let waiting = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (to_worker, blocks) = mpsc::sync_channel::<Block<'d>>(64);
        let (to_main, runs) = mpsc::sync_channel::<(Run, Option<Vec<u8>>)>(64);
        let waiting = &waiting;
        scope.spawn(move || {
            for block in blocks {
                let keeping_up = waiting.fetch_sub(1, Ordering::Relaxed) <= KEEPING_UP;
                let run = run_of_block(&block, input, &policy);
                let bytes = render.filter(|_| keeping_up).and_then(|r| r(&run));
                // What was rendered is dropped here, where it was made (freeing memory another
                // thread allocated costs more), and not on the busier scanning thread.
                let run = if bytes.is_some() { run.outline() } else { run };
                if to_main.send((run, bytes)).is_err() {
                    break;
                }
            }
        });
        let out = std::cell::RefCell::new(HandOut { sink, runs, sent: 0, found: 0, failed: None });
        let reader = BeforeRefill {
            inner: reader,
            left: 0,
            before_refill: || {
                let mut out = out.borrow_mut();
                // Wait for the worker only where the read would wait too.
                let waits = live && out.found < out.sent && !opts.ready.is_some_and(|ready| ready());
                if waits { out.all() } else { out.ready() }.map_err(|e| {
                    out.failed = Some(e);
                    std::io::Error::other("the output failed")
                })
            },
        };
        let scanned = scan(reader, input, scanner, &mut |block| {
            let mut out = out.borrow_mut();
            out.sent += 1;
            waiting.fetch_add(1, Ordering::Relaxed);
            // A closed queue means the worker stopped; the runs it sent are still drained below.
            let _ = to_worker.send(block);
            out.ready()
        });
        drop(to_worker);
        let mut out = out.into_inner();
        if let Some(e) = out.failed.take() {
            return Err(e);
        }
        scanned?;
        out.all()?;
        Ok(out.found)
    })
}

/// The runs coming back from the pipelined worker, in the order their blocks were sent, and the
/// sink they go to.
struct HandOut<'s> {
    sink: &'s mut dyn Sink,
    runs: std::sync::mpsc::Receiver<(Run, Option<Vec<u8>>)>,
    sent: usize,
    found: usize,
    /// The sink's error, met while handing out before a read (which then stops).
    failed: Option<Error>,
}

impl HandOut<'_> {
    fn give(&mut self, (run, bytes): (Run, Option<Vec<u8>>)) -> Result<(), Error> {
        self.found += 1;
        match bytes {
            Some(bytes) => self.sink.rendered(run, bytes),
            None => self.sink.run(run),
        }
    }

    /// The runs that are ready, without waiting.
    fn ready(&mut self) -> Result<(), Error> {
        while let Ok(got) = self.runs.try_recv() {
            self.give(got)?;
        }
        Ok(())
    }

    /// Every run of a block sent so far, waiting for the worker (a stopped worker sends no more).
    fn all(&mut self) -> Result<(), Error> {
        while self.found < self.sent {
            let Ok(got) = self.runs.recv() else { break };
            self.give(got)?;
        }
        Ok(())
    }
}

/// A reader that calls `before_refill` whenever `inner` is asked for more than it holds: the
/// moment a read may wait for its source.
struct BeforeRefill<R, F> {
    inner: R,
    /// Bytes of the last `fill_buf` not consumed yet.
    left: usize,
    before_refill: F,
}

impl<R: BufRead, F: FnMut() -> std::io::Result<()>> Read for BeforeRefill<R, F> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead, F: FnMut() -> std::io::Result<()>> BufRead for BeforeRefill<R, F> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.left == 0 {
            (self.before_refill)()?;
        }
        let buf = self.inner.fill_buf()?;
        self.left = buf.len();
        Ok(buf)
    }

    fn consume(&mut self, n: usize) {
        self.left = self.left.saturating_sub(n);
        self.inner.consume(n);
    }
}

fn normalize_json(text: &mut [u8], input: &str, opts: &Options, sink: &mut dyn Sink) -> Result<usize, Error> {
    let arrays = opts.definitions.json_keys();
    // The usual file, one well-formed document, read as it is: the fast path gives up on a bare
    // NaN or Infinity, so where it succeeds sanitizing would have changed nothing.
    let raw: &[u8] = text;
    if let Some(doc) = read_doc_fast(raw, &arrays, first_line(raw)) {
        return runs_of_docs(raw, vec![Ok(doc)], 0, input, opts, sink);
    }
    let (shifts, widened) = input::json::sanitize(text);
    let text: &[u8] = widened.as_deref().unwrap_or(text);
    // Unless sanitizing quoted something, the fast path would give up on the whole text again.
    let (docs, text_lines) = read_documents(text, &shifts, &arrays, input, shifts.quoted > 0, opts.reports_only);
    runs_of_docs(text, docs, text_lines, input, opts, sink)
}

/// Line of the first non-blank character.
fn first_line(text: &[u8]) -> usize {
    1 + text.iter().take_while(|b| b.is_ascii_whitespace()).filter(|b| **b == b'\n').count()
}

/// extract -> ... -> validate every document, and hand out the runs (or the errors).
/// `text_lines`: pieces of the text that are no JSON (lines of a log that has JSON lines in it).
fn runs_of_docs(
    text: &[u8],
    docs: Vec<Result<Doc<'_>, Error>>,
    text_lines: usize,
    input: &str,
    opts: &Options,
    sink: &mut dyn Sink,
) -> Result<usize, Error> {
    let mut found = 0;
    let mut errors: Vec<Error> = Vec::new();
    let mut index = 0;
    // Documents that parse but are no known format: a JSON log, perhaps, with a result block
    // inside its (escaped) strings.
    let mut unknown_only = true;
    // Documents of a known format (a result file, a report), whether or not they gave a run.
    let mut known = 0;
    let mut runs = Vec::new();
    for doc in docs {
        let doc = match doc {
            Ok(d) => d,
            Err(e) => {
                unknown_only = false;
                errors.push(e);
                continue;
            }
        };
        let parts = if doc.elements.is_empty() && !doc.fields.is_empty() || !doc.arrays.is_empty() {
            vec![doc]
        } else {
            doc.elements
        };
        for doc in parts {
            index += 1;
            let unknown = matches!(detect::classify_doc(&doc, opts.definitions), DocKind::Unknown);
            unknown_only &= unknown;
            known += usize::from(!unknown);
            match runs_of_doc(&doc, input, index, opts) {
                Ok(mut r) => runs.append(&mut r),
                Err(mut e) => errors.append(&mut e),
            }
        }
    }
    if runs.is_empty() && unknown_only && text_lines == 0 && !opts.reports_only {
        let first = errors.into_iter().next();
        return normalize_text(std::io::Cursor::new(text), input, opts, sink, false).map_err(|e| match (e, first) {
            (Error::NoResult { .. }, Some(json)) => json,
            (e, _) => e,
        });
    }
    if text_lines > 0 && !opts.reports_only {
        // Text with JSON lines in it: its blocks are read as any text's, beside the documents
        // that are results (in input order). When no document is one, the JSON lines were a
        // log's records, and one that does not parse is no error of the input.
        if known == 0 {
            errors.clear();
        }
        if runs.is_empty() && errors.is_empty() {
            // A text log after all: its runs go out as its blocks end, not held in memory.
            return normalize_text(std::io::Cursor::new(text), input, opts, sink, false);
        }
        let mut text_runs = Vec::new();
        match normalize_text(
            std::io::Cursor::new(text),
            input,
            opts,
            &mut |r| {
                text_runs.push(r);
                Ok(())
            },
            false,
        ) {
            Ok(_) => {}
            Err(Error::NoResult { .. }) => {}
            Err(e) => return Err(e),
        }
        if !runs.is_empty() && !text_runs.is_empty() {
            runs.append(&mut text_runs);
            runs.sort_by_key(|r: &Run| r.source.first_line);
            for (i, run) in runs.iter_mut().enumerate() {
                run.source.block = i + 1;
            }
        } else {
            runs.append(&mut text_runs);
        }
    }
    for run in runs {
        found += 1;
        sink.run(run)?;
    }
    if found == 0 && !errors.is_empty() {
        // Every error in the order of the input: the last one is returned (and printed last).
        let last = errors.pop().expect("not empty");
        errors.into_iter().for_each(|e| sink.diagnostic(e));
        return Err(last);
    }
    let mut errors = errors.into_iter();
    match (found, errors.next()) {
        (0, None) => Err(Error::NoResult { input: input.to_string(), looked_for: json_looked_for(opts.definitions) }),
        (n, first) => {
            first.into_iter().chain(errors).for_each(|e| sink.diagnostic(e));
            Ok(n)
        }
    }
}

/// Every document of a JSON text, or the error that stopped one. The usual file is one document
/// (vLLM's result JSON, 100 MB on one line): it is parsed in one pass. Several documents, or a
/// broken one, are found by their extent first, so that a bad line does not stop the others.
///
/// Also returns how many pieces are no JSON at all: lines of text, not counted as errors unless
/// `text_is_error` (where only reports are read).
fn read_documents<'t>(
    text: &'t [u8],
    shifts: &input::json::Shifts,
    arrays: &input::json::Keys,
    input: &str,
    fast_whole: bool,
    text_is_error: bool,
) -> (Vec<Result<Doc<'t>, Error>>, usize) {
    // Each document is first tried on the fast path, which gives up on anything unusual.
    let read = |slice: &'t [u8], line: usize, fast: bool| {
        fast.then(|| read_doc_fast(slice, arrays, line)).flatten().map(Ok).unwrap_or_else(|| {
            let mut de = serde_json::Deserializer::from_slice(slice);
            (DocSeed { arrays, line }).deserialize(&mut de).and_then(|d| de.end().map(|_| d))
        })
    };
    if let Ok(doc) = read(text, first_line(text), fast_whole) {
        return (vec![Ok(doc)], 0);
    }
    let mut out = Vec::new();
    let mut text_lines = 0;
    let mut docs = Documents::new(text);
    while let Some(span) = docs.next() {
        if !text_is_error && !looks_like_json(&text[span.start..span.end]) {
            // A line of text (`=== Serving Benchmark Result ===`, `[2025-08-28 22:41:28] ...`).
            text_lines += 1;
            docs.skip_to_next_line(span.start);
            continue;
        }
        match read(&text[span.start..span.end], span.line, true) {
            Ok(doc) => out.push(Ok(doc)),
            Err(e) => {
                let line = span.line + e.line().saturating_sub(1);
                let column = shifts.input_column(line, e.column());
                let what = if e.is_eof() || !span.complete { "truncated JSON" } else { "malformed JSON" };
                // serde_json's own position is relative to the document; ours is given apart.
                let detail = e.to_string();
                let detail = detail.rsplit_once(" at line ").map_or(detail.as_str(), |(m, _)| m).to_string();
                // The line, found from the document's start (not by counting every line before
                // it: a long input with many broken lines would take quadratic time).
                let mut from = text[..span.start].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                for _ in 1..e.line().max(1) {
                    from = memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |i| from + i + 1);
                }
                let to = memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |i| from + i);
                let text_line = String::from_utf8_lossy(&text[from..to])
                    .replace("\"inf\"   ", "Infinity")
                    .replace("\"-inf\"   ", "-Infinity")
                    .chars()
                    .take(120)
                    .collect::<String>();
                out.push(Err(Error::Parse {
                    at: Location { input: input.to_string(), line, column: Some(column), text: Some(text_line) },
                    message: format!("{what}: {detail}"),
                }));
                docs.skip_to_next_line(span.start);
            }
        }
    }
    (out, text_lines)
}

fn json_looked_for(defs: &Definitions) -> String {
    let mut v: Vec<String> = defs.iter().filter(|d| d.is_json()).map(|d| d.id.clone()).collect();
    v.insert(0, "a canonical report".into());
    v.join(", ")
}

/// extract -> canonical -> derive -> validate, for one JSON document (a canonical report gives
/// one run per entry of `runs`). A report read back is verified, not trusted ([`check`]): every
/// shape error of the document is returned at once, in document order.
fn runs_of_doc(doc: &Doc, input: &str, index: usize, opts: &Options) -> Result<Vec<Run>, Vec<Error>> {
    let report_shape = |path: String, message: String| Error::Report { input: input.to_string(), path, message };
    let shape_errors = |errors: Vec<check::ShapeError>| -> Vec<Error> {
        errors.into_iter().map(|e| report_shape(e.path.clone(), e.message())).collect()
    };
    // An llm-d Benchmark Report (src/llmd.rs): its units are in the document, so it is read there.
    let value = serde_json::Value::Object(doc.fields.iter().cloned().collect());
    if llmd::is_benchmark_report(&value) {
        let mut run = llmd::read(&value).map_err(|(path, m)| vec![report_shape(path, m)])?;
        canonical::reopen(&mut run, input, index);
        run.derived = derive::derive(&run);
        validate::validate(&mut run, &opts.policy);
        return Ok(vec![run]);
    }
    match detect::classify_doc(doc, opts.definitions) {
        DocKind::CanonicalReport | DocKind::CanonicalRun => {
            let value = serde_json::Value::Object(doc.fields.iter().cloned().collect());
            let shape = check::canonical_shape(&value);
            if !shape.is_empty() {
                return Err(shape_errors(shape));
            }
            // The walk above is the contract; serde's reading stays behind it (one error).
            let runs: Vec<Run> = if doc.get("runs").is_some() {
                let report: Report = serde_path_to_error::deserialize(value)
                    .map_err(|e| vec![report_shape(e.path().to_string(), e.inner().to_string())])?;
                report.runs
            } else {
                vec![
                    serde_path_to_error::deserialize(value)
                        .map_err(|e| vec![report_shape(e.path().to_string(), e.inner().to_string())])?,
                ]
            };
            let many = runs.len() > 1 || doc.get("runs").is_some();
            let mut out = Vec::with_capacity(runs.len());
            let mut errors = Vec::new();
            for (i, mut run) in runs.into_iter().enumerate() {
                let at = if many { format!("runs[{i}].") } else { String::new() };
                if let Err((path, msg)) = canonical::check_figure_types(&run) {
                    errors.push(report_shape(format!("{at}{path}"), msg));
                    continue;
                }
                canonical::reopen(&mut run, input, index + i);
                // The stated derived figures are kept aside to be checked, never read: the
                // derivation starts from nothing but the run's own inputs. (A per-request
                // derivation's summary stays: its E2E mean is the arrays' measured one.)
                let stated = std::mem::take(&mut run.derived);
                if stated.tpot_ms.method == Some(report::TpotMethod::PerRequest) {
                    run.derived.per_request = stated.per_request.clone();
                }
                run.derived = derive::derive(&run);
                let restated = check::restated(&mut run, &stated);
                validate::validate(&mut run, &opts.policy);
                check::verify(&mut run, Some(restated), &opts.policy);
                out.push(run);
            }
            if errors.is_empty() { Ok(out) } else { Err(errors) }
        }
        DocKind::Format { definition, variant, ambiguous_with } => {
            if opts.reports_only && definition.format != Format::Report {
                return Err(vec![Error::NoResult {
                    input: input.to_string(),
                    looked_for: format!("a report, not a {} result file", definition.tool),
                }]);
            }
            if definition.id == "dstack-preset" {
                let value = serde_json::Value::Object(doc.fields.iter().cloned().collect());
                let shape = check::dstack_shape(&value);
                if !shape.is_empty() {
                    return Err(shape_errors(shape));
                }
            }
            if let Some(key) = &definition.runs_at {
                // Several runs in one document: each element of the list, with the rest of the
                // document under `top.`.
                let top: serde_json::Map<String, serde_json::Value> =
                    doc.fields.iter().filter(|(k, _)| k != key).cloned().collect();
                let list = doc.get(key).and_then(|v| v.as_array()).cloned().unwrap_or_default();
                let mut runs = Vec::new();
                for (i, el) in list.into_iter().enumerate() {
                    let serde_json::Value::Object(m) = el else { continue };
                    let mut fields: Vec<(String, serde_json::Value)> = m.into_iter().collect();
                    fields.push(("top".into(), serde_json::Value::Object(top.clone())));
                    let element = Doc { line: doc.line, fields, arrays: Vec::new(), elements: Vec::new() };
                    let evidence_keys = detect::doc_keys(&element);
                    let evidence_keys: Vec<&str> = evidence_keys.iter().map(String::as_str).collect();
                    let ev = definition::Evidence {
                        labels: &evidence_keys,
                        sections: &[],
                        banner_width: 0,
                        context_labels: &[],
                    };
                    let variant = definition.variants.iter().find(|v| v.matches(&ev));
                    runs.push(
                        run_of_doc(&element, definition, variant, input, index + i, opts, &ambiguous_with)
                            .map_err(|e| vec![e])?,
                    );
                }
                return Ok(runs);
            }
            Ok(vec![run_of_doc(doc, definition, variant, input, index, opts, &ambiguous_with).map_err(|e| vec![e])?])
        }
        DocKind::Unknown => {
            // dstack's preset benchmark with `metrics` of the wrong type is no longer recognized
            // by its keys: its shape errors say more than "no known format".
            if doc.get("metrics").is_some() && doc.get("workload").is_some() && doc.get("tool").is_some() {
                let value = serde_json::Value::Object(doc.fields.iter().cloned().collect());
                let shape = check::dstack_shape(&value);
                if !shape.is_empty() {
                    return Err(shape_errors(shape));
                }
            }
            let keys: Vec<&str> = doc.fields.iter().map(|(k, _)| k.as_str()).take(8).collect();
            Err(vec![Error::Parse {
                at: Location { input: input.to_string(), line: doc.line, column: None, text: None },
                message: format!(
                    "a JSON document that is no known result file or report (keys: {}); looked for: {}",
                    keys.join(", "),
                    json_looked_for(opts.definitions)
                ),
            }])
        }
    }
}

/// extract -> canonical -> derive -> validate, for one JSON document of a definition's format.
fn run_of_doc(
    doc: &Doc,
    definition: &definition::Definition,
    variant: Option<&definition::Variant>,
    input: &str,
    index: usize,
    opts: &Options,
    ambiguous_with: &[&str],
) -> Result<Run, Error> {
    let extracted = extract::extract_doc(doc, definition, input)?;
    let origin = canonical::Origin {
        definition,
        variant,
        input,
        block: index,
        first_line: Some(doc.line),
        last_line: None,
        truncated: None,
        format: definition.format,
    };
    let mut run = canonical::assemble(origin, extracted);
    if !ambiguous_with.is_empty() {
        run.notes.push(Note {
            code: "ambiguous-tool".into(),
            message: format!("the keys fit {} as well as {}", ambiguous_with.join(", "), definition.id),
            line: Some(doc.line),
        });
    }
    run.derived = derive::derive(&run);
    validate::validate(&mut run, &opts.policy);
    if definition.format == Format::Report {
        // A report written by hand: its headline figures against their definitions.
        check::verify(&mut run, None, &opts.policy);
    }
    Ok(run)
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

/// extract -> canonical -> derive -> validate, for one text block.
fn run_of_block(block: &Block, input: &str, policy: &Policy) -> Run {
    let extracted = extract::extract(block);
    let truncated = match block.end {
        BlockEnd::Closed(_) | BlockEnd::Table(_) | BlockEnd::AfterTables(_) => None,
        BlockEnd::NextBanner(line) => Some(Truncation {
            after_line: block.last_line,
            reason: format!("a new result banner started at line {line} before the closing line"),
        }),
        BlockEnd::Noise => Some(Truncation {
            after_line: block.last_line,
            reason: "the lines after it are not rows and no closing line came".into(),
        }),
        BlockEnd::EndOfInput => {
            Some(Truncation { after_line: block.last_line, reason: "the input ended before the closing line".into() })
        }
    };
    let origin = canonical::Origin {
        definition: block.definition,
        variant: block.variant,
        input,
        block: block.index,
        first_line: Some(block.banner.number),
        last_line: Some(block.last_line),
        truncated,
        format: block.definition.format,
    };
    let mut run = canonical::assemble(origin, extracted);
    run.notes.extend(block.notes.iter().cloned());
    if let BlockEnd::Table(_) = block.end {
        run.notes.push(report::Note {
            code: "markdown-table".into(),
            message: "read from a Markdown table of the rows (no banner or closing line)".into(),
            line: Some(block.banner.number),
        });
    }
    if !block.ambiguous_with.is_empty() {
        run.notes.push(report::Note {
            code: "ambiguous-tool".into(),
            message: format!(
                "the rows fit {} as well as {}; read as {}",
                block.ambiguous_with.join(", "),
                block.definition.id,
                block.definition.id
            ),
            line: Some(block.banner.number),
        });
    }
    run.derived = derive::derive(&run);
    validate::validate(&mut run, policy);
    run
}
