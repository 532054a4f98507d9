//! The scanner's modes inside a block, one handler each: a printed block of rows, a Markdown table,
//! a block of a table format. A handler reads one line into the open block and says what the line
//! did to it ([`Step`]); the scanner carries that out (ends the block, starts the next one).

use super::known::KnownLabels;
use super::line::{table_row, value_cells};
use super::prefix::Prefix;
use super::wrap::{self, Kept};
use super::{BlockEnd, BodyRow, ContextLine, MAX_LOOKAHEAD, MAX_NOISE_RUN, table};
use crate::definition::{BlockSpec, CellStyle, Definition, TableSpec};
use crate::input::Line;
use rustc_hash::FxHashMap;

/// The definitions whose banner a line holds, and where the banner starts in it.
pub(super) type Hit<'d> = (Vec<&'d Definition>, usize);

/// A block being read, whatever its mode.
pub(super) struct Open<'d> {
    pub candidates: Vec<&'d Definition>,
    /// The candidates' bits in a [`KnownLabels`] mask, and whether every candidate has one.
    pub candidate_bits: (u64, bool),
    pub banner: Line,
    /// Where the banner starts in its line.
    pub banner_at: usize,
    /// What is before the banner on its line, as a prefix of the block's lines.
    pub prefix: Prefix,
    pub body: Vec<Line>,
    pub last_row_line: usize,
    pub context: FxHashMap<String, ContextLine>,
    pub notes: Vec<crate::report::Note>,
}

/// How the open block's lines are read.
pub(super) enum Mode<'d> {
    /// A printed block: `label: value` rows after a banner, up to a closing line.
    Rows(Open<'d>, Rows),
    /// Rows read from a Markdown table (`| label | value |`), which has neither banner nor
    /// closing line.
    Markdown(Open<'d>),
    /// A block of a table format (`[block.table]`): its lines are kept as they are and turned
    /// into rows ([`table::bodies`]) when it is over.
    Grid(Open<'d>, Grid<'d>),
}

impl<'d> Mode<'d> {
    pub fn open(&self) -> &Open<'d> {
        match self {
            Mode::Rows(open, _) | Mode::Markdown(open) | Mode::Grid(open, _) => open,
        }
    }
}

