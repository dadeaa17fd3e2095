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
//! Evolution rules: the layout of every type here is frozen for the whole
//! 1.x series. abi_stable's load-time check lets a library whose prefix types
//! have *more* fields than the loader's through, never fewer, and a plugin
//! is the library: a method appended to any trait here (even after
//! `#[sabi(last_prefix_field)]`) would make every plugin built before it
//! fail to load with "too many fields" (tests/fixtures/plugins/abi-1-0
//! holds that line). New capabilities therefore travel as JSON, through
//! the calls that already exist: host services (`Host::call`), options
//! (`register_hook`'s options serve a service since ABI 1.1). This crate's
//! version *is* the plugin ABI version ([`ABI_VERSION`]), kept apart from
//! uji's release version: a new meaning plugins may rely on bumps the
//! minor (the handshake then refuses such a plugin on an older uji instead
//! of letting it fail quietly), any layout change bumps the major. A uji
//! release that does neither leaves this version alone.
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

/// The plugin ABI version (`major.minor`), independent of uji's release
/// version. It is this crate's own version: abi_stable's checks read the crate
/// version, so the two cannot drift apart.
pub const ABI_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION_MAJOR"),
    ".",
    env!("CARGO_PKG_VERSION_MINOR")
);

/// Whether a host speaking plugin ABI `host_abi` can use a plugin built for
/// `plugin_abi`: same major, and the plugin's minor no newer than the host's
/// (a newer minor may call methods this host lacks). While the major is 0 the
/// minor must match, as cargo and abi_stable read 0.x versions.
pub fn abi_compatible(host_abi: &str, plugin_abi: &str) -> bool {
    let (Some(host), Some(plugin)) = (parse_abi(host_abi), parse_abi(plugin_abi)) else {
        return false;
    };
    match (host.0 == plugin.0, host.0) {
        (false, _) => false,
        (true, 0) => host.1 == plugin.1,
        (true, _) => plugin.1 <= host.1,
    }
}

/// `major.minor` of a version written `major[.minor[.patch]]`; a patch, a
/// pre-release or build suffix do not change the ABI.
fn parse_abi(text: &str) -> Option<(u64, u64)> {
    let core = text.trim().split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = match parts.next() {
        Some(minor) => minor.parse().ok()?,
        None => 0,
    };
    Some((major, minor))
}

/// `text` as the `major.minor` users see, or as written when it is not a
/// version at all.
pub fn abi_label(text: &str) -> String {
    match parse_abi(text) {
        Some((major, minor)) => format!("{major}.{minor}"),
        None => text.to_string(),
    }
}

