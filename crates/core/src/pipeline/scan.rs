//! Every line of a text to the scanner, every byte to the finder of JSON records in it, and what
//! they find handed out in input order.

use std::io::BufRead;

use crate::detect::{Block, Scanner};
use crate::pipeline::{Config, embedded};
use crate::{Error, Run, input};

/// What [`scan`] hands out, in input order: a text block, or the runs of a JSON record found in
/// the text (see [`embedded`]).
// (A block is moved once, from the scanner to its run: its size is no cost worth a box.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Item<'d> {
    Block(Block<'d>),
    Runs(Vec<Run>),
}

/// Bytes read ahead of the line reader (as much as a file's reader holds: one read of it each).
const READ_AHEAD: usize = 256 * 1024;

/// Feed every line to the scanner, and every byte to the finder of JSON records, and hand every
/// completed block and record, in input order, to `on_item` (numbered in that order).
pub(crate) fn scan<'d, R: BufRead>(
    reader: R,
    input: &str,
    opts: &Config,
    scanner: &mut Scanner<'d>,
    on_item: &mut dyn FnMut(Item<'d>) -> Result<(), Error>,
) -> Result<(), Error> {
    // The readers under the tap (a read that may wait, the input's head, mixed encodings, a
    // decoder) are asked for bytes a buffer at a time, not a line at a time: each line's
    // `fill_buf` and `consume` went down all of them (a fifth of the line reader's cost). Bytes
    // still reach the tap as the line reader consumes them, so records are found at the same line.
    let reader = std::io::BufReader::with_capacity(READ_AHEAD, reader);
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
