//! `store` and `regress` end to end through the executable, on a real SQLite file
//! (docs/store.md): the captured samples stored with the figures the run derives (and within 2%
//! of their truth files' TPOT), refusals, idempotent adds in any order, and the regression
//! verdict on honest repetitions, a slower run and another tool's run. With
//! `$BENCH_NORMALIZE_TEST_PG` set (a server's URL without database: tests/store/pg.sh), every test
//! runs on a fresh PostgreSQL database too (made with `createdb`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bench_normalize::store::WorkloadKey;
use bench_normalize::store::regress::{Settings, judge};
use proptest::prelude::*;
use serde_json::Value;

/// The stores the tests run on: a SQLite file in `dir`, and a new PostgreSQL database when a
/// server is given.
fn stores(dir: &Path, name: &str) -> Vec<String> {
    let mut out = vec![dir.join(format!("{name}.sqlite")).display().to_string()];
    if let Some(url) = std::env::var("BENCH_NORMALIZE_TEST_PG").ok().filter(|u| !u.is_empty()) {
        out.push(fresh_database(&url));
    }
    out
}

fn fresh_database(url: &str) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let db = format!("t_{}_{n}", std::process::id());
    let o = Command::new("createdb").arg(&db).output().expect("createdb (tests/store/pg.sh puts it on PATH)");
    assert!(o.status.success(), "createdb {db}: {}", String::from_utf8_lossy(&o.stderr));
    format!("{url}/{db}")
}

fn bin(store: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bench-normalize"));
    c.env("NO_COLOR", "1")
        .env("BENCH_NORMALIZE_STORE", store)
        .env_remove("BENCH_NORMALIZE_PARSERS")
        .env_remove("BENCH_NORMALIZE_DIAGNOSTICS_FILE")
        .env_remove("BENCH_NORMALIZE_SLO");
    c
}

fn run(store: &str, args: &[&str], files: &[PathBuf]) -> Output {
    bin(store).args(args).args(files).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn captured() -> PathBuf {
    common::samples_dir().join("captured")
}

/// The exported rows, without what differs between two stores holding the same runs (the id and
/// the time added), sorted.
fn rows(store: &str) -> Vec<Value> {
    let o = run(store, &["store", "export", "--format", "jsonl"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut rows: Vec<Value> = text(&o.stdout)
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            let m = v.as_object_mut().unwrap();
            m.remove("id");
            m.remove("added_at");
            v
        })
        .collect();
    rows.sort_by_key(|v| v.to_string());
    rows
}

#[test]
fn captured_samples_are_stored_with_their_derived_figures() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path(), "runs") {
        captured_samples_in(&store);
    }
}

