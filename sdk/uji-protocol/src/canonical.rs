//! JSON with its object keys in one order, whatever built it.
//!
//! serde_json keeps keys in insertion order in this workspace (the
//! `agent-client-protocol` schema crate turns on its `preserve_order`
//! feature, and Cargo unifies features across the workspace). Insertion
//! order is not stable for every source: a Lua table's `pairs` order depends
//! on its history, a `HashMap`'s on the process. What goes into a model
//! request must be byte-identical turn after turn and run after run, or the
//! provider's prompt cache misses; so tool schemas are put in this order
//! when they are registered.

use serde_json::{Map, Value};

/// `value` with every object's keys sorted (bytewise), recursively.
pub fn sort_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let sorted: Map<String, Value> = entries
                .into_iter()
                .map(|(k, v)| (k, sort_keys(v)))
                .collect();
            Value::Object(sorted)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth_and_arrays_keep_their_order() {
        let mut built = Map::new();
        built.insert("z".into(), json!({"b": 1, "a": [{"y": 0, "x": 0}]}));
        built.insert("a".into(), json!(["z", "a"]));
        let sorted = sort_keys(Value::Object(built));
        assert_eq!(
            serde_json::to_string(&sorted).unwrap_or_default(),
            r#"{"a":["z","a"],"z":{"a":[{"x":0,"y":0}],"b":1}}"#
        );
    }
}
