//! Property tests of damaged and retyped text (see docs/formats.md, "Damaged and retyped text"):
//! every result block of every captured stdout log in `samples/captured/` and `samples/versions/`,
//! damaged as pastes are, normalizes to the same figures (`totals`, `reported`, `derived`) as the
//! clean block:
//!
//! * joined: every line break lost, column padding kept or collapsed to single spaces;
//! * hard-wrapped at any width from 40 to 120 (a terminal's wrap), with or without the pieces'
//!   trailing spaces;
//! * each of those behind a line prefix (`# `, a compose service, `[rank0]: `, a CRI timestamp);
//! * wrapped in HTML (`<pre><code>` with entities; `<br>` and `&nbsp;`; a `<table>` of label and
//!   value cells, one row a line or one cell a line), Pandoc divs, reStructuredText literal blocks,
//!   MkDocs admonitions;
//! * retyped as a Markdown table (`| Metric | Value |`, labels without colons, thousands
//!   separators).
//!
//! And templates: a block whose values are all placeholders gives no run with figures (it is said
//! to be a template); a block with some placeholders gives only the figures that were printed.

use crate::common;

use bench_normalize::report::Verdict;
use bench_normalize::{Options, Run, normalize};
use proptest::prelude::*;
use std::sync::OnceLock;

fn run_text(text: &str) -> Result<Vec<Run>, bench_normalize::Error> {
    let mut runs = Vec::new();
    normalize(text.as_bytes(), "damaged", &Options::default(), &mut |r| {
        runs.push(r);
        Ok(())
    })?;
    Ok(runs)
}

/// Each `Serving Benchmark Result` block (banner to closing line) of the captured logs, with its
/// clean run.
fn blocks() -> &'static Vec<(String, String, Run)> {
    static B: OnceLock<Vec<(String, String, Run)>> = OnceLock::new();
    B.get_or_init(|| {
        let mut out = Vec::new();
        for dir in ["captured", "versions"] {
            for path in common::sample_files(dir, ".stdout.txt") {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                let lines: Vec<&str> = text.lines().collect();
                let mut i = 0;
                while i < lines.len() {
                    if !lines[i].contains("Serving Benchmark Result") {
                        i += 1;
                        continue;
                    }
                    let Some(end) = (i + 1..lines.len())
                        .find(|&j| !lines[j].trim().is_empty() && lines[j].trim().chars().all(|c| c == '='))
                    else {
                        break;
                    };
                    let block = lines[i..=end].join("\n") + "\n";
                    let runs = run_text(&block).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    assert_eq!(runs.len(), 1, "{}", path.display());
                    out.push((common::sample_name(&path), block, runs.into_iter().next().unwrap()));
                    i = end + 1;
                }
            }
        }
        assert!(out.len() >= 30, "blocks found: {}", out.len());
        out
    })
}

fn same_figures(got: &Run, clean: &Run, what: &str) {
    assert_eq!(got.totals, clean.totals, "{what}: totals");
    assert_eq!(got.reported, clean.reported, "{what}: reported");
    assert_eq!(got.derived, clean.derived, "{what}: derived");
}

fn one_run(text: &str, what: &str) -> Run {
    let runs = run_text(text).unwrap_or_else(|e| panic!("{what}: {e}\n{text}"));
    assert_eq!(runs.len(), 1, "{what}: runs\n{text}");
    runs.into_iter().next().unwrap()
}

fn has_note(run: &Run, code: &str) -> bool {
    run.notes.iter().any(|n| n.code == code)
}

// ------------------------------------------------------------------------------------------------
// Damage

fn joined(block: &str) -> String {
    joined_as(block, true)
}

/// The block on one line: its lines joined by a space, each line's white space folded to one space
/// (`collapse`) or kept as it was (the padding between a label and its value).
fn joined_as(block: &str, collapse: bool) -> String {
    let parts: Vec<String> = block
        .lines()
        .map(|l| if collapse { l.split_whitespace().collect::<Vec<_>>().join(" ") } else { l.trim_end().to_string() })
        .filter(|l| !l.trim().is_empty())
        .collect();
    parts.join(" ") + "\n"
}

