//! uji's stable ABI: the only crate that names `abi_stable`.
//!
//! A plugin is a cdylib exporting one root module ([`PluginModule`]) with two
//! entry points: `manifest` (the semantic handshake) and `init`, which receives
//! a [`HostBox`] and registers what the plugin provides. Everything that will
//! evolve crosses as JSON strings (shapes in `uji-protocol`); the traits here are
//! small envelopes around them.
//!
//! Asynchronous work crosses as callbacks, never futures: the host hands a
//! plugin an object it finishes exactly once (a [`ToolCallBox`] or a
//! [`WireReplyBox`]) and the plugin may return a [`CancelBox`]. A plugin cannot
//! use the host's tokio runtime (a cdylib has its own copy of tokio's statics),
//! so plugins that need async I/O run their own.
//!
//! Evolution rules: only append methods after the `#[sabi(last_prefix_field)]`
//! ones, never reorder or remove. Bump the minor version of this crate for any
//! ABI change while it is 0.x: abi_stable refuses libraries whose 0.x minor
//! differs, and the host's handshake says which version a plugin needs.
//!
//! Plugin authors use `uji-sdk`, which implements these traits for plain Rust
//! types and catches every panic before it can reach an `extern "C"` boundary.

// abi_stable's derives expand impl blocks inside consts.
#![allow(non_local_definitions)]
// ...and by-value trait methods with casts clippy finds redundant.
#![allow(clippy::unnecessary_cast)]

pub use abi_stable::std_types::{RBox, ROption, RResult, RStr, RString, RVec};
use abi_stable::{
    StableAbi, declare_root_module_statics, library::RootModule, package_version_strings,
    sabi_trait, sabi_types::VersionStrings,
};

/// The version of this ABI crate. Plugins report the version they were built
/// against in their manifest; the host compares it with its own.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Whether a plugin built against `plugin_sdk` can be used by a host with
/// `host_sdk`: same major (and same minor while the major is 0), and the
/// plugin must not be newer than the host.
pub fn sdk_compatible(host_sdk: &str, plugin_sdk: &str) -> bool {
    let (Some(host), Some(plugin)) = (parse_version(host_sdk), parse_version(plugin_sdk)) else {
        return false;
    };
    if host.0 != plugin.0 {
        return false;
    }
    if host.0 == 0 {
        return host.1 == plugin.1 && plugin.2 <= host.2;
    }
    plugin.1 <= host.1
}

fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let core = text.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// An error a plugin reports. `panicked` marks a caught panic: the host then
/// marks the plugin failed for the rest of the session.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub message: RString,
    pub panicked: bool,
}

impl Fault {
    pub fn error(message: impl Into<String>) -> Fault {
        Fault {
            message: RString::from(message.into()),
            panicked: false,
        }
    }

    pub fn panic(message: impl Into<String>) -> Fault {
        Fault {
            message: RString::from(message.into()),
            panicked: true,
        }
    }
}

