//! A definition's regular expression, compiled on first use.
//!
//! Compiling every pattern of every built-in definition took ~19M instructions at each start (28
//! definitions, a few hundred patterns), most of a small log's whole run, though an input uses
//! the patterns of the few tools it holds. A built-in pattern is compiled when it is first
//! matched; `definition::tests` compiles every one, so a broken one fails the test suite, not a
//! user. A definition given with `--parsers` is compiled at once, so that a bad pattern is an
//! error naming its file, line and field before any input is read.

use std::ops::Deref;
use std::sync::OnceLock;

use regex::Regex;

/// A pattern and, once it has been used (or at once, for a definition given by the user), its
/// compiled regular expression. It derefs to the [`Regex`].
#[derive(Clone)]
pub struct Pattern {
    text: String,
    compiled: OnceLock<Regex>,
}

impl Pattern {
    /// `text` compiled now (`eager`: an error is the file's), or kept as written and compiled on
    /// first use (a built-in: nothing is checked here, the test suite compiles it).
    pub(crate) fn new(text: String, eager: bool) -> Result<Pattern, regex::Error> {
        let compiled = OnceLock::new();
        if eager {
            let _ = compiled.set(Regex::new(&text)?);
        }
        Ok(Pattern { text, compiled })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether it has been compiled (for the tests).
    #[cfg(test)]
    pub(crate) fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }
}

impl Deref for Pattern {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        // Only a built-in pattern is compiled here, and the test suite compiles each of them.
        self.compiled.get_or_init(|| Regex::new(&self.text).expect("a built-in definition's pattern compiles"))
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.text).finish()
    }
}
