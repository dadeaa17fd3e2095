//! The `jobs.*` events the host, frontends (through the host) and Lua's
//! `uji.jobs` send the plugin. Each handler answers `{"ok": result}` or
//! `{"error": message}`.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use uji_sdk::Host;
use uji_sdk::protocol::HookOptions;
use uji_sdk::protocol::jobs::{
    BACKGROUND, CONFIGURE, JobInfo, LIST, MAX_LIFETIME_SECS, MAX_MAX_JOBS, STOP, STOP_ALL,
    Settings, StopRequest, WAKE_KEY,
};
use uji_sdk::services::ConfigSet;

use super::{BACKGROUND_REQUESTS, FOREGROUND};

type Handler = fn(&Host, Value) -> Result<Value, String>;

/// Registers the handlers.
pub fn install(host: &Host) -> Result<(), String> {
    let handlers: [(&str, Handler); 5] = [
        (LIST, |_, _| Ok(json!(list()))),
        (STOP, stop),
        (CONFIGURE, configure),
        (BACKGROUND, |_, _| Ok(json!(background()))),
        (STOP_ALL, |_, _| Ok(json!(super::stop_all()))),
    ];
    for (event, handler) in handlers {
        let host_for = host.clone();
        host.on(event, HookOptions::default(), move |payload| {
            Ok(match handler(&host_for, payload) {
                Ok(answer) => json!({ "ok": answer }),
                Err(error) => json!({ "error": error }),
            })
        })?;
    }
    Ok(())
}

fn list() -> Vec<JobInfo> {
    super::list().iter().map(|job| job.info()).collect()
}

fn stop(_: &Host, payload: Value) -> Result<Value, String> {
    let request: StopRequest = serde_json::from_value(payload)
        .map_err(|e| format!("expects {{\"id\": job number, \"by\": \"user\"}}: {e}"))?;
    let job = super::stop(request.id, request.by)?;
    Ok(json!(job.info()))
}

/// Asks every foreground command to move to the background; answers how
/// many were running.
fn background() -> usize {
    BACKGROUND_REQUESTS.fetch_add(1, Ordering::SeqCst);
    FOREGROUND.load(Ordering::SeqCst)
}

fn configure(host: &Host, payload: Value) -> Result<Value, String> {
    let settings: Settings = serde_json::from_value(payload)
        .map_err(|e| format!("expects {{ wake = boolean, max = number, limit = seconds }}: {e}"))?;
    if let Some(max) = settings.max
        && !(1..=MAX_MAX_JOBS).contains(&max)
    {
        return Err(format!(
            "`max` must be from 1 to {MAX_MAX_JOBS} jobs, not {max}"
        ));
    }
    if let Some(limit) = settings.limit
        && !(1..=MAX_LIFETIME_SECS).contains(&limit)
    {
        return Err(format!(
            "`limit` must be from 1 to {MAX_LIFETIME_SECS} seconds (2 hours), not {limit}"
        ));
    }
    if let Some(wake) = settings.wake {
        host.service(&ConfigSet {
            key: WAKE_KEY.to_string(),
            value: Value::Bool(wake),
        })
        .map_err(|e| e.to_string())?;
    }
    let (max, limit) = super::configure(settings.max, settings.limit);
    let wake = host.config(WAKE_KEY).and_then(|v| v.as_bool());
    Ok(json!(Settings {
        wake,
        max: Some(max),
        limit: Some(limit),
    }))
}
