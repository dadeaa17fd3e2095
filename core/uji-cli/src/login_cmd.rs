//! `uji login [PROVIDER]` and `uji logout PROVIDER`: keys saved owner-only
//! in the data directory ([`uji_core::keys`]).
//!
//! The key is read with echo off on a terminal, or as one line from stdin
//! for scripts; it is checked against the provider's model list when the
//! catalogue names one, and it is never printed or logged: messages name
//! the provider, the variable and the file, never the key.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use uji_core::keys::KeyStore;
use uji_core::providers::{KeySource, Provider, Providers};
use uji_host::paths::{Dirs, ProcessEnv};

use crate::out::say;

pub fn login(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    provider: Option<String>,
    check: bool,
) -> Result<(), String> {
    let booted = crate::boot_here(config_dir, data_dir)?;
    crate::print_notices(&booted.registry);
    let providers = &booted.providers;
    let id = match provider {
        Some(id) => id,
        None => ask_provider(providers)?,
    };
    let provider = find(providers, &id)?;
    if let KeySource::Env(var) = providers.key_source(&provider) {
        say!("uji: note: {var} is set, and overrides the key saved here while it is");
    }
    let key = read_key(&provider)?;
    if check {
        check_key(providers, &provider, &key)?;
    }
    let store = KeyStore::new(&booted.dirs.data);
    store.save(&provider.id, &key).map_err(|e| e.to_string())?;
    tracing::info!(provider = %provider.id, "saved a key");
    say!(
        "uji: saved the key for {} in {} (readable by you only)",
        display_name(&provider),
        store.path().display()
    );
    Ok(())
}

pub fn logout(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    provider: &str,
) -> Result<(), String> {
    let dirs = Dirs::resolve(config_dir, data_dir, &ProcessEnv).map_err(|e| e.to_string())?;
    let store = KeyStore::new(&dirs.data);
    if store.remove(provider).map_err(|e| e.to_string())? {
        tracing::info!(provider, "removed a saved key");
        say!("uji: removed the saved key for {provider}");
    } else {
        say!("uji: no key was saved for {provider}");
    }
    Ok(())
}

fn display_name(provider: &Provider) -> &str {
    if provider.name.is_empty() {
        &provider.id
    } else {
        &provider.name
    }
}

fn find(providers: &Providers, id: &str) -> Result<Provider, String> {
    providers.get(id).ok_or_else(|| {
        let ids: Vec<String> = providers.list().into_iter().map(|p| p.id).collect();
        format!(
            "unknown provider {id:?}; known providers: {}",
            ids.join(", ")
        )
    })
}

/// Without a PROVIDER: the providers that take a key, then one line naming
/// one (only on a terminal; scripts must name it).
fn ask_provider(providers: &Providers) -> Result<String, String> {
    let needs_key: Vec<Provider> = providers
        .list()
        .into_iter()
        .filter(|p| p.key_env.is_some())
        .collect();
    if !std::io::stdin().is_terminal() {
        return Err("name the provider: uji login PROVIDER (uji models --all lists them)".into());
    }
    for p in &needs_key {
        say!("  {:<14} {}", p.id, display_name(p));
    }
    prompt("Provider: ")?;
    let line = read_line()?;
    let id = line.trim();
    if id.is_empty() {
        return Err("no provider given; nothing was saved".into());
    }
    Ok(id.to_string())
}

fn prompt(text: &str) -> Result<(), String> {
    let mut err = std::io::stderr().lock();
    err.write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .map_err(|e| format!("cannot write to the terminal: {e}"))
}

fn read_line() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    Ok(line)
}

/// The key: typed with echo off on a terminal, else stdin's first line.
fn read_key(provider: &Provider) -> Result<String, String> {
    let line = if std::io::stdin().is_terminal() {
        let var = provider
            .key_env
            .as_deref()
            .map(|v| format!(" ({v})"))
            .unwrap_or_default();
        prompt(&format!("Key for {}{var}: ", display_name(provider)))?;
        let line = {
            let _echo_off = EchoOff::new();
            read_line()
        };
        // The user's Enter was not echoed either.
        prompt("\n")?;
        line?
    } else {
        read_line()?
    };
    let key = line.trim();
    if key.is_empty() {
        return Err("no key given; nothing was saved".into());
    }
    if key.chars().any(char::is_control) || key.contains(' ') {
        return Err("the key holds spaces or control characters; nothing was saved".into());
    }
    Ok(key.to_string())
}

/// Turns the terminal's echo off until dropped.
struct EchoOff {
    saved: Option<rustix::termios::Termios>,
}

impl EchoOff {
    fn new() -> EchoOff {
        let stdin = std::io::stdin();
        let saved = rustix::termios::tcgetattr(&stdin).ok();
        if let Some(saved) = &saved {
            let mut quiet = saved.clone();
            quiet.local_modes.remove(rustix::termios::LocalModes::ECHO);
            if let Err(e) =
                rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &quiet)
            {
                tracing::warn!("cannot turn the terminal's echo off: {e}");
            }
        }
        EchoOff { saved }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            let stdin = std::io::stdin();
            if let Err(e) =
                rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, saved)
            {
                tracing::warn!("cannot turn the terminal's echo back on: {e}");
            }
        }
    }
}

/// Asks the provider's model list with the key. A refused key (401, 403)
/// is an error and nothing is saved; a check that cannot be made (no
/// network, another status) is a note and the key is saved.
fn check_key(providers: &Providers, provider: &Provider, key: &str) -> Result<(), String> {
    let Some(path) = &provider.key_check else {
        return Ok(());
    };
    let base = providers.base_url_of(provider)?;
    let url = format!("{base}/{}", path.trim_start_matches('/'));
    match fetch_status(&url, &provider.wire, key) {
        Ok(status) if (200..300).contains(&status) => {
            say!("uji: {} accepted the key", display_name(provider));
            Ok(())
        }
        Ok(status @ (401 | 403)) => Err(format!(
            "{} refused the key (HTTP {status} from {url}); nothing was saved. Check the key, or pass --no-check to save it anyway",
            display_name(provider)
        )),
        Ok(status) => {
            say!("uji: note: could not check the key (HTTP {status} from {url}); saving it anyway");
            Ok(())
        }
        Err(e) => {
            say!("uji: note: could not check the key ({e}); saving it anyway");
            Ok(())
        }
    }
}

fn fetch_status(url: &str, wire: &str, key: &str) -> Result<u16, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let loopback =
        url.contains("://127.") || url.contains("://localhost") || url.contains("://[::1]");
    let mut builder = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .user_agent(concat!("uji/", env!("CARGO_PKG_VERSION")));
    if loopback {
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(|e| e.to_string())?;
    let request = match wire {
        "anthropic" => client
            .get(url)
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01"),
        "gemini" => client.get(url).header("x-goog-api-key", key),
        _ => client.get(url).bearer_auth(key),
    };
    // reqwest's errors name the URL, never the headers, so the key stays out.
    // `send` starts the timeout, which needs the runtime: call it inside.
    runtime
        .block_on(async move { request.send().await })
        .map(|r| r.status().as_u16())
        .map_err(|e| describe(&e.without_url()))
}

/// An error with its causes ("error sending request" alone says little).
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
