//! Repairs of damaged and retyped text, driven by what the definitions know (their banners, row
//! labels, section and closing lines), never by one sample's text:
//!
//! - markup around a block (`<pre>`, `<br>`, `&nbsp;`, entities, a `<table>` of label and value
//!   cells) is taken off the lines the scanner reads ([`Scanner::unmark`]);
//! - a paste whose line breaks were lost, with a banner that must stand on its own line (vLLM's
//!   2023 paragraph, `Total time: ... s Throughput: ...`), is cut at the rows its definition knows
//!   ([`Scanner::split_paragraph`]; blocks with a free-standing banner are cut by `unflatten`);
//! - a terminal's hard wrap inside a printed block is undone: a line and the next are joined when
//!   the join is a row a candidate knows (or a section header) and neither part alone is
//!   ([`Scanner::rejoin`]);
//! - a template (every row a placeholder: `xx.xx`, `...`, `[result]`, `N/A`) is said to be one
//!   ([`template_notes`]).
//!
//! Each repair is made only when it is unambiguous, and leaves a note on the run (`repaired-*`). A
//! figure that may have been cut by the wrap but cannot be proved whole is left unread, with a note.
//! The repairs run only on the lines the scanner reads anyway (a banner's line, a block's lines):
//! noise skipped by the prefilter is never looked at.

use super::super::known::LineFacts;
use super::super::mode::Hit;
use super::super::prefix::Prefix;
use super::{BodyRow, Mode, Scanner};
use crate::definition::Definition;
use crate::input::Line;
use crate::lex::split_row_key;
use crate::report::Note;

mod cut_header;
mod markup;
mod template;

use markup::{Part, cells_row, has_markup, unmark_text};
pub(super) use template::template_notes;

/// The state of the repairs between lines.
#[derive(Default)]
pub(super) struct Repair {
    /// A line held back inside a printed block, with what it is to the block: the next line may
    /// be its hard-wrapped rest.
    pending: Option<(Line, Seen)>,
    /// The width a hard wrap was seen to cut lines at in the open block (`Some(0)`: widths that
    /// disagree), learned from a repair that proves it (a banner's or a row's rest on the next line).
    width: Option<usize>,
    /// Notes waiting for the block that the repaired lines go to.
    notes: Vec<Note>,
    /// An HTML table row (`<tr>`) whose cells are on several lines: the cells so far.
    cells: Option<(Line, Vec<String>)>,
    /// Outside a block, the pieces so far of a ruled table line cut before its closing border (a
    /// header a terminal hard-wrapped): the next line may be its rest.
    /// (`true`: the pieces so far are a header.)
    cut: Option<(Vec<Line>, bool)>,
}

impl Repair {
    /// Whether the next line must be read whatever it holds (a table row's cells go on).
    pub(super) fn wants(&self) -> bool {
        self.cells.is_some() || self.pending.is_some() || self.cut.is_some()
    }
}

/// Most lines an HTML table row's cells are looked for on.
const MAX_ROW_LINES: usize = 8;

/// Longest line held back as a possible first part of a wrapped row (a longer one is a log line).
const MAX_WRAPPED: usize = 256;

impl<'d> Scanner<'d> {
    /// A line as the scanner reads it: markup taken off, a joined paragraph cut into its rows, a
    /// hard-wrapped row joined to its rest. Each resulting line goes to `push_line`.
    ///
    /// The usual line (no markup, no joined paragraph) goes straight on, without a copy.
    pub(super) fn push_repaired(&mut self, line: Line) {
        if self.repair.cells.is_some() || has_markup(&line.text) {
            for piece in self.unmark(line) {
                self.push_unmarked(piece);
            }
        } else {
            self.push_unmarked(line);
        }
        // Repaired lines that opened no block: nothing to say them on.
        if self.open.is_none() {
            self.repair.notes.clear();
        }
    }

    /// A line without markup: a joined paragraph is cut into its rows, each line (or piece) then
    /// rejoined to a hard-wrapped rest.
    fn push_unmarked(&mut self, line: Line) {
        if self.may_be_paragraph(&line.text) {
            for piece in self.split_paragraph(line) {
                self.rejoin(piece);
            }
        } else {
            self.rejoin(line);
        }
    }

    /// `unflatten` cut a line at the rows the candidates know.
    pub(super) fn note_unflattened(&mut self, line: usize) {
        self.note(
            "repaired-joined-lines",
            "the block's line breaks were lost (pasted on one line): cut before each row the definitions know".into(),
            line,
        );
    }

