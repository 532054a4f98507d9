//! `bench-normalize parsers`: the definitions in use, as data.

use super::{CellStyle, Definitions, RowsAre};

/// The definitions as data, for `bench-normalize parsers`: id, tool, format, where from, variants,
/// and what a block or document of each is recognized by.
pub fn listing(defs: &Definitions) -> serde_json::Value {
    use serde_json::json;
    let list: Vec<serde_json::Value> = defs
        .iter()
        .map(|d| {
            let markers: Vec<String> = match (&d.block, &d.detect) {
                (Some(b), _) => {
                    let mut m = vec![format!("banner /{}/", b.banner.as_str())];
                    if let Some(h) = &b.header {
                        m.push(format!("or column header /{}/ (with rows it knows)", h.as_str()));
                    }
                    m.extend(d.trailers.iter().map(|t| format!("trailer /{}/", t.banner.as_str())));
                    m.extend(d.footer.iter().map(|f| format!("footer line '{}' after the block", f.label)));
                    if let Some(t) = &b.table {
                        let cells = match t.cells {
                            CellStyle::Ruled => "ruled",
                            CellStyle::Bars => "bars",
                            CellStyle::Csv => "csv",
                            CellStyle::Aligned => "aligned",
                        };
                        let rows = match t.rows {
                            RowsAre::Metrics => "a metric per row",
                            RowsAre::Runs => "a run per row",
                        };
                        m.push(format!("{cells} tables, {rows}"));
                        if t.rows == RowsAre::Runs && b.section.is_some() {
                            m.push("a table titled with no section it reads: by its column headers".into());
                        }
                    }
                    m
                }
                (None, Some(det)) => {
                    let mut m: Vec<String> = det.keys_all.iter().map(|k| format!("key {k}")).collect();
                    if !det.keys_any.is_empty() {
                        m.push(format!("one of keys {}", det.keys_any.join(", ")));
                    }
                    if det.min_keys > 0 {
                        m.push(format!("or, without those, {} keys it reads or marks (by structure)", det.min_keys));
                    }
                    m
                }
                _ => Vec::new(),
            };
            json!({
                "id": d.id,
                "tool": d.tool,
                "format": d.format.as_str(),
                "description": d.description,
                "origin": d.origin,
                "markers": markers,
                "variants": d.variants.iter().map(|v| {
                    let mut o = json!({ "id": v.id, "description": v.description });
                    if let Some(t) = &v.tool {
                        o["tool"] = json!(t);
                    }
                    o
                }).collect::<Vec<_>>(),
                "rows": d.rows.len(),
            })
        })
        .collect();
    serde_json::Value::Array(list)
}
