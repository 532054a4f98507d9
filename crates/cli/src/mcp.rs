//! `bench-normalize mcp`: the library served to an agent as Model Context Protocol tools over
//! stdio (docs/mcp.md), with the official Rust SDK (`rmcp`).
//!
//! Five tools: `normalize` (a log, result file or report, as text or a path), `check` (a report
//! document), `compare` (configurations given as paths), `explain` (each run's derivation) and
//! `schema` (the canonical report's JSON Schema). Each declares its input schema and an output
//! schema, answers with `structuredContent` and the same JSON as text, and says bad input as a tool
//! error (`isError`, the diagnostic as JSON text): never as a protocol error, which an agent does
//! not see.
//!
//! The server is a door into the machine the agent runs on, so it reads only what it is meant to:
//! - a path must resolve (symlinks followed, `..` resolved) inside one of the roots it was started
//!   for (`--root DIR`, repeatable; the working directory by default), and name a regular file (or,
//!   for `compare`, a directory whose files are held to the same rule one by one);
//! - a file or text larger than `--max-bytes` is refused before it is read;
//! - a diagnostic about a file read from a path never quotes the file: no input line, and any
//!   quoted value in the message redacted (a file that is not benchmark output says only that);
//! - nothing is written: no file, no log; stdout carries MCP messages only, stderr nothing unless
//!   the transport fails.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use bench_normalize_analysis::compare::{self, KeyField, Side, Skipped};
use bench_normalize_core::report::{Report, Run};
use bench_normalize_core::{Collect, Error, ExitCode, Options};

/// What `bench-normalize mcp` was started with.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The directories paths must resolve inside, canonical.
    pub(crate) roots: Vec<PathBuf>,
    /// The largest file or text read, in bytes.
    pub(crate) max_bytes: u64,
}

/// The default `--max-bytes`: a vLLM result file with `--save-detailed` is hundreds of MB.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 512 << 20;

/// Serve until the client closes stdin: exit 0, or 4 when the transport fails.
pub(crate) fn serve(roots: Vec<PathBuf>, max_bytes: u64) -> ExitCode {
    let roots = if roots.is_empty() { vec![PathBuf::from(".")] } else { roots };
    let mut canonical = Vec::new();
    for r in &roots {
        match std::fs::canonicalize(r) {
            Ok(c) if c.is_dir() => canonical.push(c),
            Ok(_) => return usage(&format!("--root {}: not a directory", r.display())),
            Err(e) => return usage(&format!("--root {}: {e}", r.display())),
        }
    }
    let server = Server { settings: Arc::new(Settings { roots: canonical, max_bytes }) };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return io_error(&format!("mcp: cannot start: {e}")),
    };
    let served = runtime.block_on(async move {
        let service = server.serve(rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())
    });
    match served {
        Ok(_) => ExitCode::Ok,
        Err(e) => io_error(&format!("mcp: {e}")),
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("bench-normalize: {}", bench_normalize_core::error::printable(message));
    ExitCode::Usage
}

fn io_error(message: &str) -> ExitCode {
    eprintln!("bench-normalize: {}", bench_normalize_core::error::printable(message));
    ExitCode::Io
}

#[derive(Clone)]
struct Server {
    settings: Arc<Settings>,
}

impl rmcp::ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let roots: Vec<String> = self.settings.roots.iter().map(|r| r.display().to_string()).collect();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bench-normalize", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Normalize LLM serving-benchmark output (vllm bench serve, sglang.bench_serving, AIPerf, \
                 genai-perf, guidellm, llmperf, inference-perf) into canonical runs with TPOT derived from \
                 E2E latency, TTFT and token counts, each run validated against its own totals (verdict \
                 accepted / rejected / unusable, with the checks that decided it). Paths are read only \
                 inside: {}; at most {} bytes per file or text.",
                roots.join(", "),
                self.settings.max_bytes
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !TOOLS.contains(&request.name.as_ref()) {
            return Err(ErrorData::invalid_params(format!("no tool named {:?}", request.name), None));
        }
        let settings = self.settings.clone();
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        // Reading and deriving is blocking work: off the thread that speaks the protocol.
        let result = tokio::task::spawn_blocking(move || call(&settings, &name, args))
            .await
            .unwrap_or_else(|e| failure(&Diagnostic::internal(&format!("the tool failed: {e}"))));
        Ok(result.into())
    }
}

