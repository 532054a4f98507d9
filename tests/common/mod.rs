//! Helpers shared by the integration tests: the project's own samples only (the corpus outside the repository is never read).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use bench_normalize::{Error, Options, Run, normalize};

/// The characters that move a terminal, forge a line or reorder one.
pub const HARMFUL: &[char] = &[
    '\u{1b}', '\u{9b}', '\u{9d}', '\u{90}', '\u{9c}', '\u{85}', '\u{7}', '\r', '\n', '\t', '\u{7f}', '\0', '\u{8}',
    '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
    '\u{200e}', '\u{200f}', '\u{2028}', '\u{2029}',
];

/// A character that must not reach a terminal raw: a control character (C0, DEL, C1), a
/// bidirectional override, isolate or mark, or a line or paragraph separator. Written here from
/// the rule, not taken from the code under test.
pub fn harmful(c: char) -> bool {
    c.is_control() || HARMFUL.contains(&c) || c == '\u{61c}'
}

/// What a run says, without where it was read: its parser and variant, whether it was cut off,
/// its figures (workload, totals, reported, derived), its checks' outcomes and its verdict. Two
/// readings of the same result must agree on this.
pub fn figures_of(run: &Run) -> serde_json::Value {
    let v = serde_json::to_value(run).expect("a run serializes");
    let checks: Vec<serde_json::Value> = v["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| serde_json::json!({ "id": c["id"], "severity": c["severity"], "status": c["status"] }))
        .collect();
    serde_json::json!({
        "parser": v["source"]["parser"],
        "variant": v["source"]["variant"],
        "cut_off": v["source"].get("truncated").is_some_and(|t| !t.is_null()),
        "workload": v["workload"],
        "totals": v["totals"],
        "reported": v["reported"],
        "derived": v["derived"],
        "checks": checks,
        "verdict": v["verdict"],
    })
}

/// What a per-sample snapshot holds for each check's message (`tests/it/snapshots.rs`): the
/// messages are in `snapshots/sample-checks.snap`, a line each.
pub const MESSAGE_ELSEWHERE: &str = "[in sample-checks.snap]";

/// A report as JSON (`{"runs": [...]}`) with each check's message replaced by
/// [`MESSAGE_ELSEWHERE`]: every key stays, so the snapshot still holds the report's whole shape
/// (and validates against the schema), while a rule's rewording changes none of these files.
pub fn without_check_messages(report: &mut serde_json::Value) {
    // (`get_mut`, not `[]`: indexing would add the keys a diagnostic has not.)
    for run in report.get_mut("runs").and_then(|r| r.as_array_mut()).into_iter().flatten() {
        for check in run.get_mut("checks").and_then(|c| c.as_array_mut()).into_iter().flatten() {
            check["message"] = MESSAGE_ELSEWHERE.into();
        }
    }
}

/// The checks of a report as JSON, a line each: `<sample> #<run>  <id>  <status>  <message>`.
pub fn check_lines(sample: &str, report: &serde_json::Value) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, run) in report["runs"].as_array().into_iter().flatten().enumerate() {
        for c in run["checks"].as_array().into_iter().flatten() {
            let (id, status, message) =
                (c["id"].as_str().unwrap(), c["status"].as_str().unwrap(), c["message"].as_str().unwrap());
            assert!(!message.contains('\n'), "{sample} #{}: {id}: a message of more than one line", i + 1);
            lines.push(format!("{sample} #{}  {id}  {status}  {message}", i + 1));
        }
    }
    lines
}

/// Every run of `bytes` read as an input named `name`, with the default options.
pub fn run_all(bytes: &[u8], name: &str) -> Result<Vec<Run>, Error> {
    let mut runs = Vec::new();
    normalize(bytes, name, &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })?;
    Ok(runs)
}

