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

fn summary() -> String {
    plugins("llmperf").join("rendered_summary.json").display().to_string()
}

#[test]
fn an_unknown_format_is_not_read_without_its_definition() {
    let o = bin().arg(summary()).output().unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no known result file or report"));
}

#[test]
fn a_definition_file_alone_adds_a_format() {
    for via_env in [false, true] {
        let mut cmd = bin();
        if via_env {
            cmd.env("BENCH_NORMALIZE_PARSERS", plugins("llmperf"));
        } else {
            cmd.args(["--parsers", plugins("llmperf").to_str().unwrap()]);
        }
        let o = cmd.arg(summary()).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let run = serde_json::from_slice::<Value>(&o.stdout).unwrap()["runs"][0].clone();
        assert_eq!(run["source"]["parser"], "llmperf-summary");
        assert_eq!(run["source"]["variant"], "2024");
        // llmperf's "inter-token latency" is E2E / N: kept, but never as TPOT.
        assert!(run["reported"]["tpot_ms"].is_null());
        assert_eq!(run["reported"]["latency_per_output_token_ms"]["mean"], 20.7031);
        // TPOT derived from E2E, TTFT and the mean output length: (5300 - 200) / 255 = 20.
        assert_eq!(run["derived"]["tpot_ms"]["method"], "e2e-ttft-tokens");
        assert_eq!(run["derived"]["tpot_ms"]["mean"], 20.0);
        assert_eq!(run["derived"]["per_user_decode_tok_per_s"], 50.0);
        // And the report says which key each figure came from.
        let rows = run["rows"].as_array().unwrap();
        let itl = rows.iter().find(|r| r["label"] == "results_inter_token_latency_s_mean").unwrap();
        assert_eq!(itl["field"], "reported.latency_per_output_token_ms.mean");
    }
}

#[test]
fn a_definition_with_the_id_of_a_built_in_replaces_it() {
    let dir = std::env::temp_dir().join(format!("bn-override-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let builtin = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("parsers/sglang-multimodal-gen.toml")).unwrap();
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
    let o = bin().args(["--parsers", plugins("broken").to_str().unwrap(), &summary()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("bad.toml:12:9: row.field: 'totals.output_tokenz' is not a canonical figure"), "{err}");
}
