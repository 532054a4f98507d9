//! `bench-normalize mcp` end to end: the binary spawned, JSON-RPC spoken over its stdin and stdout
//! (initialize, tools/list, tools/call of every tool on the samples, bad input, paths outside its
//! root), every answer held to the CLI's output for the same input and to the tool's own declared
//! output schema. The tool list (names, descriptions, schemas) is a snapshot: a change is reviewed.
#![cfg(feature = "mcp")]

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_bench-normalize");

/// A server and the JSON-RPC conversation with it.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
    /// The declared output schema of each tool, once listed.
    schemas: Vec<(String, Value)>,
}

impl Server {
    /// `bench-normalize mcp ARGS` in `cwd`, initialized.
    fn start(cwd: &Path, args: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .arg("mcp")
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = Server { child, stdin, lines, next_id: 1, schemas: Vec::new() };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tests/it/mcp.rs", "version": "0"}}),
        );
        let result = &init["result"];
        assert_eq!(result["serverInfo"]["name"], "bench-normalize", "{init}");
        assert!(result["capabilities"]["tools"].is_object(), "{init}");
        s.notify("notifications/initialized");
        s
    }

    fn notify(&mut self, method: &str) {
        let msg = json!({"jsonrpc": "2.0", "method": method});
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request; its response (every line of stdout before it must be a JSON-RPC message).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| {
                panic!("no answer to {method} within 60 s (or the server ended)");
            });
            let v: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout held a non-JSON line ({e}): {line}"));
            assert_eq!(v["jsonrpc"], "2.0", "stdout held a non-JSON-RPC message: {line}");
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn list(&mut self) -> Vec<Value> {
        let r = self.request("tools/list", json!({}));
        let tools = r["result"]["tools"].as_array().unwrap_or_else(|| panic!("{r}")).clone();
        self.schemas =
            tools.iter().map(|t| (t["name"].as_str().unwrap().to_string(), t["outputSchema"].clone())).collect();
        tools
    }

    /// A tool call's result (a protocol error fails the test: bad input must be a tool error).
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        assert!(r.get("error").is_none(), "{name}: a protocol error, not a tool error: {r}");
        let result = r["result"].clone();
        let content = result["content"].as_array().unwrap_or_else(|| panic!("{name}: no content: {r}"));
        assert!(!content.is_empty() && content[0]["type"] == "text", "{name}: {r}");
        result
    }

    /// A successful call's structured content: the text copy is the same JSON, and it holds to
    /// the tool's declared output schema.
    fn ok(&mut self, name: &str, arguments: Value) -> Value {
        if self.schemas.is_empty() {
            self.list();
        }
        let result = self.call(name, arguments.clone());
        assert_eq!(result["isError"], false, "{name} {arguments}: {result}");
        let structured = result["structuredContent"].clone();
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, structured, "{name}: the text copy differs from structuredContent");
        let schema = &self.schemas.iter().find(|(n, _)| n == name).unwrap().1;
        let validator = jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{name}: outputSchema: {e}"));
        let errors: Vec<String> =
            validator.iter_errors(&structured).map(|e| format!("{}: {e}", e.instance_path())).take(5).collect();
        assert!(errors.is_empty(), "{name}: structuredContent does not hold to its outputSchema: {errors:?}");
        structured
    }

    /// A failed call's diagnostic (isError, the diagnostic as JSON text).
    fn err(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.call(name, arguments.clone());
        assert_eq!(result["isError"], true, "{name} {arguments}: expected a tool error: {result}");
        let d: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        for k in ["code", "message", "exit_code"] {
            assert!(d.get(k).is_some(), "{name}: the diagnostic lacks {k}: {d}");
        }
        d
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn samples_dir() -> PathBuf {
    common::samples_dir()
}

/// The CLI in `cwd`: stdout parsed (null when empty), the exit code, and the first JSON
/// diagnostic on stderr.
fn cli(cwd: &Path, args: &[&str]) -> (Value, i32, Value) {
    let out = Command::new(BIN).args(args).arg("--error-format").arg("json").current_dir(cwd).output().unwrap();
    let stdout = if out.stdout.is_empty() { Value::Null } else { serde_json::from_slice(&out.stdout).unwrap() };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let diag = stderr.lines().next().and_then(|l| serde_json::from_str(l).ok()).unwrap_or(Value::Null);
    (stdout, out.status.code().unwrap(), diag)
}

#[test]
fn tool_list_declares_every_schema() {
    let mut s = Server::start(&samples_dir(), &[]);
    let tools = s.list();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["normalize", "check", "compare", "explain", "schema"]);
    for t in &tools {
        for k in ["inputSchema", "outputSchema"] {
            assert_eq!(t[k]["type"], "object", "{}: {k}", t["name"]);
            jsonschema::validator_for(&t[k]).unwrap_or_else(|e| panic!("{}: {k} is no valid schema: {e}", t["name"]));
        }
        assert_eq!(t["annotations"]["readOnlyHint"], true);
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_json_snapshot!("mcp__mcp-tools", tools));
}

