//! Stopping Lua code that runs away (`while true do end` in a tool).
//!
//! An interrupt reaches the plugin as a canceller called on some other
//! thread, while the Lua thread may be stuck in the very code to stop, so
//! the canceller cannot queue a job and wait. It marks the call's token in
//! [`Interrupts`]; an instruction-count hook on the Lua thread sees the mark
//! and raises an error in the code running for that call.
//!
//! LuaJIT runs no hooks inside JIT-compiled traces (a compiled
//! `while true do end` never comes back to the interpreter), and with the
//! JIT on a count hook does not keep loops from being compiled. So the JIT
//! is switched off before any user code runs and `jit.on` raises an error
//! saying why. uji's Lua is configuration and glue, where the interpreter
//! is fast enough; being able to stop it matters more.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use mlua::{HookTriggers, Lua, VmState};
use parking_lot::Mutex;

use crate::runtime::current;

/// Instructions between two looks at [`Interrupts`]: a few tens of
/// microseconds of interpreted Lua, so a stop is quick and the hook's own
/// cost stays far below a percent.
const CHECK_EVERY: u32 = 10_000;

/// What the hook raises in interrupted code.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// The calls (and wire streams) whose Lua code must stop, by token. Shared
/// between the cancellers (any thread) and the hook (the Lua thread).
#[derive(Default)]
pub struct Interrupts {
    /// Whether any token is marked: the hook's cheap first look.
    pending: AtomicBool,
    marked: Mutex<HashSet<u64>>,
}

impl Interrupts {
    /// Marks `token`: its Lua code stops at the hook's next look.
    pub fn request(&self, token: u64) {
        let mut marked = self.marked.lock();
        marked.insert(token);
        self.pending.store(true, Ordering::SeqCst);
    }

    pub fn is_requested(&self, token: u64) -> bool {
        self.pending.load(Ordering::SeqCst) && self.marked.lock().contains(&token)
    }

    /// Forgets `token` once its call has been ended.
    pub fn clear(&self, token: u64) {
        let mut marked = self.marked.lock();
        marked.remove(&token);
        self.pending.store(!marked.is_empty(), Ordering::SeqCst);
    }

    fn any_requested(&self, tokens: &[u64]) -> bool {
        self.pending.load(Ordering::SeqCst) && {
            let marked = self.marked.lock();
            tokens.iter().any(|t| marked.contains(t))
        }
    }
}

/// Whether `err` is (or wraps) the hook's [`Interrupted`].
pub fn is_interrupted(err: &mlua::Error) -> bool {
    match err {
        mlua::Error::ExternalError(e) => e.downcast_ref::<Interrupted>().is_some(),
        mlua::Error::CallbackError { cause, .. } => is_interrupted(cause),
        mlua::Error::WithContext { cause, .. } => is_interrupted(cause),
        _ => false,
    }
}

const JIT_OFF: &str = r#"
if jit then
  jit.off()
  jit.on = function()
    error("jit.on: uji keeps LuaJIT's compiler off, because compiled loops cannot be interrupted", 2)
  end
end
"#;

/// Switches the JIT off and sets the count hook; before any other Lua runs.
pub fn install(lua: &Lua) -> mlua::Result<()> {
    lua.load(JIT_OFF).set_name("=[uji]/interrupt").exec()?;
    lua.set_global_hook(
        HookTriggers::new().every_nth_instruction(CHECK_EVERY),
        |lua, _| {
            let Some(state) = current() else {
                return Ok(VmState::Continue);
            };
            if state.load_overdue() {
                return Err(crate::limits::overdue(user_line(lua)));
            }
            let running = state.running.borrow();
            if state.link.interrupts.any_requested(&running) {
                return Err(mlua::Error::external(Interrupted));
            }
            Ok(VmState::Continue)
        },
    )
}

/// `file:line` of the innermost Lua function of a file (not uji's own
/// wrappers) on the stack.
fn user_line(lua: &Lua) -> Option<String> {
    (0..64).find_map(|level| {
        lua.inspect_stack(level, |debug| {
            let source = debug.source();
            let file = source.source.as_deref()?.strip_prefix('@')?.to_string();
            Some(format!("{file}:{}", debug.current_line()?))
        })?
    })
}
