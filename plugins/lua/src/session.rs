//! `uji.session.*`, `uji.quit`, `uji.provider.*` and `uji.model.*`: the
//! raw functions behind them, each one typed host service.

use mlua::{Function, Lua, Table, Value};
use serde_json::{Value as Json, json};
use uji_sdk::protocol::ApprovalMode;
use uji_sdk::services::{
    CheckpointList, CheckpointRestore, ModelCurrent, ModelUse, Provider, ProviderAdd, ProviderList,
    Quit, Service, SessionCompact, SessionFactsRequest, SessionInfoRequest, SessionInterrupt,
    SessionMessagesRequest, SessionMode, SessionReload, SessionSetTitle, SessionSubmit, StatusSet,
};

use crate::api::{a_type, json_of, lerr, lua_of, raw, service, string_arg};

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    install_session(lua, t)?;
    install_models(lua, t)
}

/// `uji.status.add(name, text)` / `uji.status.remove(name)`: an item of
/// the screen's status line. Outside a session there is no line to show it.
fn set_status(state: &crate::runtime::State, api: &str, item: StatusSet) -> Result<(), String> {
    match state.host.service(&item) {
        Ok(()) | Err(uji_sdk::services::ServiceError::Unavailable { .. }) => Ok(()),
        Err(e) => Err(format!("{api}: {}", e.message())),
    }
}

fn install_status(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "status_add",
        raw(lua, |_, state, (name, text): (Value, Value)| {
            const API: &str = "uji.status.add";
            let name = string_arg(&name, API, "the name")?;
            let text = string_arg(&text, API, "the text")?;
            set_status(
                state,
                API,
                StatusSet {
                    name,
                    text: Some(text),
                },
            )
        })?,
    )?;
    t.set(
        "status_remove",
        raw(lua, |_, state, name: Value| {
            const API: &str = "uji.status.remove";
            let name = string_arg(&name, API, "the name")?;
            set_status(state, API, StatusSet { name, text: None })
        })?,
    )
}

