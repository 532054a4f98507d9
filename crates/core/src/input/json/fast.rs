//! A fast path for the common case: one well-formed JSON object whose per-request arrays hold
//! plain numbers and strings (a vLLM `--save-detailed` file is ~440 MB for 100k requests, 60% of it
//! the `itls` lists and 35% `generated_texts`).
//!
//! [`read_doc`] reads exactly what [`DocSeed`](super::DocSeed) reads, or gives up (`None`) and
//! leaves the document to it. It only ever accepts text that serde_json accepts too, and then
//! builds the same [`Doc`]: every field's value and the small per-request arrays are still read by
//! serde_json, each from its own slice; only the three costly parts are read here:
//!
//! * the gap lists (`itls`) are counted, not parsed: their sums serve only as E2E latency, for a
//!   document without a latency array, and are read from the text if that is asked for
//!   ([`GapSums::read`]);
//! * the counted arrays (`generated_texts`) are skipped with memchr instead of byte by byte;
//! * the object itself is walked here, so serde_json never steps through the skipped parts.
//!
//! A long gap array is cut into pieces at requests' boundaries and read on several threads
//! ([`Parser::gap_counts_split`]): the same figures, in the same order, in about half the time on
//! two cores.
//!
//! Anything unusual (an escape in a key, a `NaN` or a string among the gaps, a number that could
//! overflow, deep nesting, a list at the top) gives up: the slow path then reads it, and reports
//! what is wrong with it, exactly as before.

use serde::de::DeserializeSeed;
use serde_json::Value;

use super::{Array, ArrayKind, ArraySeed, Doc, GapSums, Keys, keep};

/// Read one document that spans all of `text` (white space around it aside), or give up.
pub fn read_doc<'t>(text: &'t [u8], arrays: &Keys, line: usize) -> Option<Doc<'t>> {
    let mut p = Parser { b: text, i: 0 };
    let mut doc = Doc { line, ..Default::default() };
    // A duplicate key, at the top or in a field's value, is left to the slow path, which refuses
    // the document naming it ([`super::duplicate_key`]). The per-request arrays the fast path
    // reads itself hold numbers and strings only: no object, so no key.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    p.ws();
    p.eat(b'{')?;
    p.ws();
    if p.eat(b'}').is_none() {
        loop {
            p.ws();
            let key = p.key()?;
            if !seen.insert(key) {
                return None;
            }
            p.ws();
            p.eat(b':')?;
            p.ws();
            let start = p.i;
            match arrays.get(key) {
                Some(ArrayKind::Gaps) => {
                    if let Some((counts, approx)) = p.gap_counts()? {
                        let sums = GapSums::Unread { text: &text[start..p.i], approx };
                        doc.arrays.push((key.to_string(), Array::Gaps { counts, sums }));
                    }
                }
                Some(ArrayKind::Counted) => {
                    if let Some(n) = p.count()? {
                        doc.arrays.push((key.to_string(), Array::Counted(n)));
                    }
                }
                Some(kind) => {
                    p.skip_value(0)?;
                    if let Some(array) = serde_slice(&text[start..p.i], ArraySeed(*kind))? {
                        doc.arrays.push((key.to_string(), array));
                    }
                }
                None => {
                    p.skip_value(0)?;
                    let slice = &text[start..p.i];
                    if matches!(slice.first(), Some(b'{' | b'[')) && super::duplicate_key(slice).is_some() {
                        return None;
                    }
                    let value: Value = match keep::top_seed(arrays, key) {
                        Some(seed) => serde_slice(slice, seed)?,
                        None => serde_slice(slice, keep::Skimmed)?,
                    };
                    doc.fields.push((key.to_string(), value));
                }
            }
            p.ws();
            match p.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    }
    p.ws();
    if p.i != text.len() {
        return None;
    }
    Some(doc)
}

