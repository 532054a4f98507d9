//! The workload key runs are lined up by (`--key`), and which keys fit.

#[allow(unused_imports)]
use super::*;

// ------------------------------------------------------------------------------------------------
// The workload key

/// A field of the workload key (`--key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyField {
    Concurrency,
    RequestRate,
    InputLen,
    OutputLen,
    Model,
}

impl KeyField {
    pub const ALL: [KeyField; 5] =
        [KeyField::Concurrency, KeyField::RequestRate, KeyField::InputLen, KeyField::OutputLen, KeyField::Model];

    pub fn name(self) -> &'static str {
        match self {
            KeyField::Concurrency => "concurrency",
            KeyField::RequestRate => "request_rate",
            KeyField::InputLen => "input_len",
            KeyField::OutputLen => "output_len",
            KeyField::Model => "model",
        }
    }

    /// `concurrency`, `rate`/`request_rate`, `input`/`input_len`, `output`/`output_len`, `model`.
    pub fn parse(s: &str) -> Option<KeyField> {
        Some(match s.trim().replace('-', "_").as_str() {
            "concurrency" | "max_concurrency" => KeyField::Concurrency,
            "rate" | "request_rate" => KeyField::RequestRate,
            "input" | "input_len" => KeyField::InputLen,
            "output" | "output_len" => KeyField::OutputLen,
            "model" => KeyField::Model,
            _ => return None,
        })
    }

    /// A `--key` value: a comma-separated list of fields (at least one, none twice).
    pub fn parse_list(s: &str) -> Result<Vec<KeyField>, Error> {
        let mut v = Vec::new();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let f = KeyField::parse(part).ok_or_else(|| {
                Error::Usage(format!(
                    "--key: unknown field {:?}; the fields are concurrency, rate, input, output, model",
                    part.trim()
                ))
            })?;
            if !v.contains(&f) {
                v.push(f);
            }
        }
        if v.is_empty() {
            return Err(Error::Usage("--key: give at least one of concurrency, rate, input, output, model".into()));
        }
        v.sort();
        Ok(v)
    }
}

/// What a run was asked to do, as far as it says: the key runs are lined up by.
///
/// * `max_concurrency`: the client's cap, or the load step of a table of runs (`concurrent@4`,
///   `concurrency=4`);
/// * `request_rate`: the configured rate; absent when infinite or not stated (the two cannot be
///   told apart: a rate of `inf` is absent in the report), and absent matches only absent;
/// * `input_len`, `output_len`: the requested lengths, else the run's mean per request
///   (`totals.input_tokens / successful_requests`, rounded);
/// * `model`: the model id's last path component (`/models/m` and `m` are one model).
///
/// An absent field other than the rate is *unknown*: it pairs with any value, said as a warning.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Workload {
    pub max_concurrency: Option<u64>,
    pub request_rate: Option<f64>,
    pub input_len: Option<u64>,
    pub output_len: Option<u64>,
    pub model: Option<String>,
}

impl Workload {
    pub fn of(run: &Run) -> Workload {
        let per_request = |total: Option<f64>| match (total, successful(run)) {
            (Some(t), Some(r)) if r > 0.0 && t > 0.0 => Some((t / r).round() as u64),
            _ => None,
        };
        let concurrency = run.number(workload::MAX_CONCURRENCY).map(|c| c as u64).or_else(|| {
            let step = run.text(workload::STRATEGY)?;
            let n = step.strip_prefix("concurrent@").or_else(|| step.strip_prefix("concurrency="))?;
            n.trim().parse().ok()
        });
        Workload {
            max_concurrency: concurrency,
            request_rate: run.number(workload::REQUEST_RATE),
            input_len: run.number(workload::INPUT_LEN).map(|n| n as u64).or_else(|| per_request(input_tokens(run))),
            // A tool that prints only the mean per request (EvalScope, llmperf): that mean, rounded.
            output_len: run
                .number(workload::OUTPUT_LEN)
                .map(|n| n as u64)
                .or_else(|| per_request(output_tokens(run)))
                .or_else(|| {
                    run.number(totals::OUTPUT_TOKENS_PER_REQUEST).filter(|n| *n > 0.0).map(|n| n.round() as u64)
                }),
            model: run.text(workload::MODEL).map(|m| {
                let m = m.trim().trim_end_matches('/');
                m.rsplit('/').next().unwrap_or(m).to_string()
            }),
        }
    }

