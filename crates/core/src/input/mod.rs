//! Reading an input incrementally into clean lines.
//!
//! Captured benchmark output is merged stdout and stderr: tqdm bars rewritten with `\r`, colour
//! codes, CRLF endings, invalid UTF-8, NUL bytes, and sometimes no newline at all. A [`LineReader`]
//! splits on `\n` and on a lone `\r` (a `\r`-separated piece keeps the number of its physical line,
//! so line numbers match an editor's), decodes lossily, strips terminal escape sequences and other
//! control characters, and caps a line's length so that memory stays bounded whatever the input.

use std::io::{self, BufRead};

pub mod decode;
pub mod json;
pub mod mixed;

/// Longest line kept, in bytes; the rest of a longer line is skipped (it cannot be a result row).
pub const MAX_LINE: usize = 64 * 1024;

/// One cleaned line (or `\r`-separated piece of a line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based physical line number (count of `\n` before it, plus one).
    pub number: usize,
    pub text: String,
    /// The line was longer than [`MAX_LINE`] and was cut.
    pub truncated: bool,
}

/// A line as raw bytes, borrowed from the reader until the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawLine<'a> {
    pub number: usize,
    pub bytes: &'a [u8],
    pub truncated: bool,
}

impl RawLine<'_> {
    /// The cleaned text (see [`clean`]).
    pub fn to_line(self) -> Line {
        Line { number: self.number, text: clean(self.bytes), truncated: self.truncated }
    }
}

/// Splits a byte stream into lines without ever holding more than one line; a line that lies
/// within the reader's buffer is handed out without being copied.
pub struct LineReader<R> {
    inner: R,
    number: usize,
    buf: Vec<u8>,
    truncated: bool,
    after_cr: bool,
    done: bool,
    /// Bytes of the reader's buffer handed out by the last call, consumed at the next.
    lent: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R) -> Self {
        LineReader {
            inner,
            number: 1,
            buf: Vec::with_capacity(256),
            truncated: false,
            after_cr: false,
            done: false,
            lent: 0,
        }
    }

    /// The reader read from.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The next line, as raw bytes.
    pub fn next_raw(&mut self) -> Option<io::Result<RawLine<'_>>> {
        if self.lent > 0 {
            self.inner.consume(self.lent);
            self.lent = 0;
        }
        if self.done {
            return None;
        }
        self.buf.clear();
        self.truncated = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            if chunk.is_empty() {
                self.done = true;
                if self.buf.is_empty() && !self.truncated {
                    return None;
                }
                return Some(Ok(RawLine { number: self.number, bytes: &self.buf, truncated: self.truncated }));
            }
            // A `\n` right after a `\r` ends the same line (CRLF), not a new empty one.
            if self.after_cr {
                self.after_cr = false;
                if chunk[0] == b'\n' {
                    self.inner.consume(1);
                    self.number += 1;
                    continue;
                }
            }
            match memchr::memchr2(b'\n', b'\r', chunk) {
                Some(i) => {
                    let sep = chunk[i];
                    let number = self.number;
                    if sep == b'\n' {
                        self.number += 1;
                    } else {
                        self.after_cr = true;
                    }
                    if self.buf.is_empty() && !self.truncated && i <= MAX_LINE {
                        // The whole line is in the buffer: lend it.
                        self.lent = i + 1;
                        let chunk = self.inner.fill_buf().expect("buffered");
                        return Some(Ok(RawLine { number, bytes: &chunk[..i], truncated: false }));
                    }
                    let room = MAX_LINE.saturating_sub(self.buf.len());
                    self.buf.extend_from_slice(&chunk[..i.min(room)]);
                    self.truncated |= i > room;
                    self.inner.consume(i + 1);
                    return Some(Ok(RawLine { number, bytes: &self.buf, truncated: self.truncated }));
                }
                None => {
                    // No line end in this chunk: keep what fits under the cap, skip the rest.
                    let len = chunk.len();
                    let room = MAX_LINE.saturating_sub(self.buf.len());
                    self.buf.extend_from_slice(&chunk[..len.min(room)]);
                    self.truncated |= len > room;
                    self.inner.consume(len);
                }
            }
        }
    }
}

impl<R: BufRead> LineReader<R> {
    /// Skip, without splitting them, whole lines that the caller rules out: `first_wanted` is given
    /// buffered bytes that start at a line start and end with a `\n`, and returns an offset at or
    /// before the start of the first line that may matter (`None`: none does). Line numbers are
    /// kept. Most of a log is noise: this passes over it at memchr speed, not line by line. A read
    /// error is left for [`LineReader::next_raw`] to report.
    pub fn skip_unwanted(&mut self, first_wanted: impl Fn(&[u8]) -> Option<usize>) {
        if self.lent > 0 {
            self.inner.consume(self.lent);
            self.lent = 0;
        }
        if self.done {
            return;
        }
        loop {
            let Ok(chunk) = self.inner.fill_buf() else { return };
            let Some(last) = memchr::memrchr(b'\n', chunk) else { return };
            let lines = &chunk[..=last];
            let upto = match first_wanted(lines) {
                // Up to the line break before the wanted line (it may have `\r` pieces before it).
                Some(at) => match memchr::memrchr(b'\n', &lines[..at.min(lines.len())]) {
                    Some(nl) => nl + 1,
                    None => return,
                },
                None => lines.len(),
            };
            let (skipped, all) = (memchr::memchr_iter(b'\n', &lines[..upto]).count(), upto == lines.len());
            self.number += skipped;
            // The skipped bytes end with a `\n`: a `\r` before them no longer pairs with anything.
            self.after_cr = false;
            self.inner.consume(upto);
            if !all {
                return;
            }
        }
    }
}

