//! `uji.on/off/emit`, `uji.command.add`, `uji.keymap.*`.

use std::rc::Rc;
use std::sync::Arc;

use mlua::{Function, Lua, Table, Value};
use serde_json::{Value as Json, json};
use uji_sdk::protocol::HookOptions;
use uji_sdk::protocol::keymap;
use uji_sdk::services::{
    CommandBuiltins, CommandList, CommandRemove, Emit, HookRemove, KeymapAdd, KeymapList,
    ServiceError,
};

use crate::api::{a_type, lerr, lua_of, lua_value, raw, service, string_arg};
use crate::convert;
use crate::errors::{LuaFailure, defined_at};
use crate::runtime::{Entered, KeyBinding, Link, State};

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
    let answered = match state.call_in_task(&handler, None, payload) {
        Ok(Entered::Done(results)) => Ok(results.into_iter().next().unwrap_or(Value::Nil)),
        // A handler that waits goes on as a task; its answer comes too
        // late to count. A before_tool decision cannot be guessed: deny.
        Ok(Entered::Waiting(_)) if event == "before_tool" => {
            return Err(format!(
                "the before_tool handler {name} waited (a sleep, a request, a dialog) before deciding; a before_tool handler must decide at once"
            ));
        }
        Ok(Entered::Waiting(_)) => return Ok(Json::Null),
        Err(e) => Err(e),
    };
    match answered {
        Ok(answer) => {
            let answer = convert::to_json(lua, &answer).map_err(|e| {
                let message =
                    format!("the {event} handler {name} returned a value uji cannot use: {e}");
                state.notify(&message);
                message
            })?;
            // uji reports the error (and a before_tool error denies the call).
            check_answer(event, &answer).map_err(|why| {
                let message = format!("the {event} handler {name} returned {answer}; {why}");
                LuaFailure {
                    message,
                    location: defined_at(&handler),
                }
                .full()
            })?;
            Ok(answer)
        }
        Err(e) => Err(state
            .report(&format!("the {event} handler {name}"), &e)
            .full()),
    }
}

/// What a before_tool handler may answer.
const DECISIONS: &str = "it must return { allow = true }, { deny = \"reason\" }, { ask = true }, { ask = \"question\" } or nothing";

/// Checks a handler's answer to one of uji's own events; `Err` says what
/// it must return. Answers to other events are the emitter's business.
fn check_answer(event: &str, answer: &Json) -> Result<(), String> {
    match (event, answer) {
        (_, Json::Null) => Ok(()),
        ("before_tool", Json::Array(items)) if items.is_empty() => Ok(()),
        ("before_tool", Json::Object(fields)) => {
            let valid = fields.iter().all(|(key, value)| match key.as_str() {
                "allow" | "all_parts" => value.is_boolean(),
                "deny" | "ask" => value.is_boolean() || value.is_string(),
                _ => false,
            });
            if valid {
                Ok(())
            } else {
                Err(DECISIONS.to_string())
            }
        }
        ("before_tool", _) => Err(DECISIONS.to_string()),
        ("after_tool" | "before_turn" | "before_stop", Json::String(_)) => Ok(()),
        ("after_tool" | "before_turn" | "before_stop", _) => {
            Err("it must return a string or nothing".to_string())
        }
        _ => Ok(()),
    }
}

