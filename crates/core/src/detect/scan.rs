//! The scanner: lines in, blocks out (see the [module documentation](super)).

use rustc_hash::FxHashMap;

use super::known::KnownLabels;
use super::line::{has_escaped_newline, table_row, value_cells};
use super::mode::{Grid, Hit, Mode, Open, Rows, Step, read_markdown};
use super::prefilter::Literals;
use super::prefix::{Prefix, cut_points};
use super::{Block, BlockEnd, BodyRow, ContextLine, MAX_NOISE_RUN, Neighbour, args_dump, section_name, table, wrap};
use crate::definition::{Definition, Definitions, Evidence};
use crate::input::Line;
use crate::lex::{label_key, normalize_label, split_row};

mod evidence;
mod flatten;
mod footer;
mod interleaved;
mod repair;

use evidence::banner_words;

/// Turns lines into blocks; see the module documentation.
pub struct Scanner<'d> {
    text_defs: Vec<&'d Definition>,
    /// What the text definitions' banners and context labels contain, built once per set of
    /// definitions ([`Definitions::literals`]): outside a block, a buffer is skipped up to the
    /// first of them, and a line with none of them is not decoded.
    literals: &'d Literals,
    context: FxHashMap<String, ContextLine>,
    open: Option<Mode<'d>>,
    blocks: usize,
    ready: std::collections::VecDeque<Block<'d>>,
    /// A finished block whose variant prints a trailer (held until the trailer or other lines),
    /// or a closed block beside another result's banner (held for the line after it).
    held: Option<Held<'d>>,
    known: KnownLabels<'d>,
    /// Repairs of damaged text ([`repair`]).
    repair: repair::Repair,
    /// What looked like a result and was not read, and why (for the "nothing found" message).
    passed_over: Vec<String>,
    /// The last banner that cut off an open block: its line, and the cut block's banner (line
    /// and text).
    last_cut: Option<(usize, (usize, String))>,
    /// The text of the banner that is cutting off the open block, while it is finished.
    next_banner_text: Option<String>,
    /// Table rows (`| a | b |`) in a row before the current line, and the last one's line: the
    /// rows of a table before the first row a definition knows.
    table_run: (usize, usize),
    /// Those rows, when a Markdown table block opened.
    table_rows_before: usize,
    /// The line of the last row passed over.
    passed_over_last: Option<usize>,
    /// The blocks being finished are the runs of one table block (its footers are none of
    /// theirs: see [`Scanner::footer_lines`]).
    several_runs: bool,
}

/// Most things passed over that the "nothing found" message names.
const MAX_PASSED_OVER: usize = 3;

/// Room for the context lines a block usually has (an argument dump's arguments a definition
/// reads, a few labels): the map is not grown, and rehashed, line by line. (Its order is never
/// read: the block's context lines are sorted by line and label.)
const CONTEXT_ROOM: usize = 16;

struct Held<'d> {
    block: Block<'d>,
    /// The trailer waited for; none: the block is held only for the first line after it, which
    /// tells whether another block's closing line closed it (see [`Scanner::look_after`]).
    trailer: Option<&'d crate::definition::TrailerSpec>,
    gap: usize,
    /// Inside the trailer, after its banner.
    open: bool,
    /// The block's prefix, which its trailer's lines carry too.
    prefix: Prefix,
    /// Lines left to look at for the block's `[[footer]]` lines (0: not held for them).
    footer: usize,
    /// A row of the block's tool that came first after its closing line: the rest of another
    /// block if the next line is one of that tool's too ([`Scanner::look_after`]).
    after: Option<(usize, String)>,
}