    /// The input ended: a line held back is read.
    pub(super) fn flush_repair(&mut self) {
        if let Some((line, cells)) = self.repair.cells.take() {
            self.rejoin(Line { text: cells_row(&cells), ..line });
        }
        if let Some((p, seen)) = self.repair.pending.take() {
            self.push_held(p, seen);
        }
        for p in self.flush_cut_header() {
            self.push_line(p);
        }
    }

    /// Notes of repairs go to the open block (each code once).
    pub(super) fn attach_notes(&mut self) {
        if self.repair.notes.is_empty() {
            return;
        }
        // (Without an open block, the notes wait for the rest of the input line: see `push_repaired`.)
        let Some(open) = self.open.as_mut() else { return };
        let notes = match open {
            Mode::Rows(o, _) | Mode::Markdown(o) | Mode::Grid(o, _) => &mut o.notes,
        };
        for n in self.repair.notes.drain(..) {
            if !notes.iter().any(|m| m.code == n.code && m.message == n.message) {
                notes.push(n);
            }
        }
    }

    fn note(&mut self, code: &str, message: String, line: usize) {
        if !self.repair.notes.iter().any(|n| n.code == code) {
            self.repair.notes.push(Note { code: code.into(), message, line: Some(line) });
        }
    }

    // --- markup ------------------------------------------------------------------------------

    /// A line with HTML markup (known tags only; `<value>` is no tag) or character entities: the
    /// text it shows, cut into lines where the markup breaks lines, and a table row's cells as a
    /// Markdown table row (`| label | value |`), which the scanner reads as rows.
    fn unmark(&mut self, line: Line) -> Vec<Line> {
        let Some(parts) = unmark_text(&line.text) else {
            let container = self.repair.cells.is_some() && self.holds_block(&line.text);
            if let Some((first, cells)) = if container { self.repair.cells.take() } else { None } {
                // A cell that holds a fenced block or a result's banner is a container (blocks
                // pasted side by side, one per `<td>`), not a value: the row is no row of cells,
                // and its lines are read as they are.
                let mut out: Vec<Line> = cells
                    .into_iter()
                    .filter(|c| !c.trim().is_empty())
                    .map(|text| Line { text, ..first.clone() })
                    .collect();
                out.push(line);
                return out;
            }
            if let Some((first, mut cells)) = self.repair.cells.take() {
                // Inside a table row, a line of plain text is a cell's continuation.
                if let Some(last) = cells.last_mut() {
                    last.push(' ');
                    last.push_str(line.text.trim());
                }
                self.repair.cells = Some((first, cells));
                return Vec::new();
            }
            return vec![line];
        };
        let mut out = Vec::new();
        for part in parts {
            match part {
                Part::Text(t) => {
                    if let Some((_, cells)) = self.repair.cells.as_mut() {
                        if let Some(last) = cells.last_mut()
                            && !t.trim().is_empty()
                        {
                            if !last.is_empty() {
                                last.push(' ');
                            }
                            last.push_str(t.trim());
                        }
                        continue;
                    }
                    out.push(Line { number: line.number, text: t, truncated: line.truncated });
                }
                Part::RowStart => {
                    self.repair.cells = Some((Line { text: String::new(), ..line.clone() }, Vec::new()));
                }
                Part::Cell => {
                    let cells = self.repair.cells.get_or_insert_with(|| (line.clone(), Vec::new()));
                    cells.1.push(String::new());
                }
                Part::RowEnd => {
                    if let Some((first, cells)) = self.repair.cells.take()
                        && cells.len() >= 2
                    {
                        out.push(Line { number: first.number, text: cells_row(&cells), truncated: false });
                    }
                }
            }
        }
        if let Some((first, _)) = &self.repair.cells
            && line.number.saturating_sub(first.number) >= MAX_ROW_LINES
        {
            self.repair.cells = None;
        }
        self.note(
            "repaired-markup",
            "the block was wrapped in HTML markup (tags, entities or a table of cells): read as the text it shows"
                .into(),
            line.number,
        );
        out
    }

    /// Whether a line inside a table cell starts a block of its own: a Markdown code fence, or a
    /// result's banner.
    fn holds_block(&self, text: &str) -> bool {
        let t = text.trim_start();
        t.starts_with("```") || t.starts_with("~~~") || self.banner_hits(text).is_some()
    }

