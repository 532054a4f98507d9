//! dstack's own model, for `check` of dstack's documents: what dstack 0.22.5 would refuse to
//! store (`PresetBenchmark`, `PresetWorkload`, `PresetBenchmarkMetrics` and
//! `PresetBenchmarkLatency` in `dstack/_internal/core/models/presets.py`, all `extra="forbid"`).
//!
//! Read from the run's rows (a JSON document's every key is a row, its path the label, a `null`
//! an absent value), so that a key dstack does not know, a `null` where it needs a number and a
//! value out of its bounds are each named. The dstack-preset shape (a bare `benchmark` object)
//! also accepts what dstack#4230 proposes: `metrics.e2e_ms`, and `null` TPOT figures; the
//! documents dstack's agent writes (`trial.json`, `final_report.json`) are held to the model as
//! it is.

use crate::report::Run;

/// Where the `benchmark` object lies in a document of a dstack definition, and whether the
/// proposal's relaxations apply; `None` for a run read by another definition.
fn root(run: &Run) -> Option<(&'static str, bool)> {
    match run.source.parser.as_str() {
        "dstack-preset" => Some(("", true)),
        "dstack-agent-document" => Some(("benchmark.", false)),
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

/// What dstack's model would refuse in a dstack document: `None` for a run of another source,
/// else every violation (empty: dstack accepts it).
pub fn violations(run: &Run) -> Option<Vec<String>> {
    let (root, proposal) = root(run)?;
    let mut out = Vec::new();
    // The rows below the benchmark object: path relative to it, value (None: null).
    let rows: Vec<(&str, Option<&str>)> =
        run.rows.iter().filter_map(|r| r.label.strip_prefix(root).map(|rel| (rel, r.value.as_deref()))).collect();
    let value = |path: &str| rows.iter().find(|(p, _)| *p == path).map(|(_, v)| *v);
    let proposed = |path: &str| proposal && (path == "metrics.e2e_ms" || path.starts_with("metrics.e2e_ms."));
    for (path, v) in &rows {
        let known = FIELDS.iter().any(|(f, _)| f == path) || OBJECTS.contains(path);
        if !known && !proposed(path) {
            out.push(format!("{root}{path}: dstack does not know this key (its model forbids unknown keys)"));
        } else if OBJECTS.contains(path) && !(proposal && *path == "metrics.tpot_ms" && v.is_none()) {
            out.push(format!("{root}{path}: dstack needs an object with its fields here, got {}", v.unwrap_or("null")));
        }
    }
    let tpot_may_be_null = |path: &str| proposal && path.starts_with("metrics.tpot_ms.");
    for (path, kind) in FIELDS {
        let at = format!("{root}{path}");
        let optional = matches!(kind, Kind::OptionalText | Kind::OptionalInt(_));
        let text = match value(path) {
            None if optional || tpot_may_be_null(path) => continue,
            None => {
                out.push(format!("{at}: missing: dstack requires it"));
                continue;
            }
            Some(None) if optional || tpot_may_be_null(path) => continue,
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
    // PresetBenchmark.validate_metrics.
    let number = |path: &str| value(path).flatten().and_then(|t| t.parse::<f64>().ok());
    if let Some(f) = number("metrics.failed_requests").filter(|f| *f != 0.0) {
        out.push(format!(
            "{root}metrics.failed_requests: {f}: dstack's model refuses a benchmark with failed requests"
        ));
    }
    if let (Some(r), Some(n)) = (number("metrics.successful_requests"), number("workload.num_requests")) {
        if r != n {
            out.push(format!(
                "{root}metrics.successful_requests: {r} is not workload.num_requests {n}: dstack's model requires them equal"
            ));
        }
    }
    // PresetBenchmark.validate_command_has_no_bearer_token.
    if let Some(Some(command)) = value("command") {
        if let Some(token) = bearer_token(command) {
            out.push(format!(
                "{root}command: holds a bearer token value ({}...): dstack's model refuses it",
                token.chars().take(4).collect::<String>()
            ));
        }
    }
    Some(out)
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
}
