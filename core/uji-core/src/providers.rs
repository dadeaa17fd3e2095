//! Model providers: which wire talks to which server, with which key, and
//! the models they offer.
//!
//! Built in: `anthropic` (Messages API), `openai` (Chat Completions) and
//! `ollama` (a local OpenAI-compatible server). Any other OpenAI-compatible
//! server (OpenRouter, vLLM, llama.cpp, LM Studio, Groq, DeepSeek...) is added
//! from the config with `uji.provider.add`.

use std::sync::{Arc, RwLock};

use uji_host::Registry;
use uji_protocol::frontend::ModelEntry;
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
}

impl Resolved {
    /// `provider/model`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.provider.id, self.model.id)
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

fn builtin() -> Vec<Provider> {
    vec![
        Provider {
            id: "anthropic".into(),
            wire: "anthropic".into(),
            base_url: "https://api.anthropic.com".into(),
            key_env: Some("ANTHROPIC_API_KEY".into()),
            base_url_env: Some("ANTHROPIC_BASE_URL".into()),
            models: vec![
                ModelInfo {
                    id: "claude-sonnet-4-5".into(),
                    context_window: 200_000,
                    max_output: Some(16_000),
                },
                ModelInfo {
                    id: "claude-opus-4-1".into(),
                    context_window: 200_000,
                    max_output: Some(16_000),
                },
                ModelInfo {
                    id: "claude-haiku-4-5".into(),
                    context_window: 200_000,
                    max_output: Some(16_000),
                },
            ],
            default_model: Some("claude-sonnet-4-5".into()),
            idle_timeout: None,
        },
        Provider {
            id: "openai".into(),
            wire: "openai-chat".into(),
            base_url: "https://api.openai.com/v1".into(),
            key_env: Some("OPENAI_API_KEY".into()),
            base_url_env: Some("OPENAI_BASE_URL".into()),
            models: vec![
                ModelInfo {
                    id: "gpt-4.1".into(),
                    context_window: 1_000_000,
                    max_output: Some(32_768),
                },
                ModelInfo {
                    id: "gpt-4o".into(),
                    context_window: 128_000,
                    max_output: Some(16_384),
                },
            ],
            default_model: Some("gpt-4.1".into()),
            idle_timeout: None,
        },
        Provider {
            id: "ollama".into(),
            wire: "openai-chat".into(),
            base_url: "http://localhost:11434/v1".into(),
            key_env: None,
            base_url_env: Some("OLLAMA_BASE_URL".into()),
            models: Vec::new(),
            default_model: None,
            idle_timeout: None,
        },
    ]
}

/// The providers known to this process and the model in use.
#[derive(Clone)]
pub struct Providers {
    list: Arc<RwLock<Vec<Provider>>>,
    chosen: Arc<RwLock<Option<String>>>,
    /// The effort given with the last `model.use`, for the session to apply.
    effort: Arc<RwLock<Option<String>>>,
    env: Arc<dyn EnvLookup>,
}

impl Providers {
    pub fn new(env: Arc<dyn EnvLookup>) -> Providers {
        Providers {
            list: Arc::new(RwLock::new(builtin())),
            chosen: Arc::new(RwLock::new(None)),
            effort: Arc::new(RwLock::new(None)),
            env,
        }
    }

    pub fn list(&self) -> Vec<Provider> {
        self.list.read().map(|l| l.clone()).unwrap_or_default()
    }

    /// Adds a provider, or merges into the one with the same id (fields
    /// given replace, models are added or replaced by id).
    pub fn add(&self, provider: Provider) {
        let Ok(mut list) = self.list.write() else {
            return;
        };
        match list.iter_mut().find(|p| p.id == provider.id) {
            Some(existing) => {
                existing.wire = provider.wire;
                existing.base_url = provider.base_url;
                existing.key_env = provider.key_env.or(existing.key_env.take());
                existing.base_url_env = provider.base_url_env;
                if provider.default_model.is_some() {
                    existing.default_model = provider.default_model;
                }
                if provider.idle_timeout.is_some() {
                    existing.idle_timeout = provider.idle_timeout;
                }
                for model in provider.models {
                    existing.models.retain(|m| m.id != model.id);
                    existing.models.push(model);
                }
            }
            None => list.push(provider),
        }
    }

    /// The values of every key variable of every provider that is set: what
    /// must never be saved or shown.
    pub fn secret_values(&self) -> Vec<String> {
        let mut values: Vec<String> = self
            .list()
            .iter()
            .filter_map(|p| p.key_env.as_deref())
            .filter_map(|var| self.env.get(var))
            .collect();
        values.sort();
        values.dedup();
        values
    }