/// A whole slice read by serde_json with `seed`, or nothing.
fn serde_slice<'de, S: DeserializeSeed<'de>>(slice: &'de [u8], seed: S) -> Option<S::Value> {
    let mut de = serde_json::Deserializer::from_slice(slice);
    let value = seed.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Deeper values are left to the slow path, which counts the document's own level against
/// serde_json's recursion limit (128).
const MAX_DEPTH: usize = 100;

/// Longest run of digits in a gap: with at most two exponent digits, no gap can overflow an f64
/// (which serde_json reports as an error when it parses the number).
const MAX_GAP_DIGITS: usize = 100;

/// A gap array is read on up to this many threads, each given at least [`MIN_PART`] bytes of the
/// document's rest (the array is most of it: 60% of a vLLM `--save-detailed` file).
const MAX_THREADS: usize = 8;
pub(super) const MIN_PART: usize = 4 << 20;

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.b[self.i..].starts_with(word).then(|| self.i += word.len())
    }

    /// A key without escapes or control characters.
    fn key(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let len = memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
        let raw = &self.b[self.i..self.i + len];
        if self.b[self.i + len] != b'"' || has_control(raw) {
            return None;
        }
        self.i += len + 1;
        std::str::from_utf8(raw).ok()
    }

    /// Past a string, validated as serde_json validates a string it skips: no control
    /// characters, known escapes (UTF-8 is not checked there either).
    fn string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let len = memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
            if has_control(&self.b[self.i..self.i + len]) {
                return None;
            }
            self.i += len;
            if self.next()? == b'"' {
                return Some(());
            }
            match self.next()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let hex = self.b.get(self.i..self.i + 4)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.i += 4;
                }
                _ => return None,
            }
        }
    }

    /// Past a number's integer part as JSON's grammar has it (digits, no leading zero), read by
    /// `run` ([`digits`](Self::digits) or [`valued_digits`](Self::valued_digits)): how many
    /// digits, and what `run` gives with them; None when there is none or it has a leading zero.
    #[inline(always)]
    fn int_part<T>(&mut self, run: impl FnOnce(&mut Self) -> (usize, T)) -> Option<(usize, T)> {
        match run(self) {
            (0, _) => None,
            (n, _) if n > 1 && self.b[self.i - n] == b'0' => None,
            read => Some(read),
        }
    }

    /// Past a number of JSON's grammar; the longest run of digits, and of exponent digits.
    fn number(&mut self) -> Option<(usize, usize)> {
        let _ = self.eat(b'-');
        let (int, ()) = self.int_part(|p| (p.digits(), ()))?;
        let mut longest = int;
        if self.eat(b'.').is_some() {
            let frac = self.digits();
            if frac == 0 {
                return None;
            }
            longest = longest.max(frac);
        }
        let mut exp = 0;
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            exp = self.digits();
            if exp == 0 {
                return None;
            }
        }
        Some((longest, exp))
    }

    /// Past a run of digits; its length. Eight bytes at a time: the gaps are 12.8M numbers of
    /// ~18 digits in a 100k-request file.
    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let n = leading_digits(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
            self.i += n;
            if n < 8 {
                return self.i - start;
            }
        }
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
        self.i - start
    }

    /// Past a run of digits ([`digits`](Self::digits)): its length and its value, read from the
    /// same eight-byte words that find its end (exact up to 2^53; beyond, each eight digits are
    /// added in turn).
    #[inline(always)]
    fn valued_digits(&mut self) -> (usize, f64) {
        let start = self.i;
        let mut acc = 0.0;
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            let n = leading_digits(word);
            self.i += n;
            if n < 8 {
                if n > 0 {
                    // The n digits moved to the top bytes; the zero bytes below read as zeros.
                    acc = acc * pow10(n as i32) + eight_digits(word << (64 - 8 * n)) as f64;
                }
                return (self.i - start, acc);
            }
            acc = acc * 1e8 + eight_digits(word) as f64;
        }
        let rest = self.i;
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
        let r = self.b[rest..self.i].iter().fold(0u64, |r, b| r * 10 + u64::from(b - b'0'));
        (self.i - start, acc * pow10((self.i - rest) as i32) + r as f64)
    }

    /// Past any value, finding where it ends (serde_json then reads and checks the slice).
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            open @ (b'[' | b'{') => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let close = if open == b'[' { b']' } else { b'}' };
                self.i += 1;
                loop {
                    self.ws();
                    match self.peek()? {
                        c if c == close => {
                            self.i += 1;
                            return Some(());
                        }
                        b',' | b':' => self.i += 1,
                        _ => self.skip_value(depth + 1)?,
                    }
                }
            }
            b'-' | b'0'..=b'9' => self.number().map(|_| ()),
            b'n' => self.literal(b"null"),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            _ => None,
        }
    }

    /// A list whose items are read by `item`, or null (`None`: no array, as the slow path has it).
    fn list(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<Option<()>> {
        if self.literal(b"null").is_some() {
            return Some(None);
        }
        self.eat(b'[')?;
        self.ws();
        if self.eat(b']').is_some() {
            return Some(Some(()));
        }
        loop {
            self.ws();
            item(self)?;
            self.ws();
            match self.next()? {
                b',' => {}
                b']' => return Some(Some(())),
                _ => return None,
            }
        }
    }

    /// The number of gaps in each request's list of plain numbers, and their approximate sum
    /// ([`gap`](Self::gap)); `None` for a null array. A long array is read on several threads
    /// ([`gap_counts_split`](Self::gap_counts_split)).
    #[allow(clippy::type_complexity)]
    fn gap_counts(&mut self) -> Option<Option<(Vec<u32>, Vec<f64>)>> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS);
        let parts = threads.min(self.b.len().saturating_sub(self.i) / MIN_PART);
        if parts > 1
            && let Some(read) = self.gap_counts_split(parts)
        {
            return Some(Some(read));
        }
        let (mut counts, mut sums) = (Vec::new(), Vec::new());
        let present = self.list(|p| {
            let (n, sum) = p.gap_list()?;
            counts.push(n);
            sums.push(sum);
            Some(())
        })?;
        Some(present.map(|_| (counts, sums)))
    }

    /// One request's gaps (a list of plain numbers, or null): how many, and their sum.
    fn gap_list(&mut self) -> Option<(u32, f64)> {
        let (mut n, mut sum) = (0u32, 0.0);
        if self.literal(b"null").is_none() {
            self.list(|p| {
                sum += p.gap()?;
                n += 1;
                Some(())
            })??;
        }
        Some((n, sum))
    }

    /// [`gap_counts`](Self::gap_counts) of an array of lists, read in `parts` pieces on as many
    /// threads, the same figures in the same order; `None` (nothing read) for anything else, which
    /// the one-thread reader then reads or gives up on. The array's end is found by its brackets
    /// alone (a list of lists of numbers holds no string, so no bracket that is not one), and it is
    /// cut after the comma that follows a request's closing bracket; each piece is then read by
    /// the same grammar as the whole, and must end exactly at its cut.
    #[allow(clippy::type_complexity)]
    fn gap_counts_split(&mut self, parts: usize) -> Option<(Vec<u32>, Vec<f64>)> {
        let (b, open) = (self.b, self.i);
        if b.get(open) != Some(&b'[') {
            return None;
        }
        // The closing bracket of the array: depth 1 is the array, 2 a request's list.
        let (mut at, mut depth) = (open + 1, 1);
        let close = loop {
            at += memchr::memchr3(b'[', b']', b'"', b.get(at..)?)?;
            match b[at] {
                b'[' if depth == 1 => depth = 2,
                b']' if depth == 2 => depth = 1,
                b']' => break at,
                _ => return None,
            }
            at += 1;
        };
        // Each cut: after a request's closing bracket past the even share, white space, a comma.
        let mut cuts = vec![open + 1];
        for k in 1..parts {
            let from = (open + (close - open) * k / parts).max(cuts[cuts.len() - 1]);
            let Some(end) = memchr::memchr(b']', &b[from..close]) else { break };
            let mut p = Parser { b, i: from + end + 1 };
            p.ws();
            if p.i == close {
                break; // the last request's list
            }
            p.eat(b',')?;
            cuts.push(p.i);
        }
        cuts.push(close);
        let pieces = std::thread::scope(|scope| {
            let read = |(start, stop, last): (usize, usize, bool)| Parser { b, i: start }.gap_items(stop, last);
            let mut spans: Vec<_> = cuts.windows(2).map(|w| (w[0], w[1], w[1] == close)).collect();
            let first = spans.remove(0);
            // A thread the system will not start is a piece read here, after the first.
            let others: Vec<_> = spans
                .into_iter()
                .map(|span| std::thread::Builder::new().spawn_scoped(scope, move || read(span)).map_err(|_| span))
                .collect();
            let mut pieces = vec![read(first)];
            pieces.extend(others.into_iter().map(|t| match t {
                Ok(thread) => thread.join().ok().flatten(),
                Err(span) => read(span),
            }));
            pieces
        });
        let (mut counts, mut sums) = (Vec::new(), Vec::new());
        for piece in pieces {
            let (c, s) = piece?;
            counts.extend(c);
            sums.extend(s);
        }
        self.i = close + 1;
        Some((counts, sums))
    }

    /// Requests' gap lists from here to `stop`: each followed by a comma, `stop` just past the
    /// last one's; or, for the `last` piece, the array's remaining items up to its closing
    /// bracket at `stop` (an empty array is never split).
    #[allow(clippy::type_complexity)]
    fn gap_items(mut self, stop: usize, last: bool) -> Option<(Vec<u32>, Vec<f64>)> {
        let (mut counts, mut sums) = (Vec::new(), Vec::new());
        loop {
            self.ws();
            let (n, sum) = self.gap_list()?;
            counts.push(n);
            sums.push(sum);
            self.ws();
            if self.i >= stop {
                return (last && self.i == stop).then_some((counts, sums));
            }
            self.eat(b',')?;
            if self.i >= stop {
                return (!last && self.i == stop).then_some((counts, sums));
            }
        }
    }

    /// Past a gap (a number, with at most [`MAX_GAP_DIGITS`] digits in a run and two exponent
    /// digits), and its value to within a few units of the 16th significant digit: the digits
    /// eight at a time, scaled once. Not serde_json's correctly rounded parse (which would double
    /// the time of a 100k-request file); its sums serve checks with a tolerance far wider
    /// ([`crate::derive::requests`]), never a printed figure.
    fn gap(&mut self) -> Option<f64> {
        let negative = self.eat(b'-').is_some();
        let (int, mut mantissa) = self.int_part(Self::valued_digits)?;
        let mut scale = 0i32;
        let mut longest = int;
        if self.eat(b'.').is_some() {
            let (frac, value) = self.valued_digits();
            if frac == 0 || frac > MAX_GAP_DIGITS {
                return None;
            }
            longest = longest.max(frac);
            mantissa = mantissa * pow10(frac as i32) + value;
            scale = -(frac as i32);
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            let sign = match self.peek() {
                Some(b'-') => {
                    self.i += 1;
                    -1
                }
                Some(b'+') => {
                    self.i += 1;
                    1
                }
                _ => 1,
            };
            let (exp, value) = self.valued_digits();
            if exp == 0 || exp > 2 {
                return None;
            }
            scale += sign * value as i32;
        }
        if longest > MAX_GAP_DIGITS {
            return None;
        }
        let v = mantissa * pow10(scale);
        Some(if negative { -v } else { v })
    }

    /// The number of items of a list of strings, numbers and nulls (`None` for a null array).
    fn count(&mut self) -> Option<Option<usize>> {
        let mut n = 0;
        let present = self.list(|p| {
            n += 1;
            match p.peek()? {
                b'"' => p.string(),
                b'n' => p.literal(b"null"),
                _ => p.number().map(|_| ()),
            }
        })?;
        Some(present.map(|_| n))
    }
}

