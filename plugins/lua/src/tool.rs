//! `uji.tool.*`: tools written in Lua, and the policy functions.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Function, Lua, Table, Value};
use parking_lot::Mutex;
use serde_json::{Value as Json, json};
use uji_sdk::services::{
    PluginsAllowReplace, ToolConfine, ToolDisable, ToolEnable, ToolList, ToolPolicy, ToolReadRoots,
    ToolRemove, ToolRoots, ToolSandbox,
};
use uji_sdk::{
    Canceller, DeclaredPolicy, Display, Image, LogLevel, SubjectKind, Tool, ToolCall, ToolContext,
    ToolOutput, ToolSpec,
};

use crate::api::{
    a_type, check_fields, json_of, lerr, lua_of, raw, required_function, service, string_arg,
    string_list,
};
use crate::convert;
use crate::errors::{LuaFailure, called_at, defined_at};
use crate::interrupt;
use crate::runtime::{CallSlot, Entered, Link, State, ToolEntry, current};

/// Images larger than this (decoded) are left out of a result.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
const MEDIA_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const INTERRUPTED: &str = "interrupted by the user while this tool ran";
const FORMS: &str = "return a string, a table {text = ..., images = ...}, a function (uji calls it to stop the work) or nothing, and in the last two cases call ctx.done(result) later";

/// How a Lua tool's subject is worked out.
enum SubjectMode {
    /// The tool's name.
    Name,
    /// A fixed string.
    Fixed(String),
    /// A Lua function of the arguments.
    Function,
    /// `path = true` without a subject: the `path` argument.
    PathArg,
}

/// A tool whose code is Lua. uji holds it; the Lua side lives in the state's
/// `tools` map under `id`.
pub struct LuaTool {
    id: u64,
    spec: ToolSpec,
    subject: SubjectMode,
    link: Arc<Link>,
    /// A subject function that failed for these arguments: the call is then
    /// refused when it starts (fail closed), whatever the policy said.
    subject_failure: Mutex<Option<(Json, String)>>,
}

impl LuaTool {
    fn record_failure(&self, args: &Json, message: String) {
        *self.subject_failure.lock() = Some((args.clone(), message));
    }

    fn take_failure(&self, args: &Json) -> Option<String> {
        let mut slot = self.subject_failure.lock();
        match slot.take() {
            Some((failed, message)) if &failed == args => Some(message),
            other => {
                *slot = other;
                None
            }
        }
    }
}

impl Tool for LuaTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn subject(&self, args: &Json) -> String {
        match &self.subject {
            SubjectMode::Name => self.spec.name.clone(),
            SubjectMode::Fixed(subject) => subject.clone(),
            SubjectMode::PathArg => args
                .get("path")
                .and_then(Json::as_str)
                .unwrap_or(&self.spec.name)
                .to_string(),
            SubjectMode::Function => {
                let id = self.id;
                let owned = args.clone();
                match self.link.call(move |state| subject_of(state, id, &owned)) {
                    Ok(Ok(subject)) => subject,
                    Ok(Err(message)) | Err(message) => {
                        self.record_failure(args, message);
                        self.spec.name.clone()
                    }
                }
            }
        }
    }

    fn run(&self, _call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::error("internal error: a Lua tool was run without start")
    }

    fn start(self: Arc<Self>, call: ToolCall, ctx: ToolContext) -> Option<Canceller> {
        if let Some(message) = self.take_failure(&call.args) {
            ctx.finish(ToolOutput::error(format!(
                "the subject function of {} failed, so the call was refused: {message}",
                self.spec.name
            )));
            return None;
        }
        let seq = self.link.next_id();
        let id = self.id;
        if !self
            .link
            .post(Box::new(move |state| start_call(state, id, seq, call, ctx)))
        {
            return None;
        }
        let link = Arc::clone(&self.link);
        Some(Box::new(move || {
            // Mark first: the Lua thread may be stuck in this very call.
            link.interrupts.request(seq);
            link.post(Box::new(move |state| cancel_call(state, seq)));
        }))
    }
}

