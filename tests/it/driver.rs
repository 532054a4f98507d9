//! The driver reads top to bottom: `pipeline` decides once what an input is and hands it to the
//! module that reads it; its submodules import each other in one order (no circle), and from the
//! driver itself only the types every step shares (`Config`, `Out`, `Render`), never a step.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The driver's folder, wherever the library's sources are.
fn pipeline_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["src/pipeline", "crates/core/src/pipeline"]
        .iter()
        .map(|d| root.join(d))
        .find(|d| d.is_dir())
        .expect("the pipeline's folder")
}

/// What the driver's own file holds that its submodules may use: types, not steps.
const SHARED: &[&str] = &["Config", "Out", "Render", "Plain"];

/// Submodule -> the names it imports through `crate::pipeline::` (a submodule, or an item of the
/// driver's own file).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(pipeline_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        // (A step's own tests drive it through the driver, as a caller does.)
        let text = text.split("#[cfg(test)]").next().unwrap();
        let mut to = BTreeSet::new();
        for line in text.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
            for (i, _) in line.match_indices("crate::pipeline::") {
                let rest = &line[i + "crate::pipeline::".len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group.split('}').next().unwrap().split(',').collect(),
                    None => vec![rest],
                };
                for n in names {
                    let n: String = n.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !n.is_empty() && n != name {
                        to.insert(n);
                    }
                }
            }
        }
        graph.insert(name, to);
    }
    graph
}

#[test]
fn the_drivers_steps_import_each_other_in_one_order() {
    let graph = imports();
    let steps: BTreeSet<&String> = graph.keys().collect();
    // Not vacuous: the steps do use each other.
    assert!(graph["text"].contains("scan") && graph["json"].contains("doc"), "{graph:?}");
    let mut from_driver = Vec::new();
    for (module, names) in &graph {
        for n in names {
            if !steps.contains(n) && !SHARED.contains(&n.as_str()) {
                from_driver.push(format!("{module} uses the driver's {n}"));
            }
        }
    }
    assert!(from_driver.is_empty(), "a step reaches back into the driver: {from_driver:?}");
    // No circle: every step can be put after those it imports.
    let mut placed: BTreeSet<String> = BTreeSet::new();
    while placed.len() < graph.len() {
        let next: Vec<String> = graph
            .iter()
            .filter(|(m, to)| !placed.contains(*m) && to.iter().all(|t| placed.contains(t) || !steps.contains(t)))
            .map(|(m, _)| m.clone())
            .collect();
        let left: Vec<&String> = graph.keys().filter(|m| !placed.contains(*m)).collect();
        assert!(!next.is_empty(), "the driver's steps import each other in a circle: {left:?}");
        placed.extend(next);
    }
}

#[test]
fn an_input_is_classified_in_one_place() {
    // The tests of what an input is (`looks_like_json`, `sniff`) are called from `classify` only,
    // and the driver reads the input as `classify::kind` decided.
    let dir = pipeline_dir();
    let driver = std::fs::read_to_string(dir.with_extension("rs")).unwrap();
    assert!(driver.contains("classify::kind("));
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        if name != "classify" {
            assert!(!text.contains("decode::sniff("), "{name} sniffs an input's encoding");
            assert!(!text.contains("fn looks_like_json"), "{name} has its own JSON test");
        }
    }
    assert!(!driver.contains("decode::sniff(") && !driver.contains("looks_like_json("));
}
