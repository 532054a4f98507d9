//! The scanner's prefilter: the literal text of the definitions' banners, trailers and context
//! labels, found in one pass over a buffer, so that the lines of a log that can matter are
//! found without reading the others (on a server log that is mostly noise, nearly every line).
//!
//! Built once per set of definitions and kept with it ([`Definitions::literals`]): building the
//! automata takes longer than reading a small log, and a run over many files reads them all with
//! the same definitions. Sound by construction: a line without any of the needles of a pattern
//! cannot match it, so skipping it loses nothing.

use crate::definition::{ARGS_DUMP, ContextPattern, Definition, Definitions};
use crate::lex::normalize_label;

impl Definitions {
    /// What a text scanner looks for ([`Literals`]), built on first use and kept with the set.
    pub(crate) fn literals(&self) -> &Literals {
        self.derived(Literals::of)
    }
}

/// The literal text a scanner of text logs looks for, over every text definition: built once per
/// set of definitions (building it takes longer than reading a small log, and a run over many
/// files reads them all with the same definitions).
#[derive(Debug)]
pub struct Literals {
    /// The literal text every banner, trailer banner and context label contains, in one
    /// automaton: outside a block, a buffer is skipped up to the first of them.
    pub any: Finder,
    /// The literal text of the banners alone: a line inside a block is only tried as a new banner
    /// when it has one.
    pub banners: Finder,
    /// Each text definition's banner needles, in the order of the text definitions: its banner
    /// pattern is only tried on a line that has one of them.
    pub banner: Vec<Needles>,
    /// Every text definition's `[[context]]` labels, normalized (of a line `label: value`, or
    /// an argument of a dump).
    pub context_labels: Vec<String>,
    /// The `[[context]]` lines in prose, found by a pattern: each one's label and pattern.
    pub context_patterns: Vec<(String, ContextPattern)>,
    /// Each text definition's `[args] requires` that has `[[context]]` arguments: a dump is
    /// read when it names every argument of one of these lists.
    pub args_requires: Vec<Vec<String>>,
    /// The context labels that are in a line (not arguments, which a dump holds), for a line
    /// whose label is behind a prefix ([`ContextLabels::first_starts`]).
    pub context_in_line: ContextLabels,
    /// The arguments of a dump that are context labels: each argument's name and its label
    /// (`args.NAME:`), once each.
    pub context_args: Vec<(String, String)>,
}

impl Literals {
    /// The context lines in prose `text` holds: each pattern's label and the text it matched.
    pub fn prose_context<'a>(&'a self, text: &'a str) -> impl Iterator<Item = (String, String)> + 'a {
        self.context_patterns.iter().filter_map(|(l, p)| p.find(text).map(|m| (l.clone(), m.to_string())))
    }
}

/// The argument names among the context labels (`args.NAME:`), each once, with its label.
fn context_args(labels: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for l in labels {
        let Some(name) = l.strip_prefix("args.").and_then(|n| n.strip_suffix(':')) else { continue };
        if !out.iter().any(|(_, k)| k == l) {
            out.push((name.to_string(), l.clone()));
        }
    }
    out
}

/// The context labels a line may hold, without their colon, each once in the order of
/// [`Literals::context_labels`], in one automaton.
#[derive(Debug)]
pub struct ContextLabels {
    automaton: Option<aho_corasick::AhoCorasick>,
    count: usize,
}

impl ContextLabels {
    fn of(labels: &[String]) -> ContextLabels {
        let mut distinct: Vec<&str> = Vec::new();
        for l in labels.iter().filter(|l| !l.starts_with("args.")).map(|l| l.trim_end_matches(':')) {
            if !l.is_empty() && !distinct.contains(&l) {
                distinct.push(l);
            }
        }
        let automaton = (!distinct.is_empty()).then(|| {
            aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::Standard)
                .build(&distinct)
                .expect("a few short literals")
        });
        ContextLabels { automaton, count: distinct.len() }
    }

    /// Where in `text` each label first starts, for the labels it holds, in the labels' order
    /// (what `text.find(label)` gives, label by label, in one pass).
    pub fn first_starts(&self, text: &str) -> Vec<usize> {
        let Some(ac) = &self.automaton else { return Vec::new() };
        let mut first = vec![usize::MAX; self.count];
        for m in ac.find_overlapping_iter(text) {
            let slot = &mut first[m.pattern().as_usize()];
            *slot = (*slot).min(m.start());
        }
        first.into_iter().filter(|&at| at != usize::MAX).collect()
    }
}