fn install_session(lua: &Lua, t: &Table) -> mlua::Result<()> {
    install_status(lua, t)?;
    t.set(
        "session_submit",
        raw(lua, |_, state, text: Value| {
            let text = string_arg(&text, "uji.session.submit", "the text")?;
            service(state, "uji.session.submit", &SessionSubmit { text })
        })?,
    )?;
    t.set(
        "session_info",
        ask(lua, "uji.session.info", SessionInfoRequest {})?,
    )?;
    t.set(
        "session_set_title",
        raw(lua, |_, state, title: Value| {
            const API: &str = "uji.session.set_title";
            let title = string_arg(&title, API, "the title")?;
            service(state, API, &SessionSetTitle { title })
        })?,
    )?;
    t.set(
        "session_mode",
        raw(lua, |_, state, ()| {
            let mode = service(state, "uji.session.mode", &SessionMode { mode: None })?;
            Ok(mode.as_str().to_string())
        })?,
    )?;
    t.set(
        "session_set_mode",
        raw(lua, |_, state, name: Value| {
            const API: &str = "uji.session.set_mode";
            let name = string_arg(&name, API, "the mode")?;
            let mode = mode_named(&name).ok_or_else(|| {
                format!("{API}: {name:?} is not an approval mode; use ask, accept_edits or plan")
            })?;
            let mode = service(state, API, &SessionMode { mode: Some(mode) })?;
            Ok(mode.as_str().to_string())
        })?,
    )?;
    t.set(
        "session_compact",
        ask(lua, "uji.session.compact", SessionCompact {})?,
    )?;
    t.set(
        "session_interrupt",
        ask(lua, "uji.session.interrupt", SessionInterrupt {})?,
    )?;
    t.set("quit", ask(lua, "uji.quit", Quit {})?)?;
    t.set("session_reload", ask(lua, "uji.reload", SessionReload {})?)?;
    t.set(
        "session_facts",
        ask(lua, "uji.session", SessionFactsRequest {})?,
    )?;
    t.set(
        "session_messages",
        ask(lua, "uji.session.messages", SessionMessagesRequest {})?,
    )?;
    t.set(
        "checkpoint_list",
        ask(lua, "uji.checkpoint.list", CheckpointList {})?,
    )?;
    t.set(
        "checkpoint_restore",
        raw(lua, |lua, state, spec: Value| {
            const API: &str = "uji.checkpoint.restore";
            let json = crate::convert::to_json(lua, &spec).map_err(|e| format!("{API}: {e}"))?;
            let request: CheckpointRestore = serde_json::from_value(json).map_err(|e| {
                format!(
                    "{API} takes {{ undo = true }}, {{ redo = true }}, {{ turn = N }} or {{ rewind = N }}, with dry_run and overwrite: {e}"
                )
            })?;
            let answer = service(state, API, &request)?;
            lua_of(lua, API, &answer)
        })?,
    )?;
    t.set(
        "config_set",
        raw(lua, |lua, state, (key, value): (Value, Value)| {
            const API: &str = "uji.config.set";
            let key = string_arg(&key, API, "the key")?;
            let value = crate::convert::to_json(lua, &value).map_err(|e| format!("{API}: {e}"))?;
            service(state, API, &uji_sdk::services::ConfigSet { key, value })
        })?,
    )?;
    // Checked field by field in prelude.lua (uji.web.search); core checks
    // the whole and keeps it, since it decides where a key may go.
    t.set(
        "web_search",
        raw(lua, |lua, state, settings: Value| {
            const API: &str = "uji.web.search";
            let json =
                crate::convert::to_json(lua, &settings).map_err(|e| format!("{API}: {e}"))?;
            let request: uji_sdk::protocol::web::WebSearch =
                serde_json::from_value(json).map_err(|e| {
                    format!("{API} takes {{ backend = \"brave\", url = \"https://…\" }}: {e}")
                })?;
            service(state, API, &request)
        })?,
    )?;
    Ok(())
}

fn install_models(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "provider_add",
        raw(lua, |lua, state, spec: Value| {
            let provider = provider_spec(lua, &spec)?;
            service(state, "uji.provider.add", &ProviderAdd(provider))
        })?,
    )?;
    t.set(
        "provider_list",
        ask(lua, "uji.provider.list", ProviderList {})?,
    )?;
    t.set(
        "model_use",
        raw(lua, |lua, state, spec: Value| {
            const API: &str = "uji.model.use";
            // A bare provider id picks its default model; core checks it.
            let choice = service(state, API, &model_choice(&spec)?)?;
            lua_of(lua, API, &choice)
        })?,
    )?;
    t.set(
        "model_current",
        ask(lua, "uji.model.current", ModelCurrent {})?,
    )?;
    Ok(())
}

/// The approval mode `name` names.
fn mode_named(name: &str) -> Option<ApprovalMode> {
    ApprovalMode::ALL.into_iter().find(|m| m.as_str() == name)
}

/// A raw function without arguments that sends `request` for `api` and
/// returns the answer as a Lua value (`nil` for none).
fn ask<S: Service + 'static>(lua: &Lua, api: &'static str, request: S) -> mlua::Result<Function> {
    raw(lua, move |lua, state, ()| {
        let answer = service(state, api, &request)?;
        lua_of(lua, api, &answer)
    })
}

/// `"provider/model"`, `"provider"` or `{provider = ..., model = ...}`.
fn model_choice(spec: &Value) -> Result<ModelUse, String> {
    let model = match spec {
        Value::String(s) => s.to_string_lossy(),
        Value::Table(t) => {
            let provider: Option<String> = t.get("provider").ok();
            let model: Option<String> = t.get("model").ok();
            match (provider, model) {
                (Some(p), Some(m)) => format!("{p}/{m}"),
                (Some(p), None) => p,
                _ => {
                    return Err("uji.model.use: give \"provider/model\", \"provider\" or {provider = ..., model = ...}".to_string());
                }
            }
        }
        other => {
            return Err(format!(
                "uji.model.use: expected \"provider/model\", got {}",
                a_type(other)
            ));
        }
    };
    Ok(ModelUse::new(model))
}

