//! Blocks made of tables (`[block.table]` in a definition): console tables drawn with rules
//! (AIPerf's and genai-perf's Rich tables, guidellm's pipe tables with grouped headers), CSV
//! exports and columns aligned by spaces (the vllm-rs sweep summary).
//!
//! The scanner collects a table block's lines as they come; when the block is over, this module
//! cuts them into cells, works out each column's name from the header lines, and writes every cell
//! as a `label: value` row, so that everything after detection reads a table exactly like a
//! printed block. See [`crate::definition::TableSpec`] for the labels it writes.

use crate::definition::{CellStyle, Definition, RowsAre, TableSpec};
use crate::input::Line;
use crate::report::Note;

use super::section_name;

/// One cell of a line: its text, trimmed, and whether nothing at all stood between its bars
/// (in a header, such a cell continues the one on its left).
#[derive(Debug, Clone)]
struct Cell {
    text: String,
    spans_left: bool,
}

/// One table: the title line above it, its header lines and its data lines.
#[derive(Debug, Default)]
struct Table {
    title: Option<Line>,
    header: Vec<(Line, Vec<Cell>)>,
    data: Vec<(Line, Vec<Cell>)>,
    /// Its last line (its bottom rule, or its last row).
    last: usize,
    /// A grid (Python tabulate's `grid`): `+===+` under the header, `+---+` between the rows, so a
    /// rule after a row ends the table only when another rule follows it.
    grid: bool,
}

/// The rows of one run, what was wrong with the tables they came from, and the last line of the
/// last of those tables that had rows.
pub(super) struct Body {
    pub lines: Vec<Line>,
    pub notes: Vec<Note>,
    pub last_line: Option<usize>,
}

/// Characters a cell separator may be.
const BARS: &[char] = &['|', '│', '┃', '║'];

/// Does a line belong to the tables of an open block (so that the block goes on)?
pub(super) fn is_table_line(def: &Definition, spec: &TableSpec, trimmed: &str) -> bool {
    if trimmed.is_empty() || is_title(def, spec, trimmed) {
        return true;
    }
    match spec.cells {
        CellStyle::Ruled => is_rule(trimmed) || trimmed.starts_with(BARS),
        CellStyle::Bars => is_rule(trimmed) || trimmed.contains(BARS),
        CellStyle::Csv => trimmed.contains(','),
        CellStyle::Aligned => is_rule(trimmed) || trimmed.contains("  "),
    }
}

/// Characters that close a ruled table line on the right: a border or a corner.
pub(super) const RIGHT_EDGE: &[char] =
    &['|', '│', '┃', '║', '┓', '┐', '┩', '┤', '┫', '┨', '┘', '┛', '╗', '╝', '╢', '╣', '╡', '╕', '╛', '╮', '╯', '+'];

/// Whether a trimmed line opens as a ruled table's lines do: with a border or a box-drawing
/// character (a corner, a rule), or as an ASCII rule (`+----+`, a tabulate grid's).
pub(super) fn opens_ruled(trimmed: &str) -> bool {
    trimmed.starts_with(BARS)
        || trimmed.starts_with(|c| ('\u{2500}'..='\u{257F}').contains(&c))
        || trimmed.starts_with('+') && is_rule(trimmed)
}

