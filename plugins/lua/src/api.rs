//! The `uji` table: the raw functions behind it (see prelude.lua for the
//! wrappers that turn their errors into Lua errors) and the Lua state.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::Duration;

use mlua::{
    FromLuaMulti, Function, IntoLuaMulti, Lua, LuaOptions, MultiValue, StdLib, Table, Value,
};
use serde_json::Value as Json;
use uji_sdk::LogLevel;
use uji_sdk::protocol::keymap::edit_distance;
use uji_sdk::serde::Serialize;
use uji_sdk::services::{Service, ServiceError};

use crate::convert::{self, ARRAY_MT};
use crate::runtime::{Setup, State, Timers, current};

// The plugin's own chunks, compiled at build time: the prelude (errors
// never point into it), the task scheduler (`tasks.lua`) and the runtime
// surface built on tasks (`surface.lua`).
use crate::load::shipped_modules::{PRELUDE, SURFACE, TASKS};

/// Registry name of `tasks.call`, through which uji runs Lua entry points
/// as tasks ([`crate::runtime::State::call_in_task`]).
pub const TASK_CALL: &str = "uji.tasks.call";

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

/// A spec's required function field `field`, written `field = signature`.
pub fn required_function(
    value: Value,
    who: &str,
    field: &str,
    signature: &str,
) -> Result<Function, String> {
    match value {
        Value::Function(f) => Ok(f),
        Value::Nil => Err(format!(
            "{who}: {field} is missing; give {field} = {signature} ... end"
        )),
        other => Err(format!(
            "{who}: {field} must be a function, got {}",
            a_type(&other)
        )),
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

/// Checks that `table` has no field outside `known`: a misspelt field
/// (`polcy = "deny"`) would otherwise be dropped without a word. `Err`
/// names the field, the closest known one and all of them.
pub fn check_fields(table: &Table, known: &[&str], who: &str) -> Result<(), String> {
    for pair in table.pairs::<Value, Value>() {
        let (key, _) = pair.map_err(lerr)?;
        let name = match &key {
            Value::String(s) => s.to_string_lossy(),
            Value::Integer(i) => format!("[{i}]"),
            other => format!("[{}]", a_type(other)),
        };
        if known.contains(&name.as_str()) {
            continue;
        }
        let hint = closest(&name, known)
            .map(|k| format!(" (did you mean {k}?)"))
            .unwrap_or_default();
        return Err(format!(
            "{who}: unknown field {name}{hint}; the fields are {}",
            known.join(", ")
        ));
    }
    Ok(())
}

/// The known name within two edits of `name`, if any.
fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
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

/// Calls the host service `S` for `api` (a Lua function name, for messages).
pub fn service<S: Service>(state: &State, api: &str, request: &S) -> Result<S::Answer, String> {
    state.host.service(request).map_err(|e| match e {
        ServiceError::Unavailable { message, .. } => {
            format!("{api} is not available yet: {message}")
        }
        other => format!("{api}: {}", other.message()),
    })
}

/// A typed answer as a Lua value (`nil` for none).
pub fn lua_of<T: Serialize>(lua: &Lua, api: &str, answer: &T) -> Result<Value, String> {
    let json = serde_json::to_value(answer).map_err(|e| format!("{api}: {e}"))?;
    lua_value(lua, &json)
}

pub fn lua_value(lua: &Lua, json: &Json) -> Result<Value, String> {
    convert::to_lua_nil(lua, json).map_err(lerr)
}

pub fn json_of(lua: &Lua, value: &Value, api: &str) -> Result<Json, String> {
    convert::to_json(lua, value).map_err(|e| format!("{api}: {e}"))
}

/// A list of strings as a Lua array.
pub fn string_list(lua: &Lua, items: &[String]) -> Result<Value, String> {
    let table = lua.create_table().map_err(lerr)?;
    for item in items {
        table.raw_push(item.as_str()).map_err(lerr)?;
    }
    convert::mark_array(lua, &table).map_err(lerr)?;
    Ok(Value::Table(table))
}

/// Builds the Lua state: libraries, the `uji` table, `require` for shipped
/// and config modules.
pub fn new_state(setup: Setup) -> Result<Rc<State>, String> {
    let lua = Lua::new_with(StdLib::ALL_SAFE, LuaOptions::default())
        .map_err(|e| format!("cannot create the Lua state: {e}"))?;
    crate::interrupt::install(&lua)
        .map_err(|e| format!("cannot set up stopping runaway Lua code: {}", lerr(e)))?;
    let (memory, bad_memory) =
        crate::limits::memory_limit(std::env::var(crate::limits::MEMORY_VAR).ok());
    crate::limits::install(&lua, memory)
        .map_err(|e| format!("cannot set Lua's memory limit: {}", lerr(e)))?;
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
        running: RefCell::new(Vec::new()),
        load_until: Cell::new(None),
    });
    if let Some(notice) = bad_memory {
        state.notify(&notice);
    }
    install(&state).map_err(|e| format!("cannot set up the uji Lua API: {}", lerr(e)))?;
    Ok(state)
}

