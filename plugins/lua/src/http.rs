//! `uji.http.request`'s native: the request runs in core (reqwest, one TLS
//! stack for all of uji) through the `http.*` host services, called from a
//! thread of this plugin's own; what arrives is handed to the Lua thread,
//! where surface.lua's callbacks run.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mlua::{Function, Lua, RegistryKey, Table, Value};
use uji_sdk::services::{HTTP_MAX_BODY_BYTES, HttpClose, HttpOpen, HttpOpened, HttpRead};

use crate::api::{a_type, check_fields, lerr, raw, string_arg};
use crate::runtime::State;

/// How long one read waits before looking whether it was cancelled.
const READ_WAIT_MS: u64 = 250;

/// The callbacks of each request in flight, on the Lua thread only.
struct Pending {
    done: RegistryKey,
    chunk: Option<RegistryKey>,
    cancelled: Arc<AtomicBool>,
}

thread_local! {
    static PENDING: RefCell<HashMap<u64, Pending>> = RefCell::new(HashMap::new());
}

/// What the reader hands the Lua thread.
enum Arrived {
    Chunk(String),
    Done(Result<(HttpOpened, String), String>),
}

fn seconds_ms(table: &Table, key: &str) -> Result<Option<u64>, String> {
    match table.get::<Value>(key).map_err(lerr)? {
        Value::Nil => Ok(None),
        Value::Integer(i) if i >= 0 => Ok(Some(i as u64 * 1000)),
        Value::Number(n) if n.is_finite() && n >= 0.0 => Ok(Some((n * 1000.0) as u64)),
        other => Err(format!(
            "uji.http.request: {key} must be a number of seconds, got {}",
            a_type(&other)
        )),
    }
}

/// The request `opts` describes (surface.lua checked the callbacks).
fn request_of(opts: &Table, stream: bool) -> Result<HttpOpen, String> {
    const API: &str = "uji.http.request";
    check_fields(
        opts,
        &[
            "url", "method", "headers", "body", "timeout", "idle", "on_line", "stream",
        ],
        API,
    )?;
    let url = match opts.get::<Value>("url").map_err(lerr)? {
        Value::String(s) => s.to_string_lossy(),
        _ => return Err(format!("{API} needs a url")),
    };
    let method = match opts.get::<Value>("method").map_err(lerr)? {
        Value::Nil => "GET".to_string(),
        value => string_arg(&value, API, "method")?.to_ascii_uppercase(),
    };
    let mut headers = BTreeMap::new();
    match opts.get::<Value>("headers").map_err(lerr)? {
        Value::Nil => {}
        Value::Table(t) => {
            for pair in t.pairs::<Value, Value>() {
                let (name, value) = pair.map_err(lerr)?;
                match (name, value) {
                    (Value::String(n), Value::String(v)) => {
                        headers.insert(n.to_string_lossy(), v.to_string_lossy());
                    }
                    (Value::String(n), Value::Integer(v)) => {
                        headers.insert(n.to_string_lossy(), v.to_string());
                    }
                    (_, other) => {
                        return Err(format!(
                            "{API}: headers must map names to strings, got {}",
                            a_type(&other)
                        ));
                    }
                }
            }
        }
        other => {
            return Err(format!(
                "{API}: headers must be a table, got {}",
                a_type(&other)
            ));
        }
    }
    let body = match opts.get::<Value>("body").map_err(lerr)? {
        Value::Nil => None,
        Value::String(s) => Some(s.to_string_lossy()),
        other => {
            return Err(format!(
                "{API}: body must be a string, got {}",
                a_type(&other)
            ));
        }
    };
    Ok(HttpOpen {
        method,
        url,
        headers,
        body,
        timeout_ms: seconds_ms(opts, "timeout")?,
        idle_ms: seconds_ms(opts, "idle")?,
        stream,
        follow_redirects: None,
        auth: None,
    })
}

