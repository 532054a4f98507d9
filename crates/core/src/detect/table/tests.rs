use super::*;
use crate::definition::parse;

fn def(block: &str) -> Definition {
    let text = format!(
        "id = \"t\"\ntool = \"t\"\nformat = \"stdout\"\ndescription = \"t\"\n{block}\n[[row]]\nlabel = \"x:\"\n"
    );
    parse(&text, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn lines(text: &str) -> Vec<Line> {
    text.lines().enumerate().map(|(i, t)| Line { number: i + 1, text: t.to_string(), truncated: false }).collect()
}

fn rows(d: &Definition, text: &str) -> Vec<Vec<String>> {
    let spec = d.block.as_ref().unwrap().table.as_ref().unwrap();
    bodies(d, spec, &lines(text)).into_iter().map(|b| b.lines.into_iter().map(|l| l.text).collect()).collect()
}

/// The bodies of `text` (banner `T`) read as a ruled table of runs.
fn ruled_runs(text: &str) -> Vec<Body> {
    let d = def("[block]\nbanner = '^T$'\n[block.table]\ncells = \"ruled\"\nrows = \"runs\"\n");
    let spec = d.block.as_ref().unwrap().table.as_ref().unwrap();
    bodies(&d, spec, &lines(text))
}

#[test]
fn a_metrics_table_joins_a_wrapped_label_and_keeps_na_cells() {
    let d = def("[block]\nbanner = 'Tool \\| Metrics'\n[block.table]\ncells = \"ruled\"\nrows = \"metrics\"\n");
    let text = "\
                 Tool | Metrics
┏━━━━━━━━━━━━━━━━━━┳━━━━━━━┳━━━━━━━┓
┃           Metric ┃   avg ┃   p99 ┃
┡━━━━━━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━━┩
│ Latency (ms)     │ 1,024.50 │  2.00 │
│ Throughput Per   │  78.12 │   N/A │
│ User (tok/s)     │        │       │
└──────────────────┴───────┴───────┘";
    assert_eq!(
        rows(&d, text),
        [[
            "Latency (ms) (avg): 1,024.50",
            "Latency (ms) (p99): 2.00",
            "Throughput Per User (tok/s) (avg): 78.12",
            "Throughput Per User (tok/s) (p99): N/A"
        ]]
    );
}

#[test]
fn a_runs_table_names_columns_by_their_grouped_headers() {
    let d = def(
        "[block]\nbanner = '^i .*Statistics'\nsection = '^i .*Statistics'\nsection_strip = \"i \"\n[block.table]\ncells = \"ruled\"\nrows = \"runs\"\n",
    );
    // `| TTFT |||` spans three columns; a blank header cell with spaces is not a span.
    let text = "\
i Latency Statistics
|==========|======|=====|=====|
| Benchmark | TTFT |||
| Strategy  | ms   |||
|           | Mean | Mdn | p95 |
|-----------|------|-----|-----|
| sync      | 1.5 ± 0.1 | 1.4 | 2.0* |
| conc@4    | 3.0  | 2.9 | 4.0 |
|==========|======|=====|=====|
* a footnote";
    let got = rows(&d, text);
    assert_eq!(got.len(), 2, "one run per row");
    assert_eq!(
        got[0],
        [
            "i Latency Statistics",
            "Benchmark Strategy: sync",
            "TTFT ms Mean: 1.5 ± 0.1",
            "TTFT ms Mdn: 1.4",
            "TTFT ms p95: 2.0*"
        ]
    );
    assert_eq!(got[1][1], "Benchmark Strategy: conc@4");
}

#[test]
fn aligned_columns_are_cut_at_the_rule_and_a_stray_log_line_is_skipped() {
    let d =
        def("[block]\nbanner = '=+ Summary =+'\nend = '^=+$'\n[block.table]\ncells = \"aligned\"\nrows = \"runs\"\n");
    let text = "\
========== Summary ==========
WARNING some other process printed this
Step            Req/s  P50 TPOT(ms)
--------------- ------ ------------
concurrency=1     0.59        12.80
concurrency=2        -        12.79
==============================";
    let got = rows(&d, text);
    assert_eq!(
        got,
        [
            ["Step: concurrency=1", "Req/s: 0.59", "P50 TPOT(ms): 12.80"],
            ["Step: concurrency=2", "Req/s: -", "P50 TPOT(ms): 12.79"]
        ]
    );
}

#[test]
fn csv_tables_start_after_a_blank_line_and_a_value_column_is_the_metric_alone() {
    let d = def(
        "[block]\nbanner = '^Metric,avg,'\n[block.table]\ncells = \"csv\"\nrows = \"metrics\"\nheader_rows = 1\nvalue_columns = [\"Value\"]\n",
    );
    let text =
        "Metric,avg,p99\nRequest Latency (ms),\"6,677.95\",\"6,680.80\"\n\nMetric,Value\nRequest Count (count),16.00\n";
    assert_eq!(
        rows(&d, text),
        [[
            "Request Latency (ms) (avg): 6,677.95",
            "Request Latency (ms) (p99): 6,680.80",
            "Request Count (count): 16.00"
        ]]
    );
}

#[test]
fn a_header_that_does_not_fit_its_rows_is_said() {
    let text = "T\n|===|===|===|\n| B | G ||\n| S | a | b | c |\n|---|---|---|---|\n| x | 1 | 2 | 3 |\n";
    let got = ruled_runs(text);
    assert_eq!(got[0].notes.len(), 1);
    assert_eq!(got[0].notes[0].code, "table-header-misfit");
    assert_eq!(got[0].notes[0].line, Some(3));
    // `G` over three sub-columns that do not repeat: no reading is proved, nothing is read.
    assert!(got[0].lines.is_empty(), "{:?}", got[0].lines);
    // The run's block ends with the table's last line, not with anything after it.
    assert_eq!(got[0].last_line, Some(6));
}

#[test]
fn groups_drawn_too_narrow_are_spread_over_sub_columns_that_repeat_once_per_group() {
    // Each group is drawn over two columns, but its sub-columns (`mean | p99 | n`) repeat
    // three times under the line: each group spans one repetition.
    let text = "T\n|===|\n| B | A || C || D ||\n| S | mean | p99 | n | mean | p99 | n | mean | p99 | n |\n|---|\n| x | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 |\n";
    let got = ruled_runs(text);
    assert_eq!(got[0].notes[0].code, "table-header-repaired");
    let texts: Vec<&str> = got[0].lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "B S: x",
            "A mean: 1",
            "A p99: 2",
            "A n: 3",
            "C mean: 4",
            "C p99: 5",
            "C n: 6",
            "D mean: 7",
            "D p99: 8",
            "D n: 9"
        ]
    );
}

