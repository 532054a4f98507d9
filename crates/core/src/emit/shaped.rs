//! A run's compact JSON with its checks and rows written by hand: the same bytes as serde_json's,
//! without serde's calls for the parts of a run that are lists of flat records (a run of a dense
//! log has 16 checks and some 35 rows, and serializing them through serde took nearly three
//! quarters of writing the run). The rest still goes through serde: writing the figures by hand
//! too saved 0.2% of the instructions, not worth a second copy of their form.
//!
//! The contract stays serde_json's bytes: `tests/it/outputs.rs` holds every run of every sample
//! to them, and the tests below hold the escaper, a check and a row to serde_json on any text.

use serde::Serialize;

use crate::report::{Check, Derived, Figures, Note, ObjectiveResult, Row, Run, Source, Verdict};

/// A run's fields before its checks, as [`Run`]'s derive writes them.
#[derive(Serialize)]
struct Head<'a> {
    source: &'a Source,
    workload: &'a Figures,
    totals: &'a Figures,
    reported: &'a Figures,
    derived: &'a Derived,
}

/// A run's fields between its checks and its rows (the rows are its last field written;
/// `requests` is never written). A field added to `Run` is added to one of these two: the test of
/// every sample's run against serde_json says so when it is not.
#[derive(Serialize)]
struct Middle<'a> {
    verdict: Verdict,
    #[serde(skip_serializing_if = "<[Note]>::is_empty")]
    notes: &'a [Note],
    #[serde(skip_serializing_if = "Option::is_none")]
    objectives: &'a Option<Vec<ObjectiveResult>>,
}

/// `run` as one compact JSON object, appended to `out`: `serde_json::to_writer`'s bytes.
pub(super) fn write_run(out: &mut Vec<u8>, run: &Run) -> std::io::Result<()> {
    let head = Head {
        source: &run.source,
        workload: &run.workload,
        totals: &run.totals,
        reported: &run.reported,
        derived: &run.derived,
    };
    // `{head}` becomes `{head,"checks":[...],middle,"rows":[...]}`: the braces of the parts
    // written through serde are cut (the head's closing one, both of the middle's).
    serialize(out, &head)?;
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
    out.extend_from_slice(b",\"checks\":");
    list(out, &run.checks, write_check);
    out.push(b',');
    fields(out, &Middle { verdict: run.verdict, notes: &run.notes, objectives: &run.objectives })?;
    out.extend_from_slice(b",\"rows\":");
    list(out, &run.rows, write_row);
    out.push(b'}');
    Ok(())
}

/// A JSON array of `items`, each written by `write`.
fn list<T>(out: &mut Vec<u8>, items: &[T], write: fn(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(b']');
}

/// The fields of a struct that serializes as a non-empty JSON object, without its braces.
fn fields(out: &mut Vec<u8>, value: &impl Serialize) -> std::io::Result<()> {
    let at = out.len();
    serialize(out, value)?;
    debug_assert!(out.len() > at + 2 && out[at] == b'{' && out.last() == Some(&b'}'));
    out.remove(at);
    out.pop();
    Ok(())
}

/// `value` through serde, appended to `out` (sonic-rs writes the same bytes as serde_json: see
/// `with_jsonl_line`).
fn serialize(out: &mut Vec<u8>, value: &impl Serialize) -> std::io::Result<()> {
    sonic_rs::to_writer(&mut *out, value).map_err(std::io::Error::other)
}

/// One check, as [`Check`]'s derive writes it.
fn write_check(out: &mut Vec<u8>, check: &Check) {
    out.extend_from_slice(b"{\"id\":");
    name(out, check.id.as_str());
    out.extend_from_slice(b",\"severity\":");
    name(out, check.severity.as_str());
    out.extend_from_slice(b",\"status\":");
    name(out, check.status.as_str());
    out.extend_from_slice(b",\"message\":");
    string(out, &check.message);
    out.push(b'}');
}

/// One row, as [`Row`]'s derive writes it.
fn write_row(out: &mut Vec<u8>, row: &Row) {
    out.extend_from_slice(b"{\"section\":");
    opt_str(out, row.section.as_deref());
    out.extend_from_slice(b",\"label\":");
    string(out, &row.label);
    out.extend_from_slice(b",\"value\":");
    opt_str(out, row.value.as_deref());
    out.extend_from_slice(b",\"line\":");
    out.extend_from_slice(itoa::Buffer::new().format(row.line).as_bytes());
    out.extend_from_slice(b",\"field\":");
    opt_str(out, row.field.as_deref());
    if let Some(scope) = &row.scope {
        out.extend_from_slice(b",\"scope\":");
        string(out, scope);
    }
    out.push(b'}');
}

/// A name the report model defines (a rule id, a severity, a status: lower-case words and
/// hyphens) as a JSON string, which needs no escape (the check proptest below holds every one to
/// serde_json).
fn name(out: &mut Vec<u8>, s: &str) {
    debug_assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'), "{s}");
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

fn opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// A JSON string as serde_json writes it (`"` and `\` escaped, the control characters below 0x20
/// as `\b \t \n \f \r` or `\u00xx`, everything else as it is), by sonic-rs's own escaper: the
/// bytes its serializer writes for a string, checked for escapes with SIMD.
fn string(out: &mut Vec<u8>, s: &str) {
    use sonic_rs::format::{CompactFormatter, Formatter};
    // (Writing to a `Vec` does not fail.)
    let _ = CompactFormatter.write_string_fast(out, s, true);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Severity, Status};
    use proptest::prelude::*;

    fn escaped(s: &str) -> String {
        let mut out = Vec::new();
        string(&mut out, s);
        String::from_utf8(out).expect("UTF-8 in, UTF-8 out")
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let every_ascii: String = (0u8..=0x7f).map(char::from).collect();
        for s in ["", "plain", "a\"b\\c", "tab\there", "\u{0}\u{1f}\u{7f}", "é ≥ 😀", every_ascii.as_str()] {
            assert_eq!(escaped(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(s in "\\PC*|[\\x00-\\x7f]*|.*") {
            prop_assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap());
        }

        #[test]
        fn any_check_is_written_as_serde_json_writes_it(
            id in proptest::sample::select(crate::report::RuleId::ALL.to_vec()),
            severity in proptest::sample::select(<Severity as strum::VariantArray>::VARIANTS),
            status in proptest::sample::select(<Status as strum::VariantArray>::VARIANTS),
            message in ".{0,40}|[\\x00-\\x7f]{0,40}",
        ) {
            let check = Check { id, severity, status, message };
            let mut out = Vec::new();
            write_check(&mut out, &check);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&check).unwrap());
        }

        #[test]
        fn any_row_is_written_as_serde_json_writes_it(
            section in proptest::option::of(".{0,12}"),
            label in ".{0,20}",
            value in proptest::option::of("[\\x00-\\x7f]{0,12}"),
            line in any::<usize>(),
            field in proptest::option::of("[a-z_.]{1,20}"),
            scope in proptest::option::of("preamble|footer|\"\\\\"),
        ) {
            let row = Row { section, label, value, line, field, scope };
            let mut out = Vec::new();
            write_row(&mut out, &row);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&row).unwrap());
        }
    }
}
