//! The strict variant of a schema, and the rules it keeps: the subset of JSON Schema that
//! OpenAI's structured outputs in strict mode and Claude's structured outputs (`--json-schema`)
//! both accept, as docs/agents.md lists it with its sources.
//!
//! [`strictify`] closes every object (`additionalProperties: false`), lists every property in
//! `required` (an optional one becomes a union with `null`: absent and `null` mean the same),
//! turns `oneOf` into `anyOf` and `const` into a one-value `enum`, leaves a `$ref` alone (its
//! definition keeps the description), and moves every keyword outside
//! the subset (bounds, lengths, patterns, formats) into the description. Maps keyed by name are
//! closed over the keys the tool writes ([`STAT_KEYS`] for a distribution). [`strict_violations`]
//! walks a schema and names every place it leaves the subset.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// The statistics a distribution's object may hold in a strict document: the ones the supported
/// clients print (`p0.1` .. `p99.9`). Another percentile (a client run with
/// `--metric-percentiles 42`) has no key there.
pub const STAT_KEYS: &[&str] =
    &["mean", "std", "min", "max", "p0.1", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9"];

/// The keywords a strict schema may use.
const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "title",
];

/// Keywords outside the subset whose meaning is kept in the description.
const MOVED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "default",
];

/// OpenAI's documented limits on a strict schema (properties, nesting, enum values, the length
/// of names and enum values: 15,000 characters, the lower of the figures its documentation has
/// given).
pub const MAX_PROPERTIES: usize = 5000;
pub const MAX_DEPTH: usize = 10;
pub const MAX_ENUM_VALUES: usize = 1000;
pub const MAX_NAME_CHARS: usize = 15_000;

/// The strict variant of `schema`; `Err` names a part that has no strict form.
pub fn strictify(schema: &Value) -> Result<Value, String> {
    convert(schema, "#", None)
}

fn convert(s: &Value, path: &str, siblings: Option<&Map<String, Value>>) -> Result<Value, String> {
    let Some(obj) = s.as_object() else {
        return Err(format!("{path}: a boolean schema has no strict form"));
    };
    let mut out = Map::new();
    let mut bounds = Vec::new();
    for (k, v) in obj {
        match k.as_str() {
            "$schema" | "properties" | "required" | "additionalProperties" | "propertyNames" => {}
            "type" | "enum" | "description" | "title" | "$ref" => {
                out.insert(k.clone(), v.clone());
            }
            "const" => {
                out.insert("enum".into(), json!([v]));
            }
            "oneOf" | "anyOf" => {
                let mut branches = Vec::new();
                for (i, b) in v.as_array().into_iter().flatten().enumerate() {
                    branches.push(convert(b, &format!("{path}/{k}/{i}"), None)?);
                }
                out.insert("anyOf".into(), Value::Array(branches));
            }
            "items" => {
                out.insert("items".into(), convert(v, &format!("{path}/items"), None)?);
            }
            "$defs" => {
                let mut defs = Map::new();
                for (name, d) in v.as_object().into_iter().flatten() {
                    defs.insert(name.clone(), convert(d, &format!("#/$defs/{name}"), None)?);
                }
                out.insert("$defs".into(), Value::Object(defs));
            }
            m if MOVED.contains(&m) => bounds.push(format!("{m} {v}")),
            other => return Err(format!("{path}: `{other}` has no strict form")),
        }
    }
    if !bounds.is_empty() {
        let doc = out.get("description").and_then(Value::as_str).unwrap_or("").to_string();
        let sep = if doc.is_empty() { "" } else { "; " };
        out.insert("description".into(), json!(format!("{doc}{sep}{}", bounds.join(", "))));
    }
    // A reference stands alone: strict mode refuses keywords beside `$ref` (its definition keeps
    // the description).
    if let Some(r) = out.get("$ref").cloned() {
        return Ok(json!({ "$ref": r }));
    }
    let is_object =
        obj.get("type").is_some_and(|t| t == "object" || t.as_array().is_some_and(|a| a.contains(&json!("object"))));
    if is_object || obj.contains_key("properties") {
        let (props, required) = close(obj, path, siblings)?;
        out.insert("properties".into(), Value::Object(props));
        out.insert("required".into(), Value::Array(required.into_iter().map(Value::String).collect()));
        out.insert("additionalProperties".into(), json!(false));
    }
    Ok(Value::Object(out))
}

