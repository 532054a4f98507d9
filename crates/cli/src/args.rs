//! The command line's arguments: the commands, their flags and what each means (the `--help`
//! text is these doc comments).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::help;
use bench_normalize_core::Tolerances;
use bench_normalize_core::emit::OutputFormat;
use bench_normalize_core::objectives::Objectives;

/// Normalize vLLM / SGLang serving-benchmark output into one canonical JSON report; derive TPOT
/// from E2E latency, TTFT and token counts (never from ITL); reject runs that contradict their
/// own totals.
///
/// Exit codes: 0 every run accepted, 1 a run rejected, 2 usage error, 3 no result found or input
/// unreadable as a result, 4 I/O error, 5 a run the output format cannot hold (a figure it
/// requires is missing; the message says how to get it), 6 the client `run` ran failed, 7 an
/// objective of --slo not met (only when no other code applies), 8 `regress`: a figure regressed.
#[derive(Parser, Debug)]
#[command(
    name = "bench-normalize",
    version,
    about,
    args_conflicts_with_subcommands = true,
    after_help = help::EXAMPLES_MAIN
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,

    /// Benchmark logs, result files (.json/.jsonl) or reports; standard input when none is given,
    /// or for `-`.
    pub(crate) files: Vec<PathBuf>,

    #[command(flatten)]
    pub(crate) common: Common,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Validate a report written by hand (a canonical report or run, or dstack's preset report
    /// shape) with the same rules; reject it when its figures contradict each other.
    #[command(after_help = help::EXAMPLES_CHECK)]
    Check {
        /// The report; `-` for standard input.
        file: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Run a benchmark client and report its run: `bench-normalize run [OPTIONS] -- vllm bench
    /// serve ...`. The flags exact figures need are added where the command lacks them (the result
    /// file, per-request details, every percentile metric); the client's output shows live on
    /// stderr; its output and result file are read as one run. Exit code 6: the client failed (its
    /// result is still reported).
    #[command(after_help = help::EXAMPLES_RUN)]
    Run {
        #[command(flatten)]
        common: Common,
        /// Keep the client's output log and result file under DIR (created if missing), in a
        /// folder of their own per run (`DIR/20261206T164500Z-vllm-bench-serve`), instead of a
        /// temporary directory removed at the end. Without it, a result file whose run was not
        /// written cleanly is moved into the working directory, never deleted.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
        /// The client's version, when `run` cannot ask it (a wrapper script, another
        /// environment, a container shim): written as the run's `benchmark_tool_version`.
        #[arg(long, value_name = "VERSION", value_parser = parse_tool_version)]
        tool_version: Option<String>,
        /// Run the command exactly as given: add no flag (for a client too old for one `run` adds).
        #[arg(long)]
        as_given: bool,
        /// The client command, after `--`: `vllm bench serve ...`, `python -m
        /// sglang.bench_serving ...`, `genai-perf profile ...`, `aiperf profile ...`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Summarize a sweep (runs of one configuration at several concurrencies or request rates):
    /// per configuration, the frontier of output throughput against the per-user decode rate
    /// (1000 / derived TPOT), ordered by load, Pareto-optimal points marked, with output
    /// throughput / concurrency (what peers call "per user") beside it under its own name.
    /// Rejected and unusable runs are listed, not plotted. Exit 3: no run gives a point.
    #[command(after_help = help::EXAMPLES_SWEEP)]
    Sweep {
        #[command(flatten)]
        sweep: SweepArgs,
        /// Output format.
        #[arg(long, short = 'f', value_enum, default_value_t = SweepFormat::Table)]
        format: SweepFormat,
    },
    /// Draw a sweep's frontier (output throughput vs per-user decode rate) and TTFT against load
    /// as an SVG file, one series per configuration. Exit 3 (nothing written): no run gives a point.
    #[command(after_help = help::EXAMPLES_PLOT)]
    Plot {
        #[command(flatten)]
        plot: PlotArgs,
        /// The SVG file to write (written whole or not at all); `-` for standard output.
        #[arg(long, short = 'o', value_name = "PATH")]
        output: PathBuf,
    },
    /// Compare configurations: `bench-normalize compare BASELINE OTHER...`, each a file or a
    /// directory of results. Runs are lined up by workload (concurrency, rate, input and output
    /// lengths, model); per pair, derived TPOT, per-user decode rate, output throughput, TTFT
    /// p50/p99, E2E mean/p50 and ITL side by side with ratios to the baseline. A figure whose
    /// meaning differs between the two sides is refused or warned, with the reason.
    #[command(after_help = help::EXAMPLES_COMPARE)]
    Compare(CompareArgs),
    /// Summarize repetitions of one configuration: `bench-normalize aggregate rep1.json rep2.json
    /// rep3.json`. Each run is validated first; a rejected or unusable one is left out and named
    /// (exit 1 or 3), never averaged in. Runs are grouped by tool, meaning and workload; per
    /// figure: the runs' values, median, mean, standard deviation, coefficient of variation and a
    /// t-based confidence interval of the mean; pooled over requests when every run kept its
    /// per-request arrays. The summary says it is an aggregate: it is not a run's report.
    #[command(after_help = help::EXAMPLES_AGGREGATE)]
    Aggregate(AggregateArgs),
    /// Keep accepted runs in a store of history (SQLite, or PostgreSQL with --store
    /// postgresql://...): `store add FILES... [--label k=v]`,
    /// `store list`, `store show ID`, `store export`. Each file is read as `bench-normalize`
    /// reads it; only accepted runs are stored (a rejected or unusable run is refused with its
    /// reason, exit 1 or 3); the same block of the same file, workload and labels is stored once.
    /// The store: --store PATH, else $BENCH_NORMALIZE_STORE, else
    /// $XDG_DATA_HOME/bench-normalize/store.sqlite (~/.local/share/bench-normalize/store.sqlite).
    #[cfg(feature = "store")]
    #[command(after_help = help::EXAMPLES_STORE)]
    Store(StoreArgs),
    /// Judge new runs against the stored runs of the same workload: per figure (derived TPOT,
    /// per-user decode rate, TTFT mean and p99, E2E mean, output throughput) regression,
    /// improvement, unchanged, noisy, or not-comparable (another tool, or figures that mean
    /// something else). A change counts when it is at least --min-change and significant
    /// (Welch's t-test with 3+ runs a side, or --test mann-whitney; threshold only below). Exit
    /// 8: a figure regressed; 3: no baseline, or nothing comparable.
    #[cfg(feature = "store")]
    #[command(after_help = help::EXAMPLES_REGRESS)]
    Regress(RegressArgs),
    /// Print the JSON Schema of the canonical report, or of an output format's documents (one
    /// line's for the formats written a line a run); `--strict`: the variant OpenAI's strict
    /// structured outputs and Claude's `--json-schema` accept (every object closed, every
    /// property required, an absent figure written as null).
    #[command(after_help = help::EXAMPLES_SCHEMA)]
    Schema {
        /// The output format: json (the canonical report, the default), jsonl, dstack,
        /// dstack-e2e, sglang-skill.
        #[arg(long, short = 'f', value_enum)]
        format: Option<OutputFormat>,
        /// The strict variant (every object `additionalProperties: false`, every property in
        /// `required`, optional ones a union with null; no oneOf, format, pattern or bounds).
        #[arg(long)]
        strict: bool,
    },
    /// List the parser definitions: tool, formats, variants, detection markers.
    #[command(after_help = help::EXAMPLES_PARSERS)]
    Parsers {
        /// `json`, or a `table` for people.
        #[arg(long, short = 'f', value_enum, default_value_t = ListFormat::Table)]
        format: ListFormat,
        /// Also load the definitions in this folder (as for normalizing).
        #[arg(long, value_name = "DIR", env = "BENCH_NORMALIZE_PARSERS")]
        parsers: Option<PathBuf>,
    },
    /// Serve the Model Context Protocol over stdio for an agent: tools normalize,
    /// check, compare, explain and schema. It reads only files inside the --root directories (the
    /// working directory by default; symlinks and `..` resolved first), at most --max-bytes each,
    /// never quotes a file read from a path in a diagnostic, writes no file and logs nothing;
    /// stdout carries MCP messages only.
    #[cfg(feature = "mcp")]
    #[command(after_help = help::EXAMPLES_MCP)]
    Mcp {
        /// A directory the tools may read files in (repeatable; relative paths are taken from the
        /// first). Default: the working directory.
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<PathBuf>,
        /// The largest file or text a tool reads, in bytes.
        #[arg(long, value_name = "BYTES", default_value_t = crate::mcp::DEFAULT_MAX_BYTES)]
        max_bytes: u64,
    },
    /// Print a shell completion script.
    #[command(after_help = help::EXAMPLES_COMPLETIONS)]
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff): the command's, or one subcommand's; or write every page into a
    /// folder.
    #[command(after_help = help::EXAMPLES_MAN)]
    Man {
        /// The subcommand whose page to print (`run`, `check`, ...).
        subcommand: Option<String>,
        /// Write every page (bench-normalize.1, bench-normalize-SUBCOMMAND.1) into DIR instead.
        #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
        dir: Option<PathBuf>,
    },
    /// Print the agent skill (SKILL.md: when and how an agent uses bench-normalize, what each
    /// exit code asks of it), or install it where an agent harness reads skills.
    #[command(after_help = help::EXAMPLES_SKILL)]
    Skill {
        /// Write it for this harness instead of printing it.
        #[arg(long, value_enum, value_name = "HARNESS")]
        install: Option<help::Harness>,
        /// Into the current project (./.claude/skills, ...) instead of the home folder.
        #[arg(long, requires = "install")]
        project: bool,
        /// Replace a SKILL.md there that differs from this version's.
        #[arg(long, requires = "install")]
        force: bool,
    },
}

/// The inputs and grouping of `sweep` and `plot`.
#[derive(Args, Debug, Clone)]
pub(crate) struct SweepArgs {
    /// Benchmark logs, result files or reports holding the sweep's runs; `-` for standard input.
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// What makes a series: runs of one tool, model and input/output length per request
    /// (`workload`), or the runs of each input file (`input`).
    #[arg(long, value_enum, default_value_t = GroupByArg::Workload)]
    pub(crate) group_by: GroupByArg,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
}

/// `plot`: a sweep's inputs, or (`--history`) the store's history.
#[derive(Args, Debug, Clone)]
pub(crate) struct PlotArgs {
    /// Benchmark logs, result files or reports holding the sweep's runs; `-` for standard input.
    #[cfg_attr(feature = "store", arg(required_unless_present = "history", conflicts_with = "history"))]
    #[cfg_attr(not(feature = "store"), arg(required = true))]
    pub(crate) files: Vec<PathBuf>,
    /// What makes a series: runs of one tool, model and input/output length per request
    /// (`workload`), or the runs of each input file (`input`).
    #[arg(long, value_enum, default_value_t = GroupByArg::Workload)]
    pub(crate) group_by: GroupByArg,
    #[cfg(feature = "store")]
    #[command(flatten)]
    pub(crate) history: HistoryArgs,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
}

impl PlotArgs {
    pub(crate) fn sweep(self) -> SweepArgs {
        SweepArgs { files: self.files, group_by: self.group_by, read: self.read }
    }
}

/// `plot --history`: one figure of the stored runs over time or over a label's values.
#[cfg(feature = "store")]
#[derive(Args, Debug, Clone)]
pub(crate) struct HistoryArgs {
    /// Draw this figure of the store's accepted runs over time instead of a sweep: a series per
    /// tool and workload, the newest run's baseline (as `regress` takes it) as a band.
    #[arg(long, value_enum, value_name = "FIGURE")]
    pub(crate) history: Option<HistoryFigure>,
    /// The horizontal axis: `time` (when each run was added), or a label's key (`commit`): one
    /// position per value, runs without it left out.
    #[arg(long, value_name = "time|LABEL", default_value = "time", requires = "history")]
    pub(crate) by: String,
    /// The store (as for `store`). Default: $BENCH_NORMALIZE_STORE, else
    /// $XDG_DATA_HOME/bench-normalize/store.sqlite.
    #[arg(long, value_name = "PATH", env = "BENCH_NORMALIZE_STORE")]
    pub(crate) store: Option<PathBuf>,
    /// Only runs with this label (repeatable: all of them), e.g. branch=main.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label, requires = "history")]
    pub(crate) labels: Vec<(String, String)>,
    /// The band: the baseline of each series' newest run is the N runs before it.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) baseline_last: u32,
    /// The band's half-width, relative to the baseline's mean (as `regress --min-change`).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05, value_parser = parse_fraction)]
    pub(crate) min_change: f64,
}

#[cfg(feature = "store")]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HistoryFigure {
    /// Derived TPOT, mean (ms)
    Tpot,
    /// Per-user decode rate, 1000 / TPOT (tok/s)
    PerUser,
    /// TTFT mean (ms)
    TtftMean,
    /// TTFT p99 (ms)
    TtftP99,
    /// E2E latency mean (ms)
    E2eMean,
    /// Output throughput (tok/s)
    OutputThroughput,
}

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// The baseline configuration: a log, result file or report, or a directory of them.
    pub(crate) baseline: PathBuf,
    /// The configurations compared with the baseline, each a file or a directory.
    #[arg(required = true)]
    pub(crate) others: Vec<PathBuf>,
    /// Output format: a table for people, Markdown for a pull request, JSON.
    #[arg(long, short = 'f', value_enum, default_value_t = CompareFormat::Table)]
    pub(crate) format: CompareFormat,
    /// The workload fields runs are lined up by, comma-separated: concurrency, rate, input,
    /// output, model (drop one to compare runs that differ in it, e.g. two models).
    #[arg(long, value_name = "FIELDS", default_value = "concurrency,rate,input,output,model")]
    pub(crate) key: String,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
}

