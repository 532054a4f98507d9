//! Splitting one cleaned line into `label:` and value, the shape every block row has.
//!
//! Columns are never trusted: values longer than their pad width, right-aligned pastes and
//! unpadded rows all occur. A row is a label that ends at the first colon followed by white space
//! (or the end of the line), and whatever follows it.

/// A `label: value` line. `label` keeps its colon; `value` is trimmed and may be empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowText<'a> {
    pub label: &'a str,
    pub value: &'a str,
}

/// Split a line into label and value, when it has the shape of a row.
pub fn split_row(line: &str) -> Option<RowText<'_>> {
    split_row_noting(line).map(|(row, _)| row)
}

/// [`split_row`] with the label as [`label_key`] gives it: the row's label key and its value.
pub fn split_row_key(line: &str) -> Option<(std::borrow::Cow<'_, str>, &str)> {
    let (row, normal) = split_row_noting(line)?;
    let key = if normal { std::borrow::Cow::Borrowed(row.label) } else { label_key(row.label) };
    Some((key, row.value))
}

/// [`split_row`], and whether the label is known to be normal already ([`label_key`] would
/// return it as it is), which the fast pass finds out on the way.
fn split_row_noting(line: &str) -> Option<(RowText<'_>, bool)> {
    let text = line.trim_ascii();
    let bytes = text.as_bytes();
    // The usual row has a short ASCII label: a tight pass over label bytes stops at its colon,
    // or at a byte that no label has (`[`, `"`, `|`), which rejects a log line at once.
    let n = bytes.len().min(LABEL_MAX + 1);
    let stop = bytes[..n].iter().position(|b| !LABEL_BYTE[*b as usize]).unwrap_or(n);
    match bytes.get(stop) {
        Some(b':')
            if stop < n
                && bytes.get(stop + 1).is_none_or(|n| n.is_ascii_whitespace())
                && (bytes[0].is_ascii_alphabetic() || matches!(bytes[0], b'#' | b'(')) =>
        {
            let label = &bytes[..stop];
            let folds = label.contains(&b'\t') || label.windows(2).any(|w| w == b"  ");
            return Some((RowText { label: &text[..=stop], value: trim_start(&text[stop + 1..]) }, !folds));
        }
        Some(&b) if stop < n && b != b':' && b < 0x80 && !b.is_ascii_whitespace() => return None,
        // Label bytes only and no colon (a rule, a `---Section---` header): no row.
        None => return None,
        _ => {}
    }
    // Anything else (a label that starts otherwise or has other white space, a colon without
    // white space after it, a longer or non-ASCII label): byte by byte, then the general way,
    // which decides the same. (A label of label bytes alone, starting as one does, was answered
    // above: its colon is the first byte that is no label byte.)
    for (i, &b) in bytes.iter().enumerate().take(LABEL_MAX + 1) {
        if b == b':' && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) {
            return split_at(text, i).map(|row| (row, false));
        }
        if b >= 0x80 {
            break;
        }
        if !LABEL_BYTE[b as usize] && !b.is_ascii_whitespace() {
            return None;
        }
    }
    split_row_general(text).map(|row| (row, false))
}

/// `trim_ascii_start`, eight spaces at a time over the padding between label and value.
fn trim_start(s: &str) -> &str {
    let b = s.as_bytes();
    let mut i = 0;
    while b.len() - i >= 8 && b[i..i + 8] == [b' '; 8] {
        i += 8;
    }
    s[i..].trim_ascii_start()
}

/// [`split_row`] of a trimmed line, without the fast pass.
fn split_row_general(text: &str) -> Option<RowText<'_>> {
    let bytes = text.as_bytes();
    let at = memchr::memchr_iter(b':', bytes).find(|&i| bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()))?;
    split_at(text, at)
}

/// The row of a trimmed line whose label ends with the colon at `at`, if that is a label.
fn split_at(text: &str, at: usize) -> Option<RowText<'_>> {
    let label = &text[..=at];
    if !is_label(&label[..at]) {
        return None;
    }
    Some(RowText { label, value: text[at + 1..].trim_ascii_start() })
}

/// Characters a label has at most.
const LABEL_MAX: usize = 64;

/// A label is short and made of words: letters, digits, spaces and `()/%.,#-_+'&*<>=`.
/// This keeps log lines (`INFO 08-28 22:41:28 [metrics.py:351] ...:`) and paths out.
fn is_label(s: &str) -> bool {
    let s = s.trim_ascii();
    if s.len() > LABEL_MAX * 4 {
        return false;
    }
    let Some(first) = s.chars().next() else { return false };
    if !(first.is_alphabetic() || first == '#' || first == '(') {
        return false;
    }
    if s.is_ascii() {
        return s.len() <= LABEL_MAX && s.bytes().all(|b| LABEL_BYTE[b as usize]);
    }
    s.chars().count() <= LABEL_MAX && s.chars().all(|c| c.is_alphanumeric() || " \t()/%.,#-_+'&*<>=".contains(c))
}

/// The ASCII bytes a label is made of.
static LABEL_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b' ' | b'\t'
                    | b'('
                    | b')'
                    | b'/'
                    | b'%'
                    | b'.'
                    | b','
                    | b'#'
                    | b'-'
                    | b'_'
                    | b'+'
                    | b'\''
                    | b'&'
                    | b'*'
                    | b'<'
                    | b'>'
                    | b'='
            );
        i += 1;
    }
    t
};

