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

mod prefilter;
mod table;

use std::collections::HashMap;

use crate::definition::{Definition, Definitions, Evidence, Variant};
use crate::input::Line;
use crate::lex::{normalize_label, split_row, split_row_key};
use prefilter::Literals;

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
    /// Other definitions whose banner matched and that know as many rows.
    pub ambiguous_with: Vec<&'d str>,
    /// What reading the block's tables found wrong with them (a header that does not fit the rows).
    pub notes: Vec<crate::report::Note>,
}

struct Open<'d> {
    /// Rows read from a Markdown table (`| label | value |`) rather than a printed block.
    table: bool,
    /// A block of a table format (`[block.table]`): its lines are kept as they are and turned
    /// into rows when it is over.
    grid: Option<&'d Definition>,
    candidates: Vec<&'d Definition>,
    /// The candidates' bits in a [`KnownLabels`] mask, and whether every candidate has one.
    candidate_bits: (u64, bool),
    banner: Line,
    prefix: String,
    body: Vec<Line>,
    /// What reading each line of `body` as it came found: its row, and which definitions know
    /// its label (`None`: not a row), so that telling the definition apart at the end does not
    /// read every line again. Used only while it stays beside `body` line for line.
    seen: Vec<Option<BodyRow>>,
    /// Lines since the last known row or section header.
    noise_run: usize,
    /// Of those, the last ones in a row that are not rows in the block's format either.
    non_rows: usize,
    /// Where the values of the known rows start in their lines: `Some(Some(column))` while they
    /// all start at the same one (the tools print their rows aligned), `Some(None)` once they do
    /// not, `None` before the first.
    value_column: Option<Option<usize>>,
    last_row_line: usize,
    context: HashMap<String, ContextLine>,
    notes: Vec<crate::report::Note>,
}

impl Open<'_> {
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
    fn may_still_close(&self) -> bool {
        self.non_rows < MAX_NOISE_RUN
            && self.noise_run < MAX_LOOKAHEAD
            && self.candidates.iter().any(|d| d.block.as_ref().is_some_and(|b| b.end.is_some()))
    }
}

/// Turns lines into blocks; see the module documentation.
pub struct Scanner<'d> {
    text_defs: Vec<&'d Definition>,
    /// What the text definitions' banners and context labels contain, built once per set of
    /// definitions ([`Definitions::literals`]): outside a block, a buffer is skipped up to the
    /// first of them, and a line with none of them is not decoded.
    literals: &'d Literals,
    context: HashMap<String, ContextLine>,
    open: Option<Open<'d>>,
    blocks: usize,
    ready: std::collections::VecDeque<Block<'d>>,
    /// A finished block whose variant prints a trailer: held until the trailer or other lines.
    held: Option<Held<'d>>,
    known: KnownLabels<'d>,
}

/// Which text definitions know a label, remembered per label: the same few dozen labels come
/// back in every block, and matching one against every templated row spec is what costs.
struct KnownLabels<'d> {
    defs: Vec<&'d Definition>,
    /// Label to a bit mask over `defs` (the first 64; others are asked every time).
    cache: rustc_hash::FxHashMap<String, u64>,
}

impl<'d> KnownLabels<'d> {
    /// Labels remembered at most (a log with endless distinct labels keeps memory bounded).
    const MAX: usize = 4096;

    /// Which of the first 64 definitions know `label`, one bit each.
    fn mask(&mut self, label: &str) -> u64 {
        if let Some(mask) = self.cache.get(label) {
            return *mask;
        }
        let mask = self
            .defs
            .iter()
            .take(64)
            .enumerate()
            .fold(0u64, |m, (j, t)| if t.knows_label(label) { m | 1 << j } else { m });
        if self.cache.len() < Self::MAX {
            self.cache.insert(label.to_string(), mask);
        }
        mask
    }

    /// A line's row, as [`BodyRow`].
    fn see(&mut self, text: &str) -> Option<BodyRow> {
        let (label, value) = split_row_key(text)?;
        let label = label.into_owned();
        // (The value is a slice of `text`.)
        let start = value.as_ptr() as usize - text.as_ptr() as usize;
        Some(BodyRow { known: self.mask(&label), label, value: start..start + value.len() })
    }

    /// Whether `d` knows `label`, whose [`KnownLabels::mask`] is `mask`.
    fn knows_in(&self, mask: u64, d: &Definition, label: &str) -> bool {
        Self::knows_at(mask, self.bit(d), d, label)
    }

    /// `d`'s bit in a mask (`None`: past the first 64 definitions).
    fn bit(&self, d: &Definition) -> Option<usize> {
        self.defs.iter().take(64).position(|t| std::ptr::eq(*t, d))
    }

    /// The bits of `defs` in a mask, and whether every one has a bit.
    fn bits_of(&self, defs: &[&Definition]) -> (u64, bool) {
        defs.iter().fold((0, true), |(m, all), d| match self.bit(d) {
            Some(i) => (m | 1 << i, all),
            None => (m, false),
        })
    }

    /// [`KnownLabels::knows_in`] with `d`'s [`KnownLabels::bit`] looked up already.
    fn knows_at(mask: u64, bit: Option<usize>, d: &Definition, label: &str) -> bool {
        match bit {
            Some(i) => mask & (1 << i) != 0,
            None => d.knows_label(label),
        }
    }
}

