//! Service-level objectives (`--slo 'ttft.p99<=2000,tpot.mean<=40,e2e.p50<=10s'`): the spec's
//! grammar (read with nom), and each objective judged on a run.
//!
//! The grammar (whitespace allowed between the parts; names in any case, written lower case):
//!
//! ```text
//! spec      = objective *( "," objective )
//! objective = latency "." stat op limit [ "ms" | "s" ]
//!           | rate op limit [ "tok/s" ]                  ; decode_rate, output_throughput
//!           | "request_throughput" op limit [ "req/s" ]
//! latency   = "ttft" | "tpot" | "itl" | "e2e"
//! stat      = "mean" | "median" | "min" | "max" | "p" number   ; median is p50; 0 < p < 100
//! op        = "<=" | "<" | ">=" | ">"
//! limit     = digits [ "." digits ]                      ; ms when no unit is given
//! ```
//!
//! What each metric is judged on (never an approximation, never a percentile interpolated from
//! others): `ttft`, `e2e` the tool's own statistics (`reported.ttft_ms`, `reported.e2e_ms`; the
//! mean E2E of per-request arrays when the tool printed none); `tpot` the **derived** TPOT
//! (`derived.tpot_ms`, methods `per-request` and `e2e-ttft-tokens` only: never a printed TPOT or
//! ITL row); `itl` the tool's ITL only when it is timed per token (a per-chunk ITL is not a
//! per-token latency: `not-comparable`); `decode_rate` `1000 / derived TPOT`;
//! `output_throughput`, `request_throughput` recomputed from the totals (`derived`).

use std::fmt;
use std::str::FromStr;

use nom::{
    IResult, Parser,
    branch::alt,
    bytes::complete::{tag, take_while, take_while1},
    character::complete::{char, digit1, multispace0},
    combinator::{opt, recognize},
    sequence::{pair, preceded},
};

use crate::error::printable;
use crate::number::{round, show};
use crate::report::{ItlPer, ObjectiveResult, ObjectiveStatus, Run, StatKey, TpotMethod, Verdict};
use crate::vocabulary::{Key, reported};

/// What an objective is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Ttft,
    /// The derived TPOT.
    Tpot,
    /// The tool's ITL, when timed per token.
    Itl,
    E2e,
    /// The per-user decode rate, `1000 / derived TPOT` (tok/s).
    DecodeRate,
    /// Output tokens / duration (tok/s).
    OutputThroughput,
    /// Successful requests / duration (req/s).
    RequestThroughput,
}

impl Metric {
    pub const ALL: [Metric; 7] = [
        Metric::Ttft,
        Metric::Tpot,
        Metric::Itl,
        Metric::E2e,
        Metric::DecodeRate,
        Metric::OutputThroughput,
        Metric::RequestThroughput,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft",
            Metric::Tpot => "tpot",
            Metric::Itl => "itl",
            Metric::E2e => "e2e",
            Metric::DecodeRate => "decode_rate",
            Metric::OutputThroughput => "output_throughput",
            Metric::RequestThroughput => "request_throughput",
        }
    }

    fn of_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name().eq_ignore_ascii_case(name))
    }

    /// A latency distribution (needs a statistic), or one figure of the run.
    pub fn is_latency(self) -> bool {
        matches!(self, Metric::Ttft | Metric::Tpot | Metric::Itl | Metric::E2e)
    }

    /// The unit values and limits are judged in.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Ttft | Metric::Tpot | Metric::Itl | Metric::E2e => "ms",
            Metric::DecodeRate | Metric::OutputThroughput => "tok/s",
            Metric::RequestThroughput => "req/s",
        }
    }

    /// What the metric is, for a person.
    fn what(self) -> &'static str {
        match self {
            Metric::Ttft => "TTFT",
            Metric::Tpot => "derived TPOT",
            Metric::Itl => "ITL",
            Metric::E2e => "E2E latency",
            Metric::DecodeRate => "per-user decode rate",
            Metric::OutputThroughput => "output throughput",
            Metric::RequestThroughput => "request throughput",
        }
    }
}

