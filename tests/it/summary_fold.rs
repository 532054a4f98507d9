//! Summary rows that repeat runs already read (a definition's `[fold]`: vllm-rs's `Sweep Summary`)
//! are folded into those runs as the check `summary-agreement`, and stay runs only where their
//! run is not in the input. Held to the captured sweeps' truth files.

use crate::common;

use std::process::Command;

use bench_normalize::Run;
use bench_normalize::report::{StatKey, Status, Verdict};
use proptest::prelude::*;
use serde_json::Value;

const SWEEPS: [&str; 2] = ["versions/vllmrs0.33.0-sweep", "versions/vllmrs0.33.0-ratesweep"];

/// A captured sweep log cut into its parts: the lines before the first step, each step (from its
/// `Run i/N:` line to the next), and the summary (from its banner to the end).
struct Sweep {
    name: String,
    head: Vec<String>,
    steps: Vec<Vec<String>>,
    /// The summary's banner, header and rule; its rows; the lines after them.
    summary_head: Vec<String>,
    rows: Vec<String>,
    summary_tail: Vec<String>,
    truth: Value,
}

fn sweep(stem: &str) -> Sweep {
    let text = std::fs::read_to_string(common::samples_dir().join(format!("{stem}.stdout.txt"))).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let starts: Vec<usize> =
        lines.iter().enumerate().filter(|(_, l)| l.contains(" Run ") && l.contains("/3: ")).map(|(i, _)| i).collect();
    let summary = lines.iter().position(|l| l.contains(" Sweep Summary ")).unwrap();
    assert_eq!(starts.len(), 3, "{stem}");
    let mut steps = Vec::new();
    for (k, s) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(summary);
        steps.push(lines[*s..end].to_vec());
    }
    // Banner, header, rule; then the rows up to the closing line of `=`.
    let close = summary + 3 + lines[summary + 3..].iter().position(|l| l.starts_with("====")).unwrap();
    Sweep {
        name: format!("{stem}.stdout.txt"),
        head: lines[..starts[0]].to_vec(),
        steps,
        summary_head: lines[summary..summary + 3].to_vec(),
        rows: lines[summary + 3..close].to_vec(),
        summary_tail: lines[close..].to_vec(),
        truth: common::read_json(&common::samples_dir().join(format!("{stem}.truth.json"))),
    }
}

impl Sweep {
    /// The log with only the steps and summary rows whose bit is set.
    fn keep(&self, steps: u8, rows: u8) -> String {
        let mut out = self.head.clone();
        for (i, s) in self.steps.iter().enumerate() {
            if steps & (1 << i) != 0 {
                out.extend(s.iter().cloned());
            }
        }
        out.extend(self.summary_head.iter().cloned());
        for (i, r) in self.rows.iter().enumerate() {
            if rows & (1 << i) != 0 {
                out.push(r.clone());
            }
        }
        out.extend(self.summary_tail.iter().cloned());
        out.join("\n") + "\n"
    }

    /// The step's TPOT as the emulator measured it.
    fn measured_tpot(&self, step: usize) -> f64 {
        self.truth["measured_by_emulator_per_step"][step]["measured_by_emulator"]["mean_tpot_ms"].as_f64().unwrap()
    }

    /// The step's key as its summary row writes it (`concurrency=2`, `rate=inf`).
    fn key(&self, step: usize) -> String {
        self.rows[step].split_whitespace().next().unwrap().to_string()
    }

    fn read(&self, text: &str) -> Vec<Run> {
        common::run_all(text.as_bytes(), &self.name).unwrap()
    }
}

/// The step a run is of: a step block's load against the truth file, a summary row's key cell.
fn step_of(s: &Sweep, run: &Run) -> usize {
    if run.source.parser == "vllm-rs-sweep-summary" {
        let key = run.workload.text("strategy").unwrap();
        return (0..3).find(|i| s.key(*i) == key).unwrap();
    }
    let steps = s.truth["measured_by_emulator_per_step"].as_array().unwrap();
    let c = run.workload.number("max_concurrency");
    let r = run.workload.number("request_rate");
    steps
        .iter()
        .position(|st| {
            let want_rate = st["request_rate"].as_f64();
            st["max_concurrency"].as_f64() == c && (st["request_rate"] == "inf" && r.is_none() || want_rate == r)
        })
        .unwrap_or_else(|| panic!("no step for {c:?} {r:?}"))
}

