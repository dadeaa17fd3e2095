//! `uji.on/off/emit`, `uji.command.add`, `uji.keymap.*`.

use std::rc::Rc;
use std::sync::Arc;

use mlua::{Function, Lua, Table, Value};
use serde_json::{Value as Json, json};
use uji_sdk::protocol::HookOptions;
use uji_sdk::services::{Emit, HookRemove, KeymapAdd, ServiceError};

use crate::api::{a_type, lerr, lua_of, raw, service, string_arg};
use crate::convert;
use crate::runtime::{KeyBinding, Link, State};

/// Forgets the Lua side of a registration when uji drops it (replaced by a
/// same-named one, removed, or never registered).
struct Registration {
    link: Arc<Link>,
    id: u64,
    forget: fn(&State, u64),
}

impl Drop for Registration {
    fn drop(&mut self) {
        let (id, forget) = (self.id, self.forget);
        self.link.post(Box::new(move |state| forget(state, id)));
    }
}

fn forget_hook(state: &State, id: u64) {
    state.hooks.borrow_mut().remove(&id);
}

fn forget_command(state: &State, id: u64) {
    state.commands.borrow_mut().remove(&id);
}

/// Where the Lua code calling a raw function is: `file:line`.
fn caller(lua: &Lua) -> Option<(String, usize)> {
    // 0 = the raw function, 1 = the prelude's wrapper, 2 = the caller.
    lua.inspect_stack(2, |debug| {
        let source = debug.source();
        let file = source.short_src.map(|s| s.into_owned())?;
        Some((file, debug.current_line()?))
    })
    .flatten()
}

