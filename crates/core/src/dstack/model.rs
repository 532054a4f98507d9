//! dstack's own model, for `check` of dstack's documents: what dstack 0.22.5 would refuse to
//! store (`PresetBenchmark`, `PresetWorkload`, `PresetBenchmarkMetrics` and
//! `PresetBenchmarkLatency` in `dstack/_internal/core/models/presets.py`, all `extra="forbid"`).
//!
//! Read from the run's rows (a JSON document's every key is a row, its path the label, a `null`
//! an absent value), so that a key dstack does not know, a `null` where it needs a number and a
//! value out of its bounds are each named. Every document is held to the model as dstack 0.22.5
//! has it: a bare `benchmark` object, the documents dstack's agent writes (`trial.json`,
//! `final_report.json`), and a bare `metrics` object (`PresetBenchmarkMetrics`). dstack#4230's
//! proposed `e2e_ms` is a key dstack forbids: a document whose only violations are the
//! proposal's is said to be one dstack would refuse, the rule skipped, never passed (`outcome`).

use crate::report::Run;

/// Which of dstack's models a dstack document is read against, and where it lies in the
/// document; `None` for a run read by another definition.
#[derive(Clone, Copy, PartialEq)]
enum Model {
    /// `PresetBenchmark`, below this prefix (`""`: a bare benchmark object; `benchmark.`: dstack's
    /// agent documents).
    Benchmark(&'static str),
    /// `PresetBenchmarkMetrics` alone: a bare `metrics` object (`--format dstack` of a log).
    Metrics,
}

fn model(run: &Run) -> Option<Model> {
    match run.source.parser.as_str() {
        "dstack-preset" => Some(Model::Benchmark("")),
        "dstack-agent-document" => Some(Model::Benchmark("benchmark.")),
        "dstack-metrics" => Some(Model::Metrics),
        _ => None,
    }
}

/// A field of dstack's model and what it accepts.
#[derive(Clone, Copy)]
enum Kind {
    /// A non-empty string (`min_length=1`).
    Text,
    /// `api`: a `Literal["chat_completions", "completions"]`.
    Api,
    /// An optional string (`dataset`).
    OptionalText,
    /// A whole number of at least this.
    Int(i64),
    /// An optional whole number of at least this (`shared_prefix_tokens`, default 0).
    OptionalInt(i64),
    /// A number above 0 (`PositiveFloat`).
    Positive,
    /// A number of 0 or more (latencies).
    NonNegative,
}

/// Every field of `PresetBenchmark`, by its path below the benchmark object.
const FIELDS: &[(&str, Kind)] = &[
    ("tool", Kind::Text),
    ("tool_version", Kind::Text),
    ("command", Kind::Text),
    ("workload.api", Kind::Api),
    ("workload.dataset", Kind::OptionalText),
    ("workload.num_requests", Kind::Int(1)),
    ("workload.input_tokens", Kind::Int(1)),
    ("workload.output_tokens", Kind::Int(2)),
    ("workload.concurrency", Kind::Int(1)),
    ("workload.shared_prefix_tokens", Kind::OptionalInt(0)),
    ("metrics.successful_requests", Kind::Int(0)),
    ("metrics.failed_requests", Kind::Int(0)),
    ("metrics.duration_seconds", Kind::Positive),
    ("metrics.total_input_tokens", Kind::Int(0)),
    ("metrics.total_output_tokens", Kind::Int(0)),
    ("metrics.output_tok_per_s", Kind::Positive),
    ("metrics.per_user_tok_per_s", Kind::Positive),
    ("metrics.ttft_ms.mean", Kind::NonNegative),
    ("metrics.ttft_ms.p50", Kind::NonNegative),
    ("metrics.ttft_ms.p99", Kind::NonNegative),
    ("metrics.tpot_ms.mean", Kind::NonNegative),
    ("metrics.tpot_ms.p50", Kind::NonNegative),
    ("metrics.tpot_ms.p99", Kind::NonNegative),
];

/// Objects of the model (a row of one of these is an object written empty or as a whole).
const OBJECTS: &[&str] = &["workload", "metrics", "metrics.ttft_ms", "metrics.tpot_ms"];

/// What dstack's model would refuse in a dstack document, exactly as dstack 0.22.5's pydantic
/// model decides (no relaxation: dstack#4230's `e2e_ms` is a key dstack forbids): `None` for a
/// run of another source, else every violation (empty: dstack accepts it).
pub fn violations(run: &Run) -> Option<Vec<String>> {
    let m = model(run)?;
    let root = match m {
        Model::Benchmark(prefix) => prefix,
        Model::Metrics => "",
    };
    // The model's fields and objects, relative to the document's root.
    let fields: Vec<(&str, Kind)> = match m {
        Model::Benchmark(_) => FIELDS.to_vec(),
        Model::Metrics => FIELDS.iter().filter_map(|(p, k)| p.strip_prefix("metrics.").map(|p| (p, *k))).collect(),
    };
    let objects: Vec<&str> = match m {
        Model::Benchmark(_) => OBJECTS.to_vec(),
        Model::Metrics => OBJECTS.iter().filter_map(|p| p.strip_prefix("metrics.")).collect(),
    };
    let mut out = Vec::new();
    // The rows below the model's root: path relative to it, value (None: null).
    let rows: Vec<(&str, Option<&str>)> =
        run.rows.iter().filter_map(|r| r.label.strip_prefix(root).map(|rel| (rel, r.value.as_deref()))).collect();
    let value = |path: &str| rows.iter().find(|(p, _)| *p == path).map(|(_, v)| *v);
    for (path, v) in &rows {
        let known = fields.iter().any(|(f, _)| f == path) || objects.contains(path);
        if !known {
            out.push(format!("{root}{path}: dstack does not know this key (its model forbids unknown keys)"));
        } else if objects.contains(path) {
            out.push(format!("{root}{path}: dstack needs an object with its fields here, got {}", v.unwrap_or("null")));
        }
    }
    for (path, kind) in &fields {
        let at = format!("{root}{path}");
        let optional = matches!(kind, Kind::OptionalText | Kind::OptionalInt(_));
        let text = match value(path) {
            None | Some(None) if optional => continue,
            None => {
                out.push(format!("{at}: missing: dstack requires it"));
                continue;
            }
            Some(None) => {
                out.push(format!("{at}: dstack needs a value, got null"));
                continue;
            }
            Some(Some(t)) => t,
        };
        let number = text.parse::<f64>().ok().filter(|x| x.is_finite());
        match (kind, number) {
            (Kind::Text, _) if text.trim().is_empty() => out.push(format!("{at}: dstack needs a non-empty string")),
            (Kind::Api, _) if !["chat_completions", "completions"].contains(&text) => {
                out.push(format!("{at}: dstack knows only \"chat_completions\" and \"completions\", got \"{text}\""))
            }
            (Kind::Int(min) | Kind::OptionalInt(min), Some(x)) if x < *min as f64 => {
                out.push(format!("{at}: dstack needs a whole number of at least {min}, got {text}"))
            }
            (Kind::Positive, Some(x)) if x <= 0.0 => {
                out.push(format!("{at}: dstack needs a number above 0, got {text}"))
            }
            (Kind::NonNegative, Some(x)) if x < 0.0 => {
                out.push(format!("{at}: dstack needs a number of 0 or more, got {text}"))
            }
            (Kind::Int(_) | Kind::OptionalInt(_) | Kind::Positive | Kind::NonNegative, None) => {
                out.push(format!("{at}: dstack needs a number, got {text}"))
            }
            _ => {}
        }
    }
    if m == Model::Metrics {
        // `PresetBenchmarkMetrics` has no validator across its fields (those are
        // `PresetBenchmark`'s).
        return Some(out);
    }
    // PresetBenchmark.validate_metrics.
    let number = |path: &str| value(path).flatten().and_then(|t| t.parse::<f64>().ok());
    if let Some(f) = number("metrics.failed_requests").filter(|f| *f != 0.0) {
        out.push(format!(
            "{root}metrics.failed_requests: {f}: dstack's model refuses a benchmark with failed requests"
        ));
    }
    if let (Some(r), Some(n)) = (number("metrics.successful_requests"), number("workload.num_requests"))
        && r != n
    {
        out.push(format!(
                "{root}metrics.successful_requests: {r} is not workload.num_requests {n}: dstack's model requires them equal"
            ));
    }
    // PresetBenchmark.validate_command_has_no_bearer_token.
    if let Some(Some(command)) = value("command")
        && let Some(token) = bearer_token(command)
    {
        out.push(format!(
            "{root}command: holds a bearer token value ({}...): dstack's model refuses it",
            token.chars().take(4).collect::<String>()
        ));
    }
    Some(out)
}

/// Whether a run is dstack#4230's proposed metrics object (a bare metrics object with `e2e_ms`,
/// what `--format dstack-e2e` writes), whose `per_user_tok_per_s` is `1000 / tpot_ms.mean`. (A
/// `benchmark` object with `e2e_ms` keeps dstack's definitions.)
pub fn is_proposal(run: &Run) -> bool {
    model(run) == Some(Model::Metrics) && run.rows.iter().any(|r| r.label == "e2e_ms" || r.label.starts_with("e2e_ms."))
}

/// The rule `dstack-model` for a dstack document: dstack's own verdict ([`violations`]). What
/// dstack#4230 proposes is not dstack's model: a document whose only violations are the
/// proposal's (its `e2e_ms`, and in the proposal's bare metrics object, `null` for what a run does
/// not give) is said to be one dstack 0.22.5 would refuse, and the rule is skipped (never passed:
/// `check`'s verdict on dstack's shape stays dstack's); any other violation fails it. `None` for a
/// run of another source.
pub fn outcome(run: &Run) -> Option<(crate::report::Status, String)> {
    use crate::report::Status;
    let v = violations(run)?;
    let m = model(run)?;
    let which = match m {
        Model::Metrics => "PresetBenchmarkMetrics",
        Model::Benchmark(_) => "PresetBenchmark",
    };
    let e2e = match m {
        Model::Benchmark(prefix) => format!("{prefix}metrics.e2e_ms"),
        Model::Metrics => "e2e_ms".into(),
    };
    let proposal = is_proposal(run);
    let (proposed, other): (Vec<&String>, Vec<&String>) =
        v.iter().partition(|x| x.starts_with(&e2e) || (proposal && x.ends_with(": dstack needs a value, got null")));
    Some(if v.is_empty() {
        (Status::Pass, format!("dstack's model accepts the document ({which})"))
    } else if other.is_empty() {
        (
            Status::Skipped,
            format!(
                "dstack#4230's proposal, not dstack's model: dstack 0.22.5 would refuse it ({which}): {}",
                proposed.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")
            ),
        )
    } else {
        (Status::Fail, format!("dstack's model would refuse it: {} ({which})", v.join("; ")))
    })
}

/// A credential-shaped bearer token in a command line, as dstack's validator finds it: after
/// `bearer` (any case), not a `$VARIABLE`, not `redacted`, not all `*`, 16 characters or more with
/// a digit (dstack's `validate_command_has_no_bearer_token`).
pub fn bearer_token(command: &str) -> Option<&str> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r#"(?i)\bbearer\s+([^\s"']+)"#).expect("a valid pattern"));
    re.captures_iter(command).filter_map(|c| c.get(1)).map(|m| m.as_str()).find(|token| {
        !(token.starts_with('$')
            || token.to_lowercase().contains("redacted")
            || token.chars().all(|c| c == '*')
            || token.chars().count() < 16
            || !token.chars().any(|c| c.is_ascii_digit()))
    })
}

