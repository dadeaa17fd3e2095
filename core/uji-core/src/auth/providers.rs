//! Model providers: which wire talks to which server, with which key, and
//! the models they offer.
//!
//! The shipped providers are data ([`catalogue`]); `uji.provider.add`
//! merges into them or adds others. A provider's key comes from its
//! environment variables, else from the keys `uji login` saved
//! ([`crate::auth::keys`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::RwLock;

use uji_host::Registry;
use uji_protocol::frontend::{KeyOrigin, ModelEntry, NoticeLevel, ProviderEntry};
use uji_protocol::services::{ModelChoice, ModelCurrent, ModelUse, ProviderAdd, ProviderList};

// The shapes plugins build and `provider.list` returns live in the protocol,
// so a native plugin can register a provider with the same types.
pub use uji_protocol::services::{ModelInfo, Provider};

/// A choice ready to send requests with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub provider: Provider,
    pub model: ModelInfo,
    pub base_url: String,
    /// Never printed, logged, saved or put in events.
    pub key: Option<String>,
    /// The model is not in the provider's list: its context window is a
    /// guess ([`DEFAULT_CONTEXT_WINDOW`](uji_protocol::services::DEFAULT_CONTEXT_WINDOW)).
    pub unknown_model: bool,
}

impl Resolved {
    /// `provider/model`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.provider.id, self.model.id)
    }

    /// What to tell the user when the model is not in the catalogue.
    pub fn notice(&self) -> Option<String> {
        self.unknown_model.then(|| {
            format!(
                "{} is not in the model list: assuming a {}-token context window (set context_window with uji.provider.add)",
                self.label(),
                self.model.context_window
            )
        })
    }
}

/// Reads the environment (a trait so tests can supply their own).
pub trait EnvLookup: Send + Sync {
    fn get(&self, name: &str) -> Option<String>;
}

pub struct ProcessEnvLookup;

impl EnvLookup for ProcessEnvLookup {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }
}

/// The providers uji ships, as data: `catalogue/providers.json`.
const CATALOGUE: &str = include_str!("../../catalogue/providers.json");

/// The shipped providers. The file is part of the build and a test parses
/// it, so an error here is a packaging bug: it is logged and uji starts
/// without a catalogue rather than not at all.
pub fn catalogue() -> Vec<Provider> {
    serde_json::from_str(CATALOGUE).unwrap_or_else(|e| {
        tracing::error!("the provider catalogue does not parse: {e}");
        Vec::new()
    })
}

/// The providers known to this process and the model in use.
#[derive(Clone)]
pub struct Providers {
    list: Arc<RwLock<Vec<Provider>>>,
    chosen: Arc<RwLock<Option<String>>>,
    /// The effort given with the last `model.use`, for the session to apply.
    effort: Arc<RwLock<Option<String>>>,
    env: Arc<dyn EnvLookup>,
    /// Keys saved by `uji login`, by provider id.
    stored: Arc<RwLock<BTreeMap<String, String>>>,
    /// The web search backend init.lua chose ([`crate::auth::search`]).
    search: Arc<RwLock<Option<uji_protocol::web::WebSearch>>>,
}

impl Providers {
    pub fn new(env: Arc<dyn EnvLookup>) -> Providers {
        Providers {
            list: Arc::new(RwLock::new(catalogue())),
            chosen: Arc::new(RwLock::new(None)),
            effort: Arc::new(RwLock::new(None)),
            env,
            stored: Arc::new(RwLock::new(BTreeMap::new())),
            search: Arc::new(RwLock::new(None)),
        }
    }

    pub(crate) fn search_backend(&self) -> &RwLock<Option<uji_protocol::web::WebSearch>> {
        &self.search
    }

    /// The keys `uji login` saved; an environment variable still wins.
    pub fn set_stored_keys(&self, keys: BTreeMap<String, String>) {
        *self.stored.write() = keys;
    }

    /// A key `uji login` (or the `login` operation) just saved.
    pub fn remember_key(&self, id: &str, key: &str) {
        self.stored.write().insert(id.to_string(), key.to_string());
    }

    /// A saved key `uji logout` removed.
    pub fn forget_key(&self, id: &str) {
        self.stored.write().remove(id);
    }

