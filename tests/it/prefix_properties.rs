//! Property tests of line prefixes: every captured stdout log in `samples/captured/` and
//! `samples/versions/`, with every line put behind a prefix of the kinds CI systems, container
//! runtimes, clusters, launchers, loggers and comments print, normalizes to the same figures as
//! the clean log; and prefixed noise holds no run.
//!
//! The prefix families (see [`Family`]): comment markers, nested and indented (`# `, `    # `,
//! `// `, `-- `, `; `, `> > `); docker compose (`bench-1  | `, any name and padding); `kubectl logs
//! --timestamps` (RFC 3339 with nanoseconds, trailing zeros trimmed: the width changes from line
//! to line); the Kubernetes CRI log format (`<time> stdout F `); GitHub Actions (seven fractional
//! digits); Ray (`(pid=N) `, `(Actor pid=N, ip=A.B.C.D) `); torchrun (`[rankN]: `); Python
//! logging's default format (`INFO:name:`); syslog (`May  1 12:00:01 host app[123]: `, the day
//! padded to two columns); a timestamped logger (`2024-05-01 12:00:01,123 - INFO - `); vLLM's
//! logger (`INFO 05-01 12:00:01 [serve.py:12] `, the line number changing too). Times advance from
//! line to line.
//!
//! Variations on top: lines of the block left without the prefix (the banner keeps it: the prefix
//! is learned from the banner's line; so does a table, printed by one process), and lines of other processes interleaved (with the same
//! prefix, another process's prefix, or none), at most one in a row inside a block and never
//! between a block and its trailer (what `tests/it/noise_properties.rs` holds without prefixes).
//!
//! Compared per run: parser, variant, whether the block was cut off, `workload`, `totals`,
//! `reported`, `derived`, each check's id, severity and status, and the verdict.

use crate::common;

use std::sync::OnceLock;

use bench_normalize::Run;
use common::run_all;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// A small deterministic generator, seeded by proptest (which then shrinks the seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u64) as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Comment,
    Compose,
    Kubectl,
    Cri,
    GithubActions,
    Ray,
    RayActor,
    Torchrun,
    PythonLogging,
    Syslog,
    Logger,
    VllmLogger,
}

const FAMILIES: &[Family] = &[
    Family::Comment,
    Family::Compose,
    Family::Kubectl,
    Family::Cri,
    Family::GithubActions,
    Family::Ray,
    Family::RayActor,
    Family::Torchrun,
    Family::PythonLogging,
    Family::Syslog,
    Family::Logger,
    Family::VllmLogger,
];

/// The prefixes of one stream: what stays the same on every line is chosen once (a service's
/// name and padding, a pid, a rank, nested comment markers), what changes (times, line numbers)
/// is drawn per line.
struct Prefixer {
    family: Family,
    rng: Rng,
    /// Seconds since the start of the stream.
    clock: u64,
    fixed: String,
    pid: u64,
}

impl Prefixer {
    fn new(family: Family, seed: u64) -> Prefixer {
        let mut rng = Rng(seed | 1);
        let fixed = match family {
            Family::Comment => {
                let marker = rng.pick(&["#", "//", "--", ";", ">"]);
                let depth = 1 + rng.below(3) as usize;
                let indent = " ".repeat(rng.below(9) as usize);
                format!("{indent}{}", format!("{marker} ").repeat(depth))
            }
            Family::Compose => {
                let name = rng.pick(&["bench", "client", "vllm-bench", "sglang_bench", "loadgen"]);
                let n = 1 + rng.below(12);
                format!("{name}-{n}{} | ", " ".repeat(1 + rng.below(8) as usize))
            }
            Family::PythonLogging => {
                format!("{}:{}:", rng.pick(&["INFO", "WARNING"]), rng.pick(&["root", "bench", "__main__"]))
            }
            _ => String::new(),
        };
        let pid = 1 + rng.below(4_000_000);
        Prefixer { family, rng, clock: rng_start(seed), fixed, pid }
    }

