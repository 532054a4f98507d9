//! Text whose encoding changes partway: a UTF-8 log with a run appended by Windows PowerShell's
//! `>>` (UTF-16LE), or a PowerShell log with a run appended as UTF-8 by another program. Read as
//! one encoding, the second part is garbage and its runs are lost without a word; [`Mixed`] reads
//! each part in its own encoding and hands on UTF-8.
//!
//! In UTF-8, the bytes `00`, `fe` and `ff` are rare (`fe` and `ff` are never valid, a NUL is a stray
//! byte of captured output), so a search for them (memchr, at the speed of the line splitter) finds
//! every place UTF-16 may start; UTF-8 text passes through untouched and uncopied. UTF-16 starts
//! there when the bytes say so: a byte-order mark followed by ASCII text as UTF-16 (3 in 4 of the
//! next 4 code units an ASCII character with a NUL high byte), or, without one, [`RUN_UNITS`] code
//! units in a row of an ASCII character and a NUL (little-endian, the unit starting at the byte
//! before the NUL; big-endian, at the NUL).
//!
//! In UTF-16, every code unit of ASCII text has a NUL byte. UTF-8 starts again at a UTF-8
//! byte-order mark (`ef bb bf` at a unit's start), or where the ASCII text from there (to a NUL or
//! a byte beyond ASCII, looked at up to 512 bytes) is [`BACK_BYTES`] bytes or more, or all that is
//! left of the input,
//! and holds a line break and spaces at both even and odd offsets (text in UTF-16 whose units are
//! all two ASCII bytes is CJK: its high bytes are `4e`-`7e` or punctuation, and its spaces, as its
//! line breaks, fall at one parity only). A code unit that starts neither switch is
//! decoded (lossily: a lone surrogate is U+FFFD, a byte-order mark dropped). UTF-16 of the other
//! byte order starts at its byte-order mark, or at [`RUN_UNITS`] units of ASCII in that order.

use std::io::{self, BufRead, Read};

/// Code units in a row, each an ASCII character and a NUL, that start UTF-16 without a mark.
pub const RUN_UNITS: usize = 8;
/// Bytes of NUL-free ASCII text (at least) that end UTF-16...
pub const BACK_BYTES: usize = 48;
/// ...looked at up to this many.
const BACK_LOOK: usize = 512;
/// Bytes looked ahead at a place where the encoding may change.
const LOOK: usize = 2 * RUN_UNITS + 2;
/// Raw UTF-16 bytes transcoded at a time.
const CHUNK: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Utf8,
    Utf16 { big_endian: bool },
}

/// What a `fill_buf` handed out, for `consume`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Served {
    Out,
    Look,
    Inner,
}

/// A byte stream read as UTF-8 and UTF-16 parts, in whichever order, handed on as UTF-8.
pub struct Mixed<R> {
    inner: R,
    mode: Mode,
    /// Bytes taken from `inner` and not yet handed on or decoded (in the current mode's
    /// encoding): read ahead at a possible change of encoding.
    look: Vec<u8>,
    look_at: usize,
    /// UTF-8 decoded from UTF-16, not yet handed on.
    out: Vec<u8>,
    out_at: usize,
    /// In UTF-8, bytes at the start of the current source known to start no UTF-16.
    clear: usize,
    /// The last byte handed on in UTF-8 (a little-endian unit may start there).
    prev: Option<u8>,
    served: Served,
    eof: bool,
}

fn ascii(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\r' | 0x20..=0x7e)
}