#[test]
fn a_misfit_header_whose_sub_columns_do_not_repeat_leaves_the_table_unread() {
    // Two groups over five sub-columns: no even split, so no name is trusted.
    let text = "T\n|===|\n| B | A || C ||\n| S | mean | p99 | mean | p99 | n |\n|---|\n| x | 1 | 2 | 3 | 4 | 5 |\n";
    let got = ruled_runs(text);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].notes[0].code, "table-header-misfit");
    assert!(got[0].lines.is_empty());
}

#[test]
fn a_grid_with_rules_between_its_rows_is_one_table_and_a_row_keyed_by_a_number_names_its_cells_by_column() {
    let d = def(
        "[block]\nbanner = '^Summary:$'\nsection = '^Next:$'\nsection_strip = ':'\n[block.table]\ncells = \"ruled\"\nrows = \"metrics\"\nvalue_columns = [\"Value\"]\n",
    );
    let text = "\
Summary:
+----------+-------+
| Key      | Value |
+==========+=======+
| Requests |    16 |
+----------+-------+
| Latency  |   6.7 |
+----------+-------+
+-----+-----+
| a   | b   |
+-----+-----+
| x   | 1   |
+-----+-----+
log line
Next:
+-------------+----------+
| Percentiles | TTFT (s) |
+-------------+----------+
|     10%     |  0.0532  |
|     z       |  3       |
+-------------+----------+";
    assert_eq!(
        rows(&d, text),
        vec![vec!["Requests: 16", "Latency: 6.7", "x (b): 1", "Next:", "TTFT (s) (10%): 0.0532", "z (TTFT (s)): 3"]]
    );
}

#[test]
fn a_row_holding_a_section_header_alone_opens_the_section_and_continues_no_label() {
    let d = def(
        "[block]\nbanner = '^Summary:$'\nsection = '^── .+ ──$'\nsection_strip = '─ '\n[block.table]\ncells = \"ruled\"\nrows = \"metrics\"\nvalue_columns = [\"Value\"]\n",
    );
    let text = "\
Summary:
┌──────────────────┬───────┐
│ Metric           │ Value │
├──────────────────┼───────┤
│ ── General ──    │       │
│ Requests         │    16 │
│ ── Latency ──    │       │
│ Avg Latency (s)  │   6.7 │
│ Output Token     │  78.1 │
│ (per user)       │       │
└──────────────────┴───────┘";
    assert_eq!(
        rows(&d, text),
        vec![vec![
            "── General ──",
            "Requests: 16",
            "── Latency ──",
            "Avg Latency (s): 6.7",
            "Output Token (per user): 78.1"
        ]]
    );
}

/// A table repeating the metrics of one before it is the next run's only under the same column
/// header: stacked AIPerf tables are two runs; EvalScope's closing report (the same metrics under
/// other columns) is the same run's.
#[test]
fn a_table_repeating_metrics_is_the_next_run_only_in_the_same_layout() {
    let d = def("[block]\nbanner = '^T$'\n[block.table]\ncells = \"ruled\"\nrows = \"metrics\"\n");
    let table = |header: &str, rows: &[&str]| {
        let rule = "+---------+-----+-----+";
        format!("{rule}\n{header}\n{rule}\n{}\n{rule}\n", rows.join("\n"))
    };
    let first = table("| Metric  | avg | p99 |", &["| Latency | 1.5 | 2.5 |", "| TTFT    | 0.1 | 0.2 |"]);
    let same = table("| Metric  | avg | p99 |", &["| Latency | 1.6 | 2.6 |", "| TTFT    | 0.3 | 0.4 |"]);
    let runs = rows(&d, &format!("T\n{first}{same}"));
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[1], ["Latency (avg): 1.6", "Latency (p99): 2.6", "TTFT (avg): 0.3", "TTFT (p99): 0.4"]);
    let other = table("| Metric  | p50 | max |", &["| Latency | 1.4 | 2.6 |", "| TTFT    | 0.1 | 0.3 |"]);
    let runs = rows(&d, &format!("T\n{first}{other}"));
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].iter().any(|r| r == "Latency (max): 2.6"), "{runs:?}");
}
