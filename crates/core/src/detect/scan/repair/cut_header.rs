//! A ruled table's column header hard-wrapped by a terminal: the header that opens a table block
//! (`[block] header`, when the block's title was cut too) is read whole again.
//!
//! A line that opens with a border (after a prefix, if any) and opens no block may have been cut
//! before its end: it is held, and joined to the next line (without the line's prefix, where the
//! rest carries it) when the join is a line that opens a block and the line alone is not, as a
//! hard-wrapped row is joined inside a printed block. A line that ends with a border goes on only
//! with a rest that does not open with one. The rest of the table is joined once the
//! block is read ([`crate::detect::wrap`]).

use super::super::super::mode::Hit;
use super::super::{Mode, Scanner};
use crate::detect::prefix::Prefix;
use crate::detect::table::{RIGHT_EDGE, opens_ruled};
use crate::input::Line;

/// Most pieces a cut header is joined from.
const MAX_PIECES: usize = 4;

/// Narrowest piece taken for a cut header (a terminal is wider).
const MIN_WIDTH: usize = 40;

/// Longest text before the table on a cut header's line taken as a prefix.
const MAX_PREFIX: usize = 256;

/// Where the table starts on a line that opens with a border (after a prefix), when it does: the
/// first `|` or box-drawing character (U+2500 to U+257F, `E2 94 xx` or `E2 95 xx` in UTF-8, which
/// holds the other borders `│┃║`), within [`MAX_PREFIX`] bytes. A byte search: this is asked of
/// every line of 40 characters or more that the scanner is given.
fn table_at(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let end = b.len().min(MAX_PREFIX + 1);
    let mut i = 0;
    while let Some(j) = memchr::memchr2(b'|', 0xE2, &b[i..end]) {
        let k = i + j;
        if b[k] == b'|' || matches!(b.get(k + 1), Some(0x94 | 0x95)) {
            return Some(k);
        }
        i = k + 1;
    }
    None
}

/// The pieces of a cut line joined: each rest without the first piece's prefix, where it carries
/// it (the prefix was put on after the wrap).
fn joined(pieces: &[Line]) -> Line {
    let first = &pieces[0];
    let at = table_at(&first.text).unwrap_or_default();
    let learned = Prefix::learn(&first.text[..at]);
    let mut text = first.text.clone();
    for p in &pieces[1..] {
        text.push_str(rest_of(&learned, &p.text));
    }
    Line { number: first.number, text, truncated: pieces.iter().any(|p| p.truncated) }
}

fn rest_of<'t>(prefix: &Prefix, text: &'t str) -> &'t str {
    match prefix.shape() {
        Some(shape) => shape.strip(text).unwrap_or(text),
        None => prefix.unquote(text),
    }
}

impl<'d> Scanner<'d> {
    /// A line outside a block or in a table block (the header of another format's table, which
    /// ends it: a cut title's rest may have opened it), with the pieces of a cut line held before
    /// it: the lines to read now (none while a cut line is held).
    pub(in crate::detect::scan) fn join_cut_header(&mut self, line: Line) -> Vec<Line> {
        let Some((mut pieces, header)) = self.repair.cut.take() else {
            if matches!(self.open, None | Some(Mode::Grid(..)))
                && line.text.len() >= MIN_WIDTH
                && line.text.chars().count() >= MIN_WIDTH
                && table_at(&line.text).is_some()
                && self.banner_hits(&line.text).is_none()
            {
                self.repair.cut = Some((vec![line], false));
                return Vec::new();
            }
            return vec![line];
        };
        let so_far = joined(&pieces);
        let at = table_at(&pieces[0].text).unwrap_or_default();
        let rest = rest_of(&Prefix::learn(&pieces[0].text[..at]), &line.text);
        // (A line that ends with a border goes on only with a rest that does not open with one.)
        let goes_on =
            !rest.trim().is_empty() && (!so_far.text.ends_with(RIGHT_EDGE) || !opens_ruled(rest.trim_start()));
        let text = format!("{}{rest}", so_far.text);
        // (The header starts in the held line: a title after a table line is no header's rest.)
        let starts_in_line = |(_, at): Hit<'d>| at < pieces[0].text.len();
        let header = header || goes_on && self.banner_hits(&text).is_some_and(starts_in_line);
        let as_wide = line.text.chars().count() == pieces[pieces.len() - 1].text.chars().count();
        if goes_on && as_wide && pieces.len() + 1 < MAX_PIECES && !text.ends_with(RIGHT_EDGE) {
            // Cut again: its next piece may follow.
            pieces.push(line);
            self.repair.cut = Some((pieces, header));
            return Vec::new();
        }
        if header && goes_on {
            pieces.push(line);
            self.note_cut_header(pieces[0].number);
            return vec![joined(&pieces)];
        }
        // The header (without this line, which is no rest of it), or the held lines as they were;
        // then this line as it comes.
        let mut out = if header {
            self.note_cut_header(pieces[0].number);
            vec![so_far]
        } else {
            pieces
        };
        out.extend(self.join_cut_header(line));
        out
    }

    /// The input ended (or a line came that none of this can be): a held header is read joined,
    /// other held lines as they were.
    pub(in crate::detect::scan) fn flush_cut_header(&mut self) -> Vec<Line> {
        match self.repair.cut.take() {
            Some((pieces, true)) => {
                self.note_cut_header(pieces[0].number);
                vec![joined(&pieces)]
            }
            Some((pieces, false)) => pieces,
            None => Vec::new(),
        }
    }

    fn note_cut_header(&mut self, line: usize) {
        self.note(
            "repaired-wrapped-table",
            "the table's lines were hard-wrapped at a fixed width: its header joined to its rest".into(),
            line,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition `table_at` implements by bytes: the first character a ruled line opens with.
    fn reference(text: &str) -> Option<usize> {
        let at = text.find(|c: char| opens_ruled(c.encode_utf8(&mut [0; 4])))?;
        (at <= MAX_PREFIX).then_some(at)
    }

    proptest! {
        #[test]
        fn table_at_is_the_first_border(
            text in proptest::collection::vec(
                prop_oneof![Just('|'), Just('│'), Just('┃'), Just('║'), Just('━'), Just('╿'), Just('┼'),
                    Just('+'), Just('-'), Just('é'), Just('→'), Just('€'), Just('ⓐ'), Just(' '), Just('a')],
                0..300,
            ).prop_map(|v| v.into_iter().collect::<String>())
        ) {
            prop_assert_eq!(table_at(&text), reference(&text), "{:?}", text);
        }
    }
}