/// `aggregate`: the repetitions, and how to summarize them.
#[derive(Args, Debug)]
pub(crate) struct AggregateArgs {
    /// The repetitions: logs, result files or reports; `-` for standard input.
    #[cfg_attr(feature = "store", arg(required_unless_present = "from_store", conflicts_with = "from_store"))]
    #[cfg_attr(not(feature = "store"), arg(required = true))]
    pub(crate) files: Vec<PathBuf>,
    /// Aggregate stored runs instead of files: those carrying every --label (all of them without
    /// one), from --store. Stored runs keep no per-request arrays: nothing is pooled.
    #[cfg(feature = "store")]
    #[arg(long)]
    pub(crate) from_store: bool,
    /// The store (as for `store`). Default: $BENCH_NORMALIZE_STORE, else
    /// $XDG_DATA_HOME/bench-normalize/store.sqlite.
    #[cfg(feature = "store")]
    #[arg(long, value_name = "PATH", env = "BENCH_NORMALIZE_STORE", requires = "from_store")]
    pub(crate) store: Option<PathBuf>,
    /// With --from-store: only runs with this label (repeatable), e.g. commit=abc123.
    #[cfg(feature = "store")]
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label, requires = "from_store")]
    pub(crate) labels: Vec<(String, String)>,
    /// The confidence level of each figure's interval of the mean.
    #[arg(long, value_name = "LEVEL", default_value_t = 0.95, value_parser = parse_fraction)]
    pub(crate) confidence: f64,
    /// Markdown (for people, a pull request) or JSON (for programs).
    #[arg(long, short = 'f', value_enum, default_value_t = AggregateFormat::Markdown)]
    pub(crate) format: AggregateFormat,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AggregateFormat {
    Markdown,
    Json,
}