    /// Records the model to use (`uji.model.use`), as `provider/model` or
    /// just `provider`.
    pub fn choose(&self, choice: &str) -> Result<Resolved, String> {
        let resolved = self.resolve(Some(choice))?;
        if let Ok(mut chosen) = self.chosen.write() {
            *chosen = Some(choice.to_string());
        }
        Ok(resolved)
    }

    /// The reasoning effort given with the last `model.use` (none when it
    /// gave none).
    pub fn chosen_effort(&self) -> Option<String> {
        self.effort.read().ok().and_then(|e| e.clone())
    }

    fn set_effort(&self, effort: Option<String>) {
        if let Ok(mut slot) = self.effort.write() {
            *slot = effort;
        }
    }

    /// Every model of every provider, with whether its key is set.
    pub fn entries(&self) -> Vec<ModelEntry> {
        let mut entries = Vec::new();
        for provider in self.list() {
            let available = provider
                .key_env
                .as_deref()
                .is_none_or(|var| self.env.get(var).is_some());
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
        self.chosen.read().ok().and_then(|c| c.clone())
    }

    /// What a request will use: `flag` (`--model`), else the configured
    /// choice, else the first built-in provider whose key is set.
    pub fn resolve(&self, flag: Option<&str>) -> Result<Resolved, String> {
        let choice = flag.map(str::to_string).or_else(|| self.chosen());
        let list = self.list();
        let Some(choice) = choice else {
            for provider in &list {
                if provider
                    .key_env
                    .as_deref()
                    .is_some_and(|var| self.env.get(var).is_some())
                    && provider.default_model.is_some()
                {
                    return self.resolve_in(&list, &provider.id, None);
                }
            }
            return Err(NO_PROVIDER.to_string());
        };
        let (provider, model) = match choice.split_once('/') {
            Some((p, m)) if !p.is_empty() && !m.is_empty() => (p.to_string(), Some(m.to_string())),
            _ => (choice.trim_end_matches('/').to_string(), None),
        };
        self.resolve_in(&list, &provider, model.as_deref())
    }

    fn resolve_in(
        &self,
        list: &[Provider],
        provider_id: &str,
        model: Option<&str>,
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
        let model = provider
            .models
            .iter()
            .find(|m| m.id == model_id)
            .cloned()
            .unwrap_or_else(|| ModelInfo::new(model_id));
        let key = match &provider.key_env {
            Some(var) => match self.env.get(var) {
                Some(key) => Some(key),
                None => {
                    return Err(format!(
                        "{var} is not set: export it to use {}, or choose another provider with --model",
                        provider.id
                    ));
                }
            },
            None => None,
        };
        let base_url = provider
            .base_url_env
            .as_deref()
            .and_then(|var| self.env.get(var))
            .unwrap_or_else(|| provider.base_url.clone())
            .trim_end_matches('/')
            .to_string();
        Ok(Resolved {
            provider: provider.clone(),
            model,
            base_url,
            key,
        })
    }

    /// `provider.add`, `provider.list`, `model.use`, `model.current`.
    pub fn install_services(&self, registry: &Registry) {
        let providers = self.clone();
        registry.serve(move |ProviderAdd(provider)| {
            if provider.id.trim().is_empty() {
                return Err("a provider needs a non-empty id".to_string());
            }
            if provider.wire.trim().is_empty() {
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
            let resolved = providers.choose(&choice)?;
            providers.set_effort(request.effort);
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

/// Why there is no model when nothing chose one and no key is set. Read
/// by `uji run` (as its error) and in an interactive session (as a
/// warning), so it names both ways to choose a local model.
pub const NO_PROVIDER: &str = "no model provider is set up: export ANTHROPIC_API_KEY (Anthropic) or OPENAI_API_KEY (OpenAI) before starting uji, use a local Ollama server with --model ollama/MODEL (in a session: /model ollama/MODEL), or add a provider in init.lua with uji.provider.add";

/// What `model.use` says when it is given no model.
pub const MODEL_USE_NEEDS: &str = "model.use needs a model, e.g. \"anthropic/claude-sonnet-4-5\"";

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
        assert_eq!(resolved.label(), "openai/gpt-4.1");
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
            id: "local".into(),
            wire: "openai-chat".into(),
            base_url: "http://127.0.0.1:8080/v1".into(),
            key_env: None,
            base_url_env: None,
            models: vec![ModelInfo {
                id: "m".into(),
                context_window: 4096,
                max_output: Some(512),
            }],
            default_model: Some("m".into()),
            idle_timeout: None,
        });
        p.choose("local").unwrap();
        let resolved = p.resolve(None).unwrap();
        assert_eq!(resolved.label(), "local/m");
        assert_eq!(resolved.model.context_window, 4096);
        assert_eq!(
            p.resolve(Some("anthropic")).unwrap().label(),
            "anthropic/claude-sonnet-4-5",
            "the flag wins"
        );
    }
}
