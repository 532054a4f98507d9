//! The reader of an argument dump, `Namespace(name=value, ...)`: the arguments a client was run
//! with, printed by it before its results.

/// The arguments of an argument dump in a line, `Namespace(name=value, ...)` (Python's repr of
/// argparse's result), in order: strings unquoted (`'random'` is `random`), other values as
/// printed (`None`, `inf`, `True`, `{'image': 255}`). `None` when the line holds no complete dump.
///
/// The values are borrowed from the line (a string's quotes are cut off, its escapes kept as
/// printed): a dump has a hundred arguments and a definition reads a few of them.
pub fn args_dump(line: &str) -> Option<Vec<(&str, &str)>> {
    let at = line.find(crate::definition::ARGS_DUMP)?;
    let body = &line[at + crate::definition::ARGS_DUMP.len()..];
    let bytes = body.as_bytes();
    let mut out = Vec::with_capacity(128);
    let mut i = 0;
    loop {
        while bytes.get(i) == Some(&b' ') {
            i += 1;
        }
        if bytes.get(i) == Some(&b')') {
            return Some(out);
        }
        let name_end = i + name_end(&bytes[i..])?;
        if name_end == i || bytes.get(name_end) != Some(&b'=') {
            return None;
        }
        let name = &body[i..name_end];
        let start = name_end + 1;
        let j = value_end(bytes, start)?;
        let raw = trim(&body[start..j]);
        let value = match raw.as_bytes() {
            [q @ (b'\'' | b'"'), .., last] if q == last && raw.len() >= 2 => &raw[1..raw.len() - 1],
            _ => raw,
        };
        out.push((name, value));
        i = if bytes[j] == b',' { j + 1 } else { j };
    }
}

/// `str::trim`, answered from the two end bytes for the usual value, which starts and ends with
/// a printable ASCII character (the general trim cost as much as finding the value's end).
fn trim(raw: &str) -> &str {
    // An ASCII byte is white space (as a `char`) only from tab to carriage return, and a space.
    let solid = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii() && !matches!(b, b'\t'..=b'\r' | b' '));
    if solid(raw.as_bytes().first()) && solid(raw.as_bytes().last()) { raw } else { raw.trim() }
}

/// The bytes of an argument's name (a Python identifier as argparse makes it).
const NAME: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
        b += 1;
    }
    t
};

/// Where the first byte that is no name byte is (`None`: every byte is one). Eight bytes at a
/// time, their lookups or-ed into a mask without a branch each: a name was a third of the cost
/// of reading a dump a byte at a time.
fn name_end(bytes: &[u8]) -> Option<usize> {
    let mut k = 0;
    while let Some(chunk) = bytes.get(k..k + 8).and_then(|c| <&[u8; 8]>::try_from(c).ok()) {
        let mut stops = 0u32;
        for (j, b) in chunk.iter().enumerate() {
            stops |= u32::from(!NAME[*b as usize]) << j;
        }
        if stops != 0 {
            return Some(k + stops.trailing_zeros() as usize);
        }
        k += 8;
    }
    bytes[k..].iter().position(|b| !NAME[*b as usize]).map(|p| k + p)
}

