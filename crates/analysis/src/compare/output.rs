//! The comparison written for people: a table, or Markdown for a pull request.

#[allow(unused_imports)]
use super::*;

// ------------------------------------------------------------------------------------------------
// Output

pub(super) fn cell(s: Option<&Spread>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.runs == 1 => show(s.median),
        Some(s) => format!("{} ({}-{}, n={})", show(s.median), show(s.min), show(s.max), s.runs),
    }
}

pub(super) fn ratio_cell(r: &FigureRow) -> String {
    match (r.outcome, r.ratio) {
        (Outcome::Refused, _) => "refused".into(),
        (Outcome::Missing, _) => "-".into(),
        (_, Some(x)) => format!("{x:.3}"),
        (_, None) => "-".into(),
    }
}

pub(super) fn note_cell(r: &FigureRow, marks: &[usize]) -> String {
    let mut parts = Vec::new();
    match r.within_spread {
        Some(true) => parts.push("within spread".to_string()),
        Some(false) => parts.push("beyond spread".to_string()),
        None => {}
    }
    if r.outcome == Outcome::Warned {
        parts.push("warning".into());
    }
    if !marks.is_empty() {
        parts.push(marks.iter().map(|m| format!("[{m}]")).collect::<String>());
    }
    parts.join(" ")
}

/// Footnotes of a pair: each reason once, numbered; per figure the numbers of its reasons.
pub(super) fn footnotes(p: &Pair) -> (Vec<String>, Vec<Vec<usize>>) {
    let mut notes: Vec<String> = Vec::new();
    let mut marks = Vec::new();
    for r in &p.figures {
        let mut m = Vec::new();
        for reason in &r.reasons {
            let n = match notes.iter().position(|x| x == reason) {
                Some(i) => i + 1,
                None => {
                    notes.push(reason.clone());
                    notes.len()
                }
            };
            m.push(n);
        }
        marks.push(m);
    }
    (notes, marks)
}

/// What a cell `median (min-max, n=N)` and the spread notes mean.
pub(super) const SPREAD_LEGEND: &str = "repeated runs: median (min-max, n=runs); \"within spread\" when the two sides' \
                             min-max ranges overlap, \"beyond spread\" when they do not";

pub(super) fn has_spread(p: &Pair) -> bool {
    p.figures.iter().any(|r| r.within_spread.is_some())
}

pub(super) fn pair_heading(p: &Pair, key: &[KeyField]) -> String {
    match &p.other_workload {
        Some(o) => format!("{} (other side: {})", p.workload.describe(key), o.describe(key)),
        None => p.workload.describe(key),
    }
}

