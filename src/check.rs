//! `check`: a report read back (a canonical report, or dstack's preset benchmark) is verified,
//! not trusted.
//!
//! Three layers, each reported whole:
//!
//! 1. **Shape.** [`canonical_shape`] and [`dstack_shape`] walk the JSON document and return every
//!    place where it is not the shape it claims to be (JSON path, what was expected, what was
//!    found), as a schema validator does: a wrong type, a missing required key, an unknown key, a
//!    value out of its range. Any of them makes the input unusable (exit 3); nothing is dropped.
//! 2. **Restated figures.** A canonical report's `derived` section, `checks` and `verdict` are
//!    recomputed from its `reported`, `totals` and `workload`, never read. Where the report states a
//!    derived figure its own inputs do not give, that is a contradiction ([`RESTATED`], an error
//!    that names both figures).
//! 3. **Headline definitions.** Every headline figure must agree with its definition
//!    ([`HEADLINES`]): dstack's `output_tok_per_s` is `total_output_tokens / duration_seconds` and
//!    its `per_user_tok_per_s` is `output_tok_per_s / workload.concurrency` (dstack's `## Benchmark`
//!    instructions to its agent); a canonical per-user rate is `1000 / TPOT`. A headline figure that
//!    cannot be verified is an error saying why. dstack's own model rules (no failed request, every
//!    requested request measured, ...) are `validate`'s `dstack-model` ([`crate::dstack_model`]).
//!
//! Tolerances are rounding-aware: a stated figure agrees with its definition when the figures it
//! is computed from, each anywhere within the rounding of the digits written, give a value that
//! rounds to the digits written for it. An integer-valued figure (`78` or `78.0`: JSON does not
//! tell them apart) is allowed at most 0.5% either way, so that a rate written to three significant
//! digits passes and a coarser one does not.

use serde_json::Value;

use crate::derive::show;
use crate::report::{Check, Derived, Run, Severity, StatKey, Status, TpotMethod, Verdict};
use crate::validate::Policy;

/// Rule id: a canonical report's stated `derived` figures against their recomputation.
pub const RESTATED: &str = "derived-restated";
/// Rule id: headline figures against their definitions.
pub const HEADLINES: &str = "headline-definitions";

/// One place where a document is not the shape it claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    /// JSON path (`runs[0].reported.tpot_ms`, `metrics.ttft_ms.p99`).
    pub path: String,
    pub expected: String,
    pub found: String,
}

impl ShapeError {
    pub fn message(&self) -> String {
        format!("expected {}, found {}", self.expected, self.found)
    }
}

/// What a JSON value is, for a message (strings quoted, escaped and cut short).
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let cut: String = s.chars().take(40).collect();
            let quoted = serde_json::to_string(&cut).unwrap_or_default();
            if cut.len() < s.len() {
                format!("the string {}...", quoted.trim_end_matches('"'))
            } else {
                format!("the string {quoted}")
            }
        }
        Value::Array(a) if a.is_empty() => "an empty list".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(m) if m.is_empty() => "an empty object".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// A key appended to a JSON path: `a.b`, or `a["odd key"]` for a key that is not a plain name
/// (escaped: a key never reaches a terminal raw).
fn join(at: &str, key: &str) -> String {
    // A statistic's name has a dot (`p99.9`): written as it is, as the canonical paths do.
    let plain = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    match (at.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{at}.{key}"),
        (_, false) => format!("{at}[{}]", serde_json::to_string(key).unwrap_or_default()),
    }
}

/// The type a value must have.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    NonEmptyStr,
    /// A whole number written as an integer, `>= 0`.
    UInt,
    /// A whole number `>= min` (a whole-valued float such as `16.0` too, as pydantic reads it).
    Int(u64),
    Num,
    /// A number `>= 0`.
    NumMin0,
    /// A number `> 0`.
    PosNum,
    Bool,
    Enum(&'static [&'static str]),
    /// `null`, or the inner type.
    Null(&'static Ty),
    /// A nested object (or anything) checked by its own walk.
    Walk(fn(&Value, &str, &mut Vec<ShapeError>)),
    /// A list, each item of the inner type.
    List(&'static Ty),
}

fn expected(t: Ty) -> String {
    match t {
        Ty::Str => "a string".into(),
        Ty::NonEmptyStr => "a non-empty string".into(),
        Ty::UInt => "a whole number >= 0".into(),
        Ty::Int(0) => "a whole number >= 0".into(),
        Ty::Int(m) => format!("a whole number >= {m}"),
        Ty::Num => "a number".into(),
        Ty::NumMin0 => "a number >= 0".into(),
        Ty::PosNum => "a number > 0".into(),
        Ty::Bool => "true or false".into(),
        Ty::Enum(vs) => format!("one of {}", vs.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")),
        Ty::Null(inner) => format!("{} or null", expected(*inner)),
        Ty::Walk(_) => "an object".into(),
        Ty::List(inner) => format!("a list of {}", expected(*inner).trim_start_matches("a ").trim_start_matches("an ")),
    }
}

fn check_ty(v: &Value, t: Ty, at: &str, out: &mut Vec<ShapeError>) {
    let ok = match (t, v) {
        (Ty::Walk(walk), _) => return walk(v, at, out),
        (Ty::Null(_), Value::Null) => true,
        (Ty::Null(inner), _) => {
            let before = out.len();
            check_ty(v, *inner, at, out);
            if !matches!(inner, Ty::Walk(_)) {
                out[before..].iter_mut().filter(|e| e.path == at).for_each(|e| e.expected = expected(t));
            }
            return;
        }
        (Ty::List(inner), Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                check_ty(item, *inner, &format!("{at}[{i}]"), out);
            }
            true
        }
        (Ty::Str, Value::String(_)) => true,
        (Ty::NonEmptyStr, Value::String(s)) => !s.is_empty(),
        (Ty::UInt, Value::Number(n)) => n.is_u64(),
        (Ty::Int(min), Value::Number(n)) => {
            n.as_u64().is_some_and(|c| c >= min)
                || n.as_f64().is_some_and(|f| f.fract() == 0.0 && f >= min as f64 && f < 1.8e19)
        }
        (Ty::Num, Value::Number(n)) => n.as_f64().is_some_and(f64::is_finite),
        (Ty::NumMin0, Value::Number(n)) => n.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0),
        (Ty::PosNum, Value::Number(n)) => n.as_f64().is_some_and(|f| f.is_finite() && f > 0.0),
        (Ty::Bool, Value::Bool(_)) => true,
        (Ty::Enum(vs), Value::String(s)) => vs.contains(&s.as_str()),
        _ => false,
    };
    if !ok {
        out.push(ShapeError { path: at.to_string(), expected: expected(t), found: describe(v) });
    }
}