impl Drop for LuaTool {
    fn drop(&mut self) {
        let id = self.id;
        self.link.post(Box::new(move |state| {
            state.tools.borrow_mut().remove(&id);
        }));
    }
}

// ---- running a call (on the Lua thread) --------------------------------------------

fn subject_of(state: &State, id: u64, args: &Json) -> Result<String, String> {
    let entry = state
        .tools
        .borrow()
        .get(&id)
        .map(|e| (e.name.clone(), e.subject.clone()));
    let Some((name, Some(subject))) = entry else {
        return Err("the tool was removed".to_string());
    };
    let args = convert::to_lua_nil(&state.lua, args).map_err(lerr)?;
    match subject.call::<Value>(args) {
        Ok(Value::String(s)) => Ok(s.to_string_lossy()),
        Ok(Value::Integer(i)) => Ok(i.to_string()),
        Ok(Value::Number(n)) => Ok(n.to_string()),
        Ok(other) => {
            let message = format!(
                "the subject function of tool {name} returned {}; it must return a string",
                a_type(&other)
            );
            state.notify(&message);
            Err(message)
        }
        Err(e) => Err(state
            .report(&format!("the subject function of tool {name}"), &e)
            .full()),
    }
}

fn start_call(state: &Rc<State>, id: u64, seq: u64, call: ToolCall, ctx: ToolContext) {
    let entry = state
        .tools
        .borrow()
        .get(&id)
        .map(|e| (e.name.clone(), e.run.clone()));
    let Some((name, run)) = entry else {
        ctx.finish(ToolOutput::error("this Lua tool was removed"));
        return;
    };
    if state.link.interrupts.is_requested(seq) {
        ctx.finish(ToolOutput::interrupted(INTERRUPTED));
        return;
    }
    let slot = Rc::new(CallSlot {
        tool: name.clone(),
        ctx: RefCell::new(Some(ctx)),
        cancel: RefCell::new(None),
    });
    state.calls.borrow_mut().insert(seq, Rc::clone(&slot));
    let lua = &state.lua;
    let prepared = convert::to_lua_nil(lua, &call.args)
        .and_then(|args| Ok((args, ctx_table(lua, seq, &name, &call)?)));
    let (args, ctx_table) = match prepared {
        Ok(prepared) => prepared,
        Err(e) => {
            finish(state, seq, ToolOutput::error(lerr(e)));
            return;
        }
    };
    let on_end = match run_ended(lua, seq, &name) {
        Ok(on_end) => on_end,
        Err(e) => {
            finish(state, seq, ToolOutput::error(lerr(e)));
            return;
        }
    };
    let entered = state.run_for(seq, || {
        state.call_in_task(&run, Some(on_end), (args, ctx_table))
    });
    let returned = match entered {
        Ok(Entered::Done(results)) => Ok(results.into_iter().next().unwrap_or(Value::Nil)),
        // run waits (a request, a process, a sleep): it finishes through
        // ctx.done or its return value (run_ended); an interrupt cancels it.
        Ok(Entered::Waiting(cancel)) => Ok(Value::Function(cancel)),
        Err(e) => Err(e),
    };
    match returned {
        Ok(Value::Nil) => {}
        Ok(Value::Function(cancel)) => {
            if state.calls.borrow().contains_key(&seq) {
                *slot.cancel.borrow_mut() = Some(cancel);
            }
        }
        Ok(value) => {
            let output = checked_output(state, value, &name, defined_at(&run));
            finish(state, seq, output);
        }
        Err(e) if interrupt::is_interrupted(&e) => {
            state.host.log(
                LogLevel::Debug,
                &format!("tool {name}: its Lua code was stopped by an interrupt"),
            );
            finish(state, seq, ToolOutput::interrupted(INTERRUPTED));
        }
        Err(e) => {
            let failure = state.report(&format!("tool {name}"), &e);
            finish(state, seq, ToolOutput::error(failure.message));
        }
    }
}