/// `store`: where the store is, and what to do with it.
#[cfg(feature = "store")]
#[derive(Args, Debug)]
pub(crate) struct StoreArgs {
    /// The store: a SQLite file (created when missing), or a PostgreSQL database
    /// (postgresql://USER@HOST:PORT/DB). Default: $BENCH_NORMALIZE_STORE, else
    /// $XDG_DATA_HOME/bench-normalize/store.sqlite (~/.local/share/bench-normalize/store.sqlite).
    #[arg(long, global = true, value_name = "PATH", env = "BENCH_NORMALIZE_STORE")]
    pub(crate) store: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) action: StoreAction,
}

#[cfg(feature = "store")]
#[derive(Subcommand, Debug)]
pub(crate) enum StoreAction {
    /// Read FILES (logs, result files, reports; `-` for standard input) and store their accepted
    /// runs, all under the --label given; refuse the others with the reason.
    Add {
        /// Benchmark logs, result files or reports.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// A label stored with each run and part of its key (repeatable): commit=abc123,
        /// image=vllm:0.11, gpu=h100.
        #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
        labels: Vec<(String, String)>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// List the stored runs, latest first.
    List {
        /// A table for people, or JSON (an array, without each run's report).
        #[arg(long, short = 'f', value_enum, default_value_t = ListFormat::Table)]
        format: ListFormat,
        /// Only runs with this label (repeatable: all of them).
        #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
        labels: Vec<(String, String)>,
        /// Only the latest N.
        #[arg(long, value_name = "N")]
        last: Option<usize>,
    },
    /// One stored run: its columns and its whole canonical run, as JSON.
    Show {
        /// The run's id (`store list`).
        id: i64,
    },
    /// Every stored run: JSON Lines (columns and the canonical run) or CSV (the columns).
    Export {
        #[arg(long, short = 'f', value_enum, default_value_t = ExportFormat::Jsonl)]
        format: ExportFormat,
    },
}

#[cfg(feature = "store")]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExportFormat {
    Jsonl,
    Csv,
}

