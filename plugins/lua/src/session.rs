//! `uji.session.*`, `uji.quit`, `uji.provider.*` and `uji.model.*`: the
//! raw functions behind them, each one typed host service.

use mlua::{Function, Lua, Table, Value};
use serde_json::{Value as Json, json};
use uji_sdk::protocol::ApprovalMode;
use uji_sdk::services::{
    ModelCurrent, ModelUse, Provider, ProviderAdd, ProviderList, Quit, Service, SessionCompact,
    SessionInfoRequest, SessionInterrupt, SessionMode, SessionSetTitle, SessionSubmit, StatusSet,
};

use crate::api::{a_type, json_of, lua_of, raw, service, string_arg};

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
    t.set(
        "config_set",
        raw(lua, |lua, state, (key, value): (Value, Value)| {
            const API: &str = "uji.config.set";
            let key = string_arg(&key, API, "the key")?;
            let value = crate::convert::to_json(lua, &value).map_err(|e| format!("{API}: {e}"))?;
            service(state, API, &uji_sdk::services::ConfigSet { key, value })
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

fn provider_spec(lua: &Lua, spec: &Value) -> Result<Provider, String> {
    const API: &str = "uji.provider.add";
    let Value::Table(_) = spec else {
        return Err(format!(
            "{API}: expected a table {{id, wire, base_url, models}}, got {}",
            a_type(spec)
        ));
    };
    let mut json = json_of(lua, spec, API)?;
    let Some(map) = json.as_object_mut() else {
        return Err(format!(
            "{API}: expected a table {{id, wire, base_url, models}}"
        ));
    };
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
    serde_json::from_value(json).map_err(|e| format!("{API}: {e}"))
}