fn run_command(state: &State, id: u64, name: &str, args: String) -> Result<String, String> {
    let handler = state.commands.borrow().get(&id).cloned();
    let Some(handler) = handler else {
        return Err(format!("the command /{name} was removed"));
    };
    let answered = match state.call_in_task(&handler, None, args) {
        Ok(Entered::Done(results)) => Ok(results.into_iter().next().unwrap_or(Value::Nil)),
        // It goes on as a task; what it says later it says with uji.notify.
        Ok(Entered::Waiting(_)) => Ok(Value::Nil),
        Err(e) => Err(e),
    };
    match answered {
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

/// A binding as uji forwards it: an action name or `{"command": name}`.
fn forwarded_binding(
    state: &Rc<State>,
    mode: &str,
    key: &str,
    binding: &Value,
) -> Result<Json, String> {
    const API: &str = "uji.keymap.add";
    match binding {
        Value::String(action) => {
            let action = action.to_string_lossy();
            check_action(&action)?;
            Ok(json!(action))
        }
        Value::Table(t) => match t.get::<Value>("command").map_err(lerr)? {
            Value::String(command) => Ok(json!({"command": command.to_string_lossy()})),
            other => Err(format!(
                "{API}: a table binding is {{command = \"name\"}}; command was {}",
                a_type(&other)
            )),
        },
        Value::Function(f) => {
            // A hidden command (leading _) runs the function.
            let command = format!("_key:{mode}:{key}");
            add_command(state, &command, "", f.clone())?;
            Ok(json!({"command": command}))
        }
        other => Err(format!(
            "{API}: the binding must be an action name, {{command = \"name\"}} or a function, got {}",
            a_type(other)
        )),
    }
}

fn check_action(action: &str) -> Result<(), String> {
    if keymap::is_action(action) {
        return Ok(());
    }
    let close = keymap::similar_actions(action);
    let hint = if close.is_empty() {
        "uji.keymap.actions() lists the actions".to_string()
    } else {
        format!(
            "did you mean {}? uji.keymap.actions() lists them all",
            close.join(", ")
        )
    };
    Err(format!(
        "uji.keymap.add: no action named {action:?}; {hint}"
    ))
}

/// The mode and canonical key `api` was given, or what is wrong with them.
fn mode_and_key(api: &str, mode: &Value, key: &Value) -> Result<(String, String), String> {
    let mode = string_arg(mode, api, "the mode")?;
    let key = string_arg(key, api, "the key")?;
    let Some(canonical) = keymap::canonical_mode(&mode) else {
        return Err(format!(
            "{api}: no mode named {mode:?}; the modes are {} (\"insert\" is \"normal\")",
            keymap::MODES.join(", ")
        ));
    };
    let key = keymap::normalize_key(&key).map_err(|e| format!("{api}: {e}"))?;
    Ok((canonical.to_string(), key))
}

/// Tells uji about a binding (a null binding removes the user's one).
fn forward(state: &State, api: &str, binding: KeymapAdd) -> Result<(), String> {
    match state.host.service(&binding) {
        // Without an interface that offers key bindings, they are kept for
        // uji.keymap.list().
        Ok(()) | Err(ServiceError::Unavailable { .. }) => Ok(()),
        Err(e) => Err(format!("{api}: {}", e.message())),
    }
}

fn keymap_add(state: &Rc<State>, mode: Value, key: Value, binding: Value) -> Result<(), String> {
    let (mode, key) = mode_and_key("uji.keymap.add", &mode, &key)?;
    let forwarded = forwarded_binding(state, &mode, &key, &binding)?;
    {
        let mut keymap = state.keymap.borrow_mut();
        keymap.retain(|b| !(b.mode == mode && b.key == key));
        keymap.push(KeyBinding {
            mode: mode.clone(),
            key: key.clone(),
            binding,
            forwarded: forwarded.clone(),
        });
    }
    let binding = KeymapAdd {
        mode,
        key,
        binding: forwarded,
    };
    forward(state, "uji.keymap.add", binding)
}

fn keymap_remove(state: &Rc<State>, mode: Value, key: Value) -> Result<(), String> {
    let (mode, key) = mode_and_key("uji.keymap.remove", &mode, &key)?;
    state
        .keymap
        .borrow_mut()
        .retain(|b| !(b.mode == mode && b.key == key));
    let binding = KeymapAdd {
        mode,
        key,
        binding: Json::Null,
    };
    forward(state, "uji.keymap.remove", binding)
}

/// The user's bindings: uji's list (every plugin's), or this plugin's own
/// when no interface keeps one.
fn user_bindings(state: &State) -> Vec<KeymapAdd> {
    match state.host.service(&KeymapList {}) {
        Ok(list) => list,
        Err(_) => state
            .keymap
            .borrow()
            .iter()
            .map(|b| KeymapAdd {
                mode: b.mode.clone(),
                key: b.key.clone(),
                binding: b.forwarded.clone(),
            })
            .collect(),
    }
}

fn keymap_list(lua: &Lua, state: &State) -> Result<Table, String> {
    let effective = keymap::effective(&user_bindings(state));
    // Copy first: building tables can run Lua (a __gc), which must not find
    // the keymap borrowed.
    let own: Vec<(String, String, Value)> = state
        .keymap
        .borrow()
        .iter()
        .map(|b| (b.mode.clone(), b.key.clone(), b.binding.clone()))
        .collect();
    let list = lua.create_table().map_err(lerr)?;
    for entry in effective {
        // A binding made here is shown as it was given (a function stays one).
        let given = own
            .iter()
            .find(|(m, k, _)| entry.source == "user" && *m == entry.mode && *k == entry.key)
            .map(|(_, _, v)| v.clone());
        let binding = match given {
            Some(value) => value,
            None => lua_value(lua, &entry.binding)?,
        };
        let row = lua.create_table().map_err(lerr)?;
        row.set("mode", entry.mode).map_err(lerr)?;
        row.set("key", entry.key).map_err(lerr)?;
        row.set("binding", binding).map_err(lerr)?;
        row.set("source", entry.source).map_err(lerr)?;
        list.raw_push(row).map_err(lerr)?;
    }
    convert::mark_array(lua, &list).map_err(lerr)?;
    Ok(list)
}

fn keymap_actions(lua: &Lua) -> mlua::Result<Table> {
    let list = lua.create_table()?;
    for (name, description) in keymap::ACTIONS {
        let row = lua.create_table()?;
        row.set("name", *name)?;
        row.set("description", *description)?;
        list.raw_push(row)?;
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
        "command_remove",
        raw(lua, |_, state, name: Value| {
            let name = string_arg(&name, "uji.command.remove", "the command's name")?;
            let name = name.trim_start_matches('/').to_string();
            service(state, "uji.command.remove", &CommandRemove { name })
        })?,
    )?;
    t.set(
        "command_list",
        raw(lua, |lua, state, ()| {
            let names = service(state, "uji.command.list", &CommandList {})?;
            crate::api::string_list(lua, &names)
        })?,
    )?;
    t.set(
        "command_builtins",
        raw(lua, |lua, state, ()| {
            let names = service(state, "uji.command.builtins", &CommandBuiltins {})?;
            crate::api::string_list(lua, &names)
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
        "keymap_remove",
        raw(lua, |_, state, (mode, key): (Value, Value)| {
            keymap_remove(state, mode, key)
        })?,
    )?;
    t.set(
        "keymap_list",
        raw(lua, |lua, state, ()| keymap_list(lua, state))?,
    )?;
    t.set(
        "keymap_actions",
        raw(lua, |lua, _, ()| keymap_actions(lua).map_err(lerr))?,
    )?;
    Ok(())
}
