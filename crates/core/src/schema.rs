//! The JSON Schema of the canonical report's figure groups: schemars derives the report's
//! structure ([`crate::report::schema`], `bench-normalize schema`); the figures of `workload`,
//! `totals` and `reported` are listed here from the vocabulary, with their kinds, units and
//! meanings. A leaf module (the vocabulary only), so that the report can name these in its
//! derive attributes without an import circle. Figures outside the vocabulary are allowed (a report
//! written by hand may carry its own).

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value, json};

use crate::vocabulary::{FIELDS, Kind, Unit};

fn figure(kind: Kind, unit: Unit, doc: &str) -> Value {
    let description = if unit == Unit::None { doc.to_string() } else { format!("{doc} ({})", unit.as_str()) };
    let mut v = match kind {
        Kind::Count => json!({ "type": "integer", "minimum": 0 }),
        Kind::Number => json!({ "type": "number" }),
        Kind::Text => json!({ "type": "string" }),
        Kind::Stat => json!({
            "type": "object",
            "propertyNames": { "pattern": "^(mean|min|max|std|p[0-9]+(\\.[0-9]+)?)$" },
            "additionalProperties": { "type": "number" }
        }),
        Kind::List => json!({ "type": "array", "items": { "type": ["number", "null"] } }),
    };
    v["description"] = json!(description);
    v
}

/// An object schema for the figures below `prefix` (`workload`, `reported.speculative`, ...).
fn group(prefix: &str) -> Value {
    let mut props = Map::new();
    let dotted = format!("{prefix}.");
    for f in FIELDS.iter().filter(|f| f.path.starts_with(&dotted)) {
        let rest = &f.path[dotted.len()..];
        match rest.split_once('.') {
            None => {
                props.insert(rest.to_string(), figure(f.kind, f.unit, f.doc));
            }
            Some((sub, _)) => {
                if !props.contains_key(sub) {
                    props.insert(sub.to_string(), group(&format!("{prefix}.{sub}")));
                }
            }
        }
    }
    json!({ "type": "object", "properties": props, "additionalProperties": true })
}

fn as_schema(v: Value) -> Schema {
    Schema::try_from(v).unwrap_or_else(|_| json_schema!({ "type": "object" }))
}

pub fn workload(_: &mut SchemaGenerator) -> Schema {
    as_schema(group("workload"))
}

pub fn totals(_: &mut SchemaGenerator) -> Schema {
    as_schema(group("totals"))
}

pub fn reported(_: &mut SchemaGenerator) -> Schema {
    as_schema(group("reported"))
}