/// What hears a run that waited end: its return value (if it gave one and
/// the call is still open) or its error finishes the call.
fn run_ended(lua: &Lua, seq: u64, name: &str) -> mlua::Result<Function> {
    let tool = name.to_string();
    lua.create_function(move |_, (ok, value): (bool, Value)| {
        let Some(state) = current() else {
            return Ok(());
        };
        if !state.calls.borrow().contains_key(&seq) {
            return Ok(());
        }
        let output = match (ok, value) {
            (true, Value::Nil | Value::Function(_)) => return Ok(()),
            (true, value) => checked_output(&state, value, &tool, None),
            (false, error) => {
                let message = match error {
                    Value::String(s) => s.to_string_lossy(),
                    other => format!("{other:?}"),
                };
                state.notify(&format!("tool {tool} failed: {message}"));
                ToolOutput::error(message)
            }
        };
        finish(&state, seq, output);
        Ok(())
    })
}

/// The `ctx` table a run receives.
fn ctx_table(lua: &Lua, seq: u64, name: &str, call: &ToolCall) -> mlua::Result<Table> {
    let ctx = lua.create_table()?;
    let tool = name.to_string();
    ctx.set(
        "done",
        lua.create_function(move |lua, result: Value| {
            let Some(state) = current() else {
                return Ok(());
            };
            if !state.calls.borrow().contains_key(&seq) {
                return Ok(()); // already finished: later calls are ignored
            }
            let output = checked_output(&state, result, &tool, called_at(lua, 1));
            finish(&state, seq, output);
            Ok(())
        })?,
    )?;
    ctx.set(
        "progress",
        lua.create_function(move |lua, line: Value| {
            let Some(state) = current() else {
                return Ok(());
            };
            let line = match line {
                Value::String(s) => s.to_string_lossy(),
                other => lua.globals().get::<Function>("tostring")?.call(other)?,
            };
            let slot = state.calls.borrow().get(&seq).cloned();
            if let Some(slot) = slot
                && let Ok(ctx) = slot.ctx.try_borrow()
                && let Some(ctx) = ctx.as_ref()
            {
                ctx.progress(&line);
            }
            Ok(())
        })?,
    )?;
    ctx.set(
        "cancelled",
        lua.create_function(move |_, ()| {
            let Some(state) = current() else {
                return Ok(true);
            };
            let slot = state.calls.borrow().get(&seq).cloned();
            Ok(match slot {
                Some(slot) => slot
                    .ctx
                    .try_borrow()
                    .map(|c| c.as_ref().is_none_or(ToolContext::is_cancelled))
                    .unwrap_or(false),
                None => true,
            })
        })?,
    )?;
    ctx.set("call_id", call.id.as_str())?;
    ctx.set("cwd", call.cwd.as_str())?;
    ctx.set("tool", name)?;
    Ok(ctx)
}

/// Finishes call `seq` once; later attempts do nothing.
pub fn finish(state: &State, seq: u64, output: ToolOutput) {
    let slot = state.calls.borrow().get(&seq).cloned();
    let Some(slot) = slot else {
        return;
    };
    let ctx = match slot.ctx.try_borrow_mut() {
        Ok(mut ctx) => ctx.take(),
        Err(_) => {
            // ctx.done from inside a progress callback: finish after it.
            state.later(Box::new(move |state| finish(state, seq, output)));
            return;
        }
    };
    state.calls.borrow_mut().remove(&seq);
    slot.cancel.borrow_mut().take();
    if let Some(ctx) = ctx {
        ctx.finish(output);
    }
}

fn cancel_call(state: &Rc<State>, seq: u64) {
    state.link.interrupts.clear(seq);
    let slot = state.calls.borrow().get(&seq).cloned();
    let Some(slot) = slot else {
        return;
    };
    let cancel = slot.cancel.borrow_mut().take();
    if let Some(cancel) = cancel
        && let Err(e) = cancel.call::<()>(())
    {
        state.report(&format!("stopping tool {}", slot.tool), &e);
    }
    finish(state, seq, ToolOutput::interrupted(INTERRUPTED));
}

