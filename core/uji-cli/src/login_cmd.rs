//! `uji login [PROVIDER]` and `uji logout PROVIDER`: keys saved owner-only
//! in the data directory ([`uji_core::auth::keys`]).
//!
//! The key is read with echo off on a terminal, or as one line from stdin
//! for scripts; it is checked against the provider's model list when the
//! catalogue names one, and it is never printed or logged: messages name
//! the provider, the variable and the file, never the key.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use uji_core::auth::keys::KeyStore;
use uji_core::auth::login::{self, KeyCheck, display_name};
use uji_core::auth::providers::{KeySource, Provider, Providers};
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
    let provider = login::find(providers, &id).map_err(|e| e.to_string())?;
    if let KeySource::Env(var) = providers.key_source(&provider) {
        say!("uji: note: {var} is set, and overrides the key saved here while it is");
    }
    let key = read_key(&provider)?;
    if check {
        check_key(providers, &provider, &key)?;
    }
    let store = KeyStore::new(&booted.dirs.data);
    login::save(&store, providers, &provider, &key).map_err(|e| e.to_string())?;
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
    // The web search backends take keys too (docs/web.md).
    for backend in uji_protocol::web::SearchBackend::ALL {
        if backend.key_env().is_some() {
            say!("  {:<14} {} (web search)", backend.id(), backend.name());
        }
    }
    discard_typed_ahead();
    prompt("Provider: ")?;
    let line = read_line()?;
    let id = line.trim();
    if id.is_empty() {
        return Err("no provider given; nothing was saved".into());
    }
    Ok(id.to_string())
}

/// Throws away what was typed at the terminal before the question was
/// asked: only a line typed after it answers it (docs/providers.md).
fn discard_typed_ahead() {
    let stdin = std::io::stdin();
    if let Err(e) = rustix::termios::tcflush(&stdin, rustix::termios::QueueSelector::IFlush) {
        tracing::warn!("cannot discard typed-ahead input: {e}");
    }
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
        discard_typed_ahead();
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
    login::clean_key(&line).map_err(|e| e.to_string())
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

/// Asks the provider with the key (core's [`login::check_key`]). A
/// refused key (401, 403) is an error and nothing is saved; a check that
/// cannot be made (no network, another status) is a note and the key is
/// saved.
fn check_key(providers: &Providers, provider: &Provider, key: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let check = runtime.block_on(login::check_key(providers, provider, key));
    login::refusal(provider, &check).map_err(|e| e.to_string())?;
    match check {
        KeyCheck::Accepted => say!("uji: {} accepted the key", display_name(provider)),
        KeyCheck::Unchecked(why) => {
            say!("uji: note: could not check the key ({why}); saving it anyway");
        }
        KeyCheck::Refused { .. } | KeyCheck::NoCheck => {}
    }
    Ok(())
}