/// `str::trim`, with the usual ends (printable ASCII) found without decoding characters.
pub fn trim(s: &str) -> &str {
    let t = s.trim_ascii();
    match (t.as_bytes().first(), t.as_bytes().last()) {
        // A byte that is not white space to `trim` either (`trim_ascii` keeps a vertical tab).
        (Some(&first), Some(&last)) if first < 0x80 && last < 0x80 && first != 0x0b && last != 0x0b => t,
        _ => s.trim(),
    }
}

/// A label as compared with definitions: trimmed, inner white space folded to one space.
pub fn normalize_label(label: &str) -> String {
    label_key(label).into_owned()
}

/// [`normalize_label`] without a copy when the label is already normal (the usual case).
pub fn label_key(label: &str) -> std::borrow::Cow<'_, str> {
    let t = label.trim_ascii();
    // One pass: already normal unless two white-space bytes meet, or a tab or non-ASCII byte.
    let mut prev_space = false;
    let normal = t.bytes().all(|b| {
        let space = b.is_ascii_whitespace();
        let ok = b != b'\t' && b < 0x80 && !(space && prev_space);
        prev_space = space;
        ok
    });
    if normal {
        return std::borrow::Cow::Borrowed(t);
    }
    let mut out = String::with_capacity(label.len());
    for word in label.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Option<(&str, &str)> {
        split_row(line).map(|r| (r.label, r.value))
    }

    #[test]
    fn rows_of_every_shape() {
        assert_eq!(split("Mean TTFT (ms):                          140.14    "), Some(("Mean TTFT (ms):", "140.14")));
        assert_eq!(split("Backend:                                 sglang-oai"), Some(("Backend:", "sglang-oai")));
        assert_eq!(split("  Position 0:                            98.08     "), Some(("Position 0:", "98.08")));
        assert_eq!(split("Per-position acceptance (%):"), Some(("Per-position acceptance (%):", "")));
        assert_eq!(
            split("SLOs (ms):                               ttft:500 tpot:50"),
            Some(("SLOs (ms):", "ttft:500 tpot:50"))
        );
        assert_eq!(split("Total time: 12.34 s"), Some(("Total time:", "12.34 s")));
        assert_eq!(split("Median TTFT (ms):\t505.64"), Some(("Median TTFT (ms):", "505.64")));
    }

    #[test]
    fn non_rows() {
        assert_eq!(split("---------------Time to First Token----------------"), None);
        assert_eq!(split("=================================================="), None);
        assert_eq!(split("INFO 08-28 22:41:28 [metrics.py:351] Avg prompt throughput: 0.0 tokens/s"), None);
        assert_eq!(split("/opt/venv/lib/python3.11/site-packages/x.py:53: UserWarning: Only CUDA"), None);
        assert_eq!(split("Namespace(backend='sglang-oai', base_url=None)"), None);
        assert_eq!(split(" 42%|████▏     | 420/1000"), None);
        assert_eq!(split(""), None);
    }

    /// The fast pass decides as the general way does, on every line of the samples and on
    /// lines made to sit on its edges (long labels, padding before the colon, other white space,
    /// non-ASCII bytes).
    #[test]
    fn the_fast_pass_agrees_with_the_general_way() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
        let mut lines: Vec<String> = Vec::new();
        for sub in std::fs::read_dir(dir).unwrap() {
            let sub = sub.unwrap().path();
            if !sub.is_dir() {
                continue;
            }
            for f in std::fs::read_dir(sub).unwrap() {
                let Ok(bytes) = std::fs::read(f.unwrap().path()) else { continue };
                lines.extend(String::from_utf8_lossy(&bytes).lines().map(str::to_string));
            }
        }
        assert!(lines.len() > 10_000, "{}", lines.len());
        let label = "a".repeat(64);
        for extra in [
            format!("{label}: 1"),
            format!("{label}b: 1"),
            format!("X{}: 1", " ".repeat(80)),
            format!("Mean TTFT (ms){}: 1", " ".repeat(60)),
            "Mean\x0cTTFT: 1".into(),
            "Mean TTFT\x0c: 1".into(),
            "Débit (tok/s): 12".into(),
            "é: 1".into(),
            "a:b c: 1".into(),
            ":".into(),
            "a:".into(),
            " (x): y ".into(),
            "1 foo: 3".into(),
            "-x: 1".into(),
        ] {
            lines.push(extra);
        }
        for extra in ["Mean  TTFT (ms): 1", "Mean\tTTFT: 1", "Mean \tTTFT: 1", "a  : 1", "a : 1"] {
            lines.push(extra.into());
        }
        for line in &lines {
            assert_eq!(split_row(line), split_row_general(line.trim_ascii()), "{line:?}");
            let key = split_row(line).map(|r| (label_key(r.label), r.value));
            assert_eq!(split_row_key(line), key, "{line:?}");
        }
    }

    #[test]
    fn trim_is_str_trim() {
        for s in [
            "",
            " ",
            "a",
            " a b ",
            "\u{b}a\u{b}",
            "\u{a0}x\u{a0}",
            " \u{2003}x ",
            "\t\r\n\u{c}x\u{c}",
            " é ",
            "x\u{85}",
            "\u{1c}x",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
    }

    #[test]
    fn labels_fold_white_space() {
        assert_eq!(normalize_label("  Mean   TTFT (ms): "), "Mean TTFT (ms):");
        assert_eq!(normalize_label("Mean\tTTFT:"), "Mean TTFT:");
        assert_eq!(normalize_label("Débit  (tok/s):"), "Débit (tok/s):");
        assert!(matches!(label_key("Mean TTFT (ms):"), std::borrow::Cow::Borrowed("Mean TTFT (ms):")));
        assert!(matches!(label_key(" a b "), std::borrow::Cow::Borrowed("a b")));
    }
}