/// An object with these keys (name, type, required); every other key is an error.
fn object(v: &Value, at: &str, what: &str, keys: &[(&str, Ty, bool)], out: &mut Vec<ShapeError>) {
    let Value::Object(m) = v else {
        out.push(ShapeError { path: at.to_string(), expected: format!("{what} (an object)"), found: describe(v) });
        return;
    };
    for (k, t, required) in keys {
        match m.get(*k) {
            Some(sub) => check_ty(sub, *t, &join(at, k), out),
            None if *required => out.push(ShapeError {
                path: join(at, k),
                expected: format!("{} (required)", expected(*t)),
                found: "nothing: the key is missing".into(),
            }),
            None => {}
        }
    }
    for k in m.keys().filter(|k| !keys.iter().any(|(name, _, _)| name == k)) {
        let names: Vec<&str> = keys.iter().map(|(n, _, _)| *n).collect();
        out.push(ShapeError {
            path: join(at, k),
            expected: format!("only the keys of {what} ({})", names.join(", ")),
            found: "an unknown key".into(),
        });
    }
}

// ---------------------------------------------------------------------------------------------
// The canonical report

const VERDICTS: &[&str] = &["accepted", "rejected", "unusable"];
const FORMATS: &[&str] = &["stdout", "result-json", "result-jsonl", "result-csv", "report"];
const METHODS: &[&str] = &["per-request", "e2e-ttft-tokens", "e2e-median-ttft-tokens", "tool-tpot", "claimed"];

/// Every shape error of a canonical report: a whole document (`schema_version`, `runs`) or one run.
pub fn canonical_shape(doc: &Value) -> Vec<ShapeError> {
    let mut out = Vec::new();
    if doc.get("runs").is_some() {
        object(
            doc,
            "",
            "a report",
            &[("schema_version", Ty::Walk(schema_version), true), ("runs", Ty::List(&Ty::Walk(run_shape)), true)],
            &mut out,
        );
    } else {
        run_shape(doc, "", &mut out);
    }
    out
}

fn schema_version(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    if v.as_u64() != Some(u64::from(crate::report::SCHEMA_VERSION)) {
        out.push(ShapeError {
            path: at.to_string(),
            expected: format!("{} (the version this bench-normalize reads)", crate::report::SCHEMA_VERSION),
            found: describe(v),
        });
    }
}

fn run_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "a run",
        &[
            ("source", Ty::Walk(source_shape), false),
            ("workload", Ty::Walk(|v, at, out| figures(v, at, "workload", out)), false),
            ("totals", Ty::Walk(|v, at, out| figures(v, at, "totals", out)), false),
            ("reported", Ty::Walk(|v, at, out| figures(v, at, "reported", out)), false),
            ("derived", Ty::Walk(derived_shape), false),
            ("checks", Ty::List(&Ty::Walk(check_shape)), false),
            ("verdict", Ty::Enum(VERDICTS), false),
            ("notes", Ty::List(&Ty::Walk(note_shape)), false),
            // `--slo`'s judgement: its shape is checked, its content is not read (judged again).
            ("objectives", Ty::Null(&Ty::List(&Ty::Walk(objective_shape))), false),
            ("rows", Ty::List(&Ty::Walk(row_shape)), false),
        ],
        out,
    );
}

