//! The rules a check comes from, typed, and the one place a run's checks become its verdict.
//!
//! `RuleId` is generated from `crates/core/src/rules.toml` (one entry per rule: id, severity, stage), so a rule
//! named in code is a constant the compiler checks, and a new rule is one entry there plus its
//! function in its stage's table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Check, Severity, Status, Verdict};

/// The stage whose check a rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleStage {
    /// Every run (`src/validate.rs`).
    Validate,
    /// Reports read back (`check`, `src/check/`).
    Check,
    /// A summary table's row folded into its run (`src/pipeline/fold.rs`).
    Fold,
    /// `run`: the client's output against its result file (`src/client/combine.rs`).
    Run,
}

include!(concat!(env!("OUT_DIR"), "/rules.rs"));

impl RuleId {
    /// The rule of an id as reports write it.
    pub fn parse(id: &str) -> Option<RuleId> {
        RuleId::ALL.iter().copied().find(|r| r.as_str() == id)
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RuleId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = std::borrow::Cow::<str>::deserialize(d)?;
        RuleId::parse(&id).ok_or_else(|| serde::de::Error::custom(format!("unknown rule id `{id}`")))
    }
}

impl JsonSchema for RuleId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "String".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
    fn inline_schema() -> bool {
        true
    }
}

impl Check {
    /// A check of `rule`, with the rule's severity.
    pub fn new(rule: RuleId, status: Status, message: String) -> Check {
        Check { id: rule, severity: rule.severity(), status, message }
    }

    /// Whether this check rejects its run: a failed error, or (with `strict`) a failed warning.
    pub fn rejects(&self, strict: bool) -> bool {
        self.status == Status::Fail
            && (self.severity == Severity::Error || (strict && self.severity == Severity::Warning))
    }
}

/// A run's verdict from its checks, the one place it is decided: `unusable` when `key-figures`
/// failed (nothing to paste; a contradiction is not looked for in what is not there), else
/// `rejected` when any check rejects ([`Check::rejects`]), else `accepted`.
pub fn verdict(checks: &[Check], strict: bool) -> Verdict {
    if checks.iter().any(|c| c.id == RuleId::KeyFigures && c.status == Status::Fail) {
        Verdict::Unusable
    } else if checks.iter().any(|c| c.rejects(strict)) {
        Verdict::Rejected
    } else {
        Verdict::Accepted
    }
}