/// The refusal of a plugin built for `plugin_abi`, naming both ABI versions
/// and what to do. `this_uji` names the host (`this uji (0.2.0)`).
pub fn abi_refusal(plugin_abi: &str, this_uji: &str) -> String {
    let plugin = abi_label(plugin_abi);
    let elsewhere = match parse_abi(plugin_abi) {
        Some((0, _)) => format!(", or use a uji that speaks plugin ABI {plugin}"),
        Some((major, _)) => {
            format!(", or use a uji that speaks plugin ABI {plugin} or a later {major}.x")
        }
        None => String::new(),
    };
    format!(
        "built for uji plugin ABI {plugin}, but {this_uji} speaks plugin ABI {ABI_VERSION}: rebuild the plugin against a uji-sdk for plugin ABI {ABI_VERSION}{elsewhere}"
    )
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
    /// Since ABI 1.1, options with `"serve": true` make the handler the
    /// host service named `event` (`ServeOptions`, called with a
    /// `ServiceRequest`).
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
    // This crate's version, which is the plugin ABI version: abi_stable
    // refuses a library whose major differs before uji reads its manifest.
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
    fn the_abi_version_is_this_crates_major_and_minor() {
        let crate_version = env!("CARGO_PKG_VERSION");
        assert!(crate_version.starts_with(&format!("{ABI_VERSION}.")));
        assert_eq!(
            parse_abi(ABI_VERSION).map(|v| v.0),
            Some(1),
            "1.x from the start"
        );
    }

    #[test]
    fn this_crates_version_is_not_the_workspace_release_version() {
        let manifest = include_str!("../Cargo.toml");
        assert!(
            manifest
                .lines()
                .any(|line| line.starts_with("version = \"")),
            "a uji release bump must not change the plugin ABI"
        );
    }

    #[test]
    fn a_layout_mismatch_names_the_plugins_abi_when_it_is_a_uji_plugin() {
        let error = LoadError::IncompatibleLayout {
            plugin_abi: Some("1.0.0".to_string()),
            detail: String::new(),
        };
        assert_eq!(
            error.to_string(),
            format!(
                "built for uji plugin ABI 1.0, but its plugin interface does not match this uji's (plugin ABI {ABI_VERSION}), so one of them changed the ABI without a new version; rebuild the plugin against a uji-sdk for plugin ABI {ABI_VERSION}"
            )
        );
    }

    #[test]
    fn an_older_or_equal_minor_of_the_same_major_is_compatible() {
        assert!(abi_compatible("1.3", "1.0"));
        assert!(abi_compatible("1.3", "1.3"));
        assert!(
            abi_compatible("1.3", "1.3.7"),
            "a patch is not an ABI change"
        );
        assert!(abi_compatible("1.3.0", "1.2.9-beta"));
        assert!(abi_compatible("2", "2.0"));
    }

    #[test]
    fn a_newer_minor_another_major_or_garbage_is_not() {
        assert!(
            !abi_compatible("1.3", "1.4"),
            "a plugin newer than the host"
        );
        assert!(!abi_compatible("1.3", "2.0"));
        assert!(!abi_compatible("2.0", "1.9"));
        assert!(
            !abi_compatible("1.0", "0.1.0"),
            "a plugin from before ABI 1"
        );
        assert!(!abi_compatible("1.0", "not a version"));
        assert!(!abi_compatible("1.0", ""));
        assert!(!abi_compatible("1.0", "1.x"));
    }

    #[test]
    fn zero_major_abis_need_the_same_minor() {
        assert!(abi_compatible("0.2", "0.2.5"));
        assert!(!abi_compatible("0.2", "0.1"));
        assert!(!abi_compatible("0.1", "0.2"));
    }

    #[test]
    fn the_refusal_names_both_abis_and_what_to_do() {
        assert_eq!(
            abi_refusal("2.0.0", "this uji (0.2.0)"),
            format!(
                "built for uji plugin ABI 2.0, but this uji (0.2.0) speaks plugin ABI {ABI_VERSION}: rebuild the plugin against a uji-sdk for plugin ABI {ABI_VERSION}, or use a uji that speaks plugin ABI 2.0 or a later 2.x"
            )
        );
        assert!(
            abi_refusal("0.1.0", "this uji").ends_with("or use a uji that speaks plugin ABI 0.1")
        );
        assert!(
            abi_refusal("banana", "this uji").ends_with(&format!("for plugin ABI {ABI_VERSION}"))
        );
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
    /// A uji plugin built for another plugin ABI major (abi_stable's version
    /// check). Holds the plugin's ABI version.
    IncompatibleAbi {
        plugin: String,
    },
    /// The root module's layout differs from this uji's. `plugin_abi` is the
    /// ABI a uji plugin was built for; `None` for another program's library.
    /// `detail` is abi_stable's full (long) report, for logs.
    IncompatibleLayout {
        plugin_abi: Option<String>,
        detail: String,
    },
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
            LoadError::IncompatibleAbi { plugin } => {
                write!(f, "{}", abi_refusal(plugin, "this uji"))
            }
            LoadError::IncompatibleLayout {
                plugin_abi: Some(plugin),
                ..
            } => write!(
                f,
                "built for uji plugin ABI {}, but its plugin interface does not match this uji's (plugin ABI {ABI_VERSION}), so one of them changed the ABI without a new version; rebuild the plugin against a uji-sdk for plugin ABI {ABI_VERSION}",
                abi_label(plugin)
            ),
            LoadError::IncompatibleLayout {
                plugin_abi: None, ..
            } => write!(
                f,
                "its plugin interface does not match this uji's (plugin ABI {ABI_VERSION}): it is a library of another abi_stable program, not a uji plugin; remove it from the plugins directory"
            ),
            LoadError::Constructor(why) => write!(f, "its root module failed to load: {why}"),
            LoadError::Other(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// The plugin ABI a library's root module was built for, when that module is
/// uji's (its root module constants carry uji's base name, and the version
/// is uji-abi's, which is the ABI's); `None` for another program's library.
fn uji_abi_of(header: &abi_stable::library::LibHeader) -> Option<String> {
    let consts = header.root_mod_consts();
    (consts.base_name().as_str() == PluginModuleRef::BASE_NAME)
        .then(|| abi_label(consts.version_strings().version.as_str()))
}

/// Opens `path` and checks it is a uji plugin of a compatible ABI. The library
/// is leaked on purpose: plugins are never unloaded (unloading a Rust cdylib
/// runs TLS destructors and invalidates vtables uji still holds).
pub fn load_plugin_module(path: &std::path::Path) -> Result<PluginModuleRef, LoadError> {
    load_plugin_module_with(path, LayoutCheck::Check)
}

/// Whether opening a plugin compares its root module's type layout with
/// this executable's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutCheck {
    /// Compare it (a tenth of a process's start for the shipped plugins).
    Check,
    /// Skip the comparison: this very file (same device, inode, size,
    /// modification and change times) passed it against this very
    /// executable before. The host's cache of verdicts decides this;
    /// abi_stable provides unchecked loading for exactly that use. The
    /// version check still runs.
    PassedBefore,
}

/// [`load_plugin_module`], with the layout comparison as `layout` says.
pub fn load_plugin_module_with(
    path: &std::path::Path,
    layout: LayoutCheck,
) -> Result<PluginModuleRef, LoadError> {
    use abi_stable::library::{LibraryError, lib_header_from_path};

    if !path.exists() {
        return Err(LoadError::NotFound);
    }
    let header = lib_header_from_path(path).map_err(|e| match e {
        LibraryError::OpenError { err, .. } => LoadError::CannotOpen(err.to_string()),
        LibraryError::GetSymbolError { .. } => LoadError::NotAPlugin,
        LibraryError::InvalidAbiHeader(_) => LoadError::Other(format!(
            "it was built with an abi_stable version this uji cannot read; rebuild it against a uji-sdk for plugin ABI {ABI_VERSION}, or remove it from the plugins directory"
        )),
        other => LoadError::Other(other.to_string()),
    })?;
    let plugin_abi = uji_abi_of(header);
    let module = match layout {
        LayoutCheck::Check => header.init_root_module::<PluginModuleRef>(),
        // SAFETY: the caller vouches that this file passed the layout check
        // against this executable (see `LayoutCheck::PassedBefore`), so the
        // root module has the layout `PluginModuleRef` expects.
        LayoutCheck::PassedBefore => unsafe {
            header.init_root_module_with_unchecked_layout::<PluginModuleRef>()
        },
    };
    module.map_err(|e| init_error(e, plugin_abi))
}

/// Names what abi_stable's version and layout checks refused, in ABI terms.
fn init_error(error: abi_stable::library::LibraryError, plugin_abi: Option<String>) -> LoadError {
    use abi_stable::library::{LibraryError, RootModuleError};

    match error {
        // abi_stable compares versions before it knows the module is uji's:
        // another program's library of a different version lands here too.
        LibraryError::IncompatibleVersionNumber { actual_version, .. } => match plugin_abi {
            Some(_) => LoadError::IncompatibleAbi {
                plugin: abi_label(&actual_version.to_string()),
            },
            None => LoadError::IncompatibleLayout {
                plugin_abi,
                detail: format!("another program's library, version {actual_version}"),
            },
        },
        LibraryError::AbiInstability(detail) => LoadError::IncompatibleLayout {
            plugin_abi,
            detail: detail.to_string(),
        },
        LibraryError::RootModule { err, .. } => match err {
            RootModuleError::Unwound => {
                LoadError::Constructor("its root module constructor panicked".to_string())
            }
            RootModuleError::Returned(why) => LoadError::Constructor(why.to_string()),
        },
        other => LoadError::Other(other.to_string()),
    }
}
