//! Result documents recognised by their structure and read as people paste them (issue 30):
//! every JSON export and result file of `samples/peers/` and `samples/captured/`,
//!
//! * without its format's marker keys: recognised by the keys it holds, same parser, every figure
//!   it gives the original's;
//! * with `//` comments added: the same run as the file;
//! * hard-wrapped at any width from 64 characters (a terminal's 80, a tracker's 1,000), in text:
//!   the same run as the file;
//! * cut off anywhere, bare, in a Markdown fence or after a prompt: no run, or a run marked cut off
//!   whose every figure is the original's (a value the cut may have shortened is never read);
//!
//! and the published pastes of `samples/reach/`, held to the figures they print.

use crate::common;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use bench_normalize::{Definitions, Run};
use common::run_all;
use proptest::prelude::*;
use serde_json::Value;

/// A result document: its file, its value, and the run it reads to.
struct Export {
    name: String,
    value: Value,
    run: Run,
}

fn exports() -> &'static [Export] {
    static EXPORTS: OnceLock<Vec<Export>> = OnceLock::new();
    EXPORTS.get_or_init(|| {
        let mut paths: Vec<_> = ["peers", "captured"]
            .iter()
            .flat_map(|d| std::fs::read_dir(common::samples_dir().join(d)).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy().to_string();
                n.ends_with(".json") && !n.ends_with(".truth.json")
            })
            .collect();
        paths.sort();
        paths
            .into_iter()
            .filter_map(|p| {
                let name = common::sample_name(&p);
                let text = std::fs::read_to_string(&p).unwrap();
                let value: Value = serde_json::from_str(&text.replace(": Infinity", ": null")).unwrap();
                // Files no definition reads (EvalScope's summaries) are not exports here.
                let mut runs = run_all(text.as_bytes(), &name).ok()?;
                assert_eq!(runs.len(), 1, "{name}");
                Some(Export { name, value, run: runs.remove(0) })
            })
            .collect()
    })
}

/// Every figure of a run (workload, totals, reported), by its path.
fn figures(run: &Run) -> BTreeMap<String, Value> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, v)| walk(&format!("{prefix}.{k}"), v, out)),
            Value::Null => {}
            _ => {
                out.insert(prefix.to_string(), v.clone());
            }
        }
    }
    let v = serde_json::to_value(run).unwrap();
    let mut out = BTreeMap::new();
    for part in ["workload", "totals", "reported"] {
        walk(part, &v[part], &mut out);
    }
    out
}

/// Every figure of `got` is the original's.
fn figures_are_the_originals(got: &Run, original: &Run) -> Result<(), String> {
    let want = figures(original);
    for (path, value) in figures(got) {
        match want.get(&path) {
            Some(w) if *w == value => {}
            w => return Err(format!("{path} = {value}, the original has {w:?}")),
        }
    }
    Ok(())
}

fn notes(run: &Run) -> Vec<&str> {
    run.notes.iter().map(|n| n.code.as_str()).collect()
}