/// `normalize` on every sample, by path, is the CLI's report (or its diagnostic's code and exit
/// code) for the same file.
#[test]
fn normalize_every_sample_as_the_cli() {
    let dir = samples_dir();
    let mut s = Server::start(&dir, &[]);
    let mut compared = 0;
    for path in common::samples() {
        let name = common::sample_name(&path);
        let (report, code, diag) = cli(&dir, &[&name]);
        if report.is_null() {
            let d = s.err("normalize", json!({ "path": name }));
            assert_eq!(d["code"], diag["code"], "{name}: {d} vs the CLI's {diag}");
            assert_eq!(d["exit_code"], code, "{name}");
        } else {
            let got = s.ok("normalize", json!({ "path": name }));
            assert_eq!(got, report, "{name}: the tool's report differs from the CLI's");
            compared += 1;
        }
    }
    assert!(compared > 150, "only {compared} samples gave a report");
}

/// The same log given as text reads to the same figures as by path, and `name` names it.
#[test]
fn normalize_text_agrees_with_path() {
    let dir = samples_dir();
    let mut s = Server::start(&dir, &[]);
    for name in ["versions/sglang0.5.5.post1-oai-s2.stdout.txt", "captured/vllm-s2.result.json"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let by_path = s.ok("normalize", json!({ "path": name }));
        let by_text = s.ok("normalize", json!({ "text": text, "name": name }));
        assert_eq!(by_text, by_path, "{name}");
        let unnamed = s.ok("normalize", json!({ "text": text }));
        assert_eq!(unnamed["runs"][0]["source"]["input"], "text");
    }
    // Strict: the CLI's --strict.
    let name = "noisy/duration-mistyped.txt";
    let (want, _, _) = cli(&dir, &[name, "--strict"]);
    if !want.is_null() {
        assert_eq!(s.ok("normalize", json!({ "path": name, "strict": true })), want);
    }
}

