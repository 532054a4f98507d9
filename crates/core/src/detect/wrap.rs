//! Ruled console tables hard-wrapped at a fixed width (a pod log or a terminal of 80 columns):
//! every line wider than the width `W` was cut into its first `W` characters and the rest on the
//! next line(s). Each cut line is joined to its rest before the table is cut into cells.
//!
//! A join is made only where the cut is proved, so that no value changes:
//!
//! - the width: at least two lines of the block open with a border or a corner and do not close
//!   with one (every line of a ruled table does, rule or row), or close with one but the next line
//!   is no table line and closes as one does (a cut right after a border), and all of them are `W`
//!   characters long, counted with the block's prefix (the terminal wrapped the log line) or without it (the
//!   prefix was put on each piece after the wrap). Characters are counted, not bytes.
//! - the line: a line `W` characters long that opens with a border, joined to the next lines until
//!   a piece shorter than `W`; the next line is its rest when the line does not close with a border
//!   yet, or (a cut right after a border) when the next line does not open with one. The join must
//!   close with a border, and be as wide as the table line before or after it (the lines of a
//!   ruled table are all as wide as one another).
//! - a table's title `W` characters long, whose rest (no table line, no title of its own) stands
//!   right above a table line (blank lines between: the spaces that centred the title).
//!
//! A piece of a line without the block's prefix (the wrap came after the prefix) is kept by the
//! scanner only as a possible rest ([`Kept::stray`]): it is dropped here unless it is one.

use crate::input::Line;
use crate::report::Note;

use super::table::{RIGHT_EDGE, opens_ruled};

/// What the scanner knew of a line of a table block when it kept it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Kept {
    /// Its width in characters as printed, with the block's prefix.
    pub whole: usize,
    /// Its width without the prefix.
    pub own: usize,
    /// A line without the block's prefix: kept only as the possible rest of a cut line.
    pub stray: bool,
}

impl Kept {
    /// A line of `whole` characters, `own` without its prefix.
    pub fn new(whole: &str, own: &str, stray: bool) -> Kept {
        Kept { whole: whole.chars().count(), own: own.chars().count(), stray }
    }
}

/// Which width a wrap cut lines at: the whole line's, or the line's without its prefix.
#[derive(Clone, Copy)]
enum Measure {
    Whole,
    Own,
}

/// Whether a line of a ruled table was cut before its end: it opens with a border or a corner and
/// does not close with one.
pub(super) fn is_cut(text: &str) -> bool {
    let t = text.trim();
    opens_ruled(t) && !t.ends_with(RIGHT_EDGE)
}

/// Whether the line a cut line goes on with leaves it still open (the rest was cut too): it does
/// not close with a border.
pub(super) fn goes_on(rest: &str) -> bool {
    !rest.trim_end().ends_with(RIGHT_EDGE)
}

