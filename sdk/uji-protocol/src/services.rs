//! Host services: what a plugin asks uji to do, one typed request per
//! service, each naming its method and the type of its answer.
//!
//! They cross the plugin boundary as JSON through `Host::call(method,
//! params)`. Core decodes the parameters into these same types, so the two
//! sides cannot drift apart. As everywhere in this crate, unknown fields are
//! ignored and new fields are optional.

use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::Usage;

/// A host service: a request type, the method it is sent to and what it
/// answers.
pub trait Service: Serialize + DeserializeOwned {
    /// The method name, e.g. `tool.disable`.
    const METHOD: &'static str;
    /// The parameters' shape, for error messages.
    const SHAPE: &'static str;
    /// What the service returns (`()` for JSON `null`).
    type Answer: Serialize + DeserializeOwned;
}

/// How the host's "no such service" error starts, so callers can tell a
/// service this uji does not offer (yet) from one that failed.
pub const NO_SUCH_SERVICE: &str = "uji has no host service named";

/// Parameters a service could not read.
#[derive(Debug, thiserror::Error)]
#[error("{method} expects {shape}: {source}")]
pub struct ParamsError {
    pub method: &'static str,
    pub shape: &'static str,
    #[source]
    pub source: serde_json::Error,
}

/// Reads the parameters of `S`. Missing parameters (`null`) read as `{}`,
/// which is what services without required fields accept.
pub fn decode_params<S: Service>(params: Value) -> Result<S, ParamsError> {
    let params = match params {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    };
    serde_json::from_value(params).map_err(|source| ParamsError {
        method: S::METHOD,
        shape: S::SHAPE,
        source,
    })
}

/// The options `Host::serve` (uji-sdk) registers a handler with: since
/// plugin ABI 1.1, a handler registered with `{"serve": true}` is not an
/// event handler but the host service named by the event. It is called with
/// a [`ServiceRequest`] and answers the service's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServeOptions {
    #[serde(default)]
    pub serve: bool,
}

/// What the handler of a plugin's service receives (see [`ServeOptions`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceRequest {
    /// The plugin that called (`uji` for core itself).
    pub caller: String,
    /// The request, as the caller sent it.
    #[serde(default)]
    pub params: Value,
}

macro_rules! service {
    ($request:ty, $method:literal, $shape:literal, $answer:ty) => {
        impl Service for $request {
            const METHOD: &'static str = $method;
            const SHAPE: &'static str = $shape;
            type Answer = $answer;
        }
    };
}
pub(crate) use service;

// ---- wires, hooks, events, key bindings, config -----------------------------

/// `wire.list`: the names of the registered wires.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireList {}
service!(WireList, "wire.list", "{}", Vec<String>);

/// `command.remove`: removes a plugin's slash command; answers whether it
/// existed (uji's own commands cannot be removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRemove {
    pub name: String,
}
service!(CommandRemove, "command.remove", "{\"name\": string}", bool);

/// `session.reload`: asks the frontend to start uji again on the session
/// (Lua's `uji.reload()`); refused while a turn runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionReload {}
service!(SessionReload, "session.reload", "{}", ());

/// `command.list`: the names of the slash commands plugins added, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandList {}
service!(CommandList, "command.list", "{}", Vec<String>);

/// `command.builtins`: the names of the commands uji itself answers
/// (`undo`, `model`, … and other names for them, such as `models`), sorted:
/// those a command from a Markdown file may not take (docs/context.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandBuiltins {}
service!(CommandBuiltins, "command.builtins", "{}", Vec<String>);

/// `wire.remove`: removes a wire; answers whether it existed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireRemove {
    pub name: String,
}
service!(WireRemove, "wire.remove", "{\"name\": wire}", bool);

/// `hook.remove`: removes the handler `name` of `event`; answers whether it
/// existed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRemove {
    pub event: String,
    pub name: String,
}
service!(
    HookRemove,
    "hook.remove",
    "{\"event\": event, \"name\": handler}",
    bool
);

/// `emit`: runs the handlers of `event` with `payload`; answers what each
/// handler returned, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Emit {
    pub event: String,
    #[serde(default)]
    pub payload: Value,
}
service!(
    Emit,
    "emit",
    "{\"event\": event, \"payload\": any}",
    Vec<Value>
);

/// `keymap.add`: binds `key` in `mode` to `binding` (an action name or
/// `{"command": name}`) for interactive frontends. Also one entry of
/// [`KeymapList`]'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeymapAdd {
    pub mode: String,
    pub key: String,
    #[serde(default)]
    pub binding: Value,
}
service!(
    KeymapAdd,
    "keymap.add",
    "{\"mode\": mode, \"key\": key, \"binding\": action}",
    ()
);

/// `keymap.list`: the key bindings added so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeymapList {}
service!(KeymapList, "keymap.list", "{}", Vec<KeymapAdd>);

/// `config.set`: sets a configuration value every plugin reads with
/// `Host::config(key)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigSet {
    pub key: String,
    #[serde(default)]
    pub value: Value,
}
service!(
    ConfigSet,
    "config.set",
    "{\"key\": key, \"value\": any}",
    ()
);