fn source_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    const STR_OR_NULL: Ty = Ty::Null(&Ty::Str);
    const UINT_OR_NULL: Ty = Ty::Null(&Ty::UInt);
    object(
        v,
        at,
        "a run's source",
        &[
            ("parser", Ty::Str, false),
            ("tool", Ty::Str, false),
            ("format", Ty::Enum(FORMATS), false),
            ("variant", STR_OR_NULL, false),
            ("input", Ty::Str, false),
            ("block", Ty::UInt, false),
            ("first_line", UINT_OR_NULL, false),
            ("last_line", UINT_OR_NULL, false),
            (
                "truncated",
                Ty::Null(&Ty::Walk(|v, at, out| {
                    object(v, at, "a truncation", &[("after_line", Ty::UInt, true), ("reason", Ty::Str, true)], out)
                })),
                false,
            ),
            (
                "semantics",
                Ty::Walk(|v, at, out| {
                    object(
                        v,
                        at,
                        "the tool's semantics",
                        &[
                            ("itl", Ty::Null(&Ty::Enum(&["chunk", "token"])), false),
                            ("itl_why", Ty::Null(&Ty::Str), false),
                            (
                                "output_tokens",
                                Ty::Null(&Ty::Enum(&["server", "server-or-requested", "requested", "retokenized"])),
                                false,
                            ),
                            ("e2e_end", Ty::Null(&Ty::Enum(&["last-chunk", "done-line"])), false),
                        ],
                        out,
                    )
                }),
                false,
            ),
        ],
        out,
    );
}

/// `workload`, `totals`, `reported`: every figure of the vocabulary has its kind; other names are
/// allowed (a report may carry its own figures), objects among them walked for known figures.
fn figures(v: &Value, at: &str, prefix: &str, out: &mut Vec<ShapeError>) {
    use crate::vocabulary::Kind;
    let Value::Object(m) = v else {
        out.push(ShapeError { path: at.to_string(), expected: "an object of figures".into(), found: describe(v) });
        return;
    };
    for (name, fig) in m {
        let here = join(at, name);
        let canonical = format!("{prefix}.{name}");
        let Some(def) = crate::vocabulary::field(&canonical) else {
            let group = crate::vocabulary::FIELDS.iter().any(|f| {
                f.path.len() > canonical.len()
                    && f.path.starts_with(&canonical)
                    && f.path.as_bytes()[canonical.len()] == b'.'
            });
            match fig {
                Value::Object(_) => figures(fig, &here, &canonical, out),
                // A group of known figures (`reported.speculative`) is an object.
                Value::Null => {}
                _ if group => {
                    out.push(ShapeError { path: here, expected: "an object of figures".into(), found: describe(fig) })
                }
                // A figure of the report's own: any value.
                _ => {}
            }
            continue;
        };
        if fig.is_null() {
            continue; // absent
        }
        match def.kind {
            Kind::Count => check_ty(fig, Ty::UInt, &here, out),
            Kind::Number => check_ty(fig, Ty::Num, &here, out),
            Kind::Text => check_ty(fig, Ty::Str, &here, out),
            Kind::List => check_ty(fig, Ty::List(&Ty::Null(&Ty::Num)), &here, out),
            Kind::Stat => stat_shape(fig, &here, out),
        }
    }
}

/// A block of statistics: `mean`, `min`, `p50`, `p99.9`, `max`, `std`, ... each a number (or null:
/// absent), at least one given.
fn stat_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    const WANT: &str = "statistics (an object of mean, min, p50, p90, p99, max, std: numbers)";
    let Value::Object(m) = v else {
        out.push(ShapeError { path: at.to_string(), expected: WANT.into(), found: describe(v) });
        return;
    };
    if m.values().all(Value::is_null) {
        out.push(ShapeError {
            path: at.to_string(),
            expected: format!("{WANT}, at least one (leave the figure out, or null, when there is none)"),
            found: describe(v),
        });
        return;
    }
    for (k, stat) in m {
        let here = join(at, k);
        if StatKey::parse(k).is_none() {
            out.push(ShapeError {
                path: here,
                expected: "a statistic's name (mean, min, p50, p90, p99, p99.9, max, std)".into(),
                found: "an unknown key".into(),
            });
            continue;
        }
        check_ty(stat, Ty::Null(&Ty::Num), &here, out);
    }
}

