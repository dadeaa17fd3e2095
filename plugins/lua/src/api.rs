//! The `uji` table: the raw functions behind it (see prelude.lua for the
//! wrappers that turn their errors into Lua errors) and the Lua state.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::Duration;

use mlua::{
    FromLuaMulti, Function, IntoLuaMulti, Lua, LuaOptions, MultiValue, StdLib, Table, Value,
};
use serde_json::{Value as Json, json};
use uji_sdk::LogLevel;

use crate::convert::{self, ARRAY_MT};
use crate::runtime::{Setup, State, Timers, current};

/// Chunk name of the prelude; errors never point into it.
const PRELUDE_CHUNK: &str = "@[uji]/prelude.lua";

/// Turns an mlua error into a message for a raw function's caller.
pub fn lerr(e: mlua::Error) -> String {
    crate::errors::describe(&e).full()
}

/// The Lua type of a value, for messages ("a string", "a table").
pub fn a_type(value: &Value) -> String {
    let name = match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::LightUserData(ud) if ud.0.is_null() => {
            return "uji.json.null".into();
        }
        _ => "userdata",
    };
    match name {
        "nil" => "nil".to_string(),
        _ => format!("a {name}"),
    }
}

/// A string argument, or a message naming `what`.
pub fn string_arg(value: &Value, api: &str, what: &str) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.to_string_lossy()),
        other => Err(format!(
            "{api}: {what} must be a string, got {}",
            a_type(other)
        )),
    }
}

/// Creates a raw function: `f`'s `Ok` becomes `true, results...`, its `Err`
/// becomes `false, message` (raised by the prelude's wrapper).
pub fn raw<A, R, F>(lua: &Lua, f: F) -> mlua::Result<Function>
where
    A: FromLuaMulti,
    R: IntoLuaMulti,
    F: Fn(&Lua, &Rc<State>, A) -> Result<R, String> + 'static,
{
    lua.create_function(move |lua, args: A| {
        let Some(state) = current() else {
            return (false, "uji's Lua state is not ready").into_lua_multi(lua);
        };
        match f(lua, &state, args) {
            Ok(results) => {
                let mut values = results.into_lua_multi(lua)?.into_vec();
                values.insert(0, Value::Boolean(true));
                Ok(MultiValue::from_vec(values))
            }
            Err(message) => (false, message).into_lua_multi(lua),
        }
    })
}

/// Calls a host service for `api` (a Lua function name, for messages).
pub fn service(state: &State, api: &str, method: &str, params: Json) -> Result<Json, String> {
    state.host.call(method, &params).map_err(|e| {
        if e.starts_with("uji has no host service") {
            format!("{api} is not available yet: {e}")
        } else {
            format!("{api}: {e}")
        }
    })
}

fn lua_value(lua: &Lua, json: &Json) -> Result<Value, String> {
    convert::to_lua_nil(lua, json).map_err(lerr)
}

fn json_of(lua: &Lua, value: &Value, api: &str) -> Result<Json, String> {
    convert::to_json(lua, value).map_err(|e| format!("{api}: {e}"))
}

/// Builds the Lua state: libraries, the `uji` table, `require` for shipped
/// and config modules.
pub fn new_state(setup: Setup) -> Result<Rc<State>, String> {
    let lua = Lua::new_with(StdLib::ALL_SAFE, LuaOptions::default())
        .map_err(|e| format!("cannot create the Lua state: {e}"))?;
    lua.set_named_registry_value(ARRAY_MT, lua.create_table().map_err(lerr)?)
        .map_err(lerr)?;
    let Setup {
        host,
        link,
        config_dir,
    } = setup;
    let state = Rc::new(State {
        lua,
        host,
        link,
        config_dir,
        tools: RefCell::new(HashMap::new()),
        calls: RefCell::new(HashMap::new()),
        hooks: RefCell::new(HashMap::new()),
        hook_names: RefCell::new(HashSet::new()),
        commands: RefCell::new(HashMap::new()),
        wires: RefCell::new(HashMap::new()),
        streams: RefCell::new(HashMap::new()),
        keymap: RefCell::new(Vec::new()),
        timers: RefCell::new(Timers::default()),
        timer_seq: Cell::new(0),
        later: RefCell::new(Vec::new()),
    });
    install(&state).map_err(|e| format!("cannot set up the uji Lua API: {}", lerr(e)))?;
    Ok(state)
}