/// The lines of a table block with every proved cut line joined to its rest, strays that are no
/// rest dropped, and a note when lines were joined. `ruled`: the block's tables close their lines
/// with a border (else nothing is joined); `is_title`: whether a trimmed line is a table's title.
pub(super) fn unwrap(
    lines: Vec<Line>,
    kept: &[Kept],
    ruled: bool,
    is_title: impl Fn(&str) -> bool,
) -> (Vec<Line>, Option<Note>) {
    let width = if ruled && kept.len() == lines.len() { fixed_width(&lines, kept) } else { None };
    let Some((measure, w)) = width else {
        let lines = lines.into_iter().zip(kept.iter().chain(std::iter::repeat(&NOT_STRAY))).filter(|(_, k)| !k.stray);
        return (lines.map(|(l, _)| l).collect(), None);
    };
    let width_of = |i: usize| match measure {
        Measure::Whole => kept[i].whole,
        Measure::Own => kept[i].own,
    };
    // Each line's join: the lines it takes (`i..end`).
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if kept[i].stray {
            i += 1;
            continue;
        }
        let end = rest_of(&lines, i, w, &width_of, &is_title).unwrap_or(i + 1);
        spans.push((i, end));
        i = end;
    }
    let text_of = |(from, to): (usize, usize)| joined(&lines, from, to);
    // Each span's width, when it is a table line.
    let table_width = |s: (usize, usize)| {
        let text = text_of(s);
        let t = text.trim();
        opens_ruled(t).then(|| t.chars().count())
    };
    let mut widths: Vec<Option<usize>> = spans.iter().map(|&s| table_width(s)).collect();
    // Whether a table line of width `x` at `k` is as wide as the table line before or after it
    // (the lines of a ruled table are as wide as one another).
    let as_wide_as_a_neighbour = |widths: &[Option<usize>], k: usize, x: usize| {
        let before = k.checked_sub(1).and_then(|b| widths[b]);
        let after = widths.get(k + 1).copied().flatten();
        before == Some(x) || after == Some(x)
    };
    // A line cut right after a border whose rest opens with one too (`||`, a grouped header's
    // span): joined to the lines after it when the join is as wide as the table line above it and
    // the line alone is not.
    let mut k = 1;
    while k < spans.len() {
        let above = widths[k - 1];
        let mut m = k;
        let mut found = None;
        while above.is_some()
            && widths[k] != above
            && widths[m].is_some()
            && width_of(spans[m].1 - 1) == w
            && spans.get(m + 1).is_some_and(|next| next.0 == spans[m].1)
            && widths[m + 1].is_some()
        {
            m += 1;
            let merged = (spans[k].0, spans[m].1);
            if text_of(merged).trim_end().ends_with(RIGHT_EDGE) && table_width(merged) == above {
                found = Some(m);
                break;
            }
        }
        if let Some(m) = found {
            spans[k] = (spans[k].0, spans[m].1);
            widths[k] = above;
            spans.drain(k + 1..=m);
            widths.drain(k + 1..=m);
        }
        k += 1;
    }
    let mut out = Vec::with_capacity(spans.len());
    let mut joined = 0;
    for (k, &(from, to)) in spans.iter().enumerate() {
        if to == from + 1 {
            out.push(lines[from].clone());
            continue;
        }
        // A joined table line as wide as neither table line next to it is no proved join: left
        // as it was.
        if widths[k].is_some_and(|x| !as_wide_as_a_neighbour(&widths, k, x)) {
            out.extend(lines[from..to].iter().zip(&kept[from..to]).filter(|(_, k)| !k.stray).map(|(l, _)| l.clone()));
            continue;
        }
        joined += to - from - 1;
        let text = text_of((from, to));
        out.push(Line { number: lines[from].number, text, truncated: lines[from..to].iter().any(|l| l.truncated) });
    }
    let note = (joined > 0).then(|| Note {
        code: "repaired-wrapped-table".into(),
        message: format!(
            "the table's lines were hard-wrapped at {w} characters: {joined} cut line(s) joined to the line they \
             were cut from"
        ),
        line: out.first().map(|l| l.number),
    });
    (out, note)
}

const NOT_STRAY: Kept = Kept { whole: 0, own: 0, stray: false };

/// The width every cut line of the block has, and how it is counted: `None` when fewer than two
/// lines were cut, or their widths disagree (lines merely ragged).
fn fixed_width(lines: &[Line], kept: &[Kept]) -> Option<(Measure, usize)> {
    // A line cut before its closing border, or (cut right after a border) a table line whose next
    // line is no table line but closes as one does.
    let cut_here = |i: usize| {
        let next = lines[i + 1].text.trim();
        !kept[i].stray
            && !next.is_empty()
            && (is_cut(&lines[i].text)
                || opens_ruled(lines[i].text.trim()) && !opens_ruled(next) && next.ends_with(RIGHT_EDGE))
    };
    let cut: Vec<usize> = (0..lines.len().saturating_sub(1)).filter(|&i| cut_here(i)).collect();
    if cut.len() < 2 {
        return None;
    }
    let agree = |f: fn(&Kept) -> usize| {
        let w = f(&kept[cut[0]]);
        cut.iter().all(|&i| f(&kept[i]) == w).then_some(w)
    };
    agree(|k| k.whole).map(|w| (Measure::Whole, w)).or_else(|| agree(|k| k.own).map(|w| (Measure::Own, w)))
}

