//! Reading a printed value (`140.14`, `inf`, `not set`, `45.7%`, `1/1`, `13395.44  ·`) with nom.
//!
//! The lexer says what the text is; whether that fits a figure (a count, a number, text) is decided
//! by [`read`], which never guesses: a value that cannot be read for sure is `Unreadable` with a
//! reason, and the row keeps the printed text.

use nom::{
    IResult, Parser,
    branch::alt,
    bytes::complete::{tag, tag_no_case, take_while1},
    character::complete::{char, digit1, space0},
    combinator::{map, opt, recognize},
    multi::many1,
    number::complete::recognize_float,
    sequence::{pair, preceded, terminated},
};

use crate::vocabulary::Kind;

/// What a printed value is, lexically.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// A decimal number (`140.14`, `16`, `1e3`, `10,944.03`); `grouped` when it had thousands
    /// separators.
    Number { value: f64, grouped: bool },
    /// `45.7%`
    Percent(f64),
    /// `1/1` (successful / sent)
    Ratio(u64, u64),
    /// `inf`, `-inf`, `Infinity`
    Infinite,
    /// `nan`, `NaN`
    NotANumber,
    /// `not set`, `None`, `null`, `N/A`, `-`: the tool says there is no value.
    Unset,
    /// `trace` (SGLang's request rate replayed from trace timestamps)
    Trace,
}

/// The value a figure gets from a printed text, or why it gets none.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    Count(u64),
    Number(f64),
    Text(String),
    /// The tool printed "no value" (`not set`, `None`, `inf`, `nan`): absent, never zero.
    Absent(&'static str),
    /// The text could not be read for sure; the figure stays absent.
    Unreadable(String),
}

fn number(i: &str) -> IResult<&str, Token> {
    // Thousands separators only in groups of exactly three digits: `10,944.03`.
    let grouped = recognize((
        opt(char('-')),
        take_while1(|c: char| c.is_ascii_digit()),
        many1(preceded(char(','), take_while_m_n_digits3)),
        opt(pair(char('.'), digit1)),
    ));
    alt((
        map(grouped, |s: &str| {
            let clean: String = s.chars().filter(|c| *c != ',').collect();
            Token::Number { value: clean.parse().unwrap_or(f64::NAN), grouped: true }
        }),
        map(recognize_float, |s: &str| Token::Number { value: s.parse().unwrap_or(f64::NAN), grouped: false }),
    ))
    .parse(i)
}

fn take_while_m_n_digits3(i: &str) -> IResult<&str, &str> {
    nom::bytes::complete::take_while_m_n(3, 3, |c: char| c.is_ascii_digit()).parse(i)
}

fn word_token(i: &str) -> IResult<&str, Token> {
    alt((
        map(alt((tag_no_case("-inf"), tag_no_case("infinity"), tag_no_case("inf"))), |_| Token::Infinite),
        map(tag_no_case("nan"), |_| Token::NotANumber),
        map(alt((tag_no_case("not set"), tag("None"), tag("null"), tag("N/A"))), |_| Token::Unset),
        map(tag("trace"), |_| Token::Trace),
    ))
    .parse(i)
}

fn token(i: &str) -> IResult<&str, Token> {
    // Numbers first: they are almost every value. A number never starts with a word token's
    // letters (`-inf` is tried by `word_token` after a plain `-` number fails).
    alt((
        map((terminated(digit1, (space0, char('/'), space0)), digit1), |(a, b): (&str, &str)| {
            Token::Ratio(a.parse().unwrap_or(u64::MAX), b.parse().unwrap_or(u64::MAX))
        }),
        map(terminated(number, char('%')), |t| match t {
            Token::Number { value, .. } => Token::Percent(value),
            other => other,
        }),
        number,
        word_token,
    ))
    .parse(i)
}

/// Split a printed value into its token and what follows it (trimmed).
pub fn lex(text: &str) -> Option<(Token, &str)> {
    let text = crate::lex::trim(text);
    if text == "-" {
        return Some((Token::Unset, ""));
    }
    // Almost every value is plain digits with perhaps one decimal point (`140.14`, `16`): what the
    // parsers below would make of it, without them.
    let b = text.as_bytes();
    if b.first().is_some_and(u8::is_ascii_digit)
        && b.last().is_some_and(u8::is_ascii_digit)
        && b.iter().all(|c| c.is_ascii_digit() || *c == b'.')
        && b.iter().filter(|c| **c == b'.').count() <= 1
    {
        let value = crate::number::parse(text).unwrap_or(f64::NAN);
        return Some((Token::Number { value, grouped: false }, ""));
    }
    let (rest, tok) = token(text).ok()?;
    // A number must not run into letters or digits (`12ms`, `3.1.2`).
    if let Some(c) = rest.chars().next()
        && (c.is_alphanumeric() || c == '.' || c == '_')
    {
        return None;
    }
    Some((tok, crate::lex::trim(rest)))
}