/// UTF-16 starting at `at` of `w` (`w[0]` being the byte looked at), when `prev` is the byte
/// before it: `Some((big_endian, skip))`, UTF-16 starting `skip` bytes after `w[0]`.
fn utf16_starts(w: &[u8], prev: Option<u8>, ended: bool) -> Option<(bool, usize)> {
    let units = |bytes: &[u8], be: bool| {
        bytes
            .chunks_exact(2)
            .take_while(
                |u| if be { u[0] == 0 && u[1] != 0 && ascii(u[1]) } else { u[1] == 0 && u[0] != 0 && ascii(u[0]) },
            )
            .count()
    };
    match w {
        [0xff, 0xfe, rest @ ..] | [0xfe, 0xff, rest @ ..] => {
            let be = w[0] == 0xfe;
            let n = (rest.len() / 2).min(4);
            if n == 0 || n < 4 && !ended {
                return None;
            }
            let good = rest[..n * 2]
                .chunks_exact(2)
                .filter(
                    |u| if be { u[0] == 0 && u[1] != 0 && ascii(u[1]) } else { u[1] == 0 && u[0] != 0 && ascii(u[0]) },
                )
                .count();
            (good * 4 >= n * 3).then_some((be, 2))
        }
        [0, ..] => {
            // Little-endian: the unit started at the byte before, handed on already as the ASCII
            // character it is; the NUL is its high byte.
            // Both readings give the same characters but at the ends; which byte starts the
            // first unit tells them apart: text appended after a line is big-endian when the
            // byte before the NUL is that line's end, little-endian when it is a character.
            let le = prev.is_some_and(|p| p != 0 && ascii(p)) && 1 + units(&w[1..], false) >= RUN_UNITS;
            let be = units(w, true) >= RUN_UNITS;
            match (le, be) {
                (true, true) if matches!(prev, Some(b'\n' | b'\r')) => Some((true, 0)),
                (true, _) => Some((false, 1)),
                (false, true) => Some((true, 0)),
                (false, false) => None,
            }
        }
        _ => None,
    }
}

/// UTF-8 starting at the start of `w`, a unit's start in UTF-16: the number of bytes to skip (a
/// UTF-8 byte-order mark), or `None`. `w` holds up to [`BACK_LOOK`] bytes, fewer at the end.
fn utf8_starts(w: &[u8], ended: bool) -> Option<usize> {
    if w.starts_with(&[0xef, 0xbb, 0xbf]) {
        return Some(3);
    }
    // The ASCII text from here (to a NUL, a byte beyond ASCII, or the end of what is looked at).
    let text = &w[..w.iter().position(|&b| b == 0 || !ascii(b)).unwrap_or(w.len())];
    if text.len() < BACK_BYTES && !(ended && text.len() == w.len() && !text.is_empty()) {
        return None;
    }
    if !text.contains(&b'\n') {
        return None;
    }
    let spaces = |parity: usize| text.iter().skip(parity).step_by(2).filter(|&&b| b == b' ').count();
    (spaces(0) >= 2 && spaces(1) >= 2).then_some(0)
}

impl<R: BufRead> Mixed<R> {
    /// A stream that starts as UTF-8 (or any 8-bit bytes).
    pub fn utf8(inner: R) -> Self {
        Self::new(inner, Mode::Utf8)
    }

    /// A stream that starts as UTF-16 (its byte-order mark, if any, is dropped).
    pub fn utf16(inner: R, big_endian: bool) -> Self {
        Self::new(inner, Mode::Utf16 { big_endian })
    }

    fn new(inner: R, mode: Mode) -> Self {
        Mixed {
            inner,
            mode,
            look: Vec::new(),
            look_at: 0,
            out: Vec::new(),
            out_at: 0,
            clear: 0,
            prev: None,
            served: Served::Inner,
            eof: false,
        }
    }

