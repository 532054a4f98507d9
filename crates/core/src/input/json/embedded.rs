//! JSON records inside text: a result file printed or pasted into a log (after a shell prompt,
//! between markers, in a Markdown fence, pretty-printed over many lines, behind a constant line
//! prefix, nested in another document, or escaped inside a JSON string).
//!
//! A [`Finder`] is fed the bytes of a text as they are read, in pieces of any size, and finds the
//! extent of every candidate object: from a `{` whose next byte (after blanks) is `"` (or a line
//! end: a pretty-printed object; or `\"`: an escaped one) to the `}` that balances it, counting
//! brackets outside strings. It knows nothing of formats: each complete candidate goes to a
//! `judge` (the pipeline's, which parses and classifies it), which takes it, ignores it, or asks
//! to look inside it. Inside a candidate that was not taken (a wrapper document, a JSON log line
//! with an escaped result in a string, or text that only started like JSON), the bytes after its
//! `{` are read again for candidates of their own; an escaped candidate runs to the end of its
//! string, is unescaped once, and read by a finder of its own.
//!
//! Bounds. A candidate is abandoned (and its bytes read again) at a line break inside a string
//! (JSON has none), at a line of a multi-line candidate that no pretty printer ends that way, past
//! [`MAX_DEPTH`] brackets, or past [`MAX_RECORD`] bytes, so memory holds at most one record.
//! Reading bytes again is paid from a work budget proportional to the bytes fed
//! ([`REREAD_FACTOR`] times, plus [`REREAD_SLACK`]): a pathological input (thousands of `{"`
//! that never close) costs linear time, not quadratic; once the budget is spent, a candidate that
//! is not taken is passed over whole.

use crate::input::decode::{Budget, Held, UNBOUNDED};

/// Longest candidate kept, in bytes (a `--save-detailed` result of a few thousand requests).
pub const MAX_RECORD: usize = 64 << 20;
/// Deepest nesting of brackets followed (serde_json stops at 128).
pub const MAX_DEPTH: usize = 128;
/// Bytes that may be read again, per byte fed...
pub const REREAD_FACTOR: u64 = 16;
/// ...plus this many.
pub const REREAD_SLACK: u64 = 16 << 20;
/// How many times a record may be unescaped (a result in a string in a string).
const MAX_UNESCAPE: u8 = 2;
/// A line of a candidate at least this many characters long that breaks where JSON cannot (inside
/// a string, a number or a word) was hard-wrapped: by a terminal (80 columns), an editor, or a
/// tracker that folds long lines (1,000 characters).
pub const MIN_FOLD: usize = 64;

/// What the judge made of a complete candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// A record: nothing inside it is looked at again.
    Taken,
    /// Nothing inside it can be a record (none of the keys a record has is in it).
    Ignored,
    /// Not a record itself; records may be inside it.
    LookInside,
}

/// How a candidate was found, for the judge (and the note on its run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Found {
    /// 1-based line of its `{`.
    pub line: usize,
    /// Inside another candidate that was not a record (a wrapper document, a log record).
    pub nested: bool,
    /// Unescaped from a JSON string.
    pub unescaped: bool,
    /// It never closed: the text ended, or a line of it is no JSON (a paste cut short); the bytes
    /// run to there, that line included.
    pub cut: bool,
    /// Its lines were hard-wrapped: the breaks were taken out.
    pub folded: bool,
}

/// The judge: given a candidate's bytes (from its `{` to its `}`) and how it was found.
pub trait Judge {
    fn judge(&mut self, bytes: &[u8], found: Found) -> Judged;
}

