//! Providers and the default model: which providers have a key (where it
//! comes from, never the key), and whether the default model answers one
//! tiny request.

use std::sync::Arc;
use std::time::{Duration, Instant};

use uji_core::auth::providers::{KeySource, Providers, Resolved};
use uji_core::auth::redact::redact;
use uji_protocol::wire::{Auth, Message, ProviderInfo, WireRequest};

use super::Check;

/// How long the model may take to answer before doctor gives up on it.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// One line naming the providers with a key and where each key comes from.
pub fn check_keys(providers: &Providers) -> Vec<Check> {
    let with_keys: Vec<String> = providers
        .list()
        .iter()
        .filter_map(|p| match providers.key_source(p) {
            source @ (KeySource::Env(_) | KeySource::Stored) => {
                Some(format!("{} ({})", p.id, source.describe()))
            }
            _ => None,
        })
        .collect();
    if with_keys.is_empty() {
        return vec![Check::warn(
            "keys",
            "no provider has a key",
            "`uji login PROVIDER`, or export the provider's variable (`uji models --all` lists them), or use a local server with --model ollama/MODEL",
        )];
    }
    vec![Check::ok(
        "keys",
        format!("providers with a key: {}", with_keys.join(", ")),
    )]
}

/// The default model (init.lua's choice, else the first provider with a
/// key), and unless `offline` whether it answers.
pub fn check_default(booted: &uji_core::Booted, offline: bool) -> Check {
    let resolved = match booted.providers.resolve(None) {
        Ok(resolved) => resolved,
        Err(why) => {
            return Check::warn("model", "no default model", why);
        }
    };
    let label = resolved.label();
    if offline {
        return Check::ok(
            "model",
            format!("default model {label} (not asked: --offline)"),
        );
    }
    let started = Instant::now();
    // Error texts are not supposed to hold the key; if one does, it goes.
    let secrets = booted.providers.secret_values();
    match ask(&booted.registry, resolved).map_err(|why| redact(&why, &secrets)) {
        Ok(()) => Check::ok(
            "model",
            format!(
                "default model {label} answered in {} ms",
                started.elapsed().as_millis()
            ),
        ),
        Err(why) => Check::problem(
            "model",
            format!("default model {label} did not answer: {why}"),
            "check the key (`uji login PROVIDER`), the base URL and the network; choose another with `uji.model.use(\"provider/model\")` in init.lua",
        ),
    }
}

/// One request of a few tokens through the provider's wire, as a turn
/// sends it; a thread waits so a wire that never finishes cannot hold
/// doctor forever.
fn ask(registry: &uji_host::Registry, resolved: Resolved) -> Result<(), String> {
    let wire_name = resolved.provider.wire.clone();
    let wire = registry
        .wire(&wire_name)
        .ok_or_else(|| format!("the {wire_name:?} wire is not loaded (see the plugins above)"))?;
    let request = WireRequest {
        model: resolved.model.id.clone(),
        system: String::new(),
        messages: vec![Message::User {
            text: "Reply with the word ok.".to_string(),
            images: Vec::new(),
        }],
        tools: Vec::new(),
        effort: None,
        max_output: Some(16),
        cache: None,
        session: None,
        provider: ProviderInfo {
            id: resolved.provider.id.clone(),
            base_url: resolved.base_url.clone(),
        },
        auth: Auth {
            key: resolved.key.clone(),
        },
        idle_timeout: Some(ANSWER_TIMEOUT.as_secs()),
    };
    let running = wire
        .stream(request, Arc::new(Quiet))
        .map_err(|e| e.to_string())?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(running.wait_blocking());
    });
    match rx.recv_timeout(ANSWER_TIMEOUT) {
        Ok(Ok(_answer)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {} s", ANSWER_TIMEOUT.as_secs())),
    }
}

/// The answer's text is not shown: only that it came.
struct Quiet;

impl uji_host::WireEvents for Quiet {
    fn text(&self, _delta: &str) {}
    fn reasoning(&self, _delta: &str) {}
}