fn captured_samples_in(store: &str) {
    let store = store.to_string();
    let mut files: Vec<PathBuf> = std::fs::read_dir(captured())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            !n.ends_with(".truth.json") && !n.starts_with('.') && p.is_file()
        })
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            let stem = n.split('.').next().unwrap().to_string();
            captured().join(format!("{stem}.truth.json")).is_file()
        })
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    let o = run(&store, &["store", "add", "--label", "suite=captured"], &files);
    let stdout = text(&o.stdout);
    let stored: Vec<&str> = stdout.lines().filter(|l| l.starts_with("stored ")).collect();
    // Every accepted run of every file, as `bench-normalize -f jsonl` reads it.
    let mut accepted = Vec::new();
    for f in &files {
        let out = bin(&store).args(["-f", "jsonl"]).arg(f).output().unwrap();
        assert!(out.status.code().is_some());
        for line in text(&out.stdout).lines() {
            let run: Value = serde_json::from_str(line).unwrap();
            if run["verdict"] == "accepted" {
                accepted.push((f.clone(), run));
            }
        }
    }
    assert_eq!(stored.len(), accepted.len(), "{stdout}\n{}", text(&o.stderr));
    let exported = rows(&store);
    assert_eq!(exported.len(), accepted.len());
    let mut checked_truth = 0;
    for (file, run) in &accepted {
        let input = file.display().to_string();
        let row = exported
            .iter()
            .find(|r| r["source_input"] == input.as_str() && r["block"] == run["source"]["block"])
            .unwrap_or_else(|| panic!("{input} run {} not stored", run["source"]["block"]));
        let name = format!("{input} run {}", run["source"]["block"]);
        // The stored columns are the run's own figures.
        assert_eq!(row["tpot_ms_mean"], run["derived"]["tpot_ms"]["mean"], "{name}");
        assert_eq!(row["per_user_decode_tok_per_s"], run["derived"]["per_user_decode_tok_per_s"], "{name}");
        assert_eq!(row["ttft_ms_mean"], run["reported"]["ttft_ms"]["mean"], "{name}");
        assert_eq!(row["ttft_ms_p99"], run["reported"]["ttft_ms"]["p99"], "{name}");
        let throughput = if run["derived"]["output_tok_per_s"].is_null() {
            &run["reported"]["output_tok_per_s"]
        } else {
            &run["derived"]["output_tok_per_s"]
        };
        assert_eq!(&row["output_tok_per_s"], throughput, "{name}");
        assert_eq!(row["tool"], run["source"]["tool"], "{name}");
        assert_eq!(row["labels"]["suite"], "captured", "{name}");
        assert_eq!(row["verdict"], "accepted");
        // The whole run is kept, as read.
        assert_eq!(row["run"], *run, "{name}");
        // The stored TPOT is the truth's, within 2%.
        let stem = file.file_name().unwrap().to_string_lossy().split('.').next().unwrap().to_string();
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(captured().join(format!("{stem}.truth.json"))).unwrap())
                .unwrap();
        if let (Some(tpot), Some(true_tpot)) = (row["tpot_ms_mean"].as_f64(), truth["true_tpot_ms"].as_f64()) {
            assert!((tpot - true_tpot).abs() <= 0.02 * true_tpot, "{name}: stored TPOT {tpot} vs true {true_tpot}");
            checked_truth += 1;
        }
    }
    assert!(checked_truth >= 20, "{checked_truth}");
    // Listing and showing: the same rows.
    let o = run(&store, &["store", "list", "--format", "json"], &[]);
    let listed: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(listed.len(), accepted.len());
    assert!(listed.iter().all(|r| r.get("run").is_none()), "list leaves each run out");
    let id = listed[0]["id"].as_i64().unwrap().to_string();
    let o = run(&store, &["store", "show", &id], &[]);
    assert_eq!(o.status.code(), Some(0));
    let shown: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(shown["run"]["derived"].is_object());
    assert_eq!(run(&store, &["store", "show", "999999"], &[]).status.code(), Some(3));
    // CSV: a header and a record per run.
    let o = run(&store, &["store", "export", "--format", "csv"], &[]);
    let csv = text(&o.stdout);
    assert!(csv.starts_with("id,added_at,tool,"), "{csv}");
    assert_eq!(csv.lines().count(), accepted.len() + 1);
}

#[test]
fn a_rejected_run_is_refused_with_its_reason_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path(), "runs") {
        refusals_in(&store);
    }
    // A file that is no store is said (exit 4) and left as it was.
    let not_db = dir.path().join("notes.txt");
    std::fs::write(&not_db, "not a database, and not to be damaged\n".repeat(100)).unwrap();
    let before = std::fs::read(&not_db).unwrap();
    let o = bin(&not_db).args(["store", "add"]).arg(captured().join("vllm-s1.stdout.txt")).output().unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&not_db).unwrap(), before);
    // Listing a store that does not exist: exit 3, nothing created.
    let none = dir.path().join("none.sqlite");
    assert_eq!(bin(&none).args(["store", "list"]).output().unwrap().status.code(), Some(3));
    assert!(!none.exists());
}