/// The tools' names, in the order `tools/list` gives them.
pub(crate) const TOOLS: [&str; 5] = ["normalize", "check", "compare", "explain", "schema"];

// ------------------------------------------------------------------------------------------------
// Inputs

/// `normalize`'s and `explain`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NormalizeArgs {
    /// The benchmark output itself: a log (the client's stdout), a result file's JSON or JSON
    /// Lines, or a report. Give `text` or `path`, not both.
    #[serde(default)]
    text: Option<String>,
    /// A file to read instead: a log, a result file (.json/.jsonl, gzip/xz/zstd too) or a report,
    /// inside the server's roots (relative paths are taken from the first root).
    #[serde(default)]
    path: Option<String>,
    /// The input's name in the runs' `source.input` (default: the path, or `text`).
    #[serde(default)]
    name: Option<String>,
    /// Failed warnings reject a run too.
    #[serde(default)]
    strict: bool,
}

/// `check`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    /// The report to validate: a canonical report or run, a dstack preset `benchmark` / `metrics`
    /// object or `trial.json`, or an llm-d Benchmark Report; as a JSON object or as JSON text.
    #[serde(default)]
    document: Option<Value>,
    /// A report file to read instead, inside the server's roots.
    #[serde(default)]
    path: Option<String>,
    /// The input's name in the runs' `source.input` (default: the path, or `document`).
    #[serde(default)]
    name: Option<String>,
    /// Failed warnings reject a run too.
    #[serde(default)]
    strict: bool,
}

/// `compare`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CompareArgs {
    /// The baseline configuration: a file or a directory of results, inside the server's roots.
    baseline: String,
    /// The configurations compared with the baseline, each a file or a directory.
    others: Vec<String>,
    /// The workload fields runs are lined up by, comma-separated: concurrency, rate, input,
    /// output, model (default: all five).
    #[serde(default)]
    key: Option<String>,
    /// Failed warnings reject a run too (it is then left out, with the reason).
    #[serde(default)]
    strict: bool,
}

/// `schema`'s arguments: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SchemaArgs {}

// ------------------------------------------------------------------------------------------------
// Outputs (the ones not already the report's)

/// `explain`'s answer.
#[derive(Debug, serde::Serialize, JsonSchema)]
struct ExplainOutput {
    /// One entry per run, in input order.
    runs: Vec<Explained>,
}

#[derive(Debug, serde::Serialize, JsonSchema)]
struct Explained {
    /// The input the run came from.
    input: String,
    /// 1-based index of the run in its input.
    block: usize,
    /// `accepted`, `rejected` or `unusable`.
    verdict: String,
    /// The derivation written out: which rows, which formula and method, which checks and why.
    explanation: String,
}

/// `schema`'s answer.
#[derive(Debug, serde::Serialize, JsonSchema)]
struct SchemaOutput {
    /// The JSON Schema (draft 2020-12) of the canonical report `normalize` and `check` return.
    schema: JsonObject,
}

fn object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(o) => Arc::new(o),
        _ => unreachable!("a schema is an object"),
    }
}

/// The report's schema, as `normalize` and `check` declare it.
fn report_schema() -> Arc<JsonObject> {
    let mut schema = bench_normalize_core::report::schema();
    if let Some(o) = schema.as_object_mut() {
        o.remove("$schema");
    }
    object(schema)
}

/// The comparison's outer shape (docs/compare.md is the reference for what is inside).
fn compare_schema() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "description": "The comparison, as `bench-normalize compare --format json` writes it (docs/compare.md).",
        "properties": {
            "compare_version": { "type": "integer" },
            "key": { "type": "array", "items": { "type": "string" } },
            "baseline": { "type": "object" },
            "others": { "type": "array", "items": { "type": "object" } },
            "pairs": { "type": "array", "items": { "type": "object" } },
            "unpaired": { "type": "array", "items": { "type": "object" } }
        },
        "required": ["compare_version", "key", "baseline", "others", "pairs", "unpaired"],
        "additionalProperties": false
    }))
}