    /// Every provider and where its key comes from, for a login picker.
    pub fn login_entries(&self) -> Vec<ProviderEntry> {
        self.list()
            .into_iter()
            .map(|p| {
                let source = self.key_source(&p);
                let (key, key_env) = match source {
                    KeySource::Env(var) => (KeyOrigin::Env, Some(var)),
                    KeySource::Stored => (KeyOrigin::Stored, p.key_env.clone()),
                    KeySource::NotNeeded => (KeyOrigin::NotNeeded, None),
                    KeySource::Missing => (KeyOrigin::Missing, p.key_env.clone()),
                };
                ProviderEntry {
                    checks_key: p.key_check.is_some(),
                    name: p.name,
                    id: p.id,
                    key,
                    key_env,
                }
            })
            .collect()
    }

    /// The provider's key: its variables in order, else a saved key.
    pub fn key_of(&self, provider: &Provider) -> Option<String> {
        self.key_from_env(provider)
            .or_else(|| self.stored.read().get(&provider.id).cloned())
    }

    fn key_from_env(&self, provider: &Provider) -> Option<String> {
        provider
            .key_env
            .iter()
            .chain(&provider.key_env_alt)
            .find_map(|var| self.env.get(var))
    }

    /// Where the key of `provider` comes from, for `uji models` and
    /// `uji login` (never the key itself).
    pub fn key_source(&self, provider: &Provider) -> KeySource {
        if let Some(var) = provider
            .key_env
            .iter()
            .chain(&provider.key_env_alt)
            .find(|var| self.env.get(var).is_some())
        {
            return KeySource::Env(var.clone());
        }
        let stored = self.stored.read().contains_key(&provider.id);
        match (stored, &provider.key_env) {
            (true, _) => KeySource::Stored,
            (false, None) => KeySource::NotNeeded,
            (false, Some(_)) => KeySource::Missing,
        }
    }

    /// The provider with this id.
    pub fn get(&self, id: &str) -> Option<Provider> {
        self.list().into_iter().find(|p| p.id == id)
    }

    pub fn list(&self) -> Vec<Provider> {
        self.list.read().clone()
    }

    /// Adds a provider, or merges into the one with the same id: fields
    /// given replace, fields left out keep the shipped value, models are
    /// added or replaced by id.
    pub fn add(&self, provider: Provider) {
        let mut list = self.list.write();
        match list.iter_mut().find(|p| p.id == provider.id) {
            Some(existing) => merge(existing, provider),
            None => list.push(provider),
        }
    }

    /// The values of every key variable of every provider that is set, and
    /// every saved key: what must never be saved or shown.
    pub fn secret_values(&self) -> Vec<String> {
        let mut values: Vec<String> = self
            .list()
            .iter()
            .flat_map(|p| p.key_env.iter().chain(&p.key_env_alt))
            .map(String::as_str)
            // Web search keys are as secret as a model's.
            .chain(
                uji_protocol::web::SearchBackend::ALL
                    .iter()
                    .filter_map(|b| b.key_env()),
            )
            .filter_map(|var| self.env.get(var))
            .collect();
        values.extend(
            self.stored
                .read()
                .values()
                .filter(|k| !k.is_empty())
                .cloned(),
        );
        values.sort();
        values.dedup();
        values
    }

    /// Records the model to use (`uji.model.use`), as `provider/model` or
    /// just `provider`.
    pub fn choose(&self, choice: &str) -> Result<Resolved, String> {
        let resolved = self.resolve(Some(choice))?;
        *self.chosen.write() = Some(choice.to_string());
        Ok(resolved)
    }

    /// Records `choice` when all it lacks is its key (as the public uji's
    /// `uji.model.use` does: the first request then fails, saying which
    /// key to set). `Err` when the choice is wrong in another way.
    fn choose_without_key(&self, choice: &str) -> Result<Resolved, String> {
        let (provider, model) = split_choice(choice);
        let resolved =
            self.resolve_in(&self.list(), &provider, model.as_deref(), KeyCheck::Skip)?;
        *self.chosen.write() = Some(choice.to_string());
        Ok(resolved)
    }

    /// The reasoning effort given with the last `model.use` (none when it
    /// gave none).
    pub fn chosen_effort(&self) -> Option<String> {
        self.effort.read().clone()
    }

    fn set_effort(&self, effort: Option<String>) {
        *self.effort.write() = effort;
    }

