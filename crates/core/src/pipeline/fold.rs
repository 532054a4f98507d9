//! Summary rows folded into the runs they repeat (a definition's `[fold]`: vllm-rs's `Sweep
//! Summary`, one row per sweep step, printed after every step's full result block).
//!
//! [`Fold`] stands between the pipeline and the output of one text input. A run a summary row may
//! repeat (of a definition and variant some `[fold]` names) is held, with every run after it (the
//! order of runs is kept), until a summary comes, or the input ends. A summary row that names such
//! a run (its key cell, `concurrency=4`, against the run's rows; the runs a summary repeats are
//! the last ones before it, in its order: see [`Fold::settle_summary`]) is then no run of its own:
//! each figure it repeats is compared with the run's, and the run carries the outcome as the check
//! [`RULE`]. A row that names no run read in the input (its block was cut away) stays a run.
//!
//! Live input: a run is not held over a read of the input that would wait (`tail -f`, a client
//! piped in), so each run still goes out as its block ends ([`Out::idle`]), and at most
//! [`HOLD`] runs are held. A summary row that repeats a run already handed out is still no run
//! of its own; its disagreement, which cannot be written into that run any more, is a diagnostic
//! with exit code 1 (the run was printed, but the input contradicts it).
//!
//! Why a disagreement rejects: one client process prints the step's block and, at the end, the
//! summary row from the same in-memory result, each figure rounded to the decimals shown. Two
//! printouts of one figure further apart than their two roundings (half a unit of the last digit
//! of each) cannot both be that figure: the log was edited, or the blocks and the summary are not
//! from the same sweep; either way a figure printed from it cannot be trusted.

use std::collections::VecDeque;

use crate::definition::FoldSpec;
use crate::error::Location;
use crate::pipeline::{Out, Render};
use crate::report::{self, Check, Note, RuleId, Status};
use crate::{Definitions, Error, Policy, Run};

/// The check a run gets when a summary row repeats it.
pub const RULE: RuleId = RuleId::SummaryAgreement;

/// Most runs held at once: beyond, the first is handed out (and may still be folded into, late).
const HOLD: usize = 64;

/// Most runs remembered as what a later summary row may repeat.
const REMEMBER: usize = 1024;

/// Which runs take part in folding: the summaries (definitions with a `[fold]`) and the runs they
/// may repeat. A pipelined read does not render these on its second thread (a check may still
/// be added to them).
#[derive(Clone, Copy)]
pub(crate) struct Involved<'d>(&'d Definitions);

impl<'d> Involved<'d> {
    pub(crate) fn new(defs: &'d Definitions) -> Self {
        Involved(defs)
    }

    fn summary(&self, run: &Run) -> Option<&'d FoldSpec> {
        self.0.get(&run.source.parser).and_then(|d| d.fold.as_ref())
    }

    fn repeated(&self, run: &Run) -> bool {
        self.0
            .iter()
            .filter_map(|d| d.fold.as_ref())
            .any(|f| f.folds_into(&run.source.parser, run.source.variant.as_deref()))
    }

    pub(crate) fn has(&self, run: &Run) -> bool {
        self.summary(run).is_some() || self.repeated(run)
    }
}

/// A run on its way out: whole, or rendered by the second thread (its outline and bytes).
enum Queued {
    Run(Run),
    Rendered(Run, Vec<u8>),
}

/// A run a summary row may repeat: its rows (field and printed value), and where it is.
struct Candidate {
    block: usize,
    parser: String,
    variant: Option<String>,
    first_line: Option<usize>,
    rows: Vec<(String, String)>,
    /// Still in the queue (a check can be added to it).
    held: bool,
}

pub(crate) struct Fold<'s, 'd> {
    sink: &'s mut dyn Out,
    involved: Involved<'d>,
    policy: Policy,
    input: String,
    queue: VecDeque<Queued>,
    candidates: VecDeque<Candidate>,
    /// The definition of the summary being read, and its rows so far (rows of one definition
    /// in a row are one summary, even where a foreign line cut its table in two).
    summary: Option<String>,
    rows: Vec<(Run, &'d FoldSpec)>,
}

impl<'s, 'd> Fold<'s, 'd> {
    pub(crate) fn new(sink: &'s mut dyn Out, defs: &'d Definitions, policy: Policy, input: &str) -> Self {
        Fold {
            sink,
            involved: Involved::new(defs),
            policy,
            input: input.to_string(),
            queue: VecDeque::new(),
            candidates: VecDeque::new(),
            summary: None,
            rows: Vec::new(),
        }
    }

    /// The input ended: every run held goes out.
    pub(crate) fn finish(&mut self) -> Result<(), Error> {
        self.settle_summary()?;
        self.release(usize::MAX)
    }