/// A value with the format's own suffix glued to it (`399.739s`, LMDeploy's `{elapsed_time:.3f}s`):
/// the number before the suffix, and the suffix as the rest. Only a suffix that starts right after
/// a digit: `12ms` is not `12` with suffix `s`.
fn glued<'a>(text: &'a str, suffix: Option<&regex::Regex>) -> Option<(Token, &'a str)> {
    let suffix = suffix?;
    let at = text
        .char_indices()
        .skip(1)
        .find(|&(i, _)| text.as_bytes()[i - 1].is_ascii_digit() && suffix.is_match(&text[i..]))?
        .0;
    let (tok, rest) = lex(&text[..at])?;
    rest.is_empty().then_some((tok, &text[at..]))
}

/// True when text after a value is decoration (`·`, `*`, `|`) or an annotation set off by a mark
/// (`<===== per chunk`, `(*)`, `# note`): no digit (which could be a second value) and not a bare
/// word right after the number (which could be a unit other than the figure's).
fn is_decoration(rest: &str) -> bool {
    !rest.chars().any(|c| c.is_ascii_digit()) && rest.chars().next().is_some_and(|c| !c.is_alphanumeric())
}

/// Read a printed value as a figure of `kind`. `suffix` matches what the format prints after the
/// value (a unit such as `s`, an annotation such as `(Poisson process)`), which is expected and
/// not a stray.
pub fn read(text: &str, kind: Kind, suffix: Option<&regex::Regex>) -> (Read, Option<String>) {
    let text = crate::lex::trim(text);
    if kind == Kind::Text {
        return if text.is_empty() { (Read::Absent("empty"), None) } else { (Read::Text(text.to_string()), None) };
    }
    // A cell cut short by its column (Rich prints `2,14…` for 2,145.20): the digits are a prefix
    // of the figure, which is unknown.
    let cut = text.strip_suffix('\u{2026}').or_else(|| text.strip_suffix("..."));
    if cut.is_some_and(|t| t.trim_end().ends_with(|c: char| c.is_ascii_digit() || c == ',' || c == '.')) {
        return (Read::Unreadable(format!("'{text}' was cut short ('…'): the figure is unknown")), None);
    }
    let Some((tok, rest)) = lex(text).or_else(|| glued(text, suffix)) else {
        return (Read::Unreadable(format!("'{text}' is not a number")), None);
    };
    let mut remark = None;
    if !rest.is_empty() && !suffix.is_some_and(|r| r.is_match(rest)) {
        if is_decoration(rest) {
            remark = Some(format!("ignored '{rest}' after the value"));
        } else {
            return (Read::Unreadable(format!("'{text}' has more than one value")), None);
        }
    }
    let (value, grouped) = match tok {
        Token::Infinite => return (Read::Absent("infinite"), remark),
        Token::NotANumber => return (Read::Absent("not a number"), remark),
        Token::Unset => return (Read::Absent("not set"), remark),
        Token::Trace => return (Read::Absent("replayed from a trace"), remark),
        Token::Ratio(a, _) if kind == Kind::Count => return (Read::Count(a), remark),
        Token::Ratio(..) => return (Read::Unreadable(format!("'{text}' is a ratio, not a number")), None),
        Token::Number { value, grouped } => (value, grouped),
        Token::Percent(value) => (value, false),
    };
    if !value.is_finite() {
        return (Read::Unreadable(format!("'{text}' is out of range")), None);
    }
    if grouped {
        remark.get_or_insert_with(|| "read thousands separators".to_string());
    }
    let read = match kind {
        Kind::Count if value >= 0.0 && value.fract() == 0.0 && value < 9.0e15 => Read::Count(value as u64),
        Kind::Count => Read::Unreadable(format!("'{text}' is not a whole number")),
        _ => Read::Number(value),
    };
    (read, remark)
}