/// A block line read as a row ([`crate::lex::split_row`]).
#[derive(Debug, Clone)]
pub struct BodyRow {
    /// The label as definitions compare it (white space folded, colon kept).
    pub label: String,
    /// Where the value lies in the line's text.
    pub value: std::ops::Range<usize>,
    /// Which of the text definitions (the first 64, see [`KnownLabels`]) know the label.
    known: u64,
}

struct Held<'d> {
    block: Block<'d>,
    trailer: &'d crate::definition::TrailerSpec,
    gap: usize,
    /// Inside the trailer, after its banner.
    open: bool,
}

impl<'d> Scanner<'d> {
    pub fn new(defs: &'d Definitions) -> Scanner<'d> {
        let text_defs: Vec<&Definition> = defs.iter().filter(|d| d.block.is_some()).collect();
        Scanner {
            known: KnownLabels { defs: text_defs.clone(), cache: Default::default() },
            text_defs,
            literals: defs.literals(),
            context: HashMap::new(),
            open: None,
            blocks: 0,
            ready: Default::default(),
            held: None,
        }
    }

    /// What a banner looks like, for the "nothing found" message.
    pub fn looked_for(&self) -> String {
        // One entry per banner pattern, naming every definition that shares it.
        let mut by_banner: Vec<(&str, Vec<&str>)> = Vec::new();
        for d in &self.text_defs {
            let banner = d.block.as_ref().expect("text definition").banner.as_str();
            match by_banner.iter_mut().find(|(b, _)| *b == banner) {
                Some((_, ids)) => ids.push(&d.id),
                None => by_banner.push((banner, vec![&d.id])),
            }
        }
        by_banner.iter().map(|(b, ids)| format!("{b} ({})", ids.join(", "))).collect::<Vec<_>>().join("; ")
    }

    /// Whether every line is read now (inside a block, or with a block waiting for its trailer).
    pub fn in_block(&self) -> bool {
        self.open.is_some() || self.held.is_some()
    }

    /// Outside a block: where in `hay` (raw lines, from a line start) the first line that
    /// [`Scanner::wants`] may want lies: at its first literal, or at a `|` that opens a line.
    /// `None`: no line in `hay` is wanted.
    pub fn first_wanted(&self, hay: &[u8]) -> Option<usize> {
        if self.in_block() {
            return Some(0);
        }
        let literal = self.literals.any.find(hay);
        let before = &hay[..literal.unwrap_or(hay.len())];
        // `wants` takes a line whose first byte after white space is `|` (`\n` and `\r` end lines).
        let opens_line = |i: usize| {
            before[..i]
                .iter()
                .rev()
                .take_while(|b| !matches!(b, b'\n' | b'\r'))
                .all(|b| matches!(b, b' ' | b'\t' | 0x0c))
        };
        memchr::memchr_iter(b'|', before).find(|&i| opens_line(i)).or(literal)
    }

    /// Whether a raw line needs to be read at all: inside a block, or while a block waits for its
    /// trailer, every line does; outside, only banners, context labels and table rows.
    pub fn wants(&self, raw: &[u8]) -> bool {
        self.open.is_some()
            || self.held.is_some()
            || self.literals.any.is_match(raw)
            || raw.trim_ascii_start().first() == Some(&b'|')
    }

    /// Feed one line; completed blocks are then handed out by [`Scanner::pop`].
    pub fn push(&mut self, line: Line) {
        let hit = self.banner_hits(&line.text);
        let text = &line.text;
        // (A table title or CSV header is never a flattened block.)
        let banner_with_rest = hit.as_ref().is_some_and(|(c, at)| {
            c[0].block
                .as_ref()
                .filter(|b| b.table.is_none())
                .and_then(|b| b.banner.find_at(text, *at))
                .is_some_and(|m| !text[m.end()..].trim().is_empty())
        });
        let closing_with_rest = self.split_closing_rule(text).is_some();
        let long_in_block = self.open.as_ref().is_some_and(|o| o.grid.is_none()) && text.len() > 80;
        if !banner_with_rest && !closing_with_rest && !long_in_block && !has_escaped_newline(text) {
            self.push_one(line, hit);
            return;
        }
        for piece in self.unflatten(line) {
            let hit = self.banner_hits(&piece.text);
            self.push_one(piece, hit);
        }
    }

    /// The next completed block, in input order.
    pub fn pop(&mut self) -> Option<Block<'d>> {
        self.ready.pop_front()
    }

    /// The input ended: a block that was still open is complete too.
    pub fn finish(&mut self) {
        // A block looking ahead for its closing line (see `MAX_LOOKAHEAD`) was cut off where its
        // rows ended; the lines after it are read again, and may open a block of their own.
        while self.open.as_ref().is_some_and(|o| o.grid.is_none() && !o.table && o.noise_run >= MAX_NOISE_RUN) {
            self.cut_off();
        }
        if let Some(open) = self.open.take() {
            let end = match open.grid {
                Some(d) if d.block.as_ref().is_some_and(|b| b.end.is_none()) => {
                    BlockEnd::AfterTables(open.last_row_line)
                }
                _ if open.table => BlockEnd::Table(open.last_row_line),
                _ => BlockEnd::EndOfInput,
            };
            self.finish_block(open, end);
        }
        self.release();
    }