/// The rows of a table block: one body for `rows = "metrics"`, one body per run key for
/// `rows = "runs"` (in the order the keys first appear).
pub(super) fn bodies(def: &Definition, spec: &TableSpec, lines: &[Line]) -> Vec<Body> {
    let tables = match spec.cells {
        CellStyle::Aligned => aligned_tables(def, spec, lines),
        CellStyle::Ruled | CellStyle::Bars | CellStyle::Csv => ruled_tables(def, spec, lines),
    };
    let mut tables = tables;
    let notes: Vec<Note> = tables.iter_mut().flat_map(fit_headers).collect();
    match spec.rows {
        RowsAre::Metrics => metric_runs(&tables)
            .into_iter()
            .map(|run| {
                let last_line = run.iter().filter(|t| !t.data.is_empty()).map(|t| t.last).max();
                Body { lines: metric_rows(def, spec, run), notes: notes.clone(), last_line }
            })
            .collect(),
        RowsAre::Runs => {
            let runs = run_rows(def, &tables);
            if runs.is_empty() && !notes.is_empty() {
                // Every table was unreadable: the block is still said, with why.
                let last_line = tables.iter().map(|t| t.last).max();
                return vec![Body { lines: Vec::new(), notes, last_line }];
            }
            runs.into_iter()
                .map(|(lines, last_line, own)| {
                    let notes = notes.iter().cloned().chain(own).collect();
                    Body { lines, notes, last_line: Some(last_line) }
                })
                .collect()
        }
    }
}

/// A header line with another number of cells than the rows under it: a group's span drawn with
/// the wrong number of bars (a hand-edited table), so the names of the columns right of it cannot
/// be taken from the bars.
///
/// One repair is made, when it is the only reading there is: the header line's groups stand over a
/// full-width header line whose labels repeat once per group (`Mdn | Mean | p99` under each of
/// four metrics), so each group spans one repetition. At least two groups must repeat the pattern
/// (one group over the rest of the line proves nothing), and exactly one split of the line into
/// leading columns and groups may fit. Otherwise the table's figures are not read: a figure under
/// a shifted column name would be a wrong figure.
fn fit_headers(table: &mut Table) -> Vec<Note> {
    let Some(width) = table.data.iter().map(|(_, c)| c.len()).max() else { return Vec::new() };
    let full = table.header.iter().rposition(|(_, cells)| cells.len() == width);
    let mut notes = Vec::new();
    let mut unreadable = false;
    for i in 0..table.header.len() {
        let (line, cells) = &table.header[i];
        if cells.len() == width {
            continue;
        }
        let repaired = full.filter(|&f| f != i).and_then(|f| respan(cells, &table.header[f].1, width));
        let (code, message) = match &repaired {
            Some(_) => (
                "table-header-repaired",
                format!(
                    "this header line has {} cells but the rows under it have {width}: its groups were spread evenly \
                     over the sub-columns, which repeat once per group",
                    cells.len()
                ),
            ),
            None => (
                "table-header-misfit",
                format!(
                    "this header line has {} cells but the rows under it have {width}: the column names cannot be told, \
                     so this table's figures are not read",
                    cells.len()
                ),
            ),
        };
        notes.push(Note { code: code.into(), message, line: Some(line.number) });
        match repaired {
            Some(cells) => table.header[i].1 = cells,
            None => unreadable = true,
        }
    }
    if unreadable {
        table.data.clear();
    }
    notes
}

/// `cells` (a header line of groups) spread over `sub` (a full-width header line): the leading
/// cells one column each, then every group over an equal share of the rest, when `sub`'s labels
/// there repeat once per group and no other split fits.
fn respan(cells: &[Cell], sub: &[Cell], width: usize) -> Option<Vec<Cell>> {
    let fits = |lead: usize| -> Option<usize> {
        if lead >= cells.len() || cells[..=lead].iter().any(|c| c.spans_left) || lead >= width {
            return None;
        }
        let groups = cells[lead..].iter().filter(|c| !c.spans_left).count();
        let rest = width - lead;
        if groups < 2 || !rest.is_multiple_of(groups) {
            return None;
        }
        let period = rest / groups;
        let labels = &sub[lead..];
        labels.iter().enumerate().all(|(k, c)| c.text == labels[k % period].text).then_some(period)
    };
    let mut found = (0..cells.len()).filter_map(|lead| fits(lead).map(|p| (lead, p)));
    let (lead, period) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let mut out: Vec<Cell> = cells[..lead].to_vec();
    for group in cells[lead..].iter().filter(|c| !c.spans_left) {
        out.push(group.clone());
        out.extend((1..period).map(|_| Cell { text: String::new(), spans_left: true }));
    }
    Some(out)
}