// ---- tools and the policy ---------------------------------------------------

/// `tool.policy`: adds policy rules (`{tool: {allow, ask, deny, default}}`)
/// to the rule set `name` (`default` when absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolPolicy {
    pub rules: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
service!(
    ToolPolicy,
    "tool.policy",
    "{\"rules\": {tool: {allow, ask, deny}}, \"name\"?: set}",
    PolicyProblems
);

/// The answer of `tool.policy`: one line per rule that was not applied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyProblems {
    #[serde(default)]
    pub problems: Vec<String>,
}

/// `tool.disable`: no call to these tools runs, whatever the rules say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDisable {
    #[serde(deserialize_with = "one_or_many")]
    pub names: Vec<String>,
}
service!(ToolDisable, "tool.disable", "{\"names\": [tool names]}", ());

/// `plugins.allow_replace`: lets plugins replace these tools, which they
/// otherwise cannot when another plugin provides them; answers the tools a
/// refused registration replaced now. Only the user's config may call it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginsAllowReplace {
    #[serde(deserialize_with = "one_or_many")]
    pub names: Vec<String>,
}
service!(
    PluginsAllowReplace,
    "plugins.allow_replace",
    "{\"names\": [tool names]}",
    Vec<String>
);

/// `tool.enable`: undoes `tool.disable`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolEnable {
    #[serde(deserialize_with = "one_or_many")]
    pub names: Vec<String>,
}
service!(ToolEnable, "tool.enable", "{\"names\": [tool names]}", ());

/// `tool.confine`: switches confinement of the file tools on or off
/// (`None` leaves it); answers whether it is on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolConfine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}
service!(
    ToolConfine,
    "tool.confine",
    "{\"enabled\"?: true or false}",
    bool
);

/// `tool.roots`: sets the extra directories the file tools may reach
/// (`None` leaves them); answers the list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRoots {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
}
service!(
    ToolRoots,
    "tool.roots",
    "{\"paths\"?: [directories]}",
    Vec<String>
);

/// `tool.read_roots`: sets the directories only `read_file` may reach
/// besides the working directory and the roots (`None` leaves them);
/// answers the list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolReadRoots {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
}
service!(
    ToolReadRoots,
    "tool.read_roots",
    "{\"paths\"?: [directories]}",
    Vec<String>
);

/// `tool.sandbox`: sets the OS sandbox of `run_command` (fields left out
/// stay as they are); answers the settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSandbox {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<crate::SandboxMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::Network>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writable: Option<Vec<String>>,
}

/// `sandbox.support` (served by the tools plugin): what the OS sandbox of
/// `run_command` can enforce on this machine, for `uji doctor`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxSupport {}

/// The answer to [`SandboxSupport`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxCapabilities {
    /// The kernel's Landlock ABI version, 0 without Landlock.
    pub landlock_abi: i64,
    /// Whether a user and mount namespace can be entered: it keeps
    /// protected paths beneath a writable directory read-only.
    pub namespaces: bool,
}
service!(SandboxSupport, "sandbox.support", "{}", SandboxCapabilities);

/// The sandbox settings: `mode` is `None` until set (then commands run in
/// `workspace-write`, but a call a person allowed once in a question runs
/// with no sandbox).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SandboxSettings {
    pub mode: Option<crate::SandboxMode>,
    pub network: crate::Network,
    pub writable: Vec<String>,
}
service!(
    ToolSandbox,
    "tool.sandbox",
    "{\"mode\"?: \"off\" | \"read-only\" | \"workspace-write\", \"network\"?: true, false or {\"allow\": [hosts]}, \"writable\"?: [directories]}",
    SandboxSettings
);

/// `tool.command_sandbox`: the OS sandbox a command nobody approved runs
/// in now (the one `run_command` gets from the gate unless a person lifts
/// it: the `tool.sandbox` settings, the session's directory as the
/// workspace, the protected paths). Core serves it; the tools plugin asks
/// it for every process it starts for another plugin (`proc.start`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSandbox {}
service!(
    CommandSandbox,
    "tool.command_sandbox",
    "{}",
    crate::CallSandbox
);

/// `tool.remove`: removes a tool; answers whether it existed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRemove {
    pub name: String,
}
service!(ToolRemove, "tool.remove", "{\"name\": tool}", bool);

/// `tool.list`: the names of the registered tools, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolList {}
service!(ToolList, "tool.list", "{}", Vec<String>);

/// `policy.check`: what the gate would decide for a call of `tool` on
/// `subject` with `args` now, the way it decides a call the model makes:
/// disabled, confinement, the `before_tool` hooks (they read `args`), the
/// rules, the session's "allow for this session" answers and the approval
/// mode; only nobody is asked. A tool that reaches further than the
/// subject it was approved for (a redirect to another URL) asks before
/// going on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyCheck {
    pub tool: String,
    pub subject: String,
    /// The arguments such a call would have (`{"url": …}`), for hooks.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub args: Value,
}
service!(
    PolicyCheck,
    "policy.check",
    "{\"tool\": tool, \"subject\": subject, \"args\"?: object}",
    PolicyChecked
);