fn wrapped(block: &str, width: usize, trim: bool) -> String {
    let mut out = String::new();
    for line in block.lines() {
        let chars: Vec<char> = line.chars().collect();
        if chars.is_empty() {
            out.push('\n');
        }
        for piece in chars.chunks(width) {
            let piece: String = piece.iter().collect();
            out.push_str(if trim { piece.trim_end() } else { &piece });
            out.push('\n');
        }
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// `label: value` rows of a block (the label with its colon).
fn rows(block: &str) -> Vec<(String, String)> {
    block
        .lines()
        .filter_map(|l| {
            let (label, value) = l.split_once(": ")?;
            Some((label.trim().to_string(), value.trim().to_string()))
        })
        .filter(|(l, v)| !l.is_empty() && !v.is_empty())
        .collect()
}

/// A value with thousands separators, as people retype figures (`16384` as `16,384`).
fn thousands(v: &str) -> String {
    let (int, frac) = v.split_once('.').map_or((v, None), |(i, f)| (i, Some(f)));
    if int.len() <= 3 || !int.bytes().all(|b| b.is_ascii_digit()) {
        return v.to_string();
    }
    let mut s = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            s.push(',');
        }
        s.push(c);
    }
    match frac {
        Some(f) => format!("{s}.{f}"),
        None => s,
    }
}