fn agreement(run: &Run) -> Option<&bench_normalize::report::Check> {
    run.checks.iter().find(|c| c.id == "summary-agreement")
}

#[test]
fn the_captured_sweeps_fold_into_one_run_per_step_each_cross_checked() {
    for stem in SWEEPS {
        let s = sweep(stem);
        let runs = common::normalize_file(&common::samples_dir().join(&s.name)).unwrap();
        assert_eq!(runs.len(), 3, "{stem}: N runs, not 2N");
        for (i, run) in runs.iter().enumerate() {
            assert_eq!(run.source.parser, "vllm-bench-serve", "{stem} run {}", i + 1);
            assert_eq!(step_of(&s, run), i, "{stem}: in step order");
            let c = agreement(run).unwrap_or_else(|| panic!("{stem} run {}: no summary-agreement", i + 1));
            assert_eq!(c.status, Status::Pass, "{stem}: {}", c.message);
            // Not vacuous: the row's figures were compared (7 where a step has no steady state).
            let n: usize = c.message.split_whitespace().next().unwrap().parse().unwrap();
            assert!(n >= 7, "{stem}: {}", c.message);
            assert!(c.message.contains(&s.key(i)), "{}", c.message);
            assert_eq!(run.verdict, Verdict::Accepted);
            let tpot = run.derived.tpot_ms.mean.unwrap();
            assert!(common::is_truth(tpot, s.measured_tpot(i), false), "{stem} step {i}: {tpot}");
        }
    }
}

#[test]
fn a_summary_alone_still_gives_its_runs() {
    for stem in SWEEPS {
        let s = sweep(stem);
        let runs = s.read(&s.keep(0, 0b111));
        assert_eq!(runs.len(), 3, "{stem}");
        for (i, run) in runs.iter().enumerate() {
            assert_eq!(run.source.parser, "vllm-rs-sweep-summary");
            assert_eq!(step_of(&s, run), i);
            assert!(agreement(run).is_none());
            assert!(run.notes.iter().any(|n| n.code == "summary-row-alone"), "{:?}", run.notes);
            let p50 = run.reported.stat("tpot_ms").and_then(|t| t.get(StatKey::P(50.0))).unwrap();
            assert!(common::is_truth(p50, s.measured_tpot(i), true), "{stem} step {i}: P50 TPOT {p50}");
            assert_eq!(run.verdict, Verdict::Accepted);
        }
    }
    // The sample of it (samples/noisy/make.py): the same runs.
    let s = sweep(SWEEPS[0]);
    let file = common::normalize_file(&common::samples_dir().join("noisy/vllm-rs-sweep-summary-alone.txt")).unwrap();
    let built = s.read(&s.keep(0, 0b111));
    assert_eq!(
        file.iter().map(common::figures_of).collect::<Vec<_>>(),
        built.iter().map(common::figures_of).collect::<Vec<_>>()
    );
}

/// The summary row of `key` with its `column`th cell after the key cell replaced, right-aligned
/// in the same width, as printed.
fn edit_row(text: &str, key: &str, column: usize, value: &str) -> String {
    let mut done = false;
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if done || l.split_whitespace().next() != Some(key) {
                return l.to_string();
            }
            done = true;
            // The byte range of each cell (a run of non-space characters).
            let mut cells = Vec::new();
            let mut start = None;
            for (i, ch) in l.char_indices().chain([(l.len(), ' ')]) {
                match (ch.is_whitespace(), start) {
                    (false, None) => start = Some(i),
                    (true, Some(s)) => {
                        cells.push((s, i));
                        start = None;
                    }
                    _ => {}
                }
            }
            let (a, b) = cells[column + 1];
            let a = (b - value.len()).min(a);
            format!("{}{}{}", &l[..a], value, &l[b..])
        })
        .collect();
    assert!(done, "no row {key}");
    out.join("\n") + "\n"
}