    /// The open block ends as cut off after its last known row ([`BlockEnd::Noise`]). The
    /// [`MAX_NOISE_RUN`] lines after that row belong to what follows (the next run's preamble,
    /// perhaps); lines read past them, while looking ahead for a closing line, are read again as
    /// they would have been had the block ended there.
    fn cut_off(&mut self) {
        let Some(mut done) = self.open.take() else { return };
        let keep = done.body.len() - done.noise_run;
        let mut after: Vec<Line> = done.body.split_off(keep);
        done.seen.truncate(keep);
        self.finish_block(done, BlockEnd::Noise);
        let again = after.split_off(after.len().min(MAX_NOISE_RUN));
        for l in &after {
            self.note_context(l);
        }
        for l in again {
            let hit = self.banner_hits(&l.text);
            self.push_one(l, hit);
        }
    }

    fn release(&mut self) {
        if let Some(h) = self.held.take() {
            self.ready.push_back(h.block);
        }
    }

    /// A line while a block waits for its trailer: taken into the trailer, or counted as a gap.
    /// Returns whether the line was used.
    fn feed_held(&mut self, line: &Line) -> bool {
        let Some(h) = self.held.as_mut() else { return false };
        let trimmed = line.text.trim();
        if h.open {
            if h.trailer.end.is_match(trimmed) {
                h.block.last_line = line.number;
                self.release();
                return true;
            }
            // Plain rules inside the trailer separate its groups; its rows stay in its section.
            let text = if trimmed.chars().all(|c| c == '-') && !trimmed.is_empty() {
                format!("--- {} ---", h.trailer.section)
            } else {
                line.text.clone()
            };
            h.block.rows.push(self.known.see(&text));
            h.block.body.push(Line { number: line.number, text, truncated: line.truncated });
            h.block.last_line = line.number;
            return true;
        }
        if h.trailer.banner.is_match(trimmed) {
            h.open = true;
            let text = format!("--- {} ---", h.trailer.section);
            h.block.rows.push(self.known.see(&text));
            h.block.body.push(Line { number: line.number, text, truncated: false });
            return true;
        }
        if !trimmed.is_empty() {
            h.gap += 1;
        }
        if h.gap > h.trailer.max_gap || self.banner_hits(&line.text).is_some() {
            self.release();
        }
        false
    }

