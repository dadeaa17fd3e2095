//! `uji.wire.*`: model APIs written in Lua.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Lua, Table, Value};
use serde_json::{Value as Json, json};
use uji_sdk::services::{WireList, WireRemove};
use uji_sdk::{Answer, Canceller, Failure, Reply, Wire, WireRequest};

use crate::api::{a_type, lerr, raw, required_function, service, string_arg, string_list};
use crate::convert;
use crate::runtime::{Link, State, StreamSlot, current};

/// How a cancelled request ends.
const CANCELLED: &str = "the request was cancelled";

/// A wire whose `stream` is a Lua function (in the state's `wires` map).
pub struct LuaWire {
    id: u64,
    name: String,
    link: Arc<Link>,
}

impl Wire for LuaWire {
    fn stream(&self, request: WireRequest, reply: Reply) -> Option<Canceller> {
        let (id, seq, name) = (self.id, self.link.next_id(), self.name.clone());
        if !self.link.post(Box::new(move |state| {
            start_stream(state, id, seq, name, request, reply);
        })) {
            return None;
        }
        let link = Arc::clone(&self.link);
        Some(Box::new(move || {
            // Mark first: the Lua thread may be stuck in this very stream.
            link.interrupts.request(seq);
            link.post(Box::new(move |state| cancel_stream(state, seq)));
        }))
    }
}

impl Drop for LuaWire {
    fn drop(&mut self) {
        let id = self.id;
        self.link.post(Box::new(move |state| {
            state.wires.borrow_mut().remove(&id);
        }));
    }
}

fn start_stream(
    state: &Rc<State>,
    id: u64,
    seq: u64,
    name: String,
    request: WireRequest,
    reply: Reply,
) {
    let stream = state.wires.borrow().get(&id).cloned();
    let Some(stream) = stream else {
        reply.fail(Failure::Provider {
            message: format!("the Lua wire {name} was removed"),
        });
        return;
    };
    let slot = Rc::new(StreamSlot {
        wire: name.clone(),
        reply: RefCell::new(Some(reply)),
        cancel: RefCell::new(None),
        text: RefCell::new(String::new()),
        reasoning: RefCell::new(String::new()),
    });
    state.streams.borrow_mut().insert(seq, Rc::clone(&slot));
    let lua = &state.lua;
    let prepared = serde_json::to_value(&request)
        .map_err(|e| e.to_string())
        .and_then(|json| convert::to_lua_nil(lua, &json).map_err(lerr))
        .and_then(|req| Ok((req, reply_table(lua, seq).map_err(lerr)?)));
    let (request, reply) = match prepared {
        Ok(prepared) => prepared,
        Err(message) => {
            fail(state, seq, Failure::Provider { message });
            return;
        }
    };
    match state.run_for(seq, || stream.call::<Value>((request, reply))) {
        Ok(Value::Nil) => {}
        Ok(Value::Function(cancel)) => {
            if state.streams.borrow().contains_key(&seq) {
                *slot.cancel.borrow_mut() = Some(cancel);
            }
        }
        Ok(other) => fail(
            state,
            seq,
            Failure::Provider {
                message: format!(
                    "the Lua wire {name} returned {} from stream; return nothing or a function that cancels the request",
                    a_type(&other)
                ),
            },
        ),
        Err(e) if crate::interrupt::is_interrupted(&e) => fail(
            state,
            seq,
            Failure::Provider {
                message: CANCELLED.to_string(),
            },
        ),
        Err(e) => {
            let failure = state.report(&format!("wire {name}"), &e);
            fail(
                state,
                seq,
                Failure::Provider {
                    message: failure.full(),
                },
            );
        }
    }
}

/// Takes the reply of stream `seq` to end it; `Err` when it is busy (a
/// delta is being delivered and the host called back into Lua).
fn take_reply(state: &State, seq: u64) -> Result<Option<(Rc<StreamSlot>, Reply)>, ()> {
    let slot = state.streams.borrow().get(&seq).cloned();
    let Some(slot) = slot else {
        return Ok(None);
    };
    let reply = slot.reply.try_borrow_mut().map_err(|_| ())?.take();
    let Some(reply) = reply else {
        return Ok(None);
    };
    state.streams.borrow_mut().remove(&seq);
    slot.cancel.borrow_mut().take();
    Ok(Some((slot, reply)))
}