impl<R: BufRead> Iterator for LineReader<R> {
    type Item = io::Result<Line>;

    fn next(&mut self) -> Option<io::Result<Line>> {
        Some(self.next_raw()?.map(|raw| raw.to_line()))
    }
}

/// Decode lossily and drop terminal escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL`)
/// and control characters other than tab. Trailing white space is kept; callers trim.
pub fn clean(bytes: &[u8]) -> String {
    // The usual line, printable ASCII and tabs, is kept as it is: one pass that vectorizes (no
    // early exit), instead of a scan for control bytes and a UTF-8 decoding.
    if bytes.iter().fold(true, |ok, &b| ok & (matches!(b, 0x20..=0x7e) | (b == b'\t'))) {
        // SAFETY: every byte was just checked to be printable ASCII or a tab: valid UTF-8 (a
        // second check by from_utf8 was a third of this function's cost).
        return unsafe { std::str::from_utf8_unchecked(bytes) }.to_owned();
    }
    let needs_work = bytes.iter().any(|&b| b < 0x20 && b != b'\t' || b == 0x7f);
    let text = String::from_utf8_lossy(bytes);
    if !needs_work {
        return text.into_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    // parameters and intermediates, then one final byte in @..~
                    for d in chars.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    while let Some(d) = chars.next() {
                        if d == '\u{7}' {
                            break;
                        }
                        if d == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            },
            '\t' => out.push('\t'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<(usize, String)> {
        LineReader::new(io::BufReader::with_capacity(7, bytes))
            .map(|l| l.unwrap())
            .map(|l| (l.number, l.text))
            .collect()
    }

    #[test]
    fn splits_lf_crlf_and_cr() {
        assert_eq!(lines(b"a\nb\r\nc"), [(1, "a".into()), (2, "b".into()), (3, "c".into())]);
        assert_eq!(
            lines(b"\r 10%|#\r 50%|##\nx\n"),
            [(1, "".into()), (1, " 10%|#".into()), (1, " 50%|##".into()), (2, "x".into())]
        );
        assert_eq!(lines(b""), Vec::<(usize, String)>::new());
        assert_eq!(lines(b"\n\n"), [(1, "".into()), (2, "".into())]);
    }

    #[test]
    fn cleans_escapes_and_bytes() {
        assert_eq!(clean(b"\x1b[0;36m(Bench pid=1)\x1b[0m \x1b[32mINFO\x1b[0m x"), "(Bench pid=1) INFO x");
        assert_eq!(clean(b"a\x00b\xffc\td"), "ab\u{fffd}c\td");
        assert_eq!(clean(b"\x1b]0;title\x07ok"), "ok");
    }

    #[test]
    fn skipping_keeps_line_numbers() {
        let input = b"noise\r\nx\rnoise\nwant 1\n\nnoise\r\r\nwant 2\rnoise\n | want 3\nnoise";
        let want = |hay: &[u8]| memchr::memmem::find(hay, b"want").or_else(|| memchr::memchr(b'|', hay));
        for cap in [1, 3, 7, 64] {
            let mut reader = LineReader::new(io::BufReader::with_capacity(cap, &input[..]));
            let mut got = Vec::new();
            loop {
                reader.skip_unwanted(want);
                match reader.next_raw() {
                    Some(l) => {
                        let l = l.unwrap().to_line();
                        if want(l.text.as_bytes()).is_some() {
                            got.push((l.number, l.text));
                        }
                    }
                    None => break,
                }
            }
            assert_eq!(got, [(3, "want 1".into()), (6, "want 2".into()), (7, " | want 3".into())], "buffer of {cap}");
        }
    }

    #[test]
    fn caps_long_lines() {
        let mut input = vec![b'x'; MAX_LINE * 3];
        input.extend_from_slice(b"\nshort\n");
        let got: Vec<Line> = LineReader::new(io::BufReader::new(&input[..])).map(|l| l.unwrap()).collect();
        assert_eq!(got.len(), 2);
        assert!(got[0].truncated);
        assert_eq!(got[0].text.len(), MAX_LINE);
        assert_eq!((got[1].number, got[1].text.as_str(), got[1].truncated), (2, "short", false));
    }
}
