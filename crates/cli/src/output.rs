//! The report on stdout, in the format asked for: runs written as they come (JSON, JSON Lines,
//! CSV, llm-d), or collected to the end (table, dstack); the exit code each run's verdict gives.

use std::io::{self, Write};

use crate::args::{Common, ErrorFormat};
use crate::diagnostics::{color_on, is_broken_pipe, report_checks, report_error, report_objective, report_warning};
use bench_normalize_core::emit::{Emitter, Notice, OutputFormat};
use bench_normalize_core::objectives::Objectives;
use bench_normalize_core::pipeline::{Out, Render};
use bench_normalize_core::report::Verdict;
use bench_normalize_core::{Error, ExitCode, Run};

/// Standard output for the report, written through: `io::Stdout` is line-buffered, and looks for
/// the last newline of every write it is given, a second pass over the whole report (2.5% of the
/// scanning thread on a dense log). The report is buffered by the [`Output`]'s `BufWriter`
/// already. Written through a duplicate of the descriptor; where there is none (stdout closed,
/// not Unix), through the locked `io::Stdout`.
pub(crate) enum Stdout {
    Fd(std::fs::File),
    Locked(io::StdoutLock<'static>),
}

impl Stdout {
    pub(crate) fn new() -> Stdout {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() {
                return Stdout::Fd(std::fs::File::from(fd));
            }
        }
        Stdout::Locked(io::stdout().lock())
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stdout::Fd(f) => f.write(buf),
            Stdout::Locked(l) => l.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stdout::Fd(f) => f.flush(),
            Stdout::Locked(l) => l.flush(),
        }
    }
}

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

/// The report on stdout through the format's [`Emitter`], with what the command line adds: each
/// run's verdict said on stderr and turned into the exit code, `--slo`, and flushing for whoever
/// watches.
pub(crate) struct Output<W: Write> {
    out: W,
    emitter: Emitter,
    rejected: bool,
    error_format: ErrorFormat,
    pub(crate) worst: ExitCode,
    strict: bool,
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
            emitter: Emitter::new(format, to_terminal, color_on(to_terminal)),
            rejected: false,
            error_format: c.error_format,
            worst: ExitCode::Ok,
            strict: c.strict,
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
        let flush = self.emitter.format().streams() && (self.input_streams || self.to_terminal);
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

    /// What the emitter says about a run: a warning, or an error (exit 5) for a run the format
    /// cannot hold.
    fn say(error_format: ErrorFormat, worst: &mut ExitCode) -> impl FnMut(&Run, Notice) + '_ {
        move |run, notice| match notice {
            Notice::Warning(message) => report_warning(error_format, run, &message),
            Notice::Error(e) => {
                report_error(error_format, &e);
                *worst = (*worst).max(e.exit_code());
            }
        }
    }

    /// Write what the format collects until the end (table, dstack objects), or the end of the
    /// JSON document.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        self.emitter.finish(&mut self.out, &mut Self::say(self.error_format, &mut self.worst))?;
        self.out.flush()
    }
}

impl<W: Write> Out for Output<W> {
    fn run(&mut self, mut run: Run) -> Result<(), Error> {
        self.note_verdict(&run);
        self.judge(&mut run);
        let written = self.emitter.run(&mut self.out, run, &mut Self::say(self.error_format, &mut self.worst));
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
        self.emitter.render()
    }

    fn rendered(&mut self, run: Run, bytes: Vec<u8>) -> Result<(), Error> {
        self.note_verdict(&run);
        let written = self.emitter.rendered(&mut self.out, &bytes);
        self.written(written)
    }
}
