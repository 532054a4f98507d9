//! `[[footer]]` lines: `label: value` lines printed after a block that belong to the run it closes
//! (AIPerf prints `Benchmark Duration: 26.82 sec` under its tables, past a telemetry box and its
//! command line). A finished block of a definition with footers is held for the next
//! [`MAX_FOOTER_DISTANCE`] lines, or until another block's banner, and each footer line found there
//! is added to it. The lines are read as usual too: holding the block only looks at them.

use super::{ContextLine, Scanner};
use crate::definition::MAX_FOOTER_DISTANCE;
use crate::input::Line;
use crate::lex::{label_key, split_row};

impl Scanner<'_> {
    /// Lines to look at for the held block's footers: [`MAX_FOOTER_DISTANCE`] when its definition
    /// has any, and the block is the only run of its lines (a footer under a table of several runs
    /// would be none of them in particular).
    pub(super) fn footer_lines(&self, block: &super::Block) -> usize {
        if block.definition.footer.is_empty() || self.several_runs { 0 } else { MAX_FOOTER_DISTANCE }
    }

    /// A line while a block is held for its footers: a footer line is added to it; another
    /// block's banner, or the last line looked at, releases it. Returns whether the block was
    /// held for footers (the line is read as usual either way).
    pub(super) fn feed_footer(&mut self, line: &Line) -> bool {
        let Some(h) = self.held.as_mut().filter(|h| h.footer > 0) else { return false };
        h.footer -= 1;
        let def = h.block.definition;
        let text = match h.prefix.shape().and_then(|s| s.strip(&line.text)) {
            Some(rest) => rest,
            None => h.prefix.unquote(&line.text),
        };
        if let Some(row) = split_row(text.trim()) {
            let label = label_key(row.label);
            let known = def.footer_spec(&label).is_some();
            if known && !h.block.footer.iter().any(|f| *f.label == *label) {
                let value = row.value.to_string();
                h.block.footer.push(ContextLine { line: line.number, label: label.into_owned(), value });
            }
        }
        let all = h.block.footer.len() == def.footer.len();
        if all || h.footer == 0 || self.banner_hits(&line.text).is_some() {
            self.release();
        }
        true
    }
}