/// A title line above a table: the banner or a section header, never a line of cells (a CSV
/// export's banner is its header line).
pub(super) fn is_title(def: &Definition, spec: &TableSpec, trimmed: &str) -> bool {
    let block = def.block.as_ref().expect("a table definition has a block");
    let cells = match spec.cells {
        CellStyle::Csv => trimmed.contains(','),
        CellStyle::Bars => trimmed.contains(BARS),
        _ => trimmed.starts_with(BARS),
    };
    let trimmed = without_list_marker(trimmed);
    !cells && (block.banner.is_match(trimmed) || section_name(def, trimmed).is_some_and(|n| !n.is_empty()))
}

/// A title without the Markdown list marker it was pasted behind (`- ℹ Request Latency
/// Statistics`, `* `, `+ `, `1. `): the marker is the title line's own, no prefix of the table's
/// lines (a table's lines are never list items).
pub(super) fn without_list_marker(trimmed: &str) -> &str {
    let t = trimmed.trim_start();
    let rest = match t.as_bytes() {
        [b'-' | b'*' | b'+', b' ', ..] => &t[2..],
        _ => {
            let digits = t.bytes().take_while(u8::is_ascii_digit).count();
            match t.as_bytes().get(digits..digits + 2) {
                Some([b'.' | b')', b' ']) if digits > 0 && digits < 4 => &t[digits + 2..],
                _ => return trimmed,
            }
        }
    };
    rest.trim_start()
}

/// The section of a runs table whose title names none the definition reads (a title edited by
/// hand, `... Statistics Table-1 (...)`, or none at all): the section whose rows its column names
/// are, when exactly one section has the most of them (two at least). The header rows identify a
/// table as surely as its title: each section's columns are its own.
fn section_by_columns(def: &Definition, columns: &[String]) -> Option<String> {
    let mut sections: Vec<&str> = Vec::new();
    for s in def.rows.iter().filter_map(|r| r.sections.as_ref()).flatten() {
        if !sections.contains(&s.as_str()) {
            sections.push(s);
        }
    }
    let labels: Vec<String> = columns.iter().map(|c| crate::lex::normalize_label(&format!("{c}:"))).collect();
    let score = |s: &str| {
        labels
            .iter()
            .filter(|l| {
                // (A column every section has, the run's key, tells none apart.)
                def.row_spec(Some(s), l, 1, false).is_some()
                    && !sections.iter().all(|o| def.row_spec(Some(o), l, 1, false).is_some())
            })
            .count()
    };
    let scored: Vec<(&str, usize)> = sections.iter().map(|s| (*s, score(s))).collect();
    let best = scored.iter().map(|(_, n)| *n).max()?;
    let mut winners = scored.iter().filter(|(_, n)| *n == best);
    let (name, _) = winners.next()?;
    (best >= 2 && winners.next().is_none()).then(|| name.to_string())
}