/// The comparison an objective asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Le,
    Lt,
    Ge,
    Gt,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Gt => ">",
        }
    }

    /// Whether `value` meets `limit`: compared exactly, as the run gives the value.
    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Op::Le => value <= limit,
            Op::Lt => value < limit,
            Op::Ge => value >= limit,
            Op::Gt => value > limit,
        }
    }

    /// How far `value` is inside `limit` (negative outside).
    fn margin(self, value: f64, limit: f64) -> f64 {
        match self {
            Op::Le | Op::Lt => limit - value,
            Op::Ge | Op::Gt => value - limit,
        }
    }
}

/// A unit written after a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ms,
    S,
    TokPerS,
    ReqPerS,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::TokPerS => "tok/s",
            Unit::ReqPerS => "req/s",
        }
    }

    /// The units a metric's limit may be written in.
    fn allowed(metric: Metric) -> &'static [Unit] {
        match metric {
            Metric::Ttft | Metric::Tpot | Metric::Itl | Metric::E2e => &[Unit::Ms, Unit::S],
            Metric::DecodeRate | Metric::OutputThroughput => &[Unit::TokPerS],
            Metric::RequestThroughput => &[Unit::ReqPerS],
        }
    }
}

/// One objective, as given.
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    pub metric: Metric,
    /// The statistic (latencies only; never [`StatKey::Std`]).
    pub stat: Option<StatKey>,
    pub op: Op,
    /// The limit as written (in `unit`, or the metric's unit when none is written).
    pub limit: f64,
    /// The unit written after the limit, if any.
    pub unit: Option<Unit>,
}

impl Objective {
    /// The limit in the metric's unit ([`Metric::unit`]): seconds become milliseconds, the
    /// decimal shifted in the text so that `0.3s` is exactly `300` ms.
    pub fn limit_in_unit(&self) -> f64 {
        match self.unit {
            Some(Unit::S) => format!("{}e3", self.limit).parse().unwrap_or(f64::INFINITY),
            _ => self.limit,
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.metric.name())?;
        if let Some(s) = self.stat {
            write!(f, ".{}", s.name())?;
        }
        write!(f, "{}{}", self.op.as_str(), self.limit)?;
        if let Some(u) = self.unit {
            f.write_str(u.as_str())?;
        }
        Ok(())
    }
}

/// The objectives of `--slo`, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct Objectives(pub Vec<Objective>);

impl fmt::Display for Objectives {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (i, o) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{o}")?;
        }
        Ok(())
    }
}

impl FromStr for Objectives {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Objectives, SpecError> {
        parse(s)
    }
}

// ------------------------------------------------------------------------------------------------
// Errors

/// A part of the spec, quoted for a person: escaped (it may come from an environment variable,
/// and reach a terminal).
fn q(s: &str) -> String {
    format!("\"{}\"", printable(s))
}

/// What is wrong with an objective; each variant quotes the offending part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecErrorKind {
    #[error("no objective given")]
    Empty,
    #[error("an empty objective (two commas in a row, or a comma at an end)")]
    EmptyObjective,
    #[error(
        "unknown metric {}: use ttft, tpot, itl, e2e (with a statistic), decode_rate, output_throughput or \
         request_throughput",
        q(.0)
    )]
    UnknownMetric(String),
    #[error("{0} needs a statistic: {0}.mean, {0}.p50, {0}.p99, ...")]
    MissingStat(&'static str),
    #[error("{metric} is one figure of the run and takes no statistic (found {}): write {metric}>=...", q(.stat))]
    StatNotAllowed { metric: &'static str, stat: String },
    #[error(
        "unknown statistic {}: use mean, median, min, max or a percentile pN, 0 < N < 100 (p50, p90, p95, p99, p99.9)",
        q(.0)
    )]
    UnknownStat(String),
    #[error("expected a comparison <=, <, >= or >, found {}", q(.0))]
    MissingOp(String),
    #[error("expected a limit, a number >= 0 such as 2000 or 0.5, found {}", q(.0))]
    BadLimit(String),
    #[error("the limit {} is too large", q(.0))]
    LimitTooLarge(String),
    #[error("unit {} does not fit {metric}: write {allowed}, or no unit for {default}", q(.unit))]
    BadUnit { unit: String, metric: &'static str, allowed: String, default: &'static str },
    #[error("unexpected {} after the objective (objectives are separated by commas)", q(.0))]
    Trailing(String),
}

