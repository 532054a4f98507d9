//! Building the canonical run from what was extracted: figures by canonical name and unit, the
//! variant's corrections, and the tool's semantics (how ITL was timed, where token counts came from).

use crate::definition::{Definition, Target, Variant};
use crate::extract::{Assignment, Extracted};
use crate::report::{
    Figure, Figures, Format, ItlPer, Note, PercentileMethod, Rates, Run, Semantics, Source, Stat, Truncation,
};
use crate::value::Read;
use crate::vocabulary::{Kind, reported, workload};

/// Where a run came from, for [`assemble`].
pub struct Origin<'a> {
    pub definition: &'a Definition,
    pub variant: Option<&'a Variant>,
    pub input: &'a str,
    pub block: usize,
    pub first_line: Option<usize>,
    pub last_line: Option<usize>,
    pub truncated: Option<Truncation>,
    pub format: Format,
}

/// Assemble a run (without derived figures and checks, which later stages add).
pub fn assemble(origin: Origin, extracted: Extracted) -> Run {
    let Extracted { rows, assignments, mut notes, requests, .. } = extracted;
    let mut run = Run {
        source: Source {
            parser: origin.definition.id.clone(),
            tool: origin.variant.and_then(|v| v.tool.clone()).unwrap_or_else(|| origin.definition.tool.clone()),
            format: origin.format,
            variant: origin.variant.map(|v| v.id.clone()),
            input: origin.input.to_string(),
            block: origin.block,
            first_line: origin.first_line,
            last_line: origin.last_line,
            truncated: origin.truncated,
            semantics: Semantics::default(),
            run: None,
        },
        workload: Figures::default(),
        totals: Figures::default(),
        reported: Figures::default(),
        derived: Default::default(),
        checks: Vec::new(),
        verdict: crate::report::Verdict::Accepted,
        notes: Vec::new(),
        objectives: None,
        rows,
        requests: requests.map(Box::new),
    };

    // Lines before the banner first, so that the block's own rows win over them.
    // (Two passes over the list, not a partition into two new ones.)
    let mut set_from_context: Vec<String> = Vec::new();
    for a in assignments.iter().filter(|a| a.from_context) {
        if apply(&mut run, a, &mut notes, true) {
            set_from_context.push(a.target.path());
        }
    }
    for a in assignments.iter().filter(|a| !a.from_context) {
        let from_context = !set_from_context.is_empty() && {
            let path = a.target.path();
            set_from_context.iter().position(|p| *p == path).map(|i| set_from_context.remove(i)).is_some()
        };
        if from_context {
            // The block restates a preamble line: the block wins, silently when they agree.
            clear(&mut run, &a.target);
        }
        apply(&mut run, a, &mut notes, false);
    }

    if let Some(v) = origin.variant {
        for (a, b) in &v.swap {
            swap(&mut run, a, b, &mut notes);
        }
        if let Some(n) = &v.note {
            notes.push(Note { code: format!("variant-{}", v.id), message: n.clone(), line: origin.first_line });
        }
    } else if origin.format.is_text() {
        notes.push(Note {
            code: "variant-unknown".into(),
            message: format!(
                "the block matched no known variant of {}; rows were read by label",
                origin.definition.tool
            ),
            line: origin.first_line,
        });
    }

    if let Some(n) = &origin.definition.note {
        notes.push(Note { code: "parser-note".into(), message: n.clone(), line: origin.first_line });
    }
    if !run.has(reported::E2E_MS)
        && run.requests.is_none()
        && let Some(h) = &origin.definition.semantics.missing_e2e_hint
    {
        notes.push(Note { code: "no-e2e".into(), message: h.clone(), line: origin.first_line });
    }
    run.source.semantics = semantics(origin.definition, origin.variant, &run);
    if run.has(reported::ITL_MS)
        && let Some(per) = run.source.semantics.itl
    {
        run.set(reported::ITL_PER, Figure::Text(per.as_str().into()));
    }
    run.notes = notes;
    run
}

/// Longest list figure (draft positions): an index past it is not believed.
const MAX_LIST: usize = 1024;