/// How many of the eight bytes (little-endian: the first in the text is the lowest) are ASCII
/// digits before the first that is not. XOR with `'0'` maps the digits to 0..=9; a byte is not a
/// digit if it then has its top bit set or exceeds 9 (adding 0x76 sets the top bit). A carry out of
/// a byte can only disturb the bytes after the first non-digit, which are not looked at.
fn leading_digits(chunk: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = chunk ^ (ONES * u64::from(b'0'));
    let not_digit = (x.wrapping_add(ONES * 0x76) | x) & (ONES * 0x80);
    not_digit.trailing_zeros() as usize / 8
}

/// The value of eight ASCII digits (little-endian: the first in the text is the lowest byte).
fn eight_digits(chunk: u64) -> u64 {
    let x = chunk & 0x0f0f_0f0f_0f0f_0f0f;
    let x = (x.wrapping_mul(10) + (x >> 8)) & 0x00ff_00ff_00ff_00ff;
    let x = (x.wrapping_mul(100) + (x >> 16)) & 0x0000_ffff_0000_ffff;
    (x.wrapping_mul(10000) + (x >> 32)) & 0xffff_ffff
}

/// `10^k`.
fn pow10(k: i32) -> f64 {
    const POS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    const NEG: [f64; 23] = [
        1e-0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16,
        1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22,
    ];
    match k {
        0..=22 => POS[k as usize],
        // 10^k is exact for k <= 22, so these literals are 1.0 / POS[k], correctly rounded.
        -22..=-1 => NEG[(-k) as usize],
        _ => 10f64.powi(k),
    }
}