struct Candidate {
    line: usize,
    buf: Vec<u8>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The first byte after the `{` (blanks aside) was seen, or a line break came first.
    started: bool,
    /// An escaped candidate (`{\"`): runs to the end of its string.
    in_escaped_string: bool,
    /// Last byte of the current line that is not white space.
    last: u8,
    nested: bool,
    /// The place of a large held record, when it is one (see [`Budget::grow`]).
    held: Held,
    /// Characters on the current line so far, from the line's start (before the `{` too).
    line_len: usize,
    /// Characters before its `{` on its first line.
    col0: usize,
    /// Line breaks kept in it.
    breaks: usize,
    /// The width its lines were hard-wrapped at: breaks after lines this long are taken out.
    fold: Option<usize>,
    /// In a `//` comment (an annotated paste): to the end of the line. `slash`: a `/` was the
    /// last byte.
    in_comment: bool,
    slash: bool,
    /// `//` at a line's start: a comment unless JSON follows (then a line prefix).
    maybe_comment: bool,
    /// Only blanks on the current line so far.
    line_blank: bool,
}

/// Finds JSON records in a text fed to it piece by piece (see the module's documentation).
pub struct Finder {
    line: usize,
    /// Line numbers are not counted (a finder over an unescaped string: its records are on the
    /// line of the string).
    fixed_line: bool,
    candidate: Option<Candidate>,
    fed: u64,
    reread: u64,
    unescaped: u8,
    /// Reading inside a candidate that was not taken.
    nested: bool,
    /// What a candidate may hold, beside [`MAX_RECORD`] (a decompressed text's bound).
    budget: Budget,
    /// Characters since the last line break.
    col: usize,
}

impl Default for Finder {
    fn default() -> Self {
        Finder::new()
    }
}

enum Step {
    /// Every byte given was taken into the candidate.
    More,
    /// The candidate is complete after `n` bytes.
    Done(usize),
    /// The candidate is no JSON; the byte at `n` was not taken.
    Abandon(usize),
    /// The line break at `n` is a hard wrap: the bytes before it are taken, it is not.
    Fold(usize),
}

impl Finder {
    pub fn new() -> Finder {
        Finder::within(UNBOUNDED.clone())
    }

    /// A finder whose candidates stay within `budget` (a decompressed text's: see
    /// [`crate::input::decode::Budget`]); one past it is passed over, as one past [`MAX_RECORD`].
    pub fn within(budget: Budget) -> Finder {
        Finder {
            line: 1,
            fixed_line: false,
            candidate: None,
            fed: 0,
            reread: 0,
            unescaped: 0,
            nested: false,
            budget,
            col: 0,
        }
    }

    /// Read the next piece of the text.
    pub fn feed(&mut self, bytes: &[u8], judge: &mut dyn Judge) {
        self.fed += bytes.len() as u64;
        self.process(bytes, judge);
    }

    /// The text ended: a candidate still open is no record (an escaped one ended with its text).
    pub fn finish(&mut self, judge: &mut dyn Judge) {
        while let Some(c) = self.candidate.take() {
            if c.in_escaped_string {
                self.unescape_and_read(c, judge);
            } else {
                self.cut_or_reread(c, judge);
            }
        }
    }

    fn count_lines(&mut self, bytes: &[u8]) {
        if !self.fixed_line {
            self.line += memchr::memchr_iter(b'\n', bytes).count();
        }
        match memchr::memrchr(b'\n', bytes) {
            Some(at) => self.col = chars(&bytes[at + 1..]),
            None => self.col += chars(bytes),
        }
    }

    /// How a complete (or, `cut`, never closed) candidate was found, for the judge.
    fn found(&self, c: &Candidate, cut: bool) -> Found {
        Found { line: c.line, nested: c.nested, unescaped: self.unescaped > 0, cut, folded: c.fold.is_some() }
    }

    /// A candidate that never closed: if it ran over several lines, it may be a record cut short
    /// (the judge decides); otherwise, or if it is none, its bytes are read again.
    fn cut_or_reread(&mut self, c: Candidate, judge: &mut dyn Judge) {
        if c.breaks > 0 || c.fold.is_some() {
            let found = self.found(&c, true);
            if judge.judge(&c.buf, found) == Judged::Taken {
                return;
            }
        }
        self.reread(c, judge);
    }

