//! The `bench-normalize` command: a thin shell around the library.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::process;

use bench_normalize::emit::{self, OutputFormat};
use bench_normalize::{Definitions, Error, ExitCode, Policy, Report, Tolerances, normalize};
use clap::{Parser, ValueEnum};

/// Normalize vLLM / SGLang serving-benchmark output into one canonical JSON report; derive TPOT
/// from E2E latency, TTFT and token counts (never from ITL); reject runs that contradict their
/// own totals.
#[derive(Parser, Debug)]
#[command(name = "bench-normalize", version, about, long_about = None)]
struct Cli {
    /// Benchmark logs or result files; standard input when none is given, or for `-`.
    files: Vec<PathBuf>,

    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Fmt::Json)]
    format: Fmt,

    /// Failed warnings reject a run too (exit 1).
    #[arg(long)]
    strict: bool,

    /// decode-capacity / decode-within-e2e: how far a claimed TPOT may exceed its bound.
    #[arg(long, value_name = "FACTOR", default_value_t = Tolerances::default().capacity)]
    capacity_tolerance: f64,

    /// e2e-capacity: how far requests x E2E may exceed concurrency x duration.
    #[arg(long, value_name = "FACTOR", default_value_t = Tolerances::default().e2e_capacity)]
    e2e_capacity_tolerance: f64,

    /// throughput-totals: relative slack beyond 2-decimal rounding.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().throughput)]
    throughput_tolerance: f64,

    /// tpot-agreement: relative difference allowed between claimed and derived TPOT.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().tpot_agreement)]
    tpot_tolerance: f64,

    /// itl-is-per-chunk: ITL / TPOT above this means chunks carry several tokens.
    #[arg(long, value_name = "RATIO", default_value_t = Tolerances::default().itl_chunk_ratio)]
    itl_chunk_ratio: f64,

    /// token-count-source: relative difference allowed between server and retokenized totals.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().token_count)]
    token_count_tolerance: f64,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    /// The whole report (pretty on a terminal, compact otherwise)
    Json,
    /// One run per line, printed as soon as it is complete
    Jsonl,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { ExitCode::Usage as i32 } else { 0 };
            let _ = e.print();
            process::exit(code);
        }
    };
    process::exit(run(cli) as i32);
}

fn run(cli: Cli) -> ExitCode {
    let policy = Policy {
        strict: cli.strict,
        tolerances: Tolerances {
            capacity: cli.capacity_tolerance,
            e2e_capacity: cli.e2e_capacity_tolerance,
            throughput: cli.throughput_tolerance,
            tpot_agreement: cli.tpot_tolerance,
            itl_chunk_ratio: cli.itl_chunk_ratio,
            token_count: cli.token_count_tolerance,
        },
    };
    let defs = Definitions::builtin();
    let format = match cli.format {
        Fmt::Json => OutputFormat::Json,
        Fmt::Jsonl => OutputFormat::Jsonl,
    };
    let inputs: Vec<PathBuf> = if cli.files.is_empty() { vec![PathBuf::from("-")] } else { cli.files };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut runs = Vec::new();
    let mut code = ExitCode::Ok;
    for path in &inputs {
        let name = path.display().to_string();
        let result = if name == "-" {
            normalize(io::stdin().lock(), "-", defs, &policy, |run| keep(&mut out, format, &mut runs, run))
        } else {
            match File::open(path) {
                Ok(f) => normalize(BufReader::with_capacity(256 * 1024, f), &name, defs, &policy, |run| keep(&mut out, format, &mut runs, run)),
                Err(source) => Err(Error::Io { input: name.clone(), source }),
            }
        };
        if let Err(e) = result {
            if is_broken_pipe(&e) {
                return code;
            }
            eprintln!("bench-normalize: {e}");
            code = code.max(e.exit_code());
        }
    }
    if format == OutputFormat::Json && !runs.is_empty() {
        let report = Report::new(runs);
        let pretty = io::stdout().is_terminal();
        if let Err(e) = emit::write_json(&mut out, &report, pretty) {
            if e.kind() != io::ErrorKind::BrokenPipe {
                eprintln!("bench-normalize: writing the report: {e}");
                return code.max(ExitCode::Io);
            }
            return code;
        }
        if report.runs.iter().any(|r| r.verdict == bench_normalize::report::Verdict::Rejected) {
            code = code.max(ExitCode::Rejected);
        }
    } else if format == OutputFormat::Jsonl && runs.iter().any(|r| r.verdict == bench_normalize::report::Verdict::Rejected) {
        code = code.max(ExitCode::Rejected);
    }
    let _ = out.flush();
    code
}

/// JSON collects runs for one document; JSONL prints each run as it completes and keeps only its
/// verdict.
fn keep(out: &mut dyn Write, format: OutputFormat, runs: &mut Vec<bench_normalize::Run>, run: bench_normalize::Run) -> Result<(), Error> {
    match format {
        OutputFormat::Json => runs.push(run),
        OutputFormat::Jsonl => {
            emit::write_jsonl(out, &run).and_then(|_| out.flush()).map_err(|source| Error::Io { input: "stdout".into(), source })?;
            let mut marker = run;
            marker.rows.clear();
            runs.push(marker);
        }
    }
    Ok(())
}

fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Io { input, source } if input == "stdout" && source.kind() == io::ErrorKind::BrokenPipe)
}