/// A byte below 0x20 (not allowed raw in a JSON string); written to vectorize.
fn has_control(bytes: &[u8]) -> bool {
    bytes.iter().fold(false, |any, &b| any | (b < 0x20))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A gap array as the tools write it, and as they might: lists of numbers of every form the
    /// grammar has, nulls, empty lists, white space or none between the items.
    fn gap_array() -> impl Strategy<Value = String> {
        let number = prop::sample::select(vec!["0.025201303437660624", "0.1", "12", "-0", "1e-3", "2.5E+1", "0"]);
        let space = prop::sample::select(vec!["", " ", "\n  "]);
        let list = prop::option::of(prop::collection::vec((number, space.clone()), 0..6));
        prop::collection::vec((list, space), 1..40).prop_map(|items| {
            let items: Vec<String> = items
                .into_iter()
                .map(|(list, sp)| match list {
                    None => format!("{sp}null"),
                    Some(gaps) => {
                        let gaps: Vec<String> = gaps.into_iter().map(|(g, sp)| format!("{sp}{g}{sp}")).collect();
                        format!("{sp}[{}]{sp}", gaps.join(","))
                    }
                })
                .collect();
            format!("[{}], \"ttfts\": [0.1]}}", items.join(","))
        })
    }

    proptest! {
        /// Read in pieces, a gap array gives what the one-thread reader gives, to the bit, and
        /// ends where it ends; a damaged one is never read in pieces into what the one-thread
        /// reader refuses or reads otherwise.
        #[test]
        fn a_gap_array_read_in_pieces_is_read_as_whole(
            text in gap_array(),
            parts in 2usize..6,
            damage in prop::option::of((any::<prop::sample::Index>(), prop::sample::select(b"[],\" 0.-e\nx".to_vec()))),
        ) {
            let mut text = text.into_bytes();
            if let Some((at, byte)) = damage {
                let at = at.index(text.len());
                text[at] = byte;
            }
            let mut whole = Parser { b: &text, i: 0 };
            let want = whole.gap_counts();
            let mut pieces = Parser { b: &text, i: 0 };
            match pieces.gap_counts_split(parts) {
                Some(read) => {
                    prop_assert_eq!(Some(Some(read)), want);
                    prop_assert_eq!(pieces.i, whole.i);
                }
                None => prop_assert!(damage.is_some(), "an intact array was not read in pieces"),
            }
        }
    }

    #[test]
    fn valued_digits_read_a_run_as_the_standard_parser_does() {
        // Every length from none to past two words, at every offset in a word, and the run at the
        // text's very end (the bytes after it fewer than a word): the length exact, the value
        // exact below 2^53, and to 15 significant digits above.
        for digits in [&b"98765432109876543210123456789"[..], &[b'9'; 29]] {
            for len in 0..digits.len() {
                for tail in [&b""[..], b"]", b",0.5]]}", b"e-3, 1.0"] {
                    for lead in 0..9 {
                        let mut text = b" ".repeat(lead);
                        text.extend_from_slice(&digits[..len]);
                        text.extend_from_slice(tail);
                        let mut p = Parser { b: &text, i: lead };
                        let (n, value) = p.valued_digits();
                        assert_eq!((n, p.i), (len, lead + len), "{len} digits then {tail:?}");
                        let want: f64 = std::str::from_utf8(&digits[..len]).unwrap().parse().unwrap_or(0.0);
                        if want < 2f64.powi(53) {
                            assert_eq!(value, want, "{len} digits");
                        } else {
                            assert!((value - want).abs() <= 1e-15 * want, "{len} digits: {value} {want}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn leading_digits_stop_at_the_first_other_byte() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut chunk = *b"01234567";
                chunk[at] = b;
                let want = if b.is_ascii_digit() { 8 } else { at };
                assert_eq!(leading_digits(u64::from_le_bytes(chunk)), want, "{b:#x} at {at}");
            }
        }
        assert_eq!(leading_digits(u64::from_le_bytes(*b"99\xff\xff9999")), 2);
        assert_eq!(leading_digits(u64::from_le_bytes(*b"9999999,")), 7);
    }
}
