//! The JSON payloads that cross uji's plugin boundary.
//!
//! The stable ABI (`uji-abi`) only carries small envelopes; everything that is
//! expected to grow travels as JSON in the shapes defined here. Both sides use
//! these types, so unknown fields are ignored and new fields must be optional:
//! that is what lets an older plugin keep working with a newer uji.

pub mod bash;
pub mod canonical;
pub mod diff;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a plugin says about itself before it is initialised (the semantic
/// handshake that complements abi_stable's layout check).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Unique plugin name, e.g. `tools` or `anthropic`.
    pub name: String,
    /// The plugin's own version.
    pub version: String,
    /// The plugin ABI version (`major.minor`) the plugin was built for.
    /// Empty in manifests written before ABI versions existed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub abi_version: String,
    /// What manifests reported before `abi_version`: the `uji-abi` version.
    /// Read only to tell such a plugin which ABI it was built for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sdk_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

impl Manifest {
    /// The ABI the plugin says it was built for: `abi_version`, or the
    /// `sdk_version` of an older manifest. `None` when it reports neither.
    pub fn claimed_abi(&self) -> Option<&str> {
        [&self.abi_version, &self.sdk_version]
            .into_iter()
            .map(|v| v.trim())
            .find(|v| !v.is_empty())
    }
}

/// The decision a tool declares for itself when no policy rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DeclaredPolicy {
    Allow,
    #[default]
    Ask,
    Deny,
}

impl DeclaredPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            DeclaredPolicy::Allow => "allow",
            DeclaredPolicy::Ask => "ask",
            DeclaredPolicy::Deny => "deny",
        }
    }
}

/// How policy rules read a tool's subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SubjectKind {
    /// A file path: rules also match the canonical absolute path, and
    /// confinement applies.
    Path,
    /// A shell command line: rules also match each part of a compound command.
    Command,
    /// Anything else: rules match the subject string as it is.
    #[default]
    Other,
}

/// How a tool call is drawn in a transcript and an approval question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Display {
    /// Transcript verb, followed by the subject: `Read`, `Update`, `Shell`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    /// Title of the approval question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
}

/// A tool as the model and the policy gate see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments.
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
    /// What the tool declares for itself. `None` lets the policy's
    /// top-level default decide when no rule and no tool default apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<DeclaredPolicy>,
    #[serde(default)]
    pub subject: SubjectKind,
    #[serde(default)]
    pub display: Display,
    /// The tool changes files (`edit_file`, `write_file`): the approval
    /// modes apply to it ([`ApprovalMode`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub edits_files: bool,
    /// The tool only reads (`read_file`, `job_output`, an MCP tool with
    /// `readOnlyHint`): no checkpoint is taken before its calls
    /// (docs/checkpoints.md). A tool that does not say so may change files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

impl ToolSpec {
    /// A tool that asks before running, with an empty parameter schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: empty_object_schema(),
            policy: Some(DeclaredPolicy::Ask),
            subject: SubjectKind::Other,
            display: Display::default(),
            edits_files: false,
            read_only: false,
        }
    }

    /// Marks the tool as one that only reads (see [`ToolSpec::read_only`]).
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Marks the tool as one that changes files (see [`ToolSpec::edits_files`]).
    pub fn edits_files(mut self) -> Self {
        self.edits_files = true;
        self
    }

    pub fn parameters(mut self, schema: Value) -> Self {
        self.parameters = schema;
        self
    }

    pub fn policy(mut self, policy: DeclaredPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Runs without asking unless a policy rule says otherwise.
    pub fn allow(self) -> Self {
        self.policy(DeclaredPolicy::Allow)
    }

    pub fn subject_kind(mut self, kind: SubjectKind) -> Self {
        self.subject = kind;
        self
    }

    pub fn verb(mut self, verb: impl Into<String>) -> Self {
        self.display.verb = Some(verb.into());
        self
    }

    pub fn question(mut self, question: impl Into<String>) -> Self {
        self.display.question = Some(question.into());
        self
    }
}

