//! The `jobs.*` host services the plugin serves (ABI 1.1): core (for
//! frontends), Lua's `uji.jobs` and any plugin call them with the request
//! types of `uji_protocol::jobs`.

use serde_json::Value;
use uji_sdk::Host;
use uji_sdk::protocol::jobs::{
    JobInfo, JobsBackground, JobsList, JobsStopAll, MAX_LIFETIME_SECS, MAX_MAX_JOBS, Settings,
    StopRequest, WAKE_KEY,
};
use uji_sdk::services::ConfigSet;

use super::Jobs;

/// Serves the jobs of `jobs`.
pub fn install(host: &Host, jobs: &Jobs) -> Result<(), String> {
    let table = jobs.clone();
    host.serve(move |_: JobsList| Ok(list(&table)))?;
    let table = jobs.clone();
    host.serve(move |request: StopRequest| {
        table.stop(request.id, request.by).map(|job| job.info())
    })?;
    let table = jobs.clone();
    let config = host.clone();
    host.serve(move |settings: Settings| configure(&config, &table, settings))?;
    let table = jobs.clone();
    host.serve(move |_: JobsBackground| Ok(table.ask_background()))?;
    let table = jobs.clone();
    host.serve(move |_: JobsStopAll| Ok(table.stop_all() as u64))?;
    Ok(())
}

fn list(jobs: &Jobs) -> Vec<JobInfo> {
    jobs.list().iter().map(|job| job.info()).collect()
}

fn configure(host: &Host, jobs: &Jobs, settings: Settings) -> Result<Settings, String> {
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
    let (max, limit) = jobs.configure(settings.max, settings.limit);
    let wake = host.config(WAKE_KEY).and_then(|v| v.as_bool());
    Ok(Settings {
        wake,
        max: Some(max),
        limit: Some(limit),
    })
}