    /// Every model of every provider, with whether its key is set (or
    /// saved, or not needed).
    pub fn entries(&self) -> Vec<ModelEntry> {
        let mut entries = Vec::new();
        for provider in self.list() {
            let available = self.key_source(&provider).available();
            entries.extend(provider.models.iter().map(|m| ModelEntry {
                provider: provider.id.clone(),
                model: m.id.clone(),
                context_window: m.context_window,
                available,
            }));
        }
        entries
    }

    pub fn chosen(&self) -> Option<String> {
        self.chosen.read().clone()
    }

    /// What a request will use: `flag` (`--model`), else the configured
    /// choice, else the first built-in provider whose key is set.
    pub fn resolve(&self, flag: Option<&str>) -> Result<Resolved, String> {
        let choice = flag.map(str::to_string).or_else(|| self.chosen());
        let list = self.list();
        let Some(choice) = choice else {
            for provider in &list {
                if provider.key_env.is_some()
                    && self.key_of(provider).is_some()
                    && provider.default_model.is_some()
                {
                    return self.resolve_in(&list, &provider.id, None, KeyCheck::Require);
                }
            }
            return Err(NO_PROVIDER.to_string());
        };
        let (provider, model) = split_choice(&choice);
        self.resolve_in(&list, &provider, model.as_deref(), KeyCheck::Require)
    }

    fn resolve_in(
        &self,
        list: &[Provider],
        provider_id: &str,
        model: Option<&str>,
        keys: KeyCheck,
    ) -> Result<Resolved, String> {
        let provider = list.iter().find(|p| p.id == provider_id).ok_or_else(|| {
            let known: Vec<&str> = list.iter().map(|p| p.id.as_str()).collect();
            format!(
                "unknown provider {provider_id:?}; known providers: {} (add others with uji.provider.add)",
                known.join(", ")
            )
        })?;
        let model_id = match model
            .map(str::to_string)
            .or_else(|| provider.default_model.clone())
            .or_else(|| provider.models.first().map(|m| m.id.clone()))
        {
            Some(id) => id,
            None => {
                return Err(format!(
                    "provider {provider_id} has no default model: pass --model {provider_id}/MODEL"
                ));
            }
        };
        let known = provider.models.iter().find(|m| m.id == model_id).cloned();
        let unknown_model = known.is_none();
        let model = known.unwrap_or_else(|| ModelInfo::new(model_id));
        let key = self.key_of(provider);
        if let (KeyCheck::Require, Some(var), None) = (keys, &provider.key_env, &key) {
            return Err(format!(
                "{var} is not set: export it, or run `uji login {}` (/login in uji's screen) to use {}, or choose another provider with --model",
                provider.id, provider.id
            ));
        }
        let base_url = self.base_url_of(provider)?;
        Ok(Resolved {
            provider: provider.clone(),
            model,
            base_url,
            key,
            unknown_model,
        })
    }

    /// The base URL requests go to: the provider's variable when set, else
    /// its `base_url`, without a trailing `/`.
    pub fn base_url_of(&self, provider: &Provider) -> Result<String, String> {
        let url = provider
            .base_url_env
            .as_deref()
            .and_then(|var| self.env.get(var))
            .unwrap_or_else(|| provider.base_url.clone());
        // Only a provider that expects a URL (custom) lacks one: a wire
        // that needs none (a plugin's offline wire) has no variable either.
        if let (true, Some(var)) = (url.trim().is_empty(), &provider.base_url_env) {
            return Err(format!(
                "provider {} has no base URL: export {var}, or set one in init.lua with uji.provider.add({{ id = \"{}\", base_url = \"https://...\" }})",
                provider.id, provider.id
            ));
        }
        Ok(url.trim_end_matches('/').to_string())
    }