pub fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// One call handed to a tool plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's call id.
    pub id: String,
    /// Decoded arguments. Tools must validate them: the model may send
    /// anything, including a non-object.
    pub args: Value,
    /// The session's working directory.
    pub cwd: String,
    /// When file confinement is on: the canonical directories file tools
    /// may reach (the working directory first, then `uji.tool.roots`).
    /// Tools open paths beneath one of them in one step, so a directory
    /// swapped for a symlink after the gate's check cannot lead outside.
    /// Absent when confinement is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<Vec<String>>,
    /// The OS sandbox a command runs in (`run_command` applies it with
    /// Landlock); absent means none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<CallSandbox>,
    /// Where the call's full output goes when it is too long for the
    /// model ([`spill`]): a file that does not exist yet, in a directory of
    /// the session's that `read_file` may reach. Absent: a fresh name in
    /// the temporary directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill: Option<String>,
    /// The id of the session whose model made the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// How the gate treats the tools that change files (those whose spec sets
/// [`ToolSpec::edits_files`]), chosen by the user for the running uji
/// (Shift+Tab cycles them). Rules, hooks and confinement decide first: a
/// mode never allows what they deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Ask as the policy says.
    #[default]
    Ask,
    /// Edits and writes inside the workspace run without a question.
    AcceptEdits,
    /// Planning: every call to a tool that changes files is denied.
    Plan,
    /// A mode a newer uji reports that this side does not know: show it as
    /// asking. uji refuses it in `set_mode`.
    #[serde(other)]
    Unknown,
}

impl ApprovalMode {
    pub const ALL: [ApprovalMode; 3] = [
        ApprovalMode::Ask,
        ApprovalMode::AcceptEdits,
        ApprovalMode::Plan,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Ask => "ask",
            ApprovalMode::AcceptEdits => "accept_edits",
            ApprovalMode::Plan => "plan",
            ApprovalMode::Unknown => "unknown",
        }
    }

    /// The mode after this one in the Shift+Tab cycle.
    pub fn next(self) -> ApprovalMode {
        match self {
            ApprovalMode::Ask => ApprovalMode::AcceptEdits,
            ApprovalMode::AcceptEdits => ApprovalMode::Plan,
            ApprovalMode::Plan | ApprovalMode::Unknown => ApprovalMode::Ask,
        }
    }
}

/// How far the OS sandbox confines a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No sandbox: the policy alone decides.
    #[default]
    Off,
    /// Reads anywhere, writes nowhere (but `/dev/null`).
    ReadOnly,
    /// Reads anywhere, writes only under the call's writable directories.
    WorkspaceWrite,
}

impl SandboxMode {
    pub const NAMES: [&'static str; 3] = ["off", "read-only", "workspace-write"];

    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
        }
    }

    pub fn parse(name: &str) -> Option<SandboxMode> {
        match name {
            "off" => Some(SandboxMode::Off),
            "read-only" => Some(SandboxMode::ReadOnly),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            _ => None,
        }
    }
}

/// Which hosts a sandboxed command may reach over TCP (`uji.tool.sandbox`'s
/// `network`): as JSON `true` (all), `false` (none) or `{"allow": [hosts]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Network {
    #[default]
    All,
    None,
    /// Only these hosts (`crates.io`, `*.npmjs.org`: a host, or every
    /// host beneath a domain), through uji's proxy.
    Hosts(Vec<String>),
}

impl Network {
    /// "on", "off" or "only crates.io, github.com".
    pub fn describe(&self) -> String {
        match self {
            Network::All => "on".to_string(),
            Network::None => "off".to_string(),
            Network::Hosts(hosts) => format!("only {}", hosts.join(", ")),
        }
    }
}

impl Serialize for Network {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Network::All => serializer.serialize_bool(true),
            Network::None => serializer.serialize_bool(false),
            Network::Hosts(hosts) => {
                use serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("allow", hosts)?;
                map.end()
            }
        }
    }
}