    /// Pasted text sometimes lost its line breaks: escaped (`\n` in a JSON log line) or replaced
    /// by spaces (a block on one line). Such a line is cut back into lines, at the labels the
    /// candidate definitions know.
    fn unflatten(&self, line: Line) -> Vec<Line> {
        let relevant = |text: &str| self.open.is_some() || self.banner_hits(text).is_some();
        let mut pieces = vec![line];
        if has_escaped_newline(&pieces[0].text) && relevant(&pieces[0].text) {
            let l = pieces.remove(0);
            let unescaped = l.text.replace("\\r\\n", "\\n").replace("\\t", "\t").replace("\\\"", "\"");
            pieces = unescaped
                .split("\\n")
                .map(|t| Line { number: l.number, text: t.to_string(), truncated: l.truncated })
                .collect();
        }
        let mut out = Vec::with_capacity(pieces.len());
        for piece in pieces {
            let defs: Vec<&Definition> = match (&self.open, self.banner_hits(&piece.text)) {
                (_, Some((c, _))) => c,
                (Some(open), None) => open.candidates.clone(),
                (None, None) => {
                    out.push(piece);
                    continue;
                }
            };
            // A banner with text after it, or a long line with more than one known label.
            let banner_end = self
                .banner_hits(&piece.text)
                .and_then(|(c, at)| c[0].block.as_ref()?.banner.find_at(&piece.text, at).map(|m| m.end()));
            let rest_from = match banner_end {
                Some(end) if !piece.text[end..].trim().is_empty() => Some(end),
                Some(_) => None,
                None if piece.text.len() > 80 => Some(0),
                None => None,
            };
            let Some(from) = rest_from else {
                out.push(piece);
                continue;
            };
            let cuts: Vec<usize> =
                defs.iter().flat_map(|d| d.row_starts(&piece.text[from..])).map(|c| c + from).collect();
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|c| *c >= from).collect();
            cuts.sort_unstable();
            cuts.dedup();
            if banner_end.is_none() && cuts.len() < 2 {
                out.push(piece);
                continue;
            }
            let mut starts = vec![0];
            starts.extend(cuts.into_iter().filter(|c| *c > 0));
            if let Some(end) = banner_end {
                if !starts.contains(&end) {
                    starts.push(end);
                    starts.sort_unstable();
                }
            }
            for (i, start) in starts.iter().enumerate() {
                let end = starts.get(i + 1).copied().unwrap_or(piece.text.len());
                let text = piece.text[*start..end].trim();
                if !text.is_empty() {
                    out.push(Line { number: piece.number, text: text.to_string(), truncated: piece.truncated });
                }
            }
        }
        out.into_iter()
            .flat_map(|p| match self.split_closing_rule(&p.text) {
                Some((rule, rest)) => vec![
                    Line { number: p.number, text: rule.to_string(), truncated: p.truncated },
                    Line { number: p.number, text: rest.to_string(), truncated: p.truncated },
                ],
                None => vec![p],
            })
            .collect()
    }

    /// A closing line with text glued after it (`=====..."}` in an escaped log, `===== (pasted)`):
    /// the rule and the text, when the rule alone is some definition's block `end`. A rule is a run
    /// of ten or more of one character; a banner, which has the run's character on both sides of
    /// its title, is not one.
    fn split_closing_rule<'t>(&self, text: &'t str) -> Option<(&'t str, &'t str)> {
        // (A row, the usual line, starts with a letter: answered from its first byte.)
        if text.trim_ascii_start().as_bytes().first().is_some_and(u8::is_ascii_alphanumeric) {
            return None;
        }
        let t = text.trim();
        let c = t.chars().next().filter(|c| !c.is_alphanumeric())?;
        let after = t.trim_start_matches(c);
        let (rule, rest) = (&t[..t.len() - after.len()], after.trim());
        let banner_like = rest.chars().rev().take(3).filter(|x| *x == c).count() == 3;
        if rule.chars().count() < 10 || rest.is_empty() || banner_like {
            return None;
        }
        let closes = self.text_defs.iter().filter_map(|d| d.block.as_ref()?.end.as_ref()).any(|end| end.is_match(rule));
        closes.then_some((rule, rest))
    }

    fn push_one(&mut self, line: Line, banner_hits: Option<(Vec<&'d Definition>, usize)>) {
        if self.feed_held(&line) {
            return;
        }
        if let Some(def) = self.open.as_ref().and_then(|o| o.grid) {
            self.push_table_line(def, line, banner_hits);
            return;
        }
        if self.open.as_ref().is_some_and(|o| o.table) {
            if let Some((label, value)) = table_row(&line.text) {
                let open = self.open.as_mut().expect("open");
                if !label.is_empty() {
                    open.body.push(Line {
                        number: line.number,
                        text: format!("{label}: {value}"),
                        truncated: line.truncated,
                    });
                    open.last_row_line = line.number;
                }
                return;
            }
            let open = self.open.take().expect("open");
            let last = open.last_row_line;
            self.finish_block(open, BlockEnd::Table(last));
            // The line after a table may itself start something.
        }
        if self.open.as_ref().is_some_and(|o| o.noise_run >= MAX_NOISE_RUN) && banner_hits.is_some() {
            // Past its last rows, looking ahead for a closing line that did not come: the block
            // was cut off there, and this banner starts the next.
            self.cut_off();
            return self.push_one(line, banner_hits);
        }
        if let Some(open) = &mut self.open {
            if let Some((candidates, at)) = banner_hits {
                // A new banner before the closing line: the open block was cut off.
                let number = line.number;
                let done = self.open.take().expect("open");
                self.start(line, candidates, at);
                self.finish_block(done, BlockEnd::NextBanner(number));
                return;
            }
            let text = strip_prefix(&line.text, &open.prefix);
            let trimmed = text.trim_ascii();
            if open.candidates.iter().any(|d| {
                d.block.as_ref().is_some_and(|b| {
                    b.end_first.may_match(trimmed) && b.end.as_ref().is_some_and(|e| e.is_match(trimmed))
                })
            }) {
                let number = line.number;
                let mut done = self.open.take().expect("open");
                done.last_row_line = number;
                self.finish_block(done, BlockEnd::Closed(number));
                return;
            }
            // A row counts as part of the block when a candidate knows its label; unknown rows are
            // kept, but a run of them (with other lines) after the last known row ends a block
            // that lost its closing line.
            let seen = self.known.see(text);
            // (A candidate past the mask's 64 definitions is asked itself.)
            let (bits, all_have_bits) = open.candidate_bits;
            let is_row = seen.as_ref().is_some_and(|s| {
                s.known & bits != 0
                    || !all_have_bits && open.candidates.iter().any(|d| self.known.knows_in(s.known, d, &s.label))
            });
            let is_section = open.candidates.iter().any(|d| {
                d.block.as_ref().is_some_and(|b| {
                    b.section_first.may_match(trimmed) && b.section.as_ref().is_some_and(|s| s.is_match(trimmed))
                })
            });
            let ends_after = is_row
                && open.candidates.iter().any(|d| {
                    d.block
                        .as_ref()
                        .and_then(|b| b.end_after_label.as_ref())
                        .is_some_and(|l| seen.as_ref().is_some_and(|s| *l == s.label))
                });
            if is_row || is_section {
                open.noise_run = 0;
                open.non_rows = 0;
                open.last_row_line = line.number;
                if let Some(s) = seen.as_ref().filter(|_| is_row) {
                    open.value_column = match open.value_column {
                        None => Some(Some(s.value.start)),
                        Some(Some(c)) if c != s.value.start => Some(None),
                        same => same,
                    };
                }
            } else {
                open.noise_run += 1;
                match &seen {
                    Some(s) if open.in_format(s) => open.non_rows = 0,
                    _ => open.non_rows += 1,
                }
            }
            let number = line.number;
            let text = if open.prefix.is_empty() { line.text } else { text.to_string() };
            open.body.push(Line { number, text, truncated: line.truncated });
            open.seen.push(seen);
            if ends_after {
                let done = self.open.take().expect("open");
                self.finish_block(done, BlockEnd::Closed(number));
                return;
            }
            if open.noise_run >= MAX_NOISE_RUN && !open.may_still_close() {
                self.cut_off();
            }
            return;
        }
        if let Some((candidates, at)) = banner_hits {
            self.start(line, candidates, at);
            return;
        }
        if let Some((label, value)) = table_row(&line.text) {
            let key = format!("{label}:");
            let candidates: Vec<&'d Definition> =
                self.text_defs.iter().copied().filter(|d| d.knows_label(&normalize_label(&key))).collect();
            if !candidates.is_empty() {
                let number = line.number;
                self.open = Some(Open {
                    table: true,
                    grid: None,
                    candidate_bits: self.known.bits_of(&candidates),
                    candidates,
                    banner: line.clone(),
                    prefix: String::new(),
                    body: vec![Line { number, text: format!("{label}: {value}"), truncated: line.truncated }],
                    // (Table rows are read again at the end.)
                    seen: Vec::new(),
                    noise_run: 0,
                    non_rows: 0,
                    value_column: None,
                    last_row_line: number,
                    context: std::mem::take(&mut self.context),
                    notes: Vec::new(),
                });
                return;
            }
        }
        self.note_context(&line);
    }

    /// A line while a table block is open: kept while it is a table line (or one of a few other
    /// lines between tables); the block ends at its closing line, another format's banner, or
    /// `max_noise` other lines.
    fn push_table_line(&mut self, def: &'d Definition, line: Line, banner_hits: Option<(Vec<&'d Definition>, usize)>) {
        let block = def.block.as_ref().expect("a table definition has a block");
        let spec = block.table.as_ref().expect("a table definition");
        let open = self.open.as_mut().expect("open");
        let text = strip_prefix(&line.text, &open.prefix).to_string();
        let trimmed = text.trim();
        // Another format's banner ends the tables; a banner of theirs (a table title) does not.
        if let Some((candidates, at)) =
            banner_hits.filter(|(c, _)| !c.iter().any(|d| open.candidates.iter().any(|o| o.id == d.id)))
        {
            let number = line.number;
            let done = self.open.take().expect("open");
            let last = done.last_row_line;
            self.start(line, candidates, at);
            let end = if block.end.is_some() { BlockEnd::NextBanner(number) } else { BlockEnd::AfterTables(last) };
            self.finish_block(done, end);
            return;
        }
        let number = line.number;
        if block.end.as_ref().is_some_and(|e| e.is_match(trimmed)) {
            let mut done = self.open.take().expect("open");
            done.last_row_line = number;
            self.finish_block(done, BlockEnd::Closed(number));
            return;
        }
        // A blank line neither ends the tables nor keeps them going.
        let blank = trimmed.is_empty();
        let is_table = !blank && table::is_table_line(def, spec, trimmed);
        open.body.push(Line { number, text, truncated: line.truncated });
        if blank {
            return;
        }
        if is_table {
            open.noise_run = 0;
            open.last_row_line = number;
            return;
        }
        open.noise_run += 1;
        if open.noise_run >= spec.max_noise {
            let mut done = self.open.take().expect("open");
            // The lines after the last table line belong to what follows.
            let keep = done.body.iter().rposition(|l| l.number == done.last_row_line).map_or(0, |i| i + 1);
            let after: Vec<Line> = done.body.split_off(keep);
            let last = done.last_row_line;
            self.finish_block(done, BlockEnd::AfterTables(last));
            for l in &after {
                self.note_context(l);
            }
        }
    }

    fn banner_hits(&self, text: &str) -> Option<(Vec<&'d Definition>, usize)> {
        if !self.literals.banners.is_match(text) {
            return None;
        }
        let mut at = None;
        let mut hits = Vec::new();
        // Formats that share a banner (vLLM's and SGLang's) ask the same pattern once.
        let mut asked: Option<(&str, Option<usize>)> = None;
        for (d, needles) in self.text_defs.iter().zip(&self.literals.banner) {
            if !needles.found_in(text) {
                continue;
            }
            let banner = &d.block.as_ref().expect("text definition").banner;
            let start = match asked {
                Some((pattern, start)) if pattern == banner.as_str() => start,
                _ => {
                    let start = banner.find(text).map(|m| m.start());
                    asked = Some((banner.as_str(), start));
                    start
                }
            };
            if let Some(start) = start {
                at.get_or_insert(start);
                hits.push(*d);
            }
        }
        at.map(|at| (hits, at))
    }

    fn note_context(&mut self, line: &Line) {
        if !self.literals.args_requires.is_empty() && line.text.contains(crate::definition::ARGS_DUMP) {
            self.note_args(line);
            return;
        }
        if self.literals.context_labels.is_empty() || !line.text.contains(':') {
            return;
        }
        if let Some(row) = split_row(&line.text) {
            let label = normalize_label(row.label);
            if self.literals.context_labels.contains(&label) {
                self.context
                    .insert(label.clone(), ContextLine { line: line.number, label, value: row.value.to_string() });
            }
        }
    }

    /// An argument dump: each argument a definition reads, as a context line `args.NAME:`, when
    /// the dump names every argument some definition `requires` (else it is another program's).
    fn note_args(&mut self, line: &Line) {
        let Some(args) = args_dump(&line.text) else { return };
        let names: Vec<&str> = args.iter().map(|(n, _)| *n).collect();
        if !self.literals.args_requires.iter().any(|req| req.iter().all(|r| names.contains(&r.as_str()))) {
            return;
        }
        for (name, value) in args {
            let label = crate::definition::arg_label(name);
            if self.literals.context_labels.contains(&label) {
                self.context.insert(label.clone(), ContextLine { line: line.number, label, value });
            }
        }
    }

    fn start(&mut self, line: Line, candidates: Vec<&'d Definition>, at: usize) {
        // Indentation or quoting before the banner (`  `, `> `) is removed from every block line;
        // anything else before it (a pasted code fence) is not repeated on later lines.
        let before = &line.text[..at];
        let prefix =
            if before.chars().all(|c| c.is_whitespace() || c == '>') { before.to_string() } else { String::new() };
        let banner_is_row = candidates.iter().any(|d| d.block.as_ref().is_some_and(|b| b.banner_is_row));
        let grid = candidates.iter().copied().find(|d| d.block.as_ref().is_some_and(|b| b.table.is_some()));
        // Room for a usual block's lines (about 40), so that it is not regrown line by line.
        let mut body = Vec::with_capacity(48);
        let mut seen = Vec::with_capacity(48);
        if banner_is_row || grid.is_some() {
            body.push(Line { number: line.number, text: line.text[at..].to_string(), truncated: line.truncated });
            seen.push(self.known.see(&line.text[at..]));
        }
        let number = line.number;
        let candidates: Vec<&'d Definition> = if grid.is_some() {
            candidates.into_iter().filter(|d| d.block.as_ref().is_some_and(|b| b.table.is_some())).collect()
        } else {
            candidates
        };
        self.open = Some(Open {
            table: false,
            grid,
            candidate_bits: self.known.bits_of(&candidates),
            candidates,
            banner: line,
            prefix,
            body,
            seen,
            noise_run: 0,
            non_rows: 0,
            value_column: None,
            last_row_line: number,
            context: std::mem::take(&mut self.context),
            notes: Vec::new(),
        });
    }

    fn finish_block(&mut self, mut open: Open<'d>, end: BlockEnd) {
        self.release();
        if open.grid.is_some() {
            // A table block: its cells become rows, in one run or (one run per table row) several.
            // Of the table formats whose banner matched, the one that knows the most of its rows.
            let lines = std::mem::take(&mut open.body);
            let read = |d: &'d Definition| {
                table::bodies(d, d.block.as_ref().and_then(|b| b.table.as_ref()).expect("a table definition"), &lines)
            };
            let mut best: Option<(&'d Definition, Vec<table::Body>, usize)> = None;
            for d in open.candidates.iter().copied() {
                let bodies = read(d);
                let n = bodies
                    .iter()
                    .flat_map(|b| &b.lines)
                    .filter(|l| self.known.see(&l.text).is_some_and(|r| self.known.knows_in(r.known, d, &r.label)))
                    .count();
                if best.as_ref().is_none_or(|(_, _, m)| n > *m) {
                    best = Some((d, bodies, n));
                }
            }
            let Some((def, bodies, _)) = best else { return };
            for b in bodies {
                // Tables without a closing line end with the last table that had rows.
                let last_row_line = match end {
                    BlockEnd::AfterTables(_) | BlockEnd::EndOfInput => b.last_line.unwrap_or(open.last_row_line),
                    _ => open.last_row_line,
                };
                let one = Open {
                    body: b.lines,
                    seen: Vec::new(),
                    notes: b.notes,
                    last_row_line,
                    context: open.context.clone(),
                    banner: open.banner.clone(),
                    prefix: open.prefix.clone(),
                    candidates: vec![def],
                    candidate_bits: self.known.bits_of(&[def]),
                    grid: None,
                    ..open
                };
                self.finish_block(one, end);
            }
            return;
        }
        let Some(block) = self.classify_block(open, end) else { return };
        let trailer = match (block.end, block.variant) {
            (BlockEnd::Closed(_), Some(v)) => block.definition.trailers.iter().find(|t| t.variants.contains(&v.id)),
            _ => None,
        };
        match trailer {
            Some(trailer) => self.held = Some(Held { block, trailer, gap: 0, open: false }),
            None => self.ready.push_back(block),
        }
    }

    fn classify_block(&mut self, mut open: Open<'d>, end: BlockEnd) -> Option<Block<'d>> {
        let mut labels = Vec::with_capacity(open.body.len());
        let mut masks = Vec::with_capacity(open.body.len());
        let mut sections = Vec::new();
        // The rows as they were seen line by line, or (a block of table rows) read now.
        let mut seen = std::mem::take(&mut open.seen);
        if seen.len() != open.body.len() {
            seen = open.body.iter().map(|l| self.known.see(&l.text)).collect();
        }
        for (l, row) in open.body.iter().zip(&seen) {
            if let Some(row) = row {
                labels.push(row.label.as_str());
                masks.push(row.known);
            } else if let Some(name) = open.candidates.iter().find_map(|d| section_name(d, crate::lex::trim(&l.text))) {
                sections.push(name);
            }
        }
        // The definition that knows the most labels no other candidate knows (lines before the
        // banner that it reads as context count too), then the most labels; on a tie, the first.
        // (An argument dump does not vote: the tools share argument names.)
        let context_labels_seen: Vec<&String> = open.context.keys().filter(|l| !l.starts_with("args.")).collect();
        // Which candidates know each label, worked out once.
        // One flat table, a row of candidates per label (not a Vec per label).
        let n = open.candidates.len();
        let mut table = Vec::with_capacity(labels.len() * n);
        let bits: Vec<Option<usize>> = open.candidates.iter().map(|d| self.known.bit(d)).collect();
        for (l, mask) in labels.iter().zip(&masks) {
            for (d, bit) in open.candidates.iter().zip(&bits) {
                table.push(KnownLabels::knows_at(*mask, *bit, d, l));
            }
        }
        let knowers = || table.chunks_exact(n.max(1));
        let scored: Vec<(&Definition, (usize, usize))> = open
            .candidates
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let known = knowers().filter(|k| k[i]).count();
                let unique = knowers().filter(|k| k[i] && k.iter().filter(|x| **x).count() == 1).count();
                let context = context_labels_seen.iter().filter(|l| d.context_spec(l).is_some()).count();
                (*d, (unique + context, known))
            })
            .collect();
        let best = scored.iter().fold(None::<(&Definition, (usize, usize))>, |acc, (d, s)| match acc {
            Some((_, a)) if a >= *s => acc,
            _ => Some((*d, *s)),
        })?;
        if best.1.1 == 0 {
            // A banner with no row any definition knows: some other program's output.
            return None;
        }
        let ambiguous_with: Vec<&str> =
            scored.iter().filter(|(d, s)| d.id != best.0.id && *s == best.1).map(|(d, _)| d.id.as_str()).collect();
        let definition = best.0;
        let context: Vec<ContextLine> =
            open.context.into_values().filter(|c| definition.context_spec(&c.label).is_some()).collect();
        let context_labels: Vec<String> = context.iter().map(|c| c.label.clone()).collect();
        let banner_text = strip_prefix(&open.banner.text, &open.prefix).trim();
        let banner_width = definition
            .block
            .as_ref()
            .and_then(|b| b.banner.find(banner_text))
            .map_or(0, |m| m.as_str().chars().count());
        let evidence = Evidence { labels: &labels, sections: &sections, banner_width, context_labels: &context_labels };
        let variant = definition.variants.iter().find(|v| v.matches(&evidence));
        let mut context = context;
        context.sort_by(|a, b| (a.line, &a.label).cmp(&(b.line, &b.label)));
        self.blocks += 1;
        Some(Block {
            definition,
            variant,
            index: self.blocks,
            banner: open.banner,
            body: open.body,
            rows: seen,
            end,
            last_line: open.last_row_line,
            context,
            ambiguous_with,
            notes: open.notes,
        })
    }
}