    fn process(&mut self, bytes: &[u8], judge: &mut dyn Judge) {
        let mut i = 0;
        while i < bytes.len() {
            let Some(c) = self.candidate.as_mut() else {
                // The usual piece, a line at a time, is answered by one search: the first `{` or
                // line break (bytes before a `{` found so hold no line break).
                let rest = &bytes[i..];
                let first = memchr::memchr2(b'{', b'\n', rest);
                let j = match first {
                    Some(k) if rest[k] == b'{' => {
                        self.col += chars(&rest[..k]);
                        k
                    }
                    // One line, ended by the piece's last byte: no `{` in it.
                    Some(k) if k + 1 == rest.len() => {
                        if !self.fixed_line {
                            self.line += 1;
                        }
                        self.col = 0;
                        return;
                    }
                    None => {
                        self.col += chars(rest);
                        return;
                    }
                    Some(_) => {
                        let Some(j) = memchr::memchr(b'{', rest) else {
                            self.count_lines(rest);
                            return;
                        };
                        self.count_lines(&rest[..j]);
                        j
                    }
                };
                self.candidate = Some(Candidate {
                    line: self.line,
                    buf: vec![b'{'],
                    depth: 1,
                    in_string: false,
                    escaped: false,
                    started: false,
                    in_escaped_string: false,
                    last: b'{',
                    nested: self.nested,
                    held: Held::default(),
                    line_len: self.col + 1,
                    col0: self.col,
                    breaks: 0,
                    fold: None,
                    in_comment: false,
                    slash: false,
                    maybe_comment: false,
                    line_blank: false,
                });
                self.col += 1;
                i += j + 1;
                continue;
            };
            let rest = &bytes[i..];
            match step(c, rest) {
                Step::More => {
                    let kept = self.budget.extend(&mut c.buf, rest, &mut c.held);
                    self.count_lines(rest);
                    i = bytes.len();
                    if kept.is_err() {
                        // Past what may be held: passed over (reading it again would cost as much).
                        self.candidate = None;
                    }
                }
                Step::Done(n) => {
                    let kept = self.budget.extend(&mut c.buf, &rest[..n], &mut c.held);
                    self.count_lines(&rest[..n]);
                    i += n;
                    let c = self.candidate.take().expect("open");
                    if kept.is_err() {
                        continue;
                    }
                    if c.in_escaped_string {
                        self.unescape_and_read(c, judge);
                    } else {
                        let found = self.found(&c, false);
                        match judge.judge(&c.buf, found) {
                            Judged::Taken | Judged::Ignored => {}
                            Judged::LookInside => self.reread(c, judge),
                        }
                    }
                }
                Step::Abandon(n) => {
                    let kept = self.budget.extend(&mut c.buf, &rest[..n], &mut c.held);
                    self.count_lines(&rest[..n]);
                    i += n;
                    let c = self.candidate.take().expect("open");
                    if kept.is_err() {
                        continue;
                    }
                    self.cut_or_reread(c, judge);
                }
                Step::Fold(n) => {
                    let kept = self.budget.extend(&mut c.buf, &rest[..n], &mut c.held);
                    self.count_lines(&rest[..=n]);
                    i += n + 1;
                    if kept.is_err() {
                        self.candidate = None;
                    }
                }
            }
            if self.candidate.as_ref().is_some_and(|c| c.buf.len() > MAX_RECORD) {
                // Too long to be held: passed over (reading it again would cost as much).
                self.candidate = None;
            }
        }
    }

