//! `bench-normalize-cli`: the `bench-normalize` command (the root package's binary calls
//! [`main`]): arguments (`args`) and their dispatch here, the reading of inputs (`inputs`), the
//! output (`output`), the copy of the input (`--tee`, `tee`), the diagnostics on stderr
//! (`diagnostics`), and `run`'s client process (`client`).
//!
//! The top layer (docs/architecture.md): it drives the pipeline's speed machinery (a second
//! thread per input, runs rendered there) through `bench-normalize-core`'s hidden modules, which
//! are not the library's API.

mod args;
mod client;
mod compare;
mod diagnostics;
mod help;
mod inputs;
#[cfg(feature = "mcp")]
mod mcp;
mod output;
#[cfg(feature = "store")]
mod store;
mod sweep;
mod tee;

/// The write guard every writer passes.
pub(crate) mod guard;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Parser;

use args::{Cli, Command, ErrorFormat, ListFormat};
use bench_normalize_core::error::printable;
use bench_normalize_core::{Definitions, Error, ExitCode};
use diagnostics::report_error;
use inputs::{normalize_inputs, run_client};

/// The `bench-normalize` command on the process's arguments, returning its exit code: the
/// binary's only call into this crate. It prints, and reads the process's standard input.
pub fn main() -> i32 {
    finish(dispatch())
}

/// The command's dispatch: its exit code before [`finish`].
fn dispatch() -> i32 {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            // clap quotes the arguments; one that would drive a terminal is said escaped.
            let hostile =
                args.iter().any(|a| a.to_string_lossy().chars().any(bench_normalize_core::error::needs_escape));
            return argument_error(&e, json_errors_asked(&args), hostile) as i32;
        }
    };
    let (files, common, reports_only) = match cli.command {
        Some(Command::Check { file, common }) => (vec![file], common, true),
        Some(Command::Run { common, keep, as_given, tool_version, command }) => {
            let settings = crate::client::Settings { keep, as_given, tool_version };
            return run_client(&command, &settings, common) as i32;
        }
        Some(Command::Sweep { sweep, format }) => return sweep::sweep_command(sweep, Some(format), None) as i32,
        Some(Command::Plot { plot, output }) => {
            #[cfg(feature = "store")]
            if plot.history.history.is_some() {
                return store::history_command(plot, output) as i32;
            }
            return sweep::sweep_command(plot.sweep(), None, Some(output)) as i32;
        }
        Some(Command::Compare(args)) => return compare::compare_sides(args) as i32,
        Some(Command::Aggregate(args)) => return sweep::aggregate_command(args) as i32,
        #[cfg(feature = "mcp")]
        Some(Command::Mcp { roots, max_bytes }) => return mcp::serve(roots, max_bytes) as i32,
        #[cfg(feature = "store")]
        Some(Command::Store(args)) => return store::store_command(args) as i32,
        #[cfg(feature = "store")]
        Some(Command::Regress(args)) => return store::regress_command(args) as i32,
        Some(Command::Schema { format, strict }) => return help::schema(format, strict) as i32,
        Some(Command::Parsers { format, parsers }) => return list_parsers(format, parsers) as i32,
        Some(Command::Completions { shell }) => {
            // Generated in memory (clap_complete panics on a failed write), then written.
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "bench-normalize",
                &mut script,
            );
            return write_listing(&script) as i32;
        }
        Some(Command::Man { subcommand, dir }) => return help::man(subcommand, dir) as i32,
        Some(Command::Skill { install, project, force }) => return help::skill(install, project, force) as i32,
        None => (cli.files, cli.common, false),
    };
    normalize_inputs(files, common, reports_only) as i32
}

/// The exit code `main` gave, raised to 4 when `--diagnostics-file` could not be written to the
/// end (4 outranks 0, 7, 1, 2 and 3; 5 and 6 outrank it).
pub(crate) fn finish(code: i32) -> i32 {
    if diagnostics::copy_failed() && matches!(code, 0 | 1 | 2 | 3 | 7 | 8) { ExitCode::Io as i32 } else { code }
}

/// `--diagnostics-file PATH` (or its variable; empty is none): opened through the write guard
/// (`guard`, the command's inputs), and every diagnostic from now on copied into it. A refusal is
/// said on stderr, and is the exit code.
pub(crate) fn open_diagnostics(path: Option<&Path>, guard: &guard::Guard, format: ErrorFormat) -> Result<(), ExitCode> {
    // Read here rather than by clap, which takes an empty variable for an empty value.
    let var = std::env::var_os(args::DIAGNOSTICS_VAR).filter(|v| !v.is_empty()).map(PathBuf::from);
    let Some(p) = path.map(Path::to_path_buf).or(var) else { return Ok(()) };
    let p = p.as_path();
    match guard.open_stream("--diagnostics-file", p) {
        Ok(f) => {
            diagnostics::copy_to(p.display().to_string(), f);
            Ok(())
        }
        Err(e) => {
            report_error(format, &e);
            Err(e.exit_code())
        }
    }
}

