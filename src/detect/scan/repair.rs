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

use super::super::prefix::Prefix;
use super::{Mode, Scanner};
use crate::definition::Definition;
use crate::input::Line;
use crate::lex::split_row_key;
use crate::report::Note;

/// The state of the repairs between lines.
#[derive(Default)]
pub(super) struct Repair {
    /// A line held back inside a printed block: the next line may be its hard-wrapped rest.
    pending: Option<Line>,
    /// The width a hard wrap was seen to cut lines at in the open block (`Some(0)`: widths that
    /// disagree), learned from a repair that proves it (a banner's or a row's rest on the next line).
    width: Option<usize>,
    /// Notes waiting for the block that the repaired lines go to.
    notes: Vec<Note>,
    /// An HTML table row (`<tr>`) whose cells are on several lines: the cells so far.
    cells: Option<(Line, Vec<String>)>,
}

impl Repair {
    /// Whether the next line must be read whatever it holds (a table row's cells go on).
    pub(super) fn wants(&self) -> bool {
        self.cells.is_some() || self.pending.is_some()
    }
}

/// Most lines an HTML table row's cells are looked for on.
const MAX_ROW_LINES: usize = 8;

/// Longest line held back as a possible first part of a wrapped row (a longer one is a log line).
const MAX_WRAPPED: usize = 256;