/// The title line a runs table's rows are read under: its own when it names a section the
/// definition reads (or none can be told); else a title naming the section its columns identify
/// (with a note), when the definition's section pattern takes that title.
fn table_title(def: &Definition, table: &Table, columns: &[String], notes: &mut Option<Note>) -> Option<Line> {
    let own = table.title.as_ref().map(|t| Line { text: without_list_marker(t.text.trim()).to_string(), ..t.clone() });
    let own_name = own.as_ref().and_then(|t| section_name(def, t.text.trim()));
    if own_name.as_deref().is_some_and(|n| n.is_empty() || def.reads_section(n)) || table.data.is_empty() {
        return own.filter(|_| own_name.is_some());
    }
    let block = def.block.as_ref()?;
    let found = section_by_columns(def, columns).and_then(|name| {
        let strip = block.section_strip.trim_end_matches(' ');
        let text = if strip.is_empty() { name.clone() } else { format!("{strip} {name}") };
        (section_name(def, &text).as_deref() == Some(name.as_str())).then_some((name, text))
    });
    let Some((name, text)) = found else { return own.filter(|_| own_name.is_some()) };
    let at = own.as_ref().map_or_else(|| table.header.first().map_or(table.last, |(l, _)| l.number), |t| t.number);
    let said = match &own {
        Some(t) => format!("the table titled '{}' names no section this format reads", t.text.trim()),
        None => "a table without a title".to_string(),
    };
    *notes = Some(Note {
        code: "table-title-by-header".into(),
        message: format!("{said}: its column headers are those of '{name}', read as that table"),
        line: Some(at),
    });
    Some(Line { number: at, text, truncated: false })
}

/// A rule: box-drawing characters, or `-`, `=`, `+`, `:` and bars, with at least one of `-=━─═`.
fn is_rule(trimmed: &str) -> bool {
    trimmed.chars().any(|c| matches!(c, '-' | '=' | '━' | '─' | '═'))
        && trimmed.chars().all(|c| {
            matches!(c, '-' | '=' | '+' | ':' | ' ') || BARS.contains(&c) || ('\u{2500}'..='\u{257F}').contains(&c)
        })
}

/// The rule under the header of a Python tabulate `grid` table: `+====+====+` (ASCII, with `=`).
fn is_grid_head_rule(trimmed: &str) -> bool {
    trimmed.contains('=') && trimmed.chars().all(|c| matches!(c, '=' | '+' | '|' | ':' | ' '))
}

fn split_cells(style: CellStyle, trimmed: &str) -> Vec<Cell> {
    match style {
        CellStyle::Csv => {
            let mut reader =
                csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(trimmed.as_bytes());
            let Some(Ok(record)) = reader.records().next() else { return Vec::new() };
            record.iter().map(|c| Cell { text: c.trim().to_string(), spans_left: false }).collect()
        }
        // Unbordered: a bar at the end of a header line closes a span (`Output Tok Total  ||` is
        // three columns), not the table.
        CellStyle::Bars => {
            trimmed.split(BARS).map(|c| Cell { text: c.trim().to_string(), spans_left: c.is_empty() }).collect()
        }
        _ => {
            let inner = trimmed.strip_prefix(BARS).unwrap_or(trimmed);
            let inner = inner.strip_suffix(BARS).unwrap_or(inner);
            inner.split(BARS).map(|c| Cell { text: c.trim().to_string(), spans_left: c.is_empty() }).collect()
        }
    }
}

