//! What an input with no result shows of one: the "nothing found" message says what is missing
//! (a block's rows without the banner line that opens it: a paste cut at its top) and what to
//! give instead, and names what was looked for by tool only; the banner patterns themselves are
//! listed by `--explain` ([`patterns`]).

use regex_syntax::hir::{Class, Hir, HirKind};

use crate::definition::{Definition, Definitions};

/// The head of the input kept to say what it held when it held no result (a cut paste is
/// short; a long log is judged by its start).
pub const HEAD: usize = 64 * 1024;

/// At least this many rows of one block make "the rows of a block without its banner".
const MIN_ROWS: usize = 2;

/// The tools whose result blocks were looked for, short: each tool once, in definition order.
pub fn tools_looked_for<'a>(defs: impl IntoIterator<Item = &'a Definition>) -> String {
    let mut tools: Vec<&str> = Vec::new();
    for d in defs.into_iter().filter(|d| d.block.is_some()) {
        if !tools.contains(&d.tool.as_str()) {
            tools.push(&d.tool);
        }
    }
    format!("the result blocks of {}; --explain lists their banner patterns", tools.join(", "))
}

/// Every banner pattern, naming the definitions that share it (what `--explain` adds to the
/// "nothing found" message). Only the command line says it.
pub fn patterns(defs: &Definitions) -> String {
    let mut by_banner: Vec<(&str, Vec<&str>)> = Vec::new();
    for d in defs.iter() {
        let Some(block) = &d.block else { continue };
        let banner = block.banner.as_str();
        match by_banner.iter_mut().find(|(b, _)| *b == banner) {
            Some((_, ids)) => ids.push(&d.id),
            None => by_banner.push((banner, vec![&d.id])),
        }
    }
    by_banner.iter().map(|(b, ids)| format!("{b} ({})", ids.join(", "))).collect::<Vec<_>>().join("; ")
}

/// When `head` (the input's first bytes) holds rows of a text definition's block but no banner
/// line: which tool's, the first row, the banner line it lacks, and what to give instead.
pub fn diagnose(head: &[u8], defs: &Definitions) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    let candidates: Vec<&Definition> =
        defs.iter().filter(|d| d.block.as_ref().is_some_and(|b| !b.banner_is_row && b.table.is_none())).collect();
    // Per definition: rows it knows, and the first of them.
    let mut found: Vec<(usize, Option<String>)> = vec![(0, None); candidates.len()];
    for line in text.lines().take(4096) {
        let Some((key, value)) = crate::lex::split_row_key(line) else { continue };
        if value.trim().is_empty() {
            continue;
        }
        for (i, d) in candidates.iter().enumerate() {
            if d.knows_label(&key) {
                found[i].0 += 1;
                found[i].1.get_or_insert_with(|| key.to_string());
            }
        }
    }
    let best = found.iter().map(|(n, _)| *n).max()?;
    if best < MIN_ROWS {
        return None;
    }
    let i = found.iter().position(|(n, _)| *n == best)?;
    let banner = candidates[i].block.as_ref()?.banner.as_str();
    // Every tool sharing that banner and the count (vLLM and SGLang print the same rows).
    let mut tools: Vec<&str> = Vec::new();
    for (j, d) in candidates.iter().enumerate() {
        if found[j].0 == best
            && d.block.as_ref().is_some_and(|b| b.banner.as_str() == banner)
            && !tools.contains(&d.tool.as_str())
        {
            tools.push(&d.tool);
        }
    }
    let first = found[i].1.as_deref().unwrap_or_default();
    Some(format!(
        "found {best} rows of a {} result block (`{first}` ...) but not its banner line `{}`: paste the whole \
         block, from its first line",
        tools.join(" / "),
        example(banner)
    ))
}

/// A line a pattern matches, for a person: `=+ Serving Benchmark Result =+` is `==========
/// Serving Benchmark Result ==========`. Anchors and classes of white space become nothing and
/// a space; an alternation is its first branch.
pub fn example(pattern: &str) -> String {
    match regex_syntax::parse(pattern) {
        Ok(hir) => {
            let mut s = String::new();
            write_example(&hir, &mut s);
            s.trim().to_string()
        }
        Err(_) => pattern.to_string(),
    }
}

fn write_example(hir: &Hir, out: &mut String) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(l) => out.push_str(&String::from_utf8_lossy(&l.0)),
        HirKind::Class(c) => out.push(class_char(c)),
        HirKind::Repetition(r) => {
            let mut one = String::new();
            write_example(&r.sub, &mut one);
            // A rule of `=` or `-` is drawn wide; any other repeated thing as few times as it must.
            let times = if one.chars().all(|c| matches!(c, '=' | '-' | '*' | '#')) && !one.is_empty() {
                10
            } else if r.min == 0 && (r.max == Some(1) || one.chars().all(char::is_whitespace)) {
                // Something optional (`:?`, `\s*`): left out.
                0
            } else if r.min == 0 {
                // `.*`: something stands there.
                return out.push_str("...");
            } else {
                r.min as usize
            };
            for _ in 0..times {
                out.push_str(&one);
            }
        }
        HirKind::Capture(c) => write_example(&c.sub, out),
        HirKind::Concat(v) => v.iter().for_each(|h| write_example(h, out)),
        HirKind::Alternation(v) => {
            if let Some(h) = v.first() {
                write_example(h, out)
            }
        }
    }
}

fn class_char(c: &Class) -> char {
    let first = match c {
        Class::Unicode(u) => u.ranges().first().map(|r| r.start()),
        Class::Bytes(b) => b.ranges().first().map(|r| r.start() as char),
    };
    let contains = |ch: char| match c {
        Class::Unicode(u) => u.ranges().iter().any(|r| r.start() <= ch && ch <= r.end()),
        Class::Bytes(b) => b.ranges().iter().any(|r| (r.start() as char) <= ch && ch <= (r.end() as char)),
    };
    if contains(' ') {
        ' '
    } else if contains('1') {
        '1'
    } else {
        first.unwrap_or('?')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_of_banners() {
        assert_eq!(example("=+ Serving Benchmark Result =+"), "========== Serving Benchmark Result ==========");
        assert_eq!(example(r"^\s*Total time: [0-9.]+ s\s*$"), "Total time: 1 s");
        assert_eq!(example(r"NVIDIA GenAI-Perf \| (LLM|Multi-Modal) Metrics"), "NVIDIA GenAI-Perf | LLM Metrics");
        assert_eq!(example(r"^Benchmarks (Info|Stats):?\s*$"), "Benchmarks Info");
    }

    #[test]
    fn a_block_without_its_banner_is_named_with_its_banner() {
        let defs = Definitions::builtin();
        let cut = b"Successful requests:                     16\nBenchmark duration (s):                  26.73\n\
                    Total input tokens:                      16384\n";
        let d = diagnose(cut, defs).expect("rows of a block");
        assert!(d.contains("vllm bench serve"), "{d}");
        assert!(d.contains("`Successful requests:` ..."), "{d}");
        assert!(d.contains("========== Serving Benchmark Result =========="), "{d}");
        // One row, or none, says nothing.
        assert_eq!(diagnose(b"Successful requests: 16\nhello\n", defs), None);
        assert_eq!(diagnose(b"hello\nworld\n", defs), None);
    }

    #[test]
    fn tools_are_named_once() {
        let s = tools_looked_for(Definitions::builtin().iter());
        assert_eq!(s.matches("vllm bench serve").count(), 1, "{s}");
        assert!(s.len() < 400, "{s}");
        assert!(patterns(Definitions::builtin()).contains("Serving Benchmark Result"));
    }
}
