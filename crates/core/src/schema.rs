//! JSON Schema pieces. The JSON Schema of the canonical report's figure groups: schemars derives
//! the report's structure ([`crate::report::schema`], `bench-normalize schema`); the figures of
//! `workload`, `totals` and `reported` are listed here from the vocabulary, with their kinds, units
//! and meanings. Figures outside the vocabulary are allowed (a report written by hand may carry its
//! own). And what the schemas written by hand are built from ([`DRAFT`], [`object`]): those of
//! `output_schema` and dstack's (`dstack/schema.rs`). A leaf module (the vocabulary only), so that
//! the report can name these in its derive attributes, and dstack's schema use `object`, without an
//! import circle (`output_schema` imports `dstack`).

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value, json};

use crate::vocabulary::{FIELDS, Kind, Unit};

/// The JSON Schema dialect of every schema written here (`$schema`).
pub(crate) const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// An object schema of these properties (name, schema, required), no other key allowed.
pub(crate) fn object(props: Vec<(&str, Value, bool)>, description: &str) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, schema, needed) in props {
        if needed {
            required.push(json!(name));
        }
        properties.insert(name.to_string(), schema);
    }
    json!({
        "type": "object",
        "description": description,
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

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