/// A Markdown table row `| label | value |` (label without a trailing colon); the separator row
/// `|---|---|` gives an empty label.
fn table_row(text: &str) -> Option<(String, String)> {
    let t = text.trim();
    let inner = t.strip_prefix('|')?.strip_suffix('|').unwrap_or_else(|| t.strip_prefix('|').unwrap_or(t));
    let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
    if cells.len() < 2 {
        return None;
    }
    if cells.iter().all(|c| c.chars().all(|ch| matches!(ch, '-' | ':' | ' '))) {
        return Some((String::new(), String::new()));
    }
    let label = cells[0].trim_matches('*').trim().trim_end_matches(':').trim().to_string();
    let value = cells[1].trim_matches('`').trim().to_string();
    Some((label, value))
}

/// The name of a section header line for this definition (empty: a plain rule).
pub fn section_name(def: &Definition, trimmed: &str) -> Option<String> {
    let block = def.block.as_ref()?;
    let re = block.section.as_ref()?;
    if !block.section_first.may_match(trimmed) || !re.is_match(trimmed) {
        return None;
    }
    // The name is the header without its padding (a capture group would cost far more).
    Some(crate::lex::trim(strip_around(trimmed, &block.section_strip)).to_string())
}

/// `text.trim_matches(|c| strip.contains(c))`, byte by byte for an ASCII `strip` (`-`), where
/// asking the string for each character of a long rule cost more than the rest of the line.
fn strip_around<'t>(text: &'t str, strip: &str) -> &'t str {
    if !strip.is_ascii() {
        return text.trim_matches(|c| strip.contains(c));
    }
    let (b, set) = (text.as_bytes(), strip.as_bytes());
    // Both ends fall next to an ASCII byte (or the text's ends): character boundaries.
    let start = b.iter().position(|x| !set.contains(x)).unwrap_or(b.len());
    let end = b.iter().rposition(|x| !set.contains(x)).map_or(start, |i| i + 1);
    &text[start..end]
}