/// A run's (or `ctx.done`'s) result as a tool output. A result of the wrong
/// shape is an error result for the model and a notice for the user naming
/// `at`, the `file:line` to fix.
fn checked_output(state: &State, value: Value, tool: &str, at: Option<String>) -> ToolOutput {
    output_of(&state.lua, value, tool).unwrap_or_else(|message| {
        let failure = LuaFailure {
            message: message.clone(),
            location: at,
        };
        state.notify(&format!("tool {tool} failed: {failure}"));
        ToolOutput::error(message)
    })
}

/// A run's (or `ctx.done`'s) result as a tool output; `Err` explains a
/// result of the wrong type.
fn output_of(lua: &Lua, value: Value, tool: &str) -> Result<ToolOutput, String> {
    match value {
        Value::String(s) => Ok(ToolOutput::text(s.to_string_lossy())),
        Value::Nil => Ok(ToolOutput::text("")),
        Value::Table(t) => output_of_table(lua, &t, tool),
        other => Err(format!(
            "tool {tool} gave {} as its result; {FORMS}",
            a_type(&other)
        )),
    }
}

fn output_of_table(lua: &Lua, table: &Table, tool: &str) -> Result<ToolOutput, String> {
    let text = match table.raw_get::<Value>("text").map_err(lerr)? {
        Value::String(s) => s.to_string_lossy(),
        Value::Nil => {
            return Err(format!(
                "tool {tool} gave a table without text; a result table is {{text = \"...\", images = {{...}}}}"
            ));
        }
        other => {
            return Err(format!(
                "tool {tool} gave a table whose text is {}; text must be a string",
                a_type(&other)
            ));
        }
    };
    let mut notes = Vec::new();
    let mut images = Vec::new();
    match table.raw_get::<Value>("images").map_err(lerr)? {
        Value::Nil => {}
        Value::Table(list) => {
            let json = convert::to_json(lua, &Value::Table(list.clone()));
            let items = match json {
                Ok(Json::Array(items)) => items,
                Ok(Json::Object(o)) if o.is_empty() => Vec::new(),
                Ok(_) => {
                    notes.push("[images left out: images must be a list]".to_string());
                    Vec::new()
                }
                Err(e) => {
                    notes.push(format!("[images left out: {e}]"));
                    Vec::new()
                }
            };
            for (i, item) in items.iter().enumerate() {
                match check_image(item) {
                    Ok(image) => images.push(image),
                    Err(why) => notes.push(format!("[image {} left out: {why}]", i + 1)),
                }
            }
        }
        other => notes.push(format!(
            "[images left out: images must be a list, got {}]",
            a_type(&other)
        )),
    }
    let mut output = ToolOutput::text(text);
    output.images = images;
    if !notes.is_empty() {
        if !output.text.is_empty() {
            output.text.push('\n');
        }
        output.text.push_str(&notes.join("\n"));
    }
    Ok(output)
}

/// Decoded size of base64 text.
fn decoded_len(data: &str) -> usize {
    let chars = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = data
        .trim_end()
        .bytes()
        .rev()
        .take_while(|b| *b == b'=')
        .count();
    (chars / 4 * 3 + (chars % 4).saturating_sub(1)).saturating_sub(padding.min(2))
}