/// A spec that cannot be read: what is wrong, in which objective, and where (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub kind: SpecErrorKind,
    /// The objective the error is in, as given (trimmed); empty for [`SpecErrorKind::Empty`].
    pub objective: String,
    /// 1-based column (in characters) of the offending part in the whole spec.
    pub column: usize,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.kind {
            SpecErrorKind::Empty | SpecErrorKind::EmptyObjective => write!(f, "{} (column {})", self.kind, self.column),
            _ => write!(f, "objective {}, column {}: {}", q(&self.objective), self.column, self.kind),
        }
    }
}

impl std::error::Error for SpecError {}

// ------------------------------------------------------------------------------------------------
// Parsing

type Res<'a, T> = IResult<&'a str, T, nom::error::Error<&'a str>>;

fn ws(i: &str) -> &str {
    multispace0::<_, nom::error::Error<&str>>.parse(i).map_or(i, |(r, _)| r)
}

fn identifier(i: &str) -> Res<'_, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_').parse(i)
}

fn stat_word(i: &str) -> Res<'_, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_').parse(i)
}

fn op(i: &str) -> Res<'_, Op> {
    alt((tag("<=").map(|_| Op::Le), tag(">=").map(|_| Op::Ge), tag("<").map(|_| Op::Lt), tag(">").map(|_| Op::Gt)))
        .parse(i)
}

fn limit(i: &str) -> Res<'_, &str> {
    recognize(pair(digit1, opt(preceded(char('.'), digit1)))).parse(i)
}

fn unit_word(i: &str) -> Res<'_, &str> {
    take_while(|c: char| c.is_ascii_alphabetic() || c == '/').parse(i)
}

/// The text from `i` to the next comma (or the end), trimmed: what an error quotes.
fn up_to_comma(i: &str) -> &str {
    i.split(',').next().unwrap_or("").trim()
}

/// A statistic's name: `mean`, `median` (p50), `min`, `max`, `pN` with 0 < N < 100.
fn stat_of(word: &str) -> Option<StatKey> {
    let w = word.to_ascii_lowercase();
    match w.as_str() {
        "mean" => return Some(StatKey::Mean),
        "median" => return Some(StatKey::P(50.0)),
        "min" => return Some(StatKey::Min),
        "max" => return Some(StatKey::Max),
        _ => {}
    }
    let n = w.strip_prefix('p')?;
    let (rest, _) = limit(n).ok()?;
    if !rest.is_empty() {
        return None;
    }
    let p: f64 = n.parse().ok()?;
    (p > 0.0 && p < 100.0).then_some(StatKey::P(p))
}

/// Read a spec. Never panics; a bad spec is a [`SpecError`] that quotes what is wrong.
pub fn parse(spec: &str) -> Result<Objectives, SpecError> {
    let col = |rest: &str| spec[..spec.len() - rest.len()].chars().count() + 1;
    if spec.trim().is_empty() {
        return Err(SpecError { kind: SpecErrorKind::Empty, objective: String::new(), column: 1 });
    }
    let mut out = Vec::new();
    let mut rest = spec;
    loop {
        let i = ws(rest);
        let text = up_to_comma(i);
        if text.is_empty() {
            return Err(SpecError { kind: SpecErrorKind::EmptyObjective, objective: String::new(), column: col(i) });
        }
        let fail = |kind, at: &str| SpecError { kind, objective: text.to_string(), column: col(at) };
        let (o, after) = objective(i).map_err(|(kind, at)| fail(kind, at))?;
        out.push(o);
        let after = ws(after);
        if after.is_empty() {
            return Ok(Objectives(out));
        }
        match char::<_, nom::error::Error<&str>>(',').parse(after) {
            Ok((r, _)) => rest = r,
            Err(_) => return Err(fail(SpecErrorKind::Trailing(up_to_comma(after).to_string()), after)),
        }
    }
}