/// Whether a line has an escaped line break (a backslash and `n`, in a JSON log line), as
/// `contains("\\n")` would say, by a byte search for the backslash (the usual line has none).
fn has_escaped_newline(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b'\\', b).any(|i| b.get(i + 1) == Some(&b'n'))
}

/// The arguments of an argument dump in a line, `Namespace(name=value, ...)` (Python's repr of
/// argparse's result), in order: strings unquoted (`'random'` is `random`), other values as
/// printed (`None`, `inf`, `True`, `{'image': 255}`). `None` when the line holds no complete dump.
pub fn args_dump(line: &str) -> Option<Vec<(&str, String)>> {
    let at = line.find(crate::definition::ARGS_DUMP)?;
    let body = &line[at + crate::definition::ARGS_DUMP.len()..];
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while bytes.get(i) == Some(&b' ') {
            i += 1;
        }
        if bytes.get(i) == Some(&b')') {
            return Some(out);
        }
        let name_end = i + bytes[i..].iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))?;
        if name_end == i || bytes.get(name_end) != Some(&b'=') {
            return None;
        }
        let name = &body[i..name_end];
        let start = name_end + 1;
        // The value ends at a comma or the closing parenthesis outside quotes and brackets.
        let (mut depth, mut quote, mut j) = (0usize, None::<u8>, start);
        loop {
            let b = *bytes.get(j)?;
            match quote {
                Some(_) if b == b'\\' => j += 1,
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None => match b {
                    b'\'' | b'"' => quote = Some(b),
                    b'(' | b'[' | b'{' | b'<' => depth += 1,
                    b')' | b']' | b'}' | b'>' if depth > 0 => depth -= 1,
                    b',' | b')' if depth == 0 => break,
                    _ => {}
                },
            }
            j += 1;
        }
        let raw = body[start..j].trim();
        let value = match raw.as_bytes() {
            [q @ (b'\'' | b'"'), .., last] if q == last && raw.len() >= 2 => raw[1..raw.len() - 1].to_string(),
            _ => raw.to_string(),
        };
        out.push((name, value));
        i = if bytes[j] == b',' { j + 1 } else { j };
    }
}

