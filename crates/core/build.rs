//! Compiles every `parsers/*.toml` (`parsers` here links to the workspace's folder) into the
//! library, so it runs from anywhere and a new definition needs no Rust change; and generates the canonical vocabulary (`FIELDS` and one typed key per
//! figure) from `src/vocabulary.toml`, and the typed rule ids (`RuleId`) from `src/rules.toml`,
//! as tokei generates its language enum from its data.

use std::{collections::BTreeMap, env, fmt::Write as _, fs, path::PathBuf};

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    parsers(&root, &out_dir);
    vocabulary(&root, &out_dir);
    rules(&root, &out_dir);
}

fn parsers(root: &std::path::Path, out_dir: &std::path::Path) {
    // The parser definitions are the workspace's data (docs/parsers.md), at its root; the link
    // `parsers` beside this file makes them this package's files too (`cargo package` copies them).
    let dir = root.join("parsers");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("parsers/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = String::from(
        "/// `(file name, text)` of every built-in definition, in file-name order.\npub static BUILTIN_PARSERS: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy();
        out.push_str(&format!("    ({name:?}, include_str!({:?})),\n", f.display().to_string()));
    }
    out.push_str("];\n");
    fs::write(out_dir.join("builtin_parsers.rs"), out).unwrap();
}

/// A node of the key tree: the keys of a group and its subgroups (`reported` -> `speculative`).
#[derive(Default)]
struct Module {
    keys: Vec<(String, usize, String)>,
    subs: BTreeMap<String, Module>,
}

/// `src/vocabulary.toml` -> `FIELDS` (in file order, which is report order) and the key modules
/// `workload`, `totals`, `reported` (with their subgroups), one `pub const` per figure. A file
/// that is not a valid vocabulary stops the build with the reason.
fn vocabulary(root: &std::path::Path, out_dir: &std::path::Path) {
    let file = root.join("src/vocabulary.toml");
    println!("cargo:rerun-if-changed={}", file.display());
    let text = fs::read_to_string(&file).expect("src/vocabulary.toml exists");
    let doc: toml::Table = text.parse().unwrap_or_else(|e| panic!("src/vocabulary.toml: {e}"));
    let fields = doc.get("field").and_then(toml::Value::as_array).expect("src/vocabulary.toml: a [[field]] list");
    let mut out = String::from("/// Every canonical figure, in report order (generated from `src/vocabulary.toml`).\n");
    out.push_str("pub static FIELDS: &[FieldDef] = &[\n");
    let mut tree: BTreeMap<String, Module> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for (i, f) in fields.iter().enumerate() {
        let get = |k: &str| -> &str {
            f.get(k).and_then(toml::Value::as_str).unwrap_or_else(|| panic!("src/vocabulary.toml: field {i}: no `{k}`"))
        };
        let (path, kind, unit, doc) = (get("path"), get("kind"), get("unit"), get("doc"));
        if let Some(extra) =
            f.as_table().and_then(|t| t.keys().find(|k| !["path", "kind", "unit", "doc"].contains(&k.as_str())))
        {
            panic!("src/vocabulary.toml: {path}: unknown key `{extra}`");
        }
        assert!(seen.insert(path.to_string()), "src/vocabulary.toml: {path} listed twice");
        let kind = match kind {
            "count" => "Count",
            "number" => "Number",
            "text" => "Text",
            "stat" => "Stat",
            "list" => "List",
            k => panic!("src/vocabulary.toml: {path}: unknown kind `{k}`"),
        };
        let unit = match unit {
            "none" => "None",
            "ms" => "Ms",
            "s" => "S",
            "ns" => "Ns",
            "requests" => "Requests",
            "tokens" => "Tokens",
            "req/s" => "ReqPerS",
            "tok/s" => "TokPerS",
            "pct" => "Pct",
            "ratio" => "Ratio",
            u => panic!("src/vocabulary.toml: {path}: unknown unit `{u}`"),
        };
        let parts: Vec<&str> = path.split('.').collect();
        assert!(
            parts.len() >= 2 && ["workload", "totals", "reported"].contains(&parts[0]),
            "src/vocabulary.toml: {path}: not in `workload`, `totals` or `reported`"
        );
        assert!(
            parts.iter().all(|p| !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                && !p.as_bytes()[0].is_ascii_digit()),
            "src/vocabulary.toml: {path}: a part is not a lower-case name"
        );
        writeln!(out, "    FieldDef {{ path: {path:?}, kind: Kind::{kind}, unit: Unit::{unit}, doc: {doc:?} }},")
            .unwrap();
        let mut m = tree.entry(parts[0].to_string()).or_default();
        for sub in &parts[1..parts.len() - 1] {
            m = m.subs.entry(sub.to_string()).or_default();
        }
        let name = parts[parts.len() - 1].to_ascii_uppercase();
        m.keys.push((name, i, format!("`{path}`: {doc}")));
    }
    out.push_str("];\n");
    assert!(fields.len() <= u16::MAX as usize, "src/vocabulary.toml: too many fields");
    for group in ["workload", "totals", "reported"] {
        let m = tree.remove(group).unwrap_or_default();
        write_module(&mut out, group, &m, 0);
    }
    fs::write(out_dir.join("vocabulary.rs"), out).unwrap();
}