fn install(state: &Rc<State>) -> mlua::Result<()> {
    let lua = &state.lua;
    let t = lua.create_table()?;
    crate::tool::install(lua, &t)?;
    crate::wire::install(lua, &t)?;
    crate::events::install(lua, &t)?;
    crate::session::install(lua, &t)?;
    crate::served::install(lua, &t)?;
    crate::files::install(lua, &t)?;
    crate::frontmatter::install(lua, &t)?;
    crate::job::install(lua, &t)?;
    crate::http::install(lua, &t)?;
    crate::dialogs::install(lua, &t)?;
    crate::bytes::install(lua, &t)?;
    crate::packs::install_natives(lua, &t)?;
    t.set(
        "config_dir",
        state
            .config_dir
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
    )?;
    install_misc(lua, &t)?;
    let config_lua = state.config_dir.as_ref().map(|dir| {
        let lua_dir = dir.join("lua");
        format!(
            "{0}/?.lua;{0}/?/init.lua",
            lua_dir.to_string_lossy().replace(';', "")
        )
    });
    let uji: Table = PRELUDE.function(lua)?.call((t.clone(), config_lua))?;
    let tasks: Table = TASKS.function(lua)?.call((t.clone(), uji.clone()))?;
    lua.set_named_registry_value(TASK_CALL, tasks.get::<Function>("call")?)?;
    let surface: Table = SURFACE.function(lua)?.call((t, uji, tasks))?;
    lua.set_named_registry_value(
        crate::job::DISPATCH,
        surface.get::<Function>("job_dispatch")?,
    )?;
    lua.set_named_registry_value(
        crate::load::PACKS_AFTER_CONFIG,
        surface.get::<Function>("packs_after_config")?,
    )?;
    lua.set_named_registry_value(
        crate::load::ADD_COMMANDS,
        surface.get::<Function>("add_commands")?,
    )?;
    Ok(())
}

/// What the other modules leave: messages, timers, JSON and the runtime's
/// own facts.
fn install_misc(lua: &Lua, t: &Table) -> mlua::Result<()> {
    install_messages(lua, t)?;
    install_timers(lua, t)?;
    install_json(lua, t)?;
    install_runtime_info(lua, t)
}

/// `uji.notify` and `uji.log`.
fn install_messages(lua: &Lua, t: &Table) -> mlua::Result<()> {
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
    Ok(())
}

/// `uji.schedule` and `uji.defer`.
fn install_timers(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "schedule",
        raw(lua, |_, state, f: Value| match f {
            Value::Function(f) => {
                state.add_timer(Duration::ZERO, f, "uji.schedule");
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
            let id = state.add_timer(Duration::from_secs_f64(seconds.min(1.0e9)), f, "uji.defer");
            lua.create_function(move |_, ()| {
                Ok(current().is_some_and(|state| state.cancel_timer(id)))
            })
            .map_err(lerr)
        })?,
    )?;
    Ok(())
}

/// `uji.json.*`'s natives.
fn install_json(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "json_encode",
        raw(lua, |lua, _, value: Value| {
            let json = json_of(lua, &value, "uji.json.encode")?;
            serde_json::to_string(&json).map_err(|e| format!("uji.json.encode: {e}"))
        })?,
    )?;
    t.set(
        "json_decode",
        raw(lua, |lua, _, (text, options): (Value, Value)| {
            let text = string_arg(&text, "uji.json.decode", "the text")?;
            let keep_nulls = match &options {
                Value::Nil => true,
                Value::Table(t) => {
                    check_fields(t, &["nulls"], "uji.json.decode: options")?;
                    !matches!(
                        t.get::<Value>("nulls").map_err(lerr)?,
                        Value::Boolean(false)
                    )
                }
                other => {
                    return Err(format!(
                        "uji.json.decode: options must be a table {{ nulls = false }}, got {}",
                        a_type(other)
                    ));
                }
            };
            let json: Json = serde_json::from_str(&text)
                .map_err(|e| format!("uji.json.decode: invalid JSON: {e}"))?;
            convert::decoded(lua, &json, keep_nulls).map_err(lerr)
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
    Ok(())
}

/// Facts about the process for `uji.os` (surface.lua): fields, not calls.
fn install_os(lua: &Lua, t: &Table) -> mlua::Result<()> {
    let platform = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "macos",
        "windows" => "windows",
        _ => "other",
    };
    t.set("os_platform", platform)?;
    let executable = std::env::current_exe()
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    t.set("os_executable", executable)?;
    let argv = lua.create_table()?;
    for arg in std::env::args_os() {
        argv.raw_push(arg.to_string_lossy().into_owned())?;
    }
    convert::mark_array(lua, &argv)?;
    t.set("os_argv", argv)?;
    let started = std::time::Instant::now();
    t.set(
        "os_clock",
        lua.create_function(move |_, ()| Ok(started.elapsed().as_secs_f64()))?,
    )?;
    t.set(
        "os_cwd",
        lua.create_function(|_, ()| {
            Ok(std::env::current_dir()
                .ok()
                .map(|p| p.to_string_lossy().into_owned()))
        })?,
    )?;
    t.set(
        "os_now",
        lua.create_function(|_, ()| {
            Ok(std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0))
        })?,
    )?;
    Ok(())
}

/// `uji.version`, the traceback and the shipped Lua sources.
fn install_runtime_info(lua: &Lua, t: &Table) -> mlua::Result<()> {
    install_os(lua, t)?;
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
        lua.create_function(|lua, name: String| {
            Ok(match crate::load::shipped(&name) {
                Some(compiled) => (Some(compiled.function(lua)?), Some(compiled.chunk_name)),
                None => (None, None),
            })
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspellings_find_the_field_meant() {
        let known = ["description", "run", "policy", "display"];
        assert_eq!(closest("polcy", &known), Some("policy"));
        assert_eq!(closest("Run", &known), Some("run"));
        assert_eq!(closest("colour", &known), None);
    }
}