fn check_image(item: &Json) -> Result<Image, String> {
    let Some(map) = item.as_object() else {
        return Err("it is not a table {media_type, data}".to_string());
    };
    let name = map.get("name").and_then(Json::as_str).map(str::to_string);
    let mut data = map
        .get("data")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let mut media_type = map
        .get("media_type")
        .and_then(Json::as_str)
        .map(str::to_ascii_lowercase);
    // Accept a data: URL and take its media type when none is given.
    if let Some(rest) = data.strip_prefix("data:")
        && let Some((head, body)) = rest.split_once(";base64,")
    {
        media_type = media_type.or_else(|| Some(head.to_ascii_lowercase()));
        data = body.to_string();
    }
    let label = name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
    let media_type = match media_type {
        Some(m) if MEDIA_TYPES.contains(&m.as_str()) => m,
        Some(m) => {
            return Err(format!(
                "media_type {m:?}{label} is not supported; use image/png, image/jpeg, image/gif or image/webp"
            ));
        }
        None => {
            return Err(format!(
                "it has no media_type{label}; use image/png, image/jpeg, image/gif or image/webp"
            ));
        }
    };
    if data.trim().is_empty() {
        return Err(format!("it has no data{label}"));
    }
    let size = decoded_len(&data);
    if size > MAX_IMAGE_BYTES {
        return Err(format!(
            "it is {:.1} MB{label}, over the 5 MB limit",
            size as f64 / (1024.0 * 1024.0)
        ));
    }
    Ok(Image {
        media_type,
        data,
        name,
    })
}

// ---- uji.tool.* ------------------------------------------------------------------

/// The fields of a `uji.tool.add` spec.
const SPEC_FIELDS: [&str; 8] = [
    "description",
    "parameters",
    "run",
    "subject",
    "policy",
    "path",
    "display",
    "read_only",
];

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn tool_add(lua: &Lua, state: &Rc<State>, name: Value, spec: Value) -> Result<(), String> {
    let name = match &name {
        Value::String(s) => s.to_string_lossy(),
        other => {
            return Err(format!(
                "uji.tool.add: the first argument must be the tool's name, got {}",
                a_type(other)
            ));
        }
    };
    let who = format!("uji.tool.add({name:?})");
    if !valid_name(&name) {
        return Err(format!(
            "{who}: a tool name is 1 to 64 letters, digits, _ or - (model APIs accept no others)"
        ));
    }
    let Value::Table(spec) = spec else {
        return Err(format!(
            "{who}: the second argument must be a table with run = function(args, ctx) ... end, got {}",
            a_type(&spec)
        ));
    };
    check_fields(&spec, &SPEC_FIELDS, &who)?;
    let field = |key: &str| spec.get::<Value>(key).map_err(lerr);
    let run = required_function(field("run")?, &who, "run", "function(args, ctx)")?;
    let policy = spec_policy(field("policy")?, &who)?;
    let path = spec_path(field("path")?, &who)?;
    let (subject, subject_fn) = spec_subject(field("subject")?, path, &who)?;
    let description = spec_description(field("description")?, &who)?;
    let parameters = spec_parameters(lua, field("parameters")?, &who)?;
    let display = spec_display(field("display")?, &who)?;
    let read_only = match field("read_only")? {
        Value::Nil => false,
        Value::Boolean(b) => b,
        other => {
            return Err(format!(
                "{who}: read_only must be true or false, got {}",
                a_type(&other)
            ));
        }
    };
    let tool_spec = ToolSpec {
        name: name.clone(),
        description,
        parameters,
        policy,
        subject: if path {
            SubjectKind::Path
        } else {
            SubjectKind::Other
        },
        display,
        edits_files: false,
        read_only,
    };
    let link = Arc::clone(&state.link);
    let id = link.next_id();
    state.tools.borrow_mut().insert(
        id,
        ToolEntry {
            name: name.clone(),
            run,
            subject: subject_fn,
        },
    );
    let tool = LuaTool {
        id,
        spec: tool_spec,
        subject,
        link,
        subject_failure: Mutex::new(None),
    };
    state
        .host
        .register_tool(tool)
        .map_err(|e| format!("{who}: {e}"))
}

// The fields of uji.tool.add's spec, each checked, its error naming the tool
// (`who`) and what the field takes.