fn write_module(out: &mut String, name: &str, m: &Module, depth: usize) {
    let pad = "    ".repeat(depth);
    writeln!(out, "{pad}/// Keys of the figures in `{name}`.").unwrap();
    writeln!(out, "{pad}pub mod {name} {{").unwrap();
    // Every figure has its key, whether or not the code names it yet.
    writeln!(out, "{pad}    #![allow(dead_code)]").unwrap();
    writeln!(
        out,
        "{pad}    #[allow(unused_imports)]\n{pad}    use {}::Key;",
        ["super"; 1].repeat(depth + 1).join("::")
    )
    .unwrap();
    for (k, i, doc) in &m.keys {
        writeln!(out, "{pad}    /// {}", doc.replace('\n', " ")).unwrap();
        writeln!(out, "{pad}    pub const {k}: Key = Key({i});").unwrap();
    }
    for (sub, sm) in &m.subs {
        write_module(out, sub, sm, depth + 1);
    }
    writeln!(out, "{pad}}}").unwrap();
}

/// `src/rules.toml` -> `enum RuleId` (one variant per rule, in report order) with its id, severity
/// and stage. A file that is not a valid rule list stops the build with the reason.
fn rules(root: &std::path::Path, out_dir: &std::path::Path) {
    let file = root.join("src/rules.toml");
    println!("cargo:rerun-if-changed={}", file.display());
    let text = fs::read_to_string(&file).expect("src/rules.toml exists");
    let doc: toml::Table = text.parse().unwrap_or_else(|e| panic!("src/rules.toml: {e}"));
    let rules = doc.get("rule").and_then(toml::Value::as_array).expect("src/rules.toml: a [[rule]] list");
    let mut seen = std::collections::HashSet::new();
    let (mut variants, mut ids, mut severities, mut stages, mut all) =
        (String::new(), String::new(), String::new(), String::new(), String::new());
    for (i, r) in rules.iter().enumerate() {
        let get = |k: &str| -> &str {
            r.get(k).and_then(toml::Value::as_str).unwrap_or_else(|| panic!("src/rules.toml: rule {i}: no `{k}`"))
        };
        let (id, severity, stage) = (get("id"), get("severity"), get("stage"));
        if let Some(extra) =
            r.as_table().and_then(|t| t.keys().find(|k| !["id", "severity", "stage"].contains(&k.as_str())))
        {
            panic!("src/rules.toml: {id}: unknown key `{extra}`");
        }
        assert!(seen.insert(id.to_string()), "src/rules.toml: {id} listed twice");
        assert!(
            !id.is_empty()
                && id
                    .split('-')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())),
            "src/rules.toml: {id}: not a kebab-case id"
        );
        let severity = match severity {
            "error" => "Error",
            "warning" => "Warning",
            "info" => "Info",
            s => panic!("src/rules.toml: {id}: unknown severity `{s}`"),
        };
        let stage = match stage {
            "validate" => "Validate",
            "check" => "Check",
            "fold" => "Fold",
            "run" => "Run",
            s => panic!("src/rules.toml: {id}: unknown stage `{s}`"),
        };
        let variant: String = id
            .split('-')
            .map(|p| {
                let mut c = p.chars();
                c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
            })
            .collect();
        writeln!(variants, "    /// `{id}`.\n    {variant},").unwrap();
        writeln!(ids, "            RuleId::{variant} => {id:?},").unwrap();
        writeln!(severities, "            RuleId::{variant} => Severity::{severity},").unwrap();
        writeln!(stages, "            RuleId::{variant} => RuleStage::{stage},").unwrap();
        writeln!(all, "        RuleId::{variant},").unwrap();
    }
    let mut out = String::new();
    out.push_str("/// Every rule a check can come from (generated from `src/rules.toml`, in report order).\n");
    out.push_str("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n");
    writeln!(out, "pub enum RuleId {{\n{variants}}}\n").unwrap();
    out.push_str("impl RuleId {\n");
    writeln!(out, "    /// Every rule, in report order.\n    pub const ALL: &[RuleId] = &[\n{all}    ];\n").unwrap();
    for (doc, name, ty, arms) in [
        ("The id as reports write it (kebab-case).", "as_str", "&'static str", &ids),
        ("What a failure of the rule does (docs/metrics.md, the rules table).", "severity", "Severity", &severities),
        ("The stage that adds the rule's check.", "stage", "RuleStage", &stages),
    ] {
        writeln!(
            out,
            "    /// {doc}\n    pub const fn {name}(self) -> {ty} {{\n        match self {{\n{arms}        }}\n    }}\n"
        )
        .unwrap();
    }
    out.push_str("}\n");
    fs::write(out_dir.join("rules.rs"), out).unwrap();
}