/// Ruled and CSV tables: a table starts at a title, a top rule or (CSV) after a blank line; its
/// header is its first `header_rows` lines, or the lines before the rule under them.
fn ruled_tables(def: &Definition, spec: &TableSpec, lines: &[Line]) -> Vec<Table> {
    #[derive(PartialEq)]
    enum State {
        Start,
        Header,
        Data,
        AfterData,
    }
    let mut tables: Vec<Table> = Vec::new();
    let mut state = State::Start;
    let mut title: Option<Line> = None;
    // The line before was a rule between two rows of a grid (or the grid's bottom rule).
    let mut row_rule = false;
    for line in lines {
        let trimmed = line.text.trim();
        if trimmed.is_empty() {
            if spec.cells == CellStyle::Csv {
                state = State::Start;
            }
            continue;
        }
        let after_row_rule = std::mem::take(&mut row_rule);
        if is_title(def, spec, trimmed) {
            title = Some(line.clone());
            state = State::Start;
            continue;
        }
        let ruled = matches!(spec.cells, CellStyle::Ruled | CellStyle::Bars);
        if ruled && is_rule(trimmed) {
            if !matches!(state, State::Start)
                && let Some(t) = tables.last_mut()
            {
                t.last = line.number;
            }
            let grid = tables.last().is_some_and(|t| t.grid);
            state = match state {
                State::Start => {
                    tables.push(Table { title: title.clone(), last: line.number, ..Table::default() });
                    State::Header
                }
                State::Header if tables.last().is_some_and(|t| !t.header.is_empty()) => {
                    if let Some(t) = tables.last_mut() {
                        t.grid = is_grid_head_rule(trimmed);
                    }
                    State::Data
                }
                State::Header => State::Header,
                // A rule between two rows of a grid; a second rule is the top of another table.
                State::Data if grid && !after_row_rule => {
                    row_rule = true;
                    continue;
                }
                State::Data if grid => {
                    tables.push(Table { title: title.clone(), last: line.number, ..Table::default() });
                    State::Header
                }
                State::Data | State::AfterData => State::AfterData,
            };
            continue;
        }
        let cell_line = match spec.cells {
            CellStyle::Ruled => trimmed.starts_with(BARS),
            CellStyle::Bars => trimmed.contains(BARS),
            _ => trimmed.contains(','),
        };
        if !cell_line {
            // A line of other text between the tables (a footnote, a log line); after a grid's
            // rule, the grid is over.
            if after_row_rule {
                state = State::AfterData;
            }
            continue;
        }
        let cells = split_cells(spec.cells, trimmed);
        if matches!(state, State::Start | State::AfterData) {
            tables.push(Table { title: title.clone(), ..Table::default() });
            state = State::Header;
        }
        let table = tables.last_mut().expect("a table was started");
        table.last = line.number;
        match state {
            State::Header => {
                table.header.push((line.clone(), cells));
                if spec.header_rows.is_some_and(|n| table.header.len() >= n) {
                    state = State::Data;
                }
            }
            _ => table.data.push((line.clone(), cells)),
        }
    }
    tables
}

/// Columns aligned by spaces: the rule of dash runs under the header says where each column
/// starts; every line before it is a header line and every line after it a data line.
fn aligned_tables(def: &Definition, spec: &TableSpec, lines: &[Line]) -> Vec<Table> {
    let end = def.block.as_ref().and_then(|b| b.end.as_ref());
    let mut table = Table::default();
    let mut starts: Option<Vec<usize>> = None;
    let mut header_lines: Vec<&Line> = Vec::new();
    for line in lines {
        let trimmed = line.text.trim();
        if trimmed.is_empty() || end.is_some_and(|e| e.is_match(trimmed)) || !is_table_line(def, spec, trimmed) {
            // (A log line of another process printed into the table is not one of its lines.)
            continue;
        }
        if is_title(def, spec, trimmed) {
            table.title = Some(line.clone());
            continue;
        }
        match &starts {
            None if is_rule(trimmed) && trimmed.contains(' ') => {
                let chars: Vec<char> = line.text.trim_end().chars().collect();
                let cols: Vec<usize> =
                    (0..chars.len()).filter(|&i| chars[i] == '-' && (i == 0 || chars[i - 1] == ' ')).collect();
                // The header is the lines right above the rule whose text leaves the gaps between
                // the columns blank.
                let fits = |l: &Line| {
                    let c: Vec<char> = l.text.chars().collect();
                    cols.iter().skip(1).all(|&s| c.get(s - 1).is_none_or(|ch| *ch == ' '))
                };
                let above = header_lines.iter().rev().take_while(|l| fits(l)).count();
                let header = &header_lines[header_lines.len() - above..];
                table.header = header.iter().map(|l| ((*l).clone(), cut(&l.text, &cols))).collect();
                starts = Some(cols);
            }
            None => header_lines.push(line),
            Some(cols) => {
                table.data.push((line.clone(), cut(&line.text, cols)));
                table.last = line.number;
            }
        }
    }
    if starts.is_some() { vec![table] } else { Vec::new() }
}