/// Whether the command line asks for JSON diagnostics (`--error-format json` or
/// `--error-format=json`, the last one said, before a `--`), read from the raw arguments: an
/// argument error happens before clap has parsed anything, and is said in the format asked for
/// anyway.
pub(crate) fn json_errors_asked(args: &[std::ffi::OsString]) -> bool {
    let mut json = false;
    let mut args = args.iter().skip(1).map(|a| a.to_str());
    while let Some(arg) = args.next() {
        match arg {
            Some("--") => break,
            Some("--error-format") => json = args.next().flatten() == Some("json"),
            Some(a) => {
                if let Some(v) = a.strip_prefix("--error-format=") {
                    json = v == "json";
                }
            }
            None => {}
        }
    }
    json
}

/// A command line clap refused (exit 2), or `--help` / `--version` (printed, exit 0). With JSON
/// diagnostics asked for, the error is one JSON object, as every other diagnostic is; for a
/// person, clap's own message, without colour and escaped when an argument (`hostile`) holds
/// a character that would drive the terminal (clap passes them through to a terminal).
pub(crate) fn argument_error(e: &clap::Error, json: bool, hostile: bool) -> ExitCode {
    if !e.use_stderr() {
        // --help, --version: the text is the output. A closed pipe is no error; a full disk is.
        return match e.print() {
            Err(source) if source.kind() != io::ErrorKind::BrokenPipe => {
                report_error(ErrorFormat::Human, &Error::Write { output: "stdout".into(), source });
                ExitCode::Io
            }
            _ => ExitCode::Ok,
        };
    }
    let plain = e.render().to_string();
    let mut err = io::stderr().lock();
    if json {
        // The message without clap's `error: ` and its usage and help lines (the paragraphs that
        // say what is wrong, and the possible values when it lists them).
        let message = plain
            .split("\n\n")
            .filter(|p| !p.starts_with("Usage:") && !p.starts_with("For more information"))
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n");
        let message = message.strip_prefix("error: ").unwrap_or(&message);
        let obj = serde_json::json!({
            "code": "usage",
            "message": message,
            "input": null,
            "line": null,
            "column": null,
            "exit_code": ExitCode::Usage as i32,
        });
        let _ = writeln!(err, "{obj}");
    } else if hostile {
        let _ = write!(err, "{}", plain.lines().map(|l| printable(l) + "\n").collect::<String>());
    } else {
        drop(err);
        let _ = e.print();
    }
    ExitCode::Usage
}

/// Write a listing (schema, parsers, completions, man page) to stdout: exit 0 once written, or
/// when the reader closed the pipe first (`| head`); exit 4, said on stderr, when it cannot be
/// written (a full disk).
pub(crate) fn write_listing(bytes: &[u8]) -> ExitCode {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::Ok,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::Ok,
        Err(source) => {
            report_error(ErrorFormat::Human, &Error::Write { output: "stdout".into(), source });
            ExitCode::Io
        }
    }
}

/// The built-in definitions, or those of `--parsers DIR` over them (loaded once, kept for the
/// life of the process).
pub(crate) fn load_definitions(dir: Option<&Path>) -> Result<&'static Definitions, Error> {
    match dir {
        None => Ok(Definitions::builtin()),
        Some(d) => Definitions::with_dir(d).map(|defs| &*Box::leak(Box::new(defs))),
    }
}

pub(crate) fn list_parsers(format: ListFormat, dir: Option<PathBuf>) -> ExitCode {
    let defs = match load_definitions(dir.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            report_error(ErrorFormat::Human, &e);
            return e.exit_code();
        }
    };
    let listing = bench_normalize_core::definition::listing(defs);
    let text = match format {
        ListFormat::Json => {
            let mut text = serde_json::to_string_pretty(&listing).expect("the listing serializes");
            text.push('\n');
            text
        }
        ListFormat::Table => {
            let mut t = comfy_table::Table::new();
            t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
                .set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
            t.set_header(["id", "tool", "format", "variants", "detected by", "from"]);
            for d in listing.as_array().into_iter().flatten() {
                let variants: Vec<&str> =
                    d["variants"].as_array().into_iter().flatten().filter_map(|v| v["id"].as_str()).collect();
                // Definitions given with --parsers are text from files: escaped as input text is.
                let row = [
                    d["id"].as_str().unwrap_or("").to_string(),
                    d["tool"].as_str().unwrap_or("").to_string(),
                    d["format"].as_str().unwrap_or("").to_string(),
                    variants.join(", "),
                    d["markers"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|m| m.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                    d["origin"].as_str().unwrap_or("").to_string(),
                ];
                t.add_row(row.iter().map(|c| printable(c).into_owned()).collect::<Vec<_>>());
            }
            format!("{t}\n")
        }
    };
    write_listing(text.as_bytes())
}