impl<'d> Scanner<'d> {
    pub fn new(defs: &'d Definitions) -> Scanner<'d> {
        let text_defs: Vec<&Definition> = defs.iter().filter(|d| d.block.is_some()).collect();
        Scanner {
            known: KnownLabels { defs: text_defs.clone(), cache: Default::default(), primed: None, primed_line: None },
            text_defs,
            literals: defs.literals(),
            context: FxHashMap::default(),
            open: None,
            blocks: 0,
            ready: Default::default(),
            held: None,
            repair: Default::default(),
            passed_over: Vec::new(),
            last_cut: None,
            next_banner_text: None,
            table_run: (0, 0),
            table_rows_before: 0,
            passed_over_last: None,
            several_runs: false,
        }
    }

    /// What was looked for (the tools, short: `--explain` lists the banner patterns,
    /// [`super::missing::patterns`]), and what was passed over, for the "nothing found" message.
    pub fn looked_for(&self) -> String {
        let tools = super::missing::tools_looked_for(self.text_defs.iter().copied());
        if self.passed_over.is_empty() {
            return tools;
        }
        format!("{tools}; passed over: {}", self.passed_over.join("; "))
    }

    /// Whether every line is read now (inside a block, or with a block waiting for its trailer).
    pub fn in_block(&self) -> bool {
        self.open.is_some() || self.held.is_some() || self.repair.wants()
    }

    /// Outside a block: where in `hay` (raw lines, from a line start) the first line that
    /// [`Scanner::wants`] may want lies: at its first literal, or at a `|` that opens a line.
    /// `None`: no line in `hay` is wanted.
    pub fn first_wanted(&self, hay: &[u8]) -> Option<usize> {
        if self.in_block() {
            return Some(0);
        }
        let literal = self.literals.any.find(hay);
        let before = &hay[..literal.unwrap_or(hay.len())];
        // `wants` takes a line whose first byte after white space is `|` (`\n` and `\r` end lines).
        let opens_line = |i: usize| {
            before[..i]
                .iter()
                .rev()
                .take_while(|b| !matches!(b, b'\n' | b'\r'))
                .all(|b| matches!(b, b' ' | b'\t' | 0x0c))
        };
        memchr::memchr2_iter(b'|', b'<', before).find(|&i| opens_table(&hay[i..]) && opens_line(i)).or(literal)
    }

    /// Whether a raw line needs to be read at all: inside a block, or while a block waits for its
    /// trailer, every line does; outside, only banners, context labels and table rows.
    pub fn wants(&self, raw: &[u8]) -> bool {
        self.open.is_some()
            || self.held.is_some()
            || self.literals.any.is_match(raw)
            || opens_table(raw.trim_ascii_start())
            || self.repair.wants()
    }

    /// Feed one line; completed blocks are then handed out by [`Scanner::pop`].
    pub fn push(&mut self, line: Line) {
        self.push_repaired(line);
    }

    /// A line after the repairs of damaged text ([`repair`]).
    fn push_line(&mut self, line: Line) {
        let hit = self.banner_hits(&line.text);
        self.push_line_hit(line, hit);
    }

    /// [`Scanner::push_line`] with the line's banner hits already found.
    fn push_line_hit(&mut self, line: Line, hit: Option<Hit<'d>>) {
        let text = &line.text;
        // (A table title or CSV header is never a flattened block.)
        let banner_with_rest = hit.as_ref().is_some_and(|(c, at)| {
            c[0].block
                .as_ref()
                .filter(|b| b.table.is_none())
                .and_then(|b| banner_end(&b.banner, text, *at))
                .is_some_and(|end| !text[end..].trim().is_empty())
        });
        // (In a table block, a rule with text after it is the rest of a hard-wrapped table rule.)
        let closing_with_rest = !matches!(self.open, Some(Mode::Grid(..))) && self.split_closing_rule(text).is_some();
        let long_in_block = matches!(self.open, Some(Mode::Rows(..) | Mode::Markdown(_))) && text.len() > 80;
        if !banner_with_rest && !closing_with_rest && !long_in_block && !has_escaped_newline(text) {
            self.push_one(line, hit);
            return;
        }
        let number = line.number;
        let pieces = self.unflatten(line);
        // (A banner with its own rest cut off, `Results for ... api.`, is no lost line break.)
        if pieces.iter().filter(|p| !p.text.trim().is_empty()).count() > 1
            && pieces.iter().skip(1).any(|p| crate::lex::split_row_key(p.text.trim()).is_some())
        {
            self.note_unflattened(number);
        }
        for piece in pieces {
            let hit = self.banner_hits(&piece.text);
            self.push_one(piece, hit);
            self.attach_notes();
        }
    }

    /// The next completed block, in input order.
    pub fn pop(&mut self) -> Option<Block<'d>> {
        self.ready.pop_front()
    }

