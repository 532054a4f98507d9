//! The report on stdout, in the format asked for: runs written as they come (JSON, JSON Lines,
//! CSV, llm-d), or collected to the end (table, dstack); the exit code each run's verdict gives.

use std::io::{self, Write};

use crate::args::{Common, ErrorFormat};
use crate::diagnostics::{color_on, is_broken_pipe, report_checks, report_error, report_objective, report_warning};
use bench_normalize_core::emit::{self, OutputFormat};
use bench_normalize_core::objectives::Objectives;
use bench_normalize_core::pipeline::{Out, Render};
use bench_normalize_core::report::Verdict;
use bench_normalize_core::{Error, ExitCode, Run};

/// What one input gave, kept to be reported in input order.
pub(crate) enum Event {
    Run(Box<Run>),
    Diagnostic(Error),
}

/// A sink told how its input is read.
pub(crate) trait Reading {
    /// `streams`: the input is a pipe, a terminal or copied live (`--tee`): someone may be waiting
    /// for each run as its block ends. Otherwise it is a file read to its end anyway.
    fn reading(&mut self, _streams: bool) {}
}

#[derive(Default)]
pub(crate) struct Collected(pub(crate) Vec<Event>);

impl Reading for Collected {}

impl Out for Collected {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.0.push(Event::Run(Box::new(run)));
        Ok(())
    }

    fn diagnostic(&mut self, error: Error) {
        self.0.push(Event::Diagnostic(error));
    }
}

/// Collects runs for one JSON document, or prints each as it completes (JSONL).
pub(crate) struct Output<W: Write> {
    out: W,
    format: OutputFormat,
    runs: Vec<Run>,
    rejected: bool,
    error_format: ErrorFormat,
    pub(crate) worst: ExitCode,
    strict: bool,
    csv: emit::CsvWriter,
    /// The JSON document, written a run at a time.
    json: emit::JsonReport,
    to_terminal: bool,
    /// The input being read streams ([`Reading`]).
    input_streams: bool,
    /// `--slo`: each run is judged on these before it is written.
    objectives: Option<Objectives>,
}

impl<W: Write> Reading for Output<W> {
    fn reading(&mut self, streams: bool) {
        self.input_streams = streams;
    }
}

impl<W: Write> Output<W> {
    /// An output of `format` to `out` (a terminal when `to_terminal`: pretty JSON, colour), with
    /// the command line's error format and strictness.
    pub(crate) fn new(out: W, format: OutputFormat, c: &Common, to_terminal: bool) -> Output<W> {
        Output {
            out,
            format,
            runs: Vec::new(),
            rejected: false,
            error_format: c.error_format,
            worst: ExitCode::Ok,
            strict: c.strict,
            csv: emit::CsvWriter::new(),
            json: emit::JsonReport::new(to_terminal),
            to_terminal,
            input_streams: false,
            objectives: c.slo.clone(),
        }
    }

    /// `--slo`: judge the run on the objectives (written into its report), and say on stderr
    /// each objective an accepted run does not meet (exit 7, below every other code).
    fn judge(&mut self, run: &mut Run) {
        let Some(list) = &self.objectives else { return };
        let results = bench_normalize_core::objectives::judge(list, run);
        for r in results.iter().filter(|r| bench_normalize_core::objectives::is_missed(r)) {
            self.worst = self.worst.max(ExitCode::ObjectivesMissed);
            report_objective(self.error_format, run, r);
        }
        run.objectives = Some(results);
    }

    pub(crate) fn code(&self) -> ExitCode {
        if self.rejected { self.worst.max(ExitCode::Rejected) } else { self.worst }
    }

    /// Hand what one input's reading collected on to this sink, in order; a failed stdout stops
    /// it (the error is returned).
    pub(crate) fn replay(&mut self, got: Collected) -> Result<(), Error> {
        for event in got.0 {
            match event {
                Event::Run(run) => self.run(*run)?,
                Event::Diagnostic(e) => self.diagnostic(e),
            }
        }
        Ok(())
    }