/// A handler name that says where it was registered: `init.lua:12`.
fn generated_name(lua: &Lua, state: &State, event: &str) -> String {
    let base = match caller(lua) {
        Some((file, line)) => {
            let short = std::path::Path::new(&file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or(file);
            format!("{short}:{line}")
        }
        None => "lua".to_string(),
    };
    let mut names = state.hook_names.borrow_mut();
    let mut name = base.clone();
    let mut n = 1;
    while !names.insert(format!("{event}\u{0}{name}")) {
        n += 1;
        name = format!("{base}#{n}");
    }
    name
}

/// Runs handler `id` with `payload` (on the Lua thread).
fn run_hook(
    state: &State,
    id: u64,
    event: &str,
    name: &str,
    payload: Json,
) -> Result<Json, String> {
    let handler = state.hooks.borrow().get(&id).cloned();
    let Some(handler) = handler else {
        return Ok(Json::Null);
    };
    let lua = &state.lua;
    let payload = convert::to_lua_nil(lua, &payload).map_err(lerr)?;
    match handler.call::<Value>(payload) {
        Ok(answer) => convert::to_json(lua, &answer).map_err(|e| {
            let message =
                format!("the {event} handler {name} returned a value uji cannot use: {e}");
            state.notify(&message);
            message
        }),
        Err(e) => Err(state
            .report(&format!("the {event} handler {name}"), &e)
            .full()),
    }
}

fn run_command(state: &State, id: u64, name: &str, args: String) -> Result<String, String> {
    let handler = state.commands.borrow().get(&id).cloned();
    let Some(handler) = handler else {
        return Err(format!("the command /{name} was removed"));
    };
    match handler.call::<Value>(args) {
        Ok(Value::Nil) => Ok(String::new()),
        Ok(Value::String(s)) => Ok(s.to_string_lossy()),
        Ok(other) => state
            .lua
            .globals()
            .get::<Function>("tostring")
            .and_then(|f| f.call::<String>(other))
            .map_err(lerr),
        Err(e) => Err(state.report(&format!("/{name}"), &e).full()),
    }
}

/// Registers `handler` as the slash command `name`.
fn add_command(
    state: &Rc<State>,
    name: &str,
    description: &str,
    handler: Function,
) -> Result<(), String> {
    let link = Arc::clone(&state.link);
    let id = link.next_id();
    state.commands.borrow_mut().insert(id, handler);
    let registration = Registration {
        link: Arc::clone(&link),
        id,
        forget: forget_command,
    };
    let owned = name.to_string();
    state
        .host
        .register_command(name, description, move |args: &str| {
            let _keep = &registration;
            let (name, args) = (owned.clone(), args.to_string());
            link.call(move |state| run_command(state, id, &name, args))?
        })
}

fn hook_options(options: &Value) -> Result<(Option<i64>, Option<String>), String> {
    const API: &str = "uji.on";
    match options {
        Value::Nil => Ok((None, None)),
        Value::Table(t) => {
            let priority = match t.get::<Value>("priority").map_err(lerr)? {
                Value::Nil => None,
                Value::Integer(i) => Some(i),
                Value::Number(n) if n.is_finite() => Some(n.round() as i64),
                other => {
                    return Err(format!(
                        "{API}: priority must be a number, got {}",
                        a_type(&other)
                    ));
                }
            };
            let name = match t.get::<Value>("name").map_err(lerr)? {
                Value::Nil => None,
                Value::String(s) if !s.to_string_lossy().is_empty() => Some(s.to_string_lossy()),
                other => {
                    return Err(format!(
                        "{API}: name must be a non-empty string, got {}",
                        a_type(&other)
                    ));
                }
            };
            Ok((priority, name))
        }
        other => Err(format!(
            "{API}: options must be a table {{priority = ..., name = ...}}, got {}",
            a_type(other)
        )),
    }
}

fn on(
    lua: &Lua,
    state: &Rc<State>,
    event: Value,
    handler: Value,
    options: Value,
) -> Result<String, String> {
    let event = string_arg(&event, "uji.on", "the event name")?;
    if event.trim().is_empty() {
        return Err("uji.on: the event name must not be empty".to_string());
    }
    let Value::Function(handler) = handler else {
        return Err(format!(
            "uji.on({event:?}): the handler must be a function, got {}",
            a_type(&handler)
        ));
    };
    let (priority, name) = hook_options(&options)?;
    let name = match name {
        Some(name) => name,
        None => generated_name(lua, state, &event),
    };
    let link = Arc::clone(&state.link);
    let id = link.next_id();
    state.hooks.borrow_mut().insert(id, handler);
    let registration = Registration {
        link: Arc::clone(&link),
        id,
        forget: forget_hook,
    };
    let options = HookOptions {
        priority: priority.unwrap_or(HookOptions::default().priority),
        name: Some(name.clone()),
    };
    let (owned_event, owned_name) = (event.clone(), name.clone());
    state
        .host
        .on(&event, options, move |payload| {
            let _keep = &registration;
            let (event, name) = (owned_event.clone(), owned_name.clone());
            link.call(move |state| run_hook(state, id, &event, &name, payload))?
        })
        .map_err(|e| format!("uji.on({event:?}): {e}"))?;
    Ok(name)
}

fn keymap_add(state: &Rc<State>, mode: Value, key: Value, binding: Value) -> Result<(), String> {
    const API: &str = "uji.keymap.add";
    let mode = string_arg(&mode, API, "the mode")?;
    let key = string_arg(&key, API, "the key")?;
    if mode.is_empty() || key.is_empty() {
        return Err(format!("{API}: mode and key must not be empty"));
    }
    let forwarded = match &binding {
        Value::String(action) => json!(action.to_string_lossy()),
        Value::Table(t) => match t.get::<Value>("command").map_err(lerr)? {
            Value::String(command) => json!({"command": command.to_string_lossy()}),
            other => {
                return Err(format!(
                    "{API}: a table binding is {{command = \"name\"}}; command was {}",
                    a_type(&other)
                ));
            }
        },
        Value::Function(f) => {
            // A hidden command (leading _) runs the function.
            let command = format!("_key:{mode}:{key}");
            add_command(state, &command, "", f.clone())?;
            json!({"command": command})
        }
        other => {
            return Err(format!(
                "{API}: the binding must be an action name, {{command = \"name\"}} or a function, got {}",
                a_type(other)
            ));
        }
    };
    {
        let mut keymap = state.keymap.borrow_mut();
        keymap.retain(|b| !(b.mode == mode && b.key == key));
        keymap.push(KeyBinding {
            mode: mode.clone(),
            key: key.clone(),
            binding,
        });
    }
    let binding = KeymapAdd {
        mode,
        key,
        binding: forwarded,
    };
    match state.host.service(&binding) {
        // Without an interface that offers key bindings, they are kept for
        // uji.keymap.list().
        Ok(()) | Err(ServiceError::Unavailable { .. }) => Ok(()),
        Err(e) => Err(format!("{API}: {}", e.message())),
    }
}

fn keymap_list(lua: &Lua, state: &State) -> mlua::Result<Table> {
    // Copy first: building tables can run Lua (a __gc), which must not find
    // the keymap borrowed.
    let bindings: Vec<(String, String, Value)> = state
        .keymap
        .borrow()
        .iter()
        .map(|b| (b.mode.clone(), b.key.clone(), b.binding.clone()))
        .collect();
    let list = lua.create_table()?;
    for (mode, key, binding) in bindings {
        let entry = lua.create_table()?;
        entry.set("mode", mode)?;
        entry.set("key", key)?;
        entry.set("binding", binding)?;
        list.raw_push(entry)?;
    }
    convert::mark_array(lua, &list)?;
    Ok(list)
}

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "on",
        raw(
            lua,
            |lua, state, (event, handler, options): (Value, Value, Value)| {
                on(lua, state, event, handler, options)
            },
        )?,
    )?;
    t.set(
        "off",
        raw(lua, |_, state, (event, name): (Value, Value)| {
            let event = string_arg(&event, "uji.off", "the event name")?;
            let name = string_arg(&name, "uji.off", "the handler name")?;
            service(state, "uji.off", &HookRemove { event, name })
        })?,
    )?;
    t.set(
        "emit",
        raw(lua, |lua, state, (event, payload): (Value, Value)| {
            let event = string_arg(&event, "uji.emit", "the event name")?;
            let payload = convert::to_json(lua, &payload).map_err(|e| format!("uji.emit: {e}"))?;
            let answers = service(state, "uji.emit", &Emit { event, payload })?;
            lua_of(lua, "uji.emit", &answers)
        })?,
    )?;
    t.set(
        "command_add",
        raw(lua, |_, state, (name, spec): (Value, Value)| {
            const API: &str = "uji.command.add";
            let name = string_arg(&name, API, "the command's name")?;
            let name = name.trim_start_matches('/').to_string();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(format!(
                    "{API}: {name:?} is not a command name (one word, no spaces)"
                ));
            }
            let (handler, description) = match spec {
                Value::Function(f) => (f, String::new()),
                Value::Table(t) => {
                    let handler = match t.get::<Value>("handler").map_err(lerr)? {
                        Value::Function(f) => f,
                        other => {
                            return Err(format!(
                                "{API}({name:?}): handler must be a function, got {}",
                                a_type(&other)
                            ));
                        }
                    };
                    let description = match t.get::<Value>("desc").map_err(lerr)? {
                        Value::Nil => String::new(),
                        Value::String(s) => s.to_string_lossy(),
                        other => {
                            return Err(format!(
                                "{API}({name:?}): desc must be a string, got {}",
                                a_type(&other)
                            ));
                        }
                    };
                    (handler, description)
                }
                other => {
                    return Err(format!(
                        "{API}({name:?}): expected a function or {{handler = function, desc = \"...\"}}, got {}",
                        a_type(&other)
                    ));
                }
            };
            add_command(state, &name, &description, handler)
        })?,
    )?;
    t.set(
        "keymap_add",
        raw(
            lua,
            |_, state, (mode, key, binding): (Value, Value, Value)| {
                keymap_add(state, mode, key, binding)
            },
        )?,
    )?;
    t.set(
        "keymap_list",
        raw(lua, |lua, state, ()| keymap_list(lua, state).map_err(lerr))?,
    )?;
    Ok(())
}