    /// The input ended: a block that was still open is complete too.
    pub fn finish(&mut self) {
        self.flush_repair();
        // A block looking ahead for its closing line (see `MAX_LOOKAHEAD`) was cut off where its
        // rows ended; the lines after it are read again, and may open a block of their own.
        while matches!(&self.open, Some(Mode::Rows(_, rows)) if rows.noise_run >= MAX_NOISE_RUN) {
            self.cut_off();
        }
        if let Some(open) = self.open.take() {
            let end = match &open {
                Mode::Grid(o, grid) if grid.block.end.is_none() => BlockEnd::AfterTables(o.last_row_line),
                Mode::Markdown(o) => BlockEnd::Table(o.last_row_line),
                _ => BlockEnd::EndOfInput,
            };
            self.finish_block(open, end);
        }
        self.release();
    }

    /// The open block was cut off: it ends after its last row, and the lines after that belong to
    /// what follows.
    fn cut_off(&mut self) {
        match self.open.take() {
            Some(Mode::Rows(open, rows)) => self.cut_off_rows(open, rows),
            Some(Mode::Grid(mut open, mut grid)) => {
                // The lines after the last table line are read as context (a stray, a line kept only
                // as the possible rest of a cut line, was not read).
                let keep = open.body.iter().rposition(|l| l.number == open.last_row_line).map_or(0, |i| i + 1);
                let after: Vec<Line> = open.body.split_off(keep);
                let after_kept = grid.kept.split_off(keep.min(grid.kept.len()));
                let last = open.last_row_line;
                self.finish_grid(open, &grid.kept, BlockEnd::AfterTables(last));
                for (l, _) in after
                    .iter()
                    .zip(after_kept.iter().map(|k| k.stray).chain(std::iter::repeat(false)))
                    .filter(|(_, s)| !s)
                {
                    self.feed_footer(l);
                    self.note_context(l);
                }
            }
            // (A Markdown table ends at its first line that is not a row: it is not cut off.)
            Some(markdown @ Mode::Markdown(_)) => self.open = Some(markdown),
            None => {}
        }
    }

    /// A printed block ends as cut off after its last known row ([`BlockEnd::Noise`]). The
    /// [`MAX_NOISE_RUN`] lines after that row belong to what follows (the next run's preamble,
    /// perhaps); lines read past them, while looking ahead for a closing line, are read again as
    /// they would have been had the block ended there.
    fn cut_off_rows(&mut self, mut open: Open<'d>, mut rows: Rows) {
        let keep = open.body.len() - rows.noise_run;
        let mut after: Vec<Line> = open.body.split_off(keep);
        rows.seen.truncate(keep);
        self.finish_rows(open, rows.seen, BlockEnd::Noise);
        let again = after.split_off(after.len().min(MAX_NOISE_RUN));
        for l in &after {
            self.feed_footer(l);
            self.note_context(l);
        }
        for l in again {
            let hit = self.banner_hits(&l.text);
            self.push_one(l, hit);
        }
    }

    fn release(&mut self) {
        if let Some(h) = self.held.take() {
            self.ready.push_back(h.block);
        }
    }