    // --- joined paragraph ----------------------------------------------------------------------

    /// A line that lost its line breaks and holds a banner that only matches on its own line (a
    /// banner that is a row, `^Total time: ... s$`): cut before each row the definition knows,
    /// when one of the pieces is then its banner. (Banners that match anywhere in a line are cut
    /// by `unflatten`.)
    ///
    /// Asked only of a line outside a block that holds such a banner's literal text
    /// ([`Scanner::may_be_paragraph`]): the pieces must include the banner.
    fn split_paragraph(&mut self, line: Line) -> Vec<Line> {
        if self.banner_hits(&line.text).is_some() {
            return vec![line];
        }
        let defs: Vec<&'d Definition> = self.paragraph_defs(&line.text).collect();
        for d in defs {
            let starts = d.row_starts(&line.text);
            if starts.len() < 2 {
                continue;
            }
            let mut cuts = vec![0];
            cuts.extend(starts.into_iter().filter(|s| *s > 0));
            let pieces: Vec<&str> = cuts
                .iter()
                .enumerate()
                .map(|(i, s)| line.text[*s..cuts.get(i + 1).copied().unwrap_or(line.text.len())].trim())
                .filter(|p| !p.is_empty())
                .collect();
            let banner = &d.block.as_ref().expect("text definition").banner;
            if !pieces.iter().any(|p| banner.is_match(p)) {
                continue;
            }
            self.note(
                "repaired-joined-lines",
                format!("the block's line breaks were lost (pasted on one line): cut before each row {} knows", d.id),
                line.number,
            );
            return pieces
                .into_iter()
                .map(|p| Line { number: line.number, text: p.to_string(), truncated: line.truncated })
                .collect();
        }
        vec![line]
    }

