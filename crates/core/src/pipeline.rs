//! The pipeline driver: one input, whatever it is (a text log read a line at a time, a JSON result
//! file or report read whole), through detect -> extract -> canonical -> derive -> validate, each
//! run handed to the caller's [`Out`] as soon as it is complete.
//!
//! This module decides what an input is (text or JSON, from its first bytes) and scans text;
//! [`json`] reads JSON documents, [`threads`] reads a text's blocks on a second thread. Every run,
//! from whichever path, ends in [`close`]: derive, validate, and for a report read back, verify.

pub(crate) mod embedded;
pub(crate) mod fold;
pub(crate) mod json;
pub(crate) mod threads;

use std::io::{BufRead, Read};

use serde::de::DeserializeSeed;

use crate::detect::{self, Block, BlockEnd, DocKind, Neighbour, Scanner};
use crate::input::json::{Doc, DocSeed, Documents};
use crate::report::{self, Derived, Truncation};
use crate::validate::Policy;
use crate::{Definitions, Error, Options, Run, Sink, canonical, check, derive, extract, input, validate};

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
pub type Render = fn(&Run) -> Option<Vec<u8>>;

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

/// [`read`], of an input whose first `layers.depth` encodings were taken off: one more is taken
/// off when its first bytes say it has one, before anything looks at what it says.
fn read_layer<R: BufRead>(
    mut reader: R,
    input: &str,
    opts: &Config,
    sink: &mut dyn Out,
    live: bool,
    layers: Layers,
) -> Result<usize, Error> {
    use input::decode;
    let io = |source| decode::error(input, source);
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
        // A start like JSON is read on until what the input is shows (see `json_head_is_text`);
        // any start, until it shows whether it is compressed or UTF-16.
        if head.len() >= 64 * 1024
            || started
                && head.len() >= decode::SNIFF
                && (!looks_like_json(&head)
                    || opts.reports_only
                    || json_head_is_text(&head, opts.definitions).is_some())
        {
            break;
        }
    }
    let mut reader = std::io::Cursor::new(head).chain(reader);
    let head = reader.get_ref().0.get_ref();
    if layers.depth < decode::MAX_LAYERS
        && let Some(layer) = decode::sniff(head)
    {
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
    if read_as_json(head, opts) {
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
    normalize_text(input::mixed::Mixed::utf8(reader), input, opts, sink, live)
}

/// [`crate::normalize_file`]: a regular file, as [`read`] reads a stream. A JSON file is read in place from a
/// private memory map instead of being copied into memory (a vLLM result file with
/// `--save-detailed` is hundreds of MB; reading it costs a copy and a page fault per page).
pub fn read_file(mut file: std::fs::File, input: &str, opts: &Config, sink: &mut dyn Out) -> Result<usize, Error> {
    use std::io::Seek;
    // The same look at the start as `normalize` takes through its reader; a text log is not mapped,
    // nor a compressed or UTF-16 file (streamed through its decoder by `read`).
    let mut head = Vec::new();
    let json = (&file).take(64 * 1024).read_to_end(&mut head).is_ok()
        && input::decode::sniff(&head).is_none()
        && read_as_json(&head, opts);
    file.rewind().map_err(|source| Error::Io { input: input.to_string(), source })?;
    if json {
        // SAFETY: the map is private (copy on write): what the parser writes stays in this
        // process. A file truncated by someone else while it is read would fault, as it would
        // for any program that maps its input (ripgrep, for one); a result file is written once.
        if let Ok(mut map) = unsafe { memmap2::MmapOptions::new().map_copy(&file) } {
            return json::normalize_json(&mut map, input, opts, sink);
        }
    }
    read(std::io::BufReader::with_capacity(256 * 1024, file), input, opts, sink, false)
}

/// A text that starts like a JSON object or list (after white space and a byte-order mark).
pub(crate) fn looks_like_json(head: &[u8]) -> bool {
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
fn read_as_json(head: &[u8], opts: &Config) -> bool {
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
        if let Ok(doc) = (DocSeed { arrays, line: span.line }).deserialize(&mut de)
            && (known(&doc) || doc.elements.iter().any(known))
        {
            return Some(false);
        }
    }
    None
}

pub(crate) fn normalize_text<R: BufRead>(
    reader: R,
    input: &str,
    opts: &Config,
    sink: &mut dyn Out,
    live: bool,
) -> Result<usize, Error> {
    let mut scanner = Scanner::new(opts.definitions);
    // Summary rows folded into the runs they repeat, on the way out (see `fold`).
    let mut fold = fold::Fold::new(sink, opts.definitions, opts.policy, input);
    let sink: &mut dyn Out = &mut fold;
    // The input's head, to say what it held if it holds no result (`detect::missing`).
    let mut head = Vec::new();
    let reader = Head { inner: reader, head: &mut head };
    let found = if opts.pipelined {
        threads::normalize_text_pipelined(reader, input, opts, &mut scanner, sink, live)?
    } else {
        let mut found = 0;
        scan(reader, input, opts, &mut scanner, &mut |item| match item {
            Item::Block(block) => {
                found += 1;
                sink.run(run_of_block(&block, input, &opts.policy))
            }
            Item::Runs(runs) => runs.into_iter().try_for_each(|run| {
                found += 1;
                sink.run(run)
            }),
        })?;
        found
    };
    fold.finish()?;
    if found == 0 {
        let mut looked_for = scanner.looked_for();
        if let Some(missing) = detect::missing::diagnose(&head, opts.definitions) {
            // What is missing first: the rest says what else would have been read.
            looked_for = format!("a result block's banner line: {missing}; also: {looked_for}");
        }
        return Err(Error::NoResult { input: input.to_string(), looked_for });
    }
    Ok(found)
}

/// A reader that keeps the first [`detect::missing::HEAD`] bytes read through it.
struct Head<'h, R> {
    inner: R,
    head: &'h mut Vec<u8>,
}