    /// A line while a block waits for its trailer: taken into the trailer, or counted as a gap.
    /// Returns whether the line was used.
    fn feed_held(&mut self, line: &Line) -> bool {
        let Some(h) = self.held.as_mut() else { return false };
        let Some(trailer) = h.trailer else {
            if !self.feed_footer(line) {
                self.look_after(line);
            }
            return false;
        };
        // The block's prefix is stripped where what remains is a line of the trailer.
        let known = &mut self.known;
        let open = h.open;
        let text = h.prefix.strip(&line.text, |rest| {
            let t = rest.trim();
            trailer.banner.is_match(t)
                || open && (trailer.end.is_match(t) || is_rule(t) || known.see(rest).is_some_and(|r| r.known != 0))
        });
        let trimmed = text.trim();
        if h.open {
            if trailer.end.is_match(trimmed) {
                h.block.last_line = line.number;
                self.release();
                return true;
            }
            // Plain rules inside the trailer separate its groups; its rows stay in its section.
            let text = if is_rule(trimmed) { format!("--- {} ---", trailer.section) } else { text.to_string() };
            h.block.rows.push(self.known.see(&text));
            h.block.body.push(Line { number: line.number, text, truncated: line.truncated });
            h.block.last_line = line.number;
            return true;
        }
        if trailer.banner.is_match(trimmed) {
            h.open = true;
            let text = format!("--- {} ---", trailer.section);
            h.block.rows.push(self.known.see(&text));
            h.block.body.push(Line { number: line.number, text, truncated: false });
            return true;
        }
        if !trimmed.is_empty() {
            h.gap += 1;
        }
        if h.gap > trailer.max_gap || self.banner_hits(&line.text).is_some() {
            self.release();
        }
        false
    }

    fn push_one(&mut self, line: Line, hit: Option<Hit<'d>>) {
        if self.feed_held(&line) {
            return;
        }
        let step = match &mut self.open {
            None => return self.outside(line, hit),
            Some(Mode::Rows(open, rows)) => rows.read(open, &mut self.known, line, hit),
            Some(Mode::Markdown(open)) => read_markdown(open, line, hit),
            Some(Mode::Grid(open, grid)) => grid.read(open, line, hit),
        };
        match step {
            Step::Goes => {}
            Step::Ends(end) => self.end_open(end),
            Step::EndsBefore(end, line, hit) => {
                self.end_open(end);
                self.outside(line, hit);
            }
            Step::NextBanner(end, line, (candidates, at)) => {
                let done = self.open.take();
                if let Some(done) = &done {
                    let cut = &done.open().banner;
                    self.last_cut = Some((line.number, (cut.number, banner_words(&cut.text))));
                }
                let next_text = banner_words(&line.text);
                self.start(line, candidates, at);
                if let Some(done) = done {
                    self.next_banner_text = Some(next_text);
                    self.finish_block(done, end);
                    self.next_banner_text = None;
                }
            }
            Step::CutOff(again) => {
                self.cut_off();
                if let Some((line, hit)) = again {
                    self.push_one(line, hit);
                }
            }
        }
    }

    /// A line outside a block: a banner starts one, a Markdown table row of a label some
    /// definition knows starts a table, and any other line may be context.
    fn outside(&mut self, line: Line, hit: Option<Hit<'d>>) {
        if let Some((candidates, at)) = hit {
            self.start(line, candidates, at);
            return;
        }
        if let Some((label, value)) = table_row(&line.text) {
            let (last, count) = self.table_run;
            let before = if count > 0 && last + 1 == line.number { count } else { 0 };
            self.table_run = (line.number, before + 1);
            let key = format!("{label}:");
            let candidates: Vec<&'d Definition> =
                self.text_defs.iter().copied().filter(|d| d.knows_label(&normalize_label(&key))).collect();
            let columns = value_cells(&line.text);
            if !candidates.is_empty() && columns >= 2 {
                // Which column is which run (or statistic) only the table's header says: reading
                // the first as "the" value would give one run's figures as another's, or a P99
                // as a mean. Not read; said when nothing else is found.
                // (Once per table: its rows come one after another.)
                let same_table = self.passed_over_last.is_some_and(|l| l + 1 == line.number);
                self.passed_over_last = Some(line.number);
                if !same_table && self.passed_over.len() < MAX_PASSED_OVER {
                    self.passed_over.push(format!(
                        "line {}: a Markdown table with {columns} value columns ({:?}): which column is which run or \
                         statistic only its header says, and a table is read only as `| label | value |` rows",
                        line.number,
                        line.text.trim()
                    ));
                }
            } else if !candidates.is_empty() {
                let number = line.number;
                self.table_rows_before = before;
                self.open = Some(Mode::Markdown(Open {
                    candidate_bits: self.known.bits_of(&candidates),
                    candidates,
                    banner: line.clone(),
                    banner_at: 0,
                    prefix: Prefix::None,
                    body: vec![Line { number, text: format!("{label}: {value}"), truncated: line.truncated }],
                    last_row_line: number,
                    context: self.take_context(),
                    notes: Vec::new(),
                }));
                return;
            }
        }
        self.note_context(&line);
    }