    /// Read a candidate's bytes after its `{` again, for candidates inside it, if the budget
    /// allows.
    fn reread(&mut self, c: Candidate, judge: &mut dyn Judge) {
        let inner = &c.buf[1..];
        if memchr::memchr(b'{', inner).is_none() {
            return;
        }
        let cost = inner.len() as u64;
        if self.reread + cost > REREAD_FACTOR * self.fed + REREAD_SLACK {
            return;
        }
        self.reread += cost;
        let (line, nested, col) = (self.line, self.nested, self.col);
        if !self.fixed_line {
            self.line = c.line;
        }
        self.nested = true;
        self.col = c.col0 + 1;
        self.process(inner, judge);
        self.nested = nested;
        self.col = col;
        if !self.fixed_line {
            self.line = line;
        }
    }

    /// An escaped candidate: its string unescaped once, and read by a finder of its own.
    fn unescape_and_read(&mut self, c: Candidate, judge: &mut dyn Judge) {
        if self.unescaped >= MAX_UNESCAPE {
            return;
        }
        let Some(text) = unescape(&c.buf) else { return };
        let mut inner = Finder {
            line: c.line,
            fixed_line: true,
            candidate: None,
            fed: 0,
            reread: 0,
            unescaped: self.unescaped + 1,
            nested: c.nested,
            budget: self.budget.clone(),
            col: 0,
        };
        inner.feed(&text, judge);
        inner.finish(judge);
    }
}

/// Characters in UTF-8 bytes (continuation bytes not counted).
pub fn chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| (**b & 0xc0) != 0x80).count()
}

/// A pretty printer ends a line inside an object after a value, a comma or a bracket; a line of
/// prose does not.
fn pretty_line_end(last: u8) -> bool {
    matches!(last, b',' | b'{' | b'[' | b'}' | b']' | b'"' | b'0'..=b'9' | b'e' | b'l' | b'N' | b'y' | b'\n')
}

/// Whether the line break ending a line of `c` is a hard wrap: the candidate's first line, at
/// least [`MIN_FOLD`] characters long (no pretty printer writes one: it breaks right after the
/// `{`; a record on one line has no break), or a later line exactly as long as the first one that
/// was.
fn is_fold(c: &Candidate) -> bool {
    match c.fold {
        Some(width) => c.line_len == width,
        None => c.breaks == 0 && c.line_len >= MIN_FOLD,
    }
}