    /// The exit code when the output failed, which ends the run: a closed stdout (`| head`) is
    /// no error; another failure (a full disk) is said once.
    pub(crate) fn stopped(&self, format: ErrorFormat, e: &Error) -> ExitCode {
        if is_broken_pipe(e) {
            return self.code();
        }
        report_error(format, e);
        self.code().max(ExitCode::Io)
    }

    /// What was written of a run; a streamed run is flushed when someone is watching (stdout is
    /// a terminal, so that it keeps pace with stderr) or waiting (the input streams, `tail -f
    /// log |`). A file read whole goes out a buffer at a time.
    fn written(&mut self, written: io::Result<()>) -> Result<(), Error> {
        let flush = self.format.streams() && (self.input_streams || self.to_terminal);
        written
            .and_then(|_| if flush { self.out.flush() } else { Ok(()) })
            .map_err(|source| Error::Write { output: "stdout".into(), source })
    }

    /// Every failed check of a run is said on stderr, one line each (a rejected run's rules, a
    /// failed warning of any run: with `-f dstack` the report holds no check), and the verdict
    /// sets the exit code.
    fn note_verdict(&mut self, run: &Run) {
        match run.verdict {
            Verdict::Rejected => self.rejected = true,
            // Nothing usable: exit 3, as for an input with no result, and say what is missing.
            Verdict::Unusable => self.worst = self.worst.max(ExitCode::NoResult),
            Verdict::Accepted => {}
        }
        report_checks(self.error_format, run, self.strict);
    }

    /// Whether a run goes into a format a consumer stores ([`unfit_to_store`]); a run held back
    /// for its client's failure is said so (a rejected one is said already).
    fn fit_to_store(&self, run: &Run, format: &str) -> bool {
        match unfit_to_store(run) {
            None => true,
            Some(why) => {
                if run.verdict == Verdict::Accepted {
                    report_warning(self.error_format, run, &format!("{format}: not written: {why}"));
                }
                false
            }
        }
    }

    /// Write what the format collects until the end (table, dstack objects), or the end of the
    /// JSON document.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        if self.format == OutputFormat::Json {
            self.json.finish(&mut self.out)?;
        }
        let runs = std::mem::take(&mut self.runs);
        if !runs.is_empty() {
            match self.format {
                OutputFormat::Table => self.out.write_all(emit::table(&runs, color_on(self.to_terminal)).as_bytes())?,
                OutputFormat::Dstack => {
                    let mut all = Vec::new();
                    // A rejected run (said on stderr, exit 1) is not written: what dstack stores
                    // must be figures that passed every rule.
                    let fit: Vec<&Run> = runs.iter().filter(|r| self.fit_to_store(r, "dstack")).collect();
                    for run in fit {
                        match emit::dstack(run) {
                            Ok(v) => all.push((run, v)),
                            Err(u) => {
                                let e = unwritable(run, "dstack's benchmark metrics", &u);
                                report_error(self.error_format, &e);
                                self.worst = self.worst.max(e.exit_code());
                            }
                        }
                    }
                    if let Some(value) = emit::dstack_document(runs.len(), all) {
                        serde_json::to_writer_pretty(&mut self.out, &value)?;
                        self.out.write_all(b"\n")?;
                    }
                }
                OutputFormat::DstackE2e => {
                    let mut all = Vec::new();
                    for run in runs.iter().filter(|r| self.fit_to_store(r, "dstack-e2e")) {
                        let (metrics, warnings) = emit::dstack_e2e_metrics(run);
                        for w in warnings {
                            report_warning(self.error_format, run, &format!("dstack-e2e: {w}"));
                        }
                        all.push((run, metrics));
                    }
                    if let Some(value) = emit::dstack_document(runs.len(), all) {
                        serde_json::to_writer_pretty(&mut self.out, &value)?;
                        self.out.write_all(b"\n")?;
                    }
                }
                OutputFormat::Json
                | OutputFormat::Jsonl
                | OutputFormat::Csv
                | OutputFormat::LlmdBr
                | OutputFormat::SglangSkill
                | OutputFormat::Explain => {}
            }
        }
        self.out.flush()
    }
}