/// Capabilities the host hands to a plugin. Plugins register everything they
/// provide through it and never get authority the host cannot see.
#[sabi_trait]
pub trait Host: Send + Sync {
    /// Registers a tool (spec JSON from [`Tool::spec`]).
    fn register_tool(&self, tool: ToolBox) -> RResult<(), RString>;
    /// Registers a model-API adapter under `name` (e.g. `anthropic`).
    fn register_wire(&self, name: RString, wire: WireBox) -> RResult<(), RString>;
    /// Registers a user interface under `name` (e.g. `tui`).
    fn register_frontend(&self, name: RString, frontend: FrontendBox) -> RResult<(), RString>;
    /// Registers a handler for `event`; `options_json` is a `HookOptions`.
    fn register_hook(
        &self,
        event: RString,
        options_json: RString,
        hook: HookBox,
    ) -> RResult<(), RString>;
    /// Registers a slash command.
    fn register_command(
        &self,
        name: RString,
        description: RString,
        command: CommandBox,
    ) -> RResult<(), RString>;
    /// Shows a notice to the user.
    fn notify(&self, text: RStr<'_>);
    /// Writes a line to uji's log; `level` is a `LogLevel` as u8.
    fn log(&self, level: u8, message: RStr<'_>);
    /// Reads a configuration value as JSON (`None` when unset).
    fn config(&self, key: RStr<'_>) -> ROption<RString>;
    /// Calls a host service by name with JSON parameters (policy, session,
    /// model...). New services are added here without changing the ABI.
    #[sabi(last_prefix_field)]
    fn call(&self, method: RStr<'_>, params_json: RStr<'_>) -> RResult<RString, RString>;
}

pub type HostBox = Host_TO<'static, RBox<()>>;

/// A model-callable tool implemented by a plugin.
#[sabi_trait]
pub trait Tool: Send + Sync {
    /// `ToolSpec` as JSON.
    fn spec(&self) -> RResult<RString, Fault>;
    /// The string policy rules match for these arguments (a path, a command
    /// line...). Called before the policy gate.
    fn subject(&self, args_json: RStr<'_>) -> RResult<RString, Fault>;
    /// What the call would change, for the approval question: a `FileDiff`
    /// as JSON, or `null`.
    fn preview(&self, call_json: RStr<'_>) -> RResult<RString, Fault>;
    /// Starts a call (`ToolCall` JSON) and returns at once. The plugin
    /// finishes `call` exactly once, from any thread; it may return a handle
    /// the host uses to stop the work.
    #[sabi(last_prefix_field)]
    fn run(&self, call_json: RString, call: ToolCallBox) -> RResult<ROption<CancelBox>, Fault>;
}

pub type ToolBox = Tool_TO<'static, RBox<()>>;

/// The host's side of one running tool call.
#[sabi_trait]
pub trait ToolCallHandle: Send + Sync {
    /// Shows a progress line under the running tool.
    fn progress(&self, line: RStr<'_>);
    /// True once the user interrupted the call.
    fn is_cancelled(&self) -> bool;
    /// Finishes the call with a `ToolOutput` as JSON, or a fault. Dropping
    /// the handle without finishing gives the call an error.
    #[sabi(last_prefix_field)]
    fn finish(self, result: RResult<RString, Fault>);
}

pub type ToolCallBox = ToolCallHandle_TO<'static, RBox<()>>;

/// A handle that stops work in progress. Calling it more than once, or after
/// the work finished, must be harmless.
#[sabi_trait]
pub trait Cancel: Send + Sync {
    #[sabi(last_prefix_field)]
    fn cancel(&self);
}

pub type CancelBox = Cancel_TO<'static, RBox<()>>;

/// A model-API adapter.
#[sabi_trait]
pub trait Wire: Send + Sync {
    /// Starts streaming a `WireRequest` (JSON) and returns at once.
    #[sabi(last_prefix_field)]
    fn stream(
        &self,
        request_json: RString,
        reply: WireReplyBox,
    ) -> RResult<ROption<CancelBox>, Fault>;
}

pub type WireBox = Wire_TO<'static, RBox<()>>;

/// The host's side of one model request.
#[sabi_trait]
pub trait WireReply: Send + Sync {
    fn text(&self, delta: RStr<'_>);
    fn reasoning(&self, delta: RStr<'_>);
    /// Finishes with an `Answer` as JSON.
    fn done(self, answer_json: RString);
    /// Finishes with a `Failure` as JSON.
    fn fail(self, failure_json: RString);
    /// Finishes with a plugin fault (a caught panic, a broken invariant).
    #[sabi(last_prefix_field)]
    fn fault(self, fault: Fault);
}

pub type WireReplyBox = WireReply_TO<'static, RBox<()>>;

/// A user interface. The host calls `run` on a thread of its own.
#[sabi_trait]
pub trait Frontend: Send + Sync {
    #[sabi(last_prefix_field)]
    fn run(&self, session: FrontendSessionBox) -> RResult<(), Fault>;
}

pub type FrontendBox = Frontend_TO<'static, RBox<()>>;

/// The host's side of a frontend: submit operations, read events (both JSON).
#[sabi_trait]
pub trait FrontendSession: Send + Sync {
    /// Sends an operation (a user message, an approval answer, an interrupt).
    fn submit(&self, op_json: RStr<'_>) -> RResult<(), RString>;
    /// Waits up to `timeout_ms` for the next event. `ROk(RNone)` on timeout;
    /// `RErr` once the session has ended.
    #[sabi(last_prefix_field)]
    fn next_event(&self, timeout_ms: u64) -> RResult<ROption<RString>, RString>;
}

pub type FrontendSessionBox = FrontendSession_TO<'static, RBox<()>>;

/// An event handler (`before_tool`, `after_tool`, notifications...).
#[sabi_trait]
pub trait Hook: Send + Sync {
    /// Receives the event payload as JSON and returns a JSON value (`null`
    /// passes to the next handler).
    #[sabi(last_prefix_field)]
    fn call(&self, payload_json: RStr<'_>) -> RResult<RString, Fault>;
}

pub type HookBox = Hook_TO<'static, RBox<()>>;

/// A slash command.
#[sabi_trait]
pub trait Command: Send + Sync {
    #[sabi(last_prefix_field)]
    fn run(&self, args: RStr<'_>) -> RResult<RString, Fault>;
}

pub type CommandBox = Command_TO<'static, RBox<()>>;

/// The root module every uji plugin exports.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleRef)))]
#[sabi(missing_field(panic))]
pub struct PluginModule {
    /// The plugin's `Manifest` as JSON.
    pub manifest: extern "C" fn() -> RResult<RString, Fault>,
    /// Registers what the plugin provides through `host`.
    #[sabi(last_prefix_field)]
    pub init: extern "C" fn(host: HostBox) -> RResult<(), Fault>,
}

impl RootModule for PluginModuleRef {
    declare_root_module_statics! {PluginModuleRef}
    const BASE_NAME: &'static str = "uji_plugin";
    const NAME: &'static str = "uji plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// Re-exports the export macro needs; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use abi_stable::library::{
        __call_root_module_loader, CheckTypeLayout, LibHeader, ROOT_MODULE_LOADER_NAME,
        RootModuleResult,
    };
    pub use abi_stable::prefix_type::PrefixTypeTrait;
    pub use abi_stable::sabi_trait::TD_Opaque;
}

/// Exports `$constructor` (a `fn() -> PluginModuleRef`) as the library's root
/// module. Plugin authors call `uji_sdk::export_plugin!` instead.
///
/// This is what abi_stable's `#[export_root_module]` expands to, written as a
/// `macro_rules!` so plugin crates need no direct abi_stable dependency; a test
/// keeps the symbol name in step with abi_stable.
#[macro_export]
macro_rules! export_plugin_module {
    ($constructor:path) => {
        #[doc(hidden)]
        #[unsafe(export_name = "_1as_0lib_1header_0root_bmodule_bloader")]
        pub static UJI_PLUGIN_LIB_HEADER: $crate::__private::LibHeader = {
            extern "C" fn uji_erased_root_module() -> $crate::__private::RootModuleResult {
                $crate::__private::__call_root_module_loader($constructor)
            }
            // SAFETY: the constructor returns exactly the module type named
            // here, which is what LibHeader::from_constructor requires.
            unsafe {
                $crate::__private::LibHeader::from_constructor::<$crate::PluginModuleRef>(
                    uji_erased_root_module,
                    $crate::__private::CheckTypeLayout::Yes,
                )
            }
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_symbol_matches_abi_stable() {
        assert_eq!(
            __private::ROOT_MODULE_LOADER_NAME,
            "_1as_0lib_1header_0root_bmodule_bloader"
        );
    }

    #[test]
    fn sdk_compatibility_rules() {
        assert!(sdk_compatible("0.1.3", "0.1.0"));
        assert!(sdk_compatible("0.1.0", "0.1.0"));
        assert!(
            !sdk_compatible("0.1.0", "0.1.4"),
            "a plugin newer than the host"
        );
        assert!(!sdk_compatible("0.1.0", "0.2.0"));
        assert!(!sdk_compatible("0.1.0", "1.0.0"));
        assert!(sdk_compatible("1.4.0", "1.2.9"));
        assert!(!sdk_compatible("1.4.0", "1.5.0"));
        assert!(!sdk_compatible("1.4.0", "2.0.0"));
        assert!(!sdk_compatible("0.1.0", "not a version"));
    }
}

/// Why a file could not be opened as a uji plugin, in terms a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The file does not exist.
    NotFound,
    /// The dynamic loader refused the file (not a shared library, missing
    /// dependency, wrong architecture).
    CannotOpen(String),
    /// A shared library without a uji root module.
    NotAPlugin,
    /// Built against another uji ABI version.
    IncompatibleSdk {
        plugin: String,
        host: String,
    },
    /// The root module's layout differs from this uji's: another abi_stable
    /// program's plugin, or one built against a different uji-abi. Holds
    /// abi_stable's full (long) report, for logs.
    IncompatibleLayout(String),
    /// The root module constructor failed or panicked.
    Constructor(String),
    Other(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotFound => write!(f, "no such file"),
            LoadError::CannotOpen(why) => {
                write!(
                    f,
                    "not a loadable shared library ({why}); remove it from the plugins directory"
                )
            }
            LoadError::NotAPlugin => write!(
                f,
                "not a uji plugin: it exports no uji root module (build plugins with uji_sdk::export_plugin!), or remove it from the plugins directory"
            ),
            LoadError::IncompatibleSdk { plugin, host } => write!(
                f,
                "built against an incompatible uji SDK: it needs uji-abi {plugin}, this uji has uji-abi {host}; rebuild the plugin against uji-sdk {host}"
            ),
            LoadError::IncompatibleLayout(_) => write!(
                f,
                "its plugin interface does not match this uji's (uji-abi {SDK_VERSION}): it is a plugin for another program, or was built against an incompatible uji SDK; rebuild it against uji-sdk {SDK_VERSION}"
            ),
            LoadError::Constructor(why) => write!(f, "its root module failed to load: {why}"),
            LoadError::Other(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Opens `path` and checks it is a uji plugin of a compatible ABI. The library
/// is leaked on purpose: plugins are never unloaded (unloading a Rust cdylib
/// runs TLS destructors and invalidates vtables uji still holds).
pub fn load_plugin_module(path: &std::path::Path) -> Result<PluginModuleRef, LoadError> {
    use abi_stable::library::{LibraryError, RootModuleError, lib_header_from_path};

    if !path.exists() {
        return Err(LoadError::NotFound);
    }
    let header = lib_header_from_path(path).map_err(|e| match e {
        LibraryError::OpenError { err, .. } => LoadError::CannotOpen(err.to_string()),
        LibraryError::GetSymbolError { .. } => LoadError::NotAPlugin,
        LibraryError::InvalidAbiHeader(_) => LoadError::IncompatibleLayout(
            "it was built with an incompatible abi_stable version".to_string(),
        ),
        other => LoadError::Other(other.to_string()),
    })?;
    header
        .init_root_module::<PluginModuleRef>()
        .map_err(|e| match e {
            LibraryError::IncompatibleVersionNumber {
                expected_version,
                actual_version,
                ..
            } => LoadError::IncompatibleSdk {
                plugin: actual_version.to_string(),
                host: expected_version.to_string(),
            },
            LibraryError::AbiInstability(detail) => {
                LoadError::IncompatibleLayout(detail.to_string())
            }
            LibraryError::RootModule { err, .. } => match err {
                RootModuleError::Unwound => {
                    LoadError::Constructor("its root module constructor panicked".to_string())
                }
                RootModuleError::Returned(why) => LoadError::Constructor(why.to_string()),
            },
            other => LoadError::Other(other.to_string()),
        })
}