    /// Hand out the first `n` runs held.
    fn release(&mut self, n: usize) -> Result<(), Error> {
        for _ in 0..n {
            let Some(q) = self.queue.pop_front() else { break };
            let run = match &q {
                Queued::Run(r) | Queued::Rendered(r, _) => r,
            };
            let block = run.source.block;
            if let Some(c) = self.candidates.iter_mut().find(|c| c.block == block && c.held) {
                c.held = false;
            }
            match q {
                Queued::Run(r) => self.sink.run(r)?,
                Queued::Rendered(r, bytes) => self.sink.rendered(r, bytes)?,
            }
        }
        Ok(())
    }

    /// A run that is no row of the summary being read ends it.
    fn end_summary(&mut self, run: &Run) -> Result<(), Error> {
        if self.summary.as_ref().is_some_and(|parser| *parser != run.source.parser) {
            self.settle_summary()?;
        }
        Ok(())
    }

    /// The summary read whole: each row folded into the run it repeats, or handed on as a run;
    /// then what was held goes out, and a later summary repeats only runs after this one.
    ///
    /// The runs a summary repeats are the last ones before it, in its order (a client prints the
    /// steps, then their summary). From the last row back, a row's run is the latest candidate
    /// before the run of the next row that found one, passing over candidates that no row of the
    /// summary names (a step whose row was abridged away, a run of another kind): a row finds
    /// its run there or nowhere. So an earlier sweep's block of a step is never taken for this
    /// summary's row when this sweep's block of it is missing: blocks that this summary names lie
    /// between (the earlier sweep's other steps), and the row stays a run.
    fn settle_summary(&mut self) -> Result<(), Error> {
        if self.summary.take().is_none() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.rows);
        let keys: Vec<Option<Vec<(String, String)>>> =
            rows.iter().map(|(r, spec)| key_of(r, spec).map(|k| k.1)).collect();
        let mut matched = vec![None; rows.len()];
        if let Some((_, spec)) = rows.first() {
            let cands = &self.candidates;
            let named = |i: usize| keys.iter().flatten().any(|w| names(&cands[i], w, spec));
            let mut left: Vec<usize> =
                (0..cands.len()).filter(|i| spec.folds_into(&cands[*i].parser, cands[*i].variant.as_deref())).collect();
            for (k, wanted) in keys.iter().enumerate().rev() {
                let Some(wanted) = wanted else { continue };
                let mut j = left.len();
                while j > 0 && !named(left[j - 1]) {
                    j -= 1;
                }
                if j > 0 && names(&cands[left[j - 1]], wanted, spec) {
                    matched[k] = Some(left[j - 1]);
                    left.truncate(j - 1);
                }
            }
        }
        for ((row, spec), m) in rows.into_iter().zip(matched) {
            self.row(row, spec, m)?;
        }
        self.candidates.clear();
        self.release(usize::MAX)
    }

    fn push(&mut self, q: Queued) -> Result<(), Error> {
        self.queue.push_back(q);
        let over = self.queue.len().saturating_sub(HOLD);
        self.release(over)
    }

    fn pass(&mut self, q: Queued) -> Result<(), Error> {
        if self.queue.is_empty() {
            match q {
                Queued::Run(r) => self.sink.run(r),
                Queued::Rendered(r, bytes) => self.sink.rendered(r, bytes),
            }
        } else {
            self.push(q)
        }
    }

    /// A summary row: folded into the run it repeats (candidate `matched`), or a run of its own.
    fn row(&mut self, mut row: Run, spec: &FoldSpec, matched: Option<usize>) -> Result<(), Error> {
        let key = key_of(&row, spec).map_or_else(|| "(no key)".to_string(), |(k, _)| k);
        let Some(i) = matched else {
            row.notes.push(Note {
                code: "summary-row-alone".into(),
                message: format!(
                    "the result block of the step {key} is not among the blocks read right before this summary: the row is read as the run"
                ),
                line: row.rows.first().map(|r| r.line),
            });
            return self.pass(Queued::Run(row));
        };
        let c = &self.candidates[i];
        let line = row.rows.first().map(|r| r.line).unwrap_or_default();
        let (compared, found) = compare(&row, &c.rows, &spec.key);
        let block_at = c.first_line.map(|l| format!(" (line {l})")).unwrap_or_default();
        let (status, message) = if compared == 0 {
            (
                Status::Skipped,
                format!(
                    "the summary row {key} (line {line}) repeats no figure the run's block{block_at} printed as a number"
                ),
            )
        } else if found.is_empty() {
            (
                Status::Pass,
                format!(
                    "{compared} figures of the summary row {key} (line {line}) agree with the run's block{block_at} within their printed rounding"
                ),
            )
        } else {
            (
                Status::Fail,
                format!(
                    "the summary row {key} (line {line}) and the step's block{block_at} are two printouts of one run by one client and disagree beyond their printed rounding ({} of {compared}): {}",
                    found.len(),
                    found.join("; ")
                ),
            )
        };
        if c.held {
            let block = c.block;
            let held = self.queue.iter_mut().find_map(|q| match q {
                Queued::Run(r) if r.source.block == block => Some(r),
                _ => None,
            });
            if let Some(run) = held {
                run.checks.push(Check::new(RULE, status, message));
                settle(run, &self.policy);
                return Ok(());
            }
        }
        if status == Status::Fail {
            self.sink.diagnostic(Error::Contradiction {
                at: Location { input: self.input.clone(), line, column: None, text: None },
                message: format!("{RULE}: {message}; the run was already written out"),
            });
        }
        Ok(())
    }
}