impl<R: BufRead> Head<'_, R> {
    fn keep(&mut self, bytes: &[u8]) {
        let room = detect::missing::HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl<R: BufRead> std::io::Read for Head<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.keep(&buf[..n]);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Head<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if self.head.len() < detect::missing::HEAD
            && let Ok(buf) = self.inner.fill_buf()
        {
            let room = detect::missing::HEAD - self.head.len();
            self.head.extend_from_slice(&buf[..n.min(buf.len()).min(room)]);
        }
        self.inner.consume(n);
    }
}

/// What [`scan`] hands out, in input order: a text block, or the runs of a JSON record found in
/// the text (see [`embedded`]).
// (A block is moved once, from the scanner to its run: its size is no cost worth a box.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Item<'d> {
    Block(Block<'d>),
    Runs(Vec<Run>),
}

/// Feed every line to the scanner, and every byte to the finder of JSON records, and hand every
/// completed block and record, in input order, to `on_item` (numbered in that order).
pub(crate) fn scan<'d, R: BufRead>(
    reader: R,
    input: &str,
    opts: &Config,
    scanner: &mut Scanner<'d>,
    on_item: &mut dyn FnMut(Item<'d>) -> Result<(), Error>,
) -> Result<(), Error> {
    let tap = embedded::Tap::new(reader, embedded::Records::new(opts, input));
    let mut lines = input::LineReader::new(tap);
    // Records found, by their first line, waiting for the blocks before them.
    let mut pending: Vec<(usize, Vec<Run>)> = Vec::new();
    let mut index = 0;
    let mut failed = None;
    let give_runs = |runs: Vec<Run>, index: &mut usize, on_item: &mut dyn FnMut(Item<'d>) -> Result<(), Error>| {
        let runs: Vec<Run> = runs
            .into_iter()
            .map(|mut run| {
                *index += 1;
                run.source.block = *index;
                run
            })
            .collect();
        on_item(Item::Runs(runs))
    };
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
            // A compressed input cut off (or corrupt) ends where it stops decoding: the block being
            // read is cut off there, as at the end of any input, and the error said after it.
            Some(Err(source)) if input::decode::is_corrupt(&source) => {
                failed = Some(input::decode::error(input, source));
                lines.get_mut().finish();
                scanner.finish();
                false
            }
            Some(Err(source)) => return Err(Error::Io { input: input.to_string(), source }),
            None => {
                lines.get_mut().finish();
                scanner.finish();
                false
            }
        };
        let records = &mut lines.get_mut().records.found;
        if !records.is_empty() {
            pending.append(records);
            pending.sort_by_key(|(line, _)| *line);
        }
        while let Some(mut block) = scanner.pop() {
            let before = pending.iter().take_while(|(line, _)| *line < block.banner.number).count();
            for (_, runs) in pending.drain(..before) {
                give_runs(runs, &mut index, on_item)?;
            }
            index += 1;
            block.index = index;
            on_item(Item::Block(block))?;
        }
        if !more || !scanner.in_block() {
            // No block before them can still come.
            for (_, runs) in pending.drain(..) {
                give_runs(runs, &mut index, on_item)?;
            }
        }
        if !more {
            return failed.map_or(Ok(()), Err);
        }
    }
}