/// Every field `uji.provider.add` reads: uji's own and the public uji's
/// (`api`, `auth_env`, `context_window`), so a misspelt one is an error.
const PROVIDER_FIELDS: &[&str] = &[
    "id",
    "name",
    "wire",
    "api",
    "base_url",
    "base_url_env",
    "key_env",
    "key_env_alt",
    "auth_env",
    "key_check",
    "models",
    "default_model",
    "idle_timeout",
    "context_window",
    "loop",
    "oauth",
];

/// Every field of a model entry; `context` and `output` are the public
/// uji's names for `context_window` and `max_output`.
const MODEL_FIELDS: &[&str] = &[
    "id",
    "context_window",
    "context",
    "max_output",
    "output",
    "images",
    "reasoning",
    "cache",
    "efforts",
    "price",
];

/// The wire an `api` names: a wire's name, the public uji's short names,
/// or a table `uji.api.*()` made (`{wire = ...}`).
fn wire_of_api(api: &Value) -> Result<String, String> {
    let name = match api {
        Value::String(s) => s.to_string_lossy(),
        Value::Table(t) => match t.get::<Value>("wire").map_err(lerr)? {
            Value::String(s) => s.to_string_lossy(),
            _ => {
                return Err("uji.provider.add: api must be a wire's name (\"openai-chat\", \"anthropic\", \"gemini\", \"openai-responses\"), uji.api.openai() and the like, or an object with a stream method".to_string());
            }
        },
        other => {
            return Err(format!(
                "uji.provider.add: api must be a wire's name or uji.api.openai() and the like, got {}",
                a_type(other)
            ));
        }
    };
    Ok(match name.as_str() {
        "openai" | "chat" | "openai_chat" => "openai-chat".to_string(),
        "responses" | "openai_responses" => "openai-responses".to_string(),
        _ => name,
    })
}

/// Checks the fields of the provider table and of each model table, and
/// refuses what this uji cannot do rather than dropping it.
fn check_provider_table(table: &mlua::Table) -> Result<(), String> {
    const API: &str = "uji.provider.add";
    crate::api::check_fields(table, PROVIDER_FIELDS, API)?;
    for field in ["loop", "oauth"] {
        if !table.get::<Value>(field).map_err(lerr)?.is_nil() {
            return Err(format!(
                "{API}: {field} is not available in this uji (a provider here is reached through a wire: give api or wire)"
            ));
        }
    }
    if let Value::Table(models) = table.get::<Value>("models").map_err(lerr)? {
        for (i, model) in models.sequence_values::<Value>().enumerate() {
            if let Value::Table(model) = model.map_err(lerr)? {
                crate::api::check_fields(
                    &model,
                    MODEL_FIELDS,
                    &format!("{API}: models[{}]", i + 1),
                )?;
            }
        }
    }
    Ok(())
}