/// `regress`: the new runs, the baseline and the decision's settings.
#[cfg(feature = "store")]
#[derive(Args, Debug)]
pub(crate) struct RegressArgs {
    /// The new runs: logs, result files or reports.
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// The store (as for `store`: a file or a postgresql:// URL). Default: $BENCH_NORMALIZE_STORE, else
    /// $XDG_DATA_HOME/bench-normalize/store.sqlite.
    #[arg(long, value_name = "PATH", env = "BENCH_NORMALIZE_STORE")]
    pub(crate) store: Option<PathBuf>,
    /// The baseline: the latest N accepted stored runs of the same workload.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) baseline_last: u32,
    /// The baseline: only stored runs with this label (repeatable: all of them), e.g. branch=main.
    #[arg(long = "baseline-label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub(crate) baseline_labels: Vec<(String, String)>,
    /// The baseline: only stored runs added within this long before now (by the store's clock):
    /// a number and a unit, s, m, h, d or w (`7d`: the last week's runs).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) baseline_within: Option<u64>,
    /// The smallest relative change of a figure's mean that counts.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05, value_parser = parse_fraction)]
    pub(crate) min_change: f64,
    /// The test with 3 or more runs a side.
    #[arg(long, value_enum, default_value_t = TestArg::Welch)]
    pub(crate) test: TestArg,
    /// The significance level of the test.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = parse_fraction)]
    pub(crate) alpha: f64,
    /// Markdown (for $GITHUB_STEP_SUMMARY or a pull request) or JSON (for programs).
    #[arg(long, short = 'f', value_enum, default_value_t = RegressFormat::Markdown)]
    pub(crate) format: RegressFormat,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
}