/// A decision of the gate, as [`PolicyChecked`] says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyDecision {
    Allow,
    Ask,
    Deny,
}

/// The answer of `policy.check`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyChecked {
    pub decision: PolicyDecision,
    /// The rule or fallback that decided, in words.
    pub because: String,
}

/// A list of names, or one name alone.
fn one_or_many<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Names {
        One(String),
        Many(Vec<String>),
    }
    match Names::deserialize(deserializer) {
        Ok(Names::One(one)) => Ok(vec![one]),
        Ok(Names::Many(many)) => Ok(many),
        Err(_) => Err(serde::de::Error::custom(
            "expected a list of tool names (strings)",
        )),
    }
}

// ---- providers and models ---------------------------------------------------

/// Tokens a model can read when its provider does not say.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

fn default_context_window() -> u64 {
    DEFAULT_CONTEXT_WINDOW
}

/// A model a provider offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    /// Tokens the model can read, for compaction.
    #[serde(default = "default_context_window")]
    pub context_window: u64,
    /// Output limit sent with each request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// Whether the model reads images: `Some(false)` declares it takes
    /// none (uji sends a note instead); `None`, not declared, sends them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
    /// Whether the model takes a reasoning effort.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning: bool,
    /// What its tokens cost; none when uji does not know (docs/budgets.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
}

/// Dollars per million tokens, kept in millionths of a dollar so prices
/// compare and add exactly; written and read as a plain number (`1.25`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct PerMillion(pub u64);

impl PerMillion {
    pub fn dollars(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

impl Serialize for PerMillion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.dollars())
    }
}

impl<'de> Deserialize<'de> for PerMillion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let dollars = f64::deserialize(deserializer)?;
        if !dollars.is_finite() || dollars < 0.0 {
            return Err(serde::de::Error::custom(
                "a price is a number of dollars per million tokens, 0 or more",
            ));
        }
        Ok(PerMillion((dollars * 1e6).round() as u64))
    }
}

/// A model's price per million tokens, in US dollars, and when it was
/// checked. Cached tokens without a price of their own cost as input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: PerMillion,
    pub output: PerMillion,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<PerMillion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<PerMillion>,
    /// When (and where) the price was checked, e.g. `2026-12-06`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub checked: String,
}

impl Price {
    /// What `usage` costs, in millionths of a dollar.
    pub fn cost(&self, usage: &crate::wire::Usage) -> u64 {
        let at = |tokens: u64, price: PerMillion| u128::from(tokens) * u128::from(price.0);
        let total = at(usage.input, self.input)
            + at(usage.output, self.output)
            + at(usage.cache_read, self.cache_read.unwrap_or(self.input))
            + at(usage.cache_write, self.cache_write.unwrap_or(self.input));
        u64::try_from(total / 1_000_000).unwrap_or(u64::MAX)
    }
}

impl ModelInfo {
    /// A model with the default context window and no output limit.
    pub fn new(id: impl Into<String>) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            context_window: DEFAULT_CONTEXT_WINDOW,
            max_output: None,
            images: None,
            reasoning: false,
            price: None,
        }
    }

    pub fn context_window(mut self, tokens: u64) -> ModelInfo {
        self.context_window = tokens;
        self
    }

    pub fn max_output(mut self, tokens: u64) -> ModelInfo {
        self.max_output = Some(tokens);
        self
    }
}

/// A provider: a server (or anything else) reached through one wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provider {
    pub id: String,
    /// The name shown to people (`OpenRouter`); the id when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The wire that speaks its API (`anthropic`, `openai-chat`, or one a
    /// plugin registered). Empty in `provider.add` keeps the shipped one.
    #[serde(default)]
    pub wire: String,
    /// Sent to the wire with each request; empty for wires that need none.
    #[serde(default)]
    pub base_url: String,
    /// Environment variable holding the key; none for keyless servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_env: Option<String>,
    /// Other environment variables read, in order, when `key_env` is unset
    /// (`GOOGLE_API_KEY` after `GEMINI_API_KEY`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_env_alt: Vec<String>,
    /// Path under `base_url` that lists models, fetched by `uji login` to
    /// check a key (`models`); none when the provider offers no cheap check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_check: Option<String>,
    /// Environment variable that overrides `base_url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url_env: Option<String>,
    #[serde(default)]
    pub models: Vec<ModelInfo>,
    /// Model used when only the provider is chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Seconds without stream data before a request counts as stalled
    /// (default 120; raise it for slow local models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<u64>,
}

impl Provider {
    /// A provider `id` served by the wire `wire`, with no URL, key or models.
    pub fn new(id: impl Into<String>, wire: impl Into<String>) -> Provider {
        Provider {
            id: id.into(),
            name: String::new(),
            wire: wire.into(),
            base_url: String::new(),
            key_env: None,
            key_env_alt: Vec::new(),
            key_check: None,
            base_url_env: None,
            models: Vec::new(),
            default_model: None,
            idle_timeout: None,
        }
    }

    pub fn base_url(mut self, url: impl Into<String>) -> Provider {
        self.base_url = url.into();
        self
    }

    pub fn key_env(mut self, var: impl Into<String>) -> Provider {
        self.key_env = Some(var.into());
        self
    }