fn derived_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    const NUM: Ty = Ty::Null(&Ty::Num);
    const STR: Ty = Ty::Null(&Ty::Str);
    object(
        v,
        at,
        "the derived figures",
        &[
            (
                "tpot_ms",
                Ty::Walk(|v, at, out| {
                    object(
                        v,
                        at,
                        "the derived TPOT",
                        &[
                            ("mean", NUM, false),
                            ("method", Ty::Null(&Ty::Enum(METHODS)), false),
                            ("p50", NUM, false),
                            ("p90", NUM, false),
                            ("p99", NUM, false),
                            ("token_weighted_mean", NUM, false),
                            ("formula", STR, false),
                            ("reason", STR, false),
                            ("verified", Ty::Null(&Ty::Bool), false),
                            ("unverified_reason", STR, false),
                            ("approximate", STR, false),
                        ],
                        out,
                    )
                }),
                false,
            ),
            ("per_user_decode_tok_per_s", NUM, false),
            ("output_tok_per_s", NUM, false),
            ("request_per_s", NUM, false),
            ("mean_in_flight", NUM, false),
            ("slot_utilization", NUM, false),
            ("tokens_per_chunk", NUM, false),
            (
                "e2e_ms",
                Ty::Null(&Ty::Walk(|v, at, out| {
                    object(
                        v,
                        at,
                        "the approximate E2E",
                        &[("mean", Ty::Num, true), ("approximate", Ty::Bool, true), ("formula", Ty::Str, true)],
                        out,
                    )
                })),
                false,
            ),
            (
                "per_request",
                Ty::Null(&Ty::Walk(|v, at, out| {
                    object(
                        v,
                        at,
                        "the per-request summary",
                        &[
                            ("requests", Ty::UInt, true),
                            ("failed", Ty::UInt, true),
                            ("single_token", Ty::UInt, true),
                            ("e2e_source", Ty::Str, true),
                            ("e2e_mean_ms", NUM, false),
                            (
                                "tokens_per_chunk",
                                Ty::Null(&Ty::Walk(|v, at, out| {
                                    object(
                                        v,
                                        at,
                                        "tokens per chunk",
                                        &[("mean", Ty::Num, true), ("p50", Ty::Num, true)],
                                        out,
                                    )
                                })),
                                false,
                            ),
                        ],
                        out,
                    )
                })),
                false,
            ),
            (
                "undefined",
                Ty::Walk(|v, at, out| match v {
                    Value::Object(m) => m.iter().for_each(|(k, why)| check_ty(why, Ty::Str, &join(at, k), out)),
                    _ => out.push(ShapeError {
                        path: at.to_string(),
                        expected: "an object of reasons (strings)".into(),
                        found: describe(v),
                    }),
                }),
                false,
            ),
        ],
        out,
    );
}

fn check_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "a check",
        &[
            ("id", Ty::Str, true),
            ("severity", Ty::Enum(&["error", "warning", "info"]), true),
            ("status", Ty::Enum(&["pass", "fail", "skipped"]), true),
            ("message", Ty::Str, true),
        ],
        out,
    );
}

fn note_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "a note",
        &[("code", Ty::Str, true), ("message", Ty::Str, true), ("line", Ty::Null(&Ty::UInt), false)],
        out,
    );
}

fn objective_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    const NUM: Ty = Ty::Null(&Ty::Num);
    const STATUSES: &[&str] = &["pass", "fail", "not-available", "not-comparable", "not-judged"];
    object(
        v,
        at,
        "an objective",
        &[
            ("objective", Ty::Str, true),
            ("metric", Ty::Str, true),
            ("stat", Ty::Null(&Ty::Str), false),
            ("op", Ty::Enum(&["<=", "<", ">=", ">"]), true),
            ("limit", Ty::Num, true),
            ("unit", Ty::Str, true),
            ("value", NUM, false),
            ("margin", NUM, false),
            ("margin_pct", NUM, false),
            ("status", Ty::Enum(STATUSES), true),
            ("source", Ty::Null(&Ty::Str), false),
            ("reason", Ty::Null(&Ty::Str), false),
        ],
        out,
    );
}

fn row_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    const STR: Ty = Ty::Null(&Ty::Str);
    object(
        v,
        at,
        "a row",
        &[
            ("section", STR, false),
            ("label", Ty::Str, true),
            ("value", STR, false),
            ("line", Ty::UInt, true),
            ("field", STR, false),
            ("scope", STR, false),
        ],
        out,
    );
}

// ---------------------------------------------------------------------------------------------
// dstack's preset benchmark (dstack 0.22.5, `PresetBenchmark` in core/models/presets.py)

/// Every shape error of dstack's `PresetBenchmark` document, as dstack's pydantic model reads it:
/// unknown keys forbidden at every level, `tool`, `tool_version`, `command` non-empty strings,
/// `workload.api` `chat_completions` or `completions`, `num_requests`, `input_tokens`,
/// `concurrency` whole numbers `>= 1`, `output_tokens` `>= 2`, `shared_prefix_tokens` `>= 0`
/// (optional), every metric required (counts whole `>= 0`, `duration_seconds` and both rates
/// `> 0`, `ttft_ms` and `tpot_ms` each `{mean, p50, p99}` numbers `>= 0`), no bearer token in
/// `command`. One addition: `metrics.e2e_ms` (dstack#4230's proposal, which lets TPOT be derived
/// rather than trusted) may be given, `{mean, p50, p99}` numbers `>= 0` or null. Stricter than
/// pydantic's lax mode in one way: a number must be a JSON number and a string a JSON string (no
/// `"16"` for 16).
pub fn dstack_shape(doc: &Value) -> Vec<ShapeError> {
    let mut out = Vec::new();
    object(
        doc,
        "",
        "dstack's PresetBenchmark",
        &[
            ("tool", Ty::NonEmptyStr, true),
            ("tool_version", Ty::NonEmptyStr, true),
            ("command", Ty::NonEmptyStr, true),
            ("workload", Ty::Walk(dstack_workload), true),
            ("metrics", Ty::Walk(dstack_metrics), true),
        ],
        &mut out,
    );
    if let Some(Value::String(command)) = doc.get("command") {
        if let Some(token) = crate::dstack_model::bearer_token(command) {
            let shown: String = token.chars().take(4).collect();
            out.push(ShapeError {
                path: "command".into(),
                expected: "a command without a credential (dstack refuses a bearer token value; write $TOKEN)".into(),
                found: format!("a bearer token ({shown}...)"),
            });
        }
    }
    out
}