#[cfg(feature = "store")]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TestArg {
    /// Welch's t-test (unequal variances)
    Welch,
    /// The Mann-Whitney U rank test
    MannWhitney,
}

#[cfg(feature = "store")]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegressFormat {
    Markdown,
    Json,
}

/// `--label KEY=VALUE`.
#[cfg(feature = "store")]
fn parse_label(s: &str) -> Result<(String, String), String> {
    bench_normalize_store::parse_label(s)
}

/// `7d`, `12h`, `30m`, `90s`, `2w`: seconds.
#[cfg(feature = "store")]
fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => 0,
    };
    match n.parse::<u64>() {
        Ok(n) if n > 0 && scale > 0 => n.checked_mul(scale).ok_or_else(|| format!("{s:?} is too long")),
        _ => Err(format!("{s:?} is not a duration: a number and s, m, h, d or w (7d)")),
    }
}

/// A fraction in (0, 1): `--confidence`, `--min-change`, `--alpha`.
fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(format!("{s:?} is no fraction between 0 and 1 (0.05 is 5%)")),
    }
}

/// How the commands that read results to summarize them (`sweep`, `plot`, `compare`) read them.
#[derive(Args, Debug, Clone)]
pub(crate) struct ReadArgs {
    /// Failed warnings reject a run too (it is then left out, with the reason).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Diagnostics on stderr: for people, or one JSON object per line for programs.
    #[arg(long, value_enum, default_value_t = ErrorFormat::Human)]
    pub(crate) error_format: ErrorFormat,
    /// Also load the parser definitions (*.toml) in this folder. Default: $BENCH_NORMALIZE_PARSERS.
    #[arg(long, value_name = "DIR", env = "BENCH_NORMALIZE_PARSERS")]
    pub(crate) parsers: Option<PathBuf>,
    /// Also write every diagnostic into PATH, as on stderr (see --diagnostics-file of the main
    /// command). Default: $BENCH_NORMALIZE_DIAGNOSTICS_FILE (when set and not empty).
    #[arg(long, value_name = "PATH")]
    pub(crate) diagnostics_file: Option<PathBuf>,
}

