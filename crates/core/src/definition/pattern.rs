//! `[[context]] pattern`: a line printed before the block in prose, not as `label: value`
//! (vLLM's random dataset logs `Sampling input_len from [1024, 1024] and output_len from [512,
//! 512]`), read by a regular expression found anywhere in the line. Its named group `value` is
//! the figure; or its groups `lo` and `hi`, a range, which is a figure only when both ends are
//! the same (a range of lengths says no one length).

use regex::Regex;

#[derive(Debug, Clone)]
pub struct ContextPattern {
    regex: Regex,
    /// The groups are `lo` and `hi`, not `value`.
    range: bool,
}

impl ContextPattern {
    /// The pattern of a `[[context]]` entry, or why it cannot be one.
    pub fn compile(text: &str) -> Result<ContextPattern, String> {
        let regex = Regex::new(text).map_err(|e| format!("bad regular expression: {e}"))?;
        let names: Vec<&str> = regex.capture_names().flatten().collect();
        let has = |n: &str| names.contains(&n);
        let range = match (has("value"), has("lo"), has("hi")) {
            (true, false, false) => false,
            (false, true, true) => true,
            _ => return Err("a pattern has a named group `value`, or the two groups `lo` and `hi` (a range)".into()),
        };
        Ok(ContextPattern { regex, range })
    }

    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    /// The text of the pattern's first match in `line` (kept as the row's value).
    pub fn find<'t>(&self, line: &'t str) -> Option<&'t str> {
        self.regex.find(line).map(|m| m.as_str())
    }

    /// The figure's text in a matched text: the group `value`, or `lo` when `hi` is the same;
    /// `None` for a range of several values, or text the pattern does not match.
    pub fn figure<'t>(&self, matched: &'t str) -> Option<&'t str> {
        let c = self.regex.captures(matched)?;
        let group = |n: &str| c.name(n).map(|m| m.as_str().trim());
        if !self.range {
            return group("value");
        }
        let (lo, hi) = (group("lo")?, group("hi")?);
        let same = lo == hi || matches!((lo.parse::<f64>(), hi.parse::<f64>()), (Ok(a), Ok(b)) if a == b);
        same.then_some(lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "(MainProcess pid=3081) INFO 11-29 18:52:17 [utils.py:88] Sampling input_len from [1024, 1024] and output_len from [512, 512]";

    #[test]
    fn a_range_is_a_figure_only_when_its_ends_agree() {
        let p = ContextPattern::compile(r"output_len from \[(?P<lo>\d+), (?P<hi>\d+)\]").unwrap();
        let m = p.find(LINE).unwrap();
        assert_eq!(m, "output_len from [512, 512]");
        assert_eq!(p.figure(m), Some("512"));
        assert_eq!(p.figure("output_len from [256, 512]"), None);
        let v = ContextPattern::compile(r"input_len from \[(?P<value>\d+),").unwrap();
        assert_eq!(v.figure(v.find(LINE).unwrap()), Some("1024"));
    }

    #[test]
    fn a_pattern_needs_its_groups() {
        assert!(ContextPattern::compile(r"len from (\d+)").unwrap_err().contains("`value`"));
        assert!(ContextPattern::compile(r"(?P<lo>\d+) (?P<value>\d+) (?P<hi>\d+)").is_err());
        assert!(ContextPattern::compile(r"from [(?P<value>").unwrap_err().contains("regular expression"));
    }
}