/// Take bytes into the candidate until it is complete or no JSON.
fn step(c: &mut Candidate, bytes: &[u8]) -> Step {
    for (k, &b) in bytes.iter().enumerate() {
        if b == b'\n' && !c.in_escaped_string && c.started && is_fold(c) {
            c.fold = Some(c.line_len);
            c.line_len = 0;
            return Step::Fold(k);
        }
        if b == b'\n' {
            c.line_len = 0;
        } else if (b & 0xc0) != 0x80 {
            c.line_len += 1;
        }
        if c.in_comment {
            if b != b'\n' {
                continue;
            }
            c.in_comment = false;
        }
        if c.in_escaped_string {
            // To the end of the enclosing string: a quote after an even number of backslashes.
            match b {
                b'\n' | b'\r' => return Step::Done(k),
                b'"' if !c.escaped => return Step::Done(k),
                b'\\' => c.escaped = !c.escaped,
                _ => c.escaped = false,
            }
            continue;
        }
        if !c.started {
            match b {
                b' ' | b'\t' => continue,
                b'\n' | b'\r' => {
                    c.started = true;
                    c.line_blank = true;
                }
                b'"' | b'}' | b'/' => c.started = true,
                b'\\' => {
                    c.started = true;
                    c.in_escaped_string = true;
                    c.escaped = true;
                    continue;
                }
                _ => return Step::Abandon(k),
            }
        }
        if c.in_string {
            match b {
                b'\n' | b'\r' => return Step::Abandon(k),
                _ if c.escaped => c.escaped = false,
                b'\\' => c.escaped = true,
                b'"' => c.in_string = false,
                _ => {}
            }
            c.last = b;
            continue;
        }
        if c.maybe_comment {
            match b {
                b' ' | b'\t' => continue,
                // JSON after it: `//` is a prefix every line of the record carries.
                b'"' | b'{' | b'}' | b'[' | b']' | b'-' | b'0'..=b'9' | b'\n' | b'\r' => c.maybe_comment = false,
                _ => {
                    c.maybe_comment = false;
                    c.in_comment = true;
                    continue;
                }
            }
        }
        if b == b'/' && c.started {
            if c.slash {
                // `//`: a comment to the end of the line (its line ends where the byte before it
                // left it); at a line's start, unless JSON follows it.
                if c.line_blank {
                    c.maybe_comment = true;
                } else {
                    c.in_comment = true;
                }
            }
            c.slash = !c.slash;
            continue;
        }
        c.slash = false;
        match b {
            b'"' => c.in_string = true,
            b'{' | b'[' => {
                c.depth += 1;
                if c.depth > MAX_DEPTH {
                    return Step::Abandon(k);
                }
            }
            b'}' | b']' => {
                c.depth -= 1;
                if c.depth == 0 {
                    return Step::Done(k + 1);
                }
            }
            b'\n' => {
                if !pretty_line_end(c.last) {
                    return Step::Abandon(k);
                }
                c.breaks += 1;
                c.last = b'\n';
                c.line_blank = true;
                continue;
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            c.last = b;
            c.line_blank = false;
        }
    }
    Step::More
}

/// The text of an escaped candidate (from its `{` to the end of its string) unescaped once:
/// `\"`, `\\`, `\/`, `\n`, `\t`, `\r`, `\b`, `\f`, `\uXXXX` (surrogate pairs joined) and Python's
/// `\'`. `None` at an escape that is none of these.
pub fn unescape(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let Some(j) = memchr::memchr(b'\\', &text[i..]) else {
            out.extend_from_slice(&text[i..]);
            break;
        };
        out.extend_from_slice(&text[i..i + j]);
        i += j + 1;
        let &e = text.get(i)?;
        i += 1;
        match e {
            b'"' | b'\\' | b'/' | b'\'' => out.push(e),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'u' => {
                let hex = |at: usize| -> Option<u32> {
                    let h = text.get(at..at + 4)?;
                    u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
                };
                let mut cp = hex(i)?;
                i += 4;
                if (0xd800..0xdc00).contains(&cp) && text.get(i..i + 2) == Some(b"\\u") {
                    let low = hex(i + 2)?;
                    if (0xdc00..0xe000).contains(&low) {
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                        i += 6;
                    }
                }
                let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                let mut b = [0; 4];
                out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
            }
            _ => return None,
        }
    }
    Some(out)
}

