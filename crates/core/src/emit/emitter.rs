//! One dispatch for every output format: each run written as it comes (JSON, JSON Lines, CSV,
//! llm-d, the SGLang skill's rows, explanations) or collected and written whole at the end (the
//! table, dstack's objects), and the one rule of the formats a consumer stores: no object for a
//! run unfit to store ([`unfit_to_store`]). The command line, the Python module and the MCP
//! server all write through an [`Emitter`]; what it has to say about a run (not written, written
//! with a caveat, a format that cannot hold it) goes to the caller as a [`Notice`].

use std::io::{self, Write};

use super::{CsvWriter, JsonReport, OutputFormat, Unwritable};
use crate::Error;
use crate::report::{Run, Verdict};

/// What an emitter says about a run, for its caller to report.
#[derive(Debug)]
pub enum Notice {
    /// The run was not written, or was written with a caveat (exit status unchanged).
    Warning(String),
    /// The format cannot hold the run (exit 5): it was not written.
    Error(Error),
}

/// How a run is rendered ahead of time (on another thread), to be handed to
/// [`Emitter::rendered`]: its JSON Lines line.
pub type Render = fn(&Run) -> Option<Vec<u8>>;

/// The output of one format, fed one run at a time.
pub struct Emitter {
    format: OutputFormat,
    /// Pretty JSON and colour (a terminal).
    pretty: bool,
    color: bool,
    /// The runs of a format written whole at the end.
    runs: Vec<Run>,
    csv: CsvWriter,
    /// The JSON document, written a run at a time.
    json: JsonReport,
}

impl Emitter {
    /// An emitter of `format`; `pretty`: JSON indented and the table coloured (a terminal).
    pub fn new(format: OutputFormat, pretty: bool, color: bool) -> Emitter {
        Emitter { format, pretty, color, runs: Vec::new(), csv: CsvWriter::new(), json: JsonReport::new(pretty) }
    }

    /// The format written.
    pub fn format(&self) -> OutputFormat {
        self.format
    }

    /// One more run: written now, or kept for [`Emitter::finish`] (table, dstack).
    pub fn run(&mut self, out: &mut dyn Write, run: Run, say: &mut dyn FnMut(&Run, Notice)) -> io::Result<()> {
        match self.format {
            OutputFormat::Table | OutputFormat::Dstack | OutputFormat::DstackE2e => {
                self.runs.push(run);
                Ok(())
            }
            OutputFormat::Json => self.json.run(out, &run),
            OutputFormat::Jsonl => super::write_jsonl(out, &run),
            OutputFormat::Csv => self.csv.write(out, &run),
            OutputFormat::Explain => out.write_all(super::explain(&run).as_bytes()),
            OutputFormat::LlmdBr => {
                if fit_to_store(&run, "llmd-br", say) {
                    // A report with no figure is not written either (exit 5, as a run a format
                    // cannot hold).
                    match crate::llmd::unwritable(&run) {
                        None => crate::llmd::write_line(out, &run)?,
                        Some(why) => {
                            let u = Unwritable {
                                problems: vec![why],
                                how: "give bench-normalize the client's whole output or its result file".into(),
                            };
                            say(&run, Notice::Error(unwritable(&run, "an llm-d Benchmark Report", &u)));
                        }
                    }
                }
                Ok(())
            }
            OutputFormat::SglangSkill => serde_json::to_writer(&mut *out, &super::sglang_skill_row(&run))
                .map_err(io::Error::from)
                .and_then(|_| out.write_all(b"\n")),
        }
    }

    /// How this format's runs may be rendered ahead of time: JSON Lines, and a compact JSON
    /// document (whose runs are its JSON Lines lines, joined). None for the other formats.
    pub fn render(&self) -> Option<Render> {
        (self.format == OutputFormat::Jsonl || self.format == OutputFormat::Json && !self.pretty)
            .then_some(render_jsonl)
    }