    /// Adds a model; the first one added is the default unless
    /// [`Provider::default_model`] says otherwise.
    pub fn model(mut self, model: ModelInfo) -> Provider {
        self.models.push(model);
        self
    }

    pub fn default_model(mut self, id: impl Into<String>) -> Provider {
        self.default_model = Some(id.into());
        self
    }
}

/// `provider.add`: adds a provider, or merges into the one with the same id
/// (fields given replace, models are added or replaced by id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProviderAdd(pub Provider);
service!(
    ProviderAdd,
    "provider.add",
    "a provider {\"id\", \"wire\", \"base_url\"?, \"models\"?, ...}",
    ()
);

/// `provider.list`: every provider known to this process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderList {}
service!(ProviderList, "provider.list", "{}", Vec<Provider>);

/// `model.use`: chooses the model, as `provider/model` or just `provider`
/// (its default model).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelUse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// With a `model` that has no `/`: the provider it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Reasoning effort for the chosen model (`low`, `medium`, `high`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
}
service!(
    ModelUse,
    "model.use",
    "{\"model\": \"provider/model\" or \"provider\", \"effort\"?: level}",
    ModelChoice
);

impl ModelUse {
    /// `"provider/model"` or `"provider"`.
    pub fn new(choice: impl Into<String>) -> ModelUse {
        ModelUse {
            model: Some(choice.into()),
            ..ModelUse::default()
        }
    }

    pub fn effort(mut self, effort: impl Into<String>) -> ModelUse {
        self.effort = Some(effort.into());
        self
    }

    /// The choice as `provider/model` or `provider`: a bare model id is
    /// joined to `provider`; `None` when neither is given.
    pub fn choice(&self) -> Option<String> {
        match (&self.model, &self.provider) {
            (Some(model), Some(provider)) if !model.contains('/') => {
                Some(format!("{provider}/{model}"))
            }
            (Some(model), _) => Some(model.clone()),
            (None, Some(provider)) => Some(provider.clone()),
            (None, None) => None,
        }
    }
}

/// A chosen model: the answer of `model.use` and `model.current`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChoice {
    pub provider: String,
    pub model: String,
}

/// `model.current`: the model requests use now, or `None` when none can be
/// chosen (no key set, no choice made).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCurrent {}
service!(ModelCurrent, "model.current", "{}", Option<ModelChoice>);

// ---- child processes --------------------------------------------------------

/// `env.child`: which of uji's environment variables no child process may
/// inherit (commands, background jobs, `!cmd`, MCP servers): every provider
/// key variable (the catalogue's and those `uji.provider.add` names) and
/// uji's own `UJI_*` variables, less those the user passes through on
/// purpose. Ask for it at each spawn: `uji.provider.add` may name more.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildEnvRequest {}
service!(ChildEnvRequest, "env.child", "{}", ChildEnv);

/// What a child process inherits of uji's environment: the answer of
/// `env.child`. [`ChildEnv::apply`] puts it on a `Command`; variables the
/// spawner sets on the `Command` itself (an MCP server's `env`) are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildEnv {
    /// Names not inherited, whether they are set now or not.
    #[serde(default)]
    pub withheld: Vec<String>,
    /// When set, only these names are inherited ([`ChildEnv::fallback`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<String>>,
}

/// What a child inherits when uji could not say what to withhold (a
/// plugin run outside uji, an older uji): enough to run programs, nothing
/// that could be a key. `LC_*` variables are kept too.
pub const FALLBACK_INHERITED: [&str; 11] = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ", "PWD",
];

impl ChildEnv {
    /// Fails closed: only [`FALLBACK_INHERITED`] and `LC_*` are inherited.
    pub fn fallback() -> ChildEnv {
        ChildEnv {
            withheld: Vec::new(),
            only: Some(FALLBACK_INHERITED.iter().map(|n| n.to_string()).collect()),
        }
    }

    /// Whether a child must not inherit `name`.
    pub fn withholds(&self, name: &std::ffi::OsStr) -> bool {
        let name = name.to_string_lossy();
        match &self.only {
            Some(only) => !(name.starts_with("LC_") || only.iter().any(|n| *n == name)),
            None => self.withheld.iter().any(|n| *n == name),
        }
    }

    /// The variables of this process's environment a child inherits, for a
    /// `Command` built with `env_clear()`.
    pub fn inherited(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        std::env::vars_os()
            .filter(|(name, _)| !self.withholds(name))
            .collect()
    }

    /// Removes from what `cmd` inherits every variable of this process's
    /// environment it withholds. Variables set on `cmd` itself stay, so the
    /// order of this call and `cmd.env(..)` does not matter.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        let set_on_cmd: Vec<std::ffi::OsString> = cmd
            .get_envs()
            .filter(|(_, value)| value.is_some())
            .map(|(name, _)| name.to_os_string())
            .collect();
        for (name, _) in std::env::vars_os() {
            if self.withholds(&name) && !set_on_cmd.contains(&name) {
                cmd.env_remove(&name);
            }
        }
    }
}

// ---- the running session ----------------------------------------------------

/// `session.info`: facts about the running session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfoRequest {}
service!(SessionInfoRequest, "session.info", "{}", SessionInfo);

