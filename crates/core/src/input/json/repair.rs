//! Documents as people paste them, made readable without guessing a figure: `//` and `/* */`
//! comments added to annotate a paste ([`blank_comments`]), and an export cut short by an issue
//! tracker, a terminal's scroll-back or a size limit ([`close_cut`]).
//!
//! Neither changes a value. Comments are replaced by spaces (lines and columns stay where they
//! were). A cut document is closed after its last complete member: a value the cut may have
//! shortened (`"p99": 12.3` at the very end, which may have been `12.34`) is dropped with
//! everything after it, and the brackets still open are closed. What is left is what the
//! document held up to there, so a figure read from it is the figure printed.

/// Where a string that starts at `from` (after its opening quote) ends: after its closing quote,
/// or after a raw line break, which no JSON string holds (prose with a stray quote).
fn string_end(text: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' | b'\n' => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

/// Replace every `//` (to the end of its line) and `/* ... */` comment outside strings by spaces,
/// keeping line breaks. `None` when there is none.
pub fn blank_comments(text: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < text.len() {
        match (text[i], text.get(i + 1)) {
            (b'"', _) => {
                i = string_end(text, i + 1);
                continue;
            }
            (b'/', Some(b'/')) => {
                let end = memchr::memchr(b'\n', &text[i..]).map_or(text.len(), |n| i + n);
                out.get_or_insert_with(|| text.to_vec())[i..end].fill(b' ');
                i = end;
                continue;
            }
            (b'/', Some(b'*')) => {
                let end = memchr::memmem::find(&text[i + 2..], b"*/").map_or(text.len(), |n| i + 2 + n + 2);
                let buf = out.get_or_insert_with(|| text.to_vec());
                buf[i..end].iter_mut().filter(|c| **c != b'\n').for_each(|c| *c = b' ');
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A document whose lines were hard-wrapped (by a terminal, an editor, or a tracker that folds
/// long lines) with its breaks taken out: its first line (counted from the line's start,
/// `first_col` characters before the document) is at least `min` characters long, and it and
/// every line after it as long as it are joined to the next. `None` when its first line is
/// shorter, or it has one line.
pub fn unfold(text: &[u8], first_col: usize, min: usize) -> Option<Vec<u8>> {
    use super::embedded::chars;
    let mut lines = text.split(|b| *b == b'\n');
    let first = lines.next()?;
    let width = first_col + chars(first);
    if width < min {
        return None;
    }
    let mut out = first.to_vec();
    let mut joined = 0;
    let mut last_width = width;
    for line in lines {
        if last_width == width {
            joined += 1;
        } else {
            out.push(b'\n');
        }
        out.extend_from_slice(line);
        last_width = chars(line);
    }
    (joined > 0).then_some(out)
}

/// A place a cut document can be closed: after `at` bytes, with these brackets open.
struct Cut {
    at: usize,
    open: Vec<u8>,
}

/// The most of a document cut short that is complete: closed after its last complete member,
/// tried from the latest such place back (a few, so that text after the cut, such as a closing
/// fence or a line of prose, is left out). `close` is handed each closed text and says whether it
/// reads; the first that does is returned with the byte offset it was cut at. `None` when the
/// document was not cut (its brackets balance) or no closing reads.
pub fn close_cut<T>(text: &[u8], mut close: impl FnMut(&[u8]) -> Option<T>) -> Option<(T, usize)> {
    const TRIES: usize = 8;
    let mut open: Vec<u8> = Vec::new();
    let mut cuts: Vec<Cut> = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        match b {
            b'"' => {
                i = string_end(text, i + 1);
                continue;
            }
            b'{' | b'[' => {
                open.push(b);
                cuts.push(Cut { at: i + 1, open: open.clone() });
            }
            b'}' | b']' => {
                if open.pop().is_none() {
                    break;
                }
                if open.is_empty() {
                    // Balanced: the document was not cut here.
                    return None;
                }
                cuts.push(Cut { at: i + 1, open: open.clone() });
            }
            // Before a comma, the member it ends is complete.
            b',' if !open.is_empty() => cuts.push(Cut { at: i, open: open.clone() }),
            _ => {}
        }
        if cuts.len() > 4 * TRIES {
            cuts.drain(..cuts.len() - TRIES);
        }
        i += 1;
    }
    if open.is_empty() {
        return None;
    }
    for cut in cuts.iter().rev().take(TRIES) {
        let mut closed = text[..cut.at].to_vec();
        closed.extend(cut.open.iter().rev().map(|b| if *b == b'{' { b'}' } else { b']' }));
        if let Some(t) = close(&closed) {
            return Some((t, cut.at));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parses(t: &[u8]) -> Option<serde_json::Value> {
        serde_json::from_slice(t).ok()
    }

    #[test]
    fn comments_become_spaces_outside_strings() {
        let t = b"{\"a\": 1, // one\n \"b\": \"x // y\", /* two\n */ \"c\": 2}";
        let out = blank_comments(t).unwrap();
        assert_eq!(out.len(), t.len());
        let v = parses(&out).unwrap();
        assert_eq!(v["b"], "x // y");
        assert_eq!(v["c"], 2);
        assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 2);
        assert!(blank_comments(b"{\"url\": \"http://x\"}").is_none());
    }

    #[test]
    fn a_cut_document_keeps_its_complete_members_only() {
        let t = b"{\"a\": {\"avg\": 1.5, \"p50\": 2}, \"b\": {\"avg\": 3.2, \"p99\": 12.3";
        let (v, at) = close_cut(t, parses).unwrap();
        // `p99` may have been cut short: it is dropped, `avg` of `b` kept.
        assert_eq!(v["b"]["avg"], 3.2);
        assert!(v["b"].get("p99").is_none());
        assert_eq!(v["a"]["p50"], 2);
        assert_eq!(&t[..at], b"{\"a\": {\"avg\": 1.5, \"p50\": 2}, \"b\": {\"avg\": 3.2");
    }

    #[test]
    fn text_after_the_cut_is_left_out() {
        let t = b"{\n  \"a\": 1,\n  \"b\": [1, 2,\n```\n\nthe rest was cut, see the file\n";
        let (v, _) = close_cut(t, parses).unwrap();
        assert_eq!(v["a"], 1);
        assert_eq!(v["b"], serde_json::json!([1, 2]));
    }

    #[test]
    fn folded_lines_are_joined_at_their_width_only() {
        let doc = br#"{"a": "0123456789", "b": 12345.678, "c": [1, 2, 3]}"#;
        let folded: Vec<u8> = doc.chunks(10).collect::<Vec<_>>().join(&b'\n');
        assert_eq!(unfold(&folded, 0, 10).unwrap(), doc.to_vec());
        // Counted from the line's start: a prefix before the document is part of the width.
        assert_eq!(unfold(&folded[4..], 4, 10).unwrap(), doc[4..].to_vec());
        assert!(unfold(&folded, 0, 11).is_none());
        assert!(unfold(b"{\n  \"a\": 1\n}", 0, 10).is_none());
    }

    #[test]
    fn a_whole_document_is_not_cut() {
        assert!(close_cut(b"{\"a\": [1, 2]}", parses).is_none());
        assert!(close_cut(b"{\"a\": [1, 2]} trailing", parses).is_none());
    }
}