/// The verdict once a check was added (an unusable run stays so).
fn settle(run: &mut Run, policy: &Policy) {
    run.verdict = report::verdict(&run.checks, policy.strict);
}

/// The key cell of a summary row as printed, and the (field, value) it names.
fn key_of(row: &Run, spec: &FoldSpec) -> Option<(String, Vec<(String, String)>)> {
    let cell = row.rows.iter().find(|r| r.field.as_deref() == Some(&spec.key))?.value.as_deref()?.trim().to_string();
    if spec.names.is_empty() {
        return Some((cell.clone(), vec![(spec.key.clone(), cell)]));
    }
    let (name, value) = cell.split_once('=')?;
    let field = spec.names.iter().find(|(n, _)| n == name.trim())?.1.clone();
    Some((cell.clone(), vec![(field, value.trim().to_string())]))
}

/// Whether a run's rows say what a key names.
fn names(c: &Candidate, wanted: &[(String, String)], spec: &FoldSpec) -> bool {
    wanted.iter().all(|(field, value)| match c.rows.iter().find(|(f, _)| f == field) {
        Some((_, printed)) => same(printed, value),
        None => spec.unset.iter().any(|u| u.eq_ignore_ascii_case(value)),
    })
}

/// Two printed values of one key: equal as numbers, or as text.
fn same(a: &str, b: &str) -> bool {
    match (number(a), number(b)) {
        (Some((x, _)), Some((y, _))) => x == y,
        _ => a.trim() == b.trim(),
    }
}

/// The number a printed value is, and half a unit of its last digit; `None` for anything else
/// (`-`, `n/a`, text around it).
fn number(text: &str) -> Option<(f64, f64)> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+')) {
        return None;
    }
    let x: f64 = t.parse().ok()?;
    let decimals = t.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    x.is_finite().then(|| (x, 0.5 * 10f64.powi(-decimals)))
}

/// Every figure of the row (but its key) that the run printed too, compared: how many, and those
/// further apart than both roundings. A pair whose ratio is a power of ten (a unit printed
/// differently) is not compared: that is no disagreement to be sure of.
fn compare(row: &Run, rows: &[(String, String)], key: &str) -> (usize, Vec<String>) {
    let mut compared = 0;
    let mut found = Vec::new();
    for r in &row.rows {
        let (Some(field), Some(value)) = (r.field.as_deref(), r.value.as_deref()) else { continue };
        if field == key {
            continue;
        }
        let Some((a, da)) = number(value) else { continue };
        let Some((b, db)) = rows.iter().find(|(f, _)| f == field).and_then(|(_, v)| number(v)) else { continue };
        if a != 0.0 && b != 0.0 {
            let ratio = (a / b).abs().log10();
            if ratio.abs() > 0.9 && (ratio - ratio.round()).abs() < 0.01 {
                continue;
            }
        }
        compared += 1;
        if (a - b).abs() > (da + db) * (1.0 + 1e-9) + 1e-12 {
            found.push(format!("{field}: summary \"{}\" vs block \"{}\"", value.trim(), b_text(rows, field)));
        }
    }
    (compared, found)
}

fn b_text<'a>(rows: &'a [(String, String)], field: &str) -> &'a str {
    rows.iter().find(|(f, _)| f == field).map_or("", |(_, v)| v.trim())
}

