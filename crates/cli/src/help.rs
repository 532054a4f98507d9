//! What the command says about itself: the EXAMPLES of each command's `--help` (commands that work
//! on an installed binary: the files they name are the user's, never the repository's), the
//! manual pages (`man [SUBCOMMAND]`, `man --dir DIR`), the JSON Schemas of the output formats
//! (`schema`), and the agent skill (`skill`, `skill --install HARNESS`).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, ValueEnum};

use crate::args::{Cli, ErrorFormat};
use crate::diagnostics::report_error;
use crate::write_listing;
use bench_normalize_core::emit::OutputFormat;
use bench_normalize_core::{Error, ExitCode};

pub(crate) const EXAMPLES_MAIN: &str = "\
EXAMPLES:
  # A log or a result file: the canonical report, TPOT derived (never copied from ITL)
  bench-normalize run.log
  bench-normalize result.json -f table
  # Pipe a running benchmark through it, the client's output still shown live
  vllm bench serve --model M --percentile-metrics ttft,tpot,itl,e2el 2>&1 | bench-normalize --tee
  # An agent: run the client through it and store stdout only on exit 0
  bench-normalize run -f dstack --error-format json -- vllm bench serve --model M
  # The schema of an output format, strict for structured outputs
  bench-normalize schema --format dstack --strict
  # Per-command help and manual pages
  bench-normalize help run; bench-normalize man run | man -l -";

pub(crate) const EXAMPLES_CHECK: &str = "\
EXAMPLES:
  # A report written by hand (canonical, or dstack's preset shape)
  bench-normalize check report.json
  # What an agent is about to store, from standard input
  bench-normalize run.log -f dstack | bench-normalize check -
  # Diagnostics one JSON object a line
  bench-normalize check --error-format json --strict benchmark.json";

pub(crate) const EXAMPLES_RUN: &str = "\
EXAMPLES:
  # vLLM: flags for exact figures added (--save-result, --percentile-metrics, ...)
  bench-normalize run -f dstack -- vllm bench serve --model M --max-concurrency 4 --num-prompts 16
  # SGLang, keeping the client's log and result file
  bench-normalize run --keep out -- python -m sglang.bench_serving --backend sglang --num-prompts 16
  # Judge the run on objectives (exit 7 when one is missed)
  bench-normalize run --slo 'ttft.p99<=2000,tpot.p99<=50' -f sglang-skill -- vllm bench serve --model M
  # A client too old for a flag run adds
  bench-normalize run --as-given -- vllm bench serve --model M";