/// The console logs of Rich tables with a title and a column header (AIPerf's `Metric`,
/// genai-perf's `Statistic`), captured and published: the samples the table-structure tests edit
/// and wrap.
pub const RICH_TABLE_CONSOLES: &[&str] = &[
    "peers/aiperf-s2.stdout.txt",
    "peers/genaiperf-s1.stdout.txt",
    "peers/genaiperf-s2.stdout.txt",
    "peers/genaiperf-chat-s2.stdout.txt",
    "public/009-aiperf.txt",
    "public/010-aiperf.txt",
    "public/101-genai-perf.txt",
    "public/104-genai-perf.txt",
    "public/106-genai-perf.txt",
    "public/111-aiperf.txt",
    "public/112-genai-perf.txt",
];

pub fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// Path relative to `samples/`, `/`-separated: stable in reports and snapshots.
pub fn sample_name(path: &Path) -> String {
    path.strip_prefix(samples_dir()).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

/// Normalize a sample file with the built-in definitions and the default policy.
pub fn normalize_file(path: &Path) -> Result<Vec<Run>, Error> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut runs = Vec::new();
    normalize(&bytes[..], &sample_name(path), &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })?;
    Ok(runs)
}

/// Whether a file under `samples/` is an input (not a truth file, manifest, expected figures or
/// README kept beside the inputs).
pub fn is_sample(name: &str) -> bool {
    !["truth.json", "manifest.json", "expected.json", "README.md"].iter().any(|s| name.ends_with(s))
}

/// Every input in `samples/*/` (what `tests/it/snapshots.rs` snapshots), sorted.
pub fn samples() -> Vec<PathBuf> {
    let exts = ["txt", "json", "jsonl", "csv", "md", "yaml", "gz", "zst", "xz"];
    let mut v: Vec<PathBuf> = std::fs::read_dir(samples_dir())
        .unwrap()
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|d| d.is_dir())
        .flat_map(|d| std::fs::read_dir(d).unwrap().filter_map(|e| e.ok().map(|e| e.path())))
        .filter(|p| {
            p.is_file()
                && p.extension().is_some_and(|e| exts.iter().any(|x| e == *x))
                && is_sample(&p.to_string_lossy())
        })
        .collect();
    v.sort();
    v
}

