//! The house rules of the source tree, read from the files themselves so that they hold in CI:
//! each layer crate depends only on the layers below it; inside the core, the stages import only
//! earlier stages, and in every crate no top-level modules import each other in a circle; no
//! source file grows past ~800 lines; every document the code and the definitions cite is in the
//! repository.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers under `crates/`, lowest first: each may depend on those before it, never on one
/// after it (Cargo refuses a cycle; this holds the order).
const LAYERS: &[&str] = &["core", "analysis", "store", "cli"];

/// The data path, one module per stage of the core, each feeding the next.
const STAGES: &[&str] = &["input", "detect", "extract", "canonical", "derive", "validate", "emit"];

/// The longest a source file may be.
const MAX_LINES: usize = 800;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` (recursively), sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The text of a Rust file without its `//` comments (docs name modules they do not import).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The first names of the paths a text reaches through `crate::`: `crate::report::Run` and
/// `use crate::{report::Run, Error}` give `report`, `Error`.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The names at the group's first level.
            let (mut depth, mut start) = (0usize, 0usize);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.insert(ident(&group[start..j]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(&group[start..j]));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// The source folder of the layer crate `name` (`crates/NAME/src`).
fn crate_src(name: &str) -> PathBuf {
    root().join("crates").join(name).join("src")
}

/// Top-level module of one crate (its `src`) -> the top-level modules its files import (items the
/// crate root re-exports, `crate::Run`, count as their module's).
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for f in files(src).into_iter().filter(|f| f.extension().is_some_and(|e| e == "rs")) {
        let rel = f.strip_prefix(src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if top != "lib" && top != "main" {
            modules.entry(top).or_default().push(f);
        }
    }
    // `pub use report::{Report, Run};` in lib.rs: Report and Run are report's.
    let lib = code(&src.join("lib.rs"));
    let mut reexported = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.trim().strip_prefix("pub use ")) {
        let Some((module, items)) = line.split_once("::") else { continue };
        for item in items.trim_end_matches(';').trim_matches(|c| c == '{' || c == '}').split(',') {
            reexported.insert(item.trim().to_string(), module.to_string());
        }
    }
    let mut graph = BTreeMap::new();
    for (module, paths) in &modules {
        let mut to = BTreeSet::new();
        for p in paths {
            for name in crate_paths(&code(p)) {
                let target = if modules.contains_key(&name) { Some(name) } else { reexported.get(&name).cloned() };
                to.extend(target.filter(|t| t != module));
            }
        }
        graph.insert(module.clone(), to);
    }
    graph
}

/// The workspace packages a manifest depends on (normal, dev, build, and per-target), by name.
fn sibling_dependencies(manifest: &Path) -> BTreeSet<String> {
    let doc: toml::Table = std::fs::read_to_string(manifest).unwrap().parse().unwrap();
    let mut tables: Vec<&toml::Table> = Vec::new();
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    tables.extend(kinds.iter().filter_map(|k| doc.get(*k).and_then(toml::Value::as_table)));
    for target in doc.get("target").and_then(toml::Value::as_table).into_iter().flat_map(|t| t.values()) {
        tables.extend(kinds.iter().filter_map(|k| target.get(*k).and_then(toml::Value::as_table)));
    }
    let mut out = BTreeSet::new();
    for (name, spec) in tables.into_iter().flatten() {
        let package = spec.get("package").and_then(toml::Value::as_str).unwrap_or(name);
        if package.starts_with("bench-normalize") {
            out.insert(package.to_string());
        }
    }
    out
}