/// What a line did to the open block, for the scanner to carry out.
pub(super) enum Step<'d> {
    /// The block goes on.
    Goes,
    /// The block ended at this line.
    Ends(BlockEnd),
    /// The block ended before this line, which is read again as if no block were open.
    EndsBefore(BlockEnd, Line, Option<Hit<'d>>),
    /// The line is another block's banner: the open block ends, and the line starts the next.
    NextBanner(BlockEnd, Line, Hit<'d>),
    /// The block was cut off after its last rows; the line, if given, is read again afterwards.
    CutOff(Option<(Line, Option<Hit<'d>>)>),
}

/// A printed block's progress.
pub(super) struct Rows {
    /// What reading each line of the body as it came found: its row, and which definitions know
    /// its label (`None`: not a row), so that telling the definition apart at the end does not
    /// read every line again. Used only while it stays beside the body line for line.
    pub seen: Vec<Option<BodyRow>>,
    /// Lines since the last known row or section header.
    pub noise_run: usize,
    /// Of those, the last ones in a row that are not rows in the block's format either.
    non_rows: usize,
    /// Where the values of the known rows start in their lines: `Some(Some(column))` while they
    /// all start at the same one (the tools print their rows aligned), `Some(None)` once they do
    /// not, `None` before the first.
    value_column: Option<Option<usize>>,
    /// The stat group open (`[block.groups]`): the name its header line gave.
    group: Option<String>,
}

impl Rows {
    pub fn new(seen: Vec<Option<BodyRow>>) -> Rows {
        Rows { seen, noise_run: 0, non_rows: 0, value_column: None, group: None }
    }

    /// Whether a row the definitions do not know has the shape of the block's own rows: its value
    /// where theirs are (when they are aligned).
    fn in_format(&self, row: &BodyRow) -> bool {
        match self.value_column {
            Some(Some(column)) => row.value.start == column,
            _ => true,
        }
    }

    /// Whether the block, past [`MAX_NOISE_RUN`] lines after its last known row, may still reach
    /// its closing line: rows in its format keep coming, within [`MAX_LOOKAHEAD`] lines.
    fn may_still_close(&self, open: &Open) -> bool {
        self.non_rows < MAX_NOISE_RUN
            && self.noise_run < MAX_LOOKAHEAD
            && open.candidates.iter().any(|d| d.block.as_ref().is_some_and(|b| b.end.is_some()))
    }

    /// A line of a printed block: its closing line, a row, a section header, or noise (kept, but
    /// a run of it after the last known row ends a block that lost its closing line).
    pub fn read<'d>(
        &mut self,
        open: &mut Open<'d>,
        known: &mut KnownLabels<'d>,
        line: Line,
        hit: Option<Hit<'d>>,
    ) -> Step<'d> {
        if let Some(hit) = hit {
            if self.noise_run >= MAX_NOISE_RUN {
                // Past its last rows, looking ahead for a closing line that did not come: the
                // block was cut off there, and this banner starts the next.
                return Step::CutOff(Some((line, Some(hit))));
            }
            // A new banner before the closing line: the open block was cut off.
            return Step::NextBanner(BlockEnd::NextBanner(line.number), line, hit);
        }
        // (Found already when the hard-wrap repair looked at the line: `KnownLabels::prime_line`.)
        let block = open.banner.number;
        let closes = |known: &KnownLabels<'d>, trimmed: &str| {
            known.primed_closes(trimmed, block).unwrap_or_else(|| {
                open.candidates.iter().any(|d| {
                    d.block.as_ref().is_some_and(|b| {
                        b.end_first.may_match(trimmed) && b.end.as_ref().is_some_and(|e| e.is_match(trimmed))
                    })
                })
            })
        };
        // A row counts as part of the block when a candidate knows its label; unknown rows are
        // kept, but a run of them (with other lines) after the last known row ends a block
        // that lost its closing line.
        // (A candidate past the mask's 64 definitions is asked itself.)
        let (bits, all_have_bits) = open.candidate_bits;
        let known_row = |known: &KnownLabels<'d>, seen: &Option<BodyRow>| {
            seen.as_ref().is_some_and(|s| {
                s.known & bits != 0
                    || !all_have_bits && open.candidates.iter().any(|d| known.knows_in(s.known, d, &s.label))
            })
        };
        let sectioned = |known: &KnownLabels<'d>, trimmed: &str| {
            known.primed_section(trimmed, block).unwrap_or_else(|| {
                open.candidates.iter().any(|d| {
                    d.block.as_ref().is_some_and(|b| {
                        b.section_first.may_match(trimmed) && b.section.as_ref().is_some_and(|s| s.is_match(trimmed))
                    })
                })
            })
        };
        // A learned prefix is stripped where what remains is the closing line, a known row, a row
        // in the block's own aligned format, or a section header; any other line is read whole.
        // (Such a line with the prefix is another line of the same stream: whether it is a row in
        // the block's format is told from what follows the prefix, as it would be without one.)
        let mut prefixed_other: Option<Option<BodyRow>> = None;
        let stripped = match open.prefix.shape().and_then(|s| s.strip(&line.text)) {
            Some(rest) => {
                let trimmed = rest.trim_ascii();
                if closes(known, trimmed) {
                    Some((rest, None, true))
                } else {
                    let seen = known.see(rest);
                    let aligned = matches!(
                        (self.value_column, &seen),
                        (Some(Some(c)), Some(s)) if s.value.start == c
                    );
                    if known_row(known, &seen) || aligned || sectioned(known, trimmed) {
                        Some((rest, seen, false))
                    } else {
                        prefixed_other = Some(seen);
                        None
                    }
                }
            }
            None => None,
        };
        let (text, seen) = match stripped {
            Some((_, _, true)) => {
                open.last_row_line = line.number;
                return Step::Ends(BlockEnd::Closed(line.number));
            }
            Some((rest, seen, false)) => (rest, seen),
            None if prefixed_other.is_some() => (line.text.as_str(), None),
            None => {
                let text = open.prefix.unquote(&line.text);
                if closes(known, text.trim_ascii()) {
                    open.last_row_line = line.number;
                    return Step::Ends(BlockEnd::Closed(line.number));
                }
                (text, known.see(text))
            }
        };
        // A stat group's header names the figure; its `key = value` lines are read as the rows
        // `<name> <key>: <value>` (`[block.groups]`).
        let (grouped, is_group_header) = self.group_line(open, text.trim_ascii());
        let (text, seen) = match grouped.as_deref() {
            Some(g) => (g, known.see(g)),
            None => (text, seen),
        };
        let trimmed = text.trim_ascii();
        let is_row = known_row(known, &seen);
        let is_section = sectioned(known, trimmed);
        if is_row && grouped.is_none() {
            // A known `label: value` row closes the stat group above it.
            self.group = None;
        }
        let ends_after = is_row
            && open.candidates.iter().any(|d| {
                d.block
                    .as_ref()
                    .and_then(|b| b.end_after_label.as_ref())
                    .is_some_and(|l| seen.as_ref().is_some_and(|s| *l == s.label))
            });
        if is_row || is_section || is_group_header {
            self.noise_run = 0;
            self.non_rows = 0;
            open.last_row_line = line.number;
            if let Some(s) = seen.as_ref().filter(|_| is_row) {
                self.value_column = match self.value_column {
                    None => Some(Some(s.value.start)),
                    Some(Some(c)) if c != s.value.start => Some(None),
                    same => same,
                };
            }
        } else {
            self.noise_run += 1;
            match prefixed_other.as_ref().unwrap_or(&seen) {
                Some(s) if self.in_format(s) => self.non_rows = 0,
                _ => self.non_rows += 1,
            }
        }
        let number = line.number;
        let text = if grouped.is_none() && text.len() == line.text.len() { line.text } else { text.to_string() };
        open.body.push(Line { number, text, truncated: line.truncated });
        self.seen.push(seen);
        if ends_after {
            return Step::Ends(BlockEnd::Closed(number));
        }
        if self.noise_run >= MAX_NOISE_RUN && !self.may_still_close(open) {
            return Step::CutOff(None);
        }
        Step::Goes
    }
}

