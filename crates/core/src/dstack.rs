//! dstack, one consumer's format in one place: its model's rules, what `check` and `validate`'s
//! `dstack-model` hold a document to ([`model`]); the run written as the document dstack stores
//! ([`write`]), and as the entries of a list for several runs ([`entries`]). What is data (the
//! documents dstack's agent writes, read back) is `parsers/dstack-*.toml`. The shape errors of a
//! dstack document read back are `check`'s (`check/shape.rs`), with every other report's.

pub mod entries;
pub mod model;
pub mod write;
