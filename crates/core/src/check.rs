//! `check`: a report read back (a canonical report, or dstack's preset benchmark) is verified,
//! not trusted.
//!
//! Three layers, each reported whole:
//!
//! 1. **Shape.** [`canonical_shape`] and [`dstack_shape`] walk the JSON document and return every
//!    place where it is not the shape it claims to be (JSON path, what was expected, what was
//!    found), as a schema validator does: a wrong type, a missing required key, an unknown key, a
//!    value out of its range. Any of them makes the input unusable (exit 3); nothing is dropped.
//!    dstack's walks are dstack's (`crate::dstack::shape`), re-exported here.
//! 2. **Restated figures.** A canonical report's `derived` section, `checks` and `verdict` are
//!    recomputed from its `reported`, `totals` and `workload`, never read. Where the report states a
//!    derived figure its own inputs do not give, that is a contradiction (`derived-restated`, an error
//!    that names both figures).
//! 3. **Headline definitions.** Every headline figure must agree with its definition
//!    (`headline-definitions`): dstack's `output_tok_per_s` is `total_output_tokens / duration_seconds` and
//!    its `per_user_tok_per_s` is `output_tok_per_s / workload.concurrency` (dstack's `## Benchmark`
//!    instructions to its agent); a canonical per-user rate is `1000 / TPOT`. A headline figure that
//!    cannot be verified is an error saying why. dstack's own model rules (no failed request, every
//!    requested request measured, ...) are `validate`'s `dstack-model` (`crate::dstack::model`).
//!
//! Tolerances are rounding-aware: a stated figure agrees with its definition when the figures it
//! is computed from, each anywhere within the rounding of the digits written, give a value that
//! rounds to the digits written for it. An integer-valued figure (`78` or `78.0`: JSON does not
//! tell them apart) is allowed at most 0.5% either way, so that a rate written to three significant
//! digits passes and a coarser one does not.

mod definitions;
mod semantics;
mod shape;

pub use crate::dstack::shape::{dstack_metrics_shape, dstack_shape};
pub use crate::shape::ShapeError;
pub use definitions::{implicit, restated, verify};
pub use semantics::declared as declared_semantics;
pub use shape::canonical_shape;

#[cfg(test)]
mod tests {
    use super::definitions::{divide, interval, within, written_half_unit};

    #[test]
    fn written_digits_set_the_rounding() {
        assert_eq!(written_half_unit(26.75), 0.005);
        assert_eq!(written_half_unit(4096.0), 0.5);
        // 5.13 written to one decimal is 5.1; 5.2 is not it.
        assert!(within(5.1, (5.13, 5.13)));
        assert!(!within(5.2, (5.13, 5.13)));
        // An integer-valued figure: at most 0.5% either way.
        assert!(within(78.0, (78.114, 78.114)));
        assert!(!within(5.0, (5.13, 5.13)));
        // 8192 tokens over a duration written 26.8 (26.75 rounded): 306.24 is in the interval.
        assert!(within(306.24, divide((8192.0, 8192.0), interval(26.8))));
        assert!(!within(3062.4, divide((8192.0, 8192.0), interval(26.8))));
    }
}