    /// The open block ends.
    fn end_open(&mut self, end: BlockEnd) {
        if let Some(done) = self.open.take() {
            self.finish_block(done, end);
        }
    }
    fn banner_hits(&self, text: &str) -> Option<(Vec<&'d Definition>, usize)> {
        if !self.literals.banners.is_match(text) {
            return None;
        }
        // A banner where its pattern finds it; else (no banner found so) an anchored one after a
        // prefix: a banner that starts mid-line (`NVIDIA GenAI-Perf | LLM Metrics`) is not another
        // format's anchored banner behind a prefix (`LLM Metrics`).
        self.banner_hits_by(text, |banner, text| banner.find(text).map(|m| m.start()))
            .or_else(|| self.banner_hits_by(text, after_prefix))
    }

    fn banner_hits_by(
        &self,
        text: &str,
        find: impl Fn(&regex::Regex, &str) -> Option<usize>,
    ) -> Option<(Vec<&'d Definition>, usize)> {
        let mut at = None;
        let mut hits = Vec::new();
        // Formats that share a banner (vLLM's and SGLang's) ask the same pattern once.
        let mut asked: Option<(&str, Option<usize>)> = None;
        for (d, needles) in self.text_defs.iter().zip(&self.literals.banner) {
            if !needles.found_in(text) {
                continue;
            }
            let banner = &d.block.as_ref().expect("text definition").banner;
            let start = match asked {
                Some((pattern, start)) if pattern == banner.as_str() => start,
                _ => {
                    let start = find(banner, text);
                    asked = Some((banner.as_str(), start));
                    start
                }
            };
            // No banner: a table's column header line opens the block as well (its title was
            // edited or lost); the rows under it must still be rows the definition knows.
            let start = start.or_else(|| {
                let header = d.block.as_ref().and_then(|b| b.header.as_ref())?;
                header.find(text).map(|m| m.start())
            });
            if let Some(start) = start {
                at.get_or_insert(start);
                hits.push(*d);
            }
        }
        at.map(|at| (hits, at))
    }

    fn note_context(&mut self, line: &Line) {
        if !self.literals.args_requires.is_empty() && line.text.contains(crate::definition::ARGS_DUMP) {
            self.note_args(line);
            return;
        }
        for (label, value) in self.literals.prose_context(&line.text) {
            self.context.insert(label.clone(), ContextLine { line: line.number, label, value });
        }
        if self.literals.context_labels.is_empty() || !line.text.contains(':') {
            return;
        }
        let text = line.text.as_str();
        let context_row = |from: usize| {
            let row = split_row(&text[from..])?;
            let label = label_key(row.label);
            self.literals
                .context_labels
                .iter()
                .any(|l| *l == label)
                .then(|| (label.into_owned(), row.value.to_string()))
        };
        // The row, or (a line behind a prefix: `# `, a timestamp, a container's name) the row where
        // a context label starts after a place a prefix may end (each label at its first place).
        let found =
            context_row(0).or_else(|| {
                self.literals.context_in_line.first_starts(text).into_iter().find_map(|at| {
                    (at > 0 && cut_points(text, at).last() == Some(at)).then_some(at).and_then(context_row)
                })
            });
        if let Some((label, value)) = found {
            self.context.insert(label.clone(), ContextLine { line: line.number, label, value });
        }
    }

    /// The context lines before the block that is opening, which takes them.
    fn take_context(&mut self) -> FxHashMap<String, ContextLine> {
        std::mem::replace(&mut self.context, FxHashMap::with_capacity_and_hasher(CONTEXT_ROOM, Default::default()))
    }

