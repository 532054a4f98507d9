//! Layer 1, shape: a canonical report walked as a schema validator walks it (the walker is
//! `crate::shape`), every place where it is not the shape it claims to be returned with its JSON
//! path. dstack's documents are walked in `crate::dstack::shape`.

use serde_json::Value;

use crate::report::StatKey;
use crate::shape::{ShapeError, Ty, check_ty, describe, join, object};

pub(super) const VERDICTS: &[&str] = &["accepted", "rejected", "unusable"];
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

pub(super) fn schema_version(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    if v.as_u64() != Some(u64::from(crate::report::SCHEMA_VERSION)) {
        out.push(ShapeError {
            path: at.to_string(),
            expected: format!("{} (the version this bench-normalize reads)", crate::report::SCHEMA_VERSION),
            found: describe(v),
        });
    }
}

pub(super) fn run_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
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

pub(super) fn source_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
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
                            ("rates", Ty::Null(&Ty::Enum(&["all", "output-and-request", "own-window"])), false),
                            ("percentiles", Ty::Null(&Ty::Enum(&["numpy-linear"])), false),
                            ("tpot_weighting", Ty::Null(&Ty::Enum(&["request", "token"])), false),
                        ],
                        out,
                    )
                }),
                false,
            ),
            // `run -- CLIENT`: how the client was run (the report `run` writes is read back).
            ("run", Ty::Null(&Ty::Walk(client_run_shape)), false),
        ],
        out,
    );
}

/// `source.run`: [`crate::report::ClientRun`].
fn client_run_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
    const STRS: Ty = Ty::List(&Ty::Str);
    object(
        v,
        at,
        "how the client was run",
        &[
            ("client", Ty::Null(&Ty::Str), false),
            ("given", STRS, true),
            ("command", STRS, true),
            ("added_flags", STRS, false),
            ("tool_version", Ty::Null(&Ty::Str), false),
            ("version_from", Ty::Str, false),
            ("started", Ty::Str, true),
            ("ended", Ty::Str, true),
            ("duration_s", Ty::NumMin0, true),
            ("exit_code", Ty::Null(&Ty::Num), false),
            ("signal", Ty::Null(&Ty::Num), false),
            ("forwarded_signals", Ty::List(&Ty::Num), false),
            ("result_file", Ty::Null(&Ty::Str), false),
            ("kept", Ty::Null(&Ty::Str), false),
        ],
        out,
    );
}

/// `workload`, `totals`, `reported`: every figure of the vocabulary has its kind; other names are
/// allowed (a report may carry its own figures), objects among them walked for known figures.
pub(super) fn figures(v: &Value, at: &str, prefix: &str, out: &mut Vec<ShapeError>) {
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
pub(super) fn stat_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
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

pub(super) fn derived_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
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
                            ("tested_by", Ty::List(&Ty::Str), false),
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

pub(super) fn check_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
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

pub(super) fn note_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
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

pub(super) fn row_shape(v: &Value, at: &str, out: &mut Vec<ShapeError>) {
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
