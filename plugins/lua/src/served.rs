//! `uji.mcp.*` and `uji.jobs.*`: host services native plugins serve (the
//! MCP plugin, the tools plugin). Each raw function sends one typed
//! request; when the plugin is not loaded the error says which one.

use mlua::{Lua, Table, Value};
use uji_sdk::protocol::jobs::{JobsList, Settings, StopRequest, StoppedBy};
use uji_sdk::protocol::mcp::{McpAdd, McpList, McpRemove, McpTrustProject};
use uji_sdk::services::{Service, ServiceError, decode_params};

use crate::api::{json_of, lua_of, raw, string_arg};
use crate::runtime::State;

const MCP_MISSING: &str = "uji.mcp: the MCP plugin (libuji_plugin_mcp) is not loaded";
const JOBS_MISSING: &str = "uji.jobs: the tools plugin (libuji_plugin_tools) is not loaded";

/// Calls `request`'s service for `api`; `missing` is the error when no
/// plugin serves it.
fn served<S: Service>(
    lua: &Lua,
    state: &State,
    api: &str,
    missing: &str,
    request: &S,
) -> Result<Value, String> {
    match state.host.service(request) {
        Ok(answer) => lua_of(lua, api, &answer),
        Err(ServiceError::Unavailable { .. }) => Err(missing.to_string()),
        Err(e) => Err(format!("{api}: {}", e.message())),
    }
}

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    install_mcp(lua, t)?;
    install_jobs(lua, t)
}

fn install_mcp(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "mcp_add",
        raw(lua, |lua, state, (name, spec): (Value, Value)| {
            const API: &str = "uji.mcp.add";
            let name = string_arg(&name, API, "the server's name")?;
            let spec = json_of(lua, &spec, API)?;
            served(lua, state, API, MCP_MISSING, &McpAdd { name, spec })
        })?,
    )?;
    t.set(
        "mcp_remove",
        raw(lua, |lua, state, name: Value| {
            const API: &str = "uji.mcp.remove";
            let name = string_arg(&name, API, "the server's name")?;
            served(lua, state, API, MCP_MISSING, &McpRemove { name })
        })?,
    )?;
    t.set(
        "mcp_list",
        raw(lua, |lua, state, wait_ms: u64| {
            let request = McpList {
                start: false,
                wait_ms: Some(wait_ms),
            };
            served(lua, state, "uji.mcp.list", MCP_MISSING, &request)
        })?,
    )?;
    t.set(
        "mcp_trust_project",
        raw(lua, |lua, state, ()| {
            let api = "uji.mcp.trust_project";
            served(lua, state, api, MCP_MISSING, &McpTrustProject {})
        })?,
    )
}

fn install_jobs(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "jobs_list",
        raw(lua, |lua, state, ()| {
            served(lua, state, "uji.jobs.list", JOBS_MISSING, &JobsList {})
        })?,
    )?;
    t.set(
        "jobs_stop",
        raw(lua, |lua, state, id: u64| {
            let request = StopRequest {
                id,
                by: StoppedBy::User,
            };
            served(lua, state, "uji.jobs.stop", JOBS_MISSING, &request)
        })?,
    )?;
    t.set(
        "jobs_configure",
        raw(lua, |lua, state, settings: Value| {
            const API: &str = "uji.jobs.configure";
            let settings = json_of(lua, &settings, API)?;
            let settings =
                decode_params::<Settings>(settings).map_err(|e| format!("{API}: {e}"))?;
            served(lua, state, API, JOBS_MISSING, &settings)
        })?,
    )
}
