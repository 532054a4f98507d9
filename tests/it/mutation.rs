//! The mutation property: every numeric figure of every real capture with a truth file, one at a
//! time, multiplied by 0.1, 0.5, 2 and 10, may leave accepted (exit 0) only with a derived TPOT
//! still within 2% of the truth file's. A wrong number that passes is the worst failure.
//!
//! In-process (the library, not one process per mutant), split over two threads.

use crate::common;

use std::path::{Path, PathBuf};

use bench_normalize::report::Verdict;
use bench_normalize::{Options, Run, normalize};
use serde_json::Value;

const FACTORS: [f64; 4] = [0.1, 0.5, 2.0, 10.0];

/// `x` written with `decimals` decimals (at least as many as make it differ from zero).
fn written(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}")
}

/// Each numeric token of a line (a whole word: not the `99` of `P99` nor a date's part), as its
/// byte range and decimals. Lines longer than a row (argument dumps, progress bars) are left.
fn numbers(line: &str) -> Vec<(usize, usize, usize)> {
    if line.len() > 300 {
        return Vec::new();
    }
    let b = line.as_bytes();
    let edge = |c: u8| c.is_ascii_whitespace() || b"|,:;=()[]{}\"'".contains(&c);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || edge(b[i - 1])) {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let mut decimals = 0;
            if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                    decimals += 1;
                }
            }
            if i == b.len() || edge(b[i]) || b[i] == b'%' {
                out.push((start, i, decimals));
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Every mutant of a text input: one numeric token of one line, times one factor.
fn text_mutants(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (n, line) in lines.iter().enumerate() {
        for (s, e, decimals) in numbers(line) {
            let Ok(v) = line[s..e].parse::<f64>() else { continue };
            if v == 0.0 {
                continue;
            }
            for k in FACTORS {
                let new = written(v * k, decimals);
                if new.parse::<f64>().ok() == Some(v) || new.parse::<f64>().ok() == Some(0.0) {
                    continue;
                }
                let mut m = String::with_capacity(text.len() + 8);
                lines[..n].iter().for_each(|l| m.push_str(l));
                m.push_str(&line[..s]);
                m.push_str(&new);
                m.push_str(&line[e..]);
                lines[n + 1..].iter().for_each(|l| m.push_str(l));
                out.push((format!("line {}: {} x {k}", n + 1, line.trim()), m));
            }
        }
    }
    out
}

/// The paths of a JSON document's numeric leaves outside arrays (per-request arrays are the
/// business of per-request-consistency).
fn leaves(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Value::Object(m) = v {
        for (k, x) in m {
            path.push(k.clone());
            match x {
                Value::Number(n) if n.as_f64().is_some_and(|f| f != 0.0) => out.push(path.clone()),
                Value::Object(_) => leaves(x, path, out),
                _ => {}
            }
            path.pop();
        }
    }
}

fn scaled(v: &Value, k: f64) -> Option<Value> {
    let n = v.as_f64()?;
    let new = if v.is_u64() || v.is_i64() { Value::from((n * k).round() as i64) } else { Value::from(n * k) };
    (new.as_f64() != Some(n) && new.as_f64() != Some(0.0)).then_some(new)
}

/// Every mutant of a JSON document (or of one line of a JSON Lines file).
fn json_mutants(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let docs: Vec<(usize, Value)> = match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![(usize::MAX, v)],
        Err(_) => lines.iter().enumerate().filter_map(|(n, l)| Some((n, serde_json::from_str(l).ok()?))).collect(),
    };
    for (n, doc) in docs {
        let mut paths = Vec::new();
        leaves(&doc, &mut Vec::new(), &mut paths);
        for path in paths {
            for k in FACTORS {
                let mut m = doc.clone();
                let leaf = path.iter().fold(&mut m, |v, p| &mut v[p.as_str()]);
                let Some(new) = scaled(leaf, k) else { continue };
                *leaf = new;
                let m = serde_json::to_string(&m).unwrap();
                let whole = if n == usize::MAX {
                    m
                } else {
                    let mut s = String::new();
                    lines[..n].iter().for_each(|l| s.push_str(l));
                    s.push_str(&m);
                    s.push('\n');
                    lines[n + 1..].iter().for_each(|l| s.push_str(l));
                    s
                };
                out.push((
                    format!(
                        "{}{} x {k}",
                        if n == usize::MAX { String::new() } else { format!("line {}: ", n + 1) },
                        path.join(".")
                    ),
                    whole,
                ));
            }
        }
    }
    out
}