/// The answer of `session.info`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub cwd: String,
    /// `provider/model`.
    #[serde(default)]
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// Messages in the session so far.
    #[serde(default)]
    pub messages: u64,
    #[serde(default)]
    pub usage: Usage,
    /// Fields a newer uji adds, kept so they reach the caller (Lua's
    /// `uji.session.info()` shows them).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// `session.facts`: what a turn of the running session is doing and has
/// used, for `uji.session.usage/context/queue/state/elapsed` in Lua.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFactsRequest {}
service!(SessionFactsRequest, "session.facts", "{}", SessionFacts);

/// [`SessionFacts::state`] while a turn runs (from its start to its end, as the agent publishes it).
pub const STATE_WORKING: &str = "working";
/// [`SessionFacts::state`] while nothing runs.
pub const STATE_IDLE: &str = "idle";

/// The answer of `session.facts`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionFacts {
    /// `working` while a turn runs, else `idle` (a `/compact` is no turn).
    #[serde(default)]
    pub state: String,
    /// Seconds since the running turn started; `None` when idle (and while
    /// a compaction asked for with `/compact` runs, which is no turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_secs: Option<f64>,
    /// The texts of the messages typed while a turn runs that wait for it,
    /// oldest first.
    #[serde(default)]
    pub queue: Vec<String>,
    #[serde(default)]
    pub context: ContextFacts,
    #[serde(default)]
    pub usage: UsageFacts,
}

/// How full the model's context is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextFacts {
    /// Tokens the last request's context held (input, cached or not).
    #[serde(default)]
    pub used: u64,
    /// Tokens the current model can read; `None` while there is no model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
}

/// Tokens the session used, as its saved answers and this run counted them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageFacts {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
    /// The four above added (saturating).
    #[serde(default)]
    pub total: u64,
    /// What the last request answered used.
    #[serde(default)]
    pub last: Usage,
    /// Requests answered in this session (its saved answers, then each
    /// answer and summary since).
    #[serde(default)]
    pub requests: u64,
    /// What this run's requests cost, in US dollars; none when a model has
    /// no price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl UsageFacts {
    /// The facts of `usage`, with its total.
    pub fn new(usage: Usage, last: Usage, requests: u64) -> UsageFacts {
        UsageFacts {
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            total: usage.total(),
            last,
            requests,
            cost: None,
        }
    }
}

/// The most messages `session.messages` answers: the newest ones.
pub const MAX_MESSAGE_FACTS: usize = 1_000;
/// The most bytes of one message's text `session.messages` answers; a
/// longer text is cut there (at a character boundary), with no mark.
pub const MAX_MESSAGE_FACT_BYTES: usize = 64 * 1024;

/// `session.messages`: the running session's saved messages, oldest first,
/// for `uji.session.messages()` in Lua. Bounded: at most the newest
/// [`MAX_MESSAGE_FACTS`] (1,000) messages, each text cut at
/// [`MAX_MESSAGE_FACT_BYTES`] (64 KiB).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMessagesRequest {}
service!(
    SessionMessagesRequest,
    "session.messages",
    "{}",
    Vec<MessageFact>
);

/// One message of `session.messages`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageFact {
    /// `user` (the person's message), `context` (a hidden user message: a
    /// `turn_context` addition, a `before_stop` nudge), `assistant`,
    /// `tool`, `shell` (a `!cmd`), `error`, `compaction`, or `system` for
    /// kinds a newer uji saves.
    #[serde(rename = "type")]
    pub r#type: String,
    /// The message's text: a tool's result, a compaction's summary, a
    /// `!cmd`'s command line and (after a newline) its output.
    #[serde(default)]
    pub text: String,
    /// The tool's name, for `tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `session.submit`: a user message for the running session, queued after
/// the running turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSubmit {
    pub text: String,
}
service!(SessionSubmit, "session.submit", "{\"text\": message}", ());

/// `status.set`: puts a short labelled text in interactive frontends'
/// status line (`text` none removes it), e.g. plan mode's `PLAN`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusSet {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}
service!(
    StatusSet,
    "status.set",
    "{\"name\": name, \"text\": text or null}",
    ()
);

/// `session.set_title`: renames the running session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSetTitle {
    pub title: String,
}
service!(
    SessionSetTitle,
    "session.set_title",
    "{\"title\": title}",
    ()
);

/// `session.mode`: switches the approval mode when `mode` is given (as the
/// user's Shift+Tab does; frontends are told); answers the mode in force.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMode {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<crate::ApprovalMode>,
}
service!(
    SessionMode,
    "session.mode",
    "{\"mode\"?: \"ask\" | \"accept_edits\" | \"plan\"}",
    crate::ApprovalMode
);

/// `session.compact`: summarises the running session's history.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCompact {}
service!(SessionCompact, "session.compact", "{}", ());

/// `session.interrupt`: stops the running turn, as the user's interrupt does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInterrupt {}
service!(SessionInterrupt, "session.interrupt", "{}", ());

/// `quit`: ends the session and uji.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quit {}
service!(Quit, "quit", "{}", ());

// ---- MCP servers and questions ---------------------------------------------