pub(super) fn runs_list(runs: &[RunRef]) -> String {
    runs.iter()
        .map(|r| match &r.excluded {
            Some(_) => format!("{} ({})", r.name(), r.verdict.as_str()),
            None => r.name(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The comparison for people: per pair a table (figure, baseline, other, ratio, note), its
/// footnotes, then the issues that touch no figure and the runs with no partner. Text from the
/// inputs goes through `printable`.
pub fn table(c: &Comparison, color: bool) -> String {
    use comfy_table::{Attribute, Cell, CellAlignment, Color, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
    let mut s = String::new();
    let _ = writeln!(s, "baseline: {}", printable(&c.baseline.label));
    for (i, o) in c.others.iter().enumerate() {
        let _ = writeln!(s, "other {}: {}", i + 1, printable(&o.label));
    }
    for p in &c.pairs {
        let idx = c.others.iter().position(|o| o.label == p.other).map_or(0, |i| i + 1);
        let _ = writeln!(s, "\nother {idx} vs baseline: {}", printable(&pair_heading(p, &c.key)));
        let _ = writeln!(s, "  baseline runs: {}", printable(&runs_list(&p.baseline_runs)));
        let _ = writeln!(s, "  other runs:    {}", printable(&runs_list(&p.other_runs)));
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
        if color {
            t.enforce_styling();
        } else {
            t.force_no_tty();
        }
        t.set_header(
            ["figure", "baseline", &format!("other {idx}"), "ratio", "note"]
                .map(|h| Cell::new(h).add_attribute(Attribute::Bold)),
        );
        let (notes, marks) = footnotes(p);
        for (r, m) in p.figures.iter().zip(&marks) {
            let ratio = Cell::new(ratio_cell(r)).set_alignment(CellAlignment::Right);
            let ratio = match r.outcome {
                Outcome::Refused => ratio.fg(Color::Red).add_attribute(Attribute::Bold),
                Outcome::Warned => ratio.fg(Color::Yellow),
                _ => ratio,
            };
            t.add_row(vec![
                Cell::new(r.figure.label()),
                Cell::new(cell(r.baseline.as_ref())).set_alignment(CellAlignment::Right),
                Cell::new(cell(r.other.as_ref())).set_alignment(CellAlignment::Right),
                ratio,
                Cell::new(note_cell(r, m)),
            ]);
        }
        let _ = writeln!(s, "{t}");
        if has_spread(p) {
            let _ = writeln!(s, "  {SPREAD_LEGEND}");
        }
        for (i, n) in notes.iter().enumerate() {
            let _ = writeln!(s, "  [{}] {}", i + 1, printable(n));
        }
        for i in p.issues.iter().filter(|i| i.figures.is_empty()) {
            let _ = writeln!(s, "  warning: {}: {}", i.code, printable(&i.message));
        }
    }
    if !c.unpaired.is_empty() {
        let _ = writeln!(s, "\nno partner:");
        for u in &c.unpaired {
            let _ = writeln!(
                s,
                "  {}: {} [{}] vs {}: {}",
                printable(&u.side),
                printable(&u.workload.describe(&c.key)),
                printable(&runs_list(&u.runs)),
                printable(&u.against),
                printable(&u.reason)
            );
        }
    }
    skipped_lines(c, &mut s, |t| printable(t).into_owned());
    if c.pairs.is_empty() {
        let _ = writeln!(s, "\nnothing to compare: no workload of the baseline has a partner");
    }
    s
}

pub(super) fn skipped_lines(c: &Comparison, s: &mut String, esc: impl Fn(&str) -> String) {
    let all: Vec<&Skipped> = std::iter::once(&c.baseline).chain(&c.others).flat_map(|side| &side.skipped).collect();
    if all.is_empty() {
        return;
    }
    let _ = writeln!(s, "\nnot compared:");
    for k in all {
        let at = match k.block {
            Some(b) => format!("{} #{b}", k.input),
            None => k.input.clone(),
        };
        let _ = writeln!(s, "- {}: {}", esc(&at), esc(&k.reason));
    }
}

/// Text from the inputs for a Markdown table cell or line, in every Markdown the tool writes
/// (`compare` and `sweep`): control characters escaped as on a terminal ([`printable`]), `|` and
/// the characters Markdown would read as markup (emphasis, code, links, HTML tags) escaped with a
/// backslash, so a model name such as `<script>` or `<img onerror=...>` is text, not markup.
pub fn md(text: &str) -> String {
    let mut out = String::new();
    for ch in printable(text).chars() {
        if matches!(ch, '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// The comparison as Markdown for a pull request: per pair a heading, a pipe table and its
/// footnotes as a list.
pub fn markdown(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "**Baseline:** {}  ", md(&c.baseline.label));
    for (i, o) in c.others.iter().enumerate() {
        let _ = writeln!(s, "**Other {}:** {}  ", i + 1, md(&o.label));
    }
    let _ = writeln!(s, "Runs lined up by {}.", c.key.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "));
    for p in &c.pairs {
        let idx = c.others.iter().position(|o| o.label == p.other).map_or(0, |i| i + 1);
        let _ = writeln!(s, "\n#### Other {idx} vs baseline: {}\n", md(&pair_heading(p, &c.key)));
        let _ = writeln!(s, "Baseline runs: {}  ", md(&runs_list(&p.baseline_runs)));
        let _ = writeln!(s, "Other runs: {}\n", md(&runs_list(&p.other_runs)));
        let _ = writeln!(s, "| figure | baseline | other {idx} | ratio | note |");
        let _ = writeln!(s, "|---|--:|--:|--:|---|");
        let (notes, marks) = footnotes(p);
        for (r, m) in p.figures.iter().zip(&marks) {
            let ratio = match r.outcome {
                Outcome::Refused => "**refused**".to_string(),
                _ => ratio_cell(r),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                r.figure.label(),
                md(&cell(r.baseline.as_ref())),
                md(&cell(r.other.as_ref())),
                ratio,
                note_cell(r, m)
            );
        }
        if has_spread(p) {
            let _ = writeln!(s, "\n{SPREAD_LEGEND}");
        }
        if !notes.is_empty() || p.issues.iter().any(|i| i.figures.is_empty()) {
            s.push('\n');
        }
        for (i, n) in notes.iter().enumerate() {
            let _ = writeln!(s, "{}. {}", i + 1, md(n));
        }
        for i in p.issues.iter().filter(|i| i.figures.is_empty()) {
            let _ = writeln!(s, "- warning: {}: {}", i.code, md(&i.message));
        }
    }
    if !c.unpaired.is_empty() {
        let _ = writeln!(s, "\n**No partner:**\n");
        for u in &c.unpaired {
            let _ = writeln!(
                s,
                "- {}: {} ({}) vs {}: {}",
                md(&u.side),
                md(&u.workload.describe(&c.key)),
                md(&runs_list(&u.runs)),
                md(&u.against),
                md(&u.reason)
            );
        }
    }
    skipped_lines(c, &mut s, md);
    if c.pairs.is_empty() {
        let _ = writeln!(s, "\nNothing to compare: no workload of the baseline has a partner.");
    }
    s
}