/// Where the join of line `i` (a cut line `w` characters wide) with its rest ends, when it has one.
fn rest_of(
    lines: &[Line],
    i: usize,
    w: usize,
    width_of: &impl Fn(usize) -> usize,
    is_title: &impl Fn(&str) -> bool,
) -> Option<usize> {
    if width_of(i) != w {
        return None;
    }
    let first = lines[i].text.trim();
    if first.is_empty() {
        return None;
    }
    let blank = |j: usize| lines.get(j).is_none_or(|l| l.text.trim().is_empty());
    let opens = |j: usize| lines.get(j).is_some_and(|l| opens_ruled(l.text.trim_start()));
    if !opens_ruled(first) {
        // A title: its rest is no table line and no title, and a table line comes right after it.
        // (A title's rest may hold a bar, `f | LLM Metrics`: a rule or a whole row it is not.)
        let rule_or_row = |j: usize| {
            let t = lines[j].text.trim();
            t.starts_with(|c| ('\u{2500}'..='\u{257F}').contains(&c)) || opens_ruled(t) && t.ends_with(RIGHT_EDGE)
        };
        let mut j = i + 1;
        while !blank(j) && !rule_or_row(j) && !is_title(lines[j].text.trim()) {
            j += 1;
            if width_of(j - 1) != w {
                break;
            }
        }
        // (The spaces that centred it may be a piece of their own.)
        let table = (j..lines.len()).find(|&k| !blank(k)).is_some_and(opens);
        return (j > i + 1 && table && is_title(joined(lines, i, j).trim())).then_some(j);
    }
    let mut j = i + 1;
    let mut text = lines[i].text.clone();
    while !blank(j) && (is_cut(&text) || !opens(j)) {
        text.push_str(&lines[j].text);
        j += 1;
        if width_of(j - 1) != w {
            break;
        }
    }
    (j > i + 1 && text.trim_end().ends_with(RIGHT_EDGE)).then_some(j)
}

/// The text of lines `from..to` joined (a cut line and its rest).
fn joined(lines: &[Line], from: usize, to: usize) -> String {
    lines[from..to].iter().map(|l| l.text.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> (Vec<Line>, Vec<Kept>) {
        let lines: Vec<Line> = text
            .split('\n')
            .enumerate()
            .map(|(i, t)| Line { number: i + 1, text: t.to_string(), truncated: false })
            .collect();
        let kept = lines.iter().map(|l| Kept::new(&l.text, &l.text, false)).collect();
        (lines, kept)
    }

    fn texts(text: &str) -> Vec<String> {
        let (l, k) = lines(text);
        unwrap(l, &k, true, |t| t.starts_with("Title")).0.into_iter().map(|l| l.text).collect()
    }

    /// Every line wider than `w` cut every `w` characters.
    fn wrapped(text: &str, w: usize) -> String {
        let mut out = Vec::new();
        for l in text.split('\n') {
            let c: Vec<char> = l.chars().collect();
            if c.is_empty() {
                out.push(String::new());
            }
            out.extend(c.chunks(w).map(|p| p.iter().collect::<String>()));
        }
        out.join("\n")
    }

    const TABLE: &str = "\
Title of the table, long enough
┏━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┓
┃     Metric ┃      avg ┃      p99 ┃
┡━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━┩
│ TTFT (ms)  │ 1,024.50 │     2.00 │
│ ITL (ms)   │    12.81 │    12.84 │
└────────────┴──────────┴──────────┘";

    #[test]
    fn every_width_joins_back_to_the_table() {
        let want: Vec<String> = TABLE.lines().map(String::from).collect();
        for w in 8..36 {
            assert_eq!(texts(&wrapped(TABLE, w)), want, "wrapped at {w}");
        }
    }

    #[test]
    fn a_cut_right_after_a_border_is_joined() {
        // At 25 the header's and the rows' first pieces end with their third bar.
        let w = 25;
        let text = wrapped(TABLE, w);
        assert!(text.lines().any(|l| l.chars().count() == w && l.ends_with('┃')), "{text}");
        assert_eq!(texts(&text), TABLE.lines().collect::<Vec<_>>());
    }

    #[test]
    fn ragged_lines_are_not_joined() {
        // Lines missing their right border at widths that differ: no fixed width, nothing joined.
        let text = "\
┏━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┓
┃     Metric ┃      avg ┃      p99 ┃
│ TTFT (ms)  │ 1,024.50 │     2.00
│ ITL (ms)   │    12.81 │
│ E2E (ms)   │    12.81 │    12.84 │
└────────────┴──────────┴──────────┘";
        assert_eq!(texts(text), text.lines().collect::<Vec<_>>());
    }

    #[test]
    fn a_stray_that_is_no_rest_is_dropped() {
        let (mut l, mut k) = lines(&wrapped(TABLE, 20));
        l.push(Line { number: 99, text: "another process".into(), truncated: false });
        k.push(Kept::new("another process", "another process", true));
        let got: Vec<String> = unwrap(l, &k, true, |t| t.starts_with("Title")).0.into_iter().map(|l| l.text).collect();
        assert_eq!(got, TABLE.lines().collect::<Vec<_>>());
    }
}