    /// Take bytes from `inner` into `look` until it holds `want` bytes not yet handed on, or the
    /// input ends.
    fn gather(&mut self, want: usize) -> io::Result<()> {
        if self.look_at > 0 {
            self.look.drain(..self.look_at);
            self.look_at = 0;
        }
        while self.look.len() < want && !self.eof {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                self.eof = true;
                break;
            }
            let n = chunk.len().min(want - self.look.len());
            self.look.extend_from_slice(&chunk[..n]);
            self.inner.consume(n);
        }
        Ok(())
    }

    /// Decode the next UTF-16 bytes into `out`; false at the end of the input.
    fn transcode(&mut self) -> io::Result<bool> {
        let Mode::Utf16 { big_endian } = self.mode else { return Ok(true) };
        self.out.clear();
        self.out_at = 0;
        // Raw bytes: what was read ahead, else the inner buffer (at most CHUNK), copied into look;
        // at least a code unit's two bytes, unless the input ends.
        if self.look_at == self.look.len() {
            self.look.clear();
            self.look_at = 0;
            let chunk = loop {
                match self.inner.fill_buf() {
                    Ok(c) => break c,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if chunk.is_empty() {
                self.eof = true;
                return Ok(false);
            }
            let n = chunk.len().min(CHUNK);
            self.look.extend_from_slice(&chunk[..n]);
            self.inner.consume(n);
        }
        if self.look.len() - self.look_at < 2 {
            self.gather(2)?;
        }
        let mut units = Vec::with_capacity((self.look.len() - self.look_at) / 2);
        let mut at = self.look_at;
        loop {
            let rest = &self.look[at..];
            if rest.len() < 2 {
                if rest.len() == 1 && self.eof {
                    // An odd byte at the end: an ASCII character is kept (text whose units were
                    // read a byte off), any other is lossy, as invalid UTF-8.
                    units.push(if rest[0] < 0x80 { u16::from(rest[0]) } else { 0xd800 });
                    at += 1;
                }
                break;
            }
            let (a, b) = (rest[0], rest[1]);
            if a != 0 && b != 0 && (ascii(a) && ascii(b) || a == 0xef && b == 0xbb) {
                // UTF-8 may start here: look far enough ahead to tell.
                let need = if a == 0xef { 3 } else { BACK_LOOK };
                if rest.len() < need && !self.eof {
                    // Decode what comes before, and look again with more bytes.
                    if !units.is_empty() {
                        break;
                    }
                    self.look_at = at;
                    self.gather(need)?;
                    at = self.look_at;
                    continue;
                }
                if let Some(skip) = utf8_starts(&rest[..rest.len().min(BACK_LOOK)], self.eof) {
                    self.look_at = at + skip;
                    self.mode = Mode::Utf8;
                    self.clear = 0;
                    self.prev = None;
                    push_units(&mut self.out, &units);
                    return Ok(true);
                }
            }
            // The other byte order (UTF-16 of the other order appended, with or without its mark).
            let flipped = |u: &[u8]| {
                if big_endian { u[1] == 0 && u[0] != 0 && ascii(u[0]) } else { u[0] == 0 && u[1] != 0 && ascii(u[1]) }
            };
            let reversed_mark = if big_endian { [a, b] == [0xff, 0xfe] } else { [a, b] == [0xfe, 0xff] };
            if reversed_mark || flipped(&[a, b]) {
                if rest.len() < 2 * RUN_UNITS && !self.eof {
                    if !units.is_empty() {
                        break;
                    }
                    self.look_at = at;
                    self.gather(2 * RUN_UNITS)?;
                    at = self.look_at;
                    continue;
                }
                let from = if reversed_mark { 2 } else { 0 };
                let run = rest[from..].chunks_exact(2).take_while(|u| flipped(u)).count();
                if run >= RUN_UNITS || reversed_mark && run * 2 + from == rest.len() && run > 0 {
                    self.mode = Mode::Utf16 { big_endian: !big_endian };
                    self.look_at = at + from;
                    push_units(&mut self.out, &units);
                    return Ok(true);
                }
            }
            units.push(if big_endian { u16::from_be_bytes([a, b]) } else { u16::from_le_bytes([a, b]) });
            at += 2;
        }
        self.look_at = at;
        push_units(&mut self.out, &units);
        Ok(!(self.out.is_empty() && self.eof && self.look_at == self.look.len()))
    }
}

/// UTF-16 code units as UTF-8, lossily; byte-order marks and NULs dropped.
fn push_units(out: &mut Vec<u8>, units: &[u16]) {
    let mut buf = [0u8; 4];
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok('\u{feff}' | '\0') => {}
            Ok(c) => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
            Err(_) => out.extend_from_slice("\u{fffd}".as_bytes()),
        }
    }
}