fn spec_policy(value: Value, who: &str) -> Result<Option<DeclaredPolicy>, String> {
    Ok(match value {
        Value::Nil => None,
        Value::String(s) => match s.to_string_lossy().as_str() {
            "allow" => Some(DeclaredPolicy::Allow),
            "ask" => Some(DeclaredPolicy::Ask),
            "deny" => Some(DeclaredPolicy::Deny),
            other => {
                return Err(format!(
                    "{who}: policy must be \"allow\", \"ask\" or \"deny\", got {other:?}"
                ));
            }
        },
        other => {
            return Err(format!(
                "{who}: policy must be \"allow\", \"ask\" or \"deny\", got {}",
                a_type(&other)
            ));
        }
    })
}

fn spec_path(value: Value, who: &str) -> Result<bool, String> {
    Ok(match value {
        Value::Nil => false,
        Value::Boolean(b) => b,
        other => {
            return Err(format!(
                "{who}: path must be true or false, got {}",
                a_type(&other)
            ));
        }
    })
}

fn spec_subject(
    value: Value,
    path: bool,
    who: &str,
) -> Result<(SubjectMode, Option<Function>), String> {
    Ok(match value {
        Value::Nil if path => (SubjectMode::PathArg, None),
        Value::Nil => (SubjectMode::Name, None),
        Value::String(s) => (SubjectMode::Fixed(s.to_string_lossy()), None),
        Value::Function(f) => (SubjectMode::Function, Some(f)),
        other => {
            return Err(format!(
                "{who}: subject must be a string or a function of the arguments, got {}",
                a_type(&other)
            ));
        }
    })
}

fn spec_description(value: Value, who: &str) -> Result<String, String> {
    Ok(match value {
        Value::Nil => String::new(),
        Value::String(s) => s.to_string_lossy(),
        other => {
            return Err(format!(
                "{who}: description must be a string, got {}",
                a_type(&other)
            ));
        }
    })
}

fn spec_parameters(lua: &Lua, value: Value, who: &str) -> Result<Json, String> {
    Ok(match value {
        Value::Nil => uji_sdk::protocol::empty_object_schema(),
        value @ Value::Table(_) => match convert::to_json(lua, &value) {
            Ok(schema @ Json::Object(_)) => schema,
            Ok(_) => {
                return Err(format!(
                    "{who}: parameters must be a JSON Schema object such as {{ type = \"object\", properties = {{}} }}, not a list"
                ));
            }
            Err(e) => return Err(format!("{who}: parameters: {e}")),
        },
        other => {
            return Err(format!(
                "{who}: parameters must be a table (a JSON Schema), got {}",
                a_type(&other)
            ));
        }
    })
}

fn spec_display(value: Value, who: &str) -> Result<Display, String> {
    Ok(match value {
        Value::Nil => Display::default(),
        Value::Table(t) => {
            // `label` is the public uji's name for `verb`; `preview` and
            // `subject` are read by uji.tool.display only.
            check_fields(
                &t,
                &["verb", "label", "question"],
                &format!("{who}: display"),
            )?;
            let text = |key: &str| -> Result<Option<String>, String> {
                match t.get::<Value>(key).map_err(lerr)? {
                    Value::Nil => Ok(None),
                    Value::String(s) => Ok(Some(s.to_string_lossy())),
                    other => Err(format!(
                        "{who}: display.{key} must be a string, got {}",
                        a_type(&other)
                    )),
                }
            };
            Display {
                verb: text("verb")?.or(text("label")?),
                question: text("question")?,
            }
        }
        other => {
            return Err(format!(
                "{who}: display must be a table {{verb = ..., question = ...}}, got {}",
                a_type(&other)
            ));
        }
    })
}