/// The public uji's names, rewritten to uji's: `api` → `wire`,
/// `auth_env` → `key_env` (+ `key_env_alt`), a model's `context` and
/// `output`, and the provider's `context_window` as every model's default.
fn public_names(
    map: &mut serde_json::Map<String, Json>,
    api: Option<String>,
) -> Result<(), String> {
    const API: &str = "uji.provider.add";
    if let Some(wire) = api {
        map.insert("wire".to_string(), Json::String(wire));
    }
    match map.remove("auth_env") {
        None => {}
        Some(Json::String(name)) => {
            map.insert("key_env".to_string(), Json::String(name));
        }
        Some(Json::Array(names)) if names.iter().all(Json::is_string) => {
            let mut names = names.into_iter();
            if let Some(first) = names.next() {
                map.insert("key_env".to_string(), first);
                map.insert("key_env_alt".to_string(), Json::Array(names.collect()));
            }
        }
        Some(_) => {
            return Err(format!(
                "{API}: auth_env must be a list of environment variable names, e.g. {{ \"MY_API_KEY\" }}"
            ));
        }
    }
    let default_window = map.remove("context_window");
    if let Some(window) = &default_window
        && !window.is_u64()
    {
        return Err(format!("{API}: context_window must be a number of tokens"));
    }
    if let Some(Json::Array(models)) = map.get_mut("models") {
        for model in models.iter_mut().filter_map(Json::as_object_mut) {
            for (public, ours) in [("context", "context_window"), ("output", "max_output")] {
                if let Some(value) = model.remove(public) {
                    model.insert(ours.to_string(), value);
                }
            }
            if let Some(window) = &default_window {
                model
                    .entry("context_window")
                    .or_insert_with(|| window.clone());
            }
            check_efforts(model)?;
            model.remove("cache");
        }
    }
    Ok(())
}

/// A model's `efforts` must name efforts uji knows; uji offers every
/// effort for a reasoning model, so the list itself is not kept.
fn check_efforts(model: &mut serde_json::Map<String, Json>) -> Result<(), String> {
    const EFFORTS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];
    let Some(efforts) = model.remove("efforts") else {
        return Ok(());
    };
    let known = efforts.as_array().is_some_and(|list| {
        list.iter()
            .all(|e| e.as_str().is_some_and(|e| EFFORTS.contains(&e)))
    });
    if !known {
        return Err(format!(
            "uji.provider.add: efforts must be a list of {}",
            EFFORTS.join(", ")
        ));
    }
    model.insert("reasoning".to_string(), Json::Bool(true));
    Ok(())
}

fn provider_spec(lua: &Lua, spec: &Value) -> Result<Provider, String> {
    const API: &str = "uji.provider.add";
    let Value::Table(table) = spec else {
        return Err(format!(
            "{API}: expected a table {{id, wire, base_url, models}}, got {}",
            a_type(spec)
        ));
    };
    check_provider_table(table)?;
    let api = match table.get::<Value>("api").map_err(lerr)? {
        Value::Nil => None,
        api => Some(wire_of_api(&api)?),
    };
    let mut json = json_of(lua, spec, API)?;
    let Some(map) = json.as_object_mut() else {
        return Err(format!(
            "{API}: expected a table {{id, wire, base_url, models}}"
        ));
    };
    map.remove("api");
    if !map.get("id").is_some_and(Json::is_string) {
        return Err(format!("{API}: id must be a string"));
    }
    // Left out, wire and base_url keep a shipped provider's (core refuses
    // a new provider without a wire).
    for field in ["wire", "base_url", "name"] {
        if map.get(field).is_some_and(|v| !v.is_string()) {
            return Err(format!("{API}: {field} must be a string"));
        }
    }
    if let Some(key_env) = map.get("key_env")
        && !key_env.is_string()
    {
        return Err(format!(
            "{API}: key_env must be the name of an environment variable"
        ));
    }
    let models = match map.remove("models") {
        None => Vec::new(),
        Some(Json::Array(items)) => items,
        Some(Json::Object(o)) if o.is_empty() => Vec::new(),
        Some(_) => return Err(format!("{API}: models must be a list")),
    };
    let mut normalized = Vec::with_capacity(models.len());
    for (i, model) in models.into_iter().enumerate() {
        match model {
            Json::String(id) => normalized.push(json!({"id": id})),
            Json::Object(o) if o.get("id").is_some_and(Json::is_string) => {
                normalized.push(Json::Object(o));
            }
            _ => {
                return Err(format!(
                    "{API}: models[{}] must be a model id or a table with an id",
                    i + 1
                ));
            }
        }
    }
    map.insert("models".to_string(), Json::Array(normalized));
    public_names(map, api)?;
    serde_json::from_value(json).map_err(|e| format!("{API}: {e}"))
}