/// `mcp.add`, served by the MCP plugin (see [`crate::mcp`]).
pub use crate::mcp::McpAdd;

/// `session.ask`: asks the user of the running session a question that is
/// not about a tool call, through the frontend's approval question (the
/// `approval_request` event with `labels`). Blocks the calling thread until
/// it is answered, so call it from a thread of the plugin's own. Answers the
/// decision (`allow_once`, `allow_session`, `deny`), or `null` when the
/// question timed out or was withdrawn; fails when the session's frontend
/// cannot ask (a headless run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionAsk {
    /// Names the question (its `call_id`), e.g. `mcp-trust`.
    pub id: String,
    /// Who asks, shown like a tool name, e.g. `mcp`.
    pub tool: String,
    /// What it is about, e.g. a path; empty to have the details listed.
    #[serde(default)]
    pub subject: String,
    pub question: String,
    /// Details shown as `key: value` rows.
    #[serde(default)]
    pub details: Value,
    /// What each decision means here, by decision name; the decisions
    /// offered are the keys.
    pub labels: std::collections::BTreeMap<String, String>,
}
service!(
    SessionAsk,
    "session.ask",
    "{\"id\", \"tool\", \"subject\", \"question\", \"details\"?, \"labels\": {decision: label}}",
    Option<String>
);

// ---- checkpoints (docs/checkpoints.md) ---------------------------------------

/// `checkpoint.list`: the running session's checkpoints, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointList {}
service!(
    CheckpointList,
    "checkpoint.list",
    "{}",
    Vec<CheckpointEntry>
);

/// One checkpoint, as `uji checkpoints` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointEntry {
    pub id: u64,
    pub turn: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Why it was taken: the call about to run, `turn end`, `before undo…`.
    pub reason: String,
    /// Files changed since the checkpoint before.
    pub changed: u64,
    /// Bytes of new content it stored.
    pub stored: u64,
    /// Files it could not keep (over a limit).
    pub skipped: u64,
}

/// `checkpoint.restore`: what `/undo` and `/redo` do, for plugins. One of
/// `undo`, `redo`, `turn` (that turn's changes undone) or `rewind` (the
/// code back to before that turn); `dry_run` only plans; `overwrite` also
/// puts back files changed since (no question is asked).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointRestore {
    #[serde(default)]
    pub undo: bool,
    #[serde(default)]
    pub redo: bool,
    #[serde(default)]
    pub turn: Option<u64>,
    #[serde(default)]
    pub rewind: Option<u64>,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub overwrite: bool,
}
service!(
    CheckpointRestore,
    "checkpoint.restore",
    "{\"undo\"?: true, \"redo\"?: true, \"turn\"?: N, \"rewind\"?: N, \"dry_run\"?, \"overwrite\"?}",
    CheckpointRestored
);

/// What a restore does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoreAction {
    /// Its kept content (and mode) written over it.
    Restore,
    /// It is gone: written again.
    Recreate,
    /// It did not exist then: removed.
    Remove,
    /// Its content was not kept (`why` says why).
    Cannot,
}

/// What a restore does (or did) to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoredFile {
    pub path: String,
    pub action: RestoreAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Why the file counts as changed since, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
    /// After the restore: whether the file was changed (false for a dry
    /// run, a conflict left alone, a failure).
    #[serde(default)]
    pub done: bool,
    /// Why it could not be changed, when that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// The answer of `checkpoint.restore`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointRestored {
    /// What was restored, in words ("undo of turn 3").
    pub title: String,
    pub files: Vec<RestoredFile>,
    /// Whether files were changed (not a dry run).
    pub applied: bool,
}

// ---- HTTP for plugins -------------------------------------------------------

/// The most HTTP requests open at once in one uji process (`http.open`
/// fails past it until one is read to its end or closed).
pub const HTTP_MAX_OPEN: usize = 16;
/// `timeout_ms` when not given: 30 s.
pub const HTTP_DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// `idle_ms` when not given: 120 s.
pub const HTTP_DEFAULT_IDLE_MS: u64 = 120_000;
/// `max_bytes` of `http.read` when not given: 64 KiB.
pub const HTTP_DEFAULT_READ_BYTES: u64 = 64 * 1024;
/// The most redirects `http.open` follows.
pub const HTTP_MAX_REDIRECTS: usize = 10;
/// The most bytes of a body the Lua side reads for a request that is not
/// streamed (`uji.http.request`): core bounds no body, its reader does.
pub const HTTP_MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

fn default_method() -> String {
    "GET".to_string()
}