    /// A foreign process's prefixer of the same family (another service, pid, rank or logger).
    fn other(&self, seed: u64) -> Prefixer {
        let mut p = Prefixer::new(self.family, seed ^ 0x9e37_79b9_7f4a_7c15);
        match self.family {
            Family::Compose => {
                p.fixed = format!("server-1{}| ", " ".repeat(self.fixed.len().saturating_sub(10).max(1)))
            }
            Family::PythonLogging => p.fixed = "WARNING:urllib3.connectionpool:".to_string(),
            Family::Comment => p.fixed = String::new(),
            _ => p.pid = self.pid + 1,
        }
        p
    }

    fn next(&mut self) -> String {
        self.clock += self.rng.below(3);
        let (h, m, s) = ((self.clock / 3600) % 24, (self.clock / 60) % 60, self.clock % 60);
        let day = 1 + (self.clock / 86_400) % 28;
        let nanos = self.rng.below(1_000_000_000);
        match self.family {
            Family::Comment | Family::Compose | Family::PythonLogging => self.fixed.clone(),
            // Go's RFC3339Nano: trailing zeros of the fraction trimmed.
            Family::Kubectl | Family::Cri => {
                let frac = format!("{nanos:09}");
                let frac = frac.trim_end_matches('0');
                let frac = if frac.is_empty() { "1" } else { frac };
                let tail = if self.family == Family::Cri { " stdout F " } else { " " };
                format!("2024-05-{day:02}T{h:02}:{m:02}:{s:02}.{frac}Z{tail}")
            }
            Family::GithubActions => format!("2024-05-{day:02}T{h:02}:{m:02}:{s:02}.{:07}Z ", nanos / 100),
            Family::Ray => format!("(pid={}) ", self.pid),
            Family::RayActor => format!("(BenchActor pid={}, ip=10.{}.0.7) ", self.pid, self.pid % 250),
            Family::Torchrun => format!("[rank{}]: ", self.pid % 8),
            Family::Syslog => format!("May {day:>2} {h:02}:{m:02}:{s:02} gpu-node-3 bench[{}]: ", self.pid),
            Family::Logger => format!("2024-05-{day:02} {h:02}:{m:02}:{s:02},{:03} - INFO - ", nanos / 1_000_000),
            Family::VllmLogger => {
                format!("INFO 05-{day:02} {h:02}:{m:02}:{s:02} [serve.py:{}] ", 90 + self.rng.below(1200))
            }
        }
    }
}

fn rng_start(seed: u64) -> u64 {
    // Somewhere in the day, near enough to midnight that the day rolls over now and then.
    86_400 - 600 + seed % 1_200
}

/// Log lines of other processes: none is a row, a section header, a closing line or (inside a
/// table) a table line.
const FOREIGN: &[&str] = &[
    "INFO 08-28 22:41:28 [metrics.py:351] Avg prompt throughput: 0.0 tokens/s",
    "INFO: 127.0.0.1:40312 - \"POST /v1/completions HTTP/1.1\" 200 OK",
    "[2025-08-28 22:41:28] Decode batch. #running-req: 4, #token: 1234, token usage: 0.01, gen throughput (token/s): 300.00, #queue-req: 0",
    "WARNING 08-28 22:41:30 [scheduler.py:1560] Sequence group 7 is preempted by PreemptionMode.RECOMPUTE mode.",
    "W1129 18:50:53.011000 2957 torch/_opaque_base.py:6] torch._opaque_base is deprecated",
];

// ------------------------------------------------------------------------------------------------
// The samples

struct Sample {
    name: String,
    lines: Vec<String>,
    /// Each run's first and last line (1-based), and whether it was cut off.
    blocks: Vec<(usize, usize, bool)>,
    /// Lines (1-based, inclusive) from a block's closing line to its trailer's banner.
    trailer_gaps: Vec<(usize, usize)>,
    expected: Vec<Value>,
}