/// One objective from the start of `i`, and what follows it; or what is wrong, and where.
fn objective(i: &str) -> Result<(Objective, &str), (SpecErrorKind, &str)> {
    fn unknown_metric(at: &str) -> (SpecErrorKind, &str) {
        let word: String =
            at.chars().take_while(|c| !matches!(c, '.' | '<' | '>' | '=' | ',') && !c.is_whitespace()).collect();
        (SpecErrorKind::UnknownMetric(if word.is_empty() { up_to_comma(at).to_string() } else { word }), at)
    }
    let (r, name) = identifier(i).map_err(|_| unknown_metric(i))?;
    if r.starts_with(|c: char| !matches!(c, '.' | '<' | '>' | '=' | ',') && !c.is_whitespace()) {
        return Err(unknown_metric(i));
    }
    let metric = Metric::of_name(name).ok_or_else(|| unknown_metric(i))?;
    let at_stat = ws(r);
    let (r, stat) = match char::<_, nom::error::Error<&str>>('.').parse(at_stat) {
        Ok((r, _)) => {
            let at = ws(r);
            let word = stat_word(at).map(|(_, w)| w).unwrap_or_else(|_| up_to_comma(at));
            if !metric.is_latency() {
                return Err((SpecErrorKind::StatNotAllowed { metric: metric.name(), stat: word.to_string() }, at));
            }
            let (r, w) = stat_word(at).map_err(|_| (SpecErrorKind::UnknownStat(word.to_string()), at))?;
            let key = stat_of(w).ok_or_else(|| (SpecErrorKind::UnknownStat(w.to_string()), at))?;
            (r, Some(key))
        }
        Err(_) if metric.is_latency() => return Err((SpecErrorKind::MissingStat(metric.name()), at_stat)),
        Err(_) => (at_stat, None),
    };
    let at_op = ws(r);
    let (r, op) = op(at_op).map_err(|_| {
        let found: String = at_op.chars().take_while(|c| !c.is_ascii_digit() && *c != ',').collect();
        let found = if found.trim().is_empty() { up_to_comma(at_op).to_string() } else { found.trim().to_string() };
        (SpecErrorKind::MissingOp(found), at_op)
    })?;
    let at_limit = ws(r);
    let bad_limit = || {
        let word: String = at_limit.chars().take_while(|c| *c != ',' && !c.is_whitespace()).collect();
        (SpecErrorKind::BadLimit(word), at_limit)
    };
    let (r, digits) = limit(at_limit).map_err(|_| bad_limit())?;
    // `2000.` or `2e3`: a number that goes on in a way the grammar does not take.
    if r.starts_with(['.', '_', 'e', 'E']) {
        let mut word: String = at_limit.chars().take_while(|c| *c != ',' && !c.is_whitespace()).collect();
        if word.is_empty() {
            word = digits.to_string();
        }
        return Err((SpecErrorKind::BadLimit(word), at_limit));
    }
    let value: f64 = digits.parse().map_err(|_| bad_limit())?;
    if !value.is_finite() {
        return Err((SpecErrorKind::LimitTooLarge(digits.to_string()), at_limit));
    }
    let at_unit = ws(r);
    let (r, word) = unit_word(at_unit).unwrap_or((at_unit, ""));
    let unit = if word.is_empty() {
        None
    } else {
        let allowed = Unit::allowed(metric);
        let found = allowed.iter().copied().find(|u| u.as_str().eq_ignore_ascii_case(word));
        match found {
            Some(u) => Some(u),
            None => {
                return Err((
                    SpecErrorKind::BadUnit {
                        unit: word.to_string(),
                        metric: metric.name(),
                        allowed: allowed.iter().map(|u| u.as_str()).collect::<Vec<_>>().join(" or "),
                        default: metric.unit(),
                    },
                    at_unit,
                ));
            }
        }
    };
    let o = Objective { metric, stat, op, limit: value, unit };
    if !o.limit_in_unit().is_finite() {
        return Err((SpecErrorKind::LimitTooLarge(format!("{digits}{word}")), at_limit));
    }
    Ok((o, r))
}

// ------------------------------------------------------------------------------------------------
// Judging

/// A value the run gives for an objective, with where it came from; or why it cannot be judged.
type Found = Result<(f64, String), (ObjectiveStatus, String)>;

/// How the tool times its ITL: from the tool's semantics, else the run's `itl_per`.
fn itl_per(run: &Run) -> Option<ItlPer> {
    run.source.semantics.itl.or_else(|| match run.text(reported::ITL_PER) {
        Some("chunk") => Some(ItlPer::Chunk),
        Some("token") => Some(ItlPer::Token),
        _ => None,
    })
}