/// `http.open`: sends an HTTP request through uji's own client (reqwest
/// with rustls: a plugin links no TLS stack of its own) and answers once
/// the response's status and headers arrived; the body is read with
/// [`HttpRead`]. Blocks the calling thread, so call it from a thread of the
/// plugin's own. Only `http` and `https` URLs; at most
/// [`HTTP_MAX_REDIRECTS`] redirects are followed. Proxies come from
/// `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` (loopback hosts
/// are always reached directly); certificates are checked against the
/// built-in Mozilla roots and those of the PEM file `SSL_CERT_FILE`
/// names. A status of 4xx or 5xx is a response like any other; a
/// transport failure (refused, DNS, TLS, timeout) is an error naming the
/// URL and the cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpOpen {
    /// `GET` when not given.
    #[serde(default = "default_method")]
    pub method: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Milliseconds the whole request may take, from sending it to the end
    /// of its body ([`HTTP_DEFAULT_TIMEOUT_MS`] when not given); for a
    /// `stream`, only until the response's headers arrive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Milliseconds the body may go without data before reading it fails
    /// ([`HTTP_DEFAULT_IDLE_MS`] when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_ms: Option<u64>,
    /// A stream (server-sent events, a long download): no limit on the
    /// whole request, only `idle_ms` between pieces of data.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    /// Whether redirects are followed (at most [`HTTP_MAX_REDIRECTS`]);
    /// `None` is `true`. With `false` a 3xx is answered as it is, its
    /// `location` header naming the next URL: a caller that checks every
    /// hop (`web_fetch` asks the policy about each) follows them itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_redirects: Option<bool>,
    /// The search backend whose key core adds to the request (the plugin
    /// never sees it). Core refuses the request when the URL's origin is
    /// not that backend's (its default, or the `url` init.lua gave it),
    /// and never follows a redirect of such a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<crate::web::SearchBackend>,
}

impl HttpOpen {
    /// A `GET` of `url` with the default limits.
    pub fn get(url: impl Into<String>) -> HttpOpen {
        HttpOpen {
            method: default_method(),
            url: url.into(),
            headers: Default::default(),
            body: None,
            timeout_ms: None,
            idle_ms: None,
            stream: false,
            follow_redirects: None,
            auth: None,
        }
    }
}
service!(
    HttpOpen,
    "http.open",
    "{\"url\": http(s) URL, \"method\"?: \"GET\", \"headers\"?: {name: value}, \"body\"?: text, \"timeout_ms\"?: ms, \"idle_ms\"?: ms, \"stream\"?: true or false, \"follow_redirects\"?: true or false, \"auth\"?: search backend}",
    HttpOpened
);

/// The answer of `http.open`: the response, its body still to read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpOpened {
    /// Names the request to [`HttpRead`] and [`HttpClose`].
    pub id: u64,
    pub status: u16,
    /// Lower-case names; a header sent several times has its values joined
    /// with `", "`.
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// The URL that answered, after redirects.
    #[serde(default)]
    pub url: String,
}

/// `http.read`: the next piece of a response's body. Blocks the calling
/// thread until data arrives, the body ends, or `wait_ms` passes (then it
/// answers no data, not done). Once it answers `done` the id is forgotten;
/// a failure (the connection broke, `idle_ms` or `timeout_ms` passed)
/// forgets it too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpRead {
    pub id: u64,
    /// Most bytes of the body to take ([`HTTP_DEFAULT_READ_BYTES`] when not
    /// given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// Most milliseconds to wait for data.
    pub wait_ms: u64,
}
service!(
    HttpRead,
    "http.read",
    "{\"id\": request id, \"max_bytes\"?: bytes, \"wait_ms\": ms}",
    HttpChunk
);

/// A piece of a body: the answer of `http.read`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpChunk {
    /// The body's bytes as UTF-8: a byte that is not becomes U+FFFD, and a
    /// character is never split between two pieces (a piece takes at most
    /// `max_bytes` of the body, or one whole character when that is less).
    #[serde(default)]
    pub data: String,
    /// The body ended with this piece.
    #[serde(default)]
    pub done: bool,
}

/// `http.close`: drops a request and its connection; an id that is not
/// open (closed, read to its end) is fine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpClose {
    pub id: u64,
}
service!(HttpClose, "http.close", "{\"id\": request id}", ());

// ---- dialogs -----------------------------------------------------------------

pub use crate::frontend::{DialogAnswer, DialogKind};

/// `ui.dialog`: asks the person a question through the session's frontend
/// (the `dialog` event): pick one of `items` (`select`), type a line
/// (`prompt`) or say yes or no (`confirm`). Blocks the calling thread until
/// it is answered, dismissed (`cancelled`), `timeout_ms` passes
/// (`timed_out`) or the session ends (an error), so call it from a thread
/// of the plugin's own. Fails at once when the frontend cannot show
/// dialogs, or cannot show this one (`uji run` cannot show a select or a
/// prompt, and answers a confirm with no).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UiDialog {
    pub kind: DialogKind,
    pub title: String,
    /// A select's items (at least one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<String>,
    /// A select's item the list opens on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<usize>,
    /// A prompt's prefilled text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A prompt whose text is masked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// A confirm's details, shown under the title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// How long to wait for an answer; none: until answered or the session
    /// ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}
