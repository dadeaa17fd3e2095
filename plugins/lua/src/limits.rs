//! The bounds of the Lua state: how long loading the configuration may run
//! and how much memory Lua may hold.
//!
//! Loading (init.lua, each `plugin/*.lua`, the shipped defaults) runs with a
//! deadline of [`LOAD_LIMIT`]: the instruction-count hook of
//! [`crate::interrupt`] sees it pass and raises an error at the running
//! line, so `while true do end` or endless tail recursion in init.lua ends
//! every uji command with `init.lua:LINE: …` instead of hanging it. Once it
//! has passed, `pcall`, `xpcall` and `coroutine.resume` pass that error on
//! instead of catching it: a loop around a `pcall` cannot outlive it.
//!
//! Memory: mlua's allocator (which LuaJIT uses here) refuses allocations
//! past the limit, [`DEFAULT_MEMORY_MIB`] or `UJI_LUA_MEMORY` (MiB), read
//! before any Lua runs. LuaJIT's `string.rep` takes its count as a 32-bit
//! integer and returns `""` for a count of 2^31 or more; it is wrapped to
//! raise an error when the result would pass the limit.

use std::time::{Duration, Instant};

use mlua::Lua;

use crate::runtime::current;

/// How long loading one configuration file may run.
pub const LOAD_LIMIT: Duration = Duration::from_secs(5);

/// Lua's memory limit unless `UJI_LUA_MEMORY` says otherwise.
pub const DEFAULT_MEMORY_MIB: usize = 256;

/// The variable that sets Lua's memory limit, in MiB.
pub const MEMORY_VAR: &str = "UJI_LUA_MEMORY";

/// The memory limit in bytes, and what to tell the user when the variable
/// holds no usable number.
pub fn memory_limit(var: Option<String>) -> (usize, Option<String>) {
    let default = DEFAULT_MEMORY_MIB << 20;
    let Some(text) = var else {
        return (default, None);
    };
    match text.trim().parse::<usize>() {
        Ok(mib) if (16..=1 << 20).contains(&mib) => (mib << 20, None),
        _ => (
            default,
            Some(format!(
                "{MEMORY_VAR}={text:?} is not a number of MiB from 16 to 1048576; Lua's memory limit stays {DEFAULT_MEMORY_MIB} MiB"
            )),
        ),
    }
}

const GUARDS: &str = r#"
local limit, stopped = ...
local rep, floor = string.rep, math.floor
function string.rep(s, n, sep)
  if (type(s) == "string" or type(s) == "number") and type(n) == "number" and n >= 1 then
    n = floor(n)
    local size = #tostring(s) * n
    if sep ~= nil and (type(sep) == "string" or type(sep) == "number") then
      size = size + #tostring(sep) * (n - 1)
    end
    if size > limit or (size > 0 and n >= 2 ^ 31) then
      error(string.format(
        "string.rep: the result would be %.0f bytes, over Lua's memory limit of %d MiB (UJI_LUA_MEMORY sets it)",
        size, limit / 2 ^ 20), 2)
    end
  end
  return rep(s, n, sep)
end

local raw_pcall, raw_xpcall, raw_resume = pcall, xpcall, coroutine.resume
local function pass(ok, ...)
  if not ok and stopped() then
    error((...), 0)
  end
  return ok, ...
end
function pcall(...)
  return pass(raw_pcall(...))
end
function xpcall(...)
  return pass(raw_xpcall(...))
end
function coroutine.resume(...)
  return pass(raw_resume(...))
end
"#;

/// Sets the memory limit and the guards above; before any other Lua runs.
pub fn install(lua: &Lua, memory: usize) -> mlua::Result<()> {
    lua.set_memory_limit(memory)?;
    let stopped = lua.create_function(|_, ()| Ok(current().is_some_and(|s| s.load_overdue())))?;
    lua.load(GUARDS)
        .set_name("=[uji]/limits")
        .call::<()>((memory, stopped))
}

/// The error the hook raises when loading runs past its deadline, at
/// `location` (`file:line`) when known.
pub fn overdue(location: Option<String>) -> mlua::Error {
    let at = location.map(|l| format!("{l}: ")).unwrap_or_default();
    mlua::Error::runtime(format!(
        "{at}stopped after running for {} s while uji loaded its configuration (an endless loop or recursion?)",
        LOAD_LIMIT.as_secs()
    ))
}

/// Runs `f` (loading one file) with the loading deadline set.
pub fn while_loading<T>(state: &crate::runtime::State, f: impl FnOnce() -> T) -> T {
    state.load_until.set(Some(Instant::now() + LOAD_LIMIT));
    let result = f();
    state.load_until.set(None);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_limit_comes_from_the_variable_or_the_default() {
        assert_eq!(memory_limit(None), (256 << 20, None));
        assert_eq!(memory_limit(Some("64".into())), (64 << 20, None));
        let (limit, notice) = memory_limit(Some("lots".into()));
        assert_eq!(limit, 256 << 20);
        assert!(
            notice
                .unwrap()
                .contains("UJI_LUA_MEMORY=\"lots\" is not a number")
        );
        assert!(memory_limit(Some("0".into())).1.is_some());
    }
}