fn names_param(lua: &Lua, value: &Value, api: &str) -> Result<Vec<String>, String> {
    match value {
        Value::String(s) => Ok(vec![s.to_string_lossy()]),
        Value::Table(_) => {
            let json = convert::to_json(lua, value).map_err(|e| format!("{api}: {e}"))?;
            match json {
                Json::Array(items) => items
                    .into_iter()
                    .map(|item| match item {
                        Json::String(name) => Ok(name),
                        _ => Err(format!("{api}: expected a list of tool names")),
                    })
                    .collect(),
                Json::Object(o) if o.is_empty() => Ok(Vec::new()),
                _ => Err(format!("{api}: expected a list of tool names")),
            }
        }
        other => Err(format!(
            "{api}: expected a list of tool names, got {}",
            a_type(other)
        )),
    }
}

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "tool_add",
        raw(lua, |lua, state, (name, spec): (Value, Value)| {
            tool_add(lua, state, name, spec)
        })?,
    )?;
    t.set(
        "tool_remove",
        raw(lua, |_, state, name: Value| {
            let name = string_arg(&name, "uji.tool.remove", "the tool's name")?;
            service(state, "uji.tool.remove", &ToolRemove { name })
        })?,
    )?;
    t.set(
        "tool_list",
        raw(lua, |lua, state, ()| {
            let names = service(state, "uji.tool.list", &ToolList {})?;
            string_list(lua, &names)
        })?,
    )?;
    t.set(
        "tool_disable",
        raw(lua, |lua, state, names: Value| {
            let names = names_param(lua, &names, "uji.tool.disable")?;
            service(state, "uji.tool.disable", &ToolDisable { names })
        })?,
    )?;
    t.set(
        "tool_enable",
        raw(lua, |lua, state, names: Value| {
            let names = names_param(lua, &names, "uji.tool.enable")?;
            service(state, "uji.tool.enable", &ToolEnable { names })
        })?,
    )?;
    t.set(
        "tool_policy",
        raw(lua, |lua, state, (rules, options): (Value, Value)| {
            tool_policy(lua, state, rules, options)
        })?,
    )?;
    t.set(
        "tool_confine",
        raw(lua, |_, state, enabled: Value| {
            let enabled = match enabled {
                Value::Nil => None,
                Value::Boolean(b) => Some(b),
                other => {
                    return Err(format!(
                        "uji.tool.confine: takes true, false or nothing, got {}",
                        a_type(&other)
                    ));
                }
            };
            service(state, "uji.tool.confine", &ToolConfine { enabled })
        })?,
    )?;
    t.set(
        "tool_roots",
        raw(lua, |lua, state, paths: Value| {
            tool_roots(lua, state, paths, RootKind::Tools)
        })?,
    )?;
    t.set(
        "tool_read_roots",
        raw(lua, |lua, state, paths: Value| {
            tool_roots(lua, state, paths, RootKind::ReadOnly)
        })?,
    )?;
    t.set(
        "tool_sandbox",
        raw(lua, |lua, state, settings: Value| {
            tool_sandbox(lua, state, settings)
        })?,
    )?;
    install_allow_replace(lua, t)
}

/// `uji.tool.policy(rules, options)`: the policy's problems, as a list.
fn tool_policy(
    lua: &Lua,
    state: &Rc<State>,
    rules: Value,
    options: Value,
) -> Result<Value, String> {
    const API: &str = "uji.tool.policy";
    let Value::Table(_) = rules else {
        return Err(format!(
            "{API}: rules must be a table such as {{ run_command = {{ allow = {{ \"git status\" }} }} }}, got {}",
            a_type(&rules)
        ));
    };
    let rules = convert::to_json(lua, &rules).map_err(|e| format!("{API}: {e}"))?;
    let rules = match rules {
        Json::Array(items) if items.is_empty() => json!({}),
        Json::Object(_) => rules,
        _ => {
            return Err(format!(
                "{API}: rules must map tool names to tables, not be a list"
            ));
        }
    };
    let name = match &options {
        Value::Nil => None,
        Value::Table(t) => match t.get::<Value>("name").map_err(lerr)? {
            Value::Nil => None,
            Value::String(s) => Some(s.to_string_lossy()),
            other => {
                return Err(format!(
                    "{API}: options.name must be a string, got {}",
                    a_type(&other)
                ));
            }
        },
        other => {
            return Err(format!(
                "{API}: the second argument must be a table {{name = ...}}, got {}",
                a_type(other)
            ));
        }
    };
    let answer = service(state, API, &ToolPolicy { rules, name })?;
    string_list(lua, &answer.problems)
}