    /// `provider.add`, `provider.list`, `model.use`, `model.current`.
    pub fn install_services(&self, registry: &Registry) {
        let providers = self.clone();
        registry.serve(move |ProviderAdd(provider)| {
            if provider.id.trim().is_empty() {
                return Err("a provider needs a non-empty id".to_string());
            }
            if provider.wire.trim().is_empty() && providers.get(&provider.id).is_none() {
                return Err(format!(
                    "provider {} needs a wire (e.g. \"openai-chat\")",
                    provider.id
                ));
            }
            providers.add(provider);
            Ok(())
        });
        let providers = self.clone();
        registry.serve(move |_: ProviderList| Ok(providers.list()));
        let providers = self.clone();
        let events = registry.clone();
        registry.serve(move |request: ModelUse| {
            let Some(choice) = request.choice() else {
                return Err(MODEL_USE_NEEDS.to_string());
            };
            let resolved = match providers.choose(&choice) {
                Ok(resolved) => resolved,
                Err(missing_key) => {
                    // Only the key is missing: keep the choice; the first
                    // request fails with this message.
                    let resolved = providers.choose_without_key(&choice).map_err(|_| missing_key.clone())?;
                    events.notify_at(
                        NoticeLevel::Warn,
                        "providers",
                        &format!("{missing_key} (the choice is kept; requests fail until the key is there)"),
                    );
                    resolved
                }
            };
            providers.set_effort(request.effort);
            if let Some(notice) = resolved.notice() {
                events.notify_at(NoticeLevel::Warn, "providers", &notice);
            }
            let answer = choice_of(&resolved);
            let payload = serde_json::to_value(&answer).map_err(|e| format!("model.use: {e}"))?;
            events.emit("model_changed", payload);
            Ok(answer)
        });
        let providers = self.clone();
        registry
            .serve(move |_: ModelCurrent| Ok(providers.resolve(None).ok().map(|r| choice_of(&r))));
    }
}

/// Whether resolving a choice needs its key to be there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyCheck {
    Require,
    /// `model.use` records a choice whose key is not set yet.
    Skip,
}

/// `provider/model` or `provider` as its parts.
fn split_choice(choice: &str) -> (String, Option<String>) {
    match choice.split_once('/') {
        Some((p, m)) if !p.is_empty() && !m.is_empty() => (p.to_string(), Some(m.to_string())),
        _ => (choice.trim_end_matches('/').to_string(), None),
    }
}

/// Why there is no model when nothing chose one and no key is set. Read
/// by `uji run` (as its error) and in an interactive session (as a
/// warning), so it names both ways to choose a local model.
pub const NO_PROVIDER: &str = "no model provider is set up: type /login in uji's screen, or run `uji login` (or export ANTHROPIC_API_KEY (Anthropic), OPENAI_API_KEY (OpenAI) or another provider's key; `uji models --all` lists them) before starting uji, use a local Ollama server with --model ollama/MODEL (in a session: /model ollama/MODEL), or add a provider in init.lua with uji.provider.add";

/// Where a provider's key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// This environment variable.
    Env(String),
    /// The key `uji login` saved.
    Stored,
    /// The provider takes no key (a local server).
    NotNeeded,
    Missing,
}

impl KeySource {
    pub fn available(&self) -> bool {
        *self != KeySource::Missing
    }

    /// A few words for listings: `key from GROQ_API_KEY`, `key saved`,
    /// `no key needed`, `no key`.
    pub fn describe(&self) -> String {
        match self {
            KeySource::Env(var) => format!("key from {var}"),
            KeySource::Stored => "key saved".to_string(),
            KeySource::NotNeeded => "no key needed".to_string(),
            KeySource::Missing => "no key".to_string(),
        }
    }
}

/// `provider.add` on a provider that exists: only what was given changes.
fn merge(existing: &mut Provider, given: Provider) {
    fn replace(slot: &mut String, value: String) {
        if !value.trim().is_empty() {
            *slot = value;
        }
    }
    replace(&mut existing.name, given.name);
    replace(&mut existing.wire, given.wire);
    replace(&mut existing.base_url, given.base_url);
    if given.key_env.is_some() {
        existing.key_env = given.key_env;
    }
    if !given.key_env_alt.is_empty() {
        existing.key_env_alt = given.key_env_alt;
    }
    if given.key_check.is_some() {
        existing.key_check = given.key_check;
    }
    if given.base_url_env.is_some() {
        existing.base_url_env = given.base_url_env;
    }
    if given.default_model.is_some() {
        existing.default_model = given.default_model;
    }
    if given.idle_timeout.is_some() {
        existing.idle_timeout = given.idle_timeout;
    }
    for model in given.models {
        existing.models.retain(|m| m.id != model.id);
        existing.models.push(model);
    }
}

/// What `model.use` says when it is given no model.
pub const MODEL_USE_NEEDS: &str = "model.use needs a model, e.g. \"anthropic/claude-sonnet-5-5\"";