fn fail(state: &State, seq: u64, failure: Failure) {
    match take_reply(state, seq) {
        Ok(Some((_, reply))) => reply.fail(failure),
        Ok(None) => {}
        Err(()) => state.later(Box::new(move |state| fail(state, seq, failure))),
    }
}

fn cancel_stream(state: &Rc<State>, seq: u64) {
    state.link.interrupts.clear(seq);
    let slot = state.streams.borrow().get(&seq).cloned();
    let Some(slot) = slot else {
        return;
    };
    let cancel = slot.cancel.borrow_mut().take();
    if let Some(cancel) = cancel
        && let Err(e) = cancel.call::<()>(())
    {
        state.report(&format!("stopping wire {}", slot.wire), &e);
    }
    fail(
        state,
        seq,
        Failure::Provider {
            message: CANCELLED.to_string(),
        },
    );
}

fn delta(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.to_string_lossy()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The `reply` table: text, reasoning, done, fail.
fn reply_table(lua: &Lua, seq: u64) -> mlua::Result<Table> {
    let reply = lua.create_table()?;
    reply.set(
        "text",
        lua.create_function(move |_, value: Value| {
            let Some(state) = current() else {
                return Ok(());
            };
            let slot = state.streams.borrow().get(&seq).cloned();
            if let (Some(slot), Some(text)) = (slot, delta(&value)) {
                slot.text.borrow_mut().push_str(&text);
                if let Ok(reply) = slot.reply.try_borrow()
                    && let Some(reply) = reply.as_ref()
                {
                    reply.text(&text);
                }
            }
            Ok(())
        })?,
    )?;
    reply.set(
        "reasoning",
        lua.create_function(move |_, value: Value| {
            let Some(state) = current() else {
                return Ok(());
            };
            let slot = state.streams.borrow().get(&seq).cloned();
            if let (Some(slot), Some(text)) = (slot, delta(&value)) {
                slot.reasoning.borrow_mut().push_str(&text);
                if let Ok(reply) = slot.reply.try_borrow()
                    && let Some(reply) = reply.as_ref()
                {
                    reply.reasoning(&text);
                }
            }
            Ok(())
        })?,
    )?;
    reply.set(
        "done",
        lua.create_function(move |lua, value: Value| {
            let Some(state) = current() else {
                return Ok(());
            };
            let (slot, reply) = match take_reply(&state, seq) {
                Ok(Some(taken)) => taken,
                Ok(None) => return Ok(()), // already ended
                Err(()) => {
                    let lua = lua.clone();
                    state.later(Box::new(move |state| {
                        if let Ok(Some((slot, reply))) = take_reply(state, seq) {
                            end_with_answer(state, &lua, &slot, reply, value);
                        }
                    }));
                    return Ok(());
                }
            };
            end_with_answer(&state, lua, &slot, reply, value);
            Ok(())
        })?,
    )?;
    reply.set(
        "fail",
        lua.create_function(move |lua, value: Value| {
            let Some(state) = current() else {
                return Ok(());
            };
            let failure = failure_of(lua, value);
            fail(&state, seq, failure);
            Ok(())
        })?,
    )?;
    Ok(reply)
}

fn end_with_answer(state: &State, lua: &Lua, slot: &StreamSlot, reply: Reply, value: Value) {
    match answer_of(lua, slot, value) {
        Ok(answer) => reply.done(answer),
        Err(message) => {
            state.notify(&format!("wire {}: {message}", slot.wire));
            reply.fail(Failure::Provider { message });
        }
    }
}

/// `reply.done(answer)`: nothing (the text streamed so far), a string, or a
/// table shaped like an Answer.
fn answer_of(lua: &Lua, slot: &StreamSlot, value: Value) -> Result<Answer, String> {
    let streamed = |answer: &mut Answer| {
        if answer.text.is_empty() {
            answer.text = slot.text.borrow().clone();
        }
        if answer.reasoning.is_none() && !slot.reasoning.borrow().is_empty() {
            answer.reasoning = Some(slot.reasoning.borrow().clone());
        }
    };
    match value {
        Value::Nil => {
            let mut answer = Answer::default();
            streamed(&mut answer);
            Ok(answer)
        }
        Value::String(s) => Ok(Answer {
            text: s.to_string_lossy(),
            ..Default::default()
        }),
        value @ Value::Table(_) => {
            let mut json = convert::to_json(lua, &value).map_err(|e| format!("reply.done: {e}"))?;
            let Some(map) = json.as_object_mut() else {
                return Err(
                    "reply.done: the answer must be a table {text, tool_calls, usage}".into(),
                );
            };
            match map.get_mut("tool_calls") {
                Some(Json::Object(o)) if o.is_empty() => {
                    map.insert("tool_calls".into(), json!([]));
                }
                Some(Json::Array(calls)) => {
                    for call in calls.iter_mut() {
                        // Arguments given as a table are sent as their JSON text.
                        if let Some(args) = call.get_mut("arguments")
                            && !args.is_string()
                        {
                            *args = Json::String(args.to_string());
                        }
                    }
                }
                _ => {}
            }
            let mut answer: Answer = serde_json::from_value(json)
                .map_err(|e| format!("reply.done: the answer is not valid: {e}"))?;
            streamed(&mut answer);
            Ok(answer)
        }
        other => Err(format!(
            "reply.done: expected nothing, a string or a table, got {}",
            a_type(&other)
        )),
    }
}

/// `reply.fail(failure)`: a message, or a table shaped like a Failure.
fn failure_of(lua: &Lua, value: Value) -> Failure {
    match value {
        Value::String(s) => Failure::Provider {
            message: s.to_string_lossy(),
        },
        value @ Value::Table(_) => {
            let json = match convert::to_json(lua, &value) {
                Ok(json) => json,
                Err(e) => {
                    return Failure::Provider {
                        message: format!("reply.fail: {e}"),
                    };
                }
            };
            let mut json = json;
            if let Some(map) = json.as_object_mut()
                && !map.contains_key("kind")
            {
                let kind = if map.contains_key("status") {
                    "http"
                } else {
                    "provider"
                };
                map.insert("kind".into(), json!(kind));
                if !map.contains_key("message") {
                    map.insert("message".into(), json!("the Lua wire failed"));
                }
            }
            serde_json::from_value(json.clone()).unwrap_or_else(|e| Failure::Provider {
                message: format!("reply.fail: invalid failure {json}: {e}"),
            })
        }
        other => Failure::Provider {
            message: format!("the Lua wire failed ({})", a_type(&other)),
        },
    }
}

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "wire_add",
        raw(lua, |_, state, (name, spec): (Value, Value)| {
            let name = string_arg(&name, "uji.wire.add", "the wire's name")?;
            let who = format!("uji.wire.add({name:?})");
            if name.trim().is_empty() {
                return Err(format!("{who}: the name must not be empty"));
            }
            let stream = match &spec {
                Value::Table(t) => required_function(
                    t.get::<Value>("stream").map_err(lerr)?,
                    &who,
                    "stream",
                    "function(request, reply)",
                )?,
                other => {
                    return Err(format!(
                        "{who}: the second argument must be a table {{stream = function(request, reply) ... end}}, got {}",
                        a_type(other)
                    ));
                }
            };
            let link = Arc::clone(&state.link);
            let id = link.next_id();
            state.wires.borrow_mut().insert(id, stream);
            let wire = LuaWire {
                id,
                name: name.clone(),
                link,
            };
            state
                .host
                .register_wire(&name, wire)
                .map_err(|e| format!("{who}: {e}"))
        })?,
    )?;
    t.set(
        "wire_remove",
        raw(lua, |_, state, name: Value| {
            let name = string_arg(&name, "uji.wire.remove", "the wire's name")?;
            service(state, "uji.wire.remove", &WireRemove { name })
        })?,
    )?;
    t.set(
        "wire_list",
        raw(lua, |lua, state, ()| {
            let names = service(state, "uji.wire.list", &WireList {})?;
            string_list(lua, &names)
        })?,
    )?;
    Ok(())
}
