//! Sides (one command-line argument each), their runs grouped by workload, groups paired.

#[allow(unused_imports)]
use super::*;

// ------------------------------------------------------------------------------------------------
// Sides and groups

/// One command-line argument's runs: one configuration.
#[derive(Debug, Clone)]
pub struct Side {
    /// The argument as given.
    pub label: String,
    pub runs: Vec<Run>,
    /// Files of a directory with no benchmark result in them, and runs left out.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub input: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    pub reason: String,
}

/// Read one side: a file, or every file below a directory (sorted; hidden ones skipped). In a
/// directory, a file with no benchmark result in it (a README, a truth file: no result found, or
/// a document that cannot be read as one) is skipped and listed with the error;
/// any other error, and every error of a named file, is returned beside the side (the caller says
/// it; the exit code follows it).
pub fn read_side(arg: &Path, opts: &Options) -> (Side, Vec<Error>) {
    let label = arg.display().to_string();
    let mut side = Side { label: label.clone(), runs: Vec::new(), skipped: Vec::new() };
    let mut errors = Vec::new();
    let meta = match std::fs::metadata(arg) {
        Ok(m) => m,
        Err(source) => {
            errors.push(Error::Io { input: label, source });
            return (side, errors);
        }
    };
    let (files, in_dir) = if meta.is_dir() {
        let mut files = Vec::new();
        if let Err(source) = walk(arg, &mut files) {
            errors.push(Error::Io { input: label, source });
        }
        files.sort();
        (files, true)
    } else {
        (vec![arg.to_path_buf()], false)
    };
    for path in files {
        let name = path.display().to_string();
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(source) => {
                errors.push(Error::Io { input: name, source });
                continue;
            }
        };
        let mut runs = Vec::new();
        let mut diagnostics = Vec::new();
        let mut sink = Collect { runs: &mut runs, diagnostics: &mut diagnostics };
        let result = bench_normalize_core::normalize_file(file, &name, opts, &mut sink);
        match result {
            // A file of a directory with no result in it (a README, a truth file, a JSON document
            // of no known shape, an archive that does not decompress) is listed, not an error: a
            // results directory holds other files.
            Err(e @ (Error::NoResult { .. } | Error::Parse { .. } | Error::Decode { .. }))
                if in_dir && runs.is_empty() =>
            {
                side.skipped.push(Skipped { input: name, block: None, reason: e.to_string() })
            }
            Err(e) => errors.push(e),
            Ok(_) => {}
        }
        errors.append(&mut diagnostics);
        side.runs.append(&mut runs);
    }
    (side, errors)
}

pub(super) fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let ty = entry.file_type()?;
        if ty.is_dir() {
            walk(&path, files)?;
        } else if path.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

pub(super) struct Collect<'a> {
    pub(super) runs: &'a mut Vec<Run>,
    pub(super) diagnostics: &'a mut Vec<Error>,
}

impl bench_normalize_core::Sink for Collect<'_> {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.runs.push(run);
        Ok(())
    }

    fn diagnostic(&mut self, error: Error) {
        self.diagnostics.push(error);
    }
}

/// A run as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    pub input: String,
    pub block: usize,
    pub verdict: Verdict,
    /// Why the run's figures are not used (rejected or unusable), with the failed rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
}

impl RunRef {
    pub(super) fn of(run: &Run) -> RunRef {
        let failed: Vec<String> = run
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail && c.severity == bench_normalize_core::report::Severity::Error)
            .map(|c| format!("{}: {}", c.id, c.message))
            .collect();
        let excluded = match run.verdict {
            Verdict::Accepted => None,
            Verdict::Rejected => Some(format!("rejected ({})", failed.join("; "))),
            Verdict::Unusable => Some(format!("unusable ({})", failed.join("; "))),
        };
        RunRef { input: run.source.input.clone(), block: run.source.block, verdict: run.verdict, excluded }
    }

    pub(super) fn name(&self) -> String {
        format!("{} #{}", self.input, self.block)
    }
}