fn choice_of(resolved: &Resolved) -> ModelChoice {
    ModelChoice {
        provider: resolved.provider.id.clone(),
        model: resolved.model.id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Env(HashMap<&'static str, &'static str>);
    impl EnvLookup for Env {
        fn get(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| v.to_string())
        }
    }

    fn providers(pairs: &[(&'static str, &'static str)]) -> Providers {
        Providers::new(Arc::new(Env(pairs.iter().copied().collect())))
    }

    #[test]
    fn with_nothing_set_the_error_says_what_to_set() {
        let err = providers(&[]).resolve(None).unwrap_err();
        assert!(
            err.contains("ANTHROPIC_API_KEY")
                && err.contains("OPENAI_API_KEY")
                && err.contains("ollama"),
            "{err}"
        );
    }

    #[test]
    fn the_first_provider_with_a_key_is_used_and_base_urls_come_from_the_environment() {
        let p = providers(&[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
        ]);
        let resolved = p.resolve(None).unwrap();
        assert_eq!(resolved.label(), "openai/gpt-6.2-sol");
        assert_eq!(resolved.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(resolved.key.as_deref(), Some("sk-test"));
        let anthropic = providers(&[("ANTHROPIC_API_KEY", "k"), ("OPENAI_API_KEY", "k")])
            .resolve(None)
            .unwrap();
        assert_eq!(anthropic.provider.id, "anthropic");
        assert_eq!(anthropic.base_url, "https://api.anthropic.com");
    }

    #[test]
    fn flags_choices_and_added_providers() {
        let p = providers(&[("ANTHROPIC_API_KEY", "k")]);
        assert_eq!(p.resolve(Some("ollama/qwen3")).unwrap().key, None);
        assert!(
            p.resolve(Some("ollama"))
                .unwrap_err()
                .contains("--model ollama/MODEL")
        );
        assert!(
            p.resolve(Some("openai/gpt-4o"))
                .unwrap_err()
                .contains("OPENAI_API_KEY is not set")
        );
        assert!(
            p.resolve(Some("nope/x"))
                .unwrap_err()
                .contains("unknown provider")
        );
        p.add(Provider {
            base_url: "http://127.0.0.1:8080/v1".into(),
            models: vec![ModelInfo::new("m").context_window(4096).max_output(512)],
            default_model: Some("m".into()),
            ..Provider::new("local", "openai-chat")
        });
        p.choose("local").unwrap();
        let resolved = p.resolve(None).unwrap();
        assert_eq!(resolved.label(), "local/m");
        assert_eq!(resolved.model.context_window, 4096);
        assert_eq!(
            p.resolve(Some("anthropic")).unwrap().label(),
            "anthropic/claude-sonnet-5-5",
            "the flag wins"
        );
    }

    #[test]
    fn catalogue_entries_are_whole_and_unique() {
        // Which providers ship is checked on `uji models --all` (tests/e2e/providers.rs);
        // github-models left the catalogue when GitHub retired it (docs/providers.md).
        let mut ids: Vec<String> = catalogue().into_iter().map(|p| p.id).collect();
        assert!(ids.len() >= 21, "{ids:?}");
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), catalogue().len(), "duplicate ids");
        for provider in catalogue() {
            assert!(
                !provider.name.is_empty() && !provider.wire.is_empty(),
                "{provider:?}"
            );
            if let Some(default) = &provider.default_model {
                assert!(
                    provider.models.iter().any(|m| &m.id == default),
                    "{default}"
                );
            }
        }
    }

    #[test]
    fn adding_only_a_base_url_keeps_the_rest_of_the_shipped_entry() {
        let p = providers(&[("GROQ_API_KEY", "gsk")]);
        p.add(Provider::new("groq", "").base_url("http://127.0.0.1:9/v1"));
        let resolved = p.resolve(Some("groq")).unwrap();
        assert_eq!(resolved.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(resolved.provider.wire, "openai-chat");
        assert_eq!(resolved.provider.name, "Groq");
        assert_eq!(resolved.model.id, "openai/gpt-oss-120b");
        assert_eq!(resolved.key.as_deref(), Some("gsk"));
    }

    #[test]
    fn saved_keys_count_and_the_environment_wins_over_them() {
        let p = providers(&[("GOOGLE_API_KEY", "from-google")]);
        p.set_stored_keys(BTreeMap::from([
            ("groq".to_string(), "saved-groq".to_string()),
            ("gemini".to_string(), "saved-gemini".to_string()),
        ]));
        assert_eq!(
            p.resolve(Some("groq")).unwrap().key.as_deref(),
            Some("saved-groq")
        );
        assert_eq!(
            p.resolve(Some("gemini")).unwrap().key.as_deref(),
            Some("from-google"),
            "the second variable still beats a saved key"
        );
        let secrets = p.secret_values();
        for key in ["saved-groq", "saved-gemini", "from-google"] {
            assert!(secrets.iter().any(|s| s == key), "{key}");
        }
        assert_eq!(
            p.resolve(None).unwrap().label(),
            "groq/openai/gpt-oss-120b",
            "the first provider of the catalogue with a key, saved or not"
        );
        let groq = p.get("groq").unwrap();
        assert_eq!(p.key_source(&groq), KeySource::Stored);
        assert_eq!(
            p.key_source(&p.get("deepseek").unwrap()),
            KeySource::Missing
        );
        assert_eq!(p.key_source(&p.get("vllm").unwrap()), KeySource::NotNeeded);
    }

    #[test]
    fn an_unknown_model_gets_the_default_window_and_a_notice() {
        let p = providers(&[("OPENAI_API_KEY", "k")]);
        let known = p.resolve(Some("openai/gpt-4o")).unwrap();
        assert_eq!(known.notice(), None);
        let unknown = p.resolve(Some("openai/gpt-9")).unwrap();
        assert_eq!(unknown.model.context_window, 128_000);
        assert!(
            unknown
                .notice()
                .unwrap()
                .contains("openai/gpt-9 is not in the model list")
        );
    }

    #[test]
    fn custom_needs_a_base_url() {
        let p = providers(&[]);
        let err = p.resolve(Some("custom/m")).unwrap_err();
        assert!(err.contains("UJI_CUSTOM_BASE_URL"), "{err}");
        let p = providers(&[("UJI_CUSTOM_BASE_URL", "http://127.0.0.1:1/v1")]);
        assert_eq!(p.resolve(Some("custom/m")).unwrap().key, None);
    }

    /// docs/providers.md's Prices section names every priced model, and
    /// each price reads as a price.
    #[test]
    fn the_documented_prices_are_the_catalogues() {
        let doc = include_str!("../../../../docs/providers.md");
        let section = doc
            .split("### Prices")
            .nth(1)
            .and_then(|rest| rest.split("\n### ").next())
            .unwrap_or_default();
        let mut priced: Vec<String> = catalogue()
            .iter()
            .flat_map(|p| {
                p.models
                    .iter()
                    .filter(|m| m.price.is_some())
                    .map(move |m| format!("`{}/{}`", p.id, m.id))
            })
            .collect();
        priced.sort();
        assert!(!priced.is_empty());
        for model in &priced {
            assert!(
                section.contains(model.as_str()),
                "{model} is priced but not listed"
            );
        }
        let haiku = catalogue()
            .into_iter()
            .find(|p| p.id == "anthropic")
            .and_then(|p| p.models.into_iter().find(|m| m.id == "claude-haiku-4-5"))
            .and_then(|m| m.price)
            .unwrap();
        let usage = uji_protocol::wire::Usage {
            input: 1_000_000,
            output: 1_000_000,
            cache_read: 1_000_000,
            cache_write: 1_000_000,
        };
        // $1 + $5 + $0.10 + $1.25, in millionths of a dollar.
        assert_eq!(haiku.cost(&usage), 7_350_000);
    }

    /// docs/providers.md's table says what the catalogue holds.
    #[test]
    fn the_documented_table_matches_the_catalogue() {
        let doc = include_str!("../../../../docs/providers.md");
        let rows: Vec<Vec<&str>> = doc
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| l.split('|').map(str::trim).collect())
            .collect();
        let catalogue = catalogue();
        assert_eq!(rows.len(), catalogue.len());
        for (row, provider) in rows.iter().zip(&catalogue) {
            let (id, name, wire, key, url) = (row[1], row[2], row[3], row[4], row[5]);
            assert_eq!(id, format!("`{}`", provider.id));
            assert_eq!(name, provider.name);
            assert!(wire.starts_with(&provider.wire), "{id}: {wire}");
            for var in provider.key_env.iter().chain(&provider.key_env_alt) {
                assert!(key.contains(&format!("`{var}`")), "{id}: {key}");
            }
            assert!(url.contains(&provider.base_url), "{id}: {url}");
            if let Some(var) = &provider.base_url_env {
                assert!(url.contains(&format!("`{var}`")), "{id}: {url}");
            }
        }
    }
}