/// The statistic `key` of the run's figure `figure` (`reported.ttft_ms`), or that the run does not
/// give it (which ones it does give).
fn from_stat(run: &Run, figure: Key, key: StatKey, what: &str) -> Found {
    let Some(st) = run.stat(figure) else {
        return Err((ObjectiveStatus::NotAvailable, format!("the run gives no {what}")));
    };
    match st.get(key) {
        Some(v) => Ok((v, format!("{}.{}", figure.path(), key.name()))),
        None => {
            let have: Vec<String> = st.iter().map(|(k, _)| k.name().into_owned()).collect();
            Err((
                ObjectiveStatus::NotAvailable,
                format!(
                    "the run gives no {} of the {what} (it gives {}); a statistic is never approximated from others",
                    key.name(),
                    have.join(", ")
                ),
            ))
        }
    }
}

/// Whether the derived TPOT may be judged: derived from measured latencies and token counts
/// (`per-request`, `e2e-ttft-tokens`), not a printed row taken over, nor an approximation.
fn derived_tpot_usable(run: &Run) -> Result<(), String> {
    let t = &run.derived.tpot_ms;
    match (t.mean, t.method) {
        (None, _) | (_, None) => Err(format!(
            "no TPOT could be derived: {}",
            t.reason.as_deref().unwrap_or("the run gives no E2E latency, TTFT and token counts")
        )),
        (Some(_), Some(_)) if t.approximate.is_some() => Err(format!(
            "the derived TPOT is approximate ({}): it is not judged",
            t.approximate.as_deref().unwrap_or_default()
        )),
        (Some(_), Some(TpotMethod::PerRequest | TpotMethod::E2eTtftTokens)) => Ok(()),
        (Some(_), Some(m)) => Err(format!(
            "the run gives no E2E latency, TTFT and token counts to derive TPOT from: its TPOT (method {}) is \
             the figure the run printed or stated, which an objective on the derived TPOT does not take",
            m.as_str()
        )),
    }
}

fn tpot_value(run: &Run, key: StatKey) -> Found {
    derived_tpot_usable(run).map_err(|why| (ObjectiveStatus::NotAvailable, why))?;
    let t = &run.derived.tpot_ms;
    let v = match key {
        StatKey::Mean => t.mean,
        StatKey::P(50.0) => t.p50,
        StatKey::P(90.0) => t.p90,
        StatKey::P(99.0) => t.p99,
        _ => None,
    };
    match v {
        Some(v) => Ok((v, format!("derived.tpot_ms.{}", key.name()))),
        None => {
            let method = t.method.map(|m| m.as_str()).unwrap_or_default();
            let why = if t.method == Some(TpotMethod::PerRequest) {
                format!(
                    "the derived TPOT (method {method}) gives mean, p50, p90 and p99, not {}; a statistic is \
                     never approximated from others",
                    key.name()
                )
            } else {
                format!(
                    "the derived TPOT (method {method}) is a mean over the run: the run has no per-request \
                     figures to take its {} from (give bench-normalize the result file with per-request data: \
                     vLLM --save-result --save-detailed, SGLang --output-file FILE --output-details, or use \
                     `bench-normalize run`)",
                    key.name()
                )
            };
            Err((ObjectiveStatus::NotAvailable, why))
        }
    }
}

fn e2e_value(run: &Run, key: StatKey) -> Found {
    if run.stat(reported::E2E_MS).is_some() {
        return from_stat(run, reported::E2E_MS, key, "E2E latency");
    }
    if key == StatKey::Mean
        && let Some(m) = run.derived.per_request.as_ref().and_then(|p| p.e2e_mean_ms)
    {
        return Ok((m, "derived.per_request.e2e_mean_ms".into()));
    }
    let why = if run.derived.e2e_ms.is_some() {
        "the tool printed no E2E latency; the E2E rebuilt from TTFT and TPOT (derived.e2e_ms) is an approximation \
         and is not judged"
    } else {
        "the run gives no E2E latency"
    };
    Err((ObjectiveStatus::NotAvailable, why.into()))
}