/// Put one value in place. Returns whether a value was set.
fn apply(run: &mut Run, a: &Assignment, notes: &mut Vec<Note>, from_context: bool) -> bool {
    let field = a.target.field;
    let factor = a.unit.and_then(|u| u.factor_to(field.unit)).unwrap_or(1.0);
    let figure = match &a.value {
        Read::Count(c) if field.kind == Kind::Count => Figure::Count(*c),
        Read::Count(c) => Figure::Number(scaled(*c as f64, factor)),
        Read::Number(n) if field.kind == Kind::Count => match (n.fract() == 0.0 && *n >= 0.0).then_some(*n as u64) {
            Some(c) => Figure::Count(c),
            None => return false,
        },
        Read::Number(n) => Figure::Number(scaled(*n, factor)),
        Read::Text(t) => Figure::Text(t.clone()),
        Read::Absent(_) | Read::Unreadable(_) => return false,
    };
    let full = field.path;
    let (g, rel) = run.group_mut(full);
    let path = || a.target.path();
    match (a.target.stat, field.kind, figure) {
        (Some(key), _, fig) => {
            let v = fig.as_f64().expect("numeric");
            let slot = g.slot(rel, full, || Figure::Stat(Stat::default()));
            if let Figure::Stat(st) = slot {
                if let Some(old) = st.get(key) {
                    if old != v {
                        notes.push(conflict(&path(), old, v, a.line));
                    }
                    return false;
                }
                st.set(key, v);
            }
        }
        (None, Kind::List, fig) => {
            let v = fig.as_f64().expect("numeric");
            let i = a.index.unwrap_or(0);
            if i >= MAX_LIST {
                notes.push(Note {
                    code: "value-unreadable".into(),
                    message: format!(
                        "{}[{i}]: an index this large is not a position; the row is kept, the figure is absent",
                        path()
                    ),
                    line: Some(a.line),
                });
                return false;
            }
            let slot = g.slot(rel, full, || Figure::List(Vec::new()));
            if let Figure::List(list) = slot {
                if list.len() <= i {
                    list.resize(i + 1, None);
                }
                if let Some(old) = list[i] {
                    if old != v {
                        notes.push(conflict(&format!("{}[{i}]", path()), old, v, a.line));
                    }
                    return false;
                }
                list[i] = Some(v);
            }
        }
        (None, _, fig) => {
            if let Some(old) = g.get(rel) {
                if *old != fig && !from_context {
                    let (o, n) = (old.as_f64().unwrap_or(f64::NAN), fig.as_f64().unwrap_or(f64::NAN));
                    notes.push(conflict(&path(), o, n, a.line));
                }
                return false;
            }
            g.set(rel, full, fig);
        }
    }
    true
}

/// A printed value in another unit, without binary noise (`5.42 s` is `5420 ms`, not `5420.000000000001`).
fn scaled(x: f64, factor: f64) -> f64 {
    if factor == 1.0 {
        return x;
    }
    format!("{:.12e}", x * factor).parse().unwrap_or(x * factor)
}

fn clear(run: &mut Run, t: &Target) {
    let full = t.field.path;
    let (g, rel) = run.group_mut(full);
    match t.stat {
        Some(_) => {} // stats from a preamble do not occur
        None => {
            if crate::report::split_dot(rel).is_none() {
                g.remove(rel);
            }
        }
    }
}

fn conflict(path: &str, old: f64, new: f64, line: usize) -> Note {
    Note {
        code: "conflicting-value".into(),
        message: format!("{path}: printed twice with different values ({old} and {new}); the first is kept"),
        line: Some(line),
    }
}

