//! Templates: a block whose rows hold placeholders (`xx.xx`, `[result]`) is said to be one.

use crate::detect::Block;
use crate::report::Note;

/// Whether a printed value is a template's placeholder, not a figure: `xx.xx`, `X`, `...`, `…`,
/// `[result]`, `<value>`, `{value}`, `TBD`, `TODO`, `N/A`, `?` (a unit after it is allowed).
pub(super) fn is_placeholder(value: &str) -> bool {
    // (A figure, the usual value, starts with a digit: answered from its first byte, before the
    // value is trimmed and cut at white space, which cost ten times as much.)
    if value.trim_start().as_bytes().first().is_none_or(u8::is_ascii_digit) {
        return false;
    }
    let v = value.trim();
    let v = v.split_whitespace().next().unwrap_or("");
    let x = |c: u8| c.eq_ignore_ascii_case(&b'x');
    let xs = v.bytes().all(|c| x(c) || matches!(c, b'.' | b',')) && v.bytes().any(x);
    let dots = v.chars().all(|c| c == '.') && v.len() >= 2 || v == "…";
    let bracketed = |o: char, c: char| v.len() >= 3 && v.starts_with(o) && v.ends_with(c);
    let word = ["tbd", "todo", "n/a", "na", "tba"].iter().any(|w| v.eq_ignore_ascii_case(w));
    xs || dots
        || bracketed('[', ']')
        || bracketed('<', '>')
        || bracketed('{', '}')
        || word
        || matches!(v, "?" | "??" | "???")
}

/// A block whose known rows all hold placeholders is a template (a note `template`); a block
/// with some figures and some placeholders is a partly filled template (a note
/// `template-partial` naming the rows whose figure is absent).
pub(in crate::detect) fn template_notes(block: &mut Block) {
    // (The usual block holds no placeholder at all: answered without asking which rows are known.)
    let mut values = block.body.iter().zip(&block.rows).filter_map(|(l, r)| Some(&l.text[r.as_ref()?.value.clone()]));
    if !values.any(is_placeholder) {
        return;
    }
    let mut placeholders = Vec::new();
    let mut figures = 0;
    for (line, row) in block.body.iter().zip(&block.rows) {
        let Some(row) = row else { continue };
        if row.known == 0 && !block.definition.knows_label(&row.label) {
            continue;
        }
        let value = &line.text[row.value.clone()];
        if is_placeholder(value) {
            placeholders.push((line.number, row.label.trim_end_matches(':').to_string(), value.trim().to_string()));
        } else if !value.trim().is_empty() {
            figures += 1;
        }
    }
    let Some((first, _, example)) = placeholders.first().cloned() else { return };
    if figures == 0 && placeholders.len() >= 2 {
        block.notes.push(Note {
            code: "template".into(),
            message: format!(
                "a template, not a run: every row holds a placeholder ({example:?} and {} more), no figure is read",
                placeholders.len() - 1
            ),
            line: Some(first),
        });
    } else {
        let rows: Vec<String> = placeholders.iter().map(|(_, l, v)| format!("{l} ({v:?})")).collect();
        block.notes.push(Note {
            code: "template-partial".into(),
            message: format!("placeholders, not figures, in: {}; those figures are absent", rows.join(", ")),
            line: Some(first),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        for p in ["xx.xx", "XX", "x.xx", "...", "…", "[result]", "<value>", "{ttft}", "TBD", "N/A", "xx.xx ms", "?"] {
            assert!(is_placeholder(p), "{p}");
        }
        for f in ["12.5", "0", "inf", "nan", "1,234.5", "-", "", "x1", "12 ms"] {
            assert!(!is_placeholder(f), "{f}");
        }
    }
}
