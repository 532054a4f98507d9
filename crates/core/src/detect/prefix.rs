//! Line prefixes: what a CI system, a container runtime, a cluster, a logger or a comment puts
//! before every line of a block, learned from the text before the banner on its line.
//!
//! The text before the banner is generalised into a [`Shape`]: a run of digits stands for any
//! run of digits (timestamps, pids, ranks and line numbers change from line to line), a run of
//! spaces or tabs for any such run (`May  1` / `May 12`, padded service names), the rest is
//! literal (`# `, `service-1  | `, `(pid=`, ` stdout F `, `[rank0]: `, `INFO:name:`). The shape
//! is compiled once, when the block starts; a line of the block is then stripped of it only where
//! what remains is a line of the block (a row, a section header, the closing line: the caller
//! decides), so that a row's own content is never cut and another process's line that happens to
//! carry the same prefix is read as it would have been without one.
//!
//! Indentation and quoting alone (`  `, `> > `) are a [`Prefix::Quote`], removed from every line
//! as before.

/// The prefix of an open block.
#[derive(Debug, Clone, Default)]
pub(super) enum Prefix {
    /// Nothing before the banner: lines are read as they are (no cost).
    #[default]
    None,
    /// White space and `>` before the banner: removed from every line of the block.
    Quote(String),
    /// Anything else: stripped from a line where what remains is a line of the block.
    Shape(Shape),
}

/// The longest text before a banner that is learned as a prefix (a longer one is some other
/// program's line, or a pasted joined line, not a prefix).
const MAX_PREFIX: usize = 256;

impl Prefix {
    /// The prefix of a block whose banner line has `before` before its banner.
    pub fn learn(before: &str) -> Prefix {
        if before.is_empty() {
            return Prefix::None;
        }
        if before.chars().all(|c| c.is_whitespace() || c == '>') {
            return Prefix::Quote(before.to_string());
        }
        if before.len() > MAX_PREFIX {
            return Prefix::None;
        }
        Prefix::Shape(Shape::of(before))
    }

    /// The text of a quoted line without its quoting (every other line as it is).
    pub fn unquote<'a>(&self, text: &'a str) -> &'a str {
        match self {
            Prefix::Quote(q) => strip_quote(text, q),
            _ => text,
        }
    }

    /// `text` without the prefix, where `is_block_line` says what remains is a line of the block;
    /// else the line as it is (a quoted block's quoting is removed from every line).
    pub fn strip<'a>(&self, text: &'a str, is_block_line: impl FnOnce(&str) -> bool) -> &'a str {
        match self {
            Prefix::None => text,
            Prefix::Quote(q) => strip_quote(text, q),
            Prefix::Shape(shape) => match shape.strip(text) {
                Some(rest) if is_block_line(rest) => rest,
                _ => text,
            },
        }
    }

    /// The learned shape, if the prefix is one.
    pub fn shape(&self) -> Option<&Shape> {
        match self {
            Prefix::Shape(s) => Some(s),
            _ => None,
        }
    }
}

/// Indentation or quoting removed from a line (the quoting without its trailing space, too: an
/// empty quoted line is `>`).
fn strip_quote<'a>(text: &'a str, prefix: &str) -> &'a str {
    if let Some(rest) = text.strip_prefix(prefix) {
        return rest;
    }
    text.strip_prefix(prefix.trim_end()).unwrap_or(text)
}

/// A prefix generalised from one example: see the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Shape {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// This text exactly.
    Literal(Box<str>),
    /// One or more ASCII digits.
    Digits,
    /// One or more spaces or tabs.
    Spaces,
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

impl Shape {
    /// The shape of one prefix: its digit runs and space runs generalised, the rest literal.
    pub fn of(example: &str) -> Shape {
        let b = example.as_bytes();
        let mut parts = Vec::new();
        let mut i = 0;
        let mut literal_from = 0;
        while i < b.len() {
            let class = |x: u8| {
                if x.is_ascii_digit() {
                    Some(Part::Digits)
                } else if is_space(x) {
                    Some(Part::Spaces)
                } else {
                    None
                }
            };
            let Some(part) = class(b[i]) else {
                i += 1;
                continue;
            };
            if literal_from < i {
                // (Cut next to an ASCII byte: a character boundary.)
                parts.push(Part::Literal(example[literal_from..i].into()));
            }
            while i < b.len() && class(b[i]).as_ref() == Some(&part) {
                i += 1;
            }
            parts.push(part);
            literal_from = i;
        }
        if literal_from < b.len() {
            parts.push(Part::Literal(example[literal_from..].into()));
        }
        Shape { parts }
    }

