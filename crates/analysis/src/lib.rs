//! `bench-normalize-analysis`: the features on reports, above the pipeline
//! (`bench-normalize-core`) and below the history of runs and the command line. The library's
//! users reach them through the root package, `bench_normalize::compare` and the rest.
//!
//! Comparing configurations ([`compare`]); sweeps summarized ([`sweep`]) and plotted ([`plot`]);
//! repetitions of one configuration summarized ([`aggregate`]); the t distribution and the rank
//! test they and the store's `regress` share ([`stats`]).

pub mod aggregate;
pub mod compare;
pub mod plot;
pub mod stats;
pub mod sweep;