fn strip_prefix<'a>(text: &'a str, prefix: &str) -> &'a str {
    if prefix.is_empty() {
        return text;
    }
    if let Some(rest) = text.strip_prefix(prefix) {
        return rest;
    }
    text.strip_prefix(prefix.trim_end()).unwrap_or(text)
}

// ------------------------------------------------------------------------------------------------
// JSON documents

use crate::input::json::Doc;

/// What a JSON document is.
pub enum DocKind<'d> {
    /// `{"schema_version": .., "runs": [..]}`: a canonical report (ours, or written by hand).
    CanonicalReport,
    /// `{"source"?, "totals", "reported", ..}`: one canonical run.
    CanonicalRun,
    /// A format of a definition (result file, dstack report).
    Format {
        definition: &'d Definition,
        variant: Option<&'d Variant>,
        ambiguous_with: Vec<&'d str>,
    },
    Unknown,
}

/// Every key of a document as a dotted path (nested objects too), per-request arrays included.
pub fn doc_keys(doc: &Doc) -> Vec<String> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<String>) {
        if let serde_json::Value::Object(m) = v {
            for (k, sub) in m {
                let path = format!("{prefix}.{k}");
                out.push(path.clone());
                walk(&path, sub, out);
            }
        }
    }
    let mut out = Vec::new();
    for (k, v) in &doc.fields {
        out.push(k.clone());
        walk(k, v, &mut out);
    }
    out.extend(doc.arrays.iter().map(|(k, _)| k.clone()));
    out
}