/// Runs of one side with one workload key.
pub(super) struct Group<'a> {
    pub(super) workload: Workload,
    pub(super) runs: Vec<&'a Run>,
}

impl Group<'_> {
    /// The runs whose figures may be used: accepted ones.
    pub(super) fn usable(&self) -> Vec<&Run> {
        self.runs.iter().copied().filter(|r| r.verdict == Verdict::Accepted).collect()
    }
}

/// A summary line of a table of runs that repeats a step's full block printed before it (the
/// vllm-rs Sweep Summary): the step is already a run, so the line is not one more.
pub(super) fn repeats_a_block(run: &Run) -> bool {
    run.source.parser.ends_with("sweep-summary")
}

pub(super) fn group_side<'a>(side: &'a Side, key: &[KeyField], skipped: &mut Vec<Skipped>) -> Vec<Group<'a>> {
    let mut groups: Vec<Group> = Vec::new();
    for run in &side.runs {
        if repeats_a_block(run) {
            skipped.push(Skipped {
                input: run.source.input.clone(),
                block: Some(run.source.block),
                reason: "a summary line repeating a run's full block, which is compared instead".into(),
            });
            continue;
        }
        let w = Workload::of(run).keyed(key);
        match groups.iter_mut().find(|g| g.workload == w) {
            Some(g) => g.runs.push(run),
            None => groups.push(Group { workload: w, runs: vec![run] }),
        }
    }
    groups
}

/// Pairs of (baseline group, other group) indexes: exactly equal keys first, then a key with an
/// unknown field pairs with the one remaining group it fits. The unpaired ones get a reason.
/// A group left unpaired: whether it is the baseline's, its index, and why.
type Left = (bool, usize, String);

pub(super) fn pair_groups(base: &[Group], other: &[Group], key: &[KeyField]) -> (Vec<(usize, usize)>, Vec<Left>) {
    let mut pairs = Vec::new();
    let mut used_b = vec![false; base.len()];
    let mut used_o = vec![false; other.len()];
    for (i, b) in base.iter().enumerate() {
        if let Some(j) =
            (0..other.len()).find(|&j| !used_o[j] && fits(&b.workload, &other[j].workload, key) == Some(true))
        {
            pairs.push((i, j));
            used_b[i] = true;
            used_o[j] = true;
        }
    }
    let mut unpaired = Vec::new();
    for (i, b) in base.iter().enumerate() {
        if used_b[i] {
            continue;
        }
        let fit: Vec<usize> =
            (0..other.len()).filter(|&j| !used_o[j] && fits(&b.workload, &other[j].workload, key).is_some()).collect();
        // The candidate must also have no other baseline group it could go with.
        if let [j] = fit[..] {
            let rivals = (0..base.len())
                .filter(|&k| k != i && !used_b[k] && fits(&base[k].workload, &other[j].workload, key).is_some())
                .count();
            if rivals == 0 {
                pairs.push((i, j));
                used_b[i] = true;
                used_o[j] = true;
                continue;
            }
        }
        if fit.len() > 1 {
            unpaired.push((
                true,
                i,
                format!(
                    "ambiguous: it fits {} workloads of the other side, which says less about its workload",
                    fit.len()
                ),
            ));
        }
    }
    for (i, b) in base.iter().enumerate() {
        if !used_b[i] && !unpaired.iter().any(|(is_base, k, _)| *is_base && *k == i) {
            unpaired.push((true, i, no_partner(&b.workload, other, key)));
        }
    }
    for (j, o) in other.iter().enumerate() {
        if !used_o[j] {
            unpaired.push((false, j, no_partner(&o.workload, base, key)));
        }
    }
    pairs.sort();
    (pairs, unpaired)
}

pub(super) fn no_partner(w: &Workload, others: &[Group], key: &[KeyField]) -> String {
    if others.iter().any(|g| fits(w, &g.workload, key).is_some()) {
        "its workload fits more than one run group of the other side: no pair (name one of them)".into()
    } else {
        "no run of the other side has this workload".into()
    }
}