/// A line cut at the columns' first characters (the first column from the line's start).
fn cut(text: &str, starts: &[usize]) -> Vec<Cell> {
    let chars: Vec<char> = text.chars().collect();
    (0..starts.len())
        .map(|i| {
            let from = if i == 0 { 0 } else { starts[i].min(chars.len()) };
            let to = starts.get(i + 1).map_or(chars.len(), |&s| s.min(chars.len()));
            let text: String = chars[from..to.max(from)].iter().collect();
            Cell { text: text.trim().to_string(), spans_left: false }
        })
        .collect()
}

/// Each column's name: its header cells from top to bottom, joined by spaces. A header cell with
/// nothing between its bars takes the text of the cell on its left (a group spanning columns).
fn column_names(table: &Table) -> Vec<String> {
    let width = table.header.iter().chain(&table.data).map(|(_, c)| c.len()).max().unwrap_or(0);
    let mut names: Vec<Vec<String>> = vec![Vec::new(); width];
    for (_, row) in &table.header {
        let mut left = String::new();
        for (j, cell) in row.iter().enumerate() {
            let text = if cell.spans_left && j > 0 { left.clone() } else { cell.text.clone() };
            left = text.clone();
            if !text.is_empty() && names[j].last() != Some(&text) {
                names[j].push(text);
            }
        }
    }
    // A column without a header keeps its place: `column 3`.
    names
        .into_iter()
        .enumerate()
        .map(|(j, n)| if n.is_empty() { format!("column {}", j + 1) } else { n.join(" ") })
        .collect()
}

fn row_line(at: &Line, label: &str, value: &str) -> Line {
    Line { number: at.number, text: format!("{}: {value}", label.replace(": ", " ")), truncated: at.truncated }
}

/// The tables of a metrics block, cut into runs: a run prints each metric once in a layout, so a
/// table whose metrics are mostly (half or more) those of a table before it in the run, under the
/// same column header, is the next run's (two AIPerf `LLM Metrics` tables pasted one under the
/// other). Tables of other metrics (AIPerf 0.13's `Effective`, `Active` and `Usage` tables before
/// its `LLM Metrics`) are the same run's, and so is a table of the same metrics in another layout
/// (EvalScope's closing report repeats its percentile table's metrics under `Conc. | Rate | ...`).
fn metric_runs(tables: &[Table]) -> Vec<&[Table]> {
    let labels = |t: &Table| -> Vec<String> {
        let header = column_names(t).join("\u{1f}");
        t.data
            .iter()
            .filter_map(|(_, c)| c.first())
            .filter(|c| !c.text.is_empty())
            .map(|c| format!("{header}\u{1e}{}", c.text))
            .collect()
    };
    let mut runs = Vec::new();
    let mut start = 0;
    let mut seen: Vec<String> = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let mine = labels(t);
        let repeated = mine.iter().filter(|l| seen.contains(l)).count();
        if !mine.is_empty() && repeated * 2 >= mine.len() {
            runs.push(&tables[start..i]);
            start = i;
            seen.clear();
        }
        seen.extend(mine);
    }
    runs.push(&tables[start..]);
    runs
}