/// What a network setting must look like, for the error.
const NETWORK_SHAPES: &str = "network must be true (every host), false (none) or { allow = { \"crates.io\", \"*.npmjs.org\" } }";

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = Value::deserialize(deserializer)?;
        match value {
            Value::Bool(true) => Ok(Network::All),
            Value::Bool(false) => Ok(Network::None),
            Value::Object(mut map) if map.len() == 1 && map.contains_key("allow") => {
                let hosts = map.remove("allow").unwrap_or_default();
                let hosts: Vec<String> = match hosts {
                    Value::Array(list) => list
                        .into_iter()
                        .map(|h| match h {
                            Value::String(h) => host_pattern(&h).map_err(D::Error::custom),
                            _ => Err(D::Error::custom(NETWORK_SHAPES)),
                        })
                        .collect::<Result<_, _>>()?,
                    _ => return Err(D::Error::custom(NETWORK_SHAPES)),
                };
                Ok(Network::Hosts(hosts))
            }
            _ => Err(D::Error::custom(NETWORK_SHAPES)),
        }
    }
}

/// A host pattern as kept: lower case; a host name (`crates.io`), an IP
/// address, or `*.` and a domain (its hosts beneath it).
fn host_pattern(pattern: &str) -> Result<String, String> {
    let pattern = pattern.trim().to_ascii_lowercase();
    let name = pattern.strip_prefix("*.").unwrap_or(&pattern);
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    if valid {
        Ok(pattern)
    } else {
        Err(format!(
            "network: {pattern:?} is not a host: give a name (crates.io), an address, or *.domain (*.npmjs.org)"
        ))
    }
}

/// The sandbox one call runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSandbox {
    pub mode: SandboxMode,
    /// TCP bind and connect allowed.
    pub network: bool,
    /// Only through uji's proxy on this loopback port: the command's
    /// `HTTP_PROXY`/`HTTPS_PROXY` name it, and TCP connects to any other
    /// port are refused (`network` is then false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<u16>,
    /// The hosts the proxy lets through, for [`CallSandbox::describe`]
    /// (without a `proxy`, none gets through).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Absolute directories writable in `workspace-write`: the workspace
    /// roots, the temporary directory and the user's extra writable roots.
    #[serde(default)]
    pub writable: Vec<String>,
    /// Absolute paths that stay read-only even beneath a writable
    /// directory: the workspace's `.git/config` and `.git/hooks`, uji's
    /// config directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<String>,
    /// Absolute directories a command cannot read (it sees them empty):
    /// uji's data directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden: Vec<String>,
}

impl CallSandbox {
    /// "workspace-write, network off", as `uji policy check` and the
    /// approval question show it.
    pub fn describe(&self) -> String {
        if self.mode == SandboxMode::Off {
            return "off".to_string();
        }
        let network = if self.network {
            "on".to_string()
        } else if self.hosts.is_empty() {
            "off".to_string()
        } else {
            format!("only {}", self.hosts.join(", "))
        };
        format!("{}, network {network}", self.mode.as_str())
    }
}

/// An image attached to a message or a tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub media_type: String,
    /// Base64 without a data: prefix.
    pub data: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A line-based diff that frontends draw. The model never sees it. Bounded
/// as [`diff`] says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    /// Unified-diff text with line numbers in the hunk headers.
    pub unified: String,
    pub added: usize,
    pub removed: usize,
}

/// What a tool returns. `text` is what the model reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ToolOutput {
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<FileDiff>,
    /// A short transcript line, e.g. "Read 40 lines".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// True when the text reports a failure the model should act on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Why it is an error, when uji acts on the reason (the gate, the
    /// frontends): decided on this, never on the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ToolErrorKind>,
    /// What the call spent on models (a subagent's requests), counted in
    /// the calling session's usage, cost and budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<Spent>,
}

/// Model use a tool call paid for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    pub usage: wire::Usage,
    /// Model requests made.
    #[serde(default)]
    pub requests: u64,
    /// Millionths of a US dollar; absent when a model's price is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<u64>,
    /// Child sessions started.
    #[serde(default)]
    pub sessions: u64,
}