impl Literals {
    fn of(defs: &Definitions) -> Literals {
        let text_defs: Vec<&Definition> = defs.iter().filter(|d| d.block.is_some()).collect();
        let context_labels: Vec<String> = text_defs
            .iter()
            .flat_map(|d| &d.context)
            .filter(|spec| spec.pattern.is_none())
            .map(|spec| normalize_label(&spec.label))
            .collect();
        let context_patterns: Vec<(String, ContextPattern)> = text_defs
            .iter()
            .flat_map(|d| &d.context)
            .filter_map(|spec| spec.pattern.clone().map(|p| (normalize_label(&spec.label), p)))
            .collect();
        // A table's column header line opens a block as its banner does (`[block] header`).
        let banner: Vec<Needles> = text_defs
            .iter()
            .map(|d| {
                let block = d.block.as_ref().expect("text definition");
                let banner = Needles::of(block.banner.as_str());
                match &block.header {
                    Some(h) => banner.or(Needles::of(h.as_str())),
                    None => banner,
                }
            })
            .collect();
        let mut others: Vec<Needles> = text_defs
            .iter()
            .flat_map(|d| &d.trailers)
            .map(|t| Needles::of(t.banner.as_str()))
            // A trailer is only looked for while its block is held, when every line is read.
            .filter(|n| n.0.is_some())
            .collect();
        // An argument's label is not in the line: the dump's opening is.
        others.extend(
            context_labels.iter().filter(|l| !l.starts_with("args.")).map(|l| Needles::exact(l.trim_end_matches(':'))),
        );
        others.extend(context_patterns.iter().map(|(_, p)| Needles::of(p.as_str())));
        let args_requires: Vec<Vec<String>> = text_defs
            .iter()
            .filter(|d| d.context.iter().any(|c| c.label.starts_with("args.")))
            .map(|d| d.args_requires.clone())
            .collect();
        if !args_requires.is_empty() {
            others.push(Needles::exact(ARGS_DUMP));
        }
        others.extend(banner.iter().cloned());
        Literals {
            any: Finder::of(&others),
            banners: Finder::of(&banner),
            banner,
            context_in_line: ContextLabels::of(&context_labels),
            context_args: context_args(&context_labels),
            context_labels,
            context_patterns,
            args_requires,
        }
    }
}

/// Text that every match of a regular expression contains: at least one of its needles (`None`:
/// no such text was found, and every line must be tried).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needles(pub Option<Vec<Needle>>);

/// A piece of literal text; `folded`: compared ignoring ASCII case (`text` is then lower case),
/// for a pattern written with `(?i)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needle {
    pub text: String,
    pub folded: bool,
}

impl Needles {
    fn exact(text: &str) -> Needles {
        Needles(Some(vec![Needle { text: text.to_string(), folded: false }]).filter(|_| !text.is_empty()))
    }

    /// The needles of a pattern, found with regex-syntax: the longest run of literal text in its
    /// top-level sequence (`Serving Benchmark Result` in `=+ Serving Benchmark Result =+`), letters
    /// written case-insensitively included; without one, what a group, repetition or alternation
    /// in it requires (`(Summary Info|Statistics)`: either). Sound: a line without any of them
    /// cannot match, so skipping it loses nothing.
    pub fn of(pattern: &str) -> Needles {
        match regex_syntax::parse(pattern) {
            Ok(hir) => Needles(required(&hir)),
            Err(_) => Needles(None),
        }
    }

    /// Needles for a line that matches either pattern: both sets (none, when either has none).
    fn or(self, other: Needles) -> Needles {
        match (self.0, other.0) {
            (Some(mut a), Some(b)) => {
                a.extend(b);
                Needles(Some(a))
            }
            _ => Needles(None),
        }
    }

