//! The `bench-normalize` command. Its arguments, their dispatch and the output plumbing are the
//! command-line layer (`crates/cli`, package `bench-normalize-cli`): the binary is only the
//! process's entry, here so that `cargo install --path .` installs it.

/// A run is tens of small allocations, and one not rendered on the worker thread that built it is
/// freed on the main one: mimalloc frees small blocks, across threads too, far more cheaply than
/// the system allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(bench_normalize_cli::main())
}