pub(crate) const EXAMPLES_SWEEP: &str = "\
EXAMPLES:
  bench-normalize sweep c1.json c4.json c16.json c64.json
  bench-normalize sweep results/*.json -f markdown --group-by input";

pub(crate) const EXAMPLES_PLOT: &str = "\
EXAMPLES:
  bench-normalize plot results/*.json -o frontier.svg
  bench-normalize plot c1.log c4.log c16.log -o - > frontier.svg
  # The store's history: the per-user decode rate over commits, the newest run's baseline as a band
  bench-normalize plot --history per-user --by commit --label branch=main -o history.svg";

pub(crate) const EXAMPLES_COMPARE: &str = "\
EXAMPLES:
  # Baseline against one or more configurations, runs lined up by workload
  bench-normalize compare baseline/ tuned/
  bench-normalize compare before.json after.json -f markdown
  # Two models on the same workload
  bench-normalize compare a.json b.json --key concurrency,rate,input,output";

#[cfg(feature = "store")]
pub(crate) const EXAMPLES_STORE: &str = "\
EXAMPLES:
  # Store the accepted runs of a log and a result file, labelled with the commit
  bench-normalize store add run.log result.json --label commit=abc123 --label gpu=h100
  # Where it is: --store PATH, or the variable
  bench-normalize store --store runs.sqlite list
  bench-normalize store list --label commit=abc123 --last 20
  # A history shared by a team: a PostgreSQL database instead of a file
  bench-normalize store add run.log --store postgresql://bench@db.internal:5432/bench --label gpu=h100
  bench-normalize store show 12
  # For DuckDB, a notebook, a spreadsheet
  bench-normalize store export --format csv > runs.csv";

pub(crate) const EXAMPLES_AGGREGATE: &str = "\
EXAMPLES:
  # Five repetitions of one configuration: median, interval and CV per figure
  bench-normalize aggregate rep1.json rep2.json rep3.json rep4.json rep5.json
  # The same as JSON, with a 99% interval
  bench-normalize aggregate reps/*.log --confidence 0.99 --format json";

#[cfg(feature = "store")]
pub(crate) const EXAMPLES_REGRESS: &str = "\
EXAMPLES:
  # CI: judge tonight's run against the last 10 stored runs of its workload (exit 8: regression)
  bench-normalize regress run.log --store runs.sqlite >> \"$GITHUB_STEP_SUMMARY\"
  # Against the runs labelled branch=main, 3% as the smallest change, as JSON
  bench-normalize regress new/*.json --baseline-label branch=main --min-change 0.03 --format json
  # Repetitions on both sides: a rank test instead of Welch's t-test
  bench-normalize regress rep1.json rep2.json rep3.json --baseline-last 5 --test mann-whitney
  # Against the last week's runs only
  bench-normalize regress run.json --baseline-within 7d";

pub(crate) const EXAMPLES_SCHEMA: &str = "\
EXAMPLES:
  # The canonical report
  bench-normalize schema
  # One output format, and its strict variant (OpenAI strict mode, Claude --json-schema)
  bench-normalize schema --format dstack
  bench-normalize schema --format jsonl --strict > run.schema.json
  claude -p 'summarize the benchmark' --json-schema \"$(bench-normalize schema -f dstack --strict)\"";

pub(crate) const EXAMPLES_PARSERS: &str = "\
EXAMPLES:
  bench-normalize parsers
  bench-normalize parsers -f json --parsers ./my-parsers";

pub(crate) const EXAMPLES_COMPLETIONS: &str = "\
EXAMPLES:
  bench-normalize completions bash > ~/.local/share/bash-completion/completions/bench-normalize
  bench-normalize completions zsh > ~/.zfunc/_bench-normalize";

pub(crate) const EXAMPLES_MAN: &str = "\
EXAMPLES:
  bench-normalize man | man -l -
  bench-normalize man run | man -l -
  # Every page, bench-normalize.1 and bench-normalize-SUBCOMMAND.1
  bench-normalize man --dir ~/.local/share/man/man1";

#[cfg(feature = "mcp")]
pub(crate) const EXAMPLES_MCP: &str = "\
EXAMPLES:
  # Register it with Claude Code, reading benchmark files below /data/bench only
  claude mcp add bench-normalize -- bench-normalize mcp --root /data/bench
  # A harness with an mcpServers map runs the same command:
  #   {\"mcpServers\": {\"bench-normalize\": {\"command\": \"bench-normalize\", \"args\": [\"mcp\"]}}}
  bench-normalize mcp --root . --max-bytes 67108864";

pub(crate) const EXAMPLES_SKILL: &str = "\
EXAMPLES:
  # Print the skill (SKILL.md)
  bench-normalize skill
  # Install it for Claude Code (~/.claude/skills/bench-normalize/SKILL.md), or in this project
  bench-normalize skill --install claude
  bench-normalize skill --install claude --project
  # Codex, and other agents that read ~/.agents/skills
  bench-normalize skill --install codex
  # An older Codex that reads $CODEX_HOME/skills
  mkdir -p ~/.codex/skills/bench-normalize && bench-normalize skill > ~/.codex/skills/bench-normalize/SKILL.md";

/// The agent skill, as shipped in the repository (`skills/bench-normalize/SKILL.md`).
pub(crate) const SKILL: &str = include_str!("../../../skills/bench-normalize/SKILL.md");

/// The harnesses `skill --install` writes for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Harness {
    /// Claude Code: ~/.claude/skills (./.claude/skills with --project)
    Claude,
    /// Codex: ~/.agents/skills (./.agents/skills with --project), where its documentation says it
    /// reads user and repository skills
    Codex,
    /// The folder several agents read (Codex among them): ~/.agents/skills (./.agents/skills with
    /// --project)
    Agents,
}

/// The folder the skill is written in: `<root>/skills/bench-normalize`.
pub(crate) fn skill_dir(harness: Harness, project: bool) -> Result<PathBuf, String> {
    let dot = match harness {
        Harness::Claude => ".claude",
        Harness::Codex | Harness::Agents => ".agents",
    };
    let root = if project {
        PathBuf::from(dot)
    } else {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or("HOME is not set: give --project")?;
        Path::new(&home).join(dot)
    };
    Ok(root.join("skills").join("bench-normalize"))
}

/// `skill`: print SKILL.md, or write it where `harness` reads skills. A SKILL.md already there
/// that differs from this one (edited, or another version's) is kept unless `force`: exit 2.
pub(crate) fn skill(install: Option<Harness>, project: bool, force: bool) -> ExitCode {
    let Some(harness) = install else { return write_listing(SKILL.as_bytes()) };
    let dir = match skill_dir(harness, project) {
        Ok(d) => d,
        Err(why) => {
            eprintln!("bench-normalize: skill: {why}");
            return ExitCode::Usage;
        }
    };
    let path = dir.join("SKILL.md");
    match std::fs::read(&path) {
        Ok(old) if old == SKILL.as_bytes() => {
            eprintln!("bench-normalize: skill: {} is already this version", path.display());
            return ExitCode::Ok;
        }
        Ok(_) if !force => {
            eprintln!(
                "bench-normalize: skill: {} exists and differs from this version's skill; kept (give --force to \
                 replace it)",
                path.display()
            );
            return ExitCode::Usage;
        }
        _ => {}
    }
    // Written beside it and renamed over it: a SKILL.md is whole or absent.
    let written = std::fs::create_dir_all(&dir).and_then(|_| {
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
        tmp.write_all(SKILL.as_bytes())?;
        tmp.persist(&path).map(|_| ()).map_err(|e| e.error)
    });
    match written {
        Ok(()) => {
            eprintln!("bench-normalize: skill: wrote {}", path.display());
            ExitCode::Ok
        }
        Err(source) => {
            report_error(ErrorFormat::Human, &Error::Write { output: path.display().to_string(), source });
            ExitCode::Io
        }
    }
}

/// `man`: the top page, one subcommand's page, or every page written into `dir`.
pub(crate) fn man(subcommand: Option<String>, dir: Option<PathBuf>) -> ExitCode {
    let cmd = Cli::command();
    if let Some(dir) = dir {
        return match std::fs::create_dir_all(&dir).and_then(|_| clap_mangen::generate_to(cmd, &dir)) {
            Ok(()) => ExitCode::Ok,
            Err(source) => {
                report_error(ErrorFormat::Human, &Error::Write { output: dir.display().to_string(), source });
                ExitCode::Io
            }
        };
    }
    let page = match subcommand {
        None => cmd,
        Some(name) => {
            let mut cmd = cmd;
            cmd.build();
            match cmd.find_subcommand(&name) {
                Some(sub) => sub.clone().name(leak(format!("bench-normalize-{name}"))),
                None => {
                    let names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
                    eprintln!("bench-normalize: man: no subcommand `{name}` (one of: {})", names.join(", "));
                    return ExitCode::Usage;
                }
            }
        }
    };
    let mut out = Vec::new();
    match clap_mangen::Man::new(page).render(&mut out) {
        Ok(()) => write_listing(&out),
        Err(source) => {
            report_error(ErrorFormat::Human, &Error::Write { output: "stdout".into(), source });
            ExitCode::Io
        }
    }
}

/// `schema`: the canonical report's, or one output format's, strict or not.
pub(crate) fn schema(format: Option<OutputFormat>, strict: bool) -> ExitCode {
    let schema = match bench_normalize_core::output_schema::schema(format.unwrap_or(OutputFormat::Json), strict) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("bench-normalize: schema: {why}");
            return ExitCode::Usage;
        }
    };
    let mut text = serde_json::to_vec_pretty(&schema).expect("the schema serializes");
    text.push(b'\n');
    write_listing(&text)
}

/// A page's name lives as long as the process (clap's names are `'static`).
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}
