//! `uji models`: one line per `provider/model` from the same list the
//! frontends' `list_models` and `uji.provider.list` use (the catalogue
//! merged with init.lua's `uji.provider.add`).

use std::fmt::Write;
use std::path::PathBuf;

use uji_core::auth::providers::{KeySource, Provider, Providers};

pub fn run(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    all: bool,
) -> Result<(), String> {
    let dirs = uji_host::paths::Dirs::resolve(config_dir, data_dir, &uji_host::paths::ProcessEnv)
        .map_err(|e| e.to_string())?;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    let booted =
        uji_core::boot(uji_core::BootOptions::new(dirs, &cwd).load(uji_core::Load::Providers));
    crate::print_notices(&booted.registry);
    let text = render(&booted.providers, all);
    if text.is_empty() {
        crate::out::say!(
            "uji: no provider has a key: run `uji login PROVIDER`, or `uji models --all` to see every provider"
        );
        return Ok(());
    }
    crate::out::print(&text)
}

/// The listing: `provider/model  context  key`, providers in catalogue
/// order. A provider without a model list (a local server) shows as
/// `provider/MODEL`: any model it serves can be named.
pub fn render(providers: &Providers, all: bool) -> String {
    let mut rows: Vec<[String; 3]> = Vec::new();
    for provider in providers.list() {
        let source = providers.key_source(&provider);
        let usable = source.available() && providers.base_url_of(&provider).is_ok();
        if !all && !usable {
            continue;
        }
        rows.extend(rows_of(providers, &provider, &source));
    }
    let width = rows.iter().map(|r| r[0].len()).max().unwrap_or(0);
    let mut text = String::new();
    for [name, window, key] in rows {
        let _ = writeln!(text, "{name:<width$}  {window:>9}  {key}");
    }
    text
}

fn rows_of(providers: &Providers, provider: &Provider, source: &KeySource) -> Vec<[String; 3]> {
    let key = match (providers.base_url_of(provider), &provider.base_url_env) {
        (Err(_), Some(var)) => format!("{}, no base URL ({var})", source.describe()),
        (Err(_), None) => format!("{}, no base URL", source.describe()),
        (Ok(_), _) => source.describe(),
    };
    if provider.models.is_empty() {
        return vec![[format!("{}/MODEL", provider.id), "?".to_string(), key]];
    }
    provider
        .models
        .iter()
        .map(|m| {
            [
                format!("{}/{}", provider.id, m.id),
                m.context_window.to_string(),
                key.clone(),
            ]
        })
        .collect()
}