impl<'d> Scanner<'d> {
    /// A line as the scanner reads it: markup taken off, a joined paragraph cut into its rows, a
    /// hard-wrapped row joined to its rest. Each resulting line goes to `push_line`.
    pub(super) fn push_repaired(&mut self, line: Line) {
        let pieces = self.unmark(line);
        for piece in pieces {
            for piece in self.split_paragraph(piece) {
                self.rejoin(piece);
            }
        }
        // Repaired lines that opened no block: nothing to say them on.
        if self.open.is_none() {
            self.repair.notes.clear();
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
        if let Some(p) = self.repair.pending.take() {
            self.push_line(p);
            self.attach_notes();
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
        let b = line.text.as_bytes();
        if memchr::memchr2(b'<', b'&', b).is_none() && self.repair.cells.is_none() {
            return vec![line];
        }
        let Some(parts) = unmark_text(&line.text) else {
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
                        if let Some(last) = cells.last_mut() {
                            if !t.trim().is_empty() {
                                if !last.is_empty() {
                                    last.push(' ');
                                }
                                last.push_str(t.trim());
                            }
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
                    if let Some((first, cells)) = self.repair.cells.take() {
                        if cells.len() >= 2 {
                            out.push(Line { number: first.number, text: cells_row(&cells), truncated: false });
                        }
                    }
                }
            }
        }
        if let Some((first, _)) = &self.repair.cells {
            if line.number.saturating_sub(first.number) >= MAX_ROW_LINES {
                self.repair.cells = None;
            }
        }
        self.note(
            "repaired-markup",
            "the block was wrapped in HTML markup (tags, entities or a table of cells): read as the text it shows"
                .into(),
            line.number,
        );
        out
    }

    // --- joined paragraph ----------------------------------------------------------------------

    /// A line that lost its line breaks and holds a banner that only matches on its own line (a
    /// banner that is a row, `^Total time: ... s$`): cut before each row the definition knows,
    /// when one of the pieces is then its banner. (Banners that match anywhere in a line are cut
    /// by `unflatten`.)
    fn split_paragraph(&mut self, line: Line) -> Vec<Line> {
        if self.open.is_some() || line.text.len() < 40 || self.banner_hits(&line.text).is_some() {
            return vec![line];
        }
        let defs: Vec<&'d Definition> = self
            .text_defs
            .iter()
            .copied()
            .filter(|d| d.block.as_ref().is_some_and(|b| b.banner_is_row && b.table.is_none()))
            .collect();
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

    // --- hard wrap ---------------------------------------------------------------------------

    /// Inside a printed block, each line is held back until the next has come: the two are joined
    /// when the join is a row a candidate knows (or a section header) and neither part alone is
    /// (a row's label or value was wrapped onto the next line).
    fn rejoin(&mut self, line: Line) {
        if !matches!(self.open, Some(Mode::Rows(..))) {
            if let Some(p) = self.repair.pending.take() {
                self.push_line(p);
            }
            let opened = self.open.is_none();
            self.push_line(line);
            if opened && self.open.is_some() {
                self.repair.width = None;
            }
            self.attach_notes();
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
        let Some(p) = self.repair.pending.take() else {
            self.hold_or_push(line);
            return;
        };
        match self.join(&p, &line) {
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
                self.push_line(p);
                self.attach_notes();
                if matches!(self.open, Some(Mode::Rows(..))) {
                    self.hold_or_push(line);
                } else {
                    self.rejoin(line);
                }
            }
        }
    }

    fn learn_width(&mut self, width: usize) {
        self.repair.width = match self.repair.width {
            None => Some(width),
            Some(w) if w == width => Some(w),
            Some(_) => Some(0),
        };
    }

    /// Holds a line back (it may be continued on the next) or reads it now.
    fn hold_or_push(&mut self, line: Line) {
        // (A closing line is read at once: a live log's block ends with it, not with the next line.)
        // A block behind a learned prefix (`# `, a timestamp, a container's name) is not repaired:
        // the next line carries the prefix again, so a join would put it mid-row.
        let shaped = matches!(&self.open, Some(Mode::Rows(o, _)) if o.prefix.shape().is_some());
        if !shaped
            && line.text.len() <= MAX_WRAPPED
            && !line.text.trim().is_empty()
            && self.banner_hits(&line.text).is_none()
            && !self.closes(&line.text)
        {
            self.repair.pending = Some(line);
        } else {
            self.push_line(line);
            self.attach_notes();
        }
    }

    /// Whether a line is the open block's closing line.
    fn closes(&self, text: &str) -> bool {
        let Some((candidates, prefix)) = self.open_parts() else { return false };
        let t = unprefix(text, prefix).trim();
        candidates.iter().any(|d| d.block.as_ref().is_some_and(|b| b.end.as_ref().is_some_and(|e| e.is_match(t))))
    }

    /// The open block's candidates and prefix.
    fn open_parts(&self) -> Option<(&[&'d Definition], &Prefix)> {
        match &self.open {
            Some(Mode::Rows(o, _)) => Some((&o.candidates, &o.prefix)),
            _ => None,
        }
    }

    /// What a line is to the open block: a known row with a value (`Some(true)`), a known row
    /// without one or a section header or closing line (`Some(false)`), or neither (`None`).
    fn what(&mut self, text: &str) -> Option<bool> {
        let (candidates, prefix) = self.open_parts()?;
        let candidates: Vec<&'d Definition> = candidates.to_vec();
        let text = unprefix(text, prefix).trim();
        if text.is_empty() {
            return None;
        }
        if candidates.iter().any(|d| {
            d.block.as_ref().is_some_and(|b| {
                b.end.as_ref().is_some_and(|e| e.is_match(text)) || b.section.as_ref().is_some_and(|s| s.is_match(text))
            })
        }) {
            return Some(false);
        }
        if let Some(row) = self.known.see(text) {
            if candidates.iter().any(|d| self.known.knows_in(row.known, d, &row.label)) {
                return Some(!text[row.value].trim().is_empty());
            }
        }
        if let Some(i) = text.rfind(':') {
            // A known label whose value is on the next line.
            let probe = format!("{} x", &text[..=i]);
            let (key, _) = split_row_key(&probe)?;
            if text[i + 1..].trim().is_empty() && candidates.iter().any(|d| d.knows_label(&key)) {
                return Some(false);
            }
        }
        None
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

    /// `p` and `next` as one line, when that is a known row with a value (or a section header)
    /// and neither alone is a known row with a value; `None` otherwise. A known row followed by
    /// the rest of its value (digits at the line's start) is joined only when the hard wrap's
    /// width is known and `p` is that wide; else the row is left unread, with a note.
    fn join(&mut self, p: &Line, next: &Line) -> Option<Line> {
        let first = self.what(&p.text);
        let second = self.what(&next.text);
        // A section header's (or closing line's) rest, a run of its fill character, at the width
        // the wrap was seen to cut at.
        let fill_rest = |t: &str| {
            let t = t.trim();
            t.chars().next().is_some_and(|c| !c.is_alphanumeric() && t.chars().all(|x| x == c))
        };
        if second == Some(false) && fill_rest(&next.text) {
            let joined = format!("{}{}", p.text, next.text);
            // A header that is one only with its rest (`---Time per Output Token (excl. 1st token)-`
            // and `-----`), or a header and the rest of its rule (a header followed by a plain rule
            // would only end its own section at once: joined, the header keeps its rows). A
            // closing line's rest is not joined (it ends the block).
            let header_only_joined = first.is_none() && self.what(&joined) == Some(false);
            let header_and_rule = first == Some(false)
                && !self.closes(&p.text)
                && next.text.trim().chars().next().is_some_and(|c| p.text.trim_end().ends_with(c))
                && self.what(&joined) == Some(false);
            if header_only_joined || header_and_rule {
                return Some(Line { number: p.number, text: joined, truncated: p.truncated });
            }
        }
        if second.is_some() {
            return None;
        }
        let rest = next.text.trim_end();
        // A JSON record (another program's log line) is never the rest of a row.
        if rest.trim_start().starts_with(['{', '[', '"']) {
            return None;
        }
        let candidates =
            [format!("{}{}", p.text, next.text), format!("{} {}", p.text.trim_end(), next.text.trim_start())];
        if first == Some(true) {
            // The row's value may go on: `...tokens:   40` then `96`, `Backend:  sglang` then `-oai`.
            // (One word at the line's start, right after a row that ends in its value.)
            let fragment = !rest.is_empty()
                && !rest.contains(char::is_whitespace)
                && !rest.contains(':')
                && p.text.ends_with(|c: char| !c.is_whitespace());
            if !fragment {
                return None;
            }
            let width = p.text.chars().count();
            // The width the wrap was seen to cut at, or the banner's own width (a block's first
            // rows are cut before any join has shown the width; a wrap narrower than the banner
            // cuts the banner's title and the block is not found at all).
            let banner_width = match &self.open {
                Some(Mode::Rows(o, _)) => Some(o.banner.text.trim_end().chars().count()),
                _ => None,
            };
            if self.repair.width == Some(width) || banner_width == Some(width) {
                return Some(Line { number: p.number, text: candidates[0].clone(), truncated: p.truncated });
            }
            // Not provable: the value is left unread.
            let label_end = p.text.rfind(':').map_or(0, |i| i + 1);
            self.note(
                "ambiguous-wrap",
                format!(
                    "{:?} may go on in the next line {:?} (a hard wrap?): its value is left unread",
                    p.text.trim(),
                    rest
                ),
                p.number,
            );
            return Some(Line { number: p.number, text: p.text[..label_end].to_string(), truncated: p.truncated });
        }
        if first.is_some() && first != Some(false) {
            return None;
        }
        for (i, joined) in candidates.into_iter().enumerate() {
            let Some(what) = self.what(&joined) else { continue };
            let single_value =
                split_row_key(joined.trim()).is_none_or(|(_, v)| !v.trim().contains(char::is_whitespace));
            let is_row = what && single_value;
            let is_section_or_end = !what && first.is_none() && split_row_key(joined.trim()).is_none();
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

/// A row of table cells as a Markdown table row.
fn cells_row(cells: &[String]) -> String {
    format!("| {} |", cells.iter().map(|c| c.trim()).collect::<Vec<_>>().join(" | "))
}

/// What markup text is made of.
#[derive(Debug, PartialEq)]
enum Part {
    Text(String),
    RowStart,
    Cell,
    RowEnd,
}

/// Tags that break a line where they stand.
const BREAKING: &[&str] = &[
    "br",
    "p",
    "div",
    "pre",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "tbody",
    "thead",
    "details",
    "summary",
    "blockquote",
    "hr",
];
/// Tags that are taken off without breaking the line.
const INLINE: &[&str] =
    &["code", "span", "b", "strong", "em", "i", "tt", "samp", "kbd", "font", "small", "a", "u", "mark", "sup", "sub"];

/// The text a line of markup shows, split where its markup breaks lines (`None`: the line has no
/// known tag or entity, and is left as it is).
fn unmark_text(text: &str) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut changed = false;
    let mut rest = text;
    while let Some(i) = rest.find(['<', '&']) {
        cur.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with('&') {
            if let Some((ch, len)) = entity(rest) {
                cur.push(ch);
                rest = &rest[len..];
                changed = true;
            } else {
                cur.push('&');
                rest = &rest[1..];
            }
            continue;
        }
        let Some(close) = rest.find('>') else {
            cur.push('<');
            rest = &rest[1..];
            continue;
        };
        let inner = &rest[1..close];
        let closing = inner.starts_with('/');
        let name: String = inner
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        let after_name = &inner.trim_start_matches('/')[name.len()..];
        let tag_like = after_name.is_empty() || after_name.starts_with([' ', '/']) || after_name.starts_with('\t');
        let known = tag_like
            && (BREAKING.contains(&name.as_str())
                || INLINE.contains(&name.as_str())
                || matches!(name.as_str(), "tr" | "td" | "th"));
        if !known {
            cur.push('<');
            rest = &rest[1..];
            continue;
        }
        changed = true;
        rest = &rest[close + 1..];
        let flush = |cur: &mut String, parts: &mut Vec<Part>| {
            parts.push(Part::Text(std::mem::take(cur)));
        };
        match (name.as_str(), closing) {
            ("tr", false) => {
                flush(&mut cur, &mut parts);
                parts.push(Part::RowStart);
            }
            ("tr", true) => {
                flush(&mut cur, &mut parts);
                parts.push(Part::RowEnd);
            }
            ("td" | "th", false) => {
                flush(&mut cur, &mut parts);
                parts.push(Part::Cell);
            }
            ("td" | "th", true) => flush(&mut cur, &mut parts),
            (n, _) if BREAKING.contains(&n) => flush(&mut cur, &mut parts),
            _ => {}
        }
    }
    if !changed {
        return None;
    }
    cur.push_str(rest);
    parts.push(Part::Text(cur));
    // Empty pieces a line break tag left (`<pre><code>` at a line's start) are dropped; a line
    // that held only markup gives none.
    parts.retain(|p| !matches!(p, Part::Text(t) if t.trim().is_empty()));
    Some(
        parts
            .into_iter()
            .map(|p| match p {
                // `&nbsp;` is a space.
                Part::Text(t) => Part::Text(t.replace('\u{a0}', " ")),
                p => p,
            })
            .collect(),
    )
}

/// A character entity at the start of `s`: the character, and the entity's length.
fn entity(s: &str) -> Option<(char, usize)> {
    let end = s[..s.len().min(12)].find(';')?;
    let name = &s[1..end];
    let ch = match name {
        "nbsp" => '\u{a0}',
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        "#39" => '\'',
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((ch, end + 1))
}

// --- templates ----------------------------------------------------------------------------------

/// Whether a printed value is a template's placeholder, not a figure: `xx.xx`, `X`, `...`, `…`,
/// `[result]`, `<value>`, `{value}`, `TBD`, `TODO`, `N/A`, `?` (a unit after it is allowed).
pub(super) fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    let v = v.split_whitespace().next().unwrap_or("");
    if v.is_empty() {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let xs = !lower.is_empty() && lower.chars().all(|c| matches!(c, 'x' | '.' | ',')) && lower.contains('x');
    let dots = v.chars().all(|c| c == '.') && v.len() >= 2 || v == "…";
    let bracketed = |o: char, c: char| v.len() >= 3 && v.starts_with(o) && v.ends_with(c);
    xs || dots
        || bracketed('[', ']')
        || bracketed('<', '>')
        || bracketed('{', '}')
        || matches!(lower.as_str(), "tbd" | "todo" | "n/a" | "na" | "tba" | "?" | "??" | "???")
}

/// A block whose known rows all hold placeholders is a template (a note `template`); a block
/// with some figures and some placeholders is a partly filled template (a note
/// `template-partial` naming the rows whose figure is absent).
pub(super) fn template_notes(block: &mut super::Block) {
    let mut placeholders = Vec::new();
    let mut figures = 0;
    for (line, row) in block.body.iter().zip(&block.rows) {
        let Some(row) = row else { continue };
        if row.known == 0 && !block.definition.knows_label(&row.label) {
            continue;
        }
        let value = &line.text[row.value.clone()];
        if is_placeholder(value) {
            placeholders.push((line.number, row.label.trim_end_matches(':').to_string(), value.trim().to_string()));
        } else if !value.trim().is_empty() {
            figures += 1;
        }
    }
    let Some((first, _, example)) = placeholders.first().cloned() else { return };
    if figures == 0 && placeholders.len() >= 2 {
        block.notes.push(Note {
            code: "template".into(),
            message: format!(
                "a template, not a run: every row holds a placeholder ({example:?} and {} more), no figure is read",
                placeholders.len() - 1
            ),
            line: Some(first),
        });
    } else {
        let rows: Vec<String> = placeholders.iter().map(|(_, l, v)| format!("{l} ({v:?})")).collect();
        block.notes.push(Note {
            code: "template-partial".into(),
            message: format!("placeholders, not figures, in: {}; those figures are absent", rows.join(", ")),
            line: Some(first),
        });
    }
}

/// `text` without the open block's prefix where the prefix is there (else as it is).
fn unprefix<'a>(text: &'a str, prefix: &Prefix) -> &'a str {
    prefix.strip(text, |_| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_taken_off() {
        let t = |s: &str| match unmark_text(s) {
            None => vec![s.to_string()],
            Some(parts) => parts
                .into_iter()
                .map(|p| match p {
                    Part::Text(t) => t,
                    other => format!("{other:?}"),
                })
                .collect(),
        };
        assert_eq!(t("<pre><code>=== Serving ==="), vec!["=== Serving ==="]);
        assert_eq!(t("Mean TTFT (ms): &nbsp; 12.3<br>"), vec!["Mean TTFT (ms):   12.3"]);
        assert_eq!(t("a &lt; b"), vec!["a < b"]);
        // Not markup: a placeholder, a comparison.
        assert_eq!(t("Mean TTFT (ms): <value>"), vec!["Mean TTFT (ms): <value>"]);
        assert_eq!(t("if a < b && c > d"), vec!["if a < b && c > d"]);
        assert_eq!(
            t("<tr><td>Mean TTFT (ms)</td><td>12.3</td></tr>"),
            vec!["RowStart", "Cell", "Mean TTFT (ms)", "Cell", "12.3", "RowEnd"]
        );
        assert_eq!(entity("&#x41;"), Some(('A', 6)));
        assert_eq!(entity("&#65;"), Some(('A', 5)));
        assert_eq!(entity("&bogus;"), None);
    }

    #[test]
    fn placeholders() {
        for p in ["xx.xx", "XX", "x.xx", "...", "…", "[result]", "<value>", "{ttft}", "TBD", "N/A", "xx.xx ms", "?"] {
            assert!(is_placeholder(p), "{p}");
        }
        for f in ["12.5", "0", "inf", "nan", "1,234.5", "-", "", "x1", "12 ms"] {
            assert!(!is_placeholder(f), "{f}");
        }
    }
}