    /// One more run, as [`Emitter::render`]'s function rendered it.
    pub fn rendered(&mut self, out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        match self.format {
            OutputFormat::Json => self.json.compact(out, bytes),
            _ => out.write_all(bytes),
        }
    }

    /// Write what the format collects until the end (the table, dstack's objects), or the end of
    /// the JSON document.
    pub fn finish(&mut self, out: &mut dyn Write, say: &mut dyn FnMut(&Run, Notice)) -> io::Result<()> {
        if self.format == OutputFormat::Json {
            self.json.finish(out)?;
        }
        let runs = std::mem::take(&mut self.runs);
        if runs.is_empty() {
            return Ok(());
        }
        let mut all = Vec::new();
        match self.format {
            OutputFormat::Table => return out.write_all(super::table(&runs, self.color).as_bytes()),
            OutputFormat::Dstack => {
                // A rejected run (said on stderr, exit 1) is not written: what dstack stores must
                // be figures that passed every rule.
                for run in &runs {
                    if !fit_to_store(run, "dstack", say) {
                        continue;
                    }
                    match super::dstack(run) {
                        Ok(v) => all.push((run, v)),
                        Err(u) => say(run, Notice::Error(unwritable(run, "dstack's benchmark metrics", &u))),
                    }
                }
            }
            OutputFormat::DstackE2e => {
                for run in &runs {
                    if !fit_to_store(run, "dstack-e2e", say) {
                        continue;
                    }
                    let (metrics, warnings) = super::dstack_e2e_metrics(run);
                    for w in warnings {
                        say(run, Notice::Warning(format!("dstack-e2e: {w}")));
                    }
                    all.push((run, metrics));
                }
            }
            OutputFormat::Json
            | OutputFormat::Jsonl
            | OutputFormat::Csv
            | OutputFormat::LlmdBr
            | OutputFormat::SglangSkill
            | OutputFormat::Explain => return Ok(()),
        }
        if let Some(value) = super::dstack_document(runs.len(), all) {
            serde_json::to_writer_pretty(&mut *out, &value)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// Whether a run goes into a format a consumer stores ([`unfit_to_store`]); a run held back is
/// said so, whatever the reason (a rejected run's own diagnostics say which rule).
fn fit_to_store(run: &Run, format: &str, say: &mut dyn FnMut(&Run, Notice)) -> bool {
    match unfit_to_store(run) {
        None => true,
        Some(why) => {
            say(run, Notice::Warning(format!("{format}: not written: {why}")));
            false
        }
    }
}

/// The one rule of every format a consumer stores (dstack, dstack-e2e, llmd-br): no object
/// unless the run is fit to store: accepted by every rule, and, in `run` mode, measured by a
/// client that finished (exit status 0, no signal). Why not, otherwise.
pub fn unfit_to_store(run: &Run) -> Option<String> {
    if run.verdict != Verdict::Accepted {
        return Some(format!("the run is {}", run.verdict.as_str()));
    }
    let client = run.source.run.as_ref()?;
    match (client.exit_code, client.signal) {
        (Some(0), None) => None,
        (Some(c), _) => Some(format!("the client failed (exit status {c}): its run did not finish as asked")),
        (None, Some(s)) => Some(format!("the client was ended by signal {s}: its run did not finish as asked")),
        (None, None) => Some("the client failed".into()),
    }
}

/// A run as its JSON Lines line (what [`super::write_jsonl`] writes).
fn render_jsonl(run: &Run) -> Option<Vec<u8>> {
    let mut line = Vec::with_capacity(8 * 1024);
    super::write_jsonl(&mut line, run).ok()?;
    Some(line)
}

/// The error for a run that an output format cannot hold.
fn unwritable(run: &Run, format: &str, u: &Unwritable) -> Error {
    let at = match run.source.first_line {
        Some(l) => format!("{}:{l}", run.source.input),
        None => run.source.input.clone(),
    };
    Error::Unwritable {
        at,
        input: run.source.input.clone(),
        line: run.source.first_line,
        run: run.source.block,
        format: format.to_string(),
        message: u.message(),
    }
}
