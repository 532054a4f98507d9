//! `semantics-declared`: a canonical report supplies figures; the definition it names
//! (`source.parser`, `source.variant`) supplies their meaning. A report that declares another
//! meaning in `source.semantics` (`rates: "own-window"` for vLLM, which switches
//! `throughput-totals` off; a per-chunk ITL declared `"token"`, which makes it an ITL objective's
//! figure) contradicts the definition it names: it is checked with the definition's meaning, and
//! rejected naming the field. A report of no built-in definition (`source.parser` `report`, or an
//! id this version does not know) keeps what it declares.
//!
//! One declaration is a contradiction by itself, whatever the definition: an ITL declared per
//! token whose mean is more than twice the token-weighted TPOT. Proof: an ITL timed per token has
//! one sample per output token after the first, and a request's samples lie within its decode span
//! `E2E_i - TTFT_i` (they are the gaps between its tokens, or a chunk's gap split over its tokens).
//! So `mean ITL = sum(samples) / #samples <= sum_i(E2E_i - TTFT_i) / sum_i(n_i - 1)`, the
//! token-weighted TPOT, when every sample is there; a first chunk that carries `k_i` tokens takes
//! `k_i - 1` samples away, and a tool that splits gaps over retokenized counts miscounts by a few
//! percent. Twice the TPOT would need the first chunks to hold half of all decode tokens, or the
//! counts to be off by half: no per-token timing. (The rounding of two printed decimals is added.)
//! The token-weighted TPOT is the derived one (`e2e-ttft-tokens`, or a per-request derivation's
//! `token_weighted_mean`), else bounded above by the tool's own largest per-request TPOT (`max`):
//! a weighted mean of per-request TPOTs is at most their largest.

use serde::Serialize;

use crate::number::show;
use crate::report::{ItlPer, Run, StatKey, Status, TpotMethod};
use crate::vocabulary::reported;

/// How many times the token-weighted TPOT an ITL declared per token may be (module docs).
pub const ITL_PER_TOKEN_FACTOR: f64 = 2.0;
/// The rounding of two printed decimals, on each side.
const PRINTED: f64 = 0.01;

fn name<T: Serialize>(v: &Option<T>) -> String {
    match v {
        None => "unsaid".into(),
        Some(v) => serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
    }
}

/// Before derivation: the run's declared semantics against its definition's; the run is given the
/// definition's. Returns the contradictions (field, declared, the definition's) and what was
/// compared.
pub fn declared(run: &mut Run) -> (Vec<String>, Option<String>) {
    let parser = run.source.parser.clone();
    let Some(def) = crate::definition::Definitions::builtin().get(&parser) else {
        return (Vec::new(), None);
    };
    let variant = run.source.variant.as_deref().and_then(|id| def.variants.iter().find(|v| v.id == id));
    let theirs = crate::canonical::semantics_of(def, variant, run);
    let ours = run.source.semantics.clone();
    let what = match variant {
        Some(v) => format!("{parser} (variant {})", v.id),
        None => parser.clone(),
    };
    let mut fails = Vec::new();
    let mut differ = |field: &str, declared: String, def: String, contradicts: bool| {
        if contradicts {
            fails.push(format!(
                "source.semantics.{field} is declared {declared}, but {what} has it {def}: the report supplies figures, the definition it names their meaning (checked with {def})"
            ));
        }
    };
    // A meaning both sides state, stated differently.
    macro_rules! stated_differently {
        ($($field:ident),*) => {$(
            differ(
                stringify!($field),
                name(&ours.$field),
                name(&theirs.$field),
                ours.$field.is_some() && theirs.$field.is_some() && ours.$field != theirs.$field,
            );
        )*};
    }
    stated_differently!(itl, output_tokens, e2e_end);
    // Unsaid rates are the output-token and request rates: a declared rate differs from that too.
    differ(
        "rates",
        name(&ours.rates),
        name(&Some(theirs.rates())),
        ours.rates.is_some() && ours.rates() != theirs.rates(),
    );
    stated_differently!(percentiles);
    // Unsaid weighting is per request: a declared weighting differs from that too.
    differ(
        "tpot_weighting",
        name(&ours.tpot_weighting),
        name(&Some(theirs.tpot_weighting())),
        ours.tpot_weighting.is_some() && ours.tpot_weighting() != theirs.tpot_weighting(),
    );
    // The definition's meaning, whatever was declared (a meaning the definition leaves unsaid is
    // not taken from the report either).
    run.source.semantics = theirs;
    if run.has(reported::ITL_MS)
        && let Some(per) = run.source.semantics.itl
    {
        run.set(reported::ITL_PER, crate::report::Figure::Text(per.as_str().into()));
    }
    (fails, Some(what))
}

/// After derivation: the outcome of `semantics-declared` (the contradictions found before, and an
/// ITL declared per token that is more than twice the token-weighted TPOT).
pub fn outcome(run: &Run, before: (Vec<String>, Option<String>)) -> (Status, String) {
    let (mut fails, against) = before;
    let mut passed = Vec::new();
    if let Some(what) = &against
        && fails.is_empty()
    {
        passed.push(format!("source.semantics is {what}'s"));
    }
    let itl = run.stat_mean(reported::ITL_MS);
    if let (Some(ItlPer::Token), Some(itl)) = (run.source.semantics.itl, itl) {
        let t = &run.derived.tpot_ms;
        let weighted = match t.method {
            Some(TpotMethod::E2eTtftTokens) => t.mean.map(|m| (m, "the derived token-weighted TPOT")),
            Some(TpotMethod::PerRequest) => t.token_weighted_mean.map(|m| (m, "the per-request token-weighted TPOT")),
            _ => None,
        }
        .or_else(|| {
            run.stat(reported::TPOT_MS)
                .and_then(|s| s.get(StatKey::Max))
                .map(|m| (m, "the largest per-request TPOT (reported.tpot_ms.max), above the token-weighted one"))
        });
        match weighted {
            Some((w, what)) if itl > ITL_PER_TOKEN_FACTOR * (w + PRINTED) + PRINTED => fails.push(format!(
                "reported.itl_ms.mean {} ms is declared per token (source.semantics.itl), but it is {}x {what} {} ms: an ITL timed per token averages at most the token-weighted TPOT (more than {}x is no per-token timing; it is a per-chunk ITL)",
                show(itl),
                show(itl / w.max(f64::MIN_POSITIVE)),
                show(w),
                show(ITL_PER_TOKEN_FACTOR)
            )),
            Some((w, what)) => passed.push(format!(
                "ITL {} ms per token is within {}x {what} {} ms",
                show(itl),
                show(ITL_PER_TOKEN_FACTOR),
                show(w)
            )),
            None => {}
        }
    }
    if fails.is_empty() && passed.is_empty() {
        return (
            Status::Skipped,
            "the report names no built-in definition and declares no per-token ITL to test".into(),
        );
    }
    if fails.is_empty() { (Status::Pass, passed.join("; ")) } else { (Status::Fail, fails.join("; ")) }
}