/// Every tool, with its input and output schemas.
pub(crate) fn tools() -> Vec<Tool> {
    let read_only = ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false);
    let tool = |name: &'static str, description: &'static str| {
        Tool::new(name, description, Arc::new(JsonObject::new())).annotate(read_only.clone())
    };
    vec![
        tool(
            "normalize",
            "Read serving-benchmark output (a log, a result file or a report; as `text` or a `path`) into \
             canonical runs: TPOT derived from E2E latency, TTFT and token counts (never from ITL), each \
             run validated against its own totals. A run's `verdict` says whether its figures can be \
             trusted; its `checks` say why. Bad input is a tool error with the diagnostic.",
        )
        .with_input_schema::<NormalizeArgs>()
        .with_raw_output_schema(report_schema()),
        tool(
            "check",
            "Validate a report written by hand or by another tool (canonical, dstack preset or trial.json, \
             llm-d Benchmark Report) with the same rules: its verdict, checks and derived figures.",
        )
        .with_input_schema::<CheckArgs>()
        .with_raw_output_schema(report_schema()),
        tool(
            "compare",
            "Compare configurations (each a results file or directory): runs lined up by workload, \
             derived TPOT, per-user decode rate, throughput, TTFT and E2E side by side with ratios to the \
             baseline; a figure whose meaning differs between the sides is refused or warned.",
        )
        .with_input_schema::<CompareArgs>()
        .with_raw_output_schema(compare_schema()),
        tool(
            "explain",
            "Write out each run's derivation with its numbers: which rows, which formula and method, which \
             checks and why (`text` or `path`, as for normalize).",
        )
        .with_input_schema::<NormalizeArgs>()
        .with_output_schema::<ExplainOutput>(),
        tool("schema", "The JSON Schema of the canonical report that normalize and check return.")
            .with_input_schema::<SchemaArgs>()
            .with_output_schema::<SchemaOutput>(),
    ]
}

// ------------------------------------------------------------------------------------------------
// Calls

/// A diagnostic, as `--error-format json` writes one.
#[derive(Debug)]
pub(crate) struct Diagnostic(Value);

impl Diagnostic {
    fn of(e: &Error, from_path: bool) -> Diagnostic {
        let mut d = e.to_json();
        if from_path {
            d["message"] = Value::from(redact(&e.message()));
        }
        Diagnostic(d)
    }

    /// A file read from a path that gave no run and failed to parse: it may not be benchmark
    /// output at all (a `.env`, a key file), so what the parser said about its content (a quoted
    /// line, its keys, a value) is withheld; where it failed is kept.
    fn withheld(e: &Error) -> Diagnostic {
        let mut d = Diagnostic::of(e, true);
        d.0["message"] = json!(format!(
            "not readable as benchmark output ({}); the parser's message is withheld because the file was \
             read from a path and may not be benchmark output: pass its content as text to see it",
            e.code()
        ));
        d
    }

    fn usage(message: &str) -> Diagnostic {
        Diagnostic(json!({
            "code": "usage", "message": message, "input": null, "line": null, "column": null,
            "exit_code": ExitCode::Usage as i32,
        }))
    }

    fn internal(message: &str) -> Diagnostic {
        Diagnostic(json!({
            "code": "io", "message": message, "input": null, "line": null, "column": null,
            "exit_code": ExitCode::Io as i32,
        }))
    }
}

/// A message about a file read from a path, with every double-quoted part (a value of the file,
/// as serde quotes it) replaced: the file may not be benchmark output.
fn redact(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut parts = message.split('"');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let rest: Vec<&str> = parts.collect();
    // Pairs of quotes: the part inside is dropped; an unpaired last quote keeps what follows.
    let mut i = 0;
    while i < rest.len() {
        if i + 1 < rest.len() {
            out.push_str("\"…\"");
            out.push_str(rest[i + 1]);
            i += 2;
        } else {
            out.push('"');
            out.push_str(rest[i]);
            i += 1;
        }
    }
    out
}

