//! What a single line is, apart from any block: a Markdown table row, a section header, an escaped
//! line break in it.

use crate::definition::Definition;

/// A Markdown table row `| label | value |` (label without a trailing colon); the separator row
/// `|---|---|` gives an empty label.
pub(super) fn table_row(text: &str) -> Option<(String, String)> {
    let t = text.trim();
    let inner = t.strip_prefix('|')?.strip_suffix('|').unwrap_or_else(|| t.strip_prefix('|').unwrap_or(t));
    let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
    if cells.len() < 2 {
        return None;
    }
    if cells.iter().all(|c| c.chars().all(|ch| matches!(ch, '-' | ':' | ' '))) {
        return Some((String::new(), String::new()));
    }
    let label = cells[0].trim_matches('*').trim().trim_end_matches(':').trim().to_string();
    let value = cells[1].trim_matches('`').trim().to_string();
    Some((label, value))
}

/// How many cells after a Markdown table row's label hold a number (`24.44`, `1,888.96`,
/// `-3%`). Two or more: the table has several value columns (runs side by side, or a figure's
/// statistics), which only its header tells apart; such a row is no `label | value` row.
pub(super) fn value_cells(text: &str) -> usize {
    let t = text.trim();
    let Some(inner) = t.strip_prefix('|') else { return 0 };
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner
        .split('|')
        .skip(1)
        .filter(|c| {
            let c = c.trim().trim_matches(['*', '`']).trim_start_matches(['+', '-']);
            let c = c.strip_prefix('.').unwrap_or(c);
            c.starts_with(|ch: char| ch.is_ascii_digit())
        })
        .count()
}

/// The name of a section header line for this definition (empty: a plain rule).
pub fn section_name(def: &Definition, trimmed: &str) -> Option<String> {
    let block = def.block.as_ref()?;
    let re = block.section.as_ref()?;
    if !block.section_first.may_match(trimmed) || !re.is_match(trimmed) {
        return None;
    }
    // The name is the header without its padding (a capture group would cost far more).
    Some(crate::lex::trim(strip_around(trimmed, &block.section_strip)).to_string())
}

/// `text.trim_matches(|c| strip.contains(c))`, byte by byte for an ASCII `strip` (`-`), where
/// asking the string for each character of a long rule cost more than the rest of the line.
fn strip_around<'t>(text: &'t str, strip: &str) -> &'t str {
    if !strip.is_ascii() {
        return text.trim_matches(|c| strip.contains(c));
    }
    let (b, set) = (text.as_bytes(), strip.as_bytes());
    // Both ends fall next to an ASCII byte (or the text's ends): character boundaries.
    let start = b.iter().position(|x| !set.contains(x)).unwrap_or(b.len());
    let end = b.iter().rposition(|x| !set.contains(x)).map_or(start, |i| i + 1);
    &text[start..end]
}

/// Whether a line has an escaped line break (a backslash and `n`, in a JSON log line), as
/// `contains("\\n")` would say, by a byte search for the backslash (the usual line has none).
pub(super) fn has_escaped_newline(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b'\\', b).any(|i| b.get(i + 1) == Some(&b'n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_around_is_trim_matches() {
        for (text, strip) in [
            ("---Time to First Token---", "-"),
            ("------", "-"),
            ("", "-"),
            ("-a-", ""),
            ("ℹ Summary Info ", "ℹ "),
            ("-é-x-é-", "-"),
            ("=-= x =-=", "=-"),
            ("x", "-"),
        ] {
            assert_eq!(strip_around(text, strip), text.trim_matches(|c| strip.contains(c)), "{text:?} {strip:?}");
        }
    }
}
