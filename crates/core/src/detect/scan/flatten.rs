//! Lines that lost their line breaks (escaped `\n` in a JSON log line, a block pasted on one
//! line), cut back into lines at the labels the candidate definitions know, and closing rules
//! with text glued after them.

use super::{Scanner, banner_end};
use crate::definition::Definition;
use crate::detect::line::has_escaped_newline;
use crate::input::Line;

impl Scanner<'_> {
    /// Pasted text sometimes lost its line breaks: escaped (`\n` in a JSON log line) or replaced
    /// by spaces (a block on one line). Such a line is cut back into lines, at the labels the
    /// candidate definitions know.
    pub(super) fn unflatten(&self, line: Line) -> Vec<Line> {
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
                (Some(open), None) => open.open().candidates.clone(),
                (None, None) => {
                    out.push(piece);
                    continue;
                }
            };
            // A banner with text after it, or a long line with more than one known label.
            let banner_end = self
                .banner_hits(&piece.text)
                .and_then(|(c, at)| banner_end(&c[0].block.as_ref()?.banner, &piece.text, at));
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
            if let Some(end) = banner_end
                && !starts.contains(&end)
            {
                starts.push(end);
                starts.sort_unstable();
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
    /// its title (one at least), is not one.
    pub(super) fn split_closing_rule<'t>(&self, text: &'t str) -> Option<(&'t str, &'t str)> {
        // (A row, the usual line, starts with a letter: answered from its first byte.)
        if text.trim_ascii_start().as_bytes().first().is_some_and(u8::is_ascii_alphanumeric) {
            return None;
        }
        let t = text.trim();
        let c = t.chars().next().filter(|c| !c.is_alphanumeric())?;
        let after = t.trim_start_matches(c);
        let (rule, rest) = (&t[..t.len() - after.len()], after.trim());
        // (A banner cut by a hard wrap keeps fewer of its closing characters: one is enough.)
        let banner_like = rest.ends_with(c);
        if rule.chars().count() < 10 || rest.is_empty() || banner_like {
            return None;
        }
        let closes = self.text_defs.iter().filter_map(|d| d.block.as_ref()?.end.as_ref()).any(|end| end.is_match(rule));
        closes.then_some((rule, rest))
    }
}