fn failure(d: &Diagnostic) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(d.0.to_string())])
}

fn parse<T: for<'de> Deserialize<'de>>(args: JsonObject) -> Result<T, Diagnostic> {
    serde_json::from_value(Value::Object(args)).map_err(|e| Diagnostic::usage(&format!("arguments: {e}")))
}

/// One tool call: its result, or the diagnostic as a tool error.
pub(crate) fn call(settings: &Settings, name: &str, args: JsonObject) -> CallToolResult {
    let answer = match name {
        "normalize" => parse(args).and_then(|a| normalize_tool(settings, a, false)),
        "explain" => parse(args).and_then(|a| normalize_tool(settings, a, true)),
        "check" => parse(args).and_then(|a| check_tool(settings, a)),
        "compare" => parse(args).and_then(|a| compare_tool(settings, a)),
        "schema" => parse::<SchemaArgs>(args).map(|_| {
            let mut schema = bench_normalize_core::report::schema();
            if let Some(o) = schema.as_object_mut() {
                o.remove("$schema");
            }
            (json!({ "schema": schema }), Vec::new())
        }),
        other => Err(Diagnostic::usage(&format!("no tool named {other:?}"))),
    };
    match answer {
        Ok((value, notes)) => {
            let mut result = CallToolResult::structured(value);
            // Problems with part of an input that did not stop it (a malformed JSON Lines line):
            // a second text block, one diagnostic per line.
            if !notes.is_empty() {
                let lines: Vec<String> = notes.iter().map(|d| d.0.to_string()).collect();
                result.content.push(ContentBlock::text(lines.join("\n")));
            }
            result
        }
        Err(d) => failure(&d),
    }
}

type Answer = Result<(Value, Vec<Diagnostic>), Diagnostic>;