fn refusals_in(store: &str) {
    // A database without the store's tables is no store to read: exit 3.
    assert_eq!(run(store, &["store", "list"], &[]).status.code(), Some(3));
    let store = store.to_string();
    let rejected = common::samples_dir().join("noisy/tpot-overwritten-with-itl.txt");
    let o = run(&store, &["store", "add"], std::slice::from_ref(&rejected));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("not stored: the run is rejected"), "{}", text(&o.stderr));
    assert!(text(&o.stdout).is_empty());
    assert!(rows(&store).is_empty());
    // With an accepted one: that one is stored, the code still says the refusal.
    let o = run(&store, &["store", "add"], &[rejected, captured().join("vllm-s1.stdout.txt")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(rows(&store).len(), 1);
}

/// The files the idempotence property adds, in its orders.
fn some_files() -> Vec<PathBuf> {
    [
        "vllm-s1.stdout.txt",
        "vllm-s1.result.json",
        "sglang-s1.stdout.txt",
        "vllm-s2.stdout.txt",
        "sglang-s2.result.jsonl",
    ]
    .iter()
    .map(|n| captured().join(n))
    .collect()
}

/// The rows of adding [`some_files`] once, on each store kind.
fn reference_rows() -> &'static Vec<Vec<Value>> {
    static REF: std::sync::OnceLock<Vec<Vec<Value>>> = std::sync::OnceLock::new();
    REF.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        stores(dir.path(), "ref")
            .iter()
            .map(|store| {
                let o = run(store, &["store", "add", "--label", "k=v"], &some_files());
                assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
                rows(store)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Adding the same files in any order, in any batches, each twice, gives the rows of adding
    /// them once; a second add of a batch says `already stored` for each run.
    #[test]
    fn adds_are_idempotent_in_any_order(
        order in Just((0..5usize).collect::<Vec<_>>()).prop_shuffle(),
        cuts in proptest::collection::vec(1..4usize, 1..4),
    ) {
        let files = some_files();
        let dir = tempfile::tempdir().unwrap();
        let mut batches: Vec<Vec<PathBuf>> = Vec::new();
        let mut rest: &[usize] = &order;
        for c in cuts.iter().cycle() {
            if rest.is_empty() { break; }
            let (now, later) = rest.split_at((*c).min(rest.len()));
            batches.push(now.iter().map(|i| files[*i].clone()).collect());
            rest = later;
        }
        for (store, reference) in stores(dir.path(), "p").iter().zip(reference_rows()) {
            for batch in batches.iter().chain(batches.iter().rev()) {
                let o = run(store, &["store", "add", "--label", "k=v"], batch);
                prop_assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
            }
            for batch in &batches {
                let o = run(store, &["store", "add", "--label", "k=v"], batch);
                let out = text(&o.stdout);
                prop_assert!(out.lines().all(|l| l.starts_with("already stored ")), "{}", out);
            }
            prop_assert_eq!(&rows(store), reference);
        }
    }
}

/// A copy of vllm-s1's log with every time scaled by `f` and every rate by `1 / f`: the same run,
/// `f` times slower throughout (consistent with itself, so accepted).
fn scaled(dir: &Path, name: &str, f: f64) -> PathBuf {
    let log = std::fs::read_to_string(captured().join("vllm-s1.stdout.txt")).unwrap();
    let mut out = String::new();
    for line in log.lines() {
        let factor = if line.contains("(ms)") || line.contains("(s)") {
            Some(f)
        } else if line.contains("(tok/s)") || line.contains("(req/s)") {
            Some(1.0 / f)
        } else {
            None
        };
        match (factor, line.split_once(':')) {
            (Some(k), Some((label, value))) if value.trim().parse::<f64>().is_ok() => {
                let v: f64 = value.trim().parse().unwrap();
                out.push_str(&format!("{label}:{:>width$.2}\n", v * k, width = value.len().max(10)));
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    path
}

fn regress_json(store: &str, files: &[PathBuf], extra: &[&str]) -> (Option<i32>, Value, String) {
    let o = bin(store).args(["regress", "--format", "json"]).args(extra).args(files).output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v, text(&o.stderr))
}

fn status_of(v: &Value, figure: &str) -> String {
    v["groups"][0]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == figure)
        .unwrap_or_else(|| panic!("{figure} in {v}"))["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn regress_tells_a_slower_run_from_the_same_runs_and_another_tools() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path(), "runs") {
        regress_in(dir.path(), &store);
    }
}

fn regress_in(dir: &Path, store: &str) {
    let store = store.to_string();
    let honest: Vec<PathBuf> =
        [1.0, 0.99, 1.01, 1.005].iter().enumerate().map(|(i, f)| scaled(dir, &format!("h{i}.log"), *f)).collect();
    let o = run(&store, &["store", "add", "--label", "branch=main"], &honest);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).lines().filter(|l| l.starts_with("stored ")).count(), 4);

    // 10% slower: a regression of TPOT (threshold only: one new run), exit 8.
    let slow = scaled(dir, "slow.log", 1.10);
    let (code, v, err) = regress_json(&store, std::slice::from_ref(&slow), &[]);
    assert_eq!(code, Some(8), "{v}\n{err}");
    assert_eq!(status_of(&v, "tpot_ms"), "regression", "{v}");
    assert_eq!(status_of(&v, "per_user_decode_tok_per_s"), "regression", "{v}");
    assert_eq!(status_of(&v, "output_tok_per_s"), "regression", "{v}");
    let tpot = &v["groups"][0]["figures"][0];
    assert_eq!(tpot["method"], "threshold-only");
    assert!((tpot["change"].as_f64().unwrap() - 0.10).abs() < 0.01, "{tpot}");
    assert_eq!(v["groups"][0]["baseline_runs"].as_array().unwrap().len(), 4);
    // The Markdown summary says it.
    let o = bin(&store).arg("regress").arg(&slow).output().unwrap();
    assert_eq!(o.status.code(), Some(8));
    let md = text(&o.stdout);
    assert!(md.contains("| TPOT, derived (ms) |") && md.contains("**regression**"), "{md}");

    // 10% faster: an improvement, exit 0.
    let fast = scaled(dir, "fast.log", 0.90);
    let (code, v, _) = regress_json(&store, &[fast], &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(status_of(&v, "tpot_ms"), "improvement");

    // The same honest runs again: unchanged, by Welch's t-test (4 runs a side), exit 0.
    let (code, v, err) = regress_json(&store, &honest, &[]);
    assert_eq!(code, Some(0), "{v}\n{err}");
    for f in ["tpot_ms", "per_user_decode_tok_per_s", "ttft_ms.mean", "ttft_ms.p99", "e2e_ms.mean", "output_tok_per_s"]
    {
        assert_eq!(status_of(&v, f), "unchanged", "{f}: {v}");
    }
    assert_eq!(v["groups"][0]["figures"][0]["method"], "welch-t");
    let (_, v, _) = regress_json(&store, &honest, &["--test", "mann-whitney"]);
    assert_eq!(v["groups"][0]["figures"][0]["method"], "mann-whitney-u");

    // Three slower runs against the four honest ones: significant as well as large.
    let slower: Vec<PathBuf> =
        [1.10, 1.11, 1.09].iter().enumerate().map(|(i, f)| scaled(dir, &format!("s{i}.log"), *f)).collect();
    let (code, v, _) = regress_json(&store, &slower, &[]);
    assert_eq!(code, Some(8), "{v}");
    assert_eq!(status_of(&v, "tpot_ms"), "regression");
    assert!(v["groups"][0]["figures"][0]["p_value"].as_f64().unwrap() < 0.05, "{v}");

    // A 3% change is below the 5% default: unchanged; with --min-change 0.02 it counts.
    let a_bit = scaled(dir, "bit.log", 1.03);
    let (code, v, _) = regress_json(&store, std::slice::from_ref(&a_bit), &[]);
    assert_eq!((code, status_of(&v, "tpot_ms")), (Some(0), "unchanged".to_string()), "{v}");
    let (code, v, _) = regress_json(&store, &[a_bit], &["--min-change", "0.02"]);
    assert_eq!((code, status_of(&v, "tpot_ms")), (Some(8), "regression".to_string()), "{v}");

    // A labelled baseline that no run carries: no baseline, exit 3.
    let (code, v, _) = regress_json(&store, std::slice::from_ref(&slow), &["--baseline-label", "branch=other"]);
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(status_of(&v, "tpot_ms"), "not-comparable");

    // Another tool's run of the same workload: its figures do not mean the same; not comparable.
    let other = captured().join("sglang-s1.stdout.txt");
    let (code, v, err) = regress_json(&store, &[other], &[]);
    assert_eq!(code, Some(3), "{v}\n{err}");
    for f in ["tpot_ms", "ttft_ms.p99", "output_tok_per_s"] {
        assert_eq!(status_of(&v, f), "not-comparable", "{f}: {v}");
    }
    let reasons = v["groups"][0]["figures"][0]["reasons"].to_string();
    assert!(reasons.contains("another tool"), "{reasons}");
}

// ------------------------------------------------------------------------------------------------
// The verdict on simulated runs with known noise (the library's `judge`, no store needed)

/// A small deterministic generator: uniform in [0, 1), and Gaussian by Box-Muller.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
    }

    fn gauss(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-12), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// `n` runs of vllm-s1 whose derived TPOT is its own times `scale`, with Gaussian noise of
/// relative size `cv`.
fn simulated(
    base: &bench_normalize::Run,
    n: usize,
    scale: f64,
    cv: f64,
    noise: &mut Noise,
) -> Vec<bench_normalize::Run> {
    (0..n)
        .map(|_| {
            let mut r = base.clone();
            let t = r.derived.tpot_ms.mean.unwrap() * scale * (1.0 + cv * noise.gauss());
            r.derived.tpot_ms.mean = Some(t);
            r.derived.per_user_decode_tok_per_s = Some(1000.0 / t);
            r
        })
        .collect()
}

fn tpot_status(base: &bench_normalize::Run, settings: &Settings, slowdown: f64, cv: f64, seed: u64) -> String {
    let mut noise = Noise(seed);
    let baseline: Vec<(i64, bench_normalize::Run)> =
        simulated(base, 5, 1.0, cv, &mut noise).into_iter().enumerate().map(|(i, r)| (i as i64, r)).collect();
    let new = simulated(base, 5, slowdown, cv, &mut noise);
    let new: Vec<&bench_normalize::Run> = new.iter().collect();
    let group = judge(WorkloadKey::of(base), &new, &baseline, settings);
    serde_json::to_value(group.figures[0].status).unwrap().as_str().unwrap().to_string()
}

fn vllm_s1() -> bench_normalize::Run {
    let text = std::fs::read_to_string(captured().join("vllm-s1.stdout.txt")).unwrap();
    bench_normalize::normalize_str(&text, "vllm-s1.stdout.txt").unwrap().remove(0)
}

#[test]
fn identical_configurations_are_no_regression_beyond_the_stated_false_positive_rate() {
    let base = vllm_s1();
    // The test alone (no size threshold): Welch's t at 0.05 two-sided calls a regression (one
    // side) in about 2.5% of identical configurations; allow sampling error up to 5%.
    let test_only = Settings { min_change: 1e-9, ..Settings::default() };
    let trials = 400;
    let false_positives =
        (0..trials).filter(|i| tpot_status(&base, &test_only, 1.0, 0.02, 1000 + *i) == "regression").count();
    assert!(false_positives as f64 <= 0.05 * trials as f64, "{false_positives} of {trials}");
    assert!(false_positives > 0, "the simulation has noise");
    // With the default 5% size threshold and 2% noise, never.
    let defaults = Settings::default();
    assert!((0..trials).all(|i| tpot_status(&base, &defaults, 1.0, 0.02, 5000 + i) != "regression"));
}

#[test]
fn a_configured_slowdown_is_reported() {
    let base = vllm_s1();
    let defaults = Settings::default();
    // 10% slower with 2% noise: a regression every time; 10% faster: an improvement.
    for seed in 0..200 {
        assert_eq!(tpot_status(&base, &defaults, 1.10, 0.02, seed), "regression", "seed {seed}");
        assert_eq!(tpot_status(&base, &defaults, 0.90, 0.02, seed), "improvement", "seed {seed}");
    }
    // 10% slower but 15% noise on five runs a side: not significant, said as noisy (mostly).
    let noisy = (0..200).filter(|s| tpot_status(&base, &defaults, 1.10, 0.15, *s) == "noisy").count();
    assert!(noisy > 50, "{noisy}");
}

// ---- `plot --history` ---------------------------------------------------------------------------

#[test]
fn the_history_view_draws_each_stored_figure_and_the_newest_runs_baseline() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path(), "history") {
        history_in(dir.path(), &store);
    }
}