impl Sample {
    /// Whether a foreign line may go before line `k` (0-based): inside a closed block (not between
    /// it and its trailer), or where no block reaches (a cut-off block reaches to the next one).
    fn may_insert_before(&self, k: usize) -> bool {
        let n = k + 1;
        if self.trailer_gaps.iter().any(|&(c, t)| c <= n && n <= t) {
            return false;
        }
        for (i, &(first, last, cut)) in self.blocks.iter().enumerate() {
            let reach = if cut { self.blocks.get(i + 1).map_or(usize::MAX, |b| b.0) } else { last };
            if first < n && n <= last && !cut {
                return true;
            }
            if first <= n && n <= reach {
                return false;
            }
        }
        true
    }

    /// Whether line `k` (0-based) must keep the prefix: a banner (the prefix is learned from it),
    /// or a line of a table block (a table is printed by one process: behind a prefix, a table
    /// line without it is taken for another process's line).
    fn keeps_prefix(&self, k: usize) -> bool {
        let n = k + 1;
        self.blocks.iter().any(|&(first, last, _)| {
            first == n || (first <= n && n <= last && !self.lines[first - 1].contains("Serving Benchmark Result"))
        })
    }
}

fn project(run: &Run) -> Value {
    common::figures_of(run)
}

fn samples() -> &'static [Sample] {
    static SAMPLES: OnceLock<Vec<Sample>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut paths = common::sample_files("captured", ".stdout.txt");
        paths.extend(common::sample_files("versions", ".stdout.txt"));
        assert!(!paths.is_empty(), "no stdout samples");
        paths
            .iter()
            .map(|p| {
                let name = common::sample_name(p);
                let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{name}: {e}"));
                let runs = run_all(&bytes, &name).unwrap_or_else(|e| panic!("{name}: the clean sample: {e}"));
                assert!(!runs.is_empty(), "{name}: no run in the clean sample");
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let body = text.strip_suffix('\n').unwrap_or(&text);
                let lines: Vec<String> = body.split('\n').map(str::to_string).collect();
                // Where every block is, a summary's rows too (folded into the runs they repeat).
                let spans = common::run_all_unfolded(&bytes, &name).unwrap();
                let blocks: Vec<(usize, usize, bool)> = spans
                    .iter()
                    .map(|r| {
                        let first = r.source.first_line.expect("a text run has a first line");
                        (first, r.source.last_line.expect("a text run has a last line"), r.source.truncated.is_some())
                    })
                    .collect();
                let trailer_gaps = blocks.iter().filter_map(|&(f, l, _)| trailer_gap(&lines, f, l)).collect();
                Sample { name, lines, blocks, trailer_gaps, expected: runs.iter().map(project).collect() }
            })
            .collect()
    })
}

/// A block's closing rule and its trailer's banner (`=== Steady-State Metrics ===`), when the
/// run's lines reach past the closing line into a trailer.
fn trailer_gap(lines: &[String], first: usize, last: usize) -> Option<(usize, usize)> {
    let text = |n: usize| lines.get(n - 1).map(|l| l.trim()).unwrap_or_default();
    let closing = (first + 1..last).find(|&n| text(n).len() >= 20 && text(n).chars().all(|c| c == '='))?;
    let banner = (closing + 1..=last).find(|&n| {
        let t = text(n);
        t.starts_with("===") && t.ends_with("===") && t.chars().any(|c| c.is_alphabetic())
    })?;
    Some((closing, banner))
}

// ------------------------------------------------------------------------------------------------
// Rendering

/// How a stream is put behind prefixes.
#[derive(Debug, Clone)]
struct Variation {
    family: Family,
    seed: u64,
    /// Out of 100: the chance that a line other than a banner is left without the prefix.
    bare: u64,
    /// Out of 100: the chance that a foreign line goes before a line where one may.
    foreign: u64,
}

