//! Which text definitions know a label, remembered per label ([`KnownLabels`]).

use super::BodyRow;
use crate::definition::Definition;
use crate::lex::split_row_key;

/// Which text definitions know a label, remembered per label: the same few dozen labels come
/// back in every block, and matching one against every templated row spec is what costs.
pub(super) struct KnownLabels<'d> {
    pub(super) defs: Vec<&'d Definition>,
    /// Label to a bit mask over `defs` (the first 64; others are asked every time).
    pub(super) cache: rustc_hash::FxHashMap<String, u64>,
    /// A row found for a line just before the line is read ([`KnownLabels::prime`]), so that it is
    /// not found again.
    pub(super) primed: Option<Primed>,
    /// Whether a line of the open block is its closing line or a section header, found just
    /// before the line is read ([`KnownLabels::prime_line`]).
    pub(super) primed_line: Option<PrimedLine>,
}

/// What a line's trimmed text is to the open block whose banner is on line `block`: its closing
/// line or not, a section header or not (`None`: not asked).
#[derive(Clone, Copy)]
pub(super) struct LineFacts {
    pub(super) block: usize,
    pub(super) closes: bool,
    pub(super) section: Option<bool>,
}

/// [`LineFacts`] found for a text (its address and length).
#[derive(Clone, Copy)]
pub(super) struct PrimedLine {
    at: usize,
    len: usize,
    facts: LineFacts,
}

impl PrimedLine {
    /// The facts, when they were found for this very text (same address and length) in the block
    /// whose banner is on line `block`.
    fn facts_for(&self, trimmed: &str, block: usize) -> Option<LineFacts> {
        (self.at == trimmed.as_ptr() as usize && self.len == trimmed.len() && self.facts.block == block)
            .then_some(self.facts)
    }
}

/// A line's row, found already: the line's text (its address and length) and the row.
pub(super) struct Primed {
    at: usize,
    len: usize,
    row: Option<BodyRow>,
}

impl<'d> KnownLabels<'d> {
    /// Labels remembered at most (a log with endless distinct labels keeps memory bounded).
    const MAX: usize = 4096;

    /// Which of the first 64 definitions know `label`, one bit each.
    pub(super) fn mask(&mut self, label: &str) -> u64 {
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
    pub(super) fn see(&mut self, text: &str) -> Option<BodyRow> {
        // (The row found for this very text, still alive at this address, just before.)
        if let Some(p) = self.primed.take()
            && p.at == text.as_ptr() as usize
            && p.len == text.len()
        {
            return p.row;
        }
        let (label, value) = split_row_key(text)?;
        let label = label.into_owned();
        // (The value is a slice of `text`.)
        let start = value.as_ptr() as usize - text.as_ptr() as usize;
        Some(BodyRow { known: self.mask(&label), label, value: start..start + value.len() })
    }

    /// Says that `text`'s row is `row` ([`KnownLabels::see`] found it) to the next call of `see`,
    /// which answers it when asked about the same text (at the same address: the caller keeps
    /// the text alive and unchanged until then, and [`KnownLabels::unprime`]s after).
    pub(super) fn prime(&mut self, text: &str, row: Option<BodyRow>) {
        self.primed = Some(Primed { at: text.as_ptr() as usize, len: text.len(), row });
    }

    /// Forgets a row [`KnownLabels::prime`]d and not asked for (and a line's facts).
    pub(super) fn unprime(&mut self) {
        self.primed = None;
        self.primed_line = None;
    }

    /// What `text` (a line's trimmed text) is to the open block, found already.
    pub(super) fn prime_line(&mut self, text: &str, facts: LineFacts) {
        self.primed_line = Some(PrimedLine { at: text.as_ptr() as usize, len: text.len(), facts });
    }

    /// Whether `trimmed` closes the block (banner on line `block`), when that was found already.
    pub(super) fn primed_closes(&self, trimmed: &str, block: usize) -> Option<bool> {
        self.primed_line.and_then(|p| p.facts_for(trimmed, block)).map(|f| f.closes)
    }

    /// Whether `trimmed` is a section header of the block, when that was found already.
    pub(super) fn primed_section(&self, trimmed: &str, block: usize) -> Option<bool> {
        self.primed_line.and_then(|p| p.facts_for(trimmed, block)).and_then(|f| f.section)
    }

    /// Whether `d` knows `label`, whose [`KnownLabels::mask`] is `mask`.
    pub(super) fn knows_in(&self, mask: u64, d: &Definition, label: &str) -> bool {
        Self::knows_at(mask, self.bit(d), d, label)
    }

    /// `d`'s bit in a mask (`None`: past the first 64 definitions).
    pub(super) fn bit(&self, d: &Definition) -> Option<usize> {
        self.defs.iter().take(64).position(|t| std::ptr::eq(*t, d))
    }

    /// The bits of `defs` in a mask, and whether every one has a bit.
    pub(super) fn bits_of(&self, defs: &[&Definition]) -> (u64, bool) {
        defs.iter().fold((0, true), |(m, all), d| match self.bit(d) {
            Some(i) => (m | 1 << i, all),
            None => (m, false),
        })
    }

    /// [`KnownLabels::knows_in`] with `d`'s [`KnownLabels::bit`] looked up already.
    pub(super) fn knows_at(mask: u64, bit: Option<usize>, d: &Definition, label: &str) -> bool {
        match bit {
            Some(i) => mask & (1 << i) != 0,
            None => d.knows_label(label),
        }
    }
}
