//! Property tests of result JSON inside text (issue 19): every captured result file in
//! `samples/captured/`, wrapped the ways a record is printed or pasted into a log, reads to the
//! same runs as the file itself: the same parser and variant, workload, totals, reported figures
//! and derived figures (the per-request method included, from the `--save-detailed` /
//! `--output-details` arrays).
//!
//! The wrappings, each alone and then with random log lines around the record:
//!
//! * after a shell or Python prompt, on its own line or behind text on the same line;
//! * between markers (`--- result ---`, `BEGIN`/`END`, a Markdown `json` fence);
//! * nested as a value in another document, under a random key, or in a list of such documents;
//! * pretty-printed with a random indent, also behind a constant line prefix on every line;
//! * inside an escaped JSON string (a JSON log record's field, a `key="..."` log line).

use crate::common;

use std::sync::OnceLock;

use bench_normalize::Run;
use common::run_all;
use proptest::prelude::*;
use serde_json::{Value, json};

/// A captured result file: its name, its records (one per document), and the projection of the
/// runs it reads to.
struct Sample {
    name: String,
    records: Vec<String>,
    expected: Vec<Value>,
}

/// What must be the same as reading the file itself.
fn project(run: &Run) -> Value {
    let v = serde_json::to_value(run).expect("a run serializes");
    json!({
        "parser": v["source"]["parser"],
        "variant": v["source"]["variant"],
        "workload": v["workload"],
        "totals": v["totals"],
        "reported": v["reported"],
        "derived": v["derived"],
        "verdict": v["verdict"],
    })
}

fn samples() -> &'static [Sample] {
    static SAMPLES: OnceLock<Vec<Sample>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let dir = common::samples_dir().join("captured");
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy().to_string();
                n.ends_with(".result.json") || n.ends_with(".result.jsonl")
            })
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                let text = std::fs::read_to_string(&p).unwrap();
                let records = if name.ends_with(".jsonl") {
                    text.lines().filter(|l| !l.trim().is_empty()).map(String::from).collect()
                } else {
                    vec![text.trim().to_string()]
                };
                let runs = run_all(text.as_bytes(), &name).unwrap();
                assert!(!runs.is_empty(), "{name}");
                Sample { name, records, expected: runs.iter().map(project).collect() }
            })
            .collect()
    })
}

/// The record as a value (Python's bare `Infinity` kept aside as a marker).
fn value_of(record: &str) -> Value {
    serde_json::from_str(&record.replace(": Infinity", ": \"__INF__\"").replace(": NaN", ": \"__NAN__\"")).unwrap()
}

/// A value written back as Python would (its bare non-finite literals restored).
fn python_text(s: String) -> String {
    s.replace("\"__INF__\"", "Infinity").replace("\"__NAN__\"", "NaN")
}

fn pretty(v: &Value, indent: usize) -> String {
    use serde::Serialize;
    let pad = vec![b' '; indent];
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, serde_json::ser::PrettyFormatter::with_indent(&pad));
    v.serialize(&mut ser).unwrap();
    python_text(String::from_utf8(out).unwrap())
}

const LOG_LINES: &[&str] = &[
    "INFO 08-28 22:41:28 [metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 312.4 tokens/s",
    "(APIServer pid=2957) INFO:     127.0.0.1:40312 - \"POST /v1/completions HTTP/1.1\" 200 OK",
    "100%|██████████| 16/16 [00:10<00:00,  1.54it/s]",
    "{\"level\":\"info\",\"msg\":\"benchmark done\",\"ts\":\"2026-11-29T19:00:00Z\"}",
    "{\"event\": \"metrics\", \"values\": {\"running\": 4, \"waiting\": 0}}",
    "{\"level\":\"info\",\"msg\":\"cut short",
    "Namespace(backend='vllm', dataset_name='random', max_concurrency=4, request_rate=inf, extra_body='{\"temperature\": 0}')",
    "Saving results to /data/out/result.json { done }",
    "",
    "+ python3 -m sglang.bench_serving --backend sglang-oai --output-file r.jsonl --output-details",
];

const PREFIXES: &[&str] = &["# ", "> ", "> > ", "// ", "    ", "svc-1  | ", "[rank0]: ", "(pid=4242) "];

/// One way of putting a file's records into text.
#[derive(Debug, Clone)]
enum Wrap {
    Prompt(usize),
    SameLine(usize),
    Markers(usize),
    Nested { key: String, list: bool },
    Pretty { indent: usize, prefix: Option<usize> },
    Escaped(usize),
}

fn wrap_strategy() -> impl Strategy<Value = Wrap> {
    prop_oneof![
        (0..3usize).prop_map(Wrap::Prompt),
        (0..3usize).prop_map(Wrap::SameLine),
        (0..3usize).prop_map(Wrap::Markers),
        ("[a-z_]{1,12}", any::<bool>()).prop_map(|(key, list)| Wrap::Nested { key, list }),
        (0..9usize, proptest::option::of(0..PREFIXES.len()))
            .prop_map(|(indent, prefix)| Wrap::Pretty { indent, prefix }),
        (0..2usize).prop_map(Wrap::Escaped),
    ]
}