/// Where an input comes from.
enum Source<'a> {
    Text(&'a [u8]),
    Path(&'a str),
}

/// Read one input's runs, confined and capped.
fn read(settings: &Settings, source: Source, name: Option<&str>, opts: &Options) -> Result<Collect, Diagnostic> {
    let mut sink = Collect::default();
    let from_path = matches!(source, Source::Path(_));
    let result = match source {
        Source::Text(bytes) => {
            if bytes.len() as u64 > settings.max_bytes {
                return Err(Diagnostic::usage(&format!(
                    "the text is {} bytes, more than --max-bytes {}",
                    bytes.len(),
                    settings.max_bytes
                )));
            }
            bench_normalize_core::normalize(bytes, name.unwrap_or("text"), opts, &mut sink)
        }
        Source::Path(p) => {
            let (file, _) = open_confined(settings, p, false)?;
            bench_normalize_core::normalize_file(file, name.unwrap_or(p), opts, &mut sink)
        }
    };
    match result {
        Ok(_) => Ok(sink),
        // Runs read before the input failed (a compressed file cut off): the runs are the answer,
        // the error a note beside them, as the CLI writes the runs and says the error (exit 3).
        Err(e) if !sink.runs.is_empty() => {
            sink.notes.push(e);
            Ok(sink)
        }
        // A failure after runs were read (a contradiction found late) is still the answer's
        // failure: the CLI says it with its exit code.
        Err(e) if from_path && sink.runs.is_empty() && matches!(e, Error::Parse { .. } | Error::Report { .. }) => {
            Err(Diagnostic::withheld(&e))
        }
        Err(e) => Err(Diagnostic::of(&e, from_path)),
    }
}

/// Resolve `path` inside the roots and open it: a regular file no larger than the cap (or, with
/// `dir_ok`, a directory). The file is opened from its resolved name and checked again once open.
fn open_confined(settings: &Settings, path: &str, dir_ok: bool) -> Result<(std::fs::File, PathBuf), Diagnostic> {
    let resolved = confine(settings, path)?;
    let file = std::fs::File::open(&resolved).map_err(|e| io_diag(path, &e))?;
    let meta = file.metadata().map_err(|e| io_diag(path, &e))?;
    if meta.is_dir() && dir_ok {
        return Ok((file, resolved));
    }
    if !meta.is_file() {
        return Err(Diagnostic::usage(&format!("{path}: not a regular file")));
    }
    if meta.len() > settings.max_bytes {
        return Err(Diagnostic::usage(&format!(
            "{path}: {} bytes, more than --max-bytes {}",
            meta.len(),
            settings.max_bytes
        )));
    }
    Ok((file, resolved))
}

fn io_diag(path: &str, e: &std::io::Error) -> Diagnostic {
    Diagnostic::of(
        &Error::Io { input: path.to_string(), source: std::io::Error::new(e.kind(), e.kind().to_string()) },
        true,
    )
}

/// `path` resolved (relative to the first root; symlinks and `..` resolved) when it lies inside
/// a root. A path that does not exist is said so only when its parent lies inside a root:
/// outside, every refusal reads the same, so the tool cannot probe the machine.
fn confine(settings: &Settings, path: &str) -> Result<PathBuf, Diagnostic> {
    if path.is_empty() || path.contains('\0') {
        return Err(Diagnostic::usage("path: empty or holds a NUL byte"));
    }
    let outside = || {
        Diagnostic::usage(&format!(
            "{path}: outside the directories this server may read ({})",
            settings.roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
        ))
    };
    let p = Path::new(path);
    let joined = if p.is_absolute() { p.to_path_buf() } else { settings.roots[0].join(p) };
    match std::fs::canonicalize(&joined) {
        Ok(c) if settings.roots.iter().any(|r| c.starts_with(r)) => Ok(c),
        Ok(_) => Err(outside()),
        Err(e) => {
            let parent_inside = joined
                .parent()
                .and_then(|d| std::fs::canonicalize(d).ok())
                .is_some_and(|d| settings.roots.iter().any(|r| d.starts_with(r)));
            if parent_inside { Err(io_diag(path, &e)) } else { Err(outside()) }
        }
    }
}

fn notes_of(errors: &[Error], from_path: bool) -> Vec<Diagnostic> {
    errors.iter().map(|e| Diagnostic::of(e, from_path)).collect()
}

fn report_value(runs: Vec<Run>) -> Value {
    serde_json::to_value(Report::new(runs)).expect("a report serializes")
}

fn normalize_tool(settings: &Settings, a: NormalizeArgs, explain: bool) -> Answer {
    let opts = Options::builtin(a.strict, false);
    let (source, from_path) = match (&a.text, &a.path) {
        (Some(t), None) => (Source::Text(t.as_bytes()), false),
        (None, Some(p)) => (Source::Path(p), true),
        _ => return Err(Diagnostic::usage("give `text` or `path` (one of them)")),
    };
    let got = read(settings, source, a.name.as_deref(), &opts)?;
    let notes = notes_of(&got.notes, from_path);
    if explain {
        let runs = got
            .runs
            .iter()
            .map(|r| Explained {
                input: r.source.input.clone(),
                block: r.source.block,
                verdict: r.verdict.as_str().to_string(),
                explanation: bench_normalize_core::emit::explain(r),
            })
            .collect();
        let value = serde_json::to_value(ExplainOutput { runs }).expect("serializes");
        return Ok((value, notes));
    }
    Ok((report_value(got.runs), notes))
}

fn check_tool(settings: &Settings, a: CheckArgs) -> Answer {
    let opts = Options::builtin(a.strict, true);
    let text;
    let (source, from_path) = match (&a.document, &a.path) {
        (Some(Value::String(s)), None) => (Source::Text(s.as_bytes()), false),
        (Some(doc @ (Value::Object(_) | Value::Array(_))), None) => {
            text = doc.to_string();
            (Source::Text(text.as_bytes()), false)
        }
        (Some(_), None) => return Err(Diagnostic::usage("document: a JSON object, or JSON text")),
        (None, Some(p)) => (Source::Path(p), true),
        _ => return Err(Diagnostic::usage("give `document` or `path` (one of them)")),
    };
    let name = a.name.as_deref().or(if from_path { None } else { Some("document") });
    let got = read(settings, source, name, &opts)?;
    Ok((report_value(got.runs), notes_of(&got.notes, from_path)))
}

fn compare_tool(settings: &Settings, a: CompareArgs) -> Answer {
    let key = KeyField::parse_list(a.key.as_deref().unwrap_or("concurrency,rate,input,output,model"))
        .map_err(|e| Diagnostic::of(&e, false))?;
    if a.others.is_empty() {
        return Err(Diagnostic::usage("others: at least one configuration to compare with the baseline"));
    }
    let opts = Options::builtin(a.strict, false);
    let mut notes = Vec::new();
    let mut sides = Vec::new();
    for arg in std::iter::once(&a.baseline).chain(&a.others) {
        sides.push(read_side(settings, arg, &opts, &mut notes)?);
    }
    let (baseline, others) = sides.split_first().expect("the baseline is there");
    let comparison = compare::compare(baseline, others, &key);
    Ok((serde_json::to_value(&comparison).expect("a comparison serializes"), notes))
}

/// One side of a comparison: a file, or every regular file below a directory (sorted; hidden
/// ones skipped; each held to the roots on its own, so a symlink out of a root is not followed).
fn read_side(settings: &Settings, arg: &str, opts: &Options, notes: &mut Vec<Diagnostic>) -> Result<Side, Diagnostic> {
    let (_, resolved) = open_confined(settings, arg, true)?;
    let mut side = Side { label: arg.to_string(), runs: Vec::new(), skipped: Vec::new() };
    if !resolved.is_dir() {
        let got = read(settings, Source::Path(arg), None, opts)?;
        side.runs = got.runs;
        notes.extend(notes_of(&got.notes, true));
        return Ok(side);
    }
    let mut files = Vec::new();
    walk(&resolved, &mut files).map_err(|e| io_diag(arg, &e))?;
    files.sort();
    for file in files {
        // The name as the agent would write it: the argument joined with the part below it.
        let below = file.strip_prefix(&resolved).unwrap_or(&file);
        let name = Path::new(arg).join(below).display().to_string();
        let Some(full) = file.to_str() else { continue };
        match read(settings, Source::Path(full), Some(&name), opts) {
            Ok(got) => {
                side.runs.extend(got.runs);
                notes.extend(notes_of(&got.notes, true));
            }
            // A file of a directory with no result in it (a README) is listed, not an error.
            Err(d) => side.skipped.push(Skipped {
                input: name,
                block: None,
                reason: d.0["message"].as_str().unwrap_or("").to_string(),
            }),
        }
    }
    Ok(side)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let ty = entry.file_type()?;
        // Symlinks are resolved and confined when read (open_confined), never walked into.
        if ty.is_dir() {
            walk(&entry.path(), files)?;
        } else if ty.is_file() || ty.is_symlink() {
            files.push(entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_drops_quoted_values_only() {
        assert_eq!(
            redact(r#"runs[0]: invalid type: string "hunter2", expected f64"#),
            "runs[0]: invalid type: string \"…\", expected f64"
        );
        assert_eq!(redact("no quotes here"), "no quotes here");
        assert_eq!(redact(r#"a "b" c "d"#), "a \"…\" c \"d");
    }

    #[test]
    fn confinement_refuses_outside_and_dotdot() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("in.txt"), "x").unwrap();
        let s = Settings { roots: vec![root.join("")], max_bytes: 10 };
        assert!(confine(&s, "in.txt").is_ok());
        for bad in ["../in.txt", "/etc/passwd", "/nonexistent/x", "../../../../etc/shadow"] {
            let d = confine(&s, bad).unwrap_err();
            assert!(d.0["message"].as_str().unwrap().contains("outside"), "{bad}: {:?}", d.0);
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", root.join("link")).unwrap();
            assert!(confine(&s, "link").is_err());
        }
        std::fs::write(root.join("big.txt"), "0123456789ab").unwrap();
        let d = open_confined(&s, "big.txt", false).unwrap_err();
        assert!(d.0["message"].as_str().unwrap().contains("--max-bytes"), "{:?}", d.0);
    }
}
