//! `[fold]`: how a summary table's rows name the runs they repeat (read by `pipeline::fold`).

/// `[fold]`: a summary table whose rows repeat runs already read in the same input (vllm-rs's
/// `Sweep Summary` after the sweep's result blocks). A row names its run by its key cell; the
/// row is then no run of its own: every figure it repeats is compared with the run's
/// (`summary-agreement`). A row whose run is not in the input stays a run.
#[derive(Debug, Clone)]
pub struct FoldSpec {
    /// The definitions whose runs the rows repeat.
    pub into: Vec<String>,
    /// Only their runs of these variants (none: any).
    pub into_variants: Vec<String>,
    /// The field of the row's key cell (`workload.strategy`: `concurrency=4`).
    pub key: String,
    /// A key cell written `name=value` names the run whose field `names[name]` is `value`;
    /// without `names`, the run's own row of the field `key` must read the same.
    pub names: Vec<(String, String)>,
    /// Key values a run states by printing no row for the field (`rate=inf`: no rate line).
    pub unset: Vec<String>,
}

impl FoldSpec {
    /// Whether a run of `definition` (variant `variant`) may be repeated by such a row.
    pub fn folds_into(&self, definition: &str, variant: Option<&str>) -> bool {
        self.into.iter().any(|d| d == definition)
            && (self.into_variants.is_empty() || variant.is_some_and(|v| self.into_variants.iter().any(|w| w == v)))
    }
}
