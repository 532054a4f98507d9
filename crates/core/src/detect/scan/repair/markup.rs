//! HTML markup around a block: the text a line of markup shows ([`unmark_text`]), found only on a
//! line that has a known tag or a character entity ([`has_markup`]).

/// A row of table cells as a Markdown table row.
pub(super) fn cells_row(cells: &[String]) -> String {
    format!("| {} |", cells.iter().map(|c| c.trim()).collect::<Vec<_>>().join(" | "))
}

/// What markup text is made of.
#[derive(Debug, PartialEq)]
pub(super) enum Part {
    Text(String),
    RowStart,
    Cell,
    RowEnd,
}

/// Tags that break a line where they stand.
const BREAKING: &[&str] = &[
    "br",
    "p",
    "div",
    "pre",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "tbody",
    "thead",
    "details",
    "summary",
    "blockquote",
    "hr",
];
/// Tags that are taken off without breaking the line.
const INLINE: &[&str] =
    &["code", "span", "b", "strong", "em", "i", "tt", "samp", "kbd", "font", "small", "a", "u", "mark", "sup", "sub"];

/// Whether a line has a known tag or a character entity, as [`unmark_text`] would find (without
/// building anything: a log line with `<function ...>` or `a & b` in it is passed at once).
pub(super) fn has_markup(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2_iter(b'<', b'&', b).any(|i| {
        let rest = &text[i..];
        if b[i] == b'&' {
            return entity(rest).is_some();
        }
        let inner = rest[1..].strip_prefix('/').unwrap_or(&rest[1..]);
        let name_len = inner.bytes().take_while(u8::is_ascii_alphanumeric).count();
        let (name, after) = inner.split_at(name_len);
        let tag_like = after.is_empty() || after.starts_with([' ', '/', '\t', '>']);
        tag_like && rest.contains('>') && is_known_tag(name)
    })
}

/// Whether a tag's name (any case) is one [`unmark_text`] takes off.
fn is_known_tag(name: &str) -> bool {
    let known = |set: &[&str]| set.iter().any(|t| t.eq_ignore_ascii_case(name));
    known(BREAKING) || known(INLINE) || known(&["tr", "td", "th"])
}

/// The text a line of markup shows, split where its markup breaks lines (`None`: the line has no
/// known tag or entity, and is left as it is).
pub(super) fn unmark_text(text: &str) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut changed = false;
    let mut rest = text;
    while let Some(i) = rest.find(['<', '&']) {
        cur.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with('&') {
            if let Some((ch, len)) = entity(rest) {
                cur.push(ch);
                rest = &rest[len..];
                changed = true;
            } else {
                cur.push('&');
                rest = &rest[1..];
            }
            continue;
        }
        let Some(close) = rest.find('>') else {
            cur.push('<');
            rest = &rest[1..];
            continue;
        };
        let inner = &rest[1..close];
        let closing = inner.starts_with('/');
        let name: String = inner
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        let after_name = &inner.trim_start_matches('/')[name.len()..];
        let tag_like = after_name.is_empty() || after_name.starts_with([' ', '/']) || after_name.starts_with('\t');
        let known = tag_like
            && (BREAKING.contains(&name.as_str())
                || INLINE.contains(&name.as_str())
                || matches!(name.as_str(), "tr" | "td" | "th"));
        if !known {
            cur.push('<');
            rest = &rest[1..];
            continue;
        }
        changed = true;
        rest = &rest[close + 1..];
        let flush = |cur: &mut String, parts: &mut Vec<Part>| {
            parts.push(Part::Text(std::mem::take(cur)));
        };
        match (name.as_str(), closing) {
            ("tr", false) => {
                flush(&mut cur, &mut parts);
                parts.push(Part::RowStart);
            }
            ("tr", true) => {
                flush(&mut cur, &mut parts);
                parts.push(Part::RowEnd);
            }
            ("td" | "th", false) => {
                flush(&mut cur, &mut parts);
                parts.push(Part::Cell);
            }
            ("td" | "th", true) => flush(&mut cur, &mut parts),
            (n, _) if BREAKING.contains(&n) => flush(&mut cur, &mut parts),
            _ => {}
        }
    }
    if !changed {
        return None;
    }
    cur.push_str(rest);
    parts.push(Part::Text(cur));
    // Empty pieces a line break tag left (`<pre><code>` at a line's start) are dropped; a line
    // that held only markup gives none.
    parts.retain(|p| !matches!(p, Part::Text(t) if t.trim().is_empty()));
    Some(
        parts
            .into_iter()
            .map(|p| match p {
                // `&nbsp;` is a space.
                Part::Text(t) => Part::Text(t.replace('\u{a0}', " ")),
                p => p,
            })
            .collect(),
    )
}

/// A character entity at the start of `s`: the character, and the entity's length.
fn entity(s: &str) -> Option<(char, usize)> {
    // (Bytes: the twelfth may fall inside a character; `;` is where a name ends.)
    let end = s.as_bytes()[..s.len().min(12)].iter().position(|b| *b == b';')?;
    let name = &s[1..end];
    let ch = match name {
        "nbsp" => '\u{a0}',
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        "#39" => '\'',
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((ch, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_taken_off() {
        let t = |s: &str| match unmark_text(s) {
            None => vec![s.to_string()],
            Some(parts) => parts
                .into_iter()
                .map(|p| match p {
                    Part::Text(t) => t,
                    other => format!("{other:?}"),
                })
                .collect(),
        };
        assert_eq!(t("<pre><code>=== Serving ==="), vec!["=== Serving ==="]);
        assert_eq!(t("Mean TTFT (ms): &nbsp; 12.3<br>"), vec!["Mean TTFT (ms):   12.3"]);
        assert_eq!(t("a &lt; b"), vec!["a < b"]);
        // Not markup: a placeholder, a comparison.
        assert_eq!(t("Mean TTFT (ms): <value>"), vec!["Mean TTFT (ms): <value>"]);
        assert_eq!(t("if a < b && c > d"), vec!["if a < b && c > d"]);
        assert_eq!(
            t("<tr><td>Mean TTFT (ms)</td><td>12.3</td></tr>"),
            vec!["RowStart", "Cell", "Mean TTFT (ms)", "Cell", "12.3", "RowEnd"]
        );
        // The quick test says what the full one finds.
        for s in [
            "<pre><code>=== Serving ===",
            "Mean TTFT (ms): &nbsp; 12.3<br>",
            "a &lt; b",
            "Mean TTFT (ms): <value>",
            "if a < b && c > d",
            "dispatch_function=<function cmd at 0x7f>, x=1",
            "<TD>12.3</TD>",
            "&éééééééééé;",
            "x & y;",
        ] {
            assert_eq!(has_markup(s), unmark_text(s).is_some(), "{s:?}");
        }
        assert_eq!(entity("&#x41;"), Some(('A', 6)));
        assert_eq!(entity("&#65;"), Some(('A', 5)));
        assert_eq!(entity("&bogus;"), None);
    }
}
