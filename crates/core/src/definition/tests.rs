use super::*;

#[test]
fn first_bytes_of_anchored_patterns() {
    let fb = |p: &str| FirstBytes::of(Some(&Regex::new(p).unwrap()));
    assert!(fb("^=+$").may_match("=====") && !fb("^=+$").may_match("Mean TTFT (ms): 1") && !fb("^=+$").may_match(""));
    assert!(fb("^-{3,}(.*-{3,})?$").may_match("---x---") && !fb("^-{3,}(.*-{3,})?$").may_match("x---"));
    // Not anchored, or matching the empty text: no filter.
    assert!(fb("=+$").may_match("x") && fb("^x*$").may_match("") && fb("^x*$").may_match("y"));
    assert!(FirstBytes::of(None).may_match("anything"));
}

#[test]
fn builtins_load() {
    let defs = Definitions::builtin();
    assert!(defs.get("vllm-bench-serve").is_some());
    assert!(defs.get("sglang-bench-serving").is_some());
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