/// Tell what a JSON document is: a canonical report or run, or the definition that knows most of
/// its keys that no other one knows.
pub fn classify_doc<'d>(doc: &Doc, defs: &'d Definitions) -> DocKind<'d> {
    if doc.get("runs").is_some() && doc.get("schema_version").is_some() {
        return DocKind::CanonicalReport;
    }
    let keys = doc_keys(doc);
    let json_defs: Vec<&Definition> = defs
        .iter()
        .filter(|d| d.is_json())
        .filter(|d| {
            let det = d.detect.as_ref().expect("a JSON format has [detect]");
            det.keys_all.iter().all(|k| keys.contains(k))
                && (det.keys_any.is_empty() || det.keys_any.iter().any(|k| keys.contains(k)))
        })
        .collect();
    if json_defs.is_empty() {
        let canonical = ["totals", "reported", "derived"].iter().any(|k| doc.get(k).is_some_and(|v| v.is_object()));
        return if canonical { DocKind::CanonicalRun } else { DocKind::Unknown };
    }
    let score = |d: &Definition| {
        let known: Vec<&String> = keys.iter().filter(|k| d.key_spec(k).is_some()).collect();
        let unique =
            known.iter().filter(|k| !json_defs.iter().any(|o| o.id != d.id && o.key_spec(k).is_some())).count();
        (unique, known.len())
    };
    let scored: Vec<(&Definition, (usize, usize))> = json_defs.iter().map(|d| (*d, score(d))).collect();
    let (definition, best) = scored
        .iter()
        .fold(None::<(&Definition, (usize, usize))>, |acc, (d, s)| match acc {
            Some((_, a)) if a >= *s => acc,
            _ => Some((*d, *s)),
        })
        .expect("not empty");
    let ambiguous_with =
        scored.iter().filter(|(d, s)| d.id != definition.id && *s == best).map(|(d, _)| d.id.as_str()).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let evidence = Evidence { labels: &keys, sections: &[], banner_width: 0, context_labels: &[] };
    let variant = definition.variants.iter().find(|v| v.matches(&evidence));
    DocKind::Format { definition, variant, ambiguous_with }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_around_is_trim_matches() {
        for (text, strip) in [
            ("---Time to First Token---", "-"),
            ("------", "-"),
            ("", "-"),
            ("-a-", ""),
            ("ℹ Summary Info ", "ℹ "),
            ("-é-x-é-", "-"),
            ("=-= x =-=", "=-"),
            ("x", "-"),
        ] {
            assert_eq!(strip_around(text, strip), text.trim_matches(|c| strip.contains(c)), "{text:?} {strip:?}");
        }
    }
}
