//! Run-time parser definitions (`--parsers DIR`, $BENCH_NORMALIZE_PARSERS): a new format from a
//! definition file alone, no Rust code.

mod common;

use std::path::PathBuf;
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
