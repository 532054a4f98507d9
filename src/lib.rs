//! `bench-normalize`: serving-benchmark output (vLLM `vllm bench serve`, SGLang
//! `sglang.bench_serving`) to one canonical report, with TPOT derived from E2E latency, TTFT and
//! token counts (never from ITL), and runs that contradict their own totals rejected.
//!
//! The data path, one module per stage, each feeding the next:
//!
//! ```text
//! input -> detect -> extract -> canonical -> derive -> validate -> emit
//! ```
//!
//! * [`input`] reads bytes into clean lines (colour codes, `\r` progress bars, bad UTF-8);
//! * [`detect`] finds result blocks and which tool and variant printed them, using the
//!   definitions in `parsers/` ([`definition`]);
//! * [`extract`] reads every row and the value of each known one ([`lex`], [`value`]);
//! * [`canonical`] builds a [`Run`] of canonical figures ([`vocabulary`], [`report`]);
//! * [`derive`] computes TPOT and what follows from it;
//! * [`validate`] checks the run against its own totals;
//! * [`emit`] writes the report.
//!
//! ```
//! let log = "\n============ Serving Benchmark Result ============\n\
//! Backend:                                 sglang-oai\n\
//! Successful requests:                     16\n\
//! Benchmark duration (s):                  26.74\n\
//! Total generated tokens:                  8192\n\
//! Mean E2E Latency (ms):                   6682.24\n\
//! Mean TTFT (ms):                          140.14\n\
//! Mean ITL (ms):                           125.81\n\
//! ==================================================\n";
//! let runs = bench_normalize::normalize_str(log, "-").unwrap();
//! assert_eq!(runs[0].derived.tpot_ms.mean, Some(12.8025));
//! ```

pub mod canonical;
pub mod definition;
pub mod derive;
pub mod detect;
pub mod emit;
pub mod error;
pub mod extract;
pub mod input;
pub mod lex;
pub mod report;
pub mod validate;
pub mod value;
pub mod vocabulary;

use std::io::BufRead;

pub use definition::Definitions;
pub use error::{Error, ExitCode};
pub use report::{Report, Run};
pub use validate::{Policy, Tolerances};

use detect::{Block, BlockEnd, Scanner};
use report::{Format, Truncation};

/// Normalize one input, handing each run to `on_run` as soon as its block is complete.
/// Returns how many runs were found; none is [`Error::NoResult`].
pub fn normalize<R: BufRead>(
    reader: R,
    input: &str,
    defs: &Definitions,
    policy: &Policy,
    mut on_run: impl FnMut(Run) -> Result<(), Error>,
) -> Result<usize, Error> {
    let mut scanner = Scanner::new(defs);
    let mut found = 0;
    let mut lines = input::LineReader::new(reader);
    loop {
        let block = match lines.next() {
            Some(Ok(line)) => scanner.push(line),
            Some(Err(source)) => return Err(Error::Io { input: input.to_string(), source }),
            None => {
                if let Some(block) = scanner.finish() {
                    found += 1;
                    on_run(run_of_block(&block, input, policy))?;
                }
                break;
            }
        };
        if let Some(block) = block {
            found += 1;
            on_run(run_of_block(&block, input, policy))?;
        }
    }
    if found == 0 {
        return Err(Error::NoResult { input: input.to_string(), looked_for: scanner.looked_for() });
    }
    Ok(found)
}

/// Normalize a text held in memory, with the built-in definitions and default policy.
pub fn normalize_str(text: &str, input: &str) -> Result<Vec<Run>, Error> {
    let mut runs = Vec::new();
    normalize(text.as_bytes(), input, Definitions::builtin(), &Policy::default(), |r| {
        runs.push(r);
        Ok(())
    })?;
    Ok(runs)
}

/// extract -> canonical -> derive -> validate, for one text block.
fn run_of_block(block: &Block, input: &str, policy: &Policy) -> Run {
    let extracted = extract::extract(block);
    let truncated = match block.end {
        BlockEnd::Closed(_) => None,
        BlockEnd::NextBanner(line) => Some(Truncation { after_line: block.last_line, reason: format!("a new result banner started at line {line} before the closing line") }),
        BlockEnd::Noise => Some(Truncation { after_line: block.last_line, reason: "the lines after it are not rows and no closing line came".into() }),
        BlockEnd::EndOfInput => Some(Truncation { after_line: block.last_line, reason: "the input ended before the closing line".into() }),
    };
    let origin = canonical::Origin {
        definition: block.definition,
        variant: block.variant,
        input,
        block: block.index,
        first_line: Some(block.banner.number),
        last_line: Some(block.last_line),
        truncated,
        format: Format::Stdout,
    };
    let mut run = canonical::assemble(origin, extracted);
    if !block.ambiguous_with.is_empty() {
        run.notes.push(report::Note {
            code: "ambiguous-tool".into(),
            message: format!("the rows fit {} as well as {}; read as {}", block.ambiguous_with.join(", "), block.definition.id, block.definition.id),
            line: Some(block.banner.number),
        });
    }
    run.derived = derive::derive(&run, None);
    validate::validate(&mut run, policy);
    run
}