/// The keys of an entry of `-f dstack` / `-f dstack-e2e` for several runs, besides its object:
/// which input, block (1-based), first line and load (`max_concurrency`, `request_rate`) it is.
pub const ENTRY_KEYS: [&str; 4] = ["input", "block", "first_line", "load"];

/// The object an entry holds, under `benchmark` (dstack's whole `PresetBenchmark`) or `metrics`
/// (its `PresetBenchmarkMetrics`, or dstack#4230's): its key and value. `None` for anything but
/// an entry (exactly [`ENTRY_KEYS`] and one of the two, holding an object): dstack's own objects
/// have none of these keys but `metrics`, so none is taken for an entry.
pub fn entry_object<'a>(
    fields: impl Iterator<Item = (&'a str, &'a serde_json::Value)>,
) -> Option<(&'a str, &'a serde_json::Value)> {
    let mut object = None;
    let mut labels = 0;
    for (k, v) in fields {
        match k {
            "benchmark" | "metrics" if object.is_none() && v.is_object() => object = Some((k, v)),
            _ if ENTRY_KEYS.contains(&k) => labels += 1,
            _ => return None,
        }
    }
    object.filter(|_| labels == ENTRY_KEYS.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_as_dstack_finds_them() {
        assert_eq!(bearer_token("curl -H 'Authorization: Bearer abcdef0123456789xyz'"), Some("abcdef0123456789xyz"));
        for fine in [
            "curl -H 'Authorization: Bearer $TOKEN'",
            "auth via bearer header from env",
            "Bearer ****************",
            "Bearer REDACTED0123456789",
            "Bearer abcdefghijklmnopqrstuvwxyz",
        ] {
            assert_eq!(bearer_token(fine), None, "{fine}");
        }
    }

    #[test]
    fn bearer_tokens_as_dstack_sees_them() {
        assert!(bearer_token("curl -H 'Authorization: Bearer sk1234567890abcdefgh'").is_some());
        for fine in [
            "Bearer $TOKEN",
            "bearer ****************",
            "Bearer REDACTED1234567890",
            "bearer short1",
            "auth via bearer header from env",
        ] {
            assert_eq!(bearer_token(fine), None, "{fine}");
        }
    }
}