/// Why a tool call's output is an error, where uji decides on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorKind {
    /// The user's interrupt stopped the call (or came before it ran).
    Interrupted,
    /// The gate refused the call: a rule, a hook, the user or a timeout.
    Denied,
    /// A kind this uji does not know (from a newer plugin).
    #[serde(other)]
    Other,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            ..Default::default()
        }
    }

    /// An error the model can act on. The text gets the `error: ` prefix the
    /// model is used to seeing from every tool.
    pub fn error(message: impl AsRef<str>) -> Self {
        ToolOutput {
            text: format!("error: {}", message.as_ref()),
            is_error: true,
            ..Default::default()
        }
    }

    /// The output of a call the user's interrupt stopped: an error of kind
    /// [`ToolErrorKind::Interrupted`], so the gate keeps what the tool said.
    pub fn interrupted(message: impl AsRef<str>) -> Self {
        ToolOutput {
            error_kind: Some(ToolErrorKind::Interrupted),
            ..ToolOutput::error(message)
        }
    }

    /// Whether this is the output of an interrupted call.
    pub fn is_interrupted(&self) -> bool {
        self.error_kind == Some(ToolErrorKind::Interrupted)
    }
}

/// Severity of a plugin log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
}

impl LogLevel {
    pub fn to_u8(self) -> u8 {
        self as u8
    }

    pub fn from_u8(level: u8) -> LogLevel {
        match level {
            0 => LogLevel::Debug,
            1 => LogLevel::Info,
            2 => LogLevel::Warn,
            _ => LogLevel::Error,
        }
    }
}

/// Options of a hook registration (`uji.on(event, fn, {priority, name})`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookOptions {
    #[serde(default = "default_priority")]
    pub priority: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Default for HookOptions {
    fn default() -> Self {
        HookOptions {
            priority: default_priority(),
            name: None,
        }
    }
}

fn default_priority() -> i64 {
    50
}

pub mod frontend;
pub mod headless;
pub mod jobs;
pub mod keymap;
pub mod mcp;
pub mod procs;
pub mod services;
pub mod session;
pub mod spill;
pub mod time;
pub mod untrusted;
pub mod web;
pub mod wire;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_spec_defaults_fill_missing_fields() {
        let spec: ToolSpec = serde_json::from_str(r#"{"name":"x"}"#).unwrap();
        assert_eq!(spec.policy, None);
        assert_eq!(spec.subject, SubjectKind::Other);
        assert_eq!(spec.parameters, empty_object_schema());
    }

    #[test]
    fn tool_output_error_is_prefixed_and_flagged() {
        let out = ToolOutput::error("boom");
        assert_eq!(out.text, "error: boom");
        assert!(out.is_error);
        let json = serde_json::to_value(&out).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"text": "error: boom", "is_error": true})
        );
    }

    #[test]
    fn unknown_manifest_fields_are_ignored() {
        let m: Manifest = serde_json::from_str(
            r#"{"name":"a","version":"1","sdk_version":"0.1.0","future":true}"#,
        )
        .unwrap();
        assert_eq!(m.name, "a");
    }

    #[test]
    fn the_claimed_abi_falls_back_to_an_old_manifests_sdk_version() {
        let read = |json: &str| serde_json::from_str::<Manifest>(json).unwrap();
        let new = read(r#"{"name":"a","version":"1","abi_version":"1.0"}"#);
        assert_eq!(new.claimed_abi(), Some("1.0"));
        let old = read(r#"{"name":"a","version":"1","sdk_version":"0.1.0"}"#);
        assert_eq!(old.claimed_abi(), Some("0.1.0"));
        let both = read(r#"{"name":"a","version":"1","abi_version":"1.2","sdk_version":"0.1.0"}"#);
        assert_eq!(both.claimed_abi(), Some("1.2"));
        assert_eq!(read(r#"{"name":"a","version":"1"}"#).claimed_abi(), None);
    }

    #[test]
    fn a_new_manifest_does_not_write_the_old_field() {
        let manifest = Manifest {
            name: "a".to_string(),
            version: "0.9.0".to_string(),
            abi_version: "1.0".to_string(),
            sdk_version: String::new(),
            description: String::new(),
        };
        assert_eq!(
            serde_json::to_value(&manifest).unwrap(),
            serde_json::json!({"name": "a", "version": "0.9.0", "abi_version": "1.0"})
        );
    }
}