/// Every file under `samples/<dir>` with a name ending in `suffix`, sorted.
pub fn sample_files(dir: &str, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(samples_dir().join(dir))
        .unwrap_or_else(|e| panic!("samples/{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// Whether a derived figure is the truth file's. The emulator's timing is exact; what a client
/// times over HTTP is at most 0.08% off it in these captures (and tokens per chunk 0.01%), so 0.1%
/// holds every sample while a derivation that divides by N rather than N - 1 output tokens (0.2%
/// at 512 tokens, more at fewer) fails. A figure the tool printed is rounded to 2 decimals.
pub fn is_truth(derived: f64, truth: f64, printed: bool) -> bool {
    let rounding = if printed { 0.005 } else { 0.0 };
    (derived - truth).abs() <= 0.001 * truth.abs() + rounding
}

/// Run `cmd` with `stdin` written to it from a thread (so a large input cannot dead-lock against a
/// full output pipe), and collect its output.
pub fn output_with_stdin(cmd: &mut std::process::Command, stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// The built-in definitions with every `[fold]` table taken out: a summary table's rows (vllm-rs's
/// `Sweep Summary`) are then runs of their own, as the tables are printed. For a test that needs
/// every block of a text where it is, folded or not.
pub fn unfolded_definitions() -> &'static bench_normalize::Definitions {
    static DEFS: std::sync::OnceLock<bench_normalize::Definitions> = std::sync::OnceLock::new();
    DEFS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("bench-normalize-unfolded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let parsers = Path::new(env!("CARGO_MANIFEST_DIR")).join("parsers");
        for entry in std::fs::read_dir(parsers).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let Some(at) = text.find("\n[fold]\n") else { continue };
            // The table runs to the next table header.
            let end = text[at + 8..].find("\n[").map_or(text.len(), |e| at + 8 + e);
            let unfolded = format!("{}{}", &text[..at], &text[end..]);
            std::fs::write(dir.join(path.file_name().unwrap()), unfolded).unwrap();
        }
        let defs = bench_normalize::Definitions::with_dir(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        defs
    })
}

/// [`run_all`] with [`unfolded_definitions`].
pub fn run_all_unfolded(bytes: &[u8], name: &str) -> Result<Vec<Run>, Error> {
    let mut runs = Vec::new();
    let opts = Options { definitions: unfolded_definitions(), ..Options::default() };
    normalize(bytes, name, &opts, &mut |r| {
        runs.push(r);
        Ok(())
    })?;
    Ok(runs)
}

/// The stand-in vLLM client's command line as the `run` tests give it (tests/fake-client: it
/// prints its sample whatever the flags; `run` reads the workload flags the output does not print).
pub const FAKE_VLLM: &[&str] = &[
    "vllm",
    "bench",
    "serve",
    "--backend",
    "openai",
    "--model",
    "/models/emu-llm-wordlevel",
    "--dataset-name",
    "random",
    "--random-input-len",
    "1024",
    "--random-output-len",
    "512",
    "--num-prompts",
    "16",
    "--max-concurrency",
    "4",
];

/// A vLLM log as vLLM's default `--percentile-metrics ttft,tpot,itl` prints it: `text` without
/// its argument dump (`Namespace(...)`) and without the rows of its End-to-end Latency section.
pub fn plain_vllm_log(text: &str) -> String {
    let mut out = String::new();
    let mut in_e2e = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with('-') {
            in_e2e = line.contains("End-to-end Latency");
        }
        if line.starts_with('=') {
            in_e2e = false;
        }
        if !in_e2e && !line.starts_with("Namespace(") {
            out.push_str(line);
        }
    }
    out
}

/// The seed's mistake: each `{stat} TPOT (ms):` row of a vLLM block holds the value of its
/// `{stat} ITL (ms):` row. Panics when the block has no such pair (a test's input, not data).
pub fn itl_in_tpot_rows(text: &str) -> String {
    let value = |label: &str| -> Option<String> {
        text.lines().find_map(|l| l.strip_prefix(label)).map(|v| v.trim().to_string())
    };
    let mut out = String::new();
    let mut copied = 0;
    for line in text.split_inclusive('\n') {
        let stat = line.split(' ').next().unwrap_or_default();
        match (line.contains(" TPOT (ms):"), value(&format!("{stat} ITL (ms):"))) {
            (true, Some(itl)) => {
                out.push_str(&format!("{:<40} {:<10}\n", format!("{stat} TPOT (ms):"), itl));
                copied += 1;
            }
            _ => out.push_str(line),
        }
    }
    assert!(copied >= 2, "no TPOT rows with ITL rows beside them");
    out
}

/// The truth file's TPOT for one run: what the emulator realized (per step or per concurrency
/// when the truth file has several), else what it was configured with.
pub fn true_tpot(truth: &serde_json::Value, run: &Run) -> Option<f64> {
    let one = &truth["measured_by_emulator"];
    let step = &truth["measured_by_emulator_per_step"][run.source.block.saturating_sub(1)]["measured_by_emulator"];
    let by_concurrency =
        run.workload.number("max_concurrency").map(|c| &truth["measured_by_emulator_per_concurrency"][format!("{c}")]);
    [Some(one), Some(step), by_concurrency]
        .into_iter()
        .flatten()
        .find(|v| v.is_object())
        .and_then(|m| m["mean_tpot_ms"].as_f64())
        .or_else(|| truth["true_tpot_ms"].as_f64())
}

/// Run `cmd` to the end and collect its output, with its own peak resident set (KiB) from
/// `wait4`: the child's alone, whatever else the test process has run (`RUSAGE_CHILDREN` would be
/// the largest child of every test in the binary).
#[cfg(target_os = "linux")]
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which std cannot do
pub fn output_with_max_rss(cmd: &mut std::process::Command) -> (std::process::Output, i64) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        out.read_to_end(&mut v).unwrap();
        v
    });
    let mut stderr = Vec::new();
    err.read_to_end(&mut stderr).unwrap();
    let stdout = reader.join().unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    (std::process::Output { status: std::process::ExitStatus::from_raw(status), stdout, stderr }, usage.ru_maxrss)
}
