//! Run-time parser definitions (`--parsers DIR`, $BENCH_NORMALIZE_PARSERS): a new format from a
//! definition file alone, no Rust code.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

fn plugins(dir: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/plugins").join(dir)
}

fn toy_log() -> String {
    plugins("toybench").join("toybench.txt").display().to_string()
}

#[test]
fn an_unknown_format_is_not_read_without_its_definition() {
    let o = bin().arg(toy_log()).output().unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no benchmark result found"));
}

#[test]
fn a_definition_file_alone_adds_a_format() {
    for via_env in [false, true] {
        let mut cmd = bin();
        if via_env {
            cmd.env("BENCH_NORMALIZE_PARSERS", plugins("toybench"));
        } else {
            cmd.args(["--parsers", plugins("toybench").to_str().unwrap()]);
        }
        let o = cmd.arg(toy_log()).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let run = serde_json::from_slice::<Value>(&o.stdout).unwrap()["runs"][0].clone();
        assert_eq!(run["source"]["parser"], "toybench");
        assert_eq!(run["source"]["variant"], "1");
        // Its per-chunk ITL is kept as reported, never as TPOT.
        assert!(run["reported"]["tpot_ms"].is_null());
        assert_eq!(run["reported"]["itl_ms"]["mean"], 125.09);
        // TPOT derived from E2E, TTFT and the token count: (1686.26 - 60.13) / (2048 / 16 - 1).
        assert_eq!(run["derived"]["tpot_ms"]["method"], "e2e-ttft-tokens");
        assert_eq!(run["derived"]["tpot_ms"]["mean"], 12.8042);
        // ... and the chunk size follows: 125.09 / 12.8042 tokens per chunk.
        assert_eq!(run["derived"]["tokens_per_chunk"], 9.76945);
        // And the report says which row each figure came from.
        let rows = run["rows"].as_array().unwrap();
        let itl = rows.iter().find(|r| r["label"] == "itl mean (ms)").unwrap();
        assert_eq!(itl["field"], "reported.itl_ms.mean");
        assert_eq!(itl["line"], 9);
    }
}

#[test]
fn a_definition_with_the_id_of_a_built_in_replaces_it() {
    let dir = std::env::temp_dir().join(format!("bn-override-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let builtin =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("parsers/sglang-multimodal-gen.toml"))
            .unwrap();
    std::fs::write(dir.join("mine.toml"), builtin.replace("Latency {stat} (s):", "Latency {stat} (sec):")).unwrap();
    let o = bin().args(["parsers", "--format", "json", "--parsers", dir.to_str().unwrap()]).output().unwrap();
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let def = list.as_array().unwrap().iter().find(|d| d["id"] == "sglang-multimodal-gen").unwrap();
    assert!(def["origin"].as_str().unwrap().ends_with("mine.toml"));
    assert_eq!(list.as_array().unwrap().iter().filter(|d| d["id"] == "sglang-multimodal-gen").count(), 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_definition_error_names_the_file_line_and_field() {
    let o = bin().args(["--parsers", plugins("broken").to_str().unwrap(), &toy_log()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("bad.toml:12:9: row.field: 'totals.output_tokenz' is not a canonical figure"), "{err}");
}

/// A copy of the toybench definition with another banner, in a directory of its own.
fn toybench_with_banner(banner: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bn-banner-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let def = std::fs::read_to_string(plugins("toybench").join("toybench.toml")).unwrap();
    let def = def.replace("banner = '^-+ toybench results -+$'", &format!("banner = '{banner}'"));
    assert!(def.contains(banner));
    std::fs::write(dir.join("toybench.toml"), def).unwrap();
    dir
}

/// The toybench log with its banner line replaced, after a few lines of noise.
fn toy_log_with_banner(banner_line: &str) -> String {
    let log = std::fs::read_to_string(toy_log()).unwrap();
    let log = log.replace("---------- toybench results ----------", banner_line);
    format!("INFO starting\nWARNING nothing to see\n{log}")
}

fn run_toy(dir: &Path, log: &str) -> (Option<i32>, Value, String) {
    use std::io::Write;
    let mut child = bin()
        .args(["--parsers", dir.to_str().unwrap(), "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A definition refused at load ends the command (exit 2) before it reads its input: the
    // pipe may then be closed under the write, which is not what the tests look at.
    match child.stdin.take().unwrap().write_all(log.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.unwrap(),
    }
    let o = child.wait_with_output().unwrap();
    let report = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), report, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_case_insensitive_banner_matches_in_any_case() {
    // issue 16: `(?i)` loaded but never matched (the prefilter looked for the literal as written).
    let dir = toybench_with_banner("(?i)^-+ toybench results -+$", "ci");
    for banner_line in
        ["---------- toybench results ----------", "---------- TOYBENCH RESULTS ----------", "--- ToyBench Results ---"]
    {
        let (code, report, err) = run_toy(&dir, &toy_log_with_banner(banner_line));
        assert_eq!(code, Some(0), "{banner_line}: {err}");
        let run = &report["runs"][0];
        assert_eq!(run["source"]["parser"], "toybench", "{banner_line}");
        assert_eq!(run["derived"]["tpot_ms"]["mean"], 12.8042, "{banner_line}");
        assert_eq!(run["source"]["first_line"], 4, "{banner_line}");
    }
    // A line that only the case-folded text does not match is no banner.
    let (code, _, _) = run_toy(&dir, &toy_log_with_banner("---------- toybench result ----------"));
    assert_eq!(code, Some(3));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_banner_without_literal_text_is_tried_on_every_line() {
    // No run of literal text to look for first: every line is tried against the pattern.
    let dir = toybench_with_banner(r"^\W+ \w+ \w+ \W+$", "noliteral");
    let (code, report, err) = run_toy(&dir, &toy_log_with_banner("~~~ toybench results ~~~"));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(report["runs"][0]["derived"]["tpot_ms"]["mean"], 12.8042);
    assert_eq!(report["runs"][0]["source"]["first_line"], 4);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_banner_that_matches_every_line_is_refused_naming_file_line_and_field() {
    // issue 16: a banner matching empty text never matched; it is refused at load (exit 2).
    for (name, banner) in [("caret", "^"), ("dotstar", ".*")] {
        let dir = toybench_with_banner(banner, name);
        let (code, _, err) = run_toy(&dir, &toy_log_with_banner("---------- toybench results ----------"));
        assert_eq!(code, Some(2), "{banner}: {err}");
        let file = dir.join("toybench.toml");
        let want = format!("{}:22:10: block.banner: '{banner}' matches an empty text", file.display());
        assert!(err.contains(&want), "{banner}: {err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
