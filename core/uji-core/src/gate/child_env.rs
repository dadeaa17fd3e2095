//! What no child process inherits (`env.child`): every provider key
//! variable (the catalogue's and those `uji.provider.add` named), uji's own
//! `UJI_*` variables, and the names init.lua adds with `child_env.withhold`;
//! less the names init.lua passes through with `child_env.pass`. Commands,
//! background jobs, `!cmd` and MCP servers all start with this applied
//! (plugins through `uji_sdk::child`, `!cmd` here).

use serde::Deserialize;
use serde_json::Value;
use uji_host::Registry;
use uji_protocol::frontend::NoticeLevel;
use uji_protocol::services::{ChildEnv, ChildEnvRequest};

use crate::auth::providers::Providers;

/// The configuration key init.lua sets: `uji.config.set("child_env", {
/// pass = { "NAME" }, withhold = { "NAME", "PREFIX_*" } })`.
pub const CONFIG_KEY: &str = "child_env";

/// uji's own variables: never inherited unless passed by name.
const OWN_PREFIX: &str = "UJI_";

/// The `child_env` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Names inherited even though they would be withheld.
    #[serde(default)]
    pass: Vec<String>,
    /// More names (or `PREFIX_*`) to withhold.
    #[serde(default)]
    withhold: Vec<String>,
}

/// What `child_env` says, or why it cannot be read.
fn settings(registry: &Registry) -> Result<Settings, String> {
    let Some(value) = registry.config(CONFIG_KEY) else {
        return Ok(Settings::default());
    };
    // An empty Lua table arrives as an empty array.
    if matches!(&value, Value::Array(items) if items.is_empty()) {
        return Ok(Settings::default());
    }
    serde_json::from_value(value).map_err(|e| {
        format!(
            "init.lua: {CONFIG_KEY} must be a table {{ pass = {{ \"NAME\", ... }}, withhold = {{ \"NAME\", \"PREFIX_*\", ... }} }}: {e}; until it is fixed, nothing is passed through"
        )
    })
}

/// The answer of `env.child` now.
pub fn child_env(registry: &Registry, providers: &Providers) -> ChildEnv {
    let settings = settings(registry).unwrap_or_else(|e| {
        tracing::warn!("{e}");
        Settings::default()
    });
    let mut withheld: Vec<String> = providers
        .list()
        .iter()
        .flat_map(|p| p.key_env.iter().chain(&p.key_env_alt))
        .cloned()
        .collect();
    let prefixes: Vec<&str> = std::iter::once(OWN_PREFIX)
        .chain(settings.withhold.iter().filter_map(|n| n.strip_suffix('*')))
        .collect();
    withheld.extend(
        settings
            .withhold
            .iter()
            .filter(|n| !n.ends_with('*'))
            .cloned(),
    );
    withheld.extend(
        std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|name| prefixes.iter().any(|p| name.starts_with(p))),
    );
    withheld.retain(|name| !settings.pass.contains(name));
    withheld.sort();
    withheld.dedup();
    ChildEnv {
        withheld,
        only: None,
    }
}

/// Serves `env.child`.
pub fn install_service(registry: &Registry, providers: &Providers) {
    let (events, providers) = (registry.clone(), providers.clone());
    registry.serve(move |_: ChildEnvRequest| Ok(child_env(&events, &providers)));
}

/// Once init.lua has run: a malformed `child_env` is an error the user
/// sees, and a provider key passed through is said out loud, since it is
/// a choice to let commands and MCP servers read that key.
pub fn announce(registry: &Registry, providers: &Providers) {
    let settings = match settings(registry) {
        Ok(settings) => settings,
        Err(e) => return registry.notify_at(NoticeLevel::Error, "child_env", &e),
    };
    let keys: Vec<String> = providers
        .list()
        .iter()
        .flat_map(|p| p.key_env.iter().chain(&p.key_env_alt))
        .filter(|name| settings.pass.contains(name))
        .cloned()
        .collect();
    if !keys.is_empty() {
        registry.notify_at(
            NoticeLevel::Warn,
            "child_env",
            &format!(
                "commands, background jobs, !cmd and MCP servers get the provider key variable(s) {} (child_env.pass in init.lua)",
                keys.join(", ")
            ),
        );
    }
}
