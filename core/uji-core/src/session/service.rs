//! The session service: creates, resumes, lists and deletes sessions and
//! builds the agent that runs one. `uji run`, `uji resume`, every frontend
//! plugin (through the session server's operations) and the tests start
//! sessions here and nowhere else.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use uji_host::Registry;
use uji_protocol::frontend::{
    CommandInfo, NoticeLevel, PROTOCOL_VERSION, SessionConfigured, ToolInfo, UiSettings,
};
use uji_protocol::session::{MessageBody, StoredMessage};

use crate::auth::providers::{Providers, Resolved};
use crate::boot::Booted;
use crate::gate::{Approver, Gate, HeadlessApprover};
use crate::session::store::{SessionFile, SessionSummary, Store, StoreError};
use crate::turn::agent::{Agent, TurnSettings, offered};

/// Why a session could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No usable model: the message says what to set.
    #[error("{0}")]
    Model(String),
    #[error(
        "--tools names {0:?}, which no loaded plugin provides; `uji tool list` shows the tools"
    )]
    UnknownTool(String),
    #[error("no saved session in this directory; `uji list --all` shows sessions elsewhere")]
    NoneToResume,
    #[error("cannot save the session: {0}")]
    Create(StoreError),
    #[error("several saved sessions start with {prefix:?} ({ids}); give more of the id")]
    Ambiguous { prefix: String, ids: String },
}

pub use uji_protocol::frontend::answers::SHORT_ID;

/// Who answers approval questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approvals {
    /// The frontend, with `approval_request` events.
    Frontend,
    /// Nobody: `yes` allows every ask (`--yes`), otherwise asks are denied
    /// with a message saying how to allow them.
    Automatic { yes: bool },
}

/// What every session of this process is run with (the `uji run` flags).
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// `provider/model` (`--model`); else the config's choice.
    pub model: Option<String>,
    pub effort: Option<String>,
    /// Offer only these tools (`--tools`).
    pub tools: Option<Vec<String>>,
    pub append_prompt: Option<String>,
    pub approvals: Approvals,
    /// Open a session even when no model is usable yet (interactive
    /// frontends: the session says how to set one up and `set_model` can
    /// choose one). `uji run` leaves it off and fails before starting.
    pub open_without_model: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            model: None,
            effort: None,
            tools: None,
            append_prompt: None,
            approvals: Approvals::Frontend,
            open_without_model: false,
        }
    }
}

/// Which session to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// A fresh one; without a title it takes its first message's first
    /// line. With a parent it is a subagent's: left out of the lists.
    New {
        title: Option<String>,
        parent: Option<String>,
    },
    /// A saved one, by id.
    Resume(String),
    /// The newest saved session of the working directory.
    Latest,
}

/// The sessions of one working directory, and how to run them.
#[derive(Clone)]
pub struct Sessions {
    pub registry: Registry,
    pub gate: Gate,
    pub providers: Providers,
    store: Store,
    data: PathBuf,
    cwd: PathBuf,
    options: Arc<SessionOptions>,
}

/// A built-in slash command.
struct Builtin {
    name: &'static str,
    description: &'static str,
}

/// The commands core answers itself (a plugin's command of the same name
/// replaces one).
const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "help",
        description: "List the slash commands",
    },
    Builtin {
        name: "model",
        description: "Show or switch the model: /model provider/model [effort]",
    },
    Builtin {
        name: "effort",
        description: "Set the reasoning effort: /effort off|minimal|low|medium|high|xhigh|max",
    },
    Builtin {
        name: "undo",
        description: "Put back the files the last turn changed (by any tool, commands included)",
    },
    Builtin {
        name: "redo",
        description: "Take back the last /undo",
    },
    Builtin {
        name: "compact",
        description: "Summarise earlier messages now",
    },
    Builtin {
        name: "new",
        description: "Start a fresh session in this directory",
    },
    Builtin {
        name: "clear",
        description: "Start a fresh session in this directory (as /new)",
    },
    Builtin {
        name: "resume",
        description: "Switch to a saved session: /resume ID (its first 8 characters do)",
    },
    Builtin {
        name: "status",
        description: "Model, directory, session, context, tokens, sandbox, mode, MCP servers",
    },
    Builtin {
        name: "diff",
        description: "What changed: git diff of the workspace, or this session's edits",
    },
    Builtin {
        name: "export",
        description: "Save the conversation as Markdown: /export [FILE]",
    },
    Builtin {
        name: "init",
        description: "Ask the model to write an AGENTS.md for this repository",
    },
    Builtin {
        name: "sessions",
        description: "List the saved sessions of this directory",
    },
    Builtin {
        name: "title",
        description: "Rename this session: /title TEXT",
    },
    Builtin {
        name: "quit",
        description: "End the session",
    },
];

/// Other names of built-in commands: `/models` is the public uji's name
/// for `/model`.
const ALIASES: &[(&str, &str)] = &[("models", "model")];

