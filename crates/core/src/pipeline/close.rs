//! The closing steps of every run, whatever the input: derive, validate, verify what it claims.

use crate::report::Derived;
use crate::validate::Policy;
use crate::{Run, check, derive, validate};

/// What a run claims of its own derived figures, to be verified by [`close`].
pub enum Claims<'a> {
    /// Nothing: a tool's output, whose figures are checked by the rules alone.
    None,
    /// A report written by hand: its headline figures checked against their definitions.
    Report,
    /// A canonical run read back: the derived figures it stated (kept aside, never read as input).
    Stated(&'a Derived),
}

/// The closing steps of every run: derive from the run's own inputs, validate against its totals,
/// and verify what it claims. The one place these are done, in this order, whatever the input.
pub fn close(run: &mut Run, policy: &Policy, claims: Claims) {
    // A canonical run's declared meaning is its definition's (`semantics-declared`): settled
    // before anything is derived from it.
    let declared = matches!(claims, Claims::Stated(_)).then(|| check::declared_semantics(run));
    // A report's implicit figures (a bare dstack metrics object's concurrency) are read first.
    if matches!(claims, Claims::Report) {
        check::implicit(run);
    }
    run.derived = derive::derive(run);
    let restated = match claims {
        Claims::None => None,
        Claims::Report => Some(None),
        Claims::Stated(stated) => Some(Some(check::restated(run, stated))),
    };
    validate::validate(run, policy);
    if let Some(restated) = restated {
        check::verify(run, restated, declared, policy);
    }
}