/// One metric per row: the cell under column `c` of row `r` is the row `r (c)`, or `r` under a
/// value column. A row whose value cells are all empty continues the label above it (a label
/// wrapped by the console).
fn metric_rows(def: &Definition, spec: &TableSpec, tables: &[Table]) -> Vec<Line> {
    let mut body = Vec::new();
    for table in tables {
        if let Some(t) = &table.title
            && section_name(def, t.text.trim()).is_some()
        {
            body.push(t.clone());
        }
        let columns = column_names(table);
        // (line, label, value cells, the row is a section header of the definition)
        let mut rows: Vec<(&Line, String, &[Cell], bool)> = Vec::new();
        for (line, cells) in &table.data {
            let Some((first, values)) = cells.split_first() else { continue };
            let empty = values.iter().all(|c| c.text.is_empty());
            // A row holding a section header alone (EvalScope's `── Latency ──`) opens that
            // section; it continues no label.
            let section = empty && section_name(def, &first.text).is_some_and(|n| !n.is_empty());
            match rows.last_mut() {
                Some(prev) if empty && !section && !prev.3 && !first.text.is_empty() => {
                    prev.1.push(' ');
                    prev.1.push_str(&first.text);
                }
                _ => rows.push((line, first.text.clone(), values, section)),
            }
        }
        for (line, label, values, section) in rows {
            if section {
                body.push(Line { number: line.number, text: label, truncated: line.truncated });
                continue;
            }
            for (j, cell) in values.iter().enumerate() {
                if cell.text.is_empty() {
                    continue;
                }
                let column = columns.get(j + 1).map(String::as_str).unwrap_or_default();
                let name = if spec.value_columns.iter().any(|v| v == column) {
                    label.clone()
                } else if label.starts_with(|c: char| c.is_ascii_digit()) {
                    // A row keyed by a number (a percentile, `10%`, over a column per metric):
                    // its cell is the metric's, `<column> (<key>)`.
                    format!("{column} ({label})")
                } else {
                    format!("{label} ({column})")
                };
                body.push(row_line(line, &name, &cell.text));
            }
        }
    }
    body
}

/// One run per row, keyed by its first cell: the runs' rows from every table, each under its
/// table's title, and the last line of the last table the run is in.
///
/// A run has one titled table of each section: a key printed under a second title of a section
/// the run already has (a second sweep's tables pasted under the first) is the next run of that
/// key. (Tables under one title, guidellm's input and output text metrics, are one table's.)
/// Each run has the notes of the tables it is in (a title told by the column headers).
fn run_rows(def: &Definition, tables: &[Table]) -> Vec<(Vec<Line>, usize, Vec<Note>)> {
    // Each run's key and the sections of the tables it has rows in.
    type Seen = Vec<(Option<String>, Option<usize>)>;
    let mut keys: Vec<(String, Seen)> = Vec::new();
    let mut bodies: Vec<(Vec<Line>, usize, Vec<Note>)> = Vec::new();
    for table in tables {
        let columns = column_names(table);
        let mut note = None;
        let title = table_title(def, table, &columns, &mut note);
        let section = title.as_ref().and_then(|t| section_name(def, t.text.trim()));
        let title_line = title.as_ref().map(|t| t.number);
        let mut filled: Vec<usize> = Vec::new();
        for (line, cells) in &table.data {
            let Some(key) = cells.first().map(|c| c.text.clone()).filter(|k| !k.is_empty()) else { continue };
            // (Rows of one key in one table are one run's: guidellm prints input and output rows.)
            let free = |(i, (k, seen)): (usize, &(String, Seen))| {
                let again = section.is_some() && seen.iter().any(|(s, l)| *s == section && *l != title_line);
                (*k == key && (filled.contains(&i) || !again)).then_some(i)
            };
            let i = match keys.iter().enumerate().find_map(free) {
                Some(i) => i,
                None => {
                    keys.push((key, Vec::new()));
                    bodies.push((Vec::new(), 0, Vec::new()));
                    keys.len() - 1
                }
            };
            if !filled.contains(&i) {
                filled.push(i);
                keys[i].1.push((section.clone(), title_line));
            }
            bodies[i].1 = bodies[i].1.max(table.last);
            bodies[i].2.extend(note.clone());
            if let Some(t) = &title {
                bodies[i].0.push(t.clone());
            }
            for (j, cell) in cells.iter().enumerate() {
                let column = columns.get(j).map(String::as_str).unwrap_or_default();
                if !cell.text.is_empty() {
                    bodies[i].0.push(row_line(line, column, &cell.text));
                }
            }
        }
    }
    bodies
}

#[cfg(test)]
mod tests;