#[test]
fn each_layer_depends_only_on_the_layers_below_it() {
    let package = |layer: &str| format!("bench-normalize-{layer}");
    for (i, layer) in LAYERS.iter().enumerate() {
        let manifest = root().join("crates").join(layer).join("Cargo.toml");
        let deps = sibling_dependencies(&manifest);
        let below: BTreeSet<String> = LAYERS[..i].iter().map(|l| package(l)).collect();
        let above: Vec<&String> = deps.iter().filter(|d| !below.contains(*d)).collect();
        assert!(above.is_empty(), "{layer} depends on {above:?}: only the layers below it ({below:?}) may be used");
        // Nor does its code name a crate above it (a path dependency added without the manifest
        // would not compile; this says which layer the code reached for).
        for f in files(&crate_src(layer)).into_iter().filter(|f| f.extension().is_some_and(|e| e == "rs")) {
            let text = code(&f);
            for upper in &LAYERS[i + 1..] {
                let name = format!("bench_normalize_{upper}");
                assert!(!text.contains(&name), "{} names {name}, a layer above {layer}", f.display());
            }
        }
    }
    // Not vacuous: the order is what the layers use.
    assert_eq!(sibling_dependencies(&root().join("crates/core/Cargo.toml")), BTreeSet::new());
    assert!(sibling_dependencies(&root().join("crates/store/Cargo.toml")).contains("bench-normalize-analysis"));
    let cli = sibling_dependencies(&root().join("crates/cli/Cargo.toml"));
    assert_eq!(cli, LAYERS[..3].iter().map(|l| package(l)).collect(), "the command line uses every layer below it");
    // The root package is the library's face and the executable: it uses the layers; the Python
    // module uses that face, never the command line.
    let face = sibling_dependencies(&root().join("Cargo.toml"));
    assert_eq!(face, LAYERS.iter().map(|l| package(l)).collect(), "the root package re-exports the layers");
    let python = sibling_dependencies(&root().join("crates/python/Cargo.toml"));
    assert!(!python.contains("bench-normalize-cli"), "{python:?}");
}

#[test]
fn stages_import_only_earlier_stages() {
    let graph = module_graph(&crate_src("core"));
    for s in STAGES {
        assert!(graph.contains_key(*s), "stage {s} has no module in crates/core/src/");
    }
    // Not vacuous: the later stages do import earlier ones.
    assert!(graph["extract"].contains("detect") && graph["validate"].contains("derive"), "{graph:?}");
    let mut backwards = Vec::new();
    for (i, stage) in STAGES.iter().enumerate() {
        for later in &STAGES[i + 1..] {
            if graph[*stage].contains(*later) {
                backwards.push(format!("{stage} -> {later}"));
            }
        }
    }
    assert!(backwards.is_empty(), "a stage imports a later one: {backwards:?}");
}

#[test]
fn no_import_circle_between_top_level_modules() {
    assert!(module_graph(&crate_src("core")).len() > 15);
    // The command line's modules are one unit, as they were one module before the split: its
    // arguments and their help texts name each other.
    for layer in LAYERS.iter().filter(|l| **l != "cli") {
        no_import_circle(&module_graph(&crate_src(layer)));
    }
}