    /// Only the fields of `key`; the others absent.
    pub(super) fn keyed(&self, key: &[KeyField]) -> Workload {
        let has = |f| key.contains(&f);
        Workload {
            max_concurrency: self.max_concurrency.filter(|_| has(KeyField::Concurrency)),
            request_rate: self.request_rate.filter(|_| has(KeyField::RequestRate)),
            input_len: self.input_len.filter(|_| has(KeyField::InputLen)),
            output_len: self.output_len.filter(|_| has(KeyField::OutputLen)),
            model: self.model.clone().filter(|_| has(KeyField::Model)),
        }
    }

    /// Each field as text (`None` when absent), in key order.
    pub(super) fn fields(&self) -> [(KeyField, Option<String>); 5] {
        [
            (KeyField::Concurrency, self.max_concurrency.map(|c| c.to_string())),
            (KeyField::RequestRate, self.request_rate.map(show)),
            (KeyField::InputLen, self.input_len.map(|c| c.to_string())),
            (KeyField::OutputLen, self.output_len.map(|c| c.to_string())),
            (KeyField::Model, self.model.clone()),
        ]
    }

    /// For a person: `concurrency 4, rate not set, input 1024, output 512, model m`.
    pub fn describe(&self, key: &[KeyField]) -> String {
        let mut parts = Vec::new();
        for (f, v) in self.fields() {
            if !key.contains(&f) {
                continue;
            }
            let name = match f {
                KeyField::Concurrency => "concurrency",
                KeyField::RequestRate => "rate",
                KeyField::InputLen => "input",
                KeyField::OutputLen => "output",
                KeyField::Model => "model",
            };
            let v = match (f, v) {
                (KeyField::RequestRate, None) => "not set".to_string(),
                (KeyField::RequestRate, Some(v)) => format!("{v}/s"),
                (_, Some(v)) => v,
                (_, None) => "unknown".to_string(),
            };
            parts.push(format!("{name} {v}"));
        }
        parts.join(", ")
    }
}

/// Whether two keyed workloads may pair: every field equal, or (the rate aside) unknown on one
/// side. `Some(exact)`: `exact` when no field is unknown on either side.
pub(super) fn fits(a: &Workload, b: &Workload, key: &[KeyField]) -> Option<bool> {
    let mut exact = true;
    for ((f, x), (_, y)) in a.fields().into_iter().zip(b.fields()) {
        if !key.contains(&f) {
            continue;
        }
        match (x, y) {
            (Some(x), Some(y)) if x != y => return None,
            (Some(_), Some(_)) => {}
            (None, None) if f == KeyField::RequestRate => {}
            (Some(_), None) | (None, Some(_)) if f == KeyField::RequestRate => return None,
            _ => exact = false,
        }
    }
    Some(exact)
}

/// The workload a run is keyed and compared by: `compare`'s workload key (concurrency, rate,
/// input and output lengths, model) and the dataset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct WorkloadKey {
    pub max_concurrency: Option<u64>,
    pub request_rate: Option<f64>,
    pub input_len: Option<u64>,
    pub output_len: Option<u64>,
    pub model: Option<String>,
    pub dataset: Option<String>,
}

impl WorkloadKey {
    pub fn of(run: &Run) -> WorkloadKey {
        let w = Workload::of(run);
        WorkloadKey {
            max_concurrency: w.max_concurrency,
            request_rate: w.request_rate,
            input_len: w.input_len,
            output_len: w.output_len,
            model: w.model,
            dataset: run.text(workload::DATASET).map(|d| d.trim().to_string()),
        }
    }

    /// The key's text in the `workload_key` column: its JSON, fields in this order.
    pub fn text(&self) -> String {
        serde_json::to_string(self).expect("a workload key serializes")
    }

    /// For a person: `concurrency 4, rate not set, input 256, output 128, model m, dataset random`.
    pub fn describe(&self) -> String {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "unknown".into());
        format!(
            "concurrency {}, rate {}, input {}, output {}, model {}, dataset {}",
            opt(self.max_concurrency.map(|c| c.to_string())),
            self.request_rate.map_or("not set".into(), |r| format!("{}/s", bench_normalize_core::number::show(r))),
            opt(self.input_len.map(|c| c.to_string())),
            opt(self.output_len.map(|c| c.to_string())),
            opt(self.model.clone()),
            opt(self.dataset.clone()),
        )
    }
}
