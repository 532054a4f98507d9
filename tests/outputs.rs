//! Output formats and integration: JSON Schema, table, CSV, dstack, --explain, parsers,
//! completions, man.

mod common;

use std::process::{Command, Output};

use serde_json::{Value, json};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).env("NO_COLOR", "1").output().unwrap()
}

fn sample(name: &str) -> String {
    common::samples_dir().join(name).display().to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn every_snapshot_validates_against_the_schema() {
    let schema: Value = serde_json::from_slice(&run(&["schema"]).stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let mut checked = 0;
    for entry in std::fs::read_dir(common::samples_dir().parent().unwrap().join("snapshots")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        // insta: a header between `---` lines, then the snapshot.
        let body = text.splitn(3, "---\n").nth(2).unwrap();
        let report: Value = serde_json::from_str(body).unwrap();
        if report.get("error").is_some() {
            continue;
        }
        let errors: Vec<String> =
            validator.iter_errors(&report).map(|e| format!("{} at {}", e, e.instance_path())).take(3).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
    // The schema says what a figure is.
    let ttft = &schema["$defs"]["Run"]["properties"]["reported"]["properties"]["ttft_ms"];
    assert_eq!(ttft["type"], "object");
    assert!(ttft["description"].as_str().unwrap().contains("time to first token"));
    let bad = json!({ "schema_version": 1, "runs": [ { "totals": { "output_tokens": "many" } } ] });
    assert!(!validator.is_valid(&bad));
}

#[test]
fn table_puts_runs_side_by_side_with_derived_tpot_first() {
    let o = run(&["-f", "table", &sample("captured/sglang-oai-s2.stdout.txt"), &sample("public/078-vllm.txt")]);
    assert_eq!(o.status.code(), Some(0), "078 is a cut-off block with every key figure: a warning");
    let t = stdout(&o);
    assert!(!t.contains('\u{1b}'), "no colour with NO_COLOR");
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[1].contains("sglang-oai-s2.stdout.txt #1") && lines[1].contains("078-vllm.txt #1"), "{}", lines[1]);
    assert!(lines[3].starts_with("│ TPOT, derived (ms)") && lines[3].contains("12.8"), "{}", lines[3]);
    assert!(lines[5].starts_with("│ Per-user decode rate (tok/s)") && lines[5].contains("78.11"), "{}", lines[5]);
    assert!(t.contains("125.81 per chunk"));
    assert!(t.contains("accepted (warn: complete-block"), "{t}");
}

#[test]
fn csv_has_one_header_and_one_row_per_run() {
    let o = run(&["-f", "csv", &sample("captured/vllm-s4.stdout.txt"), &sample("captured/sglang-s1.stdout.txt")]);
    assert_eq!(o.status.code(), Some(0));
    let mut r = csv::Reader::from_reader(o.stdout.as_slice());
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header, bench_normalize::emit::CSV_COLUMNS);
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 5);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let concurrency: Vec<&str> = rows.iter().map(|row| &row[col("max_concurrency")]).collect();
    assert_eq!(concurrency, ["1", "2", "4", "8", "4"]);
    assert_eq!(&rows[4][col("tpot_method")], "e2e-ttft-tokens");
    let tpot: f64 = rows[4][col("tpot_ms")].parse().unwrap();
    assert!((tpot - 20.0).abs() < 0.05);
}

#[test]
fn dstack_metrics_take_tpot_from_the_derivation_and_null_what_is_unknown() {
    // SGLang 0.5.5.post1: no TPOT row, per-chunk ITL 125.80 ms.
    let o = run(&["-f", "dstack", &sample("versions/sglang0.5.5.post1-oai-s2.stdout.txt")]);
    assert_eq!(o.status.code(), Some(0));
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "successful_requests",
            "failed_requests",
            "duration_seconds",
            "total_input_tokens",
            "total_output_tokens",
            "output_tok_per_s",
            "per_user_tok_per_s",
            "ttft_ms",
            "tpot_ms",
            "e2e_ms"
        ]
    );
    let tpot = m["tpot_ms"]["mean"].as_f64().unwrap();
    assert!((tpot - 12.8).abs() < 0.01, "{tpot}: never the ITL");
    assert!((m["per_user_tok_per_s"].as_f64().unwrap() - 1000.0 / tpot).abs() < 0.01);
    // The tool printed no TPOT percentiles and no failure count: null, with a warning each.
    assert_eq!((m["tpot_ms"]["p50"].clone(), m["failed_requests"].clone()), (Value::Null, Value::Null));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("tpot_ms.p50 is null") && err.contains("failed_requests is null"), "{err}");
    // Pasted into a preset report as is, it passes `check`.
    let report = json!({
        "tool": "python -m sglang.bench_serving", "tool_version": "0.5.5.post1", "command": "…",
        "workload": { "num_requests": 16, "concurrency": 4 },
        "metrics": m
    });
    let dir = std::env::temp_dir().join(format!("bn-dstack-{}.json", std::process::id()));
    std::fs::write(&dir, report.to_string()).unwrap();
    let o = run(&["check", dir.to_str().unwrap()]);
    let _ = std::fs::remove_file(&dir);
    // A null figure (here failed_requests) is allowed by the shape: unknown, not zero.
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn dstack_percentiles_come_from_per_request_arrays_when_there_are_some() {
    let o = run(&["-f", "dstack", &sample("captured/vllm-s2.result.json")]);
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(m["tpot_ms"]["p99"].as_f64().is_some());
    assert_eq!(m["failed_requests"], 0);
}