/// The denominator of a `a/b` value, when there is one.
pub fn ratio_total(text: &str) -> Option<u64> {
    match lex(text)? {
        (Token::Ratio(_, b), _) => Some(b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers_lex_as_the_parsers_read_them() {
        for text in ["16", "140.14", "0.5", "007", "1.0", "12345678901234567890", "3"] {
            let (rest, tok) = token(text).unwrap();
            assert_eq!(lex(text), Some((tok, rest)), "{text}");
        }
    }

    fn n(text: &str) -> Read {
        read(text, Kind::Number, None).0
    }

    #[test]
    fn numbers_and_words() {
        assert_eq!(n("140.14"), Read::Number(140.14));
        assert_eq!(n("  16  "), Read::Number(16.0));
        assert_eq!(n("inf"), Read::Absent("infinite"));
        assert_eq!(n("Infinity"), Read::Absent("infinite"));
        assert_eq!(n("nan"), Read::Absent("not a number"));
        assert_eq!(n("not set"), Read::Absent("not set"));
        assert_eq!(n("None"), Read::Absent("not set"));
        assert_eq!(n("trace"), Read::Absent("replayed from a trace"));
        assert_eq!(n("45.7%"), Read::Number(45.7));
        assert_eq!(n("10,944.03"), Read::Number(10944.03));
        assert_eq!(n("-3"), Read::Number(-3.0));
    }

    #[test]
    fn a_suffix_glued_to_the_value_is_the_suffix() {
        let s = regex::Regex::new("^(?:s)$").unwrap();
        assert_eq!(read("399.739s", Kind::Number, Some(&s)).0, Read::Number(399.739));
        assert_eq!(read("0.068s", Kind::Number, Some(&s)).0, Read::Number(0.068));
        // Another unit glued on is not the suffix, and without a suffix nothing is glued.
        assert!(matches!(read("12ms", Kind::Number, Some(&s)).0, Read::Unreadable(_)));
        assert!(matches!(read("399.739s", Kind::Number, None).0, Read::Unreadable(_)));
    }

    #[test]
    fn counts_must_be_whole() {
        assert_eq!(read("64.00", Kind::Count, None).0, Read::Count(64));
        assert_eq!(read("1/1", Kind::Count, None).0, Read::Count(1));
        assert!(matches!(read("64.5", Kind::Count, None).0, Read::Unreadable(_)));
        assert!(matches!(read("-1", Kind::Count, None).0, Read::Unreadable(_)));
        assert_eq!(ratio_total("3/4"), Some(4));
    }

    #[test]
    fn strays_are_dropped_but_second_values_are_not_guessed() {
        let (r, remark) = read("13395.44  ·", Kind::Number, None);
        assert_eq!(r, Read::Number(13395.44));
        assert!(remark.unwrap().contains('·'));
        assert_eq!(read("12.5 <=====", Kind::Number, None).0, Read::Number(12.5));
        assert_eq!(read("59.11   <===== per chunk!", Kind::Number, None).0, Read::Number(59.11));
        assert!(matches!(n("59.11 ms"), Read::Unreadable(_)));
        assert!(matches!(n("59.11 (p99 61.2)"), Read::Unreadable(_)));
        assert!(matches!(n("12.5 13.7"), Read::Unreadable(_)));
        assert!(matches!(n("12ms"), Read::Unreadable(_)));
        assert!(matches!(n("1.2.3"), Read::Unreadable(_)));
        assert!(matches!(n("fast"), Read::Unreadable(_)));
        assert!(matches!(n(""), Read::Unreadable(_)));
    }

    #[test]
    fn a_cell_cut_short_is_unknown_not_its_prefix() {
        // Rich truncates a cell that does not fit its column: `1,971…` is 1,971.xx, `2,14…`
        // anything from 2,140 to 2,149.99, `154.…` 154.xx.
        for cut in ["1,971…", "2,14…", "154.…", "12 …", "2,082…"] {
            assert!(matches!(n(cut), Read::Unreadable(m) if m.contains("cut short")), "{cut}");
        }
        assert_eq!(n("1,971.25"), Read::Number(1971.25));
    }

    #[test]
    fn expected_unit_suffix_is_not_a_stray() {
        let s = regex::Regex::new("^(?:s)$").unwrap();
        let rps = regex::Regex::new("^(?:requests/s)$").unwrap();
        assert_eq!(read("12.34 s", Kind::Number, Some(&s)).0, Read::Number(12.34));
        assert_eq!(read("0.57 requests/s", Kind::Number, Some(&rps)).0, Read::Number(0.57));
        assert!(matches!(read("12.34 s", Kind::Number, None).0, Read::Unreadable(_)));
    }

    #[test]
    fn text_is_kept() {
        assert_eq!(read(" sglang-oai ", Kind::Text, None).0, Read::Text("sglang-oai".into()));
    }
}