/// The variable `--diagnostics-file` defaults to.
pub(crate) const DIAGNOSTICS_VAR: &str = "BENCH_NORMALIZE_DIAGNOSTICS_FILE";

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupByArg {
    Workload,
    Input,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SweepFormat {
    Table,
    Json,
    Markdown,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompareFormat {
    /// Per workload, the two sides side by side with ratios and notes
    Table,
    /// The same as a Markdown table, for pasting into a pull request
    Markdown,
    /// The whole comparison
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListFormat {
    Table,
    Json,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct Common {
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = OutputFormat::Json)]
    pub(crate) format: OutputFormat,

    /// Instead of the report, write out each run's derivation with its numbers: which rows, which
    /// formula and method, which checks and why.
    #[arg(long)]
    pub(crate) explain: bool,

    /// Failed warnings reject a run too (exit 1).
    #[arg(long)]
    pub(crate) strict: bool,

    /// Diagnostics on stderr: for people, or one JSON object per line for programs.
    #[arg(long, value_enum, default_value_t = ErrorFormat::Human)]
    pub(crate) error_format: ErrorFormat,

    /// Copy the input through, unchanged and as it arrives, to stderr, so a piped benchmark still
    /// shows live: `vllm bench serve ... 2>&1 | bench-normalize --tee`. Takes no value: a name
    /// after it is an input (to copy into a file, --tee-file).
    #[arg(long, conflicts_with = "tee_file")]
    pub(crate) tee: bool,

    /// Copy the input through, as --tee does, into the file PATH (created, or emptied once every
    /// check has passed). A PATH that is one of the inputs (by any name: a symlink, a hard link),
    /// standard input's file, or the file standard output goes to is refused (exit 2).
    #[arg(long, value_name = "PATH")]
    pub(crate) tee_file: Option<PathBuf>,

    /// Also load the parser definitions (*.toml) in this folder; one with the id of a built-in
    /// replaces it. Default: $BENCH_NORMALIZE_PARSERS.
    #[arg(long, value_name = "DIR", env = "BENCH_NORMALIZE_PARSERS")]
    pub(crate) parsers: Option<PathBuf>,

    /// Also write every diagnostic into PATH (created, or emptied once it is known to be no
    /// input): exactly the lines said on stderr, without colour, JSON Lines with --error-format
    /// json; with `run`, without the client's output that stderr shows too. A PATH that is an
    /// input, or the file stdout or stderr goes to, is refused (exit 2); a write that fails is
    /// exit 4. Default: $BENCH_NORMALIZE_DIAGNOSTICS_FILE (when set and not empty).
    #[arg(long, value_name = "PATH")]
    pub(crate) diagnostics_file: Option<PathBuf>,

    /// decode-capacity / decode-within-e2e: how far a claimed TPOT may exceed its bound.
    #[arg(long, value_name = "FACTOR", default_value_t = Tolerances::default().capacity)]
    pub(crate) capacity_tolerance: f64,

    /// e2e-capacity: how far requests x E2E may exceed concurrency x duration.
    #[arg(long, value_name = "FACTOR", default_value_t = Tolerances::default().e2e_capacity)]
    pub(crate) e2e_capacity_tolerance: f64,

    /// throughput-totals: relative slack beyond the rounding of the printed digits.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().throughput)]
    pub(crate) throughput_tolerance: f64,

    /// tpot-agreement: relative difference allowed between claimed and derived TPOT.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().tpot_agreement)]
    pub(crate) tpot_tolerance: f64,

    /// itl-is-per-chunk: ITL / TPOT above this means chunks carry several tokens.
    #[arg(long, value_name = "RATIO", default_value_t = Tolerances::default().itl_chunk_ratio)]
    pub(crate) itl_chunk_ratio: f64,

    /// token-count-source: relative difference allowed between server and retokenized totals.
    #[arg(long, value_name = "FRACTION", default_value_t = Tolerances::default().token_count)]
    pub(crate) token_count_tolerance: f64,

    /// Service-level objectives to judge each accepted run on, comma-separated:
    /// `ttft.p99<=2000,tpot.mean<=40,e2e.p50<=10s,decode_rate>=50`. Metrics ttft, tpot (the derived
    /// TPOT), itl (per-token ITL only), e2e with a statistic (mean, median, min, max, pN), and
    /// decode_rate, output_throughput, request_throughput; ops <=, <, >=, >; limits in ms (or `s`),
    /// tok/s, req/s. An objective not met (missed, not available, not comparable) is exit 7.
    /// Default: $BENCH_NORMALIZE_SLO (when set and not empty).
    #[arg(long, value_name = "OBJECTIVES", value_parser = parse_slo)]
    pub(crate) slo: Option<Objectives>,
}

/// `--tool-version`'s value: one word of printable characters.
fn parse_tool_version(v: &str) -> Result<String, String> {
    let v = v.trim();
    if v.is_empty() || v.len() > 100 || !v.chars().all(|c| c.is_ascii_graphic()) {
        return Err(format!("{v:?} is no version (one word, e.g. 0.11.0)"));
    }
    Ok(v.to_string())
}

/// `--slo`'s value, read by [`bench_normalize_core::objectives::parse`] (a bad spec is exit 2).
fn parse_slo(spec: &str) -> Result<Objectives, bench_normalize_core::objectives::SpecError> {
    bench_normalize_core::objectives::parse(spec)
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorFormat {
    Human,
    Json,
}