fn swap(run: &mut Run, a: &Target, b: &Target, notes: &mut Vec<Note>) {
    let get = |run: &Run, t: &Target| -> Option<f64> {
        match (run.figure(t.field.path)?, t.stat) {
            (Figure::Stat(s), Some(k)) => s.get(k),
            (f, None) => f.as_f64(),
            _ => None,
        }
    };
    let (Some(va), Some(vb)) = (get(run, a), get(run, b)) else { return };
    let mut set = |t: &Target, v: f64| {
        let full = t.field.path;
        let (g, rel) = run.group_mut(full);
        match (g.slot(rel, full, || Figure::Stat(Stat::default())), t.stat) {
            (Figure::Stat(s), Some(k)) => {
                s.set(k, v);
            }
            (f, None) => *f = Figure::Number(v),
            _ => {}
        }
    };
    set(a, vb);
    set(b, va);
    notes.push(Note {
        code: "corrected-swap".into(),
        message: format!(
            "{} and {} were printed under each other's label; swapped back ({} <-> {})",
            a.path(),
            b.path(),
            va,
            vb
        ),
        line: None,
    });
}

/// The tool's semantics for this run: definition defaults, the variant's overrides, then the first
/// ITL rule that fits the run's backend, variant and figures.
fn semantics(def: &Definition, variant: Option<&Variant>, run: &Run) -> Semantics {
    let base = &def.semantics;
    let mut s = Semantics {
        itl: base.itl,
        itl_why: base.itl_why.clone(),
        output_tokens: base.output_tokens,
        e2e_end: base.e2e_end,
        rates: None,
        percentiles: None,
        tpot_weighting: base.tpot_weighting,
    };
    (s.rates, s.percentiles) = rates_and_percentiles(def, variant);
    if let Some(v) = variant {
        if v.output_tokens.is_some() {
            s.output_tokens = v.output_tokens;
        }
        if v.e2e_end.is_some() {
            s.e2e_end = v.e2e_end;
        }
        if v.itl.is_some() {
            s.itl = v.itl;
        }
        if v.tpot_weighting.is_some() {
            s.tpot_weighting = v.tpot_weighting;
        }
    }
    let backend = run.text(workload::BACKEND);
    let variant_id = variant.map(|v| v.id.as_str());
    for rule in &base.itl_rules {
        let backend_ok = rule.backends.is_empty() || backend.is_some_and(|b| rule.backends.iter().any(|x| x == b));
        let variant_ok = rule.variants.is_empty() || variant_id.is_some_and(|v| rule.variants.iter().any(|x| x == v));
        let present_ok = rule.when_present.is_none_or(|p| run.figure(p).is_some());
        if backend_ok && variant_ok && present_ok {
            s.itl = Some(rule.itl);
            s.itl_why = Some(rule.itl_why.clone());
            break;
        }
    }
    if s.itl == Some(ItlPer::Token) && s.itl_why.is_none() {
        s.itl_why = Some("the tool splits chunk gaps per token".into());
    }
    s
}

/// The semantics a definition (and variant) gives a run: what `check` holds a canonical report's
/// declared `source.semantics` to (`semantics-declared`, src/check/semantics.rs).
pub(crate) fn semantics_of(def: &Definition, variant: Option<&Variant>, run: &Run) -> Semantics {
    semantics(def, variant, run)
}

/// What a definition, and the variant over it, say of the tool's rates and percentiles.
fn rates_and_percentiles(def: &Definition, variant: Option<&Variant>) -> (Option<Rates>, Option<PercentileMethod>) {
    (
        variant.and_then(|v| v.rates).or(def.semantics.rates),
        variant.and_then(|v| v.percentiles).or(def.semantics.percentiles),
    )
}

/// A report written before `rates`, `percentiles` and `tpot_weighting` were part of
/// `source.semantics` (or by hand) does not say them: the built-in definition it names (`source.parser`, `source.variant`) does,
/// as the rules read them from that id before. So such a report is checked as it was when it was
/// written; one that names no built-in definition keeps them unsaid (no input-rate check, no
/// percentile bound: the rules only skip).
fn fill_semantics(run: &mut Run) {
    let s = &run.source.semantics;
    if s.rates.is_some() && s.percentiles.is_some() && s.tpot_weighting.is_some() {
        return;
    }
    let Some(def) = crate::definition::Definitions::builtin().get(&run.source.parser) else { return };
    let variant = run.source.variant.as_deref().and_then(|id| def.variants.iter().find(|v| v.id == id));
    let (rates, percentiles) = rates_and_percentiles(def, variant);
    let s = &mut run.source.semantics;
    s.rates = s.rates.or(rates);
    s.percentiles = s.percentiles.or(percentiles);
    s.tpot_weighting = s.tpot_weighting.or(variant.and_then(|v| v.tpot_weighting).or(def.semantics.tpot_weighting));
}