impl<R: BufRead> BufRead for Mixed<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        loop {
            if self.out_at < self.out.len() {
                self.served = Served::Out;
                return Ok(&self.out[self.out_at..]);
            }
            if let Mode::Utf16 { .. } = self.mode {
                if !self.transcode()? {
                    self.served = Served::Out;
                    return Ok(&[]);
                }
                continue;
            }
            // UTF-8: from what was read ahead, else from the inner buffer, up to a place where
            // UTF-16 may start; there, look ahead to tell.
            let from_look = self.look_at < self.look.len();
            let source: &[u8] = if from_look {
                &self.look[self.look_at..]
            } else {
                match self.inner.fill_buf() {
                    Ok(c) => c,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if source.is_empty() {
                self.served = Served::Inner;
                return Ok(&[]);
            }
            // Pass over the bytes that start no UTF-16 (a stray NUL, an invalid byte), up to one
            // that does, or one too near the end of what is in hand to tell. The rest of a buffer
            // already passed over (`clear`) is not searched again.
            let mut i = self.clear.min(source.len());
            let at = loop {
                match memchr::memchr3(0, 0xfe, 0xff, &source[i..]) {
                    None => break source.len(),
                    Some(j) => {
                        let c = i + j;
                        if c + LOOK > source.len() {
                            break c;
                        }
                        let prev = if c == 0 { self.prev } else { Some(source[c - 1]) };
                        if utf16_starts(&source[c..c + LOOK], prev, false).is_some() {
                            break c;
                        }
                        i = c + 1;
                    }
                }
            };
            if at > 0 {
                self.clear = at;
                self.served = if from_look { Served::Look } else { Served::Inner };
                // (Re-borrowed: the borrow checker does not see through the branch above.)
                return Ok(if from_look {
                    &self.look[self.look_at..self.look_at + at]
                } else {
                    &self.inner.fill_buf()?[..at]
                });
            }
            // A byte that may start UTF-16 is first: decide with LOOK bytes from it.
            let decided =
                if source.len() >= LOOK { Some(utf16_starts(&source[..LOOK], self.prev, false)) } else { None };
            let decided = match decided {
                Some(d) => d,
                None => {
                    // Too few bytes in hand: read ahead into `look`.
                    if !from_look {
                        let n = source.len();
                        let copy = source.to_vec();
                        self.inner.consume(n);
                        self.look.drain(..self.look_at);
                        self.look_at = 0;
                        self.look.extend_from_slice(&copy);
                    }
                    self.gather(LOOK)?;
                    let end = self.look.len().min(self.look_at + LOOK);
                    utf16_starts(&self.look[self.look_at..end], self.prev, self.eof)
                }
            };
            match decided {
                Some((big_endian, skip)) => {
                    // Whatever is in hand from here on is UTF-16: into `look`, to be decoded.
                    if self.look_at < self.look.len() {
                        self.look_at += skip.min(self.look.len() - self.look_at);
                    } else {
                        let chunk = self.inner.fill_buf()?;
                        let n = chunk.len().min(LOOK);
                        self.look.clear();
                        self.look_at = 0;
                        self.look.extend_from_slice(&chunk[skip.min(n)..n]);
                        self.inner.consume(n);
                    }
                    self.mode = Mode::Utf16 { big_endian };
                }
                None => {
                    // Not UTF-16: the byte is handed on as it is (a stray NUL, an invalid byte).
                    self.clear = 1;
                    let from_look = self.look_at < self.look.len();
                    self.served = if from_look { Served::Look } else { Served::Inner };
                    return Ok(if from_look {
                        &self.look[self.look_at..self.look_at + 1]
                    } else {
                        &self.inner.fill_buf()?[..1]
                    });
                }
            }
        }
    }

