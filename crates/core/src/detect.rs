//! Finding result blocks in a stream of lines, and telling which tool and variant printed them.
//!
//! The [`Scanner`] is fed one line at a time and hands back each block as soon as it is complete,
//! so a log of any size is read with memory bounded by its largest block. Outside blocks it keeps
//! only the last value of each label that a definition declares as `[[context]]` (lines printed
//! before the banner for the same run, e.g. vLLM's `Maximum request concurrency: 4`).
//!
//! A block starts at a line that matches a definition's banner and ends at its closing line, at
//! the next banner, after a run of lines that are not rows (the block was cut off), or at the end
//! of the input. Which definition read it is decided by its rows: the definition that knows the
//! most labels that the others do not.
//!
//! The parts: `scan` is the scanner and its modes (a printed block of rows, a Markdown table, a
//! block of a table format, read into rows by `table`); `block` the blocks it hands out;
//! `line` what a single line is (a Markdown table row, a section header); `args` the reader of
//! an argument dump; `classify` what a JSON document is, which is decided apart from text.

mod args;
mod block;
mod classify;
mod known;
mod line;
pub mod missing;
mod mode;
mod prefilter;
mod prefix;
mod scan;
mod table;
mod wrap;

pub use args::args_dump;
pub use block::{Block, BlockEnd, BodyRow, ContextLine, Neighbour};
pub use classify::{DocKind, Structure, classify_doc, doc_keys};
pub use line::section_name;
pub use scan::Scanner;

/// After this many lines in a row that are neither rows a definition knows nor section headers,
/// an unclosed block is taken to have been cut off, unless rows in the block's own format keep
/// coming among them (see [`MAX_LOOKAHEAD`]). Defined with the definitions, whose tables take it
/// as their default `max_noise` (so that the definition stage does not import the scanner).
pub(crate) use crate::definition::MAX_NOISE_RUN;

/// How many lines after its last known row a block may still reach its closing line, as long as
/// no [`MAX_NOISE_RUN`] of them in a row are anything but rows in the block's format: a newer
/// version's block with more rows than its definition knows (each kept as an unknown row) is
/// complete, not cut off. The bound keeps memory bounded.
pub(crate) const MAX_LOOKAHEAD: usize = 4096;
