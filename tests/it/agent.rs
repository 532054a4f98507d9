//! What an agent harness expects: a JSON Schema per output format and its strict variant, each
//! validated with a real JSON Schema validator against every sample's output; help that carries
//! its own examples and names no repository file; a manual page per subcommand; the agent skill
//! (SKILL.md) within the Agent Skills specification's limits and installed where harnesses read
//! it; the SGLang auto-benchmark skill's row (`-f sglang-skill`) from the derived figures.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bench_normalize::output_schema::{STAT_KEYS, strict_violations};
use serde_json::{Value, json};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bench-normalize"));
    c.env("NO_COLOR", "1").env_remove("BENCH_NORMALIZE_SLO").env_remove("BENCH_NORMALIZE_PARSERS");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn schema(format: &str, strict: bool) -> Value {
    let mut args = vec!["schema", "--format", format];
    if strict {
        args.push("--strict");
    }
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The documents of an output: one JSON document, or one per line.
fn documents(stdout: &[u8]) -> Vec<Value> {
    let text = String::from_utf8(stdout.to_vec()).unwrap();
    if text.trim().is_empty() {
        return Vec::new();
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => vec![v],
        Err(_) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{}", &text[..text.len().min(500)])))
            .collect(),
    }
}

/// Every sample input, as paths.
fn all_samples() -> Vec<String> {
    common::samples().iter().map(|p| p.display().to_string()).collect()
}

/// `schema` with `#/$defs/NAME` as its root.
fn with_root(schema: &Value, name: &str) -> Value {
    let mut s = json!({ "$ref": format!("#/$defs/{name}") });
    s["$defs"] = schema["$defs"].clone();
    s
}

/// The schema at `s`, its `$ref` followed.
fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => resolve(root, &root["$defs"][name]),
        None => s,
    }
}

