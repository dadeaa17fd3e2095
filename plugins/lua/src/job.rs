//! `uji.job.start`'s natives: a process run by the tools plugin's `proc.*`
//! services (the same sandbox and key-free environment as `run_command`),
//! read by a thread of its own that hands each batch of lines to the Lua
//! thread, where surface.lua's dispatcher calls the job's callbacks.

use std::collections::BTreeMap;
use std::sync::Arc;

use mlua::{Lua, Table, Value};
use uji_sdk::protocol::procs::{
    ProcClose, ProcCommand, ProcOutput, ProcRead, ProcStart, ProcStop, ProcWrite,
};

use crate::api::{a_type, lerr, raw, service};
use crate::runtime::State;

/// Registry name of surface.lua's job dispatcher.
pub const DISPATCH: &str = "uji.job.dispatch";

/// How long one read waits for output before asking again.
const READ_WAIT_MS: u64 = 500;

fn command_of(lua: &Lua, value: &Value) -> Result<ProcCommand, String> {
    match value {
        Value::String(s) if !s.to_string_lossy().trim().is_empty() => {
            Ok(ProcCommand::Shell(s.to_string_lossy()))
        }
        Value::Table(t) => {
            let mut argv = Vec::new();
            for item in t.sequence_values::<Value>() {
                let item = item.map_err(lerr)?;
                let text = match item {
                    Value::String(s) => s.to_string_lossy(),
                    other => lua
                        .globals()
                        .get::<mlua::Function>("tostring")
                        .and_then(|f| f.call::<String>(other))
                        .map_err(lerr)?,
                };
                argv.push(text);
            }
            if argv.is_empty() {
                return Err("uji.job.start: cmd must not be empty".to_string());
            }
            Ok(ProcCommand::Argv(argv))
        }
        _ => Err(format!(
            "uji.job.start: cmd must be a string or a list of strings, got {}",
            a_type(value)
        )),
    }
}

fn env_of(value: &Value) -> Result<BTreeMap<String, String>, String> {
    let mut env = BTreeMap::new();
    match value {
        Value::Nil => {}
        Value::Table(t) => {
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair.map_err(lerr)?;
                match (k, v) {
                    (Value::String(k), Value::String(v)) => {
                        env.insert(k.to_string_lossy(), v.to_string_lossy());
                    }
                    _ => {
                        return Err(
                            "uji.job.start: env must be a table of names to strings".to_string()
                        );
                    }
                }
            }
        }
        other => {
            return Err(format!(
                "uji.job.start: env must be a table, got {}",
                a_type(other)
            ));
        }
    }
    Ok(env)
}

/// `job_start(cmd, cwd, env, timeout)` → the process id, or `nil` and why
/// it could not start (a wrong argument is an error instead).
fn start(
    lua: &Lua,
    state: &State,
    (cmd, cwd, env, timeout): (Value, Option<String>, Value, Option<f64>),
) -> Result<(Option<u64>, Option<String>), String> {
    let request = ProcStart {
        command: command_of(lua, &cmd)?,
        cwd,
        env: env_of(&env)?,
        timeout_ms: match timeout {
            Some(t) if t.is_finite() && t >= 0.0 => Some((t * 1000.0) as u64),
            Some(t) => return Err(format!("uji.job.start: timeout must be seconds, got {t}")),
            None => None,
        },
    };
    let started = match state.host.service(&request) {
        Ok(started) => started,
        Err(e) => return Ok((None, Some(e.message().to_string()))),
    };
    read_in_background(state, started.id)?;
    Ok((Some(started.id), None))
}

/// A thread reading process `id` until it exits, each batch handed to the
/// Lua thread in order.
fn read_in_background(state: &State, id: u64) -> Result<(), String> {
    let host = state.host.clone();
    let link = Arc::clone(&state.link);
    std::thread::Builder::new()
        .name(format!("uji-lua-job-{id}"))
        .spawn(move || {
            loop {
                let request = ProcRead {
                    id,
                    wait_ms: READ_WAIT_MS,
                };
                let output = match host.service(&request) {
                    Ok(output) => output,
                    Err(e) => ProcOutput {
                        stdout: Vec::new(),
                        stderr: vec![format!("job: {}", e.message())],
                        exit: Some(uji_sdk::protocol::procs::ProcExit {
                            code: -1,
                            reason: None,
                            signal: None,
                        }),
                    },
                };
                let ended = output.exit.is_some();
                let news = ended || !output.stdout.is_empty() || !output.stderr.is_empty();
                if news && !link.post(Box::new(move |state| dispatch(state, id, output))) {
                    return;
                }
                if ended {
                    return;
                }
            }
        })
        .map(drop)
        .map_err(|e| format!("uji.job.start: cannot start its reader thread: {e}"))
}

/// Hands one batch to surface.lua's dispatcher, as a task (so a callback
/// may wait).
fn dispatch(state: &std::rc::Rc<State>, id: u64, output: ProcOutput) {
    let lua = &state.lua;
    let call = || -> mlua::Result<()> {
        let dispatcher: mlua::Function = lua.named_registry_value(DISPATCH)?;
        let stdout = lua.create_sequence_from(output.stdout)?;
        let stderr = lua.create_sequence_from(output.stderr)?;
        let (code, reason) = match output.exit {
            Some(exit) => (Some(exit.code), exit.reason),
            None => (None, None),
        };
        state
            .call_in_task(&dispatcher, None, (id, stdout, stderr, code, reason))
            .map(drop)
    };
    if let Err(e) = call() {
        state.report("a uji.job.start callback", &e);
    }
}

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "job_start",
        raw(lua, |lua, state, args| start(lua, state, args))?,
    )?;
    t.set(
        "job_send",
        raw(lua, |_, state, (id, data): (u64, String)| {
            service(state, "job.send", &ProcWrite { id, data })
        })?,
    )?;
    t.set(
        "job_close",
        raw(lua, |_, state, id: u64| {
            service(state, "job.close", &ProcClose { id })
        })?,
    )?;
    t.set(
        "job_stop",
        raw(lua, |_, state, id: u64| {
            service(state, "job.stop", &ProcStop { id })
        })?,
    )?;
    Ok(())
}