fn itl_value(run: &Run, key: StatKey) -> Found {
    if run.stat(reported::ITL_MS).is_none() {
        return Err((ObjectiveStatus::NotAvailable, "the run gives no ITL".into()));
    }
    match itl_per(run) {
        Some(ItlPer::Token) => from_stat(run, reported::ITL_MS, key, "ITL"),
        Some(ItlPer::Chunk) => {
            let mut why = format!("{} times ITL per streamed chunk", run.source.tool);
            if let Some(w) = &run.source.semantics.itl_why {
                why += &format!(" ({w})");
            }
            if let Some(k) = run.derived.tokens_per_chunk {
                why += &format!(", and its chunks carry ~{} tokens", show(k));
            }
            why += ": a per-chunk ITL is not a per-token latency; judge tpot instead";
            Err((ObjectiveStatus::NotComparable, why))
        }
        None => Err((
            ObjectiveStatus::NotComparable,
            "how this run's ITL is timed (per token or per streamed chunk) is not known: it is not judged as a \
             per-token latency; judge tpot instead"
                .into(),
        )),
    }
}

/// A derived figure of the run (`derived.<name>`), or why it is null.
fn derived_value(run: &Run, v: Option<f64>, name: &str) -> Found {
    match v {
        Some(v) => Ok((v, format!("derived.{name}"))),
        None => Err((
            ObjectiveStatus::NotAvailable,
            run.derived.undefined.get(name).cloned().unwrap_or_else(|| format!("the run does not give {name}")),
        )),
    }
}

fn value(o: &Objective, run: &Run) -> Found {
    let key = o.stat.unwrap_or(StatKey::Mean);
    match o.metric {
        Metric::Ttft => from_stat(run, reported::TTFT_MS, key, "TTFT"),
        Metric::Tpot => tpot_value(run, key),
        Metric::Itl => itl_value(run, key),
        Metric::E2e => e2e_value(run, key),
        Metric::DecodeRate => {
            derived_tpot_usable(run).map_err(|why| (ObjectiveStatus::NotAvailable, why))?;
            derived_value(run, run.derived.per_user_decode_tok_per_s, "per_user_decode_tok_per_s")
        }
        Metric::OutputThroughput => derived_value(run, run.derived.output_tok_per_s, "output_tok_per_s"),
        Metric::RequestThroughput => derived_value(run, run.derived.request_per_s, "request_per_s"),
    }
}

/// Judge one objective on a run.
pub fn judge_one(o: &Objective, run: &Run) -> ObjectiveResult {
    let limit = o.limit_in_unit();
    let mut r = ObjectiveResult {
        objective: o.to_string(),
        metric: o.metric.name().into(),
        stat: o.stat.map(|s| s.name().into_owned()),
        op: o.op.as_str().into(),
        limit,
        unit: o.metric.unit().into(),
        value: None,
        margin: None,
        margin_pct: None,
        status: ObjectiveStatus::NotJudged,
        source: None,
        reason: None,
    };
    if run.verdict != Verdict::Accepted {
        r.reason = Some(format!(
            "the run is {}: its figures are not trusted, and its own exit code ({}) stands",
            run.verdict.as_str(),
            if run.verdict == Verdict::Rejected { 1 } else { 3 }
        ));
        return r;
    }
    match value(o, run) {
        Ok((v, source)) => {
            let margin = o.op.margin(v, limit);
            r.value = Some(v);
            r.margin = Some(round(margin));
            r.margin_pct = (limit != 0.0).then(|| round(margin / limit * 100.0));
            r.status = if o.op.holds(v, limit) { ObjectiveStatus::Pass } else { ObjectiveStatus::Fail };
            r.source = Some(source);
        }
        Err((status, why)) => {
            r.status = status;
            r.reason = Some(why);
        }
    }
    r
}

/// Judge every objective on a run, in the order given.
pub fn judge(objectives: &Objectives, run: &Run) -> Vec<ObjectiveResult> {
    objectives.0.iter().map(|o| judge_one(o, run)).collect()
}

/// Whether a judged objective makes the exit code 7: judged, and not shown to be met.
pub fn is_missed(r: &ObjectiveResult) -> bool {
    !matches!(r.status, ObjectiveStatus::Pass | ObjectiveStatus::NotJudged)
}