/// `instance` with every property the strict schema names and the instance lacks written as
/// `null`: what "absent and null mean the same" makes of a document for the strict schema.
fn complete(root: &Value, s: &Value, instance: &mut Value) {
    let s = resolve(root, s);
    if let Some(branches) = s.get("anyOf").and_then(Value::as_array) {
        // The branch of the instance's kind.
        let kind = |b: &Value| {
            let b = resolve(root, b);
            let t = b.get("type").cloned().unwrap_or(Value::Null);
            let has = |name: &str| t == name || t.as_array().is_some_and(|a| a.iter().any(|x| x == name));
            (instance.is_object() && has("object")) || (instance.is_array() && has("array"))
        };
        if let Some(b) = branches.iter().find(|b| kind(b)) {
            complete(root, b, instance);
        }
        return;
    }
    match instance {
        Value::Object(map) => {
            for (name, p) in s.get("properties").and_then(Value::as_object).into_iter().flatten() {
                let v = map.entry(name.clone()).or_insert(Value::Null);
                complete(root, p, v);
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.get("items") {
                for i in items {
                    complete(root, item, i);
                }
            }
        }
        _ => {}
    }
}

fn errors(validator: &jsonschema::Validator, v: &Value) -> Vec<String> {
    validator.iter_errors(v).map(|e| format!("{e} at {}", e.instance_path())).take(3).collect()
}

#[test]
fn every_sample_output_validates_against_its_formats_schema_strict_and_not() {
    let samples = all_samples();
    assert!(samples.len() > 100, "{}", samples.len());
    for format in ["json", "jsonl", "dstack", "dstack-e2e", "sglang-skill"] {
        let loose = schema(format, false);
        let strict = schema(format, true);
        let loose_v = jsonschema::validator_for(&loose).expect("a valid JSON Schema");
        let strict_v = jsonschema::validator_for(&strict).expect("a valid strict JSON Schema");
        // dstack: a `metrics` object alone is one of the strict schema's `$defs`, and so are the
        // entries of several runs.
        let strict_metrics = if format == "dstack" { with_root(&strict, "metrics") } else { strict.clone() };
        let strict_metrics_v = jsonschema::validator_for(&strict_metrics).unwrap();
        let rooted = |name: &str| {
            let root = with_root(&strict, name);
            let v = jsonschema::validator_for(&root).unwrap();
            (root, v)
        };
        // (dstack-e2e writes `metrics` objects only.)
        let benchmark_entry = if format == "dstack" { "benchmark_entry" } else { "metrics_entry" };
        let entries = format.starts_with("dstack").then(|| (rooted("metrics_entry"), rooted(benchmark_entry)));
        let mut labelled = 0;
        let mut args = vec!["-f", format];
        args.extend(samples.iter().map(String::as_str));
        let o = run(&args);
        let docs = documents(&o.stdout);
        assert!(!docs.is_empty(), "{format}: nothing written");
        let mut checked = 0;
        for doc in &docs {
            let e = errors(&loose_v, doc);
            assert!(e.is_empty(), "{format}: {e:?}\n{doc}");
            // The strict schema has one object at its root: each element of an array is a document.
            let elements: Vec<&Value> = match doc {
                Value::Array(a) => a.iter().collect(),
                one => vec![one],
            };
            for el in elements {
                let (root, v) = match &entries {
                    // Several runs: each element says which input, block, first line and load it is.
                    Some(((m_root, m_v), (b_root, b_v))) if doc.is_array() => {
                        assert!(
                            ["input", "block", "first_line", "load"].iter().all(|k| el.get(k).is_some()),
                            "{format}: an unlabelled element: {el}"
                        );
                        labelled += 1;
                        if el.get("benchmark").is_some() { (b_root, b_v) } else { (m_root, m_v) }
                    }
                    _ if format == "dstack" && el.get("metrics").is_none() => (&strict_metrics, &strict_metrics_v),
                    _ => (&strict, &strict_v),
                };
                let mut completed = el.clone();
                complete(root, root, &mut completed);
                let e = errors(v, &completed);
                assert!(e.is_empty(), "{format} --strict: {e:?}\n{el}");
                // The formats whose documents are written whole need no completion.
                if ["dstack-e2e", "sglang-skill"].contains(&format) {
                    assert_eq!(&completed, el, "{format}: a key left out");
                }
                checked += 1;
            }
        }
        assert!(checked >= if format == "json" { 1 } else { 50 }, "{format}: {checked}");
        if format.starts_with("dstack") {
            assert!(labelled >= 50, "{format}: {labelled} entries");
        }
        // Not vacuous: a figure of the wrong type fails both.
        let mut bad = docs[0].clone();
        let slot = match format {
            "json" => &mut bad["runs"][0]["totals"],
            "jsonl" => &mut bad["totals"],
            "sglang-skill" => &mut bad["metrics"],
            _ => {
                if bad.is_array() {
                    // An entry's object.
                    bad = bad[0].clone();
                    bad = bad.get("metrics").or(bad.get("benchmark")).cloned().unwrap();
                }
                &mut bad
            }
        };
        slot["successful_requests"] = json!("many");
        slot["request_throughput"] = json!("many");
        assert!(!loose_v.is_valid(&bad), "{format}: {bad}");
        assert!(!strict_v.is_valid(&bad) && !strict_metrics_v.is_valid(&bad), "{format} --strict: {bad}");
    }
}

/// Absent and `null` mean the same: every sample's output with the keys the strict schema names
/// written as `null` is read back by `check` exactly as the plain output (same report, same exit).
#[test]
fn a_document_completed_for_the_strict_schema_reads_back_as_the_plain_one() {
    let samples = all_samples();
    for format in ["jsonl", "dstack", "dstack-e2e"] {
        let strict = schema(format, true);
        let mut args = vec!["-f", format];
        args.extend(samples.iter().map(String::as_str));
        let plain = run(&args).stdout;
        let mut completed_lines = Vec::new();
        let mut added = 0;
        for doc in documents(&plain) {
            let mut doc = doc;
            let before = doc.to_string().matches("null").count();
            let items: Vec<&mut Value> = match &mut doc {
                Value::Array(a) => a.iter_mut().collect(),
                one => vec![one],
            };
            for el in items {
                let root = match (format, el.get("input").is_some()) {
                    (_, true) if el.get("benchmark").is_some() => with_root(&strict, "benchmark_entry"),
                    (_, true) => with_root(&strict, "metrics_entry"),
                    ("dstack", false) if el.get("metrics").is_none() => with_root(&strict, "metrics"),
                    _ => strict.clone(),
                };
                complete(&root, &root, el);
            }
            added += doc.to_string().matches("null").count() - before;
            completed_lines.push(doc.to_string());
        }
        if format == "jsonl" {
            assert!(added > 1000, "{format}: {added} keys completed");
        }
        let completed = completed_lines.join("\n") + "\n";
        let check = |text: &[u8]| {
            let mut cmd = bin();
            cmd.args(["check", "-", "-f", "json"]);
            common::output_with_stdin(&mut cmd, text)
        };
        let (a, b) = (check(&plain), check(completed.as_bytes()));
        assert_eq!(a.status.code(), b.status.code(), "{format}: {}", String::from_utf8_lossy(&b.stderr));
        assert!(matches!(a.status.code(), Some(0 | 1 | 3)), "{format}: {}", String::from_utf8_lossy(&a.stderr));
        assert!(!a.stdout.is_empty());
        assert!(a.stdout == b.stdout, "{format}: the completed document reads otherwise");
    }
}

#[test]
fn the_strict_schemas_keep_to_the_subset_and_the_loose_ones_do_not() {
    for format in ["json", "jsonl", "dstack", "dstack-e2e", "sglang-skill"] {
        let strict = schema(format, true);
        let v = strict_violations(&strict);
        assert!(v.is_empty(), "{format}: {v:?}");
        let text = strict.to_string();
        // (`format` is also a property's name: the walker above holds the keywords.)
        for word in ["\"oneOf\"", "\"pattern\"", "\"minimum\"", "\"propertyNames\"", "\"const\""] {
            assert!(!text.contains(word), "{format}: {word}");
        }
    }
    // The walker sees what the loose schemas hold that strict mode refuses.
    for format in ["json", "jsonl", "dstack"] {
        assert!(!strict_violations(&schema(format, false)).is_empty(), "{format}");
    }
    // A distribution's statistics are the keys the samples' reports hold.
    let strict = schema("jsonl", true);
    let ttft = &strict["properties"]["reported"]["properties"]["ttft_ms"];
    let keys: Vec<&str> = resolve(&strict, &ttft["anyOf"][0])
        .get("properties")
        .or(ttft.get("properties"))
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, STAT_KEYS);
    // Formats without a JSON shape say so: usage error.
    for format in ["csv", "table", "llmd-br"] {
        let o = run(&["schema", "--format", format]);
        assert_eq!(o.status.code(), Some(2), "{format}");
        assert!(o.stdout.is_empty());
    }
    // `schema` alone is the canonical report's, as before.
    assert_eq!(serde_json::from_slice::<Value>(&run(&["schema"]).stdout).unwrap(), schema("json", false));
}