impl Rows {
    /// A line of a block with stat groups: `(Some(row), false)` for a statistic line of the open
    /// group, rewritten as its row; `(None, true)` for a group header (which opens its group).
    fn group_line(&mut self, open: &Open, trimmed: &str) -> (Option<String>, bool) {
        let Some(groups) = open.candidates.iter().find_map(|d| d.block.as_ref().and_then(|b| b.groups.as_ref())) else {
            return (None, false);
        };
        if let Some(name) = groups.header_name(trimmed) {
            self.group = Some(name);
            return (None, true);
        }
        (self.group.as_deref().and_then(|name| groups.row_text(name, trimmed)), false)
    }
}

/// A line of a Markdown table: a row goes on (the separator row is skipped); any other line ends
/// the table and may itself start something.
pub(super) fn read_markdown<'d>(open: &mut Open<'d>, line: Line, hit: Option<Hit<'d>>) -> Step<'d> {
    // (A row with several value columns is no row of this table: see `value_cells`.)
    let Some((label, value)) = table_row(&line.text).filter(|_| value_cells(&line.text) < 2) else {
        return Step::EndsBefore(BlockEnd::Table(open.last_row_line), line, hit);
    };
    if !label.is_empty() {
        open.body.push(Line { number: line.number, text: format!("{label}: {value}"), truncated: line.truncated });
        open.last_row_line = line.number;
    }
    Step::Goes
}