fn history_in(dir: &Path, store: &str) {
    use bench_normalize::compare::Fig;
    use bench_normalize::store::history::{self, By};
    // Four commits of one configuration, the last 20% slower; and a faster one under another label.
    let factors = [("c1", 1.0), ("c2", 1.01), ("c3", 0.99), ("c4", 1.2)];
    for (commit, f) in factors {
        let file = scaled(dir, &format!("{commit}.log"), f);
        let o =
            run(store, &["store", "add", "--label", &format!("commit={commit}"), "--label", "branch=main"], &[file]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let fast = scaled(dir, "fast.log", 0.8);
    assert_eq!(run(store, &["store", "add", "--label", "commit=c5"], &[fast]).status.code(), Some(0));

    let mut s = bench_normalize::store::Store::open(Path::new(store)).unwrap();
    let main = |figure, by| history::Settings {
        figure,
        by,
        labels: [("branch".to_string(), "main".to_string())].into(),
        baseline_last: 10,
        min_change: 0.05,
    };
    let h = history::history(&mut s, &main(Fig::Tpot, By::Label("commit".into()))).unwrap();
    assert_eq!(h.ticks, ["c1", "c2", "c3", "c4"]);
    assert_eq!(h.series.len(), 1);
    let stored: Vec<f64> = rows(store)
        .iter()
        .filter(|r| r["labels"]["branch"] == "main")
        .map(|r| (r["labels"]["commit"].as_str().unwrap().to_string(), r["tpot_ms_mean"].as_f64().unwrap()))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_values()
        .collect();
    let drawn: Vec<f64> = h.series[0].points.iter().map(|p| p.value).collect();
    assert_eq!(drawn, stored, "each point is the stored run's figure, in commit order");
    let band = h.series[0].band.as_ref().unwrap();
    assert_eq!((band.from, band.to, band.runs), (0, 3, 3));
    assert!((band.mean - (stored[0] + stored[1] + stored[2]) / 3.0).abs() < 1e-9);
    // The slower newest run lies above the band, as regress would call it.
    assert!(stored[3] > band.mean * 1.05);
    // The per-user rate: the same runs, the other way up; the faster run (other labels) apart.
    let all = history::Settings { labels: Default::default(), ..main(Fig::PerUser, By::Time) };
    let h = history::history(&mut s, &all).unwrap();
    assert_eq!(h.ticks.len(), 5);
    // One series (one tool and workload), a point per run in the order added, each the stored
    // run's per-user rate; the faster run's is 1 / 0.8 of the first's.
    assert_eq!(h.series.len(), 1);
    let points: Vec<(usize, f64)> = h.series[0].points.iter().map(|p| (p.x, p.value)).collect();
    let mut stored = s.list(&bench_normalize::store::Filter::default(), false).unwrap();
    stored.reverse();
    let want: Vec<(usize, f64)> =
        stored.iter().enumerate().map(|(i, r)| (i, r.per_user_decode_tok_per_s.unwrap())).collect();
    assert_eq!(points, want);
    assert!((points[4].1 / points[0].1 - 1.25).abs() < 0.01, "{points:?}");
    drop(s);

    // Through the command line: the SVG, with each commit under its point.
    let svg = dir.join("history.svg");
    let o = bin(store)
        .args(["plot", "--history", "tpot", "--by", "commit", "--label", "branch=main", "-o"])
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc = std::fs::read_to_string(&svg).unwrap();
    let at = |t: &str| doc.find(&format!(">\n{t}\n</text>")).unwrap_or_else(|| panic!("{t} in the SVG"));
    assert!(at("c1") < at("c2") && at("c2") < at("c3") && at("c3") < at("c4"));
    assert!(doc.contains("baseline: mean") && doc.contains("Grey band"));
    // A label no run has: nothing to draw, nothing written (exit 3); the store is never the output.
    let none = dir.join("none.svg");
    let o = bin(store).args(["plot", "--history", "tpot", "--by", "image", "-o"]).arg(&none).output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(!none.exists());
    if !store.starts_with("postgres") {
        let before = std::fs::read(store).unwrap();
        let o = bin(store).args(["plot", "--history", "tpot", "-o", store]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert_eq!(std::fs::read(store).unwrap(), before);
    }
}

#[test]
fn the_history_view_needs_a_store_and_takes_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.sqlite");
    let out = dir.path().join("h.svg");
    let o = bin(&missing).args(["plot", "--history", "per-user", "-o"]).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(!out.exists() && !missing.exists());
    let o = bin(&missing)
        .args(["plot", "--history", "per-user", "-o"])
        .arg(&out)
        .arg(captured().join("vllm-s1.stdout.txt"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn a_baseline_window_takes_only_the_runs_added_within_it() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path(), "window") {
        let old = scaled(dir.path(), "old.log", 1.0);
        assert_eq!(run(&store, &["store", "add"], &[old]).status.code(), Some(0));
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let recent = scaled(dir.path(), "recent.log", 1.01);
        assert_eq!(run(&store, &["store", "add"], &[recent]).status.code(), Some(0));
        let new = scaled(dir.path(), "new.log", 1.0);
        // The last week: both stored runs; the last second: only the recent one; none within it
        // when the store's clock has moved on.
        let (code, v, err) = regress_json(&store, std::slice::from_ref(&new), &["--baseline-within", "7d"]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(v["groups"][0]["baseline_runs"].as_array().unwrap().len(), 2, "{v}");
        let (code, v, err) = regress_json(&store, std::slice::from_ref(&new), &["--baseline-within", "2s"]);
        assert_eq!(code, Some(0), "{err}");
        let inputs: Vec<&str> =
            v["groups"][0]["baseline_runs"].as_array().unwrap().iter().map(|r| r["input"].as_str().unwrap()).collect();
        assert_eq!(inputs.len(), 1, "{v}");
        assert!(inputs[0].ends_with("recent.log"), "{inputs:?}");
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let (code, _, err) = regress_json(&store, std::slice::from_ref(&new), &["--baseline-within", "1s"]);
        assert_eq!(code, Some(3), "no baseline within the last second: {err}");
        let o = bin(&store).args(["regress", "--baseline-within", "7 days"]).arg(&new).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
    }
}

/// The README's CI job, run as written (its store path moved into a temporary folder), with the
/// stand-in client of tests/fake-client playing `vllm bench serve`: the first run passes with no
/// baseline, the same run again passes, a run 20% slower fails with exit 8, and each is kept.
#[test]
fn the_readmes_ci_job_fails_on_a_regression_and_keeps_every_run() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let block = readme.split("<!-- ci-job").nth(1).expect("README has the ci-job block");
    let script = block.split("```sh\n").nth(1).unwrap().split("```").next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.sqlite");
    let script = script.replace("/cache/bench/runs.sqlite", &store.display().to_string());
    assert!(script.contains("regress") && script.contains("store add"));
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-client");
    let exe = Path::new(env!("CARGO_BIN_EXE_bench-normalize")).parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        [fake.join("bin"), exe].into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let slow = scaled(dir.path(), "slow.stdout.txt", 1.2);
    let job = |sample: &Path, commit: &str| {
        let summary = dir.path().join(format!("summary-{commit}.md"));
        let o = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("PYTHONPATH", &fake)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("FAKE_SAMPLE", sample)
            .env("FAKE_NO_FILE", "1")
            .env("MODEL", "m")
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_REF_NAME", "main")
            .env("GITHUB_SHA", commit)
            .env_remove("BENCH_NORMALIZE_STORE")
            .output()
            .unwrap();
        (o.status.code(), std::fs::read_to_string(&summary).unwrap_or_default(), text(&o.stderr))
    };
    let honest = captured().join("vllm-s1");
    let (code, _, err) = job(&honest, "c1");
    assert_eq!(code, Some(0), "first run, no baseline: {err}");
    let (code, summary, err) = job(&honest, "c2");
    assert_eq!(code, Some(0), "the same run again: {err}\n{summary}");
    assert!(summary.contains("unchanged"), "{summary}");
    let (code, summary, err) = job(&slow.with_file_name("slow"), "c3");
    assert_eq!(code, Some(8), "a run 20% slower: {err}\n{summary}");
    assert!(summary.contains("regression"), "{summary}");
    let store = store.display().to_string();
    let commits: std::collections::BTreeSet<String> =
        rows(&store).iter().map(|r| r["labels"]["commit"].as_str().unwrap().to_string()).collect();
    assert_eq!(commits, ["c1", "c2", "c3"].map(String::from).into());
}

/// `aggregate --from-store`: the stored repetitions give the summary their files give.
#[test]
fn stored_repetitions_aggregate_as_their_files_do() {
    let dir = tempfile::tempdir().unwrap();
    let reps: Vec<PathBuf> =
        [1.0, 1.03, 0.98].iter().enumerate().map(|(i, f)| scaled(dir.path(), &format!("rep{i}.log"), *f)).collect();
    let other = scaled(dir.path(), "other.log", 1.5);
    let agg = |cmd: &mut Command| {
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["groups"].as_array().unwrap().iter().map(|g| g["figures"].clone()).collect::<Vec<_>>()
    };
    let from_files = agg(bin("unused").args(["aggregate", "-f", "json"]).args(&reps));
    assert_eq!(from_files.len(), 1);
    for store in stores(dir.path(), "reps") {
        assert_eq!(run(&store, &["store", "add", "--label", "set=a"], &reps).status.code(), Some(0));
        assert_eq!(
            run(&store, &["store", "add", "--label", "set=b"], std::slice::from_ref(&other)).status.code(),
            Some(0)
        );
        let from_store = agg(bin(&store).args(["aggregate", "--from-store", "--label", "set=a", "-f", "json"]));
        assert_eq!(from_store, from_files, "{store}");
        let tpot = from_store[0].as_array().unwrap().iter().find(|f| f["figure"] == "tpot_ms").unwrap();
        assert_eq!(tpot["runs"], 3);
        assert_eq!(tpot["method"], "median-of-runs");
        // Every stored run: the other set's slower run makes a second group, never averaged in.
        let all = agg(bin(&store).args(["aggregate", "--from-store", "-f", "json"]));
        assert_eq!(all.len(), 2, "{store}");
    }
    let o = bin(dir.path().join("none.sqlite")).args(["aggregate", "--from-store"]).output().unwrap();
    assert_eq!(o.status.code(), Some(3));
}