const SUBCOMMANDS: &[&str] = &[
    "check",
    "run",
    "sweep",
    "plot",
    "compare",
    "store",
    "regress",
    "aggregate",
    "schema",
    "parsers",
    "mcp",
    "completions",
    "man",
    "skill",
];

/// A path into this repository, which an installed binary does not have: a word that starts
/// with one of its folders, or names one of its files.
fn repository_path(text: &str) -> Option<&str> {
    let folders =
        ["samples/", "tests/", "docs/", "src/", "crates/", "parsers/", "skills/", "bench/", "examples/", "fuzz/"];
    text.split(|c: char| c.is_whitespace() || "()`'\",;".contains(c))
        .find(|w| folders.iter().any(|f| w.starts_with(f)) || ["README.md", "Cargo.toml", "pyproject.toml"].contains(w))
}

#[test]
fn every_subcommands_help_has_examples_and_names_no_repository_file() {
    let top = String::from_utf8(run(&["--help"]).stdout).unwrap();
    for sub in SUBCOMMANDS {
        assert!(top.contains(&format!("  {sub} ")), "--help lists {sub}");
    }
    let mut pages = vec![(String::from("bench-normalize"), top)];
    for sub in SUBCOMMANDS {
        let o = run(&[sub, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{sub}");
        pages.push((sub.to_string(), String::from_utf8(o.stdout).unwrap()));
    }
    for (name, help) in &pages {
        let examples = help.split_once("EXAMPLES:").unwrap_or_else(|| panic!("{name}: no EXAMPLES\n{help}")).1;
        assert!(repository_path(help).is_none(), "{name}: {:?}\n{help}", repository_path(help));
        // Each example is a command of this binary: its subcommand exists.
        let commands: Vec<&str> = examples
            .lines()
            .flat_map(|l| l.split(['|', ';']))
            .filter_map(|part| part.trim().strip_prefix("bench-normalize "))
            .collect();
        assert!(!commands.is_empty(), "{name}: no bench-normalize command in EXAMPLES");
        for c in commands {
            assert_flags_exist(name, c, &pages);
        }
    }
}

/// An example command (after `bench-normalize `): its subcommand exists, and every flag it gives
/// bench-normalize (before a `--`) is one that subcommand's help lists.
fn assert_flags_exist(source: &str, command: &str, pages: &[(String, String)]) {
    let words: Vec<&str> = command.split_whitespace().take_while(|w| *w != "--").collect();
    let first = words.first().copied().unwrap_or("");
    let page = if SUBCOMMANDS.contains(&first) { first } else { "bench-normalize" };
    assert!(
        page != "bench-normalize"
            || first == "help"
            || first.starts_with('-')
            || first.contains('.')
            || first.contains('/')
            || first.chars().all(|c| c.is_ascii_uppercase() || c == '.'),
        "{source}: `{command}`: no subcommand {first}"
    );
    let help = &pages.iter().find(|(n, _)| n == page).unwrap().1;
    for w in words.iter().filter(|w| w.starts_with("--")) {
        let flag = w.split('=').next().unwrap();
        assert!(
            help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
            "{source}: `{command}`: {flag}"
        );
    }
}

/// Every help page: the command's and each subcommand's.
fn help_pages() -> Vec<(String, String)> {
    let mut pages = vec![(String::from("bench-normalize"), String::from_utf8(run(&["--help"]).stdout).unwrap())];
    for sub in SUBCOMMANDS {
        pages.push((sub.to_string(), String::from_utf8(run(&[sub, "--help"]).stdout).unwrap()));
    }
    pages
}

#[test]
fn the_skills_commands_are_the_binarys() {
    let text = std::fs::read_to_string(skill_file()).unwrap();
    let pages = help_pages();
    let mut n = 0;
    // Commands in code blocks (lines continued with `\` joined) and in inline code.
    let joined = text.replace("\\\n", " ");
    let mut code = Vec::new();
    let mut in_block = false;
    for line in joined.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
        } else if in_block {
            code.push(line.to_string());
        } else {
            code.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    for part in code.iter().flat_map(|c| c.split(['|', ';'])) {
        if let Some(c) = part.trim().strip_prefix("bench-normalize ") {
            assert_flags_exist("SKILL.md", c, &pages);
            n += 1;
        }
    }
    assert!(n > 10, "{n}");
}

#[test]
fn examples_that_need_no_input_run() {
    for args in [
        &["schema", "--format", "dstack", "--strict"][..],
        &["schema", "--format", "jsonl", "--strict"],
        &["parsers"],
        &["completions", "bash"],
        &["man", "run"],
        &["skill"],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(!o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn every_subcommand_has_a_manual_page() {
    for sub in SUBCOMMANDS {
        let o = run(&["man", sub]);
        assert_eq!(o.status.code(), Some(0), "{sub}");
        let page = String::from_utf8(o.stdout).unwrap();
        assert!(page.starts_with(".ie") || page.contains(".TH"), "{sub}: roff");
        assert!(
            page.contains(&format!("bench\\-normalize\\-{sub}")),
            "{sub}: its name\n{}",
            &page[..400.min(page.len())]
        );
        assert!(page.contains("EXAMPLES"), "{sub}: its examples");
    }
    let o = run(&["man", "no-such"]);
    assert_eq!(o.status.code(), Some(2));
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("bench-normalize.1").is_file());
    for sub in SUBCOMMANDS {
        assert!(dir.path().join(format!("bench-normalize-{sub}.1")).is_file(), "{sub}");
    }
}

fn skill_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/bench-normalize/SKILL.md")
}

/// The front matter's `key: value` lines and the body.
fn front_matter(text: &str) -> (Vec<(String, String)>, &str) {
    let rest = text.strip_prefix("---\n").expect("SKILL.md starts with YAML front matter");
    let (head, body) = rest.split_once("\n---\n").expect("the front matter is closed");
    let fields = head
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(": ").unwrap_or_else(|| panic!("a `key: value` line: {l}"));
            (k.to_string(), v.trim().to_string())
        })
        .collect();
    (fields, body)
}

#[test]
fn the_skill_keeps_to_the_agent_skills_specification() {
    let text = std::fs::read_to_string(skill_file()).unwrap();
    let (fields, body) = front_matter(&text);
    let get = |k: &str| fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.as_str());
    let allowed = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"];
    for (k, _) in &fields {
        assert!(allowed.contains(&k.as_str()), "field {k} is not in the specification");
    }
    let name = get("name").expect("name");
    assert!((1..=64).contains(&name.len()), "{name}");
    assert!(name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{name}");
    assert!(!name.starts_with('-') && !name.ends_with('-') && !name.contains("--"), "{name}");
    assert_eq!(Some(name), skill_file().parent().unwrap().file_name().and_then(|n| n.to_str()), "name is its folder's");
    let description = get("description").expect("description");
    assert!((1..=1024).contains(&description.chars().count()), "{}", description.len());
    assert!(!description.contains('<') && !description.contains('>'), "no XML tags");
    if let Some(c) = get("compatibility") {
        assert!((1..=500).contains(&c.chars().count()));
    }
    assert!(body.lines().count() < 500, "{} lines", body.lines().count());
    // What the body must say.
    for must in [
        "never copy ITL as TPOT; let bench-normalize derive it",
        "bench-normalize run",
        "bench-normalize check",
        "bench-normalize compare",
    ] {
        assert!(body.to_lowercase().contains(&must.to_lowercase()), "{must}");
    }
    for code in 0..=7 {
        assert!(body.contains(&format!("\n| {code} |")), "exit code {code}");
    }
    // The binary carries it.
    assert_eq!(run(&["skill"]).stdout, text.as_bytes());
}

#[test]
fn skill_install_writes_it_where_each_harness_reads_and_keeps_a_changed_file() {
    let text = std::fs::read(skill_file()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let install = |args: &[&str]| {
        bin()
            .arg("skill")
            .args(args)
            .env("HOME", home.path())
            .env_remove("CODEX_HOME")
            .current_dir(cwd.path())
            .output()
            .unwrap()
    };
    let claude = home.path().join(".claude/skills/bench-normalize/SKILL.md");
    let o = install(&["--install", "claude"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&claude).unwrap(), text);
    // Again: the same file, nothing to do.
    assert_eq!(install(&["--install", "claude"]).status.code(), Some(0));
    // A changed file is kept without --force, replaced with it.
    std::fs::write(&claude, "mine").unwrap();
    let o = install(&["--install", "claude"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), "mine");
    assert_eq!(install(&["--install", "claude", "--force"]).status.code(), Some(0));
    assert_eq!(std::fs::read(&claude).unwrap(), text);
    // Codex reads the shared agents folder; a project's folder.
    assert_eq!(install(&["--install", "codex"]).status.code(), Some(0));
    assert_eq!(std::fs::read(home.path().join(".agents/skills/bench-normalize/SKILL.md")).unwrap(), text);
    assert_eq!(install(&["--install", "agents"]).status.code(), Some(0), "the same file: nothing to do");
    assert_eq!(install(&["--install", "codex", "--project"]).status.code(), Some(0));
    assert_eq!(std::fs::read(cwd.path().join(".agents/skills/bench-normalize/SKILL.md")).unwrap(), text);
    assert_eq!(install(&["--install", "claude", "--project"]).status.code(), Some(0));
    assert_eq!(std::fs::read(cwd.path().join(".claude/skills/bench-normalize/SKILL.md")).unwrap(), text);
    // Nothing else was written.
    let names: Vec<String> = std::fs::read_dir(home.path().join(".claude/skills/bench-normalize"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["SKILL.md"]);
}

fn skill_rows(args: &[&str]) -> (Output, Vec<Value>) {
    let mut all = vec!["-f", "sglang-skill"];
    all.extend_from_slice(args);
    let o = run(&all);
    let docs = documents(&o.stdout);
    (o, docs)
}

#[test]
fn the_sglang_skill_row_carries_the_derived_figures_of_every_sample() {
    let samples = all_samples();
    let mut args = vec!["-f", "jsonl"];
    args.extend(samples.iter().map(String::as_str));
    let runs = documents(&run(&args).stdout);
    let (_, rows) = skill_rows(&samples.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(runs.len(), rows.len(), "one row per run");
    let (mut ok, mut failed) = (0, 0);
    for (r, row) in runs.iter().zip(&rows) {
        assert_eq!(row["bench_normalize"]["input"], r["source"]["input"]);
        assert_eq!(row["bench_normalize"]["block"], r["source"]["block"]);
        if r["verdict"] == "accepted" {
            ok += 1;
            assert_eq!(row["status"], "ok", "{row}");
            assert_eq!(row["failure_reason"], "");
            assert_eq!(row["metrics"]["mean_tpot_ms"], r["derived"]["tpot_ms"]["mean"], "{row}");
            assert_eq!(row["metrics"]["mean_ttft_ms"], r["reported"]["ttft_ms"]["mean"]);
            let throughput = &r["derived"]["output_tok_per_s"];
            if !throughput.is_null() {
                assert_eq!(&row["metrics"]["output_token_throughput"], throughput);
            }
            // Never the ITL: TPOT is the derived one or nothing.
            if let Some(itl) = r["reported"]["itl_ms"]["mean"].as_f64() {
                let tpot = row["metrics"]["mean_tpot_ms"].as_f64();
                assert!(tpot.is_none_or(|t| t == r["derived"]["tpot_ms"]["mean"].as_f64().unwrap() || t != itl));
            }
        } else {
            failed += 1;
            assert_eq!(row["status"], "failed", "{row}");
            assert!(row["failure_reason"].as_str().unwrap().contains("bench-normalize"), "{row}");
            assert!(
                row["metrics"].as_object().unwrap().values().all(Value::is_null),
                "no figure of a run not accepted"
            );
        }
        assert_eq!(row["sla"]["passed"], Value::Null, "no --slo: nothing to pass");
    }
    assert!(ok > 50 && failed > 0, "{ok} accepted, {failed} not");
}

#[test]
fn the_sglang_skill_row_takes_its_sla_from_the_objectives() {
    let sample = common::samples_dir().join("captured/sglang-s2.result.jsonl").display().to_string();
    // Met: passed, the limits written under the skill's keys.
    let (o, rows) = skill_rows(&["--slo", "ttft.p99<=2000,tpot.p99<=50", &sample]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let row = &rows[0];
    assert_eq!(
        row["sla"],
        json!({ "max_p99_ttft_ms": 2000.0, "max_p99_tpot_ms": 50.0, "min_success_rate": null, "passed": true })
    );
    let p99 = row["metrics"]["p99_tpot_ms"].as_f64().expect("per-request arrays give the p99");
    assert!(p99 < 50.0 && p99 >= row["metrics"]["mean_tpot_ms"].as_f64().unwrap() * 0.5, "{row}");
    assert_eq!(row["metrics"]["success_rate"], 1.0);
    // Missed, either way the limit is crossed: not passed, exit 7.
    for slo in [format!("tpot.p99<={}", p99 * 0.99), "ttft.p99<=1".to_string()] {
        let (o, rows) = skill_rows(&["--slo", &slo, &sample]);
        assert_eq!(o.status.code(), Some(7), "{slo}");
        assert_eq!(rows[0]["sla"]["passed"], false, "{slo}");
        assert_eq!(rows[0]["status"], "ok", "the run itself is sound");
    }
    let (o, rows) = skill_rows(&["--slo", &format!("tpot.p99<={}", p99 * 1.01), &sample]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(rows[0]["sla"]["passed"], true);
}

/// `bench-normalize run <opts> -- vllm bench serve ...` with the stand-in client
/// (tests/fake-client) playing a captured run, in an empty working directory.
fn run_fake(opts: &[&str], env: &[(&str, &str)]) -> Output {
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-client");
    let cwd = tempfile::tempdir().unwrap();
    let path = std::env::join_paths(
        std::iter::once(fake.join("bin")).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    bin()
        .arg("run")
        .args(opts)
        .args(["--", "vllm", "bench", "serve", "--backend", "openai", "--model", "/models/emu-llm-wordlevel"])
        .args(["--dataset-name", "random", "--random-input-len", "1024", "--random-output-len", "512"])
        .args(["--num-prompts", "16", "--max-concurrency", "4"])
        .current_dir(cwd.path())
        .env("PATH", path)
        .env("PYTHONPATH", &fake)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("TMPDIR", cwd.path())
        .env("FAKE_SAMPLE", common::samples_dir().join("captured/vllm-s2"))
        .env_remove("FAKE_EXIT")
        .env_remove("FAKE_WAIT")
        .env_remove("FAKE_TAMPER")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn what_run_writes_validates_against_the_schemas_too() {
    for format in ["json", "jsonl", "dstack", "dstack-e2e", "sglang-skill"] {
        let o = run_fake(&["-f", format], &[]);
        assert_eq!(o.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&o.stderr));
        let doc = documents(&o.stdout).remove(0);
        let loose = schema(format, false);
        let e = errors(&jsonschema::validator_for(&loose).unwrap(), &doc);
        assert!(e.is_empty(), "{format}: {e:?}\n{doc}");
        let strict = schema(format, true);
        let mut completed = doc.clone();
        complete(&strict, &strict, &mut completed);
        let e = errors(&jsonschema::validator_for(&strict).unwrap(), &completed);
        assert!(e.is_empty(), "{format} --strict: {e:?}\n{doc}");
        match format {
            // `run` states the client's version and command: dstack's whole `benchmark` object,
            // the strict schema's root.
            "dstack" => assert!(doc["metrics"]["tpot_ms"]["mean"].is_number() && doc["command"].is_string(), "{doc}"),
            "sglang-skill" => {
                assert!(doc["benchmark_command"].as_str().unwrap().starts_with("vllm bench serve"), "{doc}");
                assert_eq!(doc["framework"], Value::Null, "the openai backend names no framework");
                assert_eq!(doc["status"], "ok");
            }
            "jsonl" => assert!(doc["source"]["run"]["command"].is_array()),
            _ => {}
        }
    }
    // A client that failed: exit 6, and its row is a `failed` one that says why.
    let o = run_fake(&["-f", "sglang-skill"], &[("FAKE_EXIT", "3")]);
    assert_eq!(o.status.code(), Some(6), "{}", String::from_utf8_lossy(&o.stderr));
    let row = documents(&o.stdout).remove(0);
    assert_eq!(row["status"], "failed", "{row}");
    assert!(row["failure_reason"].as_str().unwrap().contains("exited with code 3"), "{row}");
}

#[test]
fn the_dstack_schema_refuses_what_dstacks_model_refuses_and_only_that() {
    let o = run_fake(&["-f", "dstack"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let benchmark = documents(&o.stdout).remove(0);
    let loose = jsonschema::validator_for(&schema("dstack", false)).unwrap();
    let strict_schema = schema("dstack", true);
    let strict = jsonschema::validator_for(&strict_schema).unwrap();
    // (a change to the `benchmark` object, whether dstack 0.22.5's model accepts it:
    // `PresetBenchmark` and its objects are `extra="forbid"`, crates/core/src/dstack/model.rs).
    type Change = fn(&mut Value);
    let cases: &[(&str, Change, bool)] = &[
        ("as written", |_| {}, true),
        ("a dataset named", |b| b["workload"]["dataset"] = json!("sharegpt"), true),
        ("a null dataset", |b| b["workload"]["dataset"] = Value::Null, true),
        ("shared prefix tokens", |b| b["workload"]["shared_prefix_tokens"] = json!(64), true),
        ("zero failed requests written 0", |b| b["metrics"]["failed_requests"] = json!(0), true),
        (
            "an extra metrics key (e2e_ms)",
            |b| b["metrics"]["e2e_ms"] = json!({ "mean": 1.0, "p50": 1.0, "p99": 1.0 }),
            false,
        ),
        ("an extra top-level key", |b| b["run"] = json!(1), false),
        ("an extra latency key", |b| b["metrics"]["ttft_ms"]["p90"] = json!(1.0), false),
        ("a null TPOT median", |b| b["metrics"]["tpot_ms"]["p50"] = Value::Null, false),
        ("no tool_version", |b| drop(b.as_object_mut().unwrap().remove("tool_version")), false),
        ("an empty command", |b| b["command"] = json!(""), false),
        ("an unknown api", |b| b["workload"]["api"] = json!("responses"), false),
        ("one output token", |b| b["workload"]["output_tokens"] = json!(1), false),
        ("zero concurrency", |b| b["workload"]["concurrency"] = json!(0), false),
        ("a zero duration", |b| b["metrics"]["duration_seconds"] = json!(0), false),
        ("a negative TTFT", |b| b["metrics"]["ttft_ms"]["mean"] = json!(-1.0), false),
        ("a fractional request count", |b| b["metrics"]["successful_requests"] = json!(15.5), false),
        ("a count as text", |b| b["metrics"]["total_output_tokens"] = json!("8192"), false),
    ];
    for (what, change, accepted) in cases {
        let mut b = benchmark.clone();
        change(&mut b);
        assert_eq!(loose.is_valid(&b), *accepted, "{what}: {}", errors(&loose, &b).join("; "));
        // The strict schema cannot hold bounds (they are in its descriptions): it agrees on
        // every shape, and accepts whatever dstack accepts.
        let mut completed = b.clone();
        complete(&strict_schema, &strict_schema, &mut completed);
        let bounds =
            ["empty", "one output", "zero", "negative"].iter().any(|w| what.starts_with(w) || what.contains(w));
        if *accepted || !bounds {
            assert_eq!(
                strict.is_valid(&completed),
                *accepted,
                "{what} --strict: {}",
                errors(&strict, &completed).join("; ")
            );
        }
    }
}