fn dstack_workload(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "dstack's PresetWorkload",
        &[
            ("api", Ty::Enum(&["chat_completions", "completions"]), true),
            ("dataset", Ty::Null(&Ty::Str), false),
            ("num_requests", Ty::Int(1), true),
            ("input_tokens", Ty::Int(1), true),
            ("output_tokens", Ty::Int(2), true),
            ("concurrency", Ty::Int(1), true),
            ("shared_prefix_tokens", Ty::Int(0), false),
        ],
        out,
    );
}

fn dstack_metrics(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "dstack's PresetBenchmarkMetrics",
        &[
            ("successful_requests", Ty::Int(0), true),
            ("failed_requests", Ty::Int(0), true),
            ("duration_seconds", Ty::PosNum, true),
            ("total_input_tokens", Ty::Int(0), true),
            ("total_output_tokens", Ty::Int(0), true),
            ("output_tok_per_s", Ty::PosNum, true),
            ("per_user_tok_per_s", Ty::PosNum, true),
            ("ttft_ms", Ty::Walk(dstack_latency), true),
            ("tpot_ms", Ty::Walk(dstack_latency), true),
            (
                "e2e_ms",
                Ty::Null(&Ty::Walk(|v, at, out| {
                    const N: Ty = Ty::Null(&Ty::NumMin0);
                    object(
                        v,
                        at,
                        "the proposed e2e_ms",
                        &[("mean", N, false), ("p50", N, false), ("p99", N, false)],
                        out,
                    )
                })),
                false,
            ),
        ],
        out,
    );
}

fn dstack_latency(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    object(
        v,
        at,
        "dstack's PresetBenchmarkLatency",
        &[("mean", Ty::NumMin0, true), ("p50", Ty::NumMin0, true), ("p99", Ty::NumMin0, true)],
        out,
    );
}

// ---------------------------------------------------------------------------------------------
// Figures against their definitions

/// Half a unit of the last decimal written, as the shortest text that reads back as `x` shows it
/// (`26.75` -> 0.005, `4096` -> 0.5).
fn written_half_unit(x: f64) -> f64 {
    let s = format!("{x}");
    match s.split_once('.') {
        Some((_, frac)) => 0.5 * 10f64.powi(-(frac.len() as i32)),
        None => 0.5,
    }
}

/// Rounding of a stated figure: what its written digits allow (an integer-valued figure, `78` or
/// `78.0`, at most 0.5%: JSON does not say which was written), at least what 6 significant digits
/// (the derivation's rounding) and float noise allow.
fn slack(stated: f64) -> f64 {
    let a = stated.abs();
    let half = written_half_unit(stated);
    let half = if stated.fract() == 0.0 { half.min(0.005 * a) } else { half };
    half.max(5e-6 * a).max(1e-9)
}

/// An interval `[lo, hi]` a written input lies in.
fn interval(x: f64) -> (f64, f64) {
    let h = written_half_unit(x);
    (x - h, x + h)
}

/// Whether `stated` agrees with a value known to lie in `[lo, hi]`.
fn within(stated: f64, (lo, hi): (f64, f64)) -> bool {
    let s = slack(stated);
    stated + s >= lo * (1.0 - 1e-12) && stated - s <= hi * (1.0 + 1e-12)
}

/// `a / b` over intervals (`b` positive).
fn divide((alo, ahi): (f64, f64), (blo, bhi): (f64, f64)) -> (f64, f64) {
    if blo <= 0.0 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    (alo / bhi, ahi / blo)
}

/// Add a check to a run, and reject it if the check says so.
fn add(run: &mut Run, policy: &Policy, id: &str, severity: Severity, (status, message): (Status, String)) {
    let rejects =
        status == Status::Fail && (severity == Severity::Error || (policy.strict && severity == Severity::Warning));
    if rejects {
        run.verdict = Verdict::Rejected;
    }
    run.checks.push(Check { id: id.to_string(), severity, status, message });
}

fn outcome(failures: Vec<String>, passed: String) -> (Status, String) {
    if failures.is_empty() { (Status::Pass, passed) } else { (Status::Fail, failures.join("; ")) }
}

/// The report-level rules of a run read back from a report (a canonical run, or a report shape
/// such as dstack's): for a canonical run the outcome of [`restated`] (called before validation,
/// as it may put a verified per-request TPOT back), headline definitions, and dstack's model rules
/// for a dstack report. Call after [`crate::validate::validate`]: the checks are added to its, and
/// a failed error rejects the run.
pub fn verify(run: &mut Run, restated: Option<(Status, String)>, policy: &Policy) {
    if let Some(o) = restated {
        add(run, policy, RESTATED, Severity::Error, o);
    }
    let o = headlines(run);
    add(run, policy, HEADLINES, Severity::Error, o);
    // dstack's model rules (`dstack-model`) are `validate`'s, for every dstack document.
}