/// Which directories [`tool_roots`] sets.
#[derive(Clone, Copy)]
enum RootKind {
    /// `uji.tool.roots`: every file tool.
    Tools,
    /// `uji.tool.read_roots`: `read_file` only.
    ReadOnly,
}

/// `uji.tool.roots(paths)` and `uji.tool.read_roots(paths)`: the
/// directories in force afterwards.
fn tool_roots(lua: &Lua, state: &Rc<State>, paths: Value, kind: RootKind) -> Result<Value, String> {
    let api = match kind {
        RootKind::Tools => "uji.tool.roots",
        RootKind::ReadOnly => "uji.tool.read_roots",
    };
    let paths = match &paths {
        Value::Nil => None,
        Value::String(s) => Some(vec![s.to_string_lossy()]),
        Value::Table(_) => Some(
            names_param(lua, &paths, api)
                .map_err(|_| format!("{api}: expected a list of directories"))?,
        ),
        other => {
            return Err(format!(
                "{api}: expected a list of directories or nothing, got {}",
                a_type(other)
            ));
        }
    };
    let roots = match kind {
        RootKind::Tools => service(state, api, &ToolRoots { paths })?,
        RootKind::ReadOnly => service(state, api, &ToolReadRoots { paths })?,
    };
    string_list(lua, &roots)
}

/// `uji.tool.sandbox(settings)`: the sandbox settings in force afterwards.
fn tool_sandbox(lua: &Lua, state: &Rc<State>, settings: Value) -> Result<Value, String> {
    const API: &str = "uji.tool.sandbox";
    let change = match &settings {
        Value::Nil => ToolSandbox::default(),
        Value::Table(_) => {
            let json = json_of(lua, &settings, API)?;
            serde_json::from_value(json).map_err(|e| {
                format!(
                    "{API}: expected {{ mode = \"off\" | \"read-only\" | \"workspace-write\", network = true or false, writable = {{ directories }} }}: {e}"
                )
            })?
        }
        other => {
            return Err(format!(
                "{API}: expected a table or nothing, got {}",
                a_type(other)
            ));
        }
    };
    let answer = service(state, API, &change)?;
    lua_of(lua, API, &answer)
}

/// `uji.plugins.allow_replace(names)`: the user lets native plugins replace
/// these tools; returns the tools a plugin replaced now.
fn install_allow_replace(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "plugins_allow_replace",
        raw(lua, |lua, state, names: Value| {
            const API: &str = "uji.plugins.allow_replace";
            let names = names_param(lua, &names, API)?;
            let replaced = service(state, API, &PluginsAllowReplace { names })?;
            string_list(lua, &replaced)
        })?,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn decoded_length_of_base64() {
        assert_eq!(decoded_len("aGVsbG8="), 5);
        assert_eq!(decoded_len("aGVsbG8h"), 6);
        assert_eq!(decoded_len("aGk="), 2);
        assert_eq!(decoded_len("aA=="), 1);
        assert_eq!(decoded_len(""), 0);
    }

    #[test]
    fn images_are_checked() {
        let ok = check_image(&json!({"media_type": "image/png", "data": "aGk="})).unwrap();
        assert_eq!(ok.media_type, "image/png");
        let e = check_image(&json!({"media_type": "image/bmp", "data": "aGk="})).unwrap_err();
        assert!(e.contains("image/bmp"), "{e}");
        let e = check_image(&json!({"media_type": "image/png"})).unwrap_err();
        assert!(e.contains("no data"), "{e}");
        let big = "A".repeat(MAX_IMAGE_BYTES / 3 * 4 + 8);
        let e = check_image(&json!({"media_type": "image/png", "data": big})).unwrap_err();
        assert!(e.contains("5 MB"), "{e}");
        let url = check_image(&json!({"data": "data:image/gif;base64,aGk="})).unwrap();
        assert_eq!(
            (url.media_type.as_str(), url.data.as_str()),
            ("image/gif", "aGk=")
        );
    }
}
