use super::*;

#[test]
fn first_bytes_of_anchored_patterns() {
    let fb = |p: &str| FirstBytes::of(Some(p));
    assert!(fb("^=+$").may_match("=====") && !fb("^=+$").may_match("Mean TTFT (ms): 1") && !fb("^=+$").may_match(""));
    assert!(fb("^-{3,}(.*-{3,})?$").may_match("---x---") && !fb("^-{3,}(.*-{3,})?$").may_match("x---"));
    // Not anchored, or matching the empty text: no filter.
    assert!(fb("=+$").may_match("x") && fb("^x*$").may_match("") && fb("^x*$").may_match("y"));
    assert!(FirstBytes::of(None).may_match("anything"));
    // Of several: the union, unknown when one is.
    let noise = FirstBytes::of_any(["^=+!FAILED", "^-+x"]);
    assert!(noise.may_match("==!FAILED") && noise.may_match("--x") && !noise.may_match("Mean TTFT (ms): 1"));
    assert!(FirstBytes::of_any(["^=+", "x"]).may_match("Mean"));
    assert!(!FirstBytes::of_any([]).may_match("Mean"));
}

#[test]
fn builtins_load() {
    let defs = Definitions::builtin();
    assert!(defs.get("vllm-bench-serve").is_some());
    assert!(defs.get("sglang-bench-serving").is_some());
}

/// A built-in's patterns are compiled on first use, and so never at load: each one compiles
/// (as `parse` compiles a user's definition at once), so a first use cannot fail.
#[test]
fn every_builtin_pattern_compiles_and_none_at_load() {
    for (name, text) in BUILTIN_PARSERS {
        parse(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let lazy = compile::parse_builtin(text, name).unwrap();
        let block = lazy.block.as_ref();
        assert!(block.is_none_or(|b| !b.banner.is_compiled() && b.noise.iter().all(|n| !n.is_compiled())), "{name}");
        assert!(lazy.rows.iter().all(|r| r.suffix.as_ref().is_none_or(|s| !s.is_compiled())), "{name}");
    }
    // A user's definition: a bad pattern is an error at once, naming its field.
    let text = BUILTIN_PARSERS.iter().find(|(n, _)| *n == "vllm-bench-serve.toml").unwrap().1;
    let broken = text.replacen("banner = '=+ Serving Benchmark Result =+'", "banner = '(unclosed'", 1);
    assert_ne!(broken, text, "the banner is found in the file");
    let e = parse(&broken, "mine.toml").unwrap_err().to_string();
    assert!(e.contains("bad regular expression") && e.contains("block.banner"), "{e}");
}

#[test]
fn label_templates() {
    let p = LabelPattern::parse("{stat} TTFT (ms):").unwrap();
    assert_eq!(p.matches("Mean TTFT (ms):").unwrap().stat, Some(StatKey::Mean));
    assert_eq!(p.matches("P99.9 TTFT (ms):").unwrap().stat, Some(StatKey::P(99.9)));
    assert_eq!(p.matches("Median TTFT (ms):").unwrap().stat, Some(StatKey::P(50.0)));
    assert!(p.matches("Mean TPOT (ms):").is_none());
    assert!(p.matches(" TTFT (ms):").is_none());
    let i = LabelPattern::parse("Position {index}:").unwrap();
    assert_eq!(i.matches("Position 7:").unwrap().index, Some(7));
    assert!(i.matches("Position x:").is_none());
    assert!(LabelPattern::parse("{bogus} x:").is_err());
}