/// An object's properties, each required (optional ones made nullable), and closed: a map keyed
/// by name gets the keys the tool writes.
fn close(
    obj: &Map<String, Value>,
    path: &str,
    siblings: Option<&Map<String, Value>>,
) -> Result<(Map<String, Value>, Vec<String>), String> {
    let mut props = Map::new();
    if let Some(p) = obj.get("properties").and_then(Value::as_object) {
        let required: BTreeSet<&str> =
            obj.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        for (name, schema) in p {
            let converted = convert(schema, &format!("{path}/properties/{name}"), Some(p))?;
            props.insert(name.clone(), if required.contains(name.as_str()) { converted } else { nullable(converted) });
        }
    } else if obj.contains_key("propertyNames") {
        // A distribution: its statistics by name.
        let value = convert(&obj["additionalProperties"], &format!("{path}/additionalProperties"), None)?;
        for k in STAT_KEYS {
            props.insert(k.to_string(), nullable(value.clone()));
        }
    } else if let (Some(v), Some(sib)) = (obj.get("additionalProperties").filter(|v| v.is_object()), siblings) {
        // Why a sibling figure is null (`derived.undefined`): keyed by the siblings' names.
        let value = convert(v, &format!("{path}/additionalProperties"), None)?;
        for name in sib.keys().filter(|n| !path.ends_with(&format!("/{n}"))) {
            props.insert(name.clone(), nullable(value.clone()));
        }
    } else if obj.get("additionalProperties").is_some_and(|v| v != &json!(false)) {
        return Err(format!("{path}: a map keyed by arbitrary names has no strict form"));
    }
    let required = props.keys().cloned().collect();
    Ok((props, required))
}

/// `schema` or `null`.
fn nullable(mut s: Value) -> Value {
    if let Some(t) = s.get("type").cloned() {
        let mut types = match t {
            Value::Array(a) => a,
            one => vec![one],
        };
        if !types.contains(&json!("null")) {
            types.push(json!("null"));
        }
        s["type"] = Value::Array(types);
        if let Some(e) = s.get_mut("enum").and_then(Value::as_array_mut).filter(|e| !e.contains(&Value::Null)) {
            e.push(Value::Null);
        }
        return s;
    }
    if let Some(branches) = s.get_mut("anyOf").and_then(Value::as_array_mut) {
        if !branches.iter().any(|b| b.get("type") == Some(&json!("null"))) {
            branches.push(json!({ "type": "null" }));
        }
        return s;
    }
    let description = s.as_object_mut().and_then(|o| o.remove("description"));
    let mut wrapped = json!({ "anyOf": [s, { "type": "null" }] });
    if let Some(d) = description {
        wrapped["description"] = d;
    }
    wrapped
}

/// Every place `schema` leaves the strict subset (empty: it keeps to it).
pub fn strict_violations(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if schema.get("type") != Some(&json!("object")) || schema.get("anyOf").is_some() {
        out.push("#: the root must be an object schema, not a union".into());
    }
    let mut counts = Counts::default();
    walk(schema, "#", schema, &mut out, &mut counts);
    if counts.properties > MAX_PROPERTIES {
        out.push(format!("{} object properties: more than {MAX_PROPERTIES}", counts.properties));
    }
    if counts.enum_values > MAX_ENUM_VALUES {
        out.push(format!("{} enum values: more than {MAX_ENUM_VALUES}", counts.enum_values));
    }
    if counts.name_chars > MAX_NAME_CHARS {
        out.push(format!("{} characters of names and enum values: more than {MAX_NAME_CHARS}", counts.name_chars));
    }
    let depth = depth(schema, schema, &mut Vec::new(), &mut out);
    if depth > MAX_DEPTH {
        out.push(format!("objects nest {depth} deep: more than {MAX_DEPTH}"));
    }
    out
}

#[derive(Default)]
struct Counts {
    properties: usize,
    enum_values: usize,
    name_chars: usize,
}