fn render(sample: &Sample, v: &Variation) -> Vec<u8> {
    let mut ours = Prefixer::new(v.family, v.seed);
    let mut theirs = ours.other(v.seed);
    let mut rng = Rng(v.seed.rotate_left(17) | 1);
    let mut out = String::new();
    for (k, line) in sample.lines.iter().enumerate() {
        if sample.may_insert_before(k) && rng.below(100) < v.foreign {
            let text = rng.pick(FOREIGN);
            let prefix = match rng.below(3) {
                0 => ours.next(),
                1 => theirs.next(),
                _ => String::new(),
            };
            out.push_str(&prefix);
            out.push_str(text);
            out.push('\n');
        }
        let prefix = ours.next();
        if sample.keeps_prefix(k) || rng.below(100) >= v.bare {
            out.push_str(&prefix);
        }
        out.push_str(line);
        out.push('\n');
    }
    out.into_bytes()
}

fn check(sample: &Sample, v: &Variation) -> Result<(), String> {
    let bytes = render(sample, v);
    let runs = run_all(&bytes, &sample.name).map_err(|e| format!("{} {v:?}: {e}", sample.name))?;
    let got: Vec<Value> = runs.iter().map(project).collect();
    if got != sample.expected {
        // (The whole input, for a look at a failure.)
        let _ = std::fs::write(std::env::temp_dir().join("prefix-failure.txt"), &bytes);
        let text = String::from_utf8_lossy(&bytes);
        let head: String = text.lines().take(80).collect::<Vec<_>>().join("\n");
        return Err(format!(
            "{} {v:?}: {} runs, expected {}\n{}\nfirst lines:\n{head}",
            sample.name,
            got.len(),
            sample.expected.len(),
            first_difference(&got, &sample.expected)
        ));
    }
    Ok(())
}

fn first_difference(got: &[Value], expected: &[Value]) -> String {
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        if g != e {
            for k in ["parser", "variant", "cut_off", "workload", "totals", "reported", "derived", "checks", "verdict"]
            {
                if g[k] != e[k] {
                    return format!("run {i}: {k}: got {} expected {}", g[k], e[k]);
                }
            }
        }
    }
    String::new()
}

// ------------------------------------------------------------------------------------------------
// Tests