fn install(state: &Rc<State>) -> mlua::Result<()> {
    let lua = &state.lua;
    let t = lua.create_table()?;
    crate::tool::install(lua, &t)?;
    crate::wire::install(lua, &t)?;
    crate::events::install(lua, &t)?;
    install_misc(lua, &t)?;
    let config_lua = state.config_dir.as_ref().map(|dir| {
        let lua_dir = dir.join("lua");
        format!(
            "{0}/?.lua;{0}/?/init.lua",
            lua_dir.to_string_lossy().replace(';', "")
        )
    });
    lua.load(include_str!("prelude.lua"))
        .set_name(PRELUDE_CHUNK)
        .call::<()>((t, config_lua))?;
    Ok(())
}

fn install_misc(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "notify",
        raw(lua, |lua, state, value: Value| {
            let text = match &value {
                Value::String(s) => s.to_string_lossy(),
                other => lua
                    .globals()
                    .get::<Function>("tostring")
                    .and_then(|f| f.call::<String>(other.clone()))
                    .map_err(lerr)?,
            };
            state.notify(&text);
            Ok(())
        })?,
    )?;
    t.set(
        "log",
        raw(lua, |_, state, (level, message): (Value, Value)| {
            let level = match &level {
                Value::String(s) => match s.to_string_lossy().as_str() {
                    "debug" => LogLevel::Debug,
                    "info" => LogLevel::Info,
                    "warn" => LogLevel::Warn,
                    "error" => LogLevel::Error,
                    other => {
                        return Err(format!(
                            "uji.log: level must be \"debug\", \"info\", \"warn\" or \"error\", got {other:?}"
                        ));
                    }
                },
                other => {
                    return Err(format!(
                        "uji.log: level must be a string, got {}",
                        a_type(other)
                    ));
                }
            };
            let message = string_arg(&message, "uji.log", "the message")?;
            state.host.log(level, &message);
            Ok(())
        })?,
    )?;
    t.set(
        "schedule",
        raw(lua, |_, state, f: Value| match f {
            Value::Function(f) => {
                state.add_timer(Duration::ZERO, f);
                Ok(())
            }
            other => Err(format!(
                "uji.schedule: expected a function, got {}",
                a_type(&other)
            )),
        })?,
    )?;
    t.set(
        "defer",
        raw(lua, |lua, state, (seconds, f): (Value, Value)| {
            let seconds = match seconds {
                Value::Integer(i) => i as f64,
                Value::Number(n) => n,
                other => {
                    return Err(format!(
                        "uji.defer: the delay must be a number of seconds, got {}",
                        a_type(&other)
                    ));
                }
            };
            if !seconds.is_finite() || seconds < 0.0 {
                return Err(format!(
                    "uji.defer: the delay must be zero or more seconds, got {seconds}"
                ));
            }
            let Value::Function(f) = f else {
                return Err(format!(
                    "uji.defer: the second argument must be a function, got {}",
                    a_type(&f)
                ));
            };
            let id = state.add_timer(Duration::from_secs_f64(seconds.min(1.0e9)), f);
            lua.create_function(move |_, ()| {
                Ok(current().is_some_and(|state| state.cancel_timer(id)))
            })
            .map_err(lerr)
        })?,
    )?;
    t.set(
        "json_encode",
        raw(lua, |lua, _, value: Value| {
            let json = json_of(lua, &value, "uji.json.encode")?;
            serde_json::to_string(&json).map_err(|e| format!("uji.json.encode: {e}"))
        })?,
    )?;
    t.set(
        "json_decode",
        raw(lua, |lua, _, text: Value| {
            let text = string_arg(&text, "uji.json.decode", "the text")?;
            let json: Json = serde_json::from_str(&text)
                .map_err(|e| format!("uji.json.decode: invalid JSON: {e}"))?;
            lua_value(lua, &json)
        })?,
    )?;
    t.set(
        "json_array",
        raw(lua, |lua, _, value: Value| {
            let table = match value {
                Value::Nil => lua.create_table().map_err(lerr)?,
                Value::Table(t) => t,
                other => {
                    return Err(format!(
                        "uji.json.array: expected a table or nothing, got {}",
                        a_type(&other)
                    ));
                }
            };
            convert::mark_array(lua, &table).map_err(lerr)?;
            Ok(table)
        })?,
    )?;
    t.set("json_null", Value::NULL)?;
    t.set(
        "session_submit",
        raw(lua, |_, state, text: Value| {
            let text = string_arg(&text, "uji.session.submit", "the text")?;
            service(
                state,
                "uji.session.submit",
                "session.submit",
                json!({"text": text}),
            )?;
            Ok(())
        })?,
    )?;
    t.set(
        "session_info",
        raw(lua, |lua, state, ()| {
            let info = service(state, "uji.session.info", "session.info", Json::Null)?;
            lua_value(lua, &info)
        })?,
    )?;
    t.set(
        "quit",
        raw(lua, |_, state, ()| {
            service(state, "uji.quit", "quit", Json::Null)?;
            Ok(())
        })?,
    )?;
    t.set(
        "provider_add",
        raw(lua, |lua, state, spec: Value| {
            let params = provider_spec(lua, &spec)?;
            let answer = service(state, "uji.provider.add", "provider.add", params)?;
            lua_value(lua, &answer)
        })?,
    )?;
    t.set(
        "provider_list",
        raw(lua, |lua, state, ()| {
            let answer = service(state, "uji.provider.list", "provider.list", Json::Null)?;
            lua_value(lua, &answer)
        })?,
    )?;
    t.set(
        "model_use",
        raw(lua, |lua, state, spec: Value| {
            let model = match &spec {
                Value::String(s) => s.to_string_lossy(),
                Value::Table(t) => {
                    let provider: Option<String> = t.get("provider").ok();
                    let model: Option<String> = t.get("model").ok();
                    match (provider, model) {
                        (Some(p), Some(m)) => format!("{p}/{m}"),
                        (Some(p), None) => p,
                        _ => {
                            return Err("uji.model.use: give \"provider/model\", \"provider\" or {provider = ..., model = ...}".to_string());
                        }
                    }
                }
                other => {
                    return Err(format!(
                        "uji.model.use: expected \"provider/model\", got {}",
                        a_type(other)
                    ));
                }
            };
            // A bare provider id picks its default model; core checks it.
            let answer = service(state, "uji.model.use", "model.use", json!({"model": model}))?;
            lua_value(lua, &answer)
        })?,
    )?;
    t.set(
        "model_current",
        raw(lua, |lua, state, ()| {
            let answer = service(state, "uji.model.current", "model.current", Json::Null)?;
            lua_value(lua, &answer)
        })?,
    )?;
    t.set("version", env!("CARGO_PKG_VERSION"))?;
    t.set(
        "traceback",
        lua.create_function(|lua, (message, level): (Value, Option<usize>)| {
            let message = match message {
                Value::String(s) => Some(s.to_string_lossy()),
                Value::Nil => None,
                other => return Ok(other),
            };
            lua.traceback(message.as_deref(), level.unwrap_or(1))
                .map(Value::String)
        })?,
    )?;
    t.set(
        "shipped",
        lua.create_function(|_, name: String| {
            Ok(match crate::load::shipped(&name) {
                Some((file, source)) => {
                    (Some(source.to_string()), Some(format!("@[uji lua]/{file}")))
                }
                None => (None, None),
            })
        })?,
    )?;
    Ok(())
}