    /// An argument dump: each argument a definition reads, as a context line `args.NAME:`, when
    /// the dump names every argument some definition `requires` (else it is another program's).
    fn note_args(&mut self, line: &Line) {
        let Some(args) = args_dump(&line.text) else { return };
        let names: Vec<&str> = args.iter().map(|(n, _)| *n).collect();
        if !self.literals.args_requires.iter().any(|req| req.iter().all(|r| names.contains(&r.as_str()))) {
            return;
        }
        // The lengths of the names read (the last bit for any longer one): a dump has a hundred
        // arguments and the definitions read a few, so most are passed over on their length.
        let bit = |len: usize| 1u128 << len.min(127);
        let lengths = self.literals.context_args.iter().fold(0u128, |m, (n, _)| m | bit(n.len()));
        for (name, value) in args {
            if lengths & bit(name.len()) == 0 {
                continue;
            }
            if let Some((_, label)) = self.literals.context_args.iter().find(|(n, _)| n == name) {
                let label = label.clone();
                self.context.insert(label.clone(), ContextLine { line: line.number, label, value: value.to_string() });
            }
        }
    }

    fn start(&mut self, line: Line, candidates: Vec<&'d Definition>, at: usize) {
        let banner_is_row = candidates.iter().any(|d| d.block.as_ref().is_some_and(|b| b.banner_is_row));
        let mut grid = candidates.iter().copied().find_map(Grid::of);
        // What is before the banner on its line is the block's prefix (see `super::prefix`); a
        // Markdown list marker before a table's title is the title's own (`- ℹ ... Statistics`).
        let before = &line.text[..at];
        let prefix = match grid {
            Some(_) if !before.trim().is_empty() && table::without_list_marker(before).trim().is_empty() => {
                Prefix::learn(&before[..before.len() - before.trim_start().len()])
            }
            _ => Prefix::learn(before),
        };
        // Room for a usual block's lines (about 40), so that it is not regrown line by line.
        let mut body = Vec::with_capacity(48);
        let mut seen = Vec::with_capacity(48);
        if banner_is_row || grid.is_some() {
            body.push(Line { number: line.number, text: line.text[at..].to_string(), truncated: line.truncated });
            seen.push(self.known.see(&line.text[at..]));
        }
        if let Some(grid) = grid.as_mut() {
            // The title's width without its prefix: the prefix ends with the space after its last
            // character (the spaces after that one centre the title).
            let lead = before.trim_end();
            let own = if lead.is_empty() {
                &line.text[..]
            } else {
                line.text[lead.len()..].strip_prefix(' ').unwrap_or(&line.text[lead.len()..])
            };
            grid.kept.push(wrap::Kept::new(&line.text, own, false));
        }
        let number = line.number;
        let candidates: Vec<&'d Definition> = if grid.is_some() {
            candidates.into_iter().filter(|d| d.block.as_ref().is_some_and(|b| b.table.is_some())).collect()
        } else {
            candidates
        };
        let open = Open {
            candidate_bits: self.known.bits_of(&candidates),
            candidates,
            banner: line,
            banner_at: at,
            prefix,
            body,
            last_row_line: number,
            context: self.take_context(),
            notes: Vec::new(),
        };
        self.open = Some(match grid {
            Some(grid) => Mode::Grid(open, grid),
            None => Mode::Rows(open, Rows::new(seen)),
        });
    }

    fn finish_block(&mut self, done: Mode<'d>, end: BlockEnd) {
        match done {
            Mode::Rows(open, rows) => self.finish_rows(open, rows.seen, end),
            // (Table rows are read again at the end.) A table has no banner: it is a run only on
            // the evidence of its own rows.
            Mode::Markdown(open) => self.finish_markdown(open, end),
            Mode::Grid(open, grid) => self.finish_grid(open, &grid.kept, end),
        }
    }

    /// A table block: its cells become rows, in one run or (one run per table row) several.
    /// `kept`: what was known of each line of the body when it was kept.
    fn finish_grid(&mut self, mut open: Open<'d>, kept: &[wrap::Kept], end: BlockEnd) {
        self.release();
        // Lines a terminal hard-wrapped are joined again first.
        let specs = || open.candidates.iter().filter_map(|d| d.block.as_ref()?.table.as_ref().map(|t| (*d, t)));
        let ruled = specs().any(|(_, t)| t.cells == crate::definition::CellStyle::Ruled);
        let is_title = |t: &str| specs().any(|(d, spec)| table::is_title(d, spec, t));
        let (lines, wrap_note) = wrap::unwrap(std::mem::take(&mut open.body), kept, ruled, is_title);
        // Of the table formats whose banner matched, the one that knows the most of its rows.
        let mut best: Option<(&'d Definition, Vec<table::Body>, usize)> = None;
        for d in open.candidates.iter().copied() {
            let Some(spec) = d.block.as_ref().and_then(|b| b.table.as_ref()) else { continue };
            let bodies = table::bodies(d, spec, &lines);
            let n = bodies
                .iter()
                .flat_map(|b| &b.lines)
                .filter(|l| self.known.see(&l.text).is_some_and(|r| self.known.knows_in(r.known, d, &r.label)))
                .count();
            if best.as_ref().is_none_or(|(_, _, m)| n > *m) {
                best = Some((d, bodies, n));
            }
        }
        let Some((def, bodies, _)) = best else { return };
        self.several_runs = bodies.len() > 1;
        for b in bodies {
            // Tables without a closing line end with the last table that had rows.
            let last_row_line = match end {
                BlockEnd::AfterTables(_) | BlockEnd::EndOfInput => b.last_line.unwrap_or(open.last_row_line),
                _ => open.last_row_line,
            };
            let one = Open {
                body: b.lines,
                notes: b.notes.into_iter().chain(wrap_note.clone()).collect(),
                last_row_line,
                context: open.context.clone(),
                banner: open.banner.clone(),
                banner_at: open.banner_at,
                prefix: open.prefix.clone(),
                candidates: vec![def],
                candidate_bits: self.known.bits_of(&[def]),
            };
            self.finish_rows(one, Vec::new(), end);
        }
        self.several_runs = false;
    }

    /// A block of rows (`seen`: the rows as they were read line by line, if they were): which
    /// definition read it, and whether it waits for a trailer.
    fn finish_rows(&mut self, open: Open<'d>, seen: Vec<Option<BodyRow>>, end: BlockEnd) {
        self.release();
        let prefix = open.prefix.clone();
        let Some(mut block) = self.classify_block(open, seen, end) else { return };
        repair::template_notes(&mut block);
        let trailer = match (block.end, block.variant) {
            (BlockEnd::Closed(_), Some(v)) => block.definition.trailers.iter().find(|t| t.variants.contains(&v.id)),
            _ => None,
        };
        let look_after = matches!(block.end, BlockEnd::Closed(_)) && block.neighbour.is_some();
        let footer = if trailer.is_some() || look_after { 0 } else { self.footer_lines(&block) };
        if trailer.is_some() || look_after || footer > 0 {
            self.held = Some(Held { block, trailer, gap: 0, open: false, prefix, footer, after: None });
        } else {
            self.ready.push_back(block);
        }
    }

    fn classify_block(&mut self, open: Open<'d>, mut seen: Vec<Option<BodyRow>>, end: BlockEnd) -> Option<Block<'d>> {
        let mut labels = Vec::with_capacity(open.body.len());
        let mut masks = Vec::with_capacity(open.body.len());
        let mut sections = Vec::new();
        // The rows as they were seen line by line, or (a block of table rows) read now.
        if seen.len() != open.body.len() {
            seen = open.body.iter().map(|l| self.known.see(&l.text)).collect();
        }
        for (l, row) in open.body.iter().zip(&seen) {
            if let Some(row) = row {
                labels.push(row.label.as_str());
                masks.push(row.known);
            } else if let Some(name) = open.candidates.iter().find_map(|d| section_name(d, crate::lex::trim(&l.text))) {
                sections.push(name);
            }
        }
        // The definition that knows the most labels no other candidate knows (lines before the
        // banner that it reads as context count too), then the most labels; on a tie, the first.
        // (An argument dump does not vote: the tools share argument names.)
        let context_labels_seen: Vec<&String> = open.context.keys().filter(|l| !l.starts_with("args.")).collect();
        // Which candidates know each label, worked out once.
        // One flat table, a row of candidates per label (not a Vec per label).
        let n = open.candidates.len();
        let mut table = Vec::with_capacity(labels.len() * n);
        let bits: Vec<Option<usize>> = open.candidates.iter().map(|d| self.known.bit(d)).collect();
        for (l, mask) in labels.iter().zip(&masks) {
            for (d, bit) in open.candidates.iter().zip(&bits) {
                table.push(KnownLabels::knows_at(*mask, *bit, d, l));
            }
        }
        let knowers = || table.chunks_exact(n.max(1));
        let scored: Vec<(&Definition, (usize, usize))> = open
            .candidates
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let known = knowers().filter(|k| k[i]).count();
                let unique = knowers().filter(|k| k[i] && k.iter().filter(|x| **x).count() == 1).count();
                let context = context_labels_seen.iter().filter(|l| d.context_spec(l).is_some()).count();
                (*d, (unique + context, known))
            })
            .collect();
        let best = scored.iter().fold(None::<(&Definition, (usize, usize))>, |acc, (d, s)| match acc {
            Some((_, a)) if a >= *s => acc,
            _ => Some((*d, *s)),
        })?;
        if best.1.1 == 0 {
            // A banner with no row any definition knows: some other program's output.
            return None;
        }
        let ambiguous_with: Vec<&str> =
            scored.iter().filter(|(d, s)| d.id != best.0.id && *s == best.1).map(|(d, _)| d.id.as_str()).collect();
        let definition = best.0;
        let context: Vec<ContextLine> =
            open.context.into_values().filter(|c| definition.context_spec(&c.label).is_some()).collect();
        let context_labels: Vec<String> = context.iter().map(|c| c.label.clone()).collect();
        let banner_text = open.banner.text.get(open.banner_at..).unwrap_or_default().trim();
        let banner_width = definition
            .block
            .as_ref()
            .and_then(|b| b.banner.find(banner_text))
            .map_or(0, |m| m.as_str().chars().count());
        let evidence = Evidence { labels: &labels, sections: &sections, banner_width, context_labels: &context_labels };
        let variant = definition.variants.iter().find(|v| v.matches(&evidence));
        let mut context = context;
        context.sort_by(|a, b| (a.line, &a.label).cmp(&(b.line, &b.label)));
        self.blocks += 1;
        let neighbour = match end {
            BlockEnd::NextBanner(at) => Some((at, self.next_banner_text.clone().unwrap_or_default())),
            _ => self.last_cut.take().filter(|(at, _)| *at == open.banner.number).map(|(_, cut)| cut),
        }
        .map(|banner| {
            let foreign_row = self.foreign_row(definition, &banner.1, &open.body, &seen);
            Box::new(Neighbour { banner, foreign_row, after_close: None })
        });
        Some(Block {
            definition,
            variant,
            index: self.blocks,
            banner: open.banner,
            body: open.body,
            rows: seen,
            end,
            last_line: open.last_row_line,
            context,
            ambiguous_with,
            notes: open.notes,
            neighbour,
            footer: Vec::new(),
        })
    }
}

/// Where an anchored banner (`^\s*Total time: ...`) starts after a prefix (`# `, a timestamp,
/// `[rank0]: `): at the first place a prefix may end ([`cut_points`]) where it matches. Asked
/// only of a line that holds the banner's literal text and no banner where its pattern looks.
fn after_prefix(banner: &regex::Regex, text: &str) -> Option<usize> {
    if !banner.as_str().starts_with('^') {
        return None;
    }
    cut_points(text, text.len()).find(|&i| banner.is_match(&text[i..]))
}

/// Whether a line (from its first byte after white space) may be a table's row: a Markdown row
/// (`|`), or HTML table markup (`<tr>`, `<td>`, `<table>`...; see `repair`).
fn opens_table(from: &[u8]) -> bool {
    matches!(from, [b'|', ..] | [b'<', b't' | b'T', ..])
}

/// Where the banner that starts at `at` in `text` ends.
fn banner_end(banner: &regex::Regex, text: &str, at: usize) -> Option<usize> {
    banner.find(text.get(at..)?).map(|m| at + m.end())
}

/// A plain rule (`-----`), which separates a trailer's groups.
fn is_rule(trimmed: &str) -> bool {
    !trimmed.is_empty() && trimmed.chars().all(|c| c == '-')
}