/// A canonical run read back (written by hand, or by an earlier `bench-normalize`): every known
/// figure must have its kind. Returns the path and what is wrong.
pub fn check_figure_types(run: &Run) -> Result<(), (String, String)> {
    fn walk(g: &Figures, prefix: &str) -> Result<(), (String, String)> {
        for (name, fig) in g.iter() {
            let path = format!("{prefix}.{name}");
            let Some(def) = crate::vocabulary::field(&path) else {
                if let Figure::Group(sub) = fig {
                    walk(sub, &path)?;
                }
                continue;
            };
            let ok = match (def.kind, fig) {
                (Kind::Count, Figure::Count(_)) | (Kind::Number, Figure::Count(_) | Figure::Number(_)) => true,
                (Kind::Count, Figure::Number(n)) => {
                    return Err((path, format!("expected a whole number, got {n}")));
                }
                (Kind::Text, Figure::Text(_)) | (Kind::Stat, Figure::Stat(_)) | (Kind::List, Figure::List(_)) => true,
                // `{}`: no statistics given.
                (Kind::Stat, Figure::Group(sub)) if sub.is_empty() => true,
                (Kind::Stat, Figure::Group(sub)) => {
                    let keys: Vec<&str> = sub.iter().map(|(k, _)| k).collect();
                    return Err((
                        path,
                        format!(
                            "expected statistics (mean, min, p50, p90, p99, max, std), got keys {}",
                            keys.join(", ")
                        ),
                    ));
                }
                _ => false,
            };
            if !ok {
                let want = match def.kind {
                    Kind::Count => "a whole number",
                    Kind::Number => "a number",
                    Kind::Text => "a string",
                    Kind::Stat => "an object of statistics (mean, p50, p99, ...)",
                    Kind::List => "a list of numbers",
                };
                let got = match fig {
                    Figure::Count(_) | Figure::Number(_) => "a number",
                    Figure::Text(_) => "a string",
                    Figure::Stat(_) | Figure::Group(_) => "an object",
                    Figure::List(_) => "a list",
                };
                return Err((path, format!("expected {want}, got {got}")));
            }
        }
        Ok(())
    }
    walk(&run.workload, "workload")?;
    walk(&run.totals, "totals")?;
    walk(&run.reported, "reported")
}

/// Prepare a canonical run read back for a fresh derivation and validation: fill in where it came
/// from, and take a claimed `derived.tpot_ms.mean` as the run's claim when it states no
/// `reported.tpot_ms`.
pub fn reopen(run: &mut Run, input: &str, index: usize) {
    if run.source.input.is_empty() {
        run.source.input = input.to_string();
    }
    if run.source.block == 0 {
        run.source.block = index;
    }
    // Not a per-request figure: `check` verifies that against the tool's own TPOT rows, which a
    // promoted claim would stand in for.
    // Nor one estimated with the median TTFT: that method applies only without TPOT rows, and a
    // promoted claim would be one.
    use crate::report::TpotMethod::{E2eMedianTtftTokens, PerRequest};
    let derived_only = matches!(run.derived.tpot_ms.method, Some(PerRequest | E2eMedianTtftTokens));
    if !run.has(reported::TPOT_MS)
        && !derived_only
        && let Some(claimed) = run.derived.tpot_ms.mean
    {
        let mut st = Stat::default();
        st.set(crate::report::StatKey::Mean, claimed);
        run.set(reported::TPOT_MS, Figure::Stat(st));
        run.notes.push(Note {
            code: "claimed-tpot".into(),
            message: format!("the report's derived.tpot_ms.mean {claimed} is checked as its claimed TPOT"),
            line: None,
        });
    }
    fill_semantics(run);
    run.checks.clear();
}
