//! The reader of an argument dump, `Namespace(name=value, ...)`: the arguments a client was run
//! with, printed by it before its results.

/// The arguments of an argument dump in a line, `Namespace(name=value, ...)` (Python's repr of
/// argparse's result), in order: strings unquoted (`'random'` is `random`), other values as
/// printed (`None`, `inf`, `True`, `{'image': 255}`). `None` when the line holds no complete dump.
pub fn args_dump(line: &str) -> Option<Vec<(&str, String)>> {
    let at = line.find(crate::definition::ARGS_DUMP)?;
    let body = &line[at + crate::definition::ARGS_DUMP.len()..];
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while bytes.get(i) == Some(&b' ') {
            i += 1;
        }
        if bytes.get(i) == Some(&b')') {
            return Some(out);
        }
        let name_end = i + bytes[i..].iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))?;
        if name_end == i || bytes.get(name_end) != Some(&b'=') {
            return None;
        }
        let name = &body[i..name_end];
        let start = name_end + 1;
        // The value ends at a comma or the closing parenthesis outside quotes and brackets.
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
                    b',' | b')' if depth == 0 => break,
                    _ => {}
                },
            }
            j += 1;
        }
        let raw = body[start..j].trim();
        let value = match raw.as_bytes() {
            [q @ (b'\'' | b'"'), .., last] if q == last && raw.len() >= 2 => raw[1..raw.len() - 1].to_string(),
            _ => raw.to_string(),
        };
        out.push((name, value));
        i = if bytes[j] == b',' { j + 1 } else { j };
    }
}

#[cfg(test)]
mod tests {
    use super::args_dump;

    #[test]
    fn argument_dumps_are_read_as_python_prints_them() {
        let line = "benchmark_args=Namespace(backend='sglang-oai', host='127.0.0.1', fn=<function f at 0x7f>, \
                    mm={'image': 255, 'video': 1}, cfg={(256, 256, 1): 0.5}, text='a, b)', esc='it\\'s', \
                    rate=inf, n=None, flag=True, log=LoggingConfig(level='INFO', fmt='text'))";
        let args = args_dump(line).unwrap();
        let get = |k: &str| args.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
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
