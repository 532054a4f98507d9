//! Signs that the rows of two results are mixed in one block (blocks interleaved line by line,
//! or one pasted into another), found while the lines are at hand: a row only the other
//! result's tool prints, and the rest of a block (two of its lines) after the closing line that
//! closed this one.
//! `pipeline::run_of_block` reads them.

use super::super::known::KnownLabels;
use super::super::{BodyRow, section_name};
use super::Scanner;
use crate::definition::Definition;
use crate::input::Line;

impl<'d> Scanner<'d> {
    /// The first two lines that are not blank after a closed block that cut another result's
    /// block off (or was cut into): rows or section headers of the block's own tool there (a
    /// section its definition reads rows under, not any dashed line), or one and then the tool's
    /// closing line, with no banner of their own, are the rest of a block whose closing line
    /// closed this one early. Noted in the block (`after_close`); the lines are then read as
    /// usual. One row alone is not enough: a tool prints some of its labels outside its block
    /// too (vLLM's `Maximum request concurrency: 128` before a run's progress bar), and a log of
    /// runs back to back puts that line right after the closing line of the run before.
    pub(super) fn look_after(&mut self, line: &Line) {
        let Some(h) = self.held.as_mut() else { return };
        // (A blank line carries the block's prefix too: a logger's timestamp before nothing.)
        let text = h.prefix.strip(&line.text, |_| true);
        if text.trim().is_empty() {
            return;
        }
        let def = h.block.definition;
        let bit = self.known.bit(def);
        let found = match self.known.see(text) {
            Some(r) if KnownLabels::knows_at(r.known, bit, def, &r.label) => {
                Some(r.label.trim_end_matches(':').to_string())
            }
            _ => section_name(def, crate::lex::trim(text))
                .filter(|n| !n.is_empty() && def.reads_section(n))
                .map(|n| format!("{n} section header")),
        };
        let Some(h) = self.held.as_mut() else { return };
        match (h.after.take(), found) {
            (None, Some(label)) => {
                h.after = Some((line.number, label));
                return;
            }
            (Some(first), found) => {
                let closes = || {
                    let end = def.block.as_ref().and_then(|b| b.end.as_ref());
                    end.is_some_and(|end| end.is_match(crate::lex::trim(text)))
                };
                if (found.is_some() || closes())
                    && let Some(n) = h.block.neighbour.as_deref_mut()
                {
                    n.after_close = Some(first);
                }
            }
            (None, None) => {}
        }
        self.release();
    }

    /// The first row of a block that `definition` does not know and a definition whose banner
    /// matches `neighbour` (another result's banner beside the block) does: its line and label.
    pub(super) fn foreign_row(
        &self,
        definition: &Definition,
        neighbour: &str,
        body: &[Line],
        rows: &[Option<BodyRow>],
    ) -> Option<(usize, String)> {
        let theirs: Vec<&Definition> = self
            .text_defs
            .iter()
            .copied()
            .filter(|d| !std::ptr::eq(*d, definition))
            .filter(|d| d.block.as_ref().is_some_and(|b| b.banner.is_match(neighbour)))
            .collect();
        if theirs.is_empty() {
            return None;
        }
        let knows = |d: &Definition, r: &BodyRow| KnownLabels::knows_at(r.known, self.known.bit(d), d, &r.label);
        body.iter().zip(rows).find_map(|(l, r)| {
            let r = r.as_ref()?;
            (!knows(definition, r) && theirs.iter().any(|d| knows(d, r)))
                .then(|| (l.number, r.label.trim_end_matches(':').to_string()))
        })
    }
}
