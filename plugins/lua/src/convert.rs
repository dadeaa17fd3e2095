//! Lua values to JSON and back.
//!
//! Rules (documented in docs/lua.md):
//! - an empty table is an empty JSON object, so `properties = {}` stays `{}`;
//! - a table whose keys are exactly 1..n is an array;
//! - `uji.json.array(t)` marks a table as an array (an empty one encodes as
//!   `[]`); arrays decoded from JSON carry the same mark, so they round-trip;
//! - `uji.json.null` is JSON null; `uji.json.decode` keeps every null as it
//!   (objects too, as the public uji does; `{ nulls = false }` leaves null
//!   fields out); in what uji hands Lua (hook payloads, answers) a null
//!   inside an object leaves the key out, inside an array it stays
//!   `uji.json.null` so the positions do not shift;
//! - integral numbers become JSON integers.

use mlua::{Lua, Table, Value};
use serde_json::{Map, Number, Value as Json};

/// Deep enough for any real schema or payload; stops cycles.
const MAX_DEPTH: usize = 100;

/// Name of the registry slot that holds the array marker metatable.
pub const ARRAY_MT: &str = "uji.json.array";

/// The metatable that marks a table as a JSON array.
pub fn array_mt(lua: &Lua) -> Option<Table> {
    lua.named_registry_value::<Table>(ARRAY_MT).ok()
}

fn is_null(value: &Value) -> bool {
    matches!(value, Value::LightUserData(ud) if ud.0.is_null())
}

fn describe_path(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" at {path}")
    }
}

/// Converts a Lua value to JSON. `path` names where we are, for messages.
pub fn to_json(lua: &Lua, value: &Value) -> Result<Json, String> {
    let marker = array_mt(lua);
    convert(value, marker.as_ref(), "", 0)
}

fn number(n: f64, path: &str) -> Result<Json, String> {
    Number::from_f64(n)
        .map(Json::Number)
        .ok_or_else(|| format!("{n} cannot be written as JSON{}", describe_path(path)))
}

fn convert(
    value: &Value,
    marker: Option<&Table>,
    path: &str,
    depth: usize,
) -> Result<Json, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "a table nested more than {MAX_DEPTH} deep (a cycle?){}",
            describe_path(path)
        ));
    }
    match value {
        Value::Nil => Ok(Json::Null),
        Value::Boolean(b) => Ok(Json::Bool(*b)),
        Value::Integer(i) => Ok(Json::from(*i)),
        Value::Number(n) => {
            if n.fract() == 0.0 && n.abs() < 9.0e15 {
                #[allow(clippy::cast_possible_truncation)]
                Ok(Json::from(*n as i64))
            } else {
                number(*n, path)
            }
        }
        Value::String(s) => Ok(Json::String(s.to_string_lossy())),
        Value::Table(t) => table_to_json(t, marker, path, depth),
        v if is_null(v) => Ok(Json::Null),
        other => Err(format!(
            "a {} cannot be written as JSON{}",
            other.type_name(),
            describe_path(path)
        )),
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn table_to_json(
    table: &Table,
    marker: Option<&Table>,
    path: &str,
    depth: usize,
) -> Result<Json, String> {
    let marked = match (table.metatable(), marker) {
        (Some(mt), Some(marker)) => mt == *marker,
        _ => false,
    };
    if marked {
        let len = table.raw_len();
        let mut items = Vec::with_capacity(len);
        for i in 1..=len {
            let v: Value = table.raw_get(i).map_err(|e| e.to_string())?;
            items.push(convert(&v, marker, &format!("{path}[{i}]"), depth + 1)?);
        }
        return Ok(Json::Array(items));
    }
    let mut entries: Vec<(Value, Value)> = Vec::new();
    for pair in table.pairs::<Value, Value>() {
        entries.push(pair.map_err(|e| e.to_string())?);
    }
    if entries.is_empty() {
        return Ok(Json::Object(Map::new()));
    }
    // A sequence: every key an integer in 1..=n, n = number of entries.
    let n = entries.len();
    let mut slots: Vec<Option<&Value>> = vec![None; n];
    let mut sequence = true;
    for (k, v) in &entries {
        let index = match k {
            Value::Integer(i) if *i >= 1 => usize::try_from(*i).ok(),
            _ => None,
        };
        match index.and_then(|i| slots.get_mut(i - 1)) {
            Some(slot) if slot.is_none() => *slot = Some(v),
            _ => {
                sequence = false;
                break;
            }
        }
    }
    if sequence {
        let mut items = Vec::with_capacity(n);
        for (i, v) in slots.into_iter().enumerate() {
            let v = v.unwrap_or(&Value::Nil);
            items.push(convert(
                v,
                marker,
                &format!("{path}[{}]", i + 1),
                depth + 1,
            )?);
        }
        return Ok(Json::Array(items));
    }
    // Sorted: `pairs` order depends on the table's history, and this JSON
    // may end up in model requests that must not change between turns.
    let mut keyed = Vec::with_capacity(entries.len());
    for (k, v) in &entries {
        let key = match k {
            Value::String(s) => s.to_string_lossy(),
            Value::Integer(i) => i.to_string(),
            Value::Number(n) => n.to_string(),
            other => {
                return Err(format!(
                    "a table key of type {} cannot be written as JSON{}",
                    other.type_name(),
                    describe_path(path)
                ));
            }
        };
        keyed.push((key, v));
    }
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut map = Map::new();
    for (key, v) in keyed {
        let value = convert(v, marker, &child(path, &key), depth + 1)?;
        map.insert(key, value);
    }
    Ok(Json::Object(map))
}

/// Converts JSON to a Lua value (see the module comment for null).
pub fn to_lua(lua: &Lua, json: &Json) -> mlua::Result<Value> {
    let marker = array_mt(lua);
    json_to_lua(lua, json, marker.as_ref(), Nulls::DropInObjects)
}

/// What `uji.json.decode` gives: every null (in objects too) as
/// `uji.json.null`, as the public uji does; with `keep_nulls` false, null
/// object fields are left out and a top-level null is nil.
pub fn decoded(lua: &Lua, json: &Json, keep_nulls: bool) -> mlua::Result<Value> {
    let marker = array_mt(lua);
    if keep_nulls {
        json_to_lua(lua, json, marker.as_ref(), Nulls::Keep)
    } else if json.is_null() {
        Ok(Value::Nil)
    } else {
        json_to_lua(lua, json, marker.as_ref(), Nulls::DropInObjects)
    }
}

/// How JSON null values in objects become Lua.
#[derive(Clone, Copy, PartialEq)]
enum Nulls {
    Keep,
    DropInObjects,
}

fn json_to_lua(
    lua: &Lua,
    json: &Json,
    marker: Option<&Table>,
    nulls: Nulls,
) -> mlua::Result<Value> {
    Ok(match json {
        Json::Null => Value::NULL,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(lua.create_string(s)?),
        Json::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                table.raw_set(i + 1, json_to_lua(lua, item, marker, nulls)?)?;
            }
            if let Some(marker) = marker {
                table.set_metatable(Some(marker.clone()))?;
            }
            Value::Table(table)
        }
        Json::Object(map) => {
            let table = lua.create_table_with_capacity(0, map.len())?;
            for (k, v) in map {
                if v.is_null() && nulls == Nulls::DropInObjects {
                    continue;
                }
                table.raw_set(k.as_str(), json_to_lua(lua, v, marker, nulls)?)?;
            }
            Value::Table(table)
        }
    })
}