/// Opens and reads request `id` on a thread of its own.
fn read_in_background(state: &State, id: u64, request: HttpOpen, cancelled: Arc<AtomicBool>) {
    let host = state.host.clone();
    let link = Arc::clone(&state.link);
    let stream = request.stream;
    let post = move |arrived: Arrived| {
        link.post(Box::new(move |state| deliver(state, id, arrived)));
    };
    let spawned = std::thread::Builder::new()
        .name("uji-lua-http".to_string())
        .spawn(move || {
            let opened = match host.service(&request) {
                Ok(opened) => opened,
                Err(e) => return post(Arrived::Done(Err(e.message().to_string()))),
            };
            let mut body = String::new();
            loop {
                if cancelled.load(Ordering::SeqCst) {
                    let _ = host.service(&HttpClose { id: opened.id });
                    return;
                }
                let read = HttpRead {
                    id: opened.id,
                    max_bytes: None,
                    wait_ms: READ_WAIT_MS,
                };
                let chunk = match host.service(&read) {
                    Ok(chunk) => chunk,
                    Err(e) => return post(Arrived::Done(Err(e.message().to_string()))),
                };
                if stream {
                    if !chunk.data.is_empty() {
                        post(Arrived::Chunk(chunk.data));
                    }
                } else {
                    body.push_str(&chunk.data);
                    if body.len() as u64 > HTTP_MAX_BODY_BYTES {
                        let _ = host.service(&HttpClose { id: opened.id });
                        return post(Arrived::Done(Err(format!(
                            "the answer is larger than {} MiB; read it as it comes with on_line",
                            HTTP_MAX_BODY_BYTES / (1024 * 1024)
                        ))));
                    }
                }
                if chunk.done {
                    return post(Arrived::Done(Ok((opened, body))));
                }
            }
        });
    if let Err(e) = spawned {
        state.host.log(
            uji_sdk::LogLevel::Warn,
            &format!("uji.http.request: cannot start its thread: {e}"),
        );
    }
}

/// Calls the request's callbacks on the Lua thread.
fn deliver(state: &std::rc::Rc<State>, id: u64, arrived: Arrived) {
    let lua = &state.lua;
    let call = || -> mlua::Result<()> {
        match arrived {
            Arrived::Chunk(data) => {
                let chunk = PENDING.with(|p| {
                    p.borrow().get(&id).and_then(|pending| {
                        pending
                            .chunk
                            .as_ref()
                            .and_then(|key| lua.registry_value::<Function>(key).ok())
                    })
                });
                if let Some(chunk) = chunk {
                    state.call_in_task(&chunk, None, data).map(drop)?;
                }
            }
            Arrived::Done(result) => {
                let Some(pending) = PENDING.with(|p| p.borrow_mut().remove(&id)) else {
                    return Ok(());
                };
                let done: Function = lua.registry_value(&pending.done)?;
                let _ = lua.remove_registry_value(pending.done);
                if let Some(key) = pending.chunk {
                    let _ = lua.remove_registry_value(key);
                }
                match result {
                    Ok((opened, body)) => {
                        let response = lua.create_table()?;
                        response.set("status", opened.status)?;
                        let headers = lua.create_table()?;
                        for (name, value) in opened.headers {
                            headers.set(name, value)?;
                        }
                        response.set("headers", headers)?;
                        response.set("body", lua.create_string(&body)?)?;
                        response.set("url", opened.url)?;
                        state.call_in_task(&done, None, response).map(drop)?;
                    }
                    Err(message) => {
                        state
                            .call_in_task(&done, None, (Value::Nil, message))
                            .map(drop)?;
                    }
                }
            }
        }
        Ok(())
    };
    if let Err(e) = call() {
        state.report("a uji.http.request callback", &e);
    }
}

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "http_start",
        raw(
            lua,
            |lua, state, (opts, done, chunk): (Table, Function, Option<Function>)| {
                let request = request_of(&opts, chunk.is_some())?;
                let id = state.link.next_id();
                let cancelled = Arc::new(AtomicBool::new(false));
                let pending = Pending {
                    done: lua.create_registry_value(done).map_err(lerr)?,
                    chunk: match chunk {
                        Some(f) => Some(lua.create_registry_value(f).map_err(lerr)?),
                        None => None,
                    },
                    cancelled: Arc::clone(&cancelled),
                };
                PENDING.with(|p| p.borrow_mut().insert(id, pending));
                read_in_background(state, id, request, cancelled);
                Ok(id)
            },
        )?,
    )?;
    t.set(
        "http_cancel",
        raw(lua, |lua, _, id: u64| {
            if let Some(pending) = PENDING.with(|p| p.borrow_mut().remove(&id)) {
                pending.cancelled.store(true, Ordering::SeqCst);
                let _ = lua.remove_registry_value(pending.done);
                if let Some(key) = pending.chunk {
                    let _ = lua.remove_registry_value(key);
                }
            }
            Ok(())
        })?,
    )?;
    Ok(())
}