fn provider_spec(lua: &Lua, spec: &Value) -> Result<Json, String> {
    const API: &str = "uji.provider.add";
    let Value::Table(_) = spec else {
        return Err(format!(
            "{API}: expected a table {{id, wire, base_url, models}}, got {}",
            a_type(spec)
        ));
    };
    let mut json = json_of(lua, spec, API)?;
    let Some(map) = json.as_object_mut() else {
        return Err(format!(
            "{API}: expected a table {{id, wire, base_url, models}}"
        ));
    };
    for field in ["id", "wire", "base_url"] {
        if !map.get(field).is_some_and(Json::is_string) {
            return Err(format!("{API}: {field} must be a string"));
        }
    }
    if let Some(key_env) = map.get("key_env")
        && !key_env.is_string()
    {
        return Err(format!(
            "{API}: key_env must be the name of an environment variable"
        ));
    }
    let models = match map.remove("models") {
        None => Vec::new(),
        Some(Json::Array(items)) => items,
        Some(Json::Object(o)) if o.is_empty() => Vec::new(),
        Some(_) => return Err(format!("{API}: models must be a list")),
    };
    let mut normalized = Vec::with_capacity(models.len());
    for (i, model) in models.into_iter().enumerate() {
        match model {
            Json::String(id) => normalized.push(json!({"id": id})),
            Json::Object(o) if o.get("id").is_some_and(Json::is_string) => {
                normalized.push(Json::Object(o));
            }
            _ => {
                return Err(format!(
                    "{API}: models[{}] must be a model id or a table with an id",
                    i + 1
                ));
            }
        }
    }
    map.insert("models".to_string(), Json::Array(normalized));
    Ok(json)
}