/// Headline figures against their definitions. A dstack report's (and a canonical run read from
/// one, `source.parser` `dstack-preset`): `output_tok_per_s = total_output_tokens /
/// duration_seconds`, `per_user_tok_per_s = output_tok_per_s / workload.concurrency`. A
/// hand-written canonical run's (`source.parser` `report`) `reported.per_user_tok_per_s` is `1000 /
/// TPOT` (the derived TPOT). (A tool's own printed per-user figure keeps the tool's definition.)
fn headlines(run: &Run) -> (Status, String) {
    let mut fails = Vec::new();
    let mut passed = Vec::new();
    let stated_rate = run.reported.number("output_tok_per_s");
    let per_user = run.reported.number("per_user_tok_per_s");
    if run.source.parser == "dstack-preset" {
        let (n, d) = (run.totals.number("output_tokens"), run.totals.number("duration_s"));
        match (stated_rate, n, d) {
            (Some(r), Some(n), Some(d)) if d > 0.0 => {
                let want = divide((n, n), interval(d));
                if within(r, want) {
                    passed.push(format!("output_tok_per_s {} = {} / {} s", show(r), show(n), show(d)));
                } else {
                    fails.push(format!(
                        "metrics.output_tok_per_s {} is not total_output_tokens / duration_seconds = {} / {} = {} (dstack's definition)",
                        show(r),
                        show(n),
                        show(d),
                        show(n / d)
                    ));
                }
            }
            (Some(r), ..) => fails.push(format!(
                "metrics.output_tok_per_s {} cannot be verified: total_output_tokens and a duration_seconds > 0 are needed",
                show(r)
            )),
            _ => {}
        }
        let c = run.workload.number("max_concurrency");
        match (per_user, stated_rate, c) {
            (Some(u), Some(r), Some(c)) if c > 0.0 => {
                let want = divide(interval(r), (c, c));
                if within(u, want) {
                    passed.push(format!("per_user_tok_per_s {} = {} / concurrency {}", show(u), show(r), show(c)));
                } else {
                    let tpot = run.reported.stat("tpot_ms").and_then(|s| s.mean()).filter(|t| *t > 0.0);
                    let other = match tpot {
                        Some(t) if within(u, (1000.0 / t, 1000.0 / t)) => {
                            format!("; it is 1000 / tpot_ms.mean {}, which dstack does not call per_user_tok_per_s", show(t))
                        }
                        _ => String::new(),
                    };
                    fails.push(format!(
                        "metrics.per_user_tok_per_s {} is not output_tok_per_s / workload.concurrency = {} / {} = {} (dstack's definition){other}",
                        show(u),
                        show(r),
                        show(c),
                        show(r / c)
                    ));
                }
            }
            (Some(u), ..) => fails.push(format!(
                "metrics.per_user_tok_per_s {} cannot be verified: output_tok_per_s and workload.concurrency are needed",
                show(u)
            )),
            _ => {}
        }
    } else if let Some(u) = per_user.filter(|_| run.source.parser == "report") {
        // A figure a tool printed (AIPerf's per-user throughput, a mean of per-request rates) is
        // the tool's own; a hand-written canonical report's is 1000 / TPOT.
        match run.derived.tpot_ms.mean.filter(|t| *t > 0.0) {
            Some(t) => {
                if within(u, (1000.0 / t, 1000.0 / t)) {
                    passed.push(format!("per_user_tok_per_s {} = 1000 / TPOT {} ms", show(u), show(t)));
                } else {
                    fails.push(format!(
                        "reported.per_user_tok_per_s {} is not 1000 / TPOT = 1000 / {} ms = {} (TPOT method: {})",
                        show(u),
                        show(t),
                        show(1000.0 / t),
                        run.derived.tpot_ms.method.map_or("?", TpotMethod::as_str)
                    ));
                }
            }
            None => fails.push(format!(
                "reported.per_user_tok_per_s {} cannot be verified: it is 1000 / TPOT, and TPOT is undefined ({})",
                show(u),
                run.derived.tpot_ms.reason.as_deref().unwrap_or("no TPOT and no E2E latency to derive it from")
            )),
        }
    }
    if fails.is_empty() && passed.is_empty() {
        return (Status::Skipped, "no headline rate stated".into());
    }
    outcome(fails, passed.join("; "))
}

/// A stated derived figure against the recomputed one.
fn compare(fails: &mut Vec<String>, name: &str, stated: Option<f64>, recomputed: Option<f64>, why_none: Option<&str>) {
    let Some(s) = stated else { return };
    match recomputed {
        Some(r) if within(s, (r, r)) => {}
        Some(r) => fails.push(format!("derived.{name} is {s} but the report's own figures give {r}")),
        None => fails.push(format!(
            "derived.{name} is {s} but cannot be recomputed from the report ({})",
            why_none.unwrap_or("its inputs are absent")
        )),
    }
}

/// Tolerance between per-request figures and the figures they are checked against (the tool's
/// own per-request TPOT statistics, the token-weighted identity): see [`restated`].
const PER_REQUEST_TOLERANCE: f64 = 0.02;

