//! `uji.ui.select/prompt/confirm`'s native: a `ui.dialog` host service
//! call, which waits for the person, made from a thread of this plugin's
//! own; the answer is handed to the Lua thread, where surface.lua's
//! callback resumes the waiting task.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use mlua::{Function, Lua, RegistryKey, Table, Value};
use uji_sdk::protocol::frontend::{DialogAnswer, DialogKind};
use uji_sdk::services::UiDialog;

use crate::api::{a_type, lerr, raw};
use crate::runtime::State;

thread_local! {
    /// Each dialog's callback, on the Lua thread only.
    static WAITING: RefCell<HashMap<u64, RegistryKey>> = RefCell::new(HashMap::new());
}

fn text_field(t: &Table, key: &str) -> Result<Option<String>, String> {
    match t.get::<Value>(key).map_err(lerr)? {
        Value::Nil => Ok(None),
        Value::String(s) => Ok(Some(s.to_string_lossy())),
        other => Err(format!(
            "uji.ui: {key} must be a string, got {}",
            a_type(&other)
        )),
    }
}

/// The request surface.lua prepared: `{kind, title, items, current, value,
/// hidden, body, timeout}`.
fn request_of(t: &Table) -> Result<UiDialog, String> {
    let kind = match text_field(t, "kind")?.as_deref() {
        Some("select") => DialogKind::Select,
        Some("prompt") => DialogKind::Prompt,
        Some("confirm") => DialogKind::Confirm,
        other => return Err(format!("uji.ui: unknown dialog kind {other:?}")),
    };
    let items = match t.get::<Value>("items").map_err(lerr)? {
        Value::Table(list) => list
            .sequence_values::<String>()
            .collect::<mlua::Result<Vec<_>>>()
            .map_err(lerr)?,
        _ => Vec::new(),
    };
    let current = t
        .get::<Option<usize>>("current")
        .map_err(lerr)?
        .and_then(|i| i.checked_sub(1));
    let timeout_ms = t
        .get::<Option<f64>>("timeout")
        .map_err(lerr)?
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| (s * 1000.0) as u64);
    Ok(UiDialog {
        kind,
        title: text_field(t, "title")?.unwrap_or_default(),
        items,
        current,
        value: text_field(t, "value")?,
        hidden: t
            .get::<Option<bool>>("hidden")
            .map_err(lerr)?
            .unwrap_or(false),
        body: text_field(t, "body")?,
        timeout_ms,
    })
}

/// Calls the dialog's callback with what the person answered: `(kind,
/// value)` where kind is `selected` (value: the 1-based index), `text`,
/// `confirmed` (a boolean), `cancelled` or `timed_out`; or `(nil, why)`.
fn answered(state: &std::rc::Rc<State>, id: u64, answer: Result<DialogAnswer, String>) {
    let lua = &state.lua;
    let Some(key) = WAITING.with(|w| w.borrow_mut().remove(&id)) else {
        return;
    };
    let call = || -> mlua::Result<()> {
        let done: Function = lua.registry_value(&key)?;
        let _ = lua.remove_registry_value(key);
        let args: (Value, Value) = match answer {
            Ok(DialogAnswer::Selected { index }) => (
                Value::String(lua.create_string("selected")?),
                Value::Integer(index as i64 + 1),
            ),
            Ok(DialogAnswer::Text { text }) => (
                Value::String(lua.create_string("text")?),
                Value::String(lua.create_string(&text)?),
            ),
            Ok(DialogAnswer::Confirmed { yes }) => (
                Value::String(lua.create_string("confirmed")?),
                Value::Boolean(yes),
            ),
            Ok(DialogAnswer::TimedOut) => {
                (Value::String(lua.create_string("timed_out")?), Value::Nil)
            }
            Ok(DialogAnswer::Cancelled | DialogAnswer::Unknown) => {
                (Value::String(lua.create_string("cancelled")?), Value::Nil)
            }
            Err(why) => (Value::Nil, Value::String(lua.create_string(&why)?)),
        };
        state.call_in_task(&done, None, args).map(drop)
    };
    if let Err(e) = call() {
        state.report("a uji.ui dialog's callback", &e);
    }
}

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "ui_dialog",
        raw(lua, |lua, state, (spec, done): (Table, Function)| {
            let request = request_of(&spec)?;
            let id = state.link.next_id();
            let key = lua.create_registry_value(done).map_err(lerr)?;
            WAITING.with(|w| w.borrow_mut().insert(id, key));
            let host = state.host.clone();
            let link = Arc::clone(&state.link);
            std::thread::Builder::new()
                .name("uji-lua-dialog".to_string())
                .spawn(move || {
                    let answer = host.service(&request).map_err(|e| e.message().to_string());
                    link.post(Box::new(move |state| answered(state, id, answer)));
                })
                .map_err(|e| format!("uji.ui: cannot start its thread: {e}"))?;
            Ok(())
        })?,
    )?;
    Ok(())
}
