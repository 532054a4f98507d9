//! The report model's unit tests.

use super::*;

#[test]
fn printed_precision_is_half_a_last_digit() {
    assert!((printed_slack("139.89", 139.89).unwrap() - 0.005).abs() < 1e-4);
    assert!((printed_slack("6,677.95", 6677.95).unwrap() - 0.005).abs() < 1e-4);
    assert!((printed_slack("16", 16.0).unwrap() - 0.5).abs() < 1e-3);
    // Seconds printed to one decimal, kept in milliseconds: 50 ms.
    assert!((printed_slack("6.7 ± 0.002", 6700.0).unwrap() - 50.0).abs() < 0.1);
    assert_eq!(printed_slack("n/a", 1.0), None);
}

/// `as_str` is the name the report's JSON writes, for every variant of every named enum.
#[test]
fn enum_names_are_serdes() {
    use strum::VariantArray;
    // `VariantArray` lists every variant (strum derives it from the enum), so no count is held
    // here; each list is only checked not to be empty, so that the loop cannot pass vacuously.
    fn each<T: serde::Serialize + Copy + VariantArray>(name: impl Fn(T) -> &'static str) {
        assert!(!T::VARIANTS.is_empty());
        for &v in T::VARIANTS {
            assert_eq!(serde_json::to_value(v).unwrap(), name(v));
        }
    }
    each(Format::as_str);
    each(ItlPer::as_str);
    each(TpotMethod::as_str);
    each(Verdict::as_str);
    each(ObjectiveStatus::as_str);
    each(Severity::as_str);
    each(Status::as_str);
    assert_eq!(TpotMethod::E2eTtftTokens.as_str(), "e2e-ttft-tokens");
}