fn walk(s: &Value, path: &str, root: &Value, out: &mut Vec<String>, counts: &mut Counts) {
    let Some(obj) = s.as_object() else {
        out.push(format!("{path}: not a schema object"));
        return;
    };
    for k in obj.keys() {
        if !KEYWORDS.contains(&k.as_str()) {
            out.push(format!("{path}: keyword `{k}` is outside the subset"));
        }
    }
    if let Some(t) = obj.get("type") {
        let types: Vec<&Value> = t.as_array().map(|a| a.iter().collect()).unwrap_or_else(|| vec![t]);
        for t in &types {
            if !["string", "number", "integer", "boolean", "object", "array", "null"]
                .contains(&t.as_str().unwrap_or(""))
            {
                out.push(format!("{path}: type {t} is not a JSON type"));
            }
        }
        if types.iter().any(|t| *t == "object") {
            let props = obj.get("properties").and_then(Value::as_object);
            if obj.get("additionalProperties") != Some(&json!(false)) {
                out.push(format!("{path}: an object without `additionalProperties: false`"));
            }
            let listed: BTreeSet<&str> = props.into_iter().flat_map(|p| p.keys().map(String::as_str)).collect();
            let required: BTreeSet<&str> =
                obj.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            if listed != required {
                out.push(format!("{path}: `required` does not list every property"));
            }
            counts.properties += listed.len();
            counts.name_chars += listed.iter().map(|n| n.len()).sum::<usize>();
        }
    }
    if let Some(e) = obj.get("enum").and_then(Value::as_array) {
        counts.enum_values += e.len();
        counts.name_chars += e.iter().filter_map(Value::as_str).map(str::len).sum::<usize>();
    }
    if obj.contains_key("$ref") && obj.len() > 1 {
        out.push(format!("{path}: a keyword beside `$ref`"));
    }
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        let found = r.strip_prefix("#/$defs/").and_then(|n| root["$defs"].get(n));
        if found.is_none() {
            out.push(format!("{path}: `$ref` {r} is not one of the root's `$defs`"));
        }
    }
    for (k, v) in obj {
        match k.as_str() {
            "properties" | "$defs" => {
                for (name, p) in v.as_object().into_iter().flatten() {
                    if k == "$defs" {
                        counts.name_chars += name.len();
                    }
                    walk(p, &format!("{path}/{k}/{name}"), root, out, counts);
                }
            }
            "items" => walk(v, &format!("{path}/items"), root, out, counts),
            "anyOf" => {
                for (i, b) in v.as_array().into_iter().flatten().enumerate() {
                    walk(b, &format!("{path}/anyOf/{i}"), root, out, counts);
                }
            }
            _ => {}
        }
    }
}

/// How deep objects nest below `s` (through `$ref`s; a recursive schema is a violation).
fn depth(s: &Value, root: &Value, refs: &mut Vec<String>, out: &mut Vec<String>) -> usize {
    let mut deepest = 0;
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        if refs.iter().any(|x| x == r) {
            out.push(format!("{r}: a recursive schema"));
            return 0;
        }
        if let Some(d) = r.strip_prefix("#/$defs/").and_then(|n| root["$defs"].get(n)) {
            refs.push(r.to_string());
            deepest = depth(d, root, refs, out);
            refs.pop();
        }
    }
    let children = s.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.values());
    let nested = children
        .chain(s.get("items"))
        .chain(s.get("anyOf").and_then(Value::as_array).into_iter().flatten())
        .map(|c| depth(c, root, refs, out))
        .max()
        .unwrap_or(0);
    let own = usize::from(s.get("properties").is_some());
    deepest.max(own + nested)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_optional_object_is_closed_and_nullable() {
        let s = json!({
            "type": "object",
            "properties": { "a": { "type": "integer", "minimum": 0 }, "b": { "const": "x" } },
            "required": ["a"],
        });
        let strict = strictify(&s).unwrap();
        assert_eq!(strict["additionalProperties"], false);
        assert_eq!(strict["required"], json!(["a", "b"]));
        assert_eq!(strict["properties"]["a"]["type"], "integer");
        assert!(strict["properties"]["a"]["description"].as_str().unwrap().contains("minimum 0"));
        assert_eq!(strict["properties"]["b"]["anyOf"][1], json!({ "type": "null" }));
        assert!(strict_violations(&strict).is_empty(), "{:?}", strict_violations(&strict));
        // The walker catches each rule broken.
        for (bad, what) in [
            (
                json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": [] , "additionalProperties": false }),
                "required",
            ),
            (json!({ "type": "object", "properties": {}, "required": [] }), "additionalProperties"),
            (
                json!({ "type": "object", "properties": {}, "required": [], "additionalProperties": false, "oneOf": [] }),
                "oneOf",
            ),
            (
                json!({ "type": "object", "properties": { "a": { "type": "string", "format": "uri" } }, "required": ["a"], "additionalProperties": false }),
                "format",
            ),
            (json!({ "anyOf": [] }), "root"),
            (
                json!({ "type": "object", "properties": { "a": { "$ref": "#/$defs/x", "description": "d" } },
                        "required": ["a"], "additionalProperties": false, "$defs": { "x": { "type": "string" } } }),
                "beside",
            ),
            (
                json!({ "type": "object", "properties": { "a": { "$ref": "#/$defs/a" } }, "required": ["a"],
                        "additionalProperties": false, "$defs": { "a": { "type": "object",
                        "properties": { "a": { "$ref": "#/$defs/a" } }, "required": ["a"], "additionalProperties": false } } }),
                "recursive",
            ),
        ] {
            let v = strict_violations(&bad);
            assert!(v.iter().any(|m| m.contains(what)), "{what}: {v:?}");
        }
    }

    #[test]
    fn an_arbitrary_map_has_no_strict_form() {
        let s = json!({ "type": "object", "additionalProperties": { "type": "string" } });
        assert!(strictify(&s).unwrap_err().contains("map"));
    }
}