    /// The definitions whose banner is a row of its own (`^Total time: ... s$`) and whose banner
    /// text `text` holds: the ones a joined paragraph in `text` can be cut for.
    fn paragraph_defs<'t>(&'t self, text: &'t str) -> impl Iterator<Item = &'d Definition> + 't {
        self.text_defs.iter().zip(&self.literals.banner).filter_map(move |(d, needles)| {
            let b = d.block.as_ref()?;
            (b.banner_is_row && b.table.is_none() && needles.found_in(text)).then_some(*d)
        })
    }

    /// Whether a line may be a joined paragraph ([`Scanner::split_paragraph`]): outside a block,
    /// long enough to hold two rows, with the literal text of a banner that is a row.
    fn may_be_paragraph(&self, text: &str) -> bool {
        self.open.is_none()
            && text.len() >= 40
            && self.literals.banners.is_match(text)
            && self.paragraph_defs(text).next().is_some()
    }

    // --- hard wrap ---------------------------------------------------------------------------

    /// Inside a printed block, a line that may be the first part of a hard-wrapped row is held back
    /// until the next has come: the two are joined when the join is a row a candidate knows (or a
    /// section header) and neither part alone is (a row's label or value was wrapped onto the next
    /// line). What each line is to the block ([`Kind`]) is found once, when it comes; a line that
    /// cannot go on (a closing line, a banner, a complete row or header that is not as wide as a
    /// wrap cuts) is read at once.
    fn rejoin(&mut self, line: Line) {
        if !matches!(self.open, Some(Mode::Rows(..))) {
            if let Some((p, seen)) = self.repair.pending.take() {
                self.push_held(p, seen);
            }
            for line in self.join_cut_header(line) {
                let opened = self.open.is_none();
                self.push_line(line);
                if opened && self.open.is_some() {
                    self.repair.width = None;
                }
                self.attach_notes();
            }
            return;
        }
        // The banner's own rest (a rule of its fill character) right after it: the banner was
        // wrapped; without this it would be read as the block's closing line.
        if self.repair.pending.is_none() && self.banner_rest(&line) {
            let banner_len = self.open.as_ref().map_or(0, |m| m.open().banner.text.chars().count());
            self.learn_width(banner_len);
            self.note(
                "repaired-wrapped-lines",
                "the block was hard-wrapped at a fixed width: lines joined where the join is a known row".into(),
                line.number,
            );
            self.attach_notes();
            return;
        }
        let seen = self.kind(&line.text);
        let (line, seen) = self.unemphasize(line, seen);
        let Some((p, p_seen)) = self.repair.pending.take() else {
            self.hold_or_push(line, seen);
            return;
        };
        match self.join(&p, p_seen.kind, &line, seen.kind) {
            Some(joined) => {
                self.note(
                    "repaired-wrapped-lines",
                    "the block was hard-wrapped at a fixed width: lines joined where the join is a known row".into(),
                    p.number,
                );
                self.push_line(joined);
                self.attach_notes();
            }
            None => {
                self.push_held(p, p_seen);
                // (A held line is no banner: the block still open after it is the one `seen` was
                // found for.)
                if matches!(self.open, Some(Mode::Rows(..))) {
                    self.hold_or_push(line, seen);
                } else {
                    self.rejoin(line);
                }
            }
        }
    }

    /// A row retyped with Markdown emphasis (`**Benchmark duration (s):   118.85**`): read without
    /// the markers (`**`, `__`) when that is a row a candidate knows with a value, and the line as
    /// it is is not one.
    fn unemphasize(&mut self, line: Line, seen: Seen) -> (Line, Seen) {
        let b = line.text.as_bytes();
        if seen.kind != Kind::Other
            || memchr::memchr2(b'*', b'_', b).is_none()
            || !(line.text.contains("**") || line.text.contains("__"))
        {
            return (line, seen);
        }
        let text = line.text.replace("**", "").replace("__", "");
        let unmarked = self.kind(&text);
        if unmarked.kind != Kind::Row {
            return (line, seen);
        }
        self.note(
            "repaired-emphasis",
            "rows were retyped with Markdown emphasis (`**...**`): read without the markers".into(),
            line.number,
        );
        // (The row found is where it is in `text`, which the line now holds.)
        (Line { text, ..line }, unmarked)
    }

    fn learn_width(&mut self, width: usize) {
        self.repair.width = match self.repair.width {
            None => Some(width),
            Some(w) if w == width => Some(w),
            Some(_) => Some(0),
        };
    }

    /// Holds a line back (it may be continued on the next) or reads it now.
    fn hold_or_push(&mut self, line: Line, seen: Seen) {
        // (A closing line is read at once: a live log's block ends with it, not with the next line.)
        if line.text.len() <= MAX_WRAPPED
            && Self::may_go_on(&line.text, seen.kind)
            && !line.text.trim_ascii().is_empty()
        {
            let hit = self.banner_hits(&line.text);
            if hit.is_none() {
                // (A held line is no banner: it is read later without looking again.)
                self.repair.pending = Some((line, seen));
            } else {
                self.push_seen_hit(line, seen, hit);
            }
        } else {
            self.push_seen(line, seen);
        }
    }

    /// Reads a line whose row [`Scanner::kind`] found already: the block reads it without finding
    /// it again ([`KnownLabels::prime`](super::super::known::KnownLabels::prime)).
    fn push_seen(&mut self, line: Line, seen: Seen) {
        let hit = self.banner_hits(&line.text);
        self.push_seen_hit(line, seen, hit);
    }

    /// A held line (no banner, see [`Scanner::hold_or_push`]) is read.
    fn push_held(&mut self, line: Line, seen: Seen) {
        self.push_seen_hit(line, seen, None);
    }

    fn push_seen_hit(&mut self, line: Line, seen: Seen, hit: Option<Hit<'d>>) {
        if let Some((at, row)) = seen.row {
            // (`line` is moved, not copied, into `push_line`: its text stays where it is.)
            self.known.prime(&line.text[at], row);
        }
        if let Some((at, facts)) = seen.line {
            self.known.prime_line(&line.text[at], facts);
        }
        self.push_line_hit(line, hit);
        self.known.unprime();
        self.attach_notes();
    }

    /// Whether a line of the open block may be the first part of a hard-wrapped line: any line but
    /// its closing line and a complete row that ends in white space (a cut in the padding after a
    /// value leaves nothing to join; a row that ends in its value may go on, or be followed by
    /// what looks like its rest: see [`Scanner::join`]).
    fn may_go_on(text: &str, kind: Kind) -> bool {
        match kind {
            Kind::Closing => false,
            Kind::Row => text.ends_with(|c: char| !c.is_whitespace()),
            Kind::Label | Kind::Section | Kind::Other => true,
        }
    }

    /// The open block's banner line's width (without trailing white space).
    fn banner_width(&self) -> Option<usize> {
        match &self.open {
            Some(Mode::Rows(o, _)) => Some(o.banner.text.trim_end().chars().count()),
            _ => None,
        }
    }

    /// What a line is to the open printed block ([`Seen`]): asked once per line of the block, with
    /// the cheap tests first (a closing line's or section header's first byte); the row read from
    /// it is kept for the block to read the line with.
    fn kind(&mut self, text: &str) -> Seen {
        let other = Seen { kind: Kind::Other, row: None, line: None };
        let Some(Mode::Rows(o, _)) = &self.open else { return other };
        // (Without the block's prefix, as the block reads it.)
        let u = unprefix(text, &o.prefix);
        let t = u.trim_ascii();
        if t.is_empty() {
            return other;
        }
        // What is found here about `t` is kept for the block to read the line with
        // ([`LineFacts`]): where `t` lies in `text`, so that it is found again after a move.
        let facts = |closes: bool, section: Option<bool>| {
            let at = t.as_ptr() as usize - text.as_ptr() as usize;
            Some((at..at + t.len(), LineFacts { block: o.banner.number, closes, section }))
        };
        let blocks = || o.candidates.iter().filter_map(|d| d.block.as_ref());
        if blocks().any(|b| b.end_first.may_match(t) && b.end.as_ref().is_some_and(|e| e.is_match(t))) {
            return Seen { kind: Kind::Closing, row: None, line: facts(true, None) };
        }
        if blocks().any(|b| b.section_first.may_match(t) && b.section.as_ref().is_some_and(|s| s.is_match(t))) {
            return Seen { kind: Kind::Section, row: None, line: facts(false, Some(true)) };
        }
        let line = facts(false, Some(false));
        let (bits, all_have_bits) = o.candidate_bits;
        let row = self.known.see(u);
        let known = &self.known;
        let knows = |r: &BodyRow| {
            r.known & bits != 0 || !all_have_bits && o.candidates.iter().any(|d| known.knows_in(r.known, d, &r.label))
        };
        let kind = match &row {
            Some(r) if knows(r) => {
                if u[r.value.clone()].trim_ascii().is_empty() {
                    Kind::Label
                } else {
                    Kind::Row
                }
            }
            // A known label whose value is on the next line (read as a row with a value).
            _ if t.ends_with(':') && {
                let probe = format!("{t} x");
                split_row_key(&probe).is_some_and(|(key, _)| o.candidates.iter().any(|d| d.knows_label(&key)))
            } =>
            {
                Kind::Label
            }
            _ => Kind::Other,
        };
        let at = u.as_ptr() as usize - text.as_ptr() as usize;
        Seen { kind, row: Some((at..at + u.len(), row)), line }
    }

    /// Whether `line`, right after the banner, is the banner's wrapped rest: a run of the fill
    /// character the banner ends with.
    fn banner_rest(&self, line: &Line) -> bool {
        let Some(Mode::Rows(o, _)) = &self.open else { return false };
        if !o.body.is_empty() {
            return false;
        }
        let t = unprefix(&line.text, &o.prefix).trim();
        let Some(fill) = t.chars().next().filter(|c| !c.is_alphanumeric() && !c.is_whitespace()) else {
            return false;
        };
        t.chars().all(|c| c == fill) && o.banner.text.trim_end().ends_with(fill)
    }

    /// `next` without the open block's prefix, where it carries it: the rest of a wrapped line of a
    /// prefixed block (`# `, a container's name) carries the prefix again when the prefix was put
    /// on after the wrap, and none when the wrap came after it (a terminal showing a log).
    fn rest_of<'t>(&self, next: &'t str) -> &'t str {
        match &self.open {
            Some(Mode::Rows(o, _)) => unprefix(next, &o.prefix),
            _ => next,
        }
    }

    /// `p` and `next` as one line, when that is a known row with a value (or a section header)
    /// and neither alone is a known row with a value; `None` otherwise. A known row followed by
    /// the rest of its value (digits at the line's start) is joined only when the hard wrap's
    /// width is known and `p` is that wide; else the row is left unread, with a note.
    fn join(&mut self, p: &Line, first: Kind, next: &Line, second: Kind) -> Option<Line> {
        let rest = self.rest_of(&next.text);
        // A section header's (or closing line's) rest, a run of its fill character, at the width
        // the wrap was seen to cut at.
        let fill_rest = |t: &str| {
            let t = t.trim();
            t.chars().next().is_some_and(|c| !c.is_alphanumeric() && t.chars().all(|x| x == c))
        };
        if second.is_header_like() && fill_rest(rest) {
            let joined = format!("{}{}", p.text, rest);
            // A header that is one only with its rest (`---Time per Output Token (excl. 1st token)-`
            // and `-----`), or a header and the rest of its rule (a header followed by a plain rule
            // would only end its own section at once: joined, the header keeps its rows). A
            // closing line's rest is not joined (it ends the block).
            let header_only_joined = first == Kind::Other && self.kind(&joined).kind.is_header_like();
            let header_and_rule = matches!(first, Kind::Label | Kind::Section)
                && rest.trim().chars().next().is_some_and(|c| p.text.trim_end().ends_with(c))
                && self.kind(&joined).kind.is_header_like();
            if header_only_joined || header_and_rule {
                return Some(Line { number: p.number, text: joined, truncated: p.truncated });
            }
        }
        if second != Kind::Other {
            return None;
        }
        let rest_trimmed = rest.trim_end();
        // A JSON record (another program's log line) is never the rest of a row.
        if rest_trimmed.trim_start().starts_with(['{', '[', '"']) {
            return None;
        }
        if first == Kind::Row {
            // The row's value may go on: `...tokens:   40` then `96`, `Backend:  sglang` then `-oai`.
            // (One word at the line's start, right after a row that ends in its value.)
            // (A value's rest has a letter or digit: a code fence or a rule after the block's
            // last row is not one.)
            let fragment = rest_trimmed.contains(char::is_alphanumeric)
                && !rest_trimmed.contains(char::is_whitespace)
                && !rest_trimmed.contains(':')
                && p.text.ends_with(|c: char| !c.is_whitespace());
            if !fragment {
                return None;
            }
            let width = p.text.chars().count();
            // The width the wrap was seen to cut at, or the banner's own width (a block's first
            // rows are cut before any join has shown the width; a wrap narrower than the banner
            // cuts the banner's title and the block is not found at all).
            if self.repair.width == Some(width) || self.banner_width() == Some(width) {
                return Some(Line { number: p.number, text: format!("{}{}", p.text, rest), truncated: p.truncated });
            }
            // Not provable: the value is left unread.
            let label_end = p.text.rfind(':').map_or(0, |i| i + 1);
            self.note(
                "ambiguous-wrap",
                format!(
                    "{:?} may go on in the next line {:?} (a hard wrap?): its value is left unread",
                    p.text.trim(),
                    rest_trimmed
                ),
                p.number,
            );
            return Some(Line { number: p.number, text: p.text[..label_end].to_string(), truncated: p.truncated });
        }
        let candidates = [format!("{}{}", p.text, rest), format!("{} {}", p.text.trim_end(), rest.trim_start())];
        for (i, joined) in candidates.into_iter().enumerate() {
            let what = self.kind(&joined).kind;
            if what == Kind::Other {
                continue;
            }
            let single_value =
                split_row_key(joined.trim()).is_none_or(|(_, v)| !v.trim().contains(char::is_whitespace));
            let is_row = what == Kind::Row && single_value;
            let is_section_or_end =
                what.is_header_like() && first == Kind::Other && split_row_key(joined.trim()).is_none();
            if is_row || is_section_or_end {
                if i == 0 {
                    self.learn_width(p.text.chars().count());
                }
                return Some(Line { number: p.number, text: joined, truncated: p.truncated });
            }
        }
        None
    }
}

/// What a line is to the open printed block, found once ([`Scanner::kind`]): its [`Kind`], and the
/// row read from it (where in the line, without the block's prefix), which the block is given
/// when it reads the line.
struct Seen {
    kind: Kind,
    row: Option<(std::ops::Range<usize>, Option<BodyRow>)>,
    /// Where the trimmed text lies in the line, and what it is to the open block.
    line: Option<(std::ops::Range<usize>, LineFacts)>,
}

/// What a line is to the open printed block, for the hard-wrap repair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A row a candidate knows, with a value.
    Row,
    /// A row a candidate knows, without a value (it may be on the next line).
    Label,
    /// A section header.
    Section,
    /// The closing line.
    Closing,
    /// Anything else (a blank line, another program's line, part of a wrapped line).
    Other,
}

impl Kind {
    /// A known line without a value of its own: a label alone, a section header, a closing line.
    fn is_header_like(self) -> bool {
        matches!(self, Kind::Label | Kind::Section | Kind::Closing)
    }
}

/// `text` without the open block's prefix where the prefix is there (else as it is).
fn unprefix<'a>(text: &'a str, prefix: &Prefix) -> &'a str {
    prefix.strip(text, |_| true)
}
