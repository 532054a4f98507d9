//! The `bench-normalize` command. Its arguments, their dispatch and the output plumbing are the
//! library's private `cli` module: the binary is only the process's entry.

/// A run is tens of small allocations, and one not rendered on the worker thread that built it is
/// freed on the main one: mimalloc frees small blocks, across threads too, far more cheaply than
/// the system allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(bench_normalize::cli_main())
}