/// extract -> canonical -> derive -> validate, for one text block.
pub(crate) fn run_of_block(block: &Block, input: &str, policy: &Policy) -> Run {
    let mut extracted = extract::extract(block);
    let misplaced = extracted.misplaced.take();
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
    // Another result's banner beside the block, and a row that gives the other result away: the
    // rows of two results are mixed in it (blocks interleaved line by line, or one pasted into
    // another). No figure can be told to be this run's: none is kept. The giveaways are each one
    // an honest block cannot print: a figure twice with different values, a row only the other
    // result's tool prints, rows of its tool after its closing line with no banner of their own
    // (the rest of the block whose closing line closed it), a row its tool does not print where
    // it stands.
    if let Some(neighbour) = block.neighbour.as_deref()
        && let Some(giveaway) = interleaving(block, neighbour, &run, misplaced.as_ref())
    {
        run.notes.push(report::Note {
            code: "interleaved".into(),
            message: format!(
                "two result blocks are interleaved: the block of `{}` at line {} and the one of `{}` at line {} \
                     are mixed in one block ({giveaway}), so no figure can be told to be one run's (read each \
                     block apart)",
                crate::error::printable(block.banner.text.trim()),
                block.banner.number,
                crate::error::printable(&neighbour.banner.1),
                neighbour.banner.0
            ),
            line: Some(block.banner.number),
        });
        run.workload = Default::default();
        run.totals = Default::default();
        run.reported = Default::default();
    }
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
    close(&mut run, policy, Claims::None);
    // A template (placeholders, not figures: `detect` notes it) is said to be one by the check
    // that finds nothing usable in it.
    if let Some(t) =
        run.notes.iter().find(|n| n.code == "template" || n.code == "interleaved").map(|n| n.message.clone())
        && let Some(c) =
            run.checks.iter_mut().find(|c| c.id == report::RuleId::KeyFigures && c.status == report::Status::Fail)
    {
        c.message = format!("{t}; {}", c.message);
    }
    run
}

/// What shows that a block beside another result's banner holds rows of both, said for the
/// note (None: nothing does).
fn interleaving(
    block: &Block,
    neighbour: &Neighbour,
    run: &Run,
    misplaced: Option<&(usize, String)>,
) -> Option<String> {
    let quoted = |(line, label): &(usize, String)| format!("`{}` at line {line}", crate::error::printable(label));
    if let Some(n) = run.notes.iter().find(|n| n.code == "conflicting-value") {
        return Some(match n.line {
            Some(l) => format!("a figure printed twice with different values, at line {l}"),
            None => "a figure printed twice with different values".into(),
        });
    }
    if repeated_rows(block) >= 2 {
        return Some("rows printed twice with different values".into());
    }
    if let Some(row) = &neighbour.foreign_row {
        return Some(format!("{}, a row only the other block's tool prints", quoted(row)));
    }
    if let Some(row) = &neighbour.after_close {
        return Some(format!("{} right after its closing line, with no banner of its own", quoted(row)));
    }
    misplaced.map(|row| format!("{}, a row its tool does not print there", quoted(row)))
}

/// How many labels the block's definition knows are printed twice in the block with different
/// values, in whatever section: a block prints each once, two blocks' rows mixed print many twice.
/// Labels the definition reads more than once (vllm-rs's steady-state section repeats two
/// throughput rows; SGLang's cache report's `Device:` and `Host:`) are not counted.
fn repeated_rows(block: &Block) -> usize {
    let mut seen: rustc_hash::FxHashMap<&str, &str> = Default::default();
    let mut repeated: rustc_hash::FxHashSet<&str> = Default::default();
    for (line, row) in block.body.iter().zip(&block.rows) {
        let Some(row) = row else { continue };
        if !block.definition.knows_label(&row.label) || block.definition.reads_label_twice(&row.label) {
            continue;
        }
        let value = line.text.get(row.value.clone()).unwrap_or_default().trim();
        match seen.get(row.label.as_str()) {
            Some(&old) if old != value => {
                repeated.insert(row.label.as_str());
            }
            Some(_) => {}
            None => {
                seen.insert(&row.label, value);
            }
        }
    }
    repeated.len()
}

/// What a run claims of its own derived figures, to be verified by [`close`].
pub enum Claims<'a> {
    /// Nothing: a tool's output, whose figures are checked by the rules alone.
    None,
    /// A report written by hand: its headline figures checked against their definitions.
    Report,
    /// A canonical run read back: the derived figures it stated (kept aside, never read as input).
    Stated(&'a Derived),
}

/// The closing steps of every run: derive from the run's own inputs, validate against its totals,
/// and verify what it claims. The one place these are done, in this order, whatever the input.
pub fn close(run: &mut Run, policy: &Policy, claims: Claims) {
    // A canonical run's declared meaning is its definition's (`semantics-declared`): settled
    // before anything is derived from it.
    let declared = matches!(claims, Claims::Stated(_)).then(|| check::declared_semantics(run));
    // A report's implicit figures (a bare dstack metrics object's concurrency) are read first.
    if matches!(claims, Claims::Report) {
        check::implicit(run);
    }
    run.derived = derive::derive(run);
    let restated = match claims {
        Claims::None => None,
        Claims::Report => Some(None),
        Claims::Stated(stated) => Some(Some(check::restated(run, stated))),
    };
    validate::validate(run, policy);
    if let Some(restated) = restated {
        check::verify(run, restated, declared, policy);
    }
}