/// A canonical run's stated derived figures (`stated`) against the recomputation in
/// `run.derived`. Every stated figure must be what the run's own inputs give, within the rounding
/// of its written digits.
///
/// Figures from per-request arrays (`method: per-request`) cannot be recomputed: a report does
/// not carry the arrays. They are checked against what the report does carry, and then stand in
/// for the recomputed TPOT (so the per-user rate and tokens per chunk follow from them):
/// * the request-weighted `mean`, `p50`, `p90`, `p99` against the tool's own TPOT statistics
///   (`reported.tpot_ms`: vLLM and SGLang compute them per request as `(latency - ttft) /
///   (output_len - 1)` from the same requests), within 2% (the captures agree within 0.06%; the
///   slack is for a tool's own rounding);
/// * `token_weighted_mean` is `sum(E2E_i - TTFT_i) / sum(n_i - 1)`, which is exactly `(E2E_mean -
///   TTFT_mean) / (N_out / R - 1)` over the same successful requests (single-token requests add
///   nothing to either sum); checked against that formula with the report's E2E (printed, else the
///   stated per-request mean) within 2%.
///
/// Without the tool's TPOT mean the per-request mean cannot be verified, and that is the finding.
pub fn restated(run: &mut Run, stated: &Derived) -> (Status, String) {
    let mut fails = Vec::new();
    let r = run.derived.clone();
    let st = &stated.tpot_ms;
    if st.method == Some(TpotMethod::PerRequest) {
        let tool = run.reported.stat("tpot_ms").cloned();
        let tool = tool.as_ref();
        let mut unverified: Vec<&str> = Vec::new();
        for (name, s, key) in [
            ("mean", st.mean, StatKey::Mean),
            ("p50", st.p50, StatKey::P(50.0)),
            ("p90", st.p90, StatKey::P(90.0)),
            ("p99", st.p99, StatKey::P(99.0)),
        ] {
            let Some(s) = s else { continue };
            match tool.and_then(|t| t.get(key)) {
                Some(t) if (s - t).abs() <= PER_REQUEST_TOLERANCE * t.abs() + slack(s) => {}
                Some(t) => fails.push(format!(
                    "derived.tpot_ms.{name} {} (per request) is not the tool's own per-request TPOT {name} {} (more than 2% apart)",
                    show(s),
                    show(t)
                )),
                None if name == "mean" => fails.push(format!(
                    "derived.tpot_ms.mean {} (per request) cannot be verified: the report has neither the per-request arrays nor the tool's TPOT mean (check the result file itself)",
                    show(s)
                )),
                // A percentile nothing in the report can confirm is not passed on as verified.
                None => unverified.push(name),
            }
        }
        if stated.per_request.is_none() {
            fails.push(
                "derived.tpot_ms.method is per-request but the report has no derived.per_request summary of the arrays"
                    .into(),
            );
        }
        if let Some(p) = &stated.per_request {
            let i = crate::derive::Inputs::of(run);
            if let (Some(s), Some(e)) = (p.e2e_mean_ms, run.reported.stat("e2e_ms").and_then(|s| s.mean())) {
                if (s - e).abs() > PER_REQUEST_TOLERANCE * e.abs() + slack(s) {
                    fails.push(format!(
                        "derived.per_request.e2e_mean_ms {} is not the report's mean E2E latency {} (more than 2% apart)",
                        show(s),
                        show(e)
                    ));
                }
            }
            if let Some(r) = i.successful {
                let measured = p.requests as f64 - p.failed as f64;
                if measured != r || p.single_token > p.requests.saturating_sub(p.failed) {
                    fails.push(format!(
                        "derived.per_request counts {} requests, {} failed, {} single-token, but the report's totals have {} successful requests",
                        p.requests,
                        p.failed,
                        p.single_token,
                        show(r)
                    ));
                }
            }
        }
        if let Some(tw) = st.token_weighted_mean {
            let i = crate::derive::Inputs::of(run);
            let e2e = i.e2e_mean.or(stated.per_request.as_ref().and_then(|p| p.e2e_mean_ms));
            match (e2e, i.ttft_mean, i.n_avg()) {
                (Some(e), Some(t), Some(n)) if n > 1.0 => {
                    let want = (e - t) / (n - 1.0);
                    if (tw - want).abs() > PER_REQUEST_TOLERANCE * want.abs() + slack(tw) {
                        fails.push(format!(
                            "derived.tpot_ms.token_weighted_mean {} is not (E2E {} - TTFT {}) / ({} tokens/request - 1) = {}",
                            show(tw),
                            show(e),
                            show(t),
                            show(n),
                            show(want)
                        ));
                    }
                }
                _ => fails.push(format!(
                    "derived.tpot_ms.token_weighted_mean {} cannot be verified: needs the mean E2E latency, the mean TTFT and the token and request totals",
                    show(tw)
                )),
            }
        }
        // The verified per-request TPOT stands in for the recomputed one.
        if let Some(m) = st.mean.filter(|m| *m > 0.0) {
            run.derived.tpot_ms = st.clone();
            for name in &unverified {
                match *name {
                    "p50" => run.derived.tpot_ms.p50 = None,
                    "p90" => run.derived.tpot_ms.p90 = None,
                    _ => run.derived.tpot_ms.p99 = None,
                }
            }
            if !unverified.is_empty() {
                run.notes.push(crate::report::Note {
                    code: "unverified-left-out".into(),
                    message: format!(
                        "derived.tpot_ms {} (per request) left out: the report has no per-request arrays and the tool printed no such TPOT percentile to confirm it",
                        unverified.join(", ")
                    ),
                    line: None,
                });
            }
            run.derived.per_request = stated.per_request.clone();
            if let Some(p) = run.derived.per_request.as_mut() {
                if p.tokens_per_chunk.take().is_some() {
                    run.notes.push(crate::report::Note {
                        code: "unverified-left-out".into(),
                        message: "derived.per_request.tokens_per_chunk left out: it needs the per-request arrays"
                            .into(),
                        line: None,
                    });
                }
            }
            run.derived.undefined.remove("per_user_decode_tok_per_s");
            run.derived.per_user_decode_tok_per_s = Some(crate::derive::round(1000.0 / m));
            let itl = run.reported.stat("itl_ms").and_then(|s| s.mean());
            if run.source.semantics.itl == Some(crate::report::ItlPer::Chunk) {
                run.derived.tokens_per_chunk = match itl {
                    Some(itl) if itl > 0.0 => Some(crate::derive::round(itl / m)),
                    _ => None,
                };
            }
        }
    } else {
        if let (Some(sm), Some(rm)) = (st.method, r.tpot_ms.method) {
            if sm != rm && st.mean.is_some() {
                fails.push(format!(
                    "derived.tpot_ms.method is {} but the report's own figures give {}",
                    sm.as_str(),
                    rm.as_str()
                ));
            }
        }
        let why = r.tpot_ms.reason.as_deref();
        compare(&mut fails, "tpot_ms.mean", st.mean, r.tpot_ms.mean, why);
        compare(&mut fails, "tpot_ms.p50", st.p50, r.tpot_ms.p50, why);
        compare(&mut fails, "tpot_ms.p90", st.p90, r.tpot_ms.p90, why);
        compare(&mut fails, "tpot_ms.p99", st.p99, r.tpot_ms.p99, why);
        compare(&mut fails, "tpot_ms.token_weighted_mean", st.token_weighted_mean, r.tpot_ms.token_weighted_mean, why);
    }
    let d = run.derived.clone();
    let why = |name: &str| d.undefined.get(name).map(String::as_str);
    for (name, s, rc) in [
        ("per_user_decode_tok_per_s", stated.per_user_decode_tok_per_s, d.per_user_decode_tok_per_s),
        ("output_tok_per_s", stated.output_tok_per_s, d.output_tok_per_s),
        ("request_per_s", stated.request_per_s, d.request_per_s),
        ("mean_in_flight", stated.mean_in_flight, d.mean_in_flight),
        ("slot_utilization", stated.slot_utilization, d.slot_utilization),
        ("tokens_per_chunk", stated.tokens_per_chunk, d.tokens_per_chunk),
    ] {
        compare(&mut fails, name, s, rc, why(name));
    }
    compare(
        &mut fails,
        "e2e_ms.mean",
        stated.e2e_ms.as_ref().map(|e| e.mean),
        d.e2e_ms.as_ref().map(|e| e.mean),
        Some("the report has a measured E2E latency, or no TTFT and TPOT to approximate one"),
    );
    let any_stated = stated.tpot_ms.mean.is_some()
        || stated.per_user_decode_tok_per_s.is_some()
        || stated.output_tok_per_s.is_some()
        || stated.request_per_s.is_some()
        || stated.mean_in_flight.is_some()
        || stated.slot_utilization.is_some()
        || stated.tokens_per_chunk.is_some()
        || stated.e2e_ms.is_some();
    if !any_stated {
        return (Status::Skipped, "the report states no derived figure".into());
    }
    outcome(fails, "every stated derived figure is what the report's own figures give".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_digits_set_the_rounding() {
        assert_eq!(written_half_unit(26.75), 0.005);
        assert_eq!(written_half_unit(4096.0), 0.5);
        // 5.13 written to one decimal is 5.1; 5.2 is not it.
        assert!(within(5.1, (5.13, 5.13)));
        assert!(!within(5.2, (5.13, 5.13)));
        // An integer-valued figure: at most 0.5% either way.
        assert!(within(78.0, (78.114, 78.114)));
        assert!(!within(5.0, (5.13, 5.13)));
        // 8192 tokens over a duration written 26.8 (26.75 rounded): 306.24 is in the interval.
        assert!(within(306.24, divide((8192.0, 8192.0), interval(26.8))));
        assert!(!within(3062.4, divide((8192.0, 8192.0), interval(26.8))));
    }

    #[test]
    fn paths_escape_odd_keys() {
        assert_eq!(join("", "metrics"), "metrics");
        assert_eq!(join("reported.itl_ms", "p99.9"), "reported.itl_ms.p99.9");
        assert_eq!(join("metrics", "a\u{1b}[2J"), "metrics[\"a\\u001b[2J\"]");
    }

    #[test]
    fn bearer_tokens_as_dstack_sees_them() {
        assert!(crate::dstack_model::bearer_token("curl -H 'Authorization: Bearer sk1234567890abcdefgh'").is_some());
        for fine in [
            "Bearer $TOKEN",
            "bearer ****************",
            "Bearer REDACTED1234567890",
            "bearer short1",
            "auth via bearer header from env",
        ] {
            assert_eq!(crate::dstack_model::bearer_token(fine), None, "{fine}");
        }
    }
}