/// A multi-line candidate with the prefix every line after its first carries (`# `, `> `,
/// `svc-1  | `, `[rank0]: `) taken off those lines; `None` when they carry none but white space,
/// or when there is no second line to learn it from. The prefix is learned from the lines
/// themselves (the first line's prefix is before the `{`, outside the candidate): their longest
/// common start, up to its first `"`, `{` or `}` (a prefix never holds the record's own text: the
/// closing line and a key line part at the first byte after the indentation).
pub fn strip_line_prefix(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut lines = bytes.split(|b| *b == b'\n');
    let first = lines.next()?;
    let rest: Vec<&[u8]> = lines.collect();
    if rest.len() < 2 {
        return None;
    }
    let mut common = rest[0];
    for l in &rest[1..] {
        let n = common.iter().zip(l.iter()).take_while(|(a, b)| a == b).count();
        common = &common[..n];
    }
    let cut = common.iter().position(|b| matches!(b, b'"' | b'{' | b'}')).unwrap_or(common.len());
    let prefix = &common[..cut];
    if prefix.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(first);
    for l in rest {
        out.push(b'\n');
        out.extend_from_slice(&l[prefix.len()..]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes every candidate that parses as JSON and has a key `"r"`; looks inside the others.
    #[derive(Default)]
    struct Collect(Vec<(usize, String, Found)>);

    impl Judge for Collect {
        fn judge(&mut self, bytes: &[u8], found: Found) -> Judged {
            let text = String::from_utf8_lossy(bytes).to_string();
            let parsed = serde_json::from_slice::<serde_json::Value>(bytes)
                .ok()
                .or_else(|| strip_line_prefix(bytes).and_then(|b| serde_json::from_slice(&b).ok()));
            match parsed {
                Some(v) if v.get("r").is_some() => {
                    self.0.push((found.line, text, found));
                    Judged::Taken
                }
                _ => Judged::LookInside,
            }
        }
    }

    fn find(text: &str, piece: usize) -> Vec<(usize, String, Found)> {
        let mut judge = Collect::default();
        let mut f = Finder::new();
        for chunk in text.as_bytes().chunks(piece.max(1)) {
            f.feed(chunk, &mut judge);
        }
        f.finish(&mut judge);
        judge.0
    }

    #[test]
    fn finds_records_in_every_wrapping_fed_in_any_pieces() {
        let cases: &[(&str, &[usize])] = &[
            ("$ cat r.jsonl\n{\"r\": 1}\n", &[2]),
            ("[12:00] INFO result: {\"r\": {\"a\": [1, {\"b\": 2}]}} done\n", &[1]),
            ("```json\n{\n  \"r\": 1,\n  \"x\": [\n    1,\n    2\n  ]\n}\n```\n", &[2]),
            ("# {\n#   \"r\": 1,\n#   \"s\": \"}\"\n# }\n", &[1]),
            ("{\"name\": \"exp\", \"result\": {\"r\": 2}}\n", &[1]),
            ("{\"msg\": \"x\", \"data\": \"{\\\"r\\\": 3}\"}\n", &[1]),
            ("text {\"cut\": [1,\n{\"r\": 4}\n", &[2]),
            ("a { b {\"r\": 5} {\"q\": 1}\n", &[1]),
        ];
        for (text, lines) in cases {
            for piece in [1, 3, 7, 1000] {
                let got: Vec<usize> = find(text, piece).iter().map(|g| g.0).collect();
                assert_eq!(&got, lines, "{text:?} in pieces of {piece}");
            }
        }
        let nested = find("{\"msg\": \"x\", \"data\": \"{\\\"r\\\": 3}\"}\n", 5);
        assert!(nested[0].2.unescaped && nested[0].2.nested);
        assert_eq!(nested[0].1, "{\"r\": 3}");
    }

    #[test]
    fn prose_after_an_open_brace_abandons_it() {
        // The line after `{"cut": [1,` is prose: the candidate is abandoned there, and the record
        // after it is still found.
        let got = find("{\"cut\": [1,\nsome prose here\n{\"r\": 1}\n", 4);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 3);
    }

    #[test]
    fn pathological_braces_cost_linear_time() {
        // 200k unclosed `{"a": [` lines: every one is a candidate that never closes.
        let text = "{\"a\": [\n".repeat(200_000);
        let mut judge = Collect::default();
        let mut f = Finder::new();
        f.feed(text.as_bytes(), &mut judge);
        f.finish(&mut judge);
        assert!(f.reread <= REREAD_FACTOR * f.fed + REREAD_SLACK);
        assert!(judge.0.is_empty());
    }

    #[test]
    fn unescapes_once() {
        assert_eq!(unescape(br#"{\"a\": \"x\\ny\u00e9\"}"#).unwrap(), "{\"a\": \"x\\ny\u{e9}\"}".as_bytes());
        assert!(unescape(br"\q").is_none());
    }

    #[test]
    fn strips_a_prefix_every_line_carries() {
        let got = strip_line_prefix(b"{\n> > \"a\": 1,\n> > \"b\": 2\n> > }").unwrap();
        assert_eq!(got, b"{\n\"a\": 1,\n\"b\": 2\n}");
        assert!(strip_line_prefix(b"{\n  \"a\": 1\n}").is_none());
    }
}