    /// `text` after the prefix, when it starts with one of this shape. Each part is matched
    /// greedily, which is exact: a digit run is never followed by a digit in the shape, nor a space
    /// run by a space. A line that ends inside the trailing spaces of the prefix (an empty comment
    /// line `#`) has the prefix too.
    pub fn strip<'a>(&self, text: &'a str) -> Option<&'a str> {
        self.strip_with(text, false)
    }

    /// [`Shape::strip`], with one space (or tab) of a trailing run of them taken as the prefix's
    /// (the rest is the line's own: the indentation of what a terminal wrapped after the prefix).
    pub fn strip_tight<'a>(&self, text: &'a str) -> Option<&'a str> {
        self.strip_with(text, true)
    }

    fn strip_with<'a>(&self, text: &'a str, tight: bool) -> Option<&'a str> {
        let b = text.as_bytes();
        let mut at = 0;
        for (n, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(l) => {
                    if !b[at..].starts_with(l.as_bytes()) {
                        return None;
                    }
                    at += l.len();
                }
                Part::Digits => {
                    let run = b[at..].iter().take_while(|x| x.is_ascii_digit()).count();
                    if run == 0 {
                        return None;
                    }
                    at += run;
                }
                Part::Spaces => {
                    let run = b[at..].iter().take_while(|x| is_space(**x)).count();
                    if run == 0 && !(at == b.len() && n + 1 == self.parts.len()) {
                        return None;
                    }
                    at += if tight && n + 1 == self.parts.len() { run.min(1) } else { run };
                }
            }
        }
        // (Every part ends next to an ASCII byte or at the end of a literal: a boundary.)
        Some(&text[at..])
    }
}

/// Where, in a line, a prefix may end and the text of a block start: after an ASCII space or
/// punctuation, within [`MAX_PREFIX`] bytes, up to `upto` (in increasing order).
pub(super) fn cut_points(text: &str, upto: usize) -> impl Iterator<Item = usize> + '_ {
    let b = text.as_bytes();
    let end = upto.min(MAX_PREFIX).min(b.len());
    (1..=end).filter(move |&i| b[i - 1].is_ascii_whitespace() || b[i - 1].is_ascii_punctuation())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_generalise_digits_and_spaces() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("# ", "# Mean TTFT (ms): 1", Some("Mean TTFT (ms): 1")),
            ("# ", "#", Some("")),
            ("    # ", "  # x", Some("x")),
            ("web-1  | ", "web-1  | x", Some("x")),
            ("web-1  | ", "db-1   | x", None),
            ("2024-05-01T12:00:00.123456789Z ", "2024-05-01T12:00:03.1Z x", Some("x")),
            ("2024-05-01T12:00:00.1Z stdout F ", "2024-05-01T12:00:03.1Z stdout F x", Some("x")),
            ("2024-05-01T12:00:00.1Z stdout F ", "2024-05-01T12:00:03.1Z stdout P x", None),
            ("(pid=12) ", "(pid=98765) x", Some("x")),
            ("[rank0]: ", "[rank13]: x", Some("x")),
            ("INFO:bench:", "INFO:bench:x", Some("x")),
            ("INFO:bench:", "WARNING:bench:x", None),
            ("May  1 12:00:01 host app[123]: ", "May 12 12:00:09 host app[123]: x", Some("x")),
            ("INFO 05-01 12:00:01 [serve.py:12] ", "INFO 05-01 12:00:02 [serve.py:140] x", Some("x")),
            ("é ", "é x", Some("x")),
        ];
        for (example, line, rest) in cases {
            assert_eq!(Shape::of(example).strip(line), *rest, "{example:?} on {line:?}");
        }
    }

    #[test]
    fn quoting_is_not_a_shape() {
        assert!(matches!(Prefix::learn("  > "), Prefix::Quote(_)));
        assert!(matches!(Prefix::learn(""), Prefix::None));
        assert!(matches!(Prefix::learn("# "), Prefix::Shape(_)));
        assert!(matches!(Prefix::learn(&"x".repeat(MAX_PREFIX + 1)), Prefix::None));
    }

    #[test]
    fn a_shape_strips_only_block_lines() {
        let p = Prefix::learn("# ");
        assert_eq!(p.strip("# a: 1", |r| r.starts_with('a')), "a: 1");
        assert_eq!(p.strip("# b: 1", |r| r.starts_with('a')), "# b: 1");
    }
}