/// `check` of a canonical report (as an object, as text, and by path) is the CLI's `check`, and a
/// report whose figures were made to contradict each other is rejected.
#[test]
fn check_documents_as_the_cli() {
    let dir = samples_dir();
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start(&dir, &["--root", tmp.path().to_str().unwrap()]);
    for name in ["versions/sglang0.5.5.post1-oai-s2.stdout.txt", "captured/vllm-s2.stdout.txt"] {
        let (report, _, _) = cli(&dir, &[name]);
        let file = tmp.path().join("report.json");
        std::fs::write(&file, serde_json::to_string(&report).unwrap()).unwrap();
        let (want, code, _) = cli(&dir, &["check", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}");
        let by_path = s.ok("check", json!({ "path": file.to_str().unwrap() }));
        assert_eq!(by_path, want, "{name}");
        let by_obj = s.ok("check", json!({ "document": report, "name": file.to_str().unwrap() }));
        assert_eq!(by_obj, want, "{name}");
        let by_text = s.ok("check", json!({ "document": report.to_string(), "name": file.to_str().unwrap() }));
        assert_eq!(by_text, want, "{name}");
        assert_eq!(by_obj["runs"][0]["verdict"], "accepted");

        // Output throughput ten times what its totals give: rejected, as by the CLI.
        let mut bad = report.clone();
        let thr = &mut bad["runs"][0]["reported"]["output_throughput"];
        let scaled = thr.as_f64().map(|v| v * 10.0);
        if let Some(v) = scaled {
            *thr = json!(v);
            std::fs::write(&file, bad.to_string()).unwrap();
            let (want, code, _) = cli(&dir, &["check", file.to_str().unwrap()]);
            let got = s.ok("check", json!({ "document": bad, "name": file.to_str().unwrap() }));
            assert_eq!(got, want, "{name}");
            assert_eq!(code, 1, "{name}: the CLI rejects the contradicted report");
            assert_eq!(got["runs"][0]["verdict"], "rejected", "{name}");
        }
    }
}

/// `compare` of two files is the CLI's `compare --format json`; a directory side reads its files.
#[test]
fn compare_as_the_cli() {
    let dir = samples_dir();
    let mut s = Server::start(&dir, &[]);
    let (a, b) = ("captured/sglang-oai-s2.stdout.txt", "captured/vllm-s2.stdout.txt");
    let (want, _, _) = cli(&dir, &["compare", a, b, "--format", "json", "--key", "concurrency,input,output"]);
    let got = s.ok("compare", json!({ "baseline": a, "others": [b], "key": "concurrency,input,output" }));
    assert_eq!(got, want);
    let (want, _, _) = cli(&dir, &["compare", a, "versions", "--format", "json"]);
    let got = s.ok("compare", json!({ "baseline": a, "others": ["versions"] }));
    assert_eq!(got["others"][0]["runs"], want["others"][0]["runs"]);
    assert_eq!(got["pairs"], want["pairs"]);
    let d = s.err("compare", json!({ "baseline": a, "others": [b], "key": "colour" }));
    assert_eq!(d["exit_code"], 2, "{d}");
}

/// `explain`: each run's explanation is the CLI's `--explain` text.
#[test]
fn explain_as_the_cli() {
    let dir = samples_dir();
    let mut s = Server::start(&dir, &[]);
    for name in ["captured/vllm-s2.stdout.txt", "versions/sglang0.4.1-s1.result.jsonl"] {
        let out = Command::new(BIN).args([name, "--explain"]).current_dir(&dir).output().unwrap();
        let want = String::from_utf8(out.stdout).unwrap();
        let got = s.ok("explain", json!({ "path": name }));
        let runs = got["runs"].as_array().unwrap();
        assert!(!runs.is_empty());
        let joined: String = runs.iter().map(|r| r["explanation"].as_str().unwrap()).collect();
        assert_eq!(joined, want, "{name}");
        assert_eq!(runs[0]["input"], name);
    }
}

/// `schema` is the CLI's `schema` (without its `$schema` line).
#[test]
fn schema_as_the_cli() {
    let dir = samples_dir();
    let mut s = Server::start(&dir, &[]);
    let out = Command::new(BIN).arg("schema").output().unwrap();
    let mut want: Value = serde_json::from_slice(&out.stdout).unwrap();
    want.as_object_mut().unwrap().remove("$schema");
    assert_eq!(s.ok("schema", json!({}))["schema"], want);
}

/// Bad arguments and bad input are tool errors with the diagnostic, never protocol errors; the
/// server goes on answering after each.
#[test]
fn bad_input_is_a_tool_error() {
    let dir = samples_dir();
    let mut s = Server::start(&dir, &[]);
    let d = s.err("normalize", json!({ "text": "hello, no benchmark here\n" }));
    assert_eq!((d["code"].as_str(), d["exit_code"].as_i64()), (Some("no-result"), Some(3)), "{d}");
    let d = s.err("normalize", json!({ "text": "x", "path": "captured/vllm-s2.stdout.txt" }));
    assert_eq!(d["exit_code"], 2, "{d}");
    let d = s.err("normalize", json!({}));
    assert_eq!(d["exit_code"], 2, "{d}");
    let d = s.err("normalize", json!({ "text": "x", "colour": "red" }));
    assert!(d["message"].as_str().unwrap().contains("colour"), "{d}");
    let d = s.err("normalize", json!({ "text": 12 }));
    assert_eq!(d["exit_code"], 2, "{d}");
    let d = s.err("check", json!({ "document": 12 }));
    assert_eq!(d["exit_code"], 2, "{d}");
    // A JSON document of no known shape, given as text: the parser's message is the agent's own
    // text, so it is said in full.
    let d = s.err("check", json!({ "document": { "colour": 1 } }));
    assert_eq!(d["exit_code"], 3, "{d}");
    assert!(d["message"].as_str().unwrap().contains("colour"), "{d}");
    let d = s.err("normalize", json!({ "path": "captured/no-such-file.txt" }));
    assert_eq!((d["code"].as_str(), d["exit_code"].as_i64()), (Some("io"), Some(4)), "{d}");
    let d = s.err("compare", json!({ "baseline": "captured", "others": [] }));
    assert_eq!(d["exit_code"], 2, "{d}");
    // An unknown tool is a protocol error (the spec's), and the server still answers.
    let r = s.request("tools/call", json!({ "name": "nope", "arguments": {} }));
    assert!(r["error"].is_object(), "{r}");
    s.ok("schema", json!({}));
}

/// The server reads only inside its roots, at most --max-bytes, and never quotes a file read from
/// a path that gave no run.
#[test]
fn paths_are_confined() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(tmp.path().join("outside.txt"), "SECRET-OUTSIDE").unwrap();
    std::fs::write(root.join("creds.json"), r#"{"api_key": "sk-SECRET-1", "token_name": "SECRET-KEY-NAME"}"#).unwrap();
    std::fs::write(root.join(".env"), "OPENAI_API_KEY=sk-SECRET-2\n").unwrap();
    std::fs::write(root.join("big.txt"), "x".repeat(9000)).unwrap();
    let sample = samples_dir().join("captured/vllm-s2.stdout.txt");
    std::fs::copy(&sample, root.join("run.log")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(tmp.path().join("outside.txt"), root.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("up")).unwrap();
    }
    let mut s = Server::start(&root, &["--max-bytes", "8000"]);
    let outside = tmp.path().join("outside.txt");
    for path in [
        outside.to_str().unwrap(),
        "../outside.txt",
        "/etc/passwd",
        "/nonexistent/dir/file",
        "link.txt",
        "up/outside.txt",
        "up/../../../etc/hostname",
    ] {
        let d = s.err("normalize", json!({ "path": path }));
        assert!(d["message"].as_str().unwrap().contains("outside the directories"), "{path}: {d}");
        assert!(!d.to_string().contains("SECRET"), "{path}: {d}");
        let d = s.err("check", json!({ "path": path }));
        assert!(d["message"].as_str().unwrap().contains("outside the directories"), "{path}: {d}");
        let d = s.err("compare", json!({ "baseline": "run.log", "others": [path] }));
        assert!(d["message"].as_str().unwrap().contains("outside the directories"), "{path}: {d}");
    }
    // Inside the root but not benchmark output: said so, not quoted.
    for (tool, path) in [("normalize", "creds.json"), ("check", "creds.json"), ("normalize", ".env"), ("check", ".env")]
    {
        let result = s.call(tool, json!({ "path": path }));
        assert_eq!(result["isError"], true, "{tool} {path}: {result}");
        let text = result.to_string();
        assert!(
            !text.contains("SECRET") && !text.contains("api_key") && !text.contains("OPENAI"),
            "{tool} {path}: {text}"
        );
    }
    // Too large: refused before it is read; text too.
    let d = s.err("normalize", json!({ "path": "big.txt" }));
    assert!(d["message"].as_str().unwrap().contains("--max-bytes"), "{d}");
    let d = s.err("normalize", json!({ "text": "y".repeat(9000) }));
    assert!(d["message"].as_str().unwrap().contains("--max-bytes"), "{d}");
    // A directory side never follows a symlink out of the root: `up` is listed, not read.
    let got = s.ok("compare", json!({ "baseline": "run.log", "others": ["."] }));
    let skipped = got["others"][0]["skipped"].to_string();
    assert!(!skipped.contains("SECRET"), "{skipped}");
    // The sample inside the root reads as usual.
    let got = s.ok("normalize", json!({ "path": "run.log" }));
    assert_eq!(got["runs"][0]["verdict"], "accepted");
}

#[test]
fn a_root_that_is_no_directory_is_a_usage_error() {
    let out = Command::new(BIN).args(["mcp", "--root", "/nonexistent-root"]).stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}