impl Out for Fold<'_, '_> {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.end_summary(&run)?;
        if let Some(spec) = self.involved.summary(&run) {
            self.summary = Some(run.source.parser.clone());
            self.rows.push((run, spec));
            return Ok(());
        }
        if self.involved.repeated(&run) {
            // The block's own rows (and its trailer's): what a summary repeats is that printout,
            // not the lines read before it for the same run (an argument dump, perhaps another
            // process's).
            let first = run.source.first_line.unwrap_or(0);
            let rows = run
                .rows
                .iter()
                .filter(|r| r.line >= first)
                .filter_map(|r| Some((r.field.clone()?, r.value.clone()?)))
                .collect();
            self.candidates.push_back(Candidate {
                block: run.source.block,
                parser: run.source.parser.clone(),
                variant: run.source.variant.clone(),
                first_line: run.source.first_line,
                rows,
                held: true,
            });
            if self.candidates.len() > REMEMBER {
                self.candidates.pop_front();
            }
            return self.push(Queued::Run(run));
        }
        self.pass(Queued::Run(run))
    }

    fn diagnostic(&mut self, error: Error) {
        self.sink.diagnostic(error)
    }

    fn render(&self) -> Option<Render> {
        self.sink.render()
    }

    fn rendered(&mut self, run: Run, bytes: Vec<u8>) -> Result<(), Error> {
        // Never a summary row or a run one may repeat (the second thread renders neither).
        self.end_summary(&run)?;
        self.pass(Queued::Rendered(run, bytes))
    }

    fn idle(&mut self) -> Result<(), Error> {
        // A table's rows are handed out together: a summary begun is whole by now.
        self.settle_summary()?;
        self.release(usize::MAX)
    }

    fn holds(&self) -> bool {
        !self.queue.is_empty() || self.summary.is_some()
    }
}

// These drive the pipelined read of a live stream (no public API): they live here.
#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use crate::pipeline::{Config, Out};
    use crate::{Error, Options, Run};

    /// Runs and diagnostics, in the order they came.
    #[derive(Default)]
    struct Got {
        runs: Vec<Run>,
        diagnostics: Vec<Error>,
    }

    struct Shared(Arc<Mutex<Got>>);

    impl Out for Shared {
        fn run(&mut self, run: Run) -> Result<(), Error> {
            self.0.lock().unwrap().runs.push(run);
            Ok(())
        }
        fn diagnostic(&mut self, error: Error) {
            self.0.lock().unwrap().diagnostics.push(error);
        }
    }

    /// Gives one piece per read; before the second, checks that the first's runs are out.
    struct Pieces {
        pieces: Vec<Vec<u8>>,
        given: usize,
        got: Arc<Mutex<Got>>,
    }

    impl std::io::Read for Pieces {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.given == 1 {
                assert_eq!(self.got.lock().unwrap().runs.len(), 3, "the steps held over a read that waits");
            }
            let Some(piece) = self.pieces.get(self.given) else { return Ok(0) };
            assert!(out.len() >= piece.len());
            out[..piece.len()].copy_from_slice(piece);
            self.given += 1;
            Ok(piece.len())
        }
    }

    fn read_live(pieces: Vec<Vec<u8>>) -> Got {
        let got = Arc::new(Mutex::new(Got::default()));
        let input = Pieces { pieces, given: 0, got: got.clone() };
        let opts = Config { pipelined: true, ..Config::from(&Options::default()) };
        let reader = std::io::BufReader::with_capacity(256 * 1024, input);
        crate::pipeline::read(reader, "live.log", &opts, &mut Shared(got.clone()), true).unwrap();
        std::mem::take(&mut *got.lock().unwrap())
    }

    /// A live stream (`vllm bench serve ... | bench-normalize`): each step goes out as its block
    /// ends, not held for a summary that comes minutes later; the summary's rows are still no
    /// runs, and one that disagrees with its (already written) run is a diagnostic of exit 1.
    #[test]
    fn a_live_stream_writes_each_step_then_checks_the_summary_against_them() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/versions/vllmrs0.33.0-sweep.stdout.txt");
        let log = std::fs::read_to_string(path).unwrap();
        let summary_at = log[..log.find(" Sweep Summary ").unwrap()].rfind('\n').unwrap() + 1;
        let (steps, summary) = log.split_at(summary_at);
        let got = read_live(vec![steps.as_bytes().to_vec(), summary.as_bytes().to_vec()]);
        assert_eq!(got.runs.len(), 3);
        assert!(got.diagnostics.is_empty(), "{:?}", got.diagnostics);
        // Written before the summary came: no check on them.
        assert!(got.runs.iter().all(|r| r.checks.iter().all(|c| c.id != super::RULE)));
        // The concurrency=2 row's Tok/s changed (the block says 151.94).
        let edited = summary.replacen("    151.94", "    153.94", 1);
        assert_ne!(edited, summary);
        let got = read_live(vec![steps.as_bytes().to_vec(), edited.into_bytes()]);
        assert_eq!(got.runs.len(), 3);
        assert_eq!(got.diagnostics.len(), 1);
        let d = &got.diagnostics[0];
        assert_eq!(d.exit_code(), crate::error::ExitCode::Rejected);
        assert!(d.to_string().contains("summary-agreement") && d.to_string().contains("153.94"), "{d}");
    }
}