/// Where the value that starts at `start` ends: at the first comma or closing parenthesis outside
/// quotes and brackets. `None` when the line ends first (a dump cut off).
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    // Bytes that change the state, found a run of plain bytes at a time.
    const SPECIAL: [bool; 256] = {
        let mut t = [false; 256];
        let mut k = 0;
        let s = b"'\"()[]{}<>,";
        while k < s.len() {
            t[s[k] as usize] = true;
            k += 1;
        }
        t
    };
    let mut depth = 0usize;
    let mut j = start;
    loop {
        j += bytes[j..].iter().position(|b| SPECIAL[*b as usize])?;
        match bytes[j] {
            q @ (b'\'' | b'"') => {
                // The string's end: its quote, not one escaped with a backslash.
                let mut k = j + 1;
                loop {
                    k += memchr::memchr2(q, b'\\', bytes.get(k..)?)?;
                    if bytes[k] == b'\\' {
                        k += 2;
                        continue;
                    }
                    break;
                }
                j = k;
            }
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' | b'>' if depth > 0 => depth -= 1,
            b',' | b')' if depth == 0 => return Some(j),
            _ => {}
        }
        j += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::{args_dump, name_end, value_end};
    use proptest::prelude::*;

    /// The value's end found a byte at a time, as the state machine is written down: the
    /// reference the run-skipping reader must agree with.
    fn value_end_bytewise(bytes: &[u8], start: usize) -> Option<usize> {
        let (mut depth, mut quote, mut j) = (0usize, None::<u8>, start);
        loop {
            let b = *bytes.get(j)?;
            match quote {
                Some(_) if b == b'\\' => j += 1,
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None => match b {
                    b'\'' | b'"' => quote = Some(b),
                    b'(' | b'[' | b'{' | b'<' => depth += 1,
                    b')' | b']' | b'}' | b'>' if depth > 0 => depth -= 1,
                    b',' | b')' if depth == 0 => return Some(j),
                    _ => {}
                },
            }
            j += 1;
        }
    }

    /// A dump as `sglang.bench_serving` prints it (abridged), with a nested value and a closing
    /// parenthesis inside a string.
    const DUMP: &str = "Namespace(backend='sglang-oai', base_url=None, host='127.0.0.1', port=18000, \
        dataset_name='random', model='/models/emu', num_prompts=2000, random_input_len=1024, \
        extra_request_body='{\"x\": \")\"}', lora_name=None, mm={'image': 255}, \
        log=LoggingConfig(level='INFO'), max_concurrency=64)";

    proptest! {
        /// A dump cut anywhere before its closing parenthesis (a terminal's hard wrap, a line cut
        /// at its length limit) is not read at all: no argument is read shortened.
        #[test]
        fn a_dump_cut_anywhere_is_not_read(cut in 0usize..DUMP.len()) {
            prop_assert!(args_dump(&DUMP[..cut]).is_none());
        }

        /// Any value: trimmed as `str::trim` trims it.
        #[test]
        fn trim_agrees_with_str_trim(text in "[ a\\t\\n\\x0b\\x0c\\r\\x1c\\u{85}\\u{a0}\\u{3000}é']{0,6}") {
            prop_assert_eq!(super::trim(&text), text.trim());
        }

        /// Any text (name bytes and others): the same end as a byte at a time.
        #[test]
        fn name_end_agrees_with_the_bytewise_reader(
            text in proptest::collection::vec(prop::sample::select(b"abcdxyzABZ0189_=( ,\xc3".to_vec()), 0..40),
        ) {
            prop_assert_eq!(name_end(&text), text.iter().position(|b| !super::NAME[*b as usize]));
        }

        /// Any text (dense in quotes, escapes and brackets): the same end as the bytewise reader.
        #[test]
        fn value_end_agrees_with_the_bytewise_reader(
            text in proptest::collection::vec(prop::sample::select(b"ab '\"\\()[]{}<>,".to_vec()), 0..40),
            start in 0usize..40,
        ) {
            let start = start.min(text.len());
            prop_assert_eq!(value_end(&text, start), value_end_bytewise(&text, start));
        }
    }

    #[test]
    fn the_whole_dump_is_read() {
        let args = args_dump(DUMP).unwrap();
        assert_eq!(args.len(), 13);
        assert_eq!(args.iter().find(|(n, _)| *n == "num_prompts"), Some(&("num_prompts", "2000")));
        assert_eq!(args.last(), Some(&("max_concurrency", "64")));
    }

    #[test]
    fn argument_dumps_are_read_as_python_prints_them() {
        let line = "benchmark_args=Namespace(backend='sglang-oai', host='127.0.0.1', fn=<function f at 0x7f>, \
                    mm={'image': 255, 'video': 1}, cfg={(256, 256, 1): 0.5}, text='a, b)', esc='it\\'s', \
                    rate=inf, n=None, flag=True, log=LoggingConfig(level='INFO', fmt='text'))";
        let args = args_dump(line).unwrap();
        let get = |k: &str| args.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        assert_eq!(get("backend"), Some("sglang-oai"));
        assert_eq!(get("fn"), Some("<function f at 0x7f>"));
        assert_eq!(get("mm"), Some("{'image': 255, 'video': 1}"));
        assert_eq!(get("cfg"), Some("{(256, 256, 1): 0.5}"));
        assert_eq!(get("text"), Some("a, b)"));
        assert_eq!(get("esc"), Some("it\\'s"));
        assert_eq!((get("rate"), get("n"), get("flag")), (Some("inf"), Some("None"), Some("True")));
        assert_eq!(get("log"), Some("LoggingConfig(level='INFO', fmt='text')"));
        assert_eq!(args.len(), 11);
        // A dump cut off (a line longer than 64 KiB is cut) is not read at all.
        assert_eq!(args_dump("Namespace(backend='vllm', num_prompts=16, model='/m"), None);
        assert_eq!(args_dump("no dump here"), None);
    }
}