/// Narrowest line taken for a possible first part of a hard-wrapped table line (see [`wrap`]).
const MIN_WRAP: usize = 40;

/// A block of a table format: its definition, and the lines since its last table line.
pub(super) struct Grid<'d> {
    pub def: &'d Definition,
    pub block: &'d BlockSpec,
    spec: &'d TableSpec,
    noise_run: usize,
    /// The line number of the last line counted in `noise_run`: a line of the input counts once,
    /// however many carriage returns split it (a progress bar redrawn between two tables).
    noise_line: usize,
    /// The last line kept is a ruled table line cut before its end (it opens with a border and
    /// does not close with one): the next line is its rest (joined by [`wrap::unwrap`]).
    wrapped: bool,
    /// A table line has been read with the learned prefix (or there is none to confirm).
    prefix_seen: bool,
    /// The width (with its prefix) of the first table line kept that was cut before its end.
    cut_width: Option<usize>,
    /// What was known of each line of the body when it was kept (beside it line for line).
    pub kept: Vec<Kept>,
}

impl<'d> Grid<'d> {
    /// The grid of a table definition (`None`: not one).
    pub fn of(def: &'d Definition) -> Option<Grid<'d>> {
        let block = def.block.as_ref()?;
        Some(Grid {
            def,
            block,
            spec: block.table.as_ref()?,
            noise_run: 0,
            noise_line: 0,
            wrapped: false,
            prefix_seen: false,
            cut_width: None,
            kept: Vec::new(),
        })
    }

    /// A line while a table block is open: kept while it is a table line (or one of a few other
    /// lines between tables); the block ends at its closing line, another format's banner, or
    /// `max_noise` other lines.
    pub fn read(&mut self, open: &mut Open<'d>, line: Line, hit: Option<Hit<'d>>) -> Step<'d> {
        // Another format's banner ends the tables; a banner of theirs (a table title) does not.
        // (The rest of a cut title of its own may hold another format's banner: `f | LLM Metrics`.)
        if let Some(hit) = hit.filter(|(c, _)| !c.iter().any(|d| open.candidates.iter().any(|o| o.id == d.id)))
            && !self.rest_of_cut_title(open, &line)
        {
            let end = if self.block.end.is_some() {
                BlockEnd::NextBanner(line.number)
            } else {
                BlockEnd::AfterTables(open.last_row_line)
            };
            return Step::NextBanner(end, line, hit);
        }
        let number = line.number;
        // A line with the block's prefix is read without it, table line or not: the tables are
        // read again from these lines at the end, where another line of the same stream must not
        // pass for a table line by its prefix (`May  1 ...` has a run of spaces). A table is printed
        // by one process: behind a learned prefix, a line without it is another process's (whose
        // own prefix may be padded like a table line, `server-1   | ...`), noise left out.
        let text = match open.prefix.shape() {
            Some(shape) => match shape.strip(&line.text) {
                Some(rest) => {
                    self.prefix_seen |= !rest.trim().is_empty();
                    rest.to_string()
                }
                // The text before the banner on a title line that the table's first line does not
                // carry is the title's own (`vLLM gemma4 12B it NVIDIA AIPerf | LLM Metrics`), not
                // a prefix: the block is read without one.
                None if !self.prefix_seen && {
                    let t = line.text.trim();
                    !t.is_empty()
                        && !t.starts_with(|c: char| c.is_alphanumeric())
                        && table::is_table_line(self.def, self.spec, t)
                } =>
                {
                    open.prefix = Prefix::None;
                    self.prefix_seen = true;
                    line.text.clone()
                }
                None => {
                    // Without the prefix: the rest of a line the terminal cut after the prefix was
                    // put on, or another process's line. Kept beside a line that may have been cut,
                    // as a stray: `wrap::unwrap` keeps it only as that line's rest.
                    let after_cut = self.wrapped && !line.text.trim().is_empty();
                    let goes_on = wrap::goes_on(&line.text);
                    if after_cut || self.may_be_cut(open) {
                        self.keep(open, &line.text.clone(), line, true);
                    }
                    if after_cut {
                        self.wrapped = goes_on;
                        self.noise_run = 0;
                        open.last_row_line = number;
                        return Step::Goes;
                    }
                    return self.noise(number);
                }
            },
            None => open.prefix.unquote(&line.text).to_string(),
        };
        let trimmed = text.trim();
        if self.block.end.as_ref().is_some_and(|e| e.is_match(trimmed)) {
            open.last_row_line = number;
            return Step::Ends(BlockEnd::Closed(number));
        }
        // A blank line neither ends the tables nor keeps them going.
        let blank = trimmed.is_empty();
        // The rest of a table line a terminal hard-wrapped (a pod log at 80 columns) goes on with
        // the table; it is joined to its line when the block is over ([`wrap::unwrap`]).
        let rest = self.wrapped && !blank;
        let is_table = rest || !blank && table::is_table_line(self.def, self.spec, trimmed);
        let wrapped = self.spec.cells == CellStyle::Ruled
            && is_table
            && if rest { wrap::goes_on(&text) } else { wrap::is_cut(&text) };
        if wrapped && !rest && self.cut_width.is_none() {
            self.cut_width = Some(line.text.chars().count());
        }
        // (Its own width: without the prefix, but with its own indentation.)
        let own = open.prefix.shape().and_then(|s| s.strip_tight(&line.text)).map(|t| t.chars().count());
        self.keep(open, &line.text, Line { number, text, truncated: line.truncated }, false);
        if let (Some(own), Some(k)) = (own, self.kept.last_mut()) {
            k.own = own;
        }
        if blank {
            return Step::Goes;
        }
        if is_table {
            self.noise_run = 0;
            self.wrapped = wrapped;
            open.last_row_line = number;
            return Step::Goes;
        }
        self.noise(number)
    }