/// The built-in command `name` stands for (itself, or the one it is another
/// name of); `None` when core does not answer it.
pub fn builtin_command(name: &str) -> Option<&'static str> {
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, builtin)| *builtin);
    BUILTINS.iter().find(|b| b.name == name).map(|b| b.name)
}

/// Every name core answers as a command (its built-ins and their other
/// names), sorted.
pub fn builtin_command_names() -> Vec<String> {
    let names = BUILTINS.iter().map(|b| b.name);
    let mut names: Vec<String> = names
        .chain(ALIASES.iter().map(|(alias, _)| *alias))
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

/// Serves `command.builtins`: the names of [`builtin_command_names`], so a
/// plugin (the Lua modules' command files) can keep clear of them.
pub fn install_builtin_names(registry: &Registry) {
    registry.serve(|_: uji_protocol::services::CommandBuiltins| Ok(builtin_command_names()));
}

impl Sessions {
    /// Checks the options against what loaded (`--tools` names, `--model`)
    /// and makes `--model` the choice every session starts with.
    pub fn new(booted: &Booted, options: SessionOptions) -> Result<Sessions, SessionError> {
        if let Some(only) = &options.tools
            && let Some(missing) = only.iter().find(|n| booted.registry.tool(n).is_none())
        {
            return Err(SessionError::UnknownTool(missing.clone()));
        }
        if let Some(model) = &options.model {
            booted
                .providers
                .choose(model)
                .map_err(SessionError::Model)?;
        }
        Ok(Sessions {
            registry: booted.registry.clone(),
            gate: booted.gate.clone(),
            providers: booted.providers.clone(),
            store: Store::new(&booted.dirs.data),
            data: booted.dirs.data.clone(),
            cwd: booted.cwd.clone(),
            options: Arc::new(options),
        })
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    /// Saved sessions of this directory (or all), newest first.
    pub fn list(&self, all: bool) -> Vec<SessionSummary> {
        let cwd = self.cwd.to_string_lossy();
        self.store
            .list()
            .into_iter()
            .filter(|s| s.parent.is_none() && (all || s.cwd == cwd))
            .collect()
    }

    /// Deletes a saved session; false if there was none with that id.
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.store.delete(id)
    }

    fn open(&self, start: &Start) -> Result<(SessionFile, bool), SessionError> {
        match start {
            Start::New { title, parent } => {
                let title = title.as_deref().unwrap_or_default();
                let session = self
                    .store
                    .create_with(&self.cwd, title, parent.as_deref())
                    .map_err(SessionError::Create)?;
                Ok((session, false))
            }
            Start::Resume(id) => Ok((self.store.open(&self.full_id(id)?)?, true)),
            Start::Latest => match self.store.latest_in(&self.cwd) {
                Some(latest) => Ok((self.store.open(&latest.id)?, true)),
                None => Err(SessionError::NoneToResume),
            },
        }
    }

    /// The saved session `id` names: itself, or the one session (of any
    /// directory) whose id starts with it, as the picker's short ids do.
    fn full_id(&self, id: &str) -> Result<String, SessionError> {
        let id = id.trim();
        // A whole id needs no search (and too short a part gets none).
        if id.len() < SHORT_ID || crate::session::store::valid_id(id) {
            return Ok(id.to_string());
        }
        let known = self.store.list();
        let matching: Vec<&str> = known
            .iter()
            .map(|s| s.id.as_str())
            .filter(|known| known.starts_with(id))
            .collect();
        match matching.as_slice() {
            [] => Ok(id.to_string()),
            [only] => Ok((*only).to_string()),
            several => Err(SessionError::Ambiguous {
                prefix: id.to_string(),
                ids: several.join(", "),
            }),
        }
    }

    /// The screen settings `uji.ui.configure` stored (checked there).
    fn ui_settings(&self) -> UiSettings {
        self.registry
            .config("ui")
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    }

    /// The messages of saved session `id` as they are now (the running
    /// session's too: its file is read, not opened for writing).
    pub fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.store.read(id)
    }

    /// Opens the session `start` names and builds its agent. A new
    /// session's model is resolved first, so a missing key leaves no empty
    /// session behind (unless the options open sessions without a model);
    /// a resumed one comes back on the model and effort it last used.
    pub fn start(&self, start: &Start) -> Result<(Agent, bool), SessionError> {
        // A plugin the workspace configures (the MCP client and a
        // project's .mcp.json) is opened before the session exists, so it
        // hears the session start like every plugin loaded at boot.
        self.registry.open_for_workspace(&self.cwd);
        let opened = match start {
            Start::New { .. } => None,
            Start::Resume(_) | Start::Latest => Some(self.open(start)?),
        };
        let last = opened
            .as_ref()
            .and_then(|(session, _)| last_choice(session));
        let model = match self.model_for(last.as_ref()) {
            Ok(model) => {
                if let Some(notice) = model.notice() {
                    self.registry
                        .notify_at(NoticeLevel::Warn, "providers", &notice);
                }
                Ok(model)
            }
            Err(missing) if self.options.open_without_model => Err(missing),
            Err(missing) => return Err(SessionError::Model(missing)),
        };
        let effort = self
            .options
            .effort
            .clone()
            .or_else(|| last.and_then(|choice| choice.effort));
        let (session, resumed) = match opened {
            Some(opened) => opened,
            None => self.open(start)?,
        };
        // A session starts with no "allow for this session" answers: not
        // even a `uji run --parent ID` gets its parent's (another process
        // is not the parent's person's session; uji's own subagents read
        // their parent's in the process, `SessionRules::of_subagent`).
        self.gate.session_rules().reset(session.id());
        let secrets = self.providers.secret_values();
        self.gate.set_spill(
            crate::session::spills::session_dir(&self.data, session.id()),
            secrets.clone(),
        );
        let approver: Arc<dyn Approver> = match self.options.approvals {
            Approvals::Automatic { yes } => Arc::new(HeadlessApprover { yes }),
            // The session server installs the frontend's approver.
            Approvals::Frontend => Arc::new(HeadlessApprover { yes: false }),
        };
        let settings = TurnSettings {
            idle_timeout: model.as_ref().ok().and_then(|m| m.provider.idle_timeout),
            model,
            tools: self.options.tools.clone(),
            append_prompt: self.options.append_prompt.clone(),
            effort,
            cwd: self.cwd.clone(),
            secrets,
            budget: None,
            subagent_of: None,
        };
        // Usage is tracked per session: a resumed one starts from what its
        // saved answers used.
        let agent = Agent::new(
            self.gate.clone(),
            self.registry.clone(),
            session,
            settings,
            approver,
        );
        Ok((agent, resumed))
    }

    /// The model a session starts on: `--model` when given, else the one a
    /// resumed session last used while it can still be used, else the
    /// configured one (with a notice saying why).
    fn model_for(&self, last: Option<&LastChoice>) -> Result<Resolved, String> {
        let Some(last) = last.filter(|_| self.options.model.is_none()) else {
            return self.providers.resolve(None);
        };
        match self.providers.resolve(Some(&last.model)) {
            Ok(model) => Ok(model),
            Err(why) => {
                let model = self.providers.resolve(None)?;
                self.registry.notify_at(
                    NoticeLevel::Warn,
                    "providers",
                    &format!(
                        "this session last used {}, which cannot be used now ({why}); it goes on with {}",
                        last.model,
                        model.label()
                    ),
                );
                Ok(model)
            }
        }
    }

    /// The slash commands a frontend can offer: built-ins, then plugin
    /// commands (which replace a built-in of the same name), by name.
    pub fn commands(&self) -> Vec<CommandInfo> {
        let mut commands: Vec<CommandInfo> = BUILTINS
            .iter()
            .filter(|b| self.registry.command(b.name).is_none())
            .map(|b| CommandInfo {
                name: b.name.to_string(),
                description: b.description.to_string(),
                source: "uji".to_string(),
            })
            .collect();
        // A leading `_` marks a command bound to a key, not one to list.
        let plugin_commands = self.registry.commands();
        let listed = plugin_commands
            .iter()
            .filter(|c| !c.name().starts_with('_'));
        commands.extend(listed.map(|c| CommandInfo {
            name: c.name().to_string(),
            description: c.description().to_string(),
            source: c.plugin().to_string(),
        }));
        commands.sort_by(|a, b| a.name.cmp(&b.name));
        commands
    }

    /// The `session_configured` event for `agent`'s session.
    pub fn configured(&self, agent: &Agent, resumed: bool) -> SessionConfigured {
        let history = agent
            .messages()
            .iter()
            .filter(|m| !matches!(m.body, MessageBody::User { hidden: true, .. }))
            .cloned()
            .collect();
        let tools = self
            .registry
            .tools()
            .iter()
            .map(|t| t.spec())
            .filter(|spec| offered(&self.options.tools, &spec.name))
            .map(|spec| ToolInfo {
                name: spec.name.clone(),
                description: spec.description.clone(),
                verb: spec.display.verb.clone(),
            })
            .collect();
        let keymap = self
            .registry
            .config("keymap")
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default();
        SessionConfigured {
            protocol: PROTOCOL_VERSION,
            id: agent.id().to_string(),
            resumed,
            cwd: agent.cwd().to_string(),
            title: agent.title().to_string(),
            model: agent.model_state(),
            history,
            commands: self.commands(),
            keymap,
            ui: self.ui_settings(),
            tools,
            usage: agent.usage(),
            mode: self.gate.mode(),
            status: Default::default(),
        }
    }
}

/// The model and effort a saved session's last answer came from.
struct LastChoice {
    model: String,
    effort: Option<String>,
}

fn last_choice(session: &SessionFile) -> Option<LastChoice> {
    session.messages.iter().rev().find_map(|m| match &m.body {
        MessageBody::Assistant {
            model: Some(model),
            effort,
            ..
        } => Some(LastChoice {
            model: model.clone(),
            effort: effort.clone(),
        }),
        _ => None,
    })
}