    /// Whether `text` holds one of the needles (always, without needles).
    pub fn found_in(&self, text: &str) -> bool {
        match &self.0 {
            None => true,
            Some(v) => v.iter().any(|n| {
                if n.folded {
                    contains_folded(text.as_bytes(), n.text.as_bytes())
                } else {
                    text.contains(n.text.as_str())
                }
            }),
        }
    }
}

/// Whether `hay` contains `needle` (lower case) ignoring ASCII case.
fn contains_folded(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

/// Needles of many patterns, searched in one pass: one automaton for the exact ones (the
/// built-in definitions have only those, and this is the scanner's fast path over noise), one
/// that ignores ASCII case for the others; `always`: some pattern has none, and every position
/// may matter.
#[derive(Debug)]
pub struct Finder {
    exact: aho_corasick::AhoCorasick,
    folded: Option<aho_corasick::AhoCorasick>,
    always: bool,
}

impl Finder {
    fn of(all: &[Needles]) -> Finder {
        let always = all.iter().any(|n| n.0.is_none());
        let needles = || all.iter().flat_map(|n| n.0.iter().flatten()).filter(|n| !n.text.is_empty());
        let exact: Vec<&str> = needles().filter(|n| !n.folded).map(|n| n.text.as_str()).collect();
        let folded: Vec<&str> = needles().filter(|n| n.folded).map(|n| n.text.as_str()).collect();
        Finder {
            exact: literal_automaton(&exact, false),
            folded: (!folded.is_empty()).then(|| literal_automaton(&folded, true)),
            always,
        }
    }

    /// Where the first needle in `hay` starts (`Some(0)` when every position may matter).
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        if self.always {
            return Some(0);
        }
        let exact = self.exact.find(hay).map(|m| m.start());
        match &self.folded {
            None => exact,
            Some(f) => {
                // Only the part before the exact match can hold an earlier folded one.
                let upto = exact.map_or(hay.len(), |e| (e + f.max_pattern_len()).min(hay.len()));
                match f.find(&hay[..upto]).map(|m| m.start()) {
                    Some(s) if exact.is_none_or(|e| s < e) => Some(s),
                    _ => exact,
                }
            }
        }
    }

    /// Whether `hay` holds a needle (always, when every position may matter).
    pub fn is_match(&self, hay: impl AsRef<[u8]>) -> bool {
        let hay = hay.as_ref();
        self.always || self.exact.is_match(hay) || self.folded.as_ref().is_some_and(|f| f.is_match(hay))
    }
}

/// Several literal strings in one automaton, to find the first of any of them in a buffer.
fn literal_automaton(patterns: &[&str], ascii_case_insensitive: bool) -> aho_corasick::AhoCorasick {
    aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
        .ascii_case_insensitive(ascii_case_insensitive)
        .build(patterns)
        .expect("a few short literals")
}

/// A set of needles every match of `hir` contains one of; `None` when none is known.
fn required(hir: &regex_syntax::hir::Hir) -> Option<Vec<Needle>> {
    use regex_syntax::hir::HirKind;
    let trimmed = |text: String, folded: bool| {
        let t = text.trim();
        (!t.is_empty()).then(|| Needle { text: t.to_string(), folded })
    };
    match hir.kind() {
        HirKind::Concat(parts) => {
            // The longest run of literal text (letters of either case included), as before;
            // without one, the first part that requires something.
            let mut best: Option<Needle> = None;
            let mut run = String::new();
            let mut folded = false;
            let close = |run: &mut String, folded: &mut bool, best: &mut Option<Needle>| {
                if let Some(n) = trimmed(std::mem::take(run), *folded)
                    && best.as_ref().is_none_or(|b| n.text.len() > b.text.len())
                {
                    *best = Some(n);
                }
                *folded = false;
            };
            for p in parts {
                match (literal_text(p), p.kind()) {
                    (Some((text, f)), _) => {
                        if f && !folded {
                            folded = true;
                            run.make_ascii_lowercase();
                        }
                        run.push_str(&if folded { text.to_ascii_lowercase() } else { text });
                    }
                    // A zero-width assertion (`^`, `$`, `\b`) keeps the text on both sides together.
                    (None, HirKind::Look(_)) => {}
                    _ => close(&mut run, &mut folded, &mut best),
                }
            }
            close(&mut run, &mut folded, &mut best);
            match best {
                Some(n) => Some(vec![n]),
                None => parts.iter().find_map(required),
            }
        }
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for b in branches {
                all.extend(required(b)?);
            }
            Some(all)
        }
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min > 0 => required(&r.sub),
        _ => literal_text(hir).and_then(|(text, folded)| trimmed(text, folded)).map(|n| vec![n]),
    }
}