#[test]
fn explain_writes_out_the_derivation() {
    let o = run(&["--explain", &sample("versions/sglang0.5.5.post1-oai-s2.stdout.txt")]);
    let t = stdout(&o);
    assert!(t.contains("TPOT 12.8 ms, method e2e-ttft-tokens"), "{t}");
    assert!(t.contains("= (E2E 6682.48 - TTFT 140.74) / (8192 tokens / 16 requests - 1)"), "{t}");
    assert!(t.contains("from line 28 \"Mean E2E Latency (ms): 6682.48\""), "{t}");
    assert!(t.contains("the printed mean ITL 125.8 ms is timed per streamed chunk"), "{t}");
    assert!(t.contains("verdict: accepted"), "{t}");
}

#[test]
fn parsers_completions_and_man() {
    let o = run(&["parsers", "--format", "json"]);
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = list.as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    for id in ["vllm-bench-serve", "sglang-bench-serving", "vllm-result-json", "sglang-result-jsonl", "dstack-preset"] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    assert!(stdout(&run(&["parsers"])).contains("sglang.bench_serving"));
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0));
        assert!(stdout(&o).contains("bench-normalize"), "{shell}");
    }
    let man = stdout(&run(&["man"]));
    assert!(man.starts_with(".ie") && man.contains(".TH bench-normalize 1"));
}

/// `--format jsonl` is written with sonic-rs for speed; the contract is serde_json's bytes (what
/// `--format json` and the snapshots use). Every run of every sample must come out identical.
#[test]
fn jsonl_lines_are_serde_json_bytes() {
    let mut runs_checked = 0;
    for path in common::samples() {
        // (Inputs that are rejected as a whole have no run to write.)
        let Ok(runs) = common::normalize_file(&path) else { continue };
        for run in &runs {
            let mut line = Vec::new();
            bench_normalize::emit::write_jsonl(&mut line, run).unwrap();
            let mut expected = serde_json::to_vec(run).unwrap();
            expected.push(b'\n');
            assert!(line == expected, "{} block {}: jsonl differs from serde_json", path.display(), run.source.block);
            runs_checked += 1;
        }
    }
    assert!(runs_checked > 150, "{runs_checked}");
}

/// A pipelined read (a file's blocks read on a second thread) may render runs there, for a sink
/// that says how ([`bench_normalize::Sink::render`]). Whichever thread does it, every run arrives
/// once, in input order, and rendered bytes are the renderer's, with the run's outline (source,
/// checks, verdict): the same report as read alone.
#[test]
fn a_pipelined_read_hands_out_every_run_once_in_order_rendered_or_not() {
    use bench_normalize::{Error, Options, Run, Sink};
    struct Both {
        /// Each run as JSON, whichever way it came.
        runs: Vec<String>,
        rendered: usize,
    }
    fn render(run: &Run) -> Option<Vec<u8>> {
        serde_json::to_vec(run).ok()
    }
    impl Sink for Both {
        fn run(&mut self, run: Run) -> Result<(), Error> {
            self.runs.push(serde_json::to_string(&run).unwrap());
            Ok(())
        }
        fn render(&self) -> Option<bench_normalize::Render> {
            Some(render)
        }
        fn rendered(&mut self, outline: Run, bytes: Vec<u8>) -> Result<(), Error> {
            let full: Run = serde_json::from_slice(&bytes).unwrap();
            assert_eq!((&outline.source, &outline.checks, outline.verdict), (&full.source, &full.checks, full.verdict));
            assert!(outline.rows.is_empty() && outline.notes.is_empty(), "an outline, not the whole run");
            self.rendered += 1;
            self.runs.push(String::from_utf8(bytes).unwrap());
            Ok(())
        }
    }
    // Many blocks of every tool, one after another.
    let mut text = Vec::new();
    for dir in ["captured", "versions", "noisy", "public"] {
        for path in common::sample_files(dir, ".txt") {
            text.extend(std::fs::read(path).unwrap());
            text.push(b'\n');
        }
    }
    let always = || true;
    let read = |pipelined: bool, ready: Option<&(dyn Fn() -> bool + Sync)>| {
        let mut sink = Both { runs: Vec::new(), rendered: 0 };
        let opts = Options { pipelined, ready, ..Options::default() };
        // Read a few KB at a time, as from a pipe.
        bench_normalize::normalize(std::io::BufReader::with_capacity(4096, &text[..]), "all.txt", &opts, &mut sink)
            .unwrap();
        sink
    };
    let (alone, pipelined, never_waiting) = (read(false, None), read(true, None), read(true, Some(&always)));
    assert!(alone.runs.len() > 50, "{}", alone.runs.len());
    eprintln!(
        "{} and {} of {} runs rendered on the second thread",
        pipelined.rendered,
        never_waiting.rendered,
        pipelined.runs.len()
    );
    assert_eq!(alone.rendered, 0, "only a pipelined read renders");
    // The worker renders at least the last blocks, once the scanner has no more to send: the
    // outline path above is always taken.
    assert!(pipelined.rendered > 0 && never_waiting.rendered > 0);
    assert_eq!(pipelined.runs, alone.runs);
    assert_eq!(never_waiting.runs, alone.runs);
}