#[test]
fn a_summary_row_that_disagrees_with_its_block_rejects_the_run() {
    let s = sweep(SWEEPS[0]);
    let clean = s.keep(0b111, 0b111);
    // Tok/s (column 2: Req/s, Inputs/s, Tok/s) of concurrency=2: the block says 151.94.
    let edited = edit_row(&clean, "concurrency=2", 2, "153.94");
    assert!(edited.contains("153.94") && edited.contains("151.94"));
    let runs = s.read(&edited);
    assert_eq!(runs.len(), 3);
    let verdicts: Vec<Verdict> = runs.iter().map(|r| r.verdict).collect();
    assert_eq!(verdicts, [Verdict::Accepted, Verdict::Rejected, Verdict::Accepted]);
    let c = agreement(&runs[1]).unwrap();
    assert_eq!(c.status, Status::Fail);
    assert!(c.message.contains("reported.output_tok_per_s") && c.message.contains("153.94"), "{}", c.message);
    // The executable: exit 1, the rule named on stderr.
    let out = common::output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_bench-normalize")).args(["--format", "jsonl"]),
        edited.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("summary-agreement"));
    // A figure of a latency column, P50 TTFT (column 6) of concurrency=2: the block says 58.36.
    // One unit of the last digit apart is within the two printed roundings; two are not.
    let within = s.read(&edit_row(&clean, "concurrency=2", 6, "58.37"));
    assert_eq!(agreement(&within[1]).unwrap().status, Status::Pass);
    let beyond = s.read(&edit_row(&clean, "concurrency=2", 6, "58.38"));
    assert_eq!(agreement(&beyond[1]).unwrap().status, Status::Fail);
    assert!(agreement(&beyond[1]).unwrap().message.contains("reported.ttft_ms.p50"));
}

#[test]
fn a_summary_row_whose_block_is_missing_stays_a_run_in_step_order_of_what_was_read() {
    let s = sweep(SWEEPS[1]);
    // The rate=4 block cut away.
    let runs = s.read(&s.keep(0b101, 0b111));
    let got: Vec<(&str, usize)> = runs.iter().map(|r| (r.source.parser.as_str(), step_of(&s, r))).collect();
    assert_eq!(got, [("vllm-bench-serve", 0), ("vllm-bench-serve", 2), ("vllm-rs-sweep-summary", 1)]);
    assert!(agreement(&runs[0]).is_some() && agreement(&runs[1]).is_some());
}

#[test]
fn two_sweeps_in_one_input_fold_each_into_its_own_blocks() {
    let s = sweep(SWEEPS[0]);
    let one = s.keep(0b111, 0b111);
    // The second sweep's concurrency=2 row edited: only the second sweep's block is rejected.
    let two = edit_row(&one, "concurrency=2", 2, "153.94");
    let runs = s.read(&format!("{one}{two}"));
    assert_eq!(runs.len(), 6);
    let verdicts: Vec<Verdict> = runs.iter().map(|r| r.verdict).collect();
    assert_eq!(verdicts.iter().filter(|v| **v == Verdict::Rejected).count(), 1);
    assert_eq!(runs[4].verdict, Verdict::Rejected);
    assert!(runs.iter().all(|r| agreement(r).is_some()));
    // A first sweep without its summary, then a second whose concurrency=1 block is cut away, its
    // summary's row edited: that row is not taken for the first sweep's step (other blocks lie
    // between), it stays a run; the second sweep's steps are folded.
    let first = s.keep(0b111, 0);
    let first = &first[..first.find(" Sweep Summary ").unwrap()];
    let first = &first[..first.rfind('\n').unwrap() + 1];
    let second = edit_row(&s.keep(0b110, 0b111), "concurrency=1", 2, "99.99");
    let runs = s.read(&format!("{first}{second}"));
    let got: Vec<(&str, usize, bool)> =
        runs.iter().map(|r| (r.source.parser.as_str(), step_of(&s, r), agreement(r).is_some())).collect();
    assert_eq!(
        got,
        [
            ("vllm-bench-serve", 0, false),
            ("vllm-bench-serve", 1, false),
            ("vllm-bench-serve", 2, false),
            ("vllm-bench-serve", 1, true),
            ("vllm-bench-serve", 2, true),
            ("vllm-rs-sweep-summary", 0, false),
        ]
    );
    assert!(runs.iter().all(|r| r.verdict == Verdict::Accepted));
}