service!(
    UiDialog,
    "ui.dialog",
    "{\"kind\": \"select\" | \"prompt\" | \"confirm\", \"title\", \"items\"?, \"current\"?, \"value\"?, \"hidden\"?, \"body\"?, \"timeout_ms\"?}",
    DialogAnswer
);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn wire<S: Service>(request: &S) -> Value {
        serde_json::to_value(request).unwrap()
    }

    fn wire_answer<A: Serialize>(answer: &A) -> Value {
        serde_json::to_value(answer).unwrap()
    }

    #[test]
    fn a_dialog_request_needs_only_its_kind_and_title_and_a_newer_kind_is_unknown() {
        let select: UiDialog =
            decode_params(json!({"kind": "select", "title": "Branch", "items": ["a"]})).unwrap();
        assert_eq!(select.kind, DialogKind::Select);
        assert_eq!(
            (select.current, select.timeout_ms, select.hidden),
            (None, None, false)
        );
        let newer: UiDialog = decode_params(json!({"kind": "colour", "title": "t"})).unwrap();
        assert_eq!(newer.kind, DialogKind::Unknown);
        let answer: DialogAnswer = serde_json::from_value(json!({"type": "timed_out"})).unwrap();
        assert_eq!(answer, DialogAnswer::TimedOut);
    }

    #[test]
    fn requests_serialize_to_the_shapes_core_has_always_read() {
        assert_eq!(
            wire(&ToolPolicy {
                rules: json!({"run_command": {"allow": ["ls"]}}),
                name: Some("ci".into())
            }),
            json!({"rules": {"run_command": {"allow": ["ls"]}}, "name": "ci"})
        );
        assert_eq!(
            wire(&ToolDisable {
                names: vec!["write_file".into()]
            }),
            json!({"names": ["write_file"]})
        );
        assert_eq!(wire(&ToolConfine::default()), json!({}));
        assert_eq!(
            wire(&ModelUse::new("a/b").effort("high")),
            json!({"model": "a/b", "effort": "high"})
        );
        assert_eq!(
            wire(&ProviderAdd(
                Provider::new("echo", "echo").model(ModelInfo::new("m"))
            )),
            json!({"id": "echo", "wire": "echo", "base_url": "",
                   "models": [{"id": "m", "context_window": 128000}]})
        );
        assert_eq!(wire(&Quit {}), json!({}));
    }

    #[test]
    fn null_reads_as_no_parameters_and_one_name_as_a_list() {
        assert_eq!(
            decode_params::<ToolConfine>(Value::Null).unwrap(),
            ToolConfine::default()
        );
        let one: ToolEnable = decode_params(json!({"names": "x"})).unwrap();
        assert_eq!(one.names, ["x"]);
        let unknown: WireRemove = decode_params(json!({"name": "w", "later": 1})).unwrap();
        assert_eq!(unknown.name, "w");
    }

    #[test]
    fn bad_parameters_name_the_method_and_the_shape() {
        let e = decode_params::<ToolDisable>(json!({"names": [1]})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tool.disable expects {\"names\": [tool names]}: expected a list of tool names (strings)"
        );
        let e = decode_params::<SessionSubmit>(json!({})).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("session.submit expects {\"text\": message}: missing field `text`"),
            "{e}"
        );
    }

    #[test]
    fn session_facts_and_messages_have_the_shapes_lua_reads() {
        let facts = SessionFacts {
            state: STATE_IDLE.to_string(),
            usage: UsageFacts::new(
                Usage {
                    input: 5,
                    output: 2,
                    cache_read: 10,
                    cache_write: u64::MAX,
                },
                Usage::default(),
                3,
            ),
            ..SessionFacts::default()
        };
        let sent = wire_answer(&facts);
        // No elapsed time when idle; the total saturates.
        assert_eq!(sent.get("elapsed_secs"), None);
        assert_eq!(sent["usage"]["total"], json!(u64::MAX));
        assert_eq!(sent["usage"]["requests"], json!(3));
        assert_eq!(sent["context"], json!({"used": 0}));
        let fact = MessageFact {
            r#type: "tool".to_string(),
            text: "ok".to_string(),
            name: Some("read_file".to_string()),
        };
        assert_eq!(
            wire_answer(&fact),
            json!({"type": "tool", "text": "ok", "name": "read_file"})
        );
    }

    #[test]
    fn an_http_request_is_a_get_unless_it_says_and_a_read_says_how_long_to_wait() {
        let open: HttpOpen = decode_params(json!({"url": "https://example.com/"})).unwrap();
        assert_eq!(open, HttpOpen::get("https://example.com/"));
        assert_eq!(open.method, "GET");
        assert_eq!(
            wire(&open),
            json!({"method": "GET", "url": "https://example.com/"})
        );
        let e = decode_params::<HttpRead>(json!({"id": 1})).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "http.read expects {\"id\": request id, \"max_bytes\"?: bytes, \"wait_ms\": ms}: missing field `wait_ms`"
            ),
            "{e}"
        );
    }

    #[test]
    fn session_info_reads_what_the_session_server_sends() {
        // The shape core's session.info answers with (server.rs).
        let sent = json!({"id": "s1", "title": "t", "cwd": "/w", "model": "echo/parrot",
                          "messages": 3, "usage": {"input": 5, "output": 2}, "turns": 1});
        let info: SessionInfo = serde_json::from_value(sent).unwrap();
        assert_eq!(
            (
                info.model.as_str(),
                info.messages,
                info.usage.input,
                info.effort
            ),
            ("echo/parrot", 3, 5, None)
        );
        assert_eq!(info.extra.get("turns"), Some(&json!(1)));
    }
}