fn runs(bytes: &[u8], name: &str) -> Vec<Run> {
    let mut runs = Vec::new();
    let _ = normalize(bytes, name, &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    });
    runs
}

/// The mutants of one input that leave accepted with a derived TPOT more than 2% off the truth.
fn escapes(input: &Path, truth: &Value) -> (usize, Vec<String>) {
    let name = common::sample_name(input);
    let text = std::fs::read_to_string(input).unwrap();
    let json = name.ends_with(".json") || name.ends_with(".jsonl");
    // The input itself must give its truth, or the comparison below means nothing: an input whose
    // own figure is off (guidellm counting chunks as tokens, flagged by `token-count-source`) is
    // left out and named.
    let off = |run: &Run| {
        let (Some(tpot), Some(truth)) = (run.derived.tpot_ms.mean, common::true_tpot(truth, run)) else { return false };
        run.verdict == Verdict::Accepted && (tpot - truth).abs() > 0.02 * truth
    };
    if runs(text.as_bytes(), &name).iter().any(off) {
        return (0, vec![format!("{name}: unmutated, its TPOT is not its truth's")]);
    }
    let mutants = if json { json_mutants(&text) } else { text_mutants(&text) };
    let mut wrong = Vec::new();
    for (what, m) in &mutants {
        for run in runs(m.as_bytes(), &name) {
            let (Some(tpot), Some(truth)) = (run.derived.tpot_ms.mean, common::true_tpot(truth, &run)) else {
                continue;
            };
            if run.verdict == Verdict::Accepted && (tpot - truth).abs() > 0.02 * truth {
                wrong.push(format!(
                    "{name} run {} [{what}]: TPOT {tpot} ({:?}, verified {:?}) vs true {truth}, accepted",
                    run.source.block, run.derived.tpot_ms.method, run.derived.tpot_ms.verified
                ));
            }
        }
    }
    (mutants.len(), wrong)
}

/// Every input beside a truth file of a real capture (captured/, versions/, peers/).
fn inputs() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for dir in ["captured", "versions", "peers"] {
        for truth in common::sample_files(dir, ".truth.json") {
            let stem = truth.to_string_lossy().trim_end_matches(".truth.json").to_string() + ".";
            for input in common::sample_files(dir, "") {
                let p = input.to_string_lossy();
                if p.starts_with(&stem) && common::is_sample(&p) {
                    out.push((input.clone(), truth.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn no_mutant_of_a_real_capture_leaves_accepted_with_a_wrong_tpot() {
    let all = inputs();
    assert!(all.len() >= 60, "{} inputs", all.len());
    let half = all.len() / 2;
    let (a, b) = all.split_at(half);
    let work = |part: &[(PathBuf, PathBuf)]| {
        part.iter().map(|(input, truth)| escapes(input, &common::read_json(truth))).fold(
            (0, Vec::new()),
            |(n, mut w), (m, e)| {
                w.extend(e);
                (n + m, w)
            },
        )
    };
    let ((n1, mut w1), (n2, w2)) = std::thread::scope(|s| {
        let h = s.spawn(|| work(b));
        (work(a), h.join().unwrap())
    });
    w1.extend(w2);
    let n = n1 + n2;
    let (excluded, w1): (Vec<String>, Vec<String>) = w1.into_iter().partition(|w| w.contains("unmutated"));
    assert!(
        excluded.len() <= 2 && excluded.iter().all(|e| e.contains("nousage")),
        "inputs whose own TPOT is wrong: {excluded:?}"
    );
    assert!(n > 5000, "{n} mutants");
    // No input is open: guidellm's console (rates over its own window, latencies in seconds with
    // one decimal) is held by its token-weighted ITL mean, which must equal the derived TPOT
    // (`tpot_weighting = "token"`, rule tpot-bounds).
    assert!(w1.is_empty(), "{} of {n} mutants leave accepted with a wrong TPOT:\n{}", w1.len(), w1.join("\n"));
}