/// The text a pattern piece matches when it is literal text, or one ASCII letter in either case
/// (`[Tt]`, how `(?i)t` reads); `true` for the latter. A letter whose case folding reaches beyond
/// ASCII (`k`: `[Kk\u{212A}]`) is no literal text: an ASCII-only comparison could miss a match.
fn literal_text(h: &regex_syntax::hir::Hir) -> Option<(String, bool)> {
    use regex_syntax::hir::{Class, HirKind};
    match h.kind() {
        HirKind::Literal(l) => std::str::from_utf8(&l.0).ok().map(|s| (s.to_string(), false)),
        HirKind::Class(Class::Unicode(c)) => {
            let chars: Vec<char> = c.iter().flat_map(|r| r.start()..=r.end()).take(3).collect();
            match chars[..] {
                [a, b] if a.is_ascii_uppercase() && b == a.to_ascii_lowercase() => Some((b.to_string(), true)),
                _ => None,
            }
        }
        HirKind::Class(Class::Bytes(c)) => {
            let bytes: Vec<u8> = c.iter().flat_map(|r| r.start()..=r.end()).take(3).collect();
            match bytes[..] {
                [a, b] if a.is_ascii_uppercase() && b == a.to_ascii_lowercase() => {
                    Some(((b as char).to_string(), true))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needles(pattern: &str) -> Option<Vec<(String, bool)>> {
        Needles::of(pattern).0.map(|v| v.into_iter().map(|n| (n.text, n.folded)).collect())
    }

    #[test]
    fn banner_needles() {
        let one = |t: &str, folded| Some(vec![(t.to_string(), folded)]);
        // The built-in banners keep the one literal they always had.
        assert_eq!(needles("=+ Serving Benchmark Result =+"), one("Serving Benchmark Result", false));
        assert_eq!(needles(r"NVIDIA AIPerf \| LLM Metrics"), one("NVIDIA AIPerf | LLM Metrics", false));
        assert_eq!(needles(r"^\s*Total time: [0-9.]+ s\s*$"), one("Total time:", false));
        assert_eq!(needles("^ℹ .*(Summary Info|Statistics)"), one("ℹ", false));
        // Case-insensitive: the ASCII letters compared folded; `s` and `k`, whose folding reaches
        // beyond ASCII (ſ, the Kelvin sign), end the run.
        assert_eq!(needles("(?i)^-+ toybench results -+$"), one("toybench re", true));
        assert_eq!(needles("(?i)Serving Benchmark Result"), one("erving benchmar", true));
        assert_eq!(needles("(?i:tool) XYZ"), one("tool xyz", true));
        // Without a run of text, what a group or every branch requires; otherwise nothing.
        assert_eq!(needles("^(Alpha|Beta)+$"), Some(vec![("Alpha".to_string(), false), ("Beta".to_string(), false)]));
        assert_eq!(needles(r"^\w+ \d$"), None);
        assert_eq!(needles("^(Alpha|.)$"), None);
        // Found where the regular expression matches, whatever the case.
        for (pattern, line, hit) in [
            ("(?i)^-+ toybench results -+$", "--- TOYBENCH RESULTS ---", true),
            ("(?i)^-+ toybench results -+$", "--- toybench ---", false),
            (r"^\w+ \d$", "anything 1", true),
        ] {
            assert_eq!(Needles::of(pattern).found_in(line), hit, "{pattern} {line}");
            let finder = Finder::of(&[Needles::of(pattern), Needles::exact("Maximum request concurrency")]);
            assert_eq!(finder.is_match(line), hit, "{pattern} {line}");
            assert_eq!(finder.find(format!("x\n{line}\n").as_bytes()).is_some(), hit, "{pattern} {line}");
        }
    }
}