/// The text of one record, wrapped.
fn wrap(record: &str, how: &Wrap) -> String {
    match how {
        Wrap::Prompt(0) => format!("$ cat result.jsonl\n{record}\n$ "),
        Wrap::Prompt(1) => format!(">>> print(json.dumps(r))\n{record}\n>>> "),
        Wrap::Prompt(_) => format!("root@b7f3:/workspace# tail -n1 out.jsonl\n{record}\nroot@b7f3:/workspace# exit"),
        Wrap::SameLine(0) => format!("$ cat result.jsonl {record}"),
        Wrap::SameLine(1) => format!("[2026-11-29 19:00:01] INFO bench: result {record}"),
        Wrap::SameLine(_) => format!(">>> {record}"),
        Wrap::Markers(0) => format!("--- result ---\n{record}\n--- end ---"),
        Wrap::Markers(1) => format!("BEGIN\n{record}\nEND"),
        Wrap::Markers(_) => format!("Here is the result:\n\n```json\n{record}\n```\n"),
        Wrap::Nested { key, list } => {
            let inner = value_of(record);
            let doc = json!({"name": "exp1", "model": "m", key.clone(): inner, "notes": "run {1}"});
            let doc = if *list { json!([{"name": "warmup", "ok": true}, doc]) } else { doc };
            python_text(serde_json::to_string(&doc).unwrap())
        }
        Wrap::Pretty { indent, prefix } => {
            let text = pretty(&value_of(record), *indent);
            match prefix {
                Some(p) => text.lines().map(|l| format!("{}{l}", PREFIXES[*p])).collect::<Vec<_>>().join("\n"),
                None => text,
            }
        }
        Wrap::Escaped(0) => {
            let s = serde_json::to_string(record).unwrap();
            format!("{{\"ts\": \"2026-11-29T19:00:01Z\", \"msg\": \"result\", \"data\": {s}}}")
        }
        Wrap::Escaped(_) => format!("INFO result data={}", serde_json::to_string(record).unwrap()),
    }
}

fn check(sample: &Sample, text: &str, how: &str) -> Result<(), TestCaseError> {
    let runs = run_all(text.as_bytes(), "wrapped.log").map_err(|e| TestCaseError::fail(format!("{how}: {e}")))?;
    let got: Vec<Value> = runs.iter().map(project).collect();
    prop_assert_eq!(got.len(), sample.expected.len(), "{}: {} runs", sample.name, how);
    for (g, e) in got.iter().zip(&sample.expected) {
        prop_assert_eq!(g, e, "{}: {}", sample.name, how);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Each wrapping alone.
    #[test]
    fn a_wrapped_record_reads_as_its_file(which in any::<prop::sample::Index>(), how in wrap_strategy()) {
        let sample = &samples()[which.index(samples().len())];
        let text: Vec<String> = sample.records.iter().map(|r| wrap(r, &how)).collect();
        check(sample, &text.join("\n"), &format!("{how:?}"))?;
    }

    /// A wrapped record among random log lines.
    #[test]
    fn a_wrapped_record_among_log_lines_reads_as_its_file(
        which in any::<prop::sample::Index>(),
        how in wrap_strategy(),
        before in prop::collection::vec(0..LOG_LINES.len(), 0..6),
        after in prop::collection::vec(0..LOG_LINES.len(), 0..6),
        crlf in any::<bool>(),
    ) {
        let sample = &samples()[which.index(samples().len())];
        let mut lines: Vec<String> = before.iter().map(|i| LOG_LINES[*i].to_string()).collect();
        for r in &sample.records {
            lines.push(wrap(r, &how));
        }
        lines.extend(after.iter().map(|i| LOG_LINES[*i].to_string()));
        let mut text = lines.join("\n");
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        check(sample, &text, &format!("{how:?} among {before:?} / {after:?}, crlf {crlf}"))?;
    }
}

/// Every example the task names, once, on one captured file with per-request arrays.
#[test]
fn every_named_example_reads_with_the_per_request_method() {
    let sample = samples().iter().find(|s| s.name == "vllm-s2.result.json").unwrap();
    let record = &sample.records[0];
    let cases = [
        Wrap::Prompt(0),
        Wrap::Prompt(1),
        Wrap::SameLine(1),
        Wrap::Markers(0),
        Wrap::Markers(1),
        Wrap::Markers(2),
        Wrap::Nested { key: "result".into(), list: false },
        Wrap::Nested { key: "result".into(), list: true },
        Wrap::Pretty { indent: 2, prefix: None },
        Wrap::Pretty { indent: 2, prefix: Some(0) },
        Wrap::Pretty { indent: 4, prefix: Some(1) },
        Wrap::Escaped(0),
        Wrap::Escaped(1),
    ];
    for how in cases {
        let text = format!("{}\n{}\n{}", LOG_LINES[0], wrap(record, &how), LOG_LINES[3]);
        let runs = run_all(text.as_bytes(), "wrapped.log").unwrap_or_else(|e| panic!("{how:?}: {e}"));
        assert_eq!(runs.len(), 1, "{how:?}");
        assert_eq!(project(&runs[0]), sample.expected[0], "{how:?}");
        assert_eq!(runs[0].derived.tpot_ms.method, Some(bench_normalize::report::TpotMethod::PerRequest), "{how:?}");
        assert!(runs[0].notes.iter().any(|n| n.code == "json-in-text"), "{how:?}");
    }
}

/// JSON that is no result of a known tool, or a known format's keys with no figure, is noise.
#[test]
fn json_that_is_no_result_is_noise() {
    for text in [
        "$ cat config.json\n{\"backend\": \"vllm\", \"dataset_name\": \"random\", \"note\": \"start\"}\n",
        "{\"msg\": \"x\", \"data\": \"{\\\"duration\\\": \\\"soon\\\"}\"}\n",
        "# {\n#   \"level\": \"info\",\n#   \"completed\": true\n# }\n",
        &format!("start {}\n", "{\"a\": [".repeat(5000)),
    ] {
        // No run: "nothing found" (or, for an input that is one JSON document, "no known format").
        let got = run_all(text.as_bytes(), "noise.log");
        assert!(got.is_err(), "{text}: {:?}", got.map(|r| r.len()));
    }
}
