//! What a block without a banner of its own must show to be a run (a Markdown table), and how a
//! banner is named in a diagnostic.

use super::super::BlockEnd;
use super::super::mode::Open;
use super::{MAX_PASSED_OVER, Scanner};

/// Rows of one definition a Markdown table (no banner, no closing line) must hold to be read as
/// its run, at least, and at least half of the table's rows: a row or two of another tool's table
/// (EvalScope's `Benchmarking summary` grid holds `Output token throughput (tok/s)`) is no run.
const MIN_TABLE_KNOWN: usize = 3;

impl<'d> Scanner<'d> {
    /// A Markdown table ended: a run only on the evidence of its own rows (it has no banner).
    pub(super) fn finish_markdown(&mut self, open: Open<'d>, end: BlockEnd) {
        match self.table_evidence(&open) {
            (known, rows) if known >= MIN_TABLE_KNOWN && 2 * known >= rows => self.finish_rows(open, Vec::new(), end),
            (known, rows) => {
                self.release();
                if self.passed_over.len() < MAX_PASSED_OVER {
                    self.passed_over.push(format!(
                        "line {}: a table of {rows} rows of which {known} are rows a definition knows \
                         (a table without a banner is read when at least {MIN_TABLE_KNOWN} of its rows, \
                         and at least half, are one definition's: another tool's table is not a run)",
                        open.banner.number
                    ));
                }
            }
        }
    }

    /// The evidence that a Markdown table (which has no banner) is a block of one of its candidate
    /// definitions: the most of its rows one candidate knows, and its rows.
    fn table_evidence(&mut self, open: &Open<'d>) -> (usize, usize) {
        let seen: Vec<_> = open.body.iter().map(|l| self.known.see(&l.text)).collect();
        let known = open
            .candidates
            .iter()
            .map(|d| seen.iter().flatten().filter(|r| self.known.knows_in(r.known, d, &r.label)).count())
            .max()
            .unwrap_or(0);
        // The table's rows before the first one a definition knows count too.
        (known, open.body.len() + self.table_rows_before)
    }
}

/// A banner line as a diagnostic names it: its text, trimmed, at most 80 characters.
pub(super) fn banner_words(text: &str) -> String {
    let t = text.trim();
    match t.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t.to_string(),
    }
}