/// Another process's argument dump just before a step's block (a log shared with an SGLang run:
/// `request_rate=inf`) is read for the run, but what the summary repeats is the block's own
/// printout: the `rate=2` row still names the block that prints `Request rate configured (RPS):
/// 2.00`.
#[test]
fn a_dump_read_before_a_block_does_not_hide_its_step() {
    let s = sweep(SWEEPS[1]);
    let clean = s.keep(0b111, 0b111);
    let dump = "Namespace(backend='sglang', host='127.0.0.1', port=30000, dataset_name='random', num_prompts=1000, request_rate=inf, max_concurrency=4, random_input_len=1024, random_output_len=512)";
    let first = s.steps[0].iter().position(|l| l.contains("Serving Benchmark Result")).unwrap();
    let banner = &s.steps[0][first];
    let text = clean.replacen(&format!("{banner}\n"), &format!("{dump}\n{banner}\n"), 1);
    assert_ne!(text, clean);
    let runs = s.read(&text);
    assert_eq!(runs.len(), 3);
    assert!(runs.iter().all(|r| agreement(r).is_some_and(|c| c.status == Status::Pass)));
}

#[test]
fn jsonl_streams_each_step_once() {
    for stem in SWEEPS {
        let s = sweep(stem);
        let path = common::samples_dir().join(&s.name);
        for stdin in [false, true] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_bench-normalize"));
            cmd.args(["--format", "jsonl"]);
            let out = if stdin {
                common::output_with_stdin(&mut cmd, &std::fs::read(&path).unwrap())
            } else {
                cmd.arg(&path).output().unwrap()
            };
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
            let lines: Vec<Value> =
                String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            assert_eq!(lines.len(), 3, "{stem}");
            let blocks: Vec<u64> = lines.iter().map(|l| l["source"]["block"].as_u64().unwrap()).collect();
            assert_eq!(blocks, [1, 2, 3]);
            for l in &lines {
                let c = l["checks"].as_array().unwrap().iter().find(|c| c["id"] == "summary-agreement").unwrap();
                assert_eq!(c["status"], "pass");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any subset of the steps' blocks and of the summary's rows: one run per step present in
    /// either, each step's figures those of the clean log's block when its block is there (with
    /// the cross-check when its row is there too), else those of its summary row read alone; and
    /// each held to the truth file.
    #[test]
    fn any_blocks_and_rows_give_one_run_per_step_with_the_true_figures(
        which in 0usize..2,
        steps in 0u8..8,
        rows in 0u8..8,
    ) {
        prop_assume!(steps | rows != 0);
        let s = sweep(SWEEPS[which]);
        let clean = s.read(&s.keep(0b111, 0b111));
        let alone = s.read(&s.keep(0, 0b111));
        let runs = s.read(&s.keep(steps, rows));
        prop_assert_eq!(runs.len(), (steps | rows).count_ones() as usize);
        let mut seen = Vec::new();
        for run in &runs {
            let i = step_of(&s, run);
            prop_assert!(!seen.contains(&i), "step {} twice", i);
            seen.push(i);
            if steps & (1 << i) != 0 {
                prop_assert_eq!(&run.source.parser, "vllm-bench-serve");
                let tpot = run.derived.tpot_ms.mean.unwrap();
                prop_assert!(common::is_truth(tpot, s.measured_tpot(i), false));
                if rows & (1 << i) != 0 {
                    prop_assert_eq!(common::figures_of(run), common::figures_of(&clean[i]));
                } else {
                    prop_assert!(agreement(run).is_none());
                    let mut want = common::figures_of(&clean[i]);
                    let checks = want["checks"].as_array_mut().unwrap();
                    checks.retain(|c| c["id"] != "summary-agreement");
                    prop_assert_eq!(common::figures_of(run), want);
                }
            } else {
                prop_assert_eq!(&run.source.parser, "vllm-rs-sweep-summary");
                prop_assert_eq!(common::figures_of(run), common::figures_of(&alone[i]));
                let p50 = run.reported.stat("tpot_ms").and_then(|t| t.get(StatKey::P(50.0))).unwrap();
                prop_assert!(common::is_truth(p50, s.measured_tpot(i), true));
            }
        }
        prop_assert!(runs.iter().all(|r| r.verdict == Verdict::Accepted));
    }
}
