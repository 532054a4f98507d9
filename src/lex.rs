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
    let text = line.trim_ascii();
    let bytes = text.as_bytes();
    let at = memchr::memchr_iter(b':', bytes).find(|&i| bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()))?;
    let label = &text[..=at];
    if !is_label(&label[..at]) {
        return None;
    }
    Some(RowText { label, value: text[at + 1..].trim_ascii() })
}

/// A label is short and made of words: letters, digits, spaces and `()/%.,#-_+'&*<>=`.
/// This keeps log lines (`INFO 08-28 22:41:28 [metrics.py:351] ...:`) and paths out.
fn is_label(s: &str) -> bool {
    let s = s.trim_ascii();
    if s.len() > 64 * 4 {
        return false;
    }
    let Some(first) = s.chars().next() else { return false };
    if !(first.is_alphabetic() || first == '#' || first == '(') {
        return false;
    }
    if s.is_ascii() {
        return s.len() <= 64 && s.bytes().all(|b| LABEL_BYTE[b as usize]);
    }
    s.chars().count() <= 64 && s.chars().all(|c| c.is_alphanumeric() || " \t()/%.,#-_+'&*<>=".contains(c))
}

/// The ASCII bytes a label is made of.
static LABEL_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric() || matches!(b, b' ' | b'\t' | b'(' | b')' | b'/' | b'%' | b'.' | b',' | b'#' | b'-' | b'_' | b'+' | b'\'' | b'&' | b'*' | b'<' | b'>' | b'=');
        i += 1;
    }
    t
};

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
        assert_eq!(split("SLOs (ms):                               ttft:500 tpot:50"), Some(("SLOs (ms):", "ttft:500 tpot:50")));
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

    #[test]
    fn labels_fold_white_space() {
        assert_eq!(normalize_label("  Mean   TTFT (ms): "), "Mean TTFT (ms):");
        assert_eq!(normalize_label("Mean\tTTFT:"), "Mean TTFT:");
        assert_eq!(normalize_label("Débit  (tok/s):"), "Débit (tok/s):");
        assert!(matches!(label_key("Mean TTFT (ms):"), std::borrow::Cow::Borrowed("Mean TTFT (ms):")));
        assert!(matches!(label_key(" a b "), std::borrow::Cow::Borrowed("a b")));
    }
}