/// Remove a dotted key from a document.
fn remove_key(v: &mut Value, key: &str) {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap();
    let mut at = v;
    for p in parts {
        match at.get_mut(p) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(m) = at.as_object_mut() {
        m.remove(last);
    }
}

#[test]
fn an_export_without_its_marker_keys_is_recognised_by_its_structure() {
    let defs = Definitions::builtin();
    let mut checked = 0;
    for export in exports() {
        let definition = defs.get(&export.run.source.parser).unwrap();
        let detect = definition.detect.as_ref().unwrap();
        let mut value = export.value.clone();
        // Every key it must have, and those of which it needs one that are markers only (feed no
        // figure): what a copy edited by hand, or another version, lacks.
        // Not the objects that hold its figures (inference-perf's `successes`): without them
        // there is nothing to read.
        let measured = |r: &&bench_normalize::report::Row| {
            r.field.as_deref().is_some_and(|f| f.starts_with("reported.") || f.starts_with("totals."))
        };
        let holds = |k: &str| export.run.rows.iter().filter(measured).any(|r| r.label.starts_with(&format!("{k}.")));
        let feeds = |k: &str| export.run.rows.iter().any(|r| r.field.is_some() && r.label.starts_with(k));
        let markers: Vec<&String> = detect
            .keys_all
            .iter()
            .filter(|k| !holds(k))
            .chain(detect.keys_any.iter().filter(|k| !feeds(k)))
            // The list of runs itself (guidellm's `benchmarks`) is the content, not a marker.
            .filter(|k| definition.runs_at.as_deref() != Some(k.as_str()))
            .collect();
        for key in &markers {
            remove_key(&mut value, key);
        }
        // The figures the marker keys fed, which go with them.
        let fed_by_markers: Vec<&str> = export
            .run
            .rows
            .iter()
            .filter(|r| markers.iter().any(|m| r.label == **m || r.label.starts_with(&format!("{m}."))))
            .filter_map(|r| r.field.as_deref())
            .collect();
        let text = serde_json::to_string_pretty(&value).unwrap();
        let runs = run_all(text.as_bytes(), &export.name).unwrap_or_else(|e| panic!("{}: {e}", export.name));
        assert_eq!(runs.len(), 1, "{}", export.name);
        let run = &runs[0];
        assert_eq!(run.source.parser, export.run.source.parser, "{}", export.name);
        assert!(notes(run).contains(&"recognised-by-structure"), "{}: {:?}", export.name, notes(run));
        figures_are_the_originals(run, &export.run).unwrap_or_else(|e| panic!("{}: {e}", export.name));
        let (got, all) = (figures(run), figures(&export.run));
        let lost: Vec<&String> = all.keys().filter(|k| !got.contains_key(*k)).collect();
        // What it holds is read: all but the figures of the keys taken out.
        let lost: Vec<&&String> = lost.iter().filter(|k| !fed_by_markers.contains(&k.as_str())).collect();
        assert!(lost.is_empty(), "{}: {lost:?}", export.name);
        checked += 1;
    }
    assert!(checked >= 15, "{checked}");
}

/// A JSON document without the keys of any format is no run, however many generic keys it has.
#[test]
fn a_document_of_no_format_is_not_claimed_by_structure() {
    let text = r#"{"model": "m", "duration": 12.5, "count": 3, "latency": {"mean": 1.0, "p50": 1.0},
        "config": {"rate": 2, "seed": 1}, "mean": 3.2, "p99": 4.0, "tokens": 100, "ok": true}"#;
    assert!(run_all(text.as_bytes(), "other.json").is_err());
}

/// The export's text with `//` comments on some lines (at their end, or alone on a line).
fn commented(text: &str, at: &[(usize, bool)]) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for (i, own_line) in at.iter().rev() {
        let i = 1 + i % lines.len().saturating_sub(1).max(1);
        if *own_line {
            lines.insert(i, "  // measured on the second node, see http://example.com/x".into());
        } else if i < lines.len() {
            lines[i - 1].push_str("   // note: \"p99\" is odd here");
        }
    }
    lines.join("\n")
}

/// The text's lines hard-wrapped at `width` characters.
fn folded(text: &str, width: usize) -> String {
    let fold = |line: &str| {
        let chars: Vec<char> = line.chars().collect();
        chars.chunks(width).map(|c| c.iter().collect::<String>()).collect::<Vec<_>>().join("\n")
    };
    text.split('\n').map(fold).collect::<Vec<_>>().join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Comments added to annotate a paste are read as blanks: the run is the file's.
    #[test]
    fn comments_in_a_document_are_read_as_blanks(
        which in any::<prop::sample::Index>(),
        at in prop::collection::vec((0..400usize, any::<bool>()), 1..5),
        fenced in any::<bool>(),
    ) {
        let export = &exports()[which.index(exports().len())];
        let text = commented(&serde_json::to_string_pretty(&export.value).unwrap(), &at);
        let text = if fenced { format!("Our export:\n```jsonc\n{text}\n```\n") } else { text };
        let runs = run_all(text.as_bytes(), "commented.json").map_err(|e| TestCaseError::fail(format!("{}: {e}", export.name)))?;
        prop_assert_eq!(runs.len(), 1, "{}", &export.name);
        prop_assert!(notes(&runs[0]).contains(&"json-comments"), "{}: {:?}", &export.name, notes(&runs[0]));
        prop_assert_eq!(figures(&runs[0]), figures(&export.run), "{}", &export.name);
        prop_assert_eq!(&runs[0].derived.tpot_ms.mean, &export.run.derived.tpot_ms.mean, "{}", &export.name);
    }

    /// A record on one line, hard-wrapped at any width by a terminal or a tracker, reads as the
    /// file.
    #[test]
    fn a_hard_wrapped_record_reads_as_its_file(
        which in any::<prop::sample::Index>(),
        width in 64..1200usize,
        prefix in prop::sample::select(vec!["", "$ cat result.json\n", "[2026-11-29 19:00:01] INFO result: "]),
    ) {
        let export = &exports()[which.index(exports().len())];
        let record = serde_json::to_string(&export.value).unwrap();
        let text = folded(&format!("{prefix}{record}"), width);
        let runs = run_all(text.as_bytes(), "wrapped.log").map_err(|e| TestCaseError::fail(format!("{}: {e}", export.name)))?;
        prop_assert_eq!(runs.len(), 1, "{}", &export.name);
        prop_assert_eq!(&runs[0].source.parser, &export.run.source.parser);
        prop_assert_eq!(figures(&runs[0]), figures(&export.run), "{} at {}", &export.name, width);
        prop_assert_eq!(&runs[0].derived.tpot_ms.mean, &export.run.derived.tpot_ms.mean, "{}", &export.name);
    }

    /// A document cut off anywhere gives no run, or a run marked cut off whose every figure is
    /// the original's.
    #[test]
    fn a_cut_document_gives_what_it_holds_and_nothing_else(
        which in any::<prop::sample::Index>(),
        cut in 0.02..1.0f64,
        pretty in any::<bool>(),
        around in 0..3usize,
    ) {
        let export = &exports()[which.index(exports().len())];
        let text = if pretty {
            serde_json::to_string_pretty(&export.value).unwrap()
        } else {
            serde_json::to_string(&export.value).unwrap()
        };
        let mut at = (text.len() as f64 * cut) as usize;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let piece = &text[..at];
        let text = match around {
            0 => piece.to_string(),
            1 => format!("The export (the issue cut it):\n\n```json\n{piece}\n```\n\nAny idea?\n"),
            _ => format!("$ cat profile_export.json\n{piece}"),
        };
        if let Ok(runs) = run_all(text.as_bytes(), "cut.md") {
            prop_assert!(runs.len() <= 1, "{}: {} runs", &export.name, runs.len());
            for run in &runs {
                // Cut to keys two formats share (AIPerf's and genai-perf's metric objects), it may
                // be read as the other: the figures below must still be the original's.
                prop_assert!(run.source.truncated.is_some(), "{}: not marked cut off", &export.name);
                if let Err(e) = figures_are_the_originals(run, &export.run) {
                    return Err(TestCaseError::fail(format!("{}: {e}", export.name)));
                }
                // A derived TPOT of a cut document is the original's, by the same method; by another
                // (the rows one method needs were cut), within what the two methods may differ.
                if let (Some(got), Some(want)) = (run.derived.tpot_ms.mean, export.run.derived.tpot_ms.mean) {
                    let same = run.derived.tpot_ms.method == export.run.derived.tpot_ms.method;
                    let within = if same { 1e-9 } else { 0.01 };
                    prop_assert!((got - want).abs() <= within * want, "{}: TPOT {got} vs {want}", &export.name);
                }
            }
        }
    }
}