    /// A line of other text at `number`: the block goes on until `max_noise` lines of the input.
    fn noise(&mut self, number: usize) -> Step<'d> {
        if number != self.noise_line {
            self.noise_run += 1;
            self.noise_line = number;
        }
        if self.noise_run >= self.spec.max_noise { Step::CutOff(None) } else { Step::Goes }
    }

    /// Whether `line` is the rest of the last line kept, a title of the block's own cut as wide as
    /// its table lines were cut.
    fn rest_of_cut_title(&self, open: &Open<'d>, line: &Line) -> bool {
        let (Some(w), Some(last), Some(kept)) = (self.cut_width, open.body.last(), self.kept.last()) else {
            return false;
        };
        let rest = open.prefix.shape().and_then(|s| s.strip(&line.text)).unwrap_or(&line.text);
        (kept.whole == w || kept.own == w)
            && !table::opens_ruled(last.text.trim())
            && table::is_title(self.def, self.spec, format!("{}{rest}", last.text).trim())
    }

    /// Whether the last line kept may be the first part of a line a terminal cut (a line of a
    /// ruled table wide enough).
    fn may_be_cut(&self, open: &Open<'d>) -> bool {
        self.spec.cells == CellStyle::Ruled
            && open.body.last().is_some_and(|l| !l.text.trim().is_empty())
            && self.kept.last().is_some_and(|k| k.whole >= MIN_WRAP)
    }

    /// Keep a line in the body (`whole`: the line as printed; a stray is kept as printed).
    pub fn keep(&mut self, open: &mut Open<'d>, whole: &str, line: Line, stray: bool) {
        self.kept.push(Kept::new(whole, &line.text, stray));
        open.body.push(line);
    }
}