/// Every sample behind every family, every line prefixed.
#[test]
fn every_sample_behind_every_family_reads_the_same() {
    let mut failures = Vec::new();
    for sample in samples() {
        for (i, family) in FAMILIES.iter().enumerate() {
            let v = Variation { family: *family, seed: 7 + i as u64, bare: 0, foreign: 0 };
            if let Err(e) = check(sample, &v) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{} failures; the first:\n{}", failures.len(), failures[0]);
}

/// The examples of the task, each as its own regression case on one captured log.
#[test]
fn named_prefixes_each_read_the_same() {
    let sample = samples().iter().find(|s| s.name.ends_with("vllm-s2.stdout.txt")).expect("vllm-s2");
    let fixed = [
        "# ",
        "    # ",
        "// ",
        "-- ",
        "; ",
        "> > ",
        "service-1  | ",
        "[rank0]: ",
        "(pid=123) ",
        "(Actor pid=123, ip=10.0.0.1) ",
        "INFO:name:",
    ];
    for prefix in fixed {
        let text: String = sample.lines.iter().map(|l| format!("{prefix}{l}\n")).collect();
        let runs = run_all(text.as_bytes(), "x").unwrap_or_else(|e| panic!("{prefix:?}: {e}"));
        let got: Vec<Value> = runs.iter().map(project).collect();
        assert_eq!(got, sample.expected, "{prefix:?}");
    }
    // Times and counters that change from line to line.
    let varying: [fn(usize) -> String; 5] = [
        |i| format!("2024-05-01T12:00:{:02}.{}Z ", i % 60, 123_456_789 / (1 + i % 7)),
        |i| format!("2024-05-01T12:00:{:02}.{:09}Z stdout F ", i % 60, i * 7919),
        |i| format!("2024-05-01T12:00:{:02}.{:07}Z ", i % 60, i * 31),
        |i| format!("May {:>2} 12:00:{:02} host app[123]: ", 1 + i / 30, i % 60),
        |i| format!("INFO 05-01 12:00:{:02} [file.py:{}] ", i % 60, 9 + i * 3),
    ];
    for (n, prefix) in varying.iter().enumerate() {
        let text: String = sample.lines.iter().enumerate().map(|(i, l)| format!("{}{l}\n", prefix(i))).collect();
        let runs = run_all(text.as_bytes(), "x").unwrap_or_else(|e| panic!("varying prefix {n}: {e}"));
        let got: Vec<Value> = runs.iter().map(project).collect();
        assert_eq!(got, sample.expected, "varying prefix {n}");
    }
    let logger: String = sample
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("2024-05-01 12:00:{:02},{:03} - INFO - {l}\n", i % 60, i * 37 % 1000))
        .collect();
    let got: Vec<Value> = run_all(logger.as_bytes(), "x").unwrap().iter().map(project).collect();
    assert_eq!(got, sample.expected, "timestamped logger");
}

/// Prefixed noise holds no run: server logs and rows without a banner; banners among log lines
/// without a row; and a mix of the two reads to the runs the same lines without prefixes read to.
#[test]
fn prefixed_noise_holds_no_run() {
    let rows = [
        "Mean TTFT (ms):                          12.34",
        "Successful requests:                     16",
        "Maximum request concurrency: 4",
        "---------------Time to First Token----------------",
        "==================================================",
    ];
    let banner = "============ Serving Benchmark Result ============";
    let no_banner: Vec<&str> =
        FOREIGN.iter().copied().chain(rows).chain(["", "Starting main benchmark run..."]).collect();
    let no_rows: Vec<&str> = FOREIGN.iter().copied().chain([banner, ""]).collect();
    let mixed: Vec<&str> = no_banner.iter().copied().chain([banner]).collect();
    for (i, family) in FAMILIES.iter().enumerate() {
        for (kind, lines) in
            [("rows without a banner", &no_banner), ("banners without rows", &no_rows), ("mixed", &mixed)]
        {
            let mut p = Prefixer::new(*family, 99 + i as u64);
            let mut rng = Rng(1234 + i as u64);
            let (mut prefixed, mut bare) = (String::new(), String::new());
            for _ in 0..400 {
                let line = rng.pick(lines);
                prefixed.push_str(&p.next());
                for t in [&mut prefixed, &mut bare] {
                    t.push_str(line);
                    t.push('\n');
                }
            }
            let _ = std::fs::write(std::env::temp_dir().join("prefix-noise.txt"), &prefixed);
            let runs = |text: &str| match run_all(text.as_bytes(), "noise") {
                Ok(runs) => runs.iter().map(project).collect::<Vec<Value>>(),
                Err(e) => {
                    assert_eq!(e.exit_code() as i32, 3, "{family:?} {kind}: {e}");
                    Vec::new()
                }
            };
            let got = runs(&prefixed);
            if kind == "mixed" {
                assert_eq!(got, runs(&bare), "{family:?} {kind}");
            } else {
                assert!(got.is_empty(), "{family:?} {kind}: {} runs in noise", got.len());
            }
        }
    }
}

fn variation() -> impl Strategy<Value = Variation> {
    (any::<Index>(), any::<u64>(), 0u64..40, 0u64..30).prop_map(|(f, seed, bare, foreign)| Variation {
        family: FAMILIES[f.index(FAMILIES.len())],
        seed,
        bare,
        foreign,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any family, any stream's fixed parts and times, some lines of the block without the
    /// prefix, other processes' lines in between: the same figures.
    #[test]
    fn prefixed_streams_read_the_same(s in any::<Index>(), v in variation()) {
        let sample = &samples()[s.index(samples().len())];
        let r = check(sample, &v);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}
