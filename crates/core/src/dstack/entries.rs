//! The one document `-f dstack` and `-f dstack-e2e` print, for the CLI and the Python module
//! alike: one run read gives its object alone, exactly what dstack stores; several give a list
//! of entries, each saying which run its object is (input, block, first line, load), so that no
//! object is taken for another run's. `check` reads an entry back as its object
//! ([`crate::dstack::model::entry_object`]).

use serde_json::{Value, json};

use crate::report::Run;
use crate::vocabulary::workload;

/// What is printed for `read` runs and the objects written of them, in input order; `None` when
/// none was written. One run read: its object (dstack's `benchmark` or `metrics` object, or
/// dstack#4230's `metrics`); several: a list of [`entry`], even when only one of them was
/// written (the shape follows the input, not the verdicts).
pub fn dstack_document(read: usize, mut written: Vec<(&Run, Value)>) -> Option<Value> {
    match (read, written.len()) {
        (_, 0) => None,
        (1, 1) => written.pop().map(|(_, v)| v),
        _ => Some(Value::Array(written.into_iter().map(|(run, object)| entry(run, object)).collect())),
    }
}

/// One run's entry: `{input, block, first_line, load, benchmark}` for dstack's whole
/// `PresetBenchmark` (an object with `metrics` in it), `{..., metrics}` for a `metrics` object.
/// `load`: the client's concurrency cap and configured request rate (`null`: not set, or
/// unlimited).
pub fn entry(run: &Run, object: Value) -> Value {
    let key = if object.get("metrics").is_some() { "benchmark" } else { "metrics" };
    let count = |x: Option<f64>| x.filter(|c| c.is_finite() && *c >= 0.0).map(|c| json!(c as u64));
    let rate = run.number(workload::REQUEST_RATE).filter(|r| r.is_finite());
    let mut e = json!({
        "input": run.source.input,
        "block": run.source.block,
        "first_line": run.source.first_line,
        "load": { "max_concurrency": count(run.number(workload::MAX_CONCURRENCY)), "request_rate": rate },
    });
    e[key] = object;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_read_back_as_its_object_and_nothing_else_is() {
        let text = include_str!("../../../../samples/captured/vllm-s2.stdout.txt");
        let run = crate::normalize_str(text, "s2.log").unwrap().remove(0);
        let metrics = json!({ "successful_requests": 16, "tpot_ms": { "mean": 12.8 } });
        let benchmark = json!({ "tool": "vllm bench serve", "metrics": metrics.clone() });
        for (object, key) in [(metrics.clone(), "metrics"), (benchmark.clone(), "benchmark")] {
            let e = entry(&run, object.clone());
            assert_eq!(
                (e["input"].as_str(), e["block"].as_u64(), e["first_line"].as_u64()),
                (Some("s2.log"), Some(1), Some(run.source.first_line.unwrap() as u64))
            );
            assert_eq!(e["load"], json!({ "max_concurrency": 4, "request_rate": null }), "inf is no rate limit");
            let fields = e.as_object().unwrap().iter().map(|(k, v)| (k.as_str(), v));
            assert_eq!(crate::dstack::model::entry_object(fields), Some((key, &object)));
        }
        // dstack's own objects are no entries.
        for doc in [metrics.clone(), benchmark.clone()] {
            let fields = doc.as_object().unwrap().iter().map(|(k, v)| (k.as_str(), v));
            assert_eq!(crate::dstack::model::entry_object(fields), None);
        }
        // One run read: its object alone; several: entries, even when one was written.
        assert_eq!(dstack_document(1, vec![(&run, metrics.clone())]), Some(metrics.clone()));
        let two = dstack_document(2, vec![(&run, metrics.clone())]).unwrap();
        assert_eq!(two.as_array().map(Vec::len), Some(1));
        assert_eq!(two[0]["metrics"], metrics);
        assert_eq!(dstack_document(3, Vec::new()), None);
    }
}
