//! One text block made a run: extract -> canonical, the notes of what the block was, then
//! [`super::close()`].

use crate::detect::{Block, BlockEnd, Neighbour};
use crate::pipeline::close::{Claims, close};
use crate::report::{self, Truncation};
use crate::validate::Policy;
use crate::{Run, canonical, extract};

/// extract -> canonical -> derive -> validate, for one text block.
pub(crate) fn run_of_block(block: &Block, input: &str, policy: &Policy) -> Run {
    let mut extracted = extract::extract(block);
    let misplaced = extracted.misplaced.take();
    let truncated = match block.end {
        BlockEnd::Closed(_) | BlockEnd::Table(_) | BlockEnd::AfterTables(_) => None,
        BlockEnd::NextBanner(line) => Some(Truncation {
            after_line: block.last_line,
            reason: format!("a new result banner started at line {line} before the closing line"),
        }),
        BlockEnd::Noise => Some(Truncation {
            after_line: block.last_line,
            reason: "the lines after it are not rows and no closing line came".into(),
        }),
        BlockEnd::EndOfInput => {
            Some(Truncation { after_line: block.last_line, reason: "the input ended before the closing line".into() })
        }
    };
    let origin = canonical::Origin {
        definition: block.definition,
        variant: block.variant,
        input,
        block: block.index,
        first_line: Some(block.banner.number),
        last_line: Some(block.last_line),
        truncated,
        format: block.definition.format,
    };
    let mut run = canonical::assemble(origin, extracted);
    run.notes.extend(block.notes.iter().cloned());
    // Another result's banner beside the block, and a row that gives the other result away: the
    // rows of two results are mixed in it (blocks interleaved line by line, or one pasted into
    // another). No figure can be told to be this run's: none is kept. The giveaways are each one
    // an honest block cannot print: a figure twice with different values, a row only the other
    // result's tool prints, rows of its tool after its closing line with no banner of their own
    // (the rest of the block whose closing line closed it), a row its tool does not print where
    // it stands.
    if let Some(neighbour) = block.neighbour.as_deref()
        && let Some(giveaway) = interleaving(block, neighbour, &run, misplaced.as_ref())
    {
        run.notes.push(report::Note {
            code: "interleaved".into(),
            message: format!(
                "two result blocks are interleaved: the block of `{}` at line {} and the one of `{}` at line {} \
                     are mixed in one block ({giveaway}), so no figure can be told to be one run's (read each \
                     block apart)",
                crate::error::printable(block.banner.text.trim()),
                block.banner.number,
                crate::error::printable(&neighbour.banner.1),
                neighbour.banner.0
            ),
            line: Some(block.banner.number),
        });
        run.workload = Default::default();
        run.totals = Default::default();
        run.reported = Default::default();
    }
    if let BlockEnd::Table(_) = block.end {
        run.notes.push(report::Note {
            code: "markdown-table".into(),
            message: "read from a Markdown table of the rows (no banner or closing line)".into(),
            line: Some(block.banner.number),
        });
    }
    if !block.ambiguous_with.is_empty() {
        run.notes.push(report::Note {
            code: "ambiguous-tool".into(),
            message: format!(
                "the rows fit {} as well as {}; read as {}",
                block.ambiguous_with.join(", "),
                block.definition.id,
                block.definition.id
            ),
            line: Some(block.banner.number),
        });
    }
    close(&mut run, policy, Claims::None);
    // A template (placeholders, not figures: `detect` notes it) is said to be one by the check
    // that finds nothing usable in it.
    if let Some(t) =
        run.notes.iter().find(|n| n.code == "template" || n.code == "interleaved").map(|n| n.message.clone())
        && let Some(c) =
            run.checks.iter_mut().find(|c| c.id == report::RuleId::KeyFigures && c.status == report::Status::Fail)
    {
        c.message = format!("{t}; {}", c.message);
    }
    run
}

/// What shows that a block beside another result's banner holds rows of both, said for the
/// note (None: nothing does).
fn interleaving(
    block: &Block,
    neighbour: &Neighbour,
    run: &Run,
    misplaced: Option<&(usize, String)>,
) -> Option<String> {
    let quoted = |(line, label): &(usize, String)| format!("`{}` at line {line}", crate::error::printable(label));
    if let Some(n) = run.notes.iter().find(|n| n.code == "conflicting-value") {
        return Some(match n.line {
            Some(l) => format!("a figure printed twice with different values, at line {l}"),
            None => "a figure printed twice with different values".into(),
        });
    }
    if repeated_rows(block) >= 2 {
        return Some("rows printed twice with different values".into());
    }
    if let Some(row) = &neighbour.foreign_row {
        return Some(format!("{}, a row only the other block's tool prints", quoted(row)));
    }
    if let Some(row) = &neighbour.after_close {
        return Some(format!("{} right after its closing line, with no banner of its own", quoted(row)));
    }
    misplaced.map(|row| format!("{}, a row its tool does not print there", quoted(row)))
}

/// How many labels the block's definition knows are printed twice in the block with different
/// values, in whatever section: a block prints each once, two blocks' rows mixed print many twice.
/// Labels the definition reads more than once (vllm-rs's steady-state section repeats two
/// throughput rows; SGLang's cache report's `Device:` and `Host:`) are not counted.
fn repeated_rows(block: &Block) -> usize {
    let mut seen: rustc_hash::FxHashMap<&str, &str> = Default::default();
    let mut repeated: rustc_hash::FxHashSet<&str> = Default::default();
    for (line, row) in block.body.iter().zip(&block.rows) {
        let Some(row) = row else { continue };
        if !block.definition.knows_label(&row.label) || block.definition.reads_label_twice(&row.label) {
            continue;
        }
        let value = line.text.get(row.value.clone()).unwrap_or_default().trim();
        match seen.get(row.label.as_str()) {
            Some(&old) if old != value => {
                repeated.insert(row.label.as_str());
            }
            Some(_) => {}
            None => {
                seen.insert(&row.label, value);
            }
        }
    }
    repeated.len()
}
