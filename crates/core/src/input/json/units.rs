//! Units a JSON export states beside its figures: AIPerf's and genai-perf's metric objects carry
//! `"unit": "ms"` (or `"sec"`, `"tokens/sec/user"`, ...) next to `avg`, `p50`, .... A figure is
//! read in the unit its object states, converted into the canonical figure's unit; a unit this
//! table does not know, or one of another kind than the figure (a time for a token count), leaves
//! the figure absent with a note: never a silent misread.

use crate::vocabulary::Unit;

/// A time unit, in milliseconds.
fn time_ms(word: &str) -> Option<f64> {
    Some(match word {
        "ns" | "nsec" | "nanosecond" | "nanoseconds" => 1e-6,
        "us" | "usec" | "microsecond" | "microseconds" => 1e-3,
        "ms" | "msec" | "millisecond" | "milliseconds" => 1.0,
        "s" | "sec" | "secs" | "second" | "seconds" => 1e3,
        "min" | "mins" | "minute" | "minutes" => 60e3,
        "h" | "hr" | "hour" | "hours" => 3600e3,
        _ => return None,
    })
}

fn requests(word: &str) -> bool {
    matches!(word, "requests" | "request" | "req" | "reqs" | "count")
}

fn tokens(word: &str) -> bool {
    matches!(word, "tokens" | "token" | "tok" | "count")
}

/// The factor that converts a value stated in `stated` into the canonical `to` (the figure at
/// `field`, a canonical path), or why it cannot.
pub fn factor(stated: &str, to: Unit, field: &str) -> Result<f64, String> {
    let s = stated.trim().to_ascii_lowercase().replace(['µ', 'μ'], "u");
    let parts: Vec<&str> = s.split('/').map(str::trim).collect();
    let kind_mismatch = || {
        Err(format!(
            "the file states the unit '{stated}', which is no {} unit",
            if to.as_str().is_empty() { "plain" } else { to.as_str() }
        ))
    };
    // A rate: `<quantity>/<time>`, optionally `/user` for a per-user figure.
    let rate = |quantity: &dyn Fn(&str) -> bool| -> Result<f64, String> {
        let per_user = parts.len() == 3 && parts[2] == "user";
        if !(parts.len() == 2 || per_user) || !quantity(parts[0]) {
            return kind_mismatch();
        }
        if per_user && !field.contains("per_user") {
            return Err(format!("the file states '{stated}', a per-user rate, for a figure that is not per user"));
        }
        match time_ms(parts[1]) {
            Some(ms) => Ok(1e3 / ms),
            None => Err(format!("the file states the unit '{stated}', whose time unit this tool does not know")),
        }
    };
    match to {
        Unit::Ms | Unit::S => match (parts.len(), time_ms(&s)) {
            (1, Some(ms)) => Ok(if to == Unit::Ms { ms } else { ms / 1e3 }),
            (1, None) if !s.chars().all(|c| c.is_ascii_alphabetic()) || s.is_empty() => kind_mismatch(),
            (1, None) if requests(&s) || tokens(&s) => kind_mismatch(),
            (1, None) => Err(format!("the file states the unit '{stated}', which this tool does not know")),
            _ => kind_mismatch(),
        },
        Unit::Requests if parts.len() == 1 && requests(&s) => Ok(1.0),
        Unit::Tokens if parts.len() == 1 && tokens(&s) => Ok(1.0),
        Unit::ReqPerS => rate(&requests),
        Unit::TokPerS => rate(&tokens),
        Unit::Pct | Unit::Ratio => {
            let pct = match s.as_str() {
                "%" | "pct" | "percent" | "percentage" => 1.0,
                "ratio" | "fraction" => 100.0,
                _ => return kind_mismatch(),
            };
            Ok(if to == Unit::Pct { pct } else { pct / 100.0 })
        }
        Unit::None if matches!(s.as_str(), "" | "none" | "count" | "ratio") => Ok(1.0),
        _ => kind_mismatch(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_rates_and_counts_convert() {
        let ms = |s: &str| factor(s, Unit::Ms, "reported.ttft_ms");
        assert_eq!(ms("ms"), Ok(1.0));
        assert_eq!(ms("sec"), Ok(1e3));
        assert_eq!(ms("s"), Ok(1e3));
        assert_eq!(ms("us"), Ok(1e-3));
        assert_eq!(ms("µs"), Ok(1e-3));
        assert_eq!(ms("ns"), Ok(1e-6));
        assert_eq!(factor("ms", Unit::S, "totals.duration_s"), Ok(1e-3));
        assert_eq!(factor("sec", Unit::S, "totals.duration_s"), Ok(1.0));
        assert_eq!(factor("requests/sec", Unit::ReqPerS, "reported.request_per_s"), Ok(1.0));
        assert_eq!(factor("requests/min", Unit::ReqPerS, "reported.request_per_s"), Ok(1e3 / 60e3));
        assert_eq!(factor("tokens/ms", Unit::TokPerS, "reported.output_tok_per_s"), Ok(1e3));
        assert_eq!(factor("tokens/sec/user", Unit::TokPerS, "reported.per_user_tok_per_s"), Ok(1.0));
        assert_eq!(factor("requests", Unit::Requests, "totals.successful_requests"), Ok(1.0));
        assert_eq!(factor("count", Unit::Requests, "totals.successful_requests"), Ok(1.0));
        assert_eq!(factor("tokens", Unit::Tokens, "totals.output_tokens"), Ok(1.0));
        assert_eq!(factor("%", Unit::Pct, "x"), Ok(1.0));
        assert_eq!(factor("ratio", Unit::Pct, "x"), Ok(100.0));
    }

    #[test]
    fn unknown_or_mismatched_units_are_refused() {
        for (unit, to) in [
            ("fortnights", Unit::Ms),
            ("tokens", Unit::Ms),
            ("ms", Unit::Tokens),
            ("tokens/sec", Unit::ReqPerS),
            ("tokens/fortnight", Unit::TokPerS),
            ("ms", Unit::TokPerS),
            ("", Unit::Ms),
            ("KB", Unit::Requests),
        ] {
            assert!(factor(unit, to, "reported.output_tok_per_s").is_err(), "{unit} as {to:?}");
        }
        // A per-user rate for an aggregate figure.
        assert!(factor("tokens/sec/user", Unit::TokPerS, "reported.output_tok_per_s").is_err());
    }
}