/// A judged objective's figures for a person, `p99 TTFT 145.44 ms, limit <= 2000 ms, margin
/// 1854.56 ms (92.73%), from reported.ttft_ms.p99`, or why it was not judged pass or fail.
pub fn describe(r: &ObjectiveResult) -> String {
    let what = Metric::of_name(&r.metric).map(|m| m.what()).unwrap_or("figure");
    let stat = r.stat.as_deref().map(|s| format!("{s} ")).unwrap_or_default();
    match (r.value, r.margin) {
        (Some(v), Some(m)) => {
            // To 6 significant digits, as the margin (`show`'s 2 decimals beside it would not add up).
            let pct = r.margin_pct.map(|p| format!(" ({p}%)")).unwrap_or_default();
            format!(
                "{stat}{what} {} {u}, limit {} {} {u}, margin {m} {u}{pct}{}",
                round(v),
                r.op,
                r.limit,
                r.source.as_deref().map(|s| format!(", from {s}")).unwrap_or_default(),
                u = r.unit,
            )
        }
        _ => r.reason.clone().unwrap_or_default(),
    }
}

/// A status in words: `pass`, `missed`, `not available`, `not comparable`, `not judged`.
pub fn status_words(s: ObjectiveStatus) -> &'static str {
    match s {
        ObjectiveStatus::Pass => "pass",
        ObjectiveStatus::Fail => "missed",
        ObjectiveStatus::NotAvailable => "not available",
        ObjectiveStatus::NotComparable => "not comparable",
        ObjectiveStatus::NotJudged => "not judged",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_parses() {
        let o = parse("ttft.p99<=2000,tpot.mean<=40,e2e.p50<=10000").unwrap();
        assert_eq!(o.0.len(), 3);
        assert_eq!(
            o.0[0],
            Objective { metric: Metric::Ttft, stat: Some(StatKey::P(99.0)), op: Op::Le, limit: 2000.0, unit: None }
        );
        assert_eq!(o.to_string(), "ttft.p99<=2000,tpot.mean<=40,e2e.p50<=10000");
    }

    #[test]
    fn units_spaces_and_case() {
        let o = parse(" TTFT.Median <= 0.3s , decode_rate>=50tok/s,request_throughput > 1.5 req/s").unwrap();
        assert_eq!(o.0[0].stat, Some(StatKey::P(50.0)));
        assert_eq!(o.0[0].limit_in_unit(), 300.0);
        assert_eq!(o.to_string(), "ttft.p50<=0.3s,decode_rate>=50tok/s,request_throughput>1.5req/s");
        assert_eq!(parse("e2e.p99.9<10s").unwrap().0[0].stat, Some(StatKey::P(99.9)));
    }

    #[test]
    fn errors_quote_the_part() {
        let e = |s: &str| parse(s).unwrap_err();
        assert_eq!(e("ttfx.p99<=1").kind, SpecErrorKind::UnknownMetric("ttfx".into()));
        assert_eq!(e("ttft.p98x<=1").kind, SpecErrorKind::UnknownStat("p98x".into()));
        assert_eq!(e("ttft<=1").kind, SpecErrorKind::MissingStat("ttft"));
        assert_eq!(e("ttft.p99=1").kind, SpecErrorKind::MissingOp("=".into()));
        assert_eq!(e("ttft.p99<=-1").kind, SpecErrorKind::BadLimit("-1".into()));
        assert_eq!(e("ttft.p99<=2e3").kind, SpecErrorKind::BadLimit("2e3".into()));
        assert!(matches!(e("ttft.p99<=1tok/s").kind, SpecErrorKind::BadUnit { .. }));
        assert_eq!(e("ttft.p99<=1,").kind, SpecErrorKind::EmptyObjective);
        assert_eq!(e("ttft.p99<=1 2").kind, SpecErrorKind::Trailing("2".into()));
        assert_eq!(e("").kind, SpecErrorKind::Empty);
        assert!(matches!(e("decode_rate.mean>=1").kind, SpecErrorKind::StatNotAllowed { .. }));
        assert_eq!(e("ttft.p100<=1").kind, SpecErrorKind::UnknownStat("p100".into()));
        let err = e("ttft.p99<=1,tpot.mean<=x");
        assert_eq!(err.column, 24);
        assert_eq!(
            err.to_string(),
            "objective \"tpot.mean<=x\", column 24: expected a limit, a number >= 0 such as 2000 or 0.5, found \"x\""
        );
    }
}