fn no_import_circle(graph: &BTreeMap<String, BTreeSet<String>>) {
    // Depth-first search; a module met again while on the path closes a circle.
    fn visit<'g>(
        m: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| *p == m) {
            let mut circle: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
            circle.push(m.to_string());
            return Some(circle);
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for next in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        if let Some(circle) = visit(m, graph, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn the_graph_reader_sees_groups_and_reexports() {
    let found = crate_paths("use crate::{report::{Run, Stat}, Error};\nlet x = crate::derive::show(1.0);");
    assert_eq!(found, ["Error", "derive", "report"].iter().map(|s| s.to_string()).collect());
}

#[test]
fn no_source_file_is_longer_than_800_lines() {
    let mut sources = files(&root().join("src"));
    for dir in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = dir.unwrap().path();
        sources.extend(files(&dir.join("src")));
        sources.push(dir.join("build.rs"));
    }
    assert!(sources.iter().any(|f| f.ends_with("crates/core/src/pipeline.rs")), "{sources:?}");
    let long: Vec<String> = sources
        .into_iter()
        .filter(|f| f.is_file())
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .filter_map(|f| {
            let n = std::fs::read_to_string(&f).unwrap().lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", f.strip_prefix(root()).unwrap().display()))
        })
        .collect();
    assert!(long.is_empty(), "split by job: {long:?}");
}

/// `docs/metrics.md`, `samples/peers/README.md`, and a bare `metrics.md` (a document of docs/):
/// each cited document is in the repository. Paths of other projects' repositories
/// (`genai-perf/docs/tutorial.md`) and of files a script writes (`results.md`) are not ours.
#[test]
fn every_cited_document_is_in_the_repository() {
    let ours = ["docs/", "samples/", "bench/", "fuzz/", "README.md"];
    let mut cited = BTreeSet::new();
    for dir in ["src", "crates", "parsers", "tests", "bench", "fuzz", ".ci"] {
        for f in files(&root().join(dir)) {
            if f.components().any(|c| c.as_os_str() == "snapshots") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&f) else { continue };
            let name = |c: char| c.is_alphanumeric() || "_./-".contains(c);
            for (i, _) in text.match_indices(".md") {
                if text[i + 3..].starts_with(|c: char| c.is_alphanumeric()) {
                    continue;
                }
                let start = text[..i].rfind(|c| !name(c)).map_or(0, |s| s + 1);
                let path = &text[start..i + 3];
                let bare = !path.contains('/');
                if bare
                    && ["formats", "metrics", "report", "parsers", "decisions", "performance", "samples", "peers"]
                        .iter()
                        .any(|d| path == format!("{d}.md"))
                {
                    cited.insert((format!("docs/{path}"), f.clone()));
                } else if ours.iter().any(|o| path.starts_with(o)) && !path.contains("out/") {
                    cited.insert((path.to_string(), f.clone()));
                }
            }
        }
    }
    assert!(cited.iter().any(|(p, _)| p == "docs/metrics.md"), "{cited:?}");
    let missing: Vec<String> = cited
        .iter()
        .filter(|(p, _)| !root().join(p).exists())
        .map(|(p, f)| format!("{p} (cited in {})", f.strip_prefix(root()).unwrap().display()))
        .collect();
    assert!(missing.is_empty(), "cited but not in the repository: {missing:?}");
}

/// `crates/core/src/rules.toml` (the rules' data, from which `RuleId` is generated) and docs/metrics.md's rules
/// table list the same ids, in the same order, with the same severities; every `RuleId` in the
/// library is one of them.
#[test]
fn the_rules_table_of_the_docs_is_the_rules_data() {
    let data: toml::Table =
        std::fs::read_to_string(root().join("crates/core/src/rules.toml")).unwrap().parse().unwrap();
    let rules: Vec<(String, String)> = data["rule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r["severity"].as_str().unwrap().to_string()))
        .collect();
    assert!(rules.len() >= 20, "{rules:?}");
    let docs = std::fs::read_to_string(root().join("docs/metrics.md")).unwrap();
    let table: Vec<(String, String)> = docs
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("| [`")?;
            let (id, rest) = rest.split_once('`')?;
            let severity = rest.split('|').nth(1)?.trim().split(|c: char| !c.is_alphabetic()).next()?;
            Some((id.to_string(), severity.to_string()))
        })
        .collect();
    assert_eq!(table, rules, "docs/metrics.md's rules table and crates/core/src/rules.toml differ");
    let ids: Vec<&str> = bench_normalize::report::RuleId::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(ids, rules.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>());
}

/// The core's package carries the definitions it compiles in: `crates/core/parsers` is the
/// workspace's `parsers/` (a link), so `cargo package -p bench-normalize-core` copies every
/// definition and the core builds on its own, published or in the sdist.
#[test]
fn the_core_package_carries_the_definitions() {
    let linked = root().join("crates/core/parsers");
    let meta = std::fs::symlink_metadata(&linked).expect("crates/core/parsers exists");
    assert!(meta.file_type().is_symlink(), "crates/core/parsers is a link, not a copy that can drift");
    assert_eq!(std::fs::canonicalize(&linked).unwrap(), std::fs::canonicalize(root().join("parsers")).unwrap());
    let build = std::fs::read_to_string(root().join("crates/core/build.rs")).unwrap();
    assert!(
        build.contains("root.join(\"parsers\")") && !build.contains("../"),
        "build.rs reads only inside its package"
    );
}