fn markup(block: &str, kind: usize) -> String {
    let indented = |pad: &str| {
        block
            .lines()
            .map(|l| if l.trim().is_empty() { String::new() } else { format!("{pad}{l}") })
            .collect::<Vec<_>>()
            .join("\n")
    };
    match kind {
        0 => format!("<p>Results:</p>\n<pre><code>{}</code></pre>\n", escape(block)),
        1 => {
            let lines: Vec<String> = block.lines().map(|l| escape(l).replace("  ", " &nbsp;")).collect();
            format!("<p>{}</p>\n", lines.join("<br>\n"))
        }
        2 => {
            let cells: Vec<String> = rows(block)
                .iter()
                .map(|(l, v)| format!("<tr><td>{}</td><td>{}</td></tr>", escape(l.trim_end_matches(':')), escape(v)))
                .collect();
            format!("<table>\n<tr><th>Metric</th><th>Value</th></tr>\n{}\n</table>\n", cells.join("\n"))
        }
        3 => {
            let cells: Vec<String> = rows(block)
                .iter()
                .map(|(l, v)| format!("  <tr>\n    <td>{}</td>\n    <td>{}</td>\n  </tr>", escape(l), escape(v)))
                .collect();
            format!("<table>\n{}\n</table>\n", cells.join("\n"))
        }
        4 => format!("::: {{.output}}\n{block}:::\n"),
        5 => format!("The output::\n\n{}\n\nDone.\n", indented("    ")),
        6 => format!("!!! note \"Output\"\n\n{}\n", indented("    ")),
        7 => format!("??? example \"Result\"\n    ```\n{}\n    ```\n", indented("    ")),
        _ => {
            let mut t = String::from("| Metric | Value |\n|---|---:|\n");
            for (l, v) in rows(block) {
                t.push_str(&format!("| {} | {} |\n", l.trim_end_matches(':'), thousands(&v)));
            }
            t
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Templates

const PLACEHOLDERS: &[&str] = &["xx.xx", "XX", "...", "[result]", "<value>", "N/A", "TBD", "x.xx"];

/// The block with the values of the rows picked by `pick` replaced by a placeholder.
fn templated(block: &str, placeholder: &str, pick: &dyn Fn(usize) -> bool) -> String {
    let mut out = String::new();
    for (i, line) in block.lines().enumerate() {
        match line.split_once(": ") {
            Some((label, value)) if !value.trim().is_empty() && pick(i) => {
                let pad = value.len() - value.trim_start().len();
                out.push_str(&format!("{label}: {}{placeholder}\n", " ".repeat(pad)));
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Every figure in `got` is the one in `want` at the same place (an empty place, a null, is
/// allowed; text such as `itl_per` follows the variant, which the rows left tell, and is skipped).
fn printed(got: &serde_json::Value, want: &serde_json::Value) -> bool {
    use serde_json::Value;
    match got {
        Value::Null | Value::String(_) | Value::Bool(_) => true,
        Value::Number(_) => Some(got) == Some(want),
        Value::Array(a) => a.iter().enumerate().all(|(j, x)| want.get(j).is_some_and(|w| printed(x, w)) || x.is_null()),
        Value::Object(o) => o.iter().all(|(k, x)| want.get(k).is_some_and(|w| printed(x, w))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn joined_lines_give_the_same_figures(i in any::<prop::sample::Index>(), collapse in any::<bool>()) {
        let (name, block, clean) = &blocks()[i.index(blocks().len())];
        let what = format!("{name} joined (padding collapsed: {collapse})");
        let run = one_run(&joined_as(block, collapse), &what);
        same_figures(&run, clean, &what);
        prop_assert!(has_note(&run, "repaired-joined-lines"), "{}: no repair note", what);
    }

    #[test]
    fn hard_wraps_give_the_same_figures(i in any::<prop::sample::Index>(), width in 40usize..=120, trim in any::<bool>()) {
        let (name, block, clean) = &blocks()[i.index(blocks().len())];
        // A banner whose title the wrap cuts is not found (see docs/formats.md): widths from the
        // title's end on.
        let banner = block.lines().next().unwrap();
        let title_end = banner.find("Result").unwrap() + "Result =".len();
        prop_assume!(width >= title_end);
        let text = wrapped(block, width, trim);
        let what = format!("{name} wrapped at {width} (trimmed: {trim})");
        let run = one_run(&text, &what);
        same_figures(&run, clean, &what);
        let wraps = block.lines().any(|l| l.chars().count() > width && l.chars().skip(width).any(|c| !c.is_whitespace()));
        if wraps {
            prop_assert!(has_note(&run, "repaired-wrapped-lines"), "{}: no repair note", what);
        }
    }

    #[test]
    fn markup_gives_the_same_figures(i in any::<prop::sample::Index>(), kind in 0usize..9) {
        let (name, block, clean) = &blocks()[i.index(blocks().len())];
        let what = format!("{name} markup {kind}");
        let run = one_run(&markup(block, kind), &what);
        if kind <= 3 {
            prop_assert!(has_note(&run, "repaired-markup"), "{}: no repair note", what);
        }
        if kind >= 2 && kind != 4 && kind <= 3 || kind == 8 {
            // A table of rows has no banner, and no line before its rows: the figures of its rows.
            assert_eq!(run.totals, clean.totals, "{what}: totals");
            assert_eq!(run.reported, clean.reported, "{what}: reported");
            assert_eq!(run.derived, clean.derived, "{what}: derived");
        } else {
            same_figures(&run, clean, &what);
        }
    }

    #[test]
    fn a_template_gives_no_figures(i in any::<prop::sample::Index>(), p in 0..PLACEHOLDERS.len()) {
        let (name, block, _) = &blocks()[i.index(blocks().len())];
        let text = templated(block, PLACEHOLDERS[p], &|_| true);
        let what = format!("{name} template {}", PLACEHOLDERS[p]);
        // Nothing usable: no run, or runs without a figure, said to be a template.
        if let Ok(runs) = run_text(&text) {
            for run in runs {
                prop_assert!(run.verdict == Verdict::Unusable, "{}: verdict {:?}", what, run.verdict);
                prop_assert!(run.totals.is_empty() && run.reported.is_empty(), "{}: figures {:?} {:?}", what, run.totals, run.reported);
                prop_assert!(has_note(&run, "template"), "{}: no template note", what);
            }
        }
    }

    #[test]
    fn a_partly_filled_template_gives_only_printed_figures(i in any::<prop::sample::Index>(), p in 0..PLACEHOLDERS.len(), seed in any::<u64>()) {
        let (name, block, clean) = &blocks()[i.index(blocks().len())];
        let pick = |line: usize| (seed >> (line % 64)) & 1 == 1;
        let text = templated(block, PLACEHOLDERS[p], &pick);
        let what = format!("{name} partly templated with {}", PLACEHOLDERS[p]);
        if let Ok(runs) = run_text(&text) {
            for run in runs {
                // Every figure read is one the clean block printed.
                let got = serde_json::to_value(&run.totals).unwrap();
                let want = serde_json::to_value(&clean.totals).unwrap();
                for (k, v) in got.as_object().unwrap() {
                    prop_assert_eq!(Some(v), want.get(k), "{}: totals.{}", what, k);
                }
                let got = serde_json::to_value(&run.reported).unwrap();
                let want = serde_json::to_value(&clean.reported).unwrap();
                prop_assert!(printed(&got, &want), "{}: reported {} vs {}", what, got, want);
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Damage behind a line prefix

const PREFIXES: &[&str] = &["# ", "vllm-1  | ", "[rank0]: ", "2024-05-01T12:00:03.123456Z stdout F "];

/// Each line with `prefix` before it.
fn prefixed(text: &str, prefix: &str) -> String {
    text.lines().map(|l| format!("{prefix}{l}\n")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// A damaged block behind a prefix: wrapped and then prefixed (a commented-out paste: each
    /// piece carries the prefix), prefixed and then wrapped (a terminal wrapping a container's log:
    /// the rest of a line carries none), or joined after its prefix.
    #[test]
    fn prefixed_damage_gives_the_same_figures(
        i in any::<prop::sample::Index>(),
        p in 0..PREFIXES.len(),
        how in 0usize..3,
        width in 40usize..=120,
        trim in any::<bool>(),
    ) {
        let (name, block, clean) = &blocks()[i.index(blocks().len())];
        let prefix = PREFIXES[p];
        let banner = block.lines().next().unwrap();
        let title_end = banner.find("Result").unwrap() + "Result =".len();
        let text = match how {
            0 => {
                prop_assume!(width >= title_end);
                prefixed(&wrapped(block, width, trim), prefix)
            }
            1 => {
                let width = width + prefix.len();
                prop_assume!(width >= prefix.len() + title_end);
                wrapped(&prefixed(block, prefix), width, trim)
            }
            _ => format!("{prefix}{}", joined(block)),
        };
        let what = format!("{name} behind {prefix:?}, damage {how}, width {width} (trimmed: {trim})");
        let run = one_run(&text, &what);
        same_figures(&run, clean, &what);
    }
}

// ------------------------------------------------------------------------------------------------
// The samples in samples/damaged (see its README.md)

fn sample(name: &str) -> Result<Vec<Run>, bench_normalize::Error> {
    common::normalize_file(&common::samples_dir().join("damaged").join(name))
}

/// The clean block a damaged sample was made from.
fn clean_block_of(file: &str) -> Run {
    let name = format!("captured/{file}");
    blocks().iter().find(|(n, _, _)| *n == name).map(|(_, _, r)| r.clone()).unwrap()
}

#[test]
fn damaged_samples_read_as_their_clean_block() {
    let clean = clean_block_of("vllm-s2.stdout.txt");
    for (file, note) in [
        ("vllm-s2-joined.txt", "repaired-joined-lines"),
        ("vllm-s2-wrapped-40.txt", "repaired-wrapped-lines"),
        ("vllm-s2-html-br.txt", "repaired-markup"),
    ] {
        let runs = sample(file).unwrap();
        assert_eq!(runs.len(), 1, "{file}");
        same_figures(&runs[0], &clean, file);
        assert!(has_note(&runs[0], note), "{file}: {note}");
    }
    // A table of cells has no section headers: the figures of its rows are the same.
    let table = sample("vllm-s2-html-table.txt").unwrap().remove(0);
    assert_eq!((&table.totals, &table.reported), (&clean.totals, &clean.reported));
    assert!(has_note(&table, "repaired-markup"));
}

#[test]
fn the_2023_paragraph_joined_reads_as_printed() {
    let joined = sample("vllm-script-0.1-joined.txt").unwrap().remove(0);
    let clean = common::normalize_file(&common::samples_dir().join("rendered/vllm-script-0.1.txt")).unwrap().remove(0);
    same_figures(&joined, &clean, "2023 paragraph");
    assert!(has_note(&joined, "repaired-joined-lines"));
}

#[test]
fn templates_are_said_to_be_templates() {
    let t = sample("vllm-template-xx.txt").unwrap().remove(0);
    assert_eq!(t.verdict, Verdict::Unusable);
    assert!(t.totals.is_empty() && t.reported.is_empty());
    assert!(has_note(&t, "template"));
    assert!(t.checks.iter().any(|c| c.id == "key-figures" && c.message.starts_with("a template")));
    // Partly filled: what is real is read, the TPOT and ITL placeholders are absent.
    let p = sample("vllm-s2-partly-template.txt").unwrap().remove(0);
    let clean = clean_block_of("vllm-s2.stdout.txt");
    assert_eq!(p.totals, clean.totals);
    assert_eq!(p.reported.get("ttft_ms"), clean.reported.get("ttft_ms"));
    assert_eq!(p.reported.get("tpot_ms"), None);
    assert_eq!(p.reported.get("itl_ms"), None);
    assert!(has_note(&p, "template-partial"));
}

#[test]
fn published_damaged_pastes() {
    // Padding collapsed on a docs page: every row read.
    let s = sample("sglang-docs-collapsed-padding.txt").unwrap().remove(0);
    assert_eq!(s.totals.number("successful_requests"), Some(10.0));
    assert_eq!(s.totals.number("output_tokens"), Some(2784.0));
    // The banner glued to a tqdm bar; the paste ends before the latency rows.
    let v = sample("vllm-pr10880-banner-after-bar.txt").unwrap().remove(0);
    assert_eq!(v.totals.number("input_tokens"), Some(39247.0));
    assert_eq!(v.totals.number("duration_s"), Some(9.16));
    // Two rows retyped in bold (`**label: value**`) in an issue: read without the markers, with
    // the figures the paste printed.
    let b = sample("vllm-issue5316-bold-rows.md").unwrap().remove(0);
    assert!(has_note(&b, "repaired-emphasis"));
    assert_eq!(b.totals.number("duration_s"), Some(118.85));
    assert_eq!(b.totals.number("successful_requests"), Some(1000.0));
    assert_eq!(b.totals.number("input_tokens"), Some(686000.0));
    assert_eq!(b.totals.number("output_tokens"), Some(56000.0));
    let reported = serde_json::to_value(&b.reported).unwrap();
    assert_eq!(reported["request_per_s"], 8.41);
    assert_eq!(reported["ttft_ms"]["mean"], 47476.0);
    assert_eq!(reported["tpot_ms"]["p99"], 338.66);
}

#[test]
fn a_markdown_table_with_runs_as_columns_is_not_read_as_one_run() {
    // Published: two runs side by side. Before, the first column's output and request rates were
    // read as "the" run (accepted, exit 0), the second run lost without a word.
    let e = sample("aiperf-pr3699-markdown-two-runs.md").unwrap_err();
    assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("passed over: line 15: a Markdown table with 2 value columns"), "{msg}");
    assert!(msg.contains("| Output Token Throughput (tokens/sec) | 67.00 | 60.70 |"), "{msg}");
    // Said once per table, not once per row.
    assert_eq!(msg.matches("value columns").count(), 1, "{msg}");
}

/// A captured block retyped as a Markdown table with `columns` value columns: each row's value,
/// then the same figure scaled (another run's, or another statistic's).
fn markdown_columns(block: &str, columns: usize) -> String {
    let mut t = String::from("| Metric |");
    for c in 0..columns {
        t.push_str(&format!(" run {c} |"));
    }
    t.push_str("\n|---|");
    t.push_str(&"---:|".repeat(columns));
    t.push('\n');
    for (l, v) in rows(block) {
        t.push_str(&format!("| {} |", l.trim_end_matches(':')));
        for c in 0..columns {
            let cell = match v.trim().parse::<f64>() {
                Ok(x) if c > 0 => format!("{:.2}", x * (1.0 + c as f64 / 3.0)),
                _ => thousands(&v),
            };
            t.push_str(&format!(" {cell} |"));
        }
        t.push('\n');
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Any captured block retyped with two to four value columns: no figure is read from it
    /// (which column is which is in the header alone), and when nothing is read the message
    /// says what was passed over.
    #[test]
    fn markdown_value_columns_give_no_figures(i in any::<prop::sample::Index>(), columns in 2usize..=4) {
        let (name, block, _) = &blocks()[i.index(blocks().len())];
        let text = markdown_columns(block, columns);
        match run_text(&text) {
            Ok(runs) => {
                for r in &runs {
                    let figures = serde_json::to_value(&r.reported).unwrap().as_object().map_or(0, |o| o.len())
                        + serde_json::to_value(&r.totals).unwrap().as_object().map_or(0, |o| o.len());
                    prop_assert_eq!(figures, 0, "{} with {} columns: figures read\n{}", name, columns, text);
                }
            }
            Err(e) => {
                prop_assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult);
                prop_assert!(e.to_string().contains("value columns"), "{}: {}", name, e);
            }
        }
    }
}

#[test]
fn a_lone_row_value_continuation_is_not_guessed() {
    // A row that ends in its value, then one word, with no wrap width proved: left unread.
    let text = "============ Serving Benchmark Result ============\nSuccessful requests:                     16\n\
Benchmark duration (s):                  10.42\nTotal input tokens:                      40\n96\n\
Total generated tokens:                  2048\nMean TTFT (ms):                          62.09\n\
==================================================\n";
    let run = one_run(text, "continuation");
    assert_eq!(run.totals.number("input_tokens"), None);
    assert!(has_note(&run, "ambiguous-wrap"));
    assert_eq!(run.totals.number("output_tokens"), Some(2048.0));
}