    fn consume(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        match self.served {
            Served::Out => self.out_at += n,
            Served::Look => {
                self.prev = Some(self.look[self.look_at + n - 1]);
                self.look_at += n;
                self.clear = self.clear.saturating_sub(n);
            }
            Served::Inner => {
                if let Ok(buf) = self.inner.fill_buf()
                    && let Some(&b) = buf.get(n - 1)
                {
                    self.prev = Some(b);
                }
                self.inner.consume(n);
                self.clear = self.clear.saturating_sub(n);
            }
        }
    }
}

impl<R: BufRead> Read for Mixed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let got = self.fill_buf()?;
        let n = got.len().min(buf.len());
        buf[..n].copy_from_slice(&got[..n]);
        self.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, be: bool, bom: bool) -> Vec<u8> {
        let mut v = Vec::new();
        if bom {
            v.extend_from_slice(if be { &[0xfe, 0xff] } else { &[0xff, 0xfe] });
        }
        for u in text.encode_utf16() {
            v.extend_from_slice(&if be { u.to_be_bytes() } else { u.to_le_bytes() });
        }
        v
    }

    fn read_all(bytes: &[u8], start16: Option<bool>, cap: usize) -> Vec<u8> {
        let r = io::BufReader::with_capacity(cap, bytes);
        let mut m = match start16 {
            Some(be) => Mixed::utf16(r, be),
            None => Mixed::utf8(r),
        };
        let mut out = Vec::new();
        loop {
            let got = m.fill_buf().unwrap();
            if got.is_empty() {
                break;
            }
            let n = got.len().min(5);
            out.extend_from_slice(&got[..n]);
            m.consume(n);
        }
        out
    }

    const A: &str =
        "INFO first run line\n============ Serving Benchmark Result ============\nSuccessful requests:  16\n";
    const B: &str = "Mean TTFT (ms):  12.5 and some more text here\nMedian TPOT (ms): 3.25 in the second part\n";

    #[test]
    fn utf8_then_utf16_in_any_form() {
        for be in [false, true] {
            for bom in [false, true] {
                let bytes = [A.as_bytes(), &utf16(B, be, bom)].concat();
                for cap in [1, 3, 7, 16, 64, 4096] {
                    assert_eq!(
                        read_all(&bytes, None, cap),
                        format!("{A}{B}").as_bytes(),
                        "be {be} bom {bom} cap {cap}"
                    );
                }
            }
        }
    }

    #[test]
    fn utf16_then_utf8_and_back() {
        for be in [false, true] {
            for bom8 in [false, true] {
                let eight = if bom8 { [&[0xef, 0xbb, 0xbf][..], B.as_bytes()].concat() } else { B.as_bytes().to_vec() };
                let bytes = [&utf16(A, be, true)[..], &eight, &utf16(A, be, true)].concat();
                for cap in [1, 2, 5, 64, 4096] {
                    assert_eq!(
                        read_all(&bytes[2..], Some(be), cap),
                        format!("{A}{B}{A}").as_bytes(),
                        "be {be} cap {cap}"
                    );
                }
            }
        }
    }

    #[test]
    fn stray_bytes_and_cjk_are_not_switches() {
        // A stray NUL, invalid bytes, a few NUL-separated characters: UTF-8 (lossy later).
        let text = b"a\0b line\xff\xfe x\nA\0B\0C\0 done\n";
        for cap in [1, 4, 4096] {
            assert_eq!(read_all(text, None, cap), text, "cap {cap}");
        }
        // UTF-16 text of CJK characters whose bytes are all ASCII stays UTF-16.
        let cjk = "上下中文本上传下载，文件上下文上下中文本上传下载，文件上下文上下中文本上传下载\n";
        let bytes = utf16(cjk, false, false);
        assert!(bytes.iter().filter(|&&b| b != 0 && ascii(b)).count() > 40);
        assert_eq!(read_all(&bytes, Some(false), 4096), cjk.as_bytes());
    }
}