/// A pipelined read of a stream hands out every run whose block has ended before it reads on, when
/// that read may wait (here: every read, as nothing says the input is ready): a live log
/// (`tail -f log | bench-normalize`) gets each run as its block ends, not with the next one.
#[test]
fn a_pipelined_read_of_a_stream_hands_out_each_run_before_it_reads_on() {
    use bench_normalize::{Options, Run};
    use std::sync::{Arc, Mutex};
    let log = std::fs::read(common::samples_dir().join("captured/vllm-s1.stdout.txt")).unwrap();
    /// Gives one log per read; before each, checks that the runs of the logs given so far are out.
    struct Pieces {
        left: usize,
        given: usize,
        log: Vec<u8>,
        got: Arc<Mutex<Vec<Run>>>,
    }
    impl std::io::Read for Pieces {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            assert!(out.len() >= self.log.len());
            assert_eq!(self.got.lock().unwrap().len(), self.given, "a run not handed out before the next read");
            if self.left == 0 {
                return Ok(0);
            }
            self.left -= 1;
            self.given += 1;
            out[..self.log.len()].copy_from_slice(&self.log);
            Ok(self.log.len())
        }
    }
    let got = Arc::new(Mutex::new(Vec::new()));
    let input = Pieces { left: 5, given: 0, log, got: got.clone() };
    let sink_got = got.clone();
    let mut sink = move |run: Run| {
        sink_got.lock().unwrap().push(run);
        Ok(())
    };
    let opts = Options { pipelined: true, ..Options::default() };
    let found =
        bench_normalize::normalize(std::io::BufReader::with_capacity(64 * 1024, input), "live.log", &opts, &mut sink)
            .unwrap();
    assert_eq!(found, 5);
    let blocks: Vec<usize> = got.lock().unwrap().iter().map(|r| r.source.block).collect();
    assert_eq!(blocks, [1, 2, 3, 4, 5]);
}

/// The JSON document written a run at a time is the document of all the runs written at once,
/// compact and pretty, for one run or several; no run, no document.
#[test]
fn the_json_report_written_run_by_run_is_the_whole_report() {
    use bench_normalize::emit::{JsonReport, write_json};
    let mut runs = Vec::new();
    for name in ["captured/vllm-s4.stdout.txt", "captured/sglang-oai-s2spec.stdout.txt", "peers/guidellm-s2.stdout.txt"]
    {
        let path = common::samples_dir().join(name);
        runs.append(&mut common::normalize_file(&path).unwrap_or_else(|e| panic!("{name}: {e}")));
    }
    assert_eq!(runs.len(), 6);
    for pretty in [false, true] {
        for n in [0, 1, 2, runs.len()] {
            let mut streamed = Vec::new();
            let mut doc = JsonReport::new(pretty);
            for run in &runs[..n] {
                doc.run(&mut streamed, run).unwrap();
            }
            doc.finish(&mut streamed).unwrap();
            let mut whole = Vec::new();
            if n > 0 {
                write_json(&mut whole, &bench_normalize::Report::new(runs[..n].to_vec()), pretty).unwrap();
            }
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(whole).unwrap(),
                "pretty {pretty}, {n} runs"
            );
        }
    }
}
