//! The blocks the scanner hands out: a block's lines, how it ended, and the definition and variant
//! that read it.

use crate::definition::{Definition, Variant};
use crate::input::Line;

/// How a block ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockEnd {
    /// At its closing line (line number).
    Closed(usize),
    /// A new banner started at this line before the closing line.
    NextBanner(usize),
    /// Lines that are not rows followed its last row.
    Noise,
    /// The input ended.
    EndOfInput,
    /// A Markdown table of rows ended at this line (a table has no closing line).
    Table(usize),
    /// The tables of a table format ended at this line: what followed was not a table line.
    AfterTables(usize),
}

/// A line printed before the banner that a definition reads as part of the same run.
#[derive(Debug, Clone)]
pub struct ContextLine {
    pub line: usize,
    pub label: String,
    pub value: String,
}

/// A complete block, with the definition and variant that read it.
#[derive(Debug)]
pub struct Block<'d> {
    pub definition: &'d Definition,
    pub variant: Option<&'d Variant>,
    /// 1-based index of the block in its input.
    pub index: usize,
    pub banner: Line,
    /// Lines after the banner (the banner too, for formats whose banner is a row), with the
    /// block's indentation or quoting removed.
    pub body: Vec<Line>,
    /// Each line of `body` read as a row (`None`: not a row), line for line (a line past its end
    /// is read again).
    pub rows: Vec<Option<BodyRow>>,
    pub end: BlockEnd,
    /// Line of the last row or of the closing line.
    pub last_line: usize,
    pub context: Vec<ContextLine>,
    /// Lines printed after the block that its definition reads for the same run (`[[footer]]`).
    pub footer: Vec<ContextLine>,
    /// Other definitions whose banner matched and that know as many rows.
    pub ambiguous_with: Vec<&'d str>,
    /// What reading the block's tables found wrong with them (a header that does not fit the rows).
    pub notes: Vec<crate::report::Note>,
    /// Another result's banner next to this block, with no closing line between (the banner that
    /// cut this block off, or the one of the block this block's banner cut off), and the rows that
    /// show the two results' rows mixed in this block (blocks interleaved line by line, or one
    /// pasted into another): see `pipeline::run_of_block`.
    pub neighbour: Option<Box<Neighbour>>,
}

/// Another result's banner beside a block, and what shows their rows mixed.
#[derive(Debug)]
pub struct Neighbour {
    /// The banner's line and text.
    pub banner: (usize, String),
    /// The first row of the block that its definition does not know and a definition whose
    /// banner is the neighbour's does: its line and label (a row of the other result).
    pub foreign_row: Option<(usize, String)>,
    /// A row or section header of the block's tool on the first line after its closing line, with
    /// no banner of its own: its line and label (the rest of a block whose closing line closed
    /// this one).
    pub after_close: Option<(usize, String)>,
}

/// A block line read as a row (`crate::lex::split_row`).
#[derive(Debug, Clone)]
pub struct BodyRow {
    /// The label as definitions compare it (white space folded, colon kept).
    pub label: String,
    /// Where the value lies in the line's text.
    pub value: std::ops::Range<usize>,
    /// Which of the text definitions (the first 64, see [`KnownLabels`]) know the label.
    pub(super) known: u64,
}