/// The published pastes of `samples/reach/`: each gives the figures it prints, as its manifest
/// says, read by the definition named there.
#[test]
fn published_pastes_read_as_their_manifest_says() {
    let dir = common::samples_dir().join("reach");
    let manifest = common::read_json(&dir.join("manifest.json"));
    let mut failures = Vec::new();
    let mut checked = 0;
    for entry in manifest.as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let runs = common::normalize_file(&dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(runs.len() as u64, entry["runs"].as_u64().unwrap(), "{file}");
        let run = serde_json::to_value(&runs[0]).unwrap();
        for (path, want) in entry["expected"].as_object().unwrap() {
            let got = path.split('.').fold(&run, |v, k| &v[k]);
            let same = match (got.as_f64(), want.as_f64()) {
                (Some(g), Some(w)) => (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                _ => got == want,
            };
            if !same {
                failures.push(format!("{file}: {path} = {got}, the paste says {want}"));
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An inference-perf report as people post it in an issue: folded in a `<details>` block,
/// indented, after the `$ cat` that printed it, from a version that wrote no
/// `benchmark_time_seconds`: read, every figure the file's but the duration.
#[test]
fn a_report_in_a_details_block_after_a_cat_line_is_read() {
    let export =
        exports().iter().find(|e| e.name.ends_with("inference-perf-s2.summary_lifecycle_metrics.json")).unwrap();
    let mut value = export.value.clone();
    remove_key(&mut value, "benchmark_time_seconds");
    let body: Vec<String> = serde_json::to_string_pretty(&value).unwrap().lines().map(|l| format!("    {l}")).collect();
    let text = format!(
        "Results:\n\n<details>\n<summary>summary_lifecycle_metrics.json</summary>\n\n```\n$ cat reports/summary_lifecycle_metrics.json\n{}\n```\n</details>\n",
        body.join("\n")
    );
    let runs = run_all(text.as_bytes(), "issue.md").unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].source.parser, "inference-perf-lifecycle");
    assert!(notes(&runs[0]).contains(&"recognised-by-structure"), "{:?}", notes(&runs[0]));
    figures_are_the_originals(&runs[0], &export.run).unwrap();
    let lost: Vec<String> = figures(&export.run).into_keys().filter(|k| !figures(&runs[0]).contains_key(k)).collect();
    assert_eq!(lost, ["totals.duration_s"]);
}
