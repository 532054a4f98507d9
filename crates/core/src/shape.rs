//! A JSON document walked as a schema validator walks it: an object's keys, each of a type
//! ([`Ty`]), required or not, every other key an error; every place where the document is not the
//! shape it claims to be returned with its JSON path ([`ShapeError`]). About no document in
//! particular: `check` walks the canonical report with it (`check/shape.rs`), `dstack` its own
//! documents (`dstack/shape.rs`). A leaf module (serde_json only), so that both can use it without
//! an import circle: `check` re-exports dstack's walks, so dstack cannot import `check`.

use serde_json::Value;

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
pub(crate) fn join(at: &str, key: &str) -> String {
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
pub(crate) enum Ty {
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

pub(crate) fn check_ty(v: &Value, t: Ty, at: &str, out: &mut Vec<ShapeError>) {
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
pub(crate) fn object(v: &Value, at: &str, what: &str, keys: &[(&str, Ty, bool)], out: &mut Vec<ShapeError>) {
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

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn paths_escape_odd_keys() {
        assert_eq!(join("", "metrics"), "metrics");
        assert_eq!(join("reported.itl_ms", "p99.9"), "reported.itl_ms.p99.9");
        assert_eq!(join("metrics", "a\u{1b}[2J"), "metrics[\"a\\u001b[2J\"]");
    }
}