/// Like [`to_lua`], but a top-level null is nil.
pub fn to_lua_nil(lua: &Lua, json: &Json) -> mlua::Result<Value> {
    if json.is_null() {
        Ok(Value::Nil)
    } else {
        to_lua(lua, json)
    }
}

/// Marks `table` as a JSON array.
pub fn mark_array(lua: &Lua, table: &Table) -> mlua::Result<()> {
    if let Some(marker) = array_mt(lua) {
        table.set_metatable(Some(marker))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn lua() -> Lua {
        let lua = Lua::new();
        let mt = lua.create_table().unwrap();
        lua.set_named_registry_value(ARRAY_MT, mt).unwrap();
        lua
    }

    fn eval(lua: &Lua, code: &str) -> Json {
        let v: Value = lua.load(code).eval().unwrap();
        to_json(lua, &v).unwrap()
    }

    #[test]
    fn empty_tables_are_objects_and_sequences_are_arrays() {
        let lua = lua();
        assert_eq!(eval(&lua, "return {}"), json!({}));
        assert_eq!(
            eval(&lua, "return {type='object', properties={}}"),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(eval(&lua, "return {1, 'a', true}"), json!([1, "a", true]));
        assert_eq!(eval(&lua, "return {[1]=1, [3]=3}"), json!({"1": 1, "3": 3}));
        assert_eq!(
            eval(&lua, "return {1.5, 2^53}"),
            json!([1.5, 9007199254740992_i64])
        );
    }

    #[test]
    fn arrays_round_trip_even_when_empty() {
        let lua = lua();
        let v = to_lua(&lua, &json!({"a": [], "b": [1, null, 3], "c": null})).unwrap();
        let back = to_json(&lua, &v).unwrap();
        assert_eq!(back, json!({"a": [], "b": [1, null, 3]}));
    }

    #[test]
    fn functions_and_cycles_are_errors() {
        let lua = lua();
        let v: Value = lua.load("return {f = function() end}").eval().unwrap();
        let e = to_json(&lua, &v).unwrap_err();
        assert!(e.contains("function") && e.contains("at f"), "{e}");
        let v: Value = lua.load("local t = {}; t.t = t; return t").eval().unwrap();
        assert!(to_json(&lua, &v).unwrap_err().contains("cycle"));
        let v: Value = lua.load("return 0/0").eval().unwrap();
        assert!(to_json(&lua, &v).is_err());
    }
}