impl<W: Write> Out for Output<W> {
    fn run(&mut self, mut run: Run) -> Result<(), Error> {
        self.note_verdict(&run);
        self.judge(&mut run);
        let written = match self.format {
            OutputFormat::Table | OutputFormat::Dstack | OutputFormat::DstackE2e => {
                self.runs.push(run);
                Ok(())
            }
            OutputFormat::Json => self.json.run(&mut self.out, &run),
            OutputFormat::Jsonl => emit::write_jsonl(&mut self.out, &run),
            OutputFormat::Csv => self.csv.write(&mut self.out, &run),
            OutputFormat::Explain => self.out.write_all(emit::explain(&run).as_bytes()),
            // What llm-d stores must pass every rule: a rejected or unusable run is said so (its
            // own diagnostic names why), not written.
            OutputFormat::LlmdBr if unfit_to_store(&run).is_some() => {
                let why = unfit_to_store(&run).unwrap_or_default();
                report_warning(self.error_format, &run, &format!("llmd-br: not written: {why}"));
                Ok(())
            }
            // A report with no figure is not written either (exit 5, as a run a format cannot hold).
            OutputFormat::LlmdBr => match bench_normalize_core::llmd::unwritable(&run) {
                None => bench_normalize_core::llmd::write_line(&mut self.out, &run),
                Some(why) => {
                    let u = emit::Unwritable {
                        problems: vec![why],
                        how: "give bench-normalize the client's whole output or its result file".into(),
                    };
                    let e = unwritable(&run, "an llm-d Benchmark Report", &u);
                    report_error(self.error_format, &e);
                    self.worst = self.worst.max(e.exit_code());
                    Ok(())
                }
            },
            OutputFormat::SglangSkill => serde_json::to_writer(&mut self.out, &emit::sglang_skill_row(&run))
                .map_err(std::io::Error::from)
                .and_then(|_| self.out.write_all(b"\n")),
        };
        self.written(written)
    }

    fn diagnostic(&mut self, error: Error) {
        // The exit code is at least the diagnostic's (a malformed JSON Lines line among good
        // ones is exit 3, as its `exit_code` says).
        self.worst = self.worst.max(error.exit_code());
        report_error(self.error_format, &error);
    }

    fn render(&self) -> Option<Render> {
        // A run judged on objectives is written with them: not rendered before it is judged.
        if self.objectives.is_some() {
            return None;
        }
        // A compact JSON document's runs are its JSON Lines lines, joined.
        (self.format == OutputFormat::Jsonl || self.format == OutputFormat::Json && !self.to_terminal)
            .then_some(render_jsonl)
    }

    fn rendered(&mut self, run: Run, bytes: Vec<u8>) -> Result<(), Error> {
        self.note_verdict(&run);
        let written = match self.format {
            OutputFormat::Json => self.json.compact(&mut self.out, &bytes),
            _ => self.out.write_all(&bytes),
        };
        self.written(written)
    }
}

/// The one rule of every format a consumer stores (dstack, dstack-e2e, llmd-br): no object
/// unless the run is fit to store: accepted by every rule, and, in `run` mode, measured by a
/// client that finished (exit status 0, no signal). Why not, otherwise.
pub(crate) fn unfit_to_store(run: &Run) -> Option<String> {
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

/// A run as its JSON Lines line (what [`emit::write_jsonl`] writes).
pub(crate) fn render_jsonl(run: &Run) -> Option<Vec<u8>> {
    let mut line = Vec::with_capacity(8 * 1024);
    emit::write_jsonl(&mut line, run).ok()?;
    Some(line)
}

/// The error for a run that an output format cannot hold.
pub(crate) fn unwritable(run: &Run, format: &str, u: &emit::Unwritable) -> Error {
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
