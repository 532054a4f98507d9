//! The integration tests, one crate (one link, one binary: `cargo test --test it`), a module per
//! concern; `cargo test --test it store::` runs one. The two memory tests stay binaries of their
//! own (`tests/decode_memory.rs`, `tests/json_memory.rs`): each installs a counting global
//! allocator and must run alone in its process.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/sim.rs"]
mod sim;

mod agent;
mod architecture;
mod args_dump;
mod check;
mod check_meaning;
mod cli;
mod compare;
mod contract;
mod damaged_properties;
mod decode;
mod driver;
mod dstack_entries;
mod dstack_properties;
mod forks;
mod fuzz_regressions;
mod ground_truth;
mod hostile;
mod json_in_text;
mod json_structure;
mod layouts;
mod llmd;
mod mcp;
mod mutation;
mod no_false_rejections;
mod noise_properties;
mod noisy;
mod objectives;
mod outputs;
mod peers;
mod per_request;
mod plugins;
mod prefix_properties;
mod public_manifest;
mod rendered;
mod result_files;
mod retyped_figures;
mod routes;
mod rule_messages;
mod run;
mod sampling_line;
mod semantics;
mod snapshots;
mod store;
mod summary_fold;
mod sweep;
mod table_header_properties;
mod table_structure;
mod table_wrap;
mod units;
mod validation;
