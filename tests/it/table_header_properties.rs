//! Grouped table headers drawn over the wrong number of columns (hand-edited console tables, the
//! published guidellm example 044): whatever the bars, a figure read is the figure the clean
//! table gives under the same name, or it is not read at all. Never a value under another
//! column's name.

use crate::common;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// The captured guidellm console logs (grouped headers with `||` spans) and the published one.
fn inputs() -> Vec<String> {
    let mut v: Vec<String> = common::sample_files("peers", ".stdout.txt")
        .into_iter()
        // (By file name: a checkout's own path may say guidellm.)
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains("guidellm")))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    v.push(std::fs::read_to_string(common::samples_dir().join("public/044-guidellm.txt")).unwrap());
    assert!(v.len() >= 2);
    v
}

/// Every numeric leaf of a run's figures, by its path.
fn leaves(v: &Value, path: String, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| leaves(x, format!("{path}/{k}"), out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| leaves(x, format!("{path}/{i}"), out)),
        Value::Number(n) => out.push((path, n.as_f64().unwrap())),
        _ => {}
    }
}

/// Each run's figures; the derived ones only with the derivation's method in their path (with
/// fewer rows read, TPOT may come from another method, which is another figure).
fn figures(text: &str) -> Vec<Vec<(String, f64)>> {
    let runs = common::run_all(text.as_bytes(), "table.txt").unwrap_or_default();
    runs.iter()
        .map(|r| {
            let f = common::figures_of(r);
            let mut out = Vec::new();
            for part in ["workload", "totals", "reported"] {
                leaves(&f[part], part.to_string(), &mut out);
            }
            let method = f["derived"]["tpot_ms"]["method"].as_str().unwrap_or("none").to_string();
            leaves(&f["derived"], format!("derived[{method}]"), &mut out);
            out
        })
        .collect()
}

/// The text with the span of the `group`-th group of a grouped header line (one with `||`)
/// widened or narrowed by `delta` bars (at least one bar stays).
fn respan(text: &str, line: usize, group: usize, delta: i32) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let headers: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains("||")).collect();
    let at = headers[line % headers.len().max(1)];
    let l = lines[at];
    // The runs of bars after a group's text.
    let runs: Vec<(usize, usize)> = {
        let b = l.as_bytes();
        let mut v = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'|' {
                let s = i;
                while i < b.len() && b[i] == b'|' {
                    i += 1;
                }
                if i - s >= 2 {
                    v.push((s, i - s));
                }
            } else {
                i += 1;
            }
        }
        v
    };
    let (start, len) = *runs.get(group % runs.len().max(1))?;
    let new_len = (len as i32 + delta).max(1) as usize;
    if new_len == len {
        return None;
    }
    let changed = format!("{}{}{}", &l[..start], "|".repeat(new_len), &l[start + len..]);
    let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    out[at] = changed;
    Some(out.join("\n") + "\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn a_misdrawn_group_never_moves_a_figure(
        which in any::<Index>(),
        line in 0usize..16,
        group in 0usize..8,
        delta in prop_oneof![-2i32..=-1, 1i32..=2],
    ) {
        let all = inputs();
        let clean_text = &all[which.index(all.len())];
        let Some(text) = respan(clean_text, line, group, delta) else { return Ok(()) };
        let clean = figures(clean_text);
        let got = figures(&text);
        prop_assert!(got.len() <= clean.len(), "more runs than the clean table: {} vs {}", got.len(), clean.len());
        for (run, figs) in got.iter().enumerate() {
            for (path, value) in figs {
                let want = clean[run].iter().find(|(p, _)| p == path).map(|(_, v)| *v);
                // A TPOT by another method than the clean table's is computed from the figures
                // compared here; its value is another figure.
                if want.is_none() && path.starts_with("derived[") {
                    let method = &path[..path.find(']').unwrap()];
                    if !clean[run].iter().any(|(p, _)| p.starts_with(method)) {
                        continue;
                    }
                }
                prop_assert!(
                    want == Some(*value),
                    "run {run}: {path} = {value} but the clean table gives {want:?}\n{text}"
                );
            }
        }
    }
}
