//! dstack, one consumer's format in one place: its model's rules, what `check` and `validate`'s
//! `dstack-model` hold a document to ([`model`]); the run written as the document dstack stores
//! ([`write`]), and as the entries of a list for several runs ([`entries`]). What is data (the
//! documents dstack's agent writes, read back) is `parsers/dstack-*.toml`; the shape errors of such
//! a document ([`shape`], which `check` re-exports) and the JSON Schema of what dstack's formats
//! write ([`schema`], which `output_schema` serves) are here too.

pub mod entries;
pub mod model;
pub(crate) mod schema;
pub(crate) mod shape;
pub mod write;
