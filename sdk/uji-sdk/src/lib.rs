//! Write uji plugins in plain Rust.
//!
//! A plugin implements [`Plugin`] and calls [`export_plugin!`] once. Its
//! `init` registers tools, wires (model APIs), frontends, hooks and commands
//! through the [`Host`]. This crate turns those plain traits into uji's
//! stable ABI and catches every panic before it can cross the `extern "C"`
//! boundary (where it would abort uji): a panic becomes an error the host
//! reports, and the host marks the plugin failed.
//!
//! ```no_run
//! use uji_sdk::{Host, Plugin, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};
//!
//! struct Shout;
//!
//! impl Tool for Shout {
//!     fn spec(&self) -> ToolSpec {
//!         ToolSpec::new("shout", "Upper-cases `text`.").allow().parameters(serde_json::json!({
//!             "type": "object",
//!             "properties": {"text": {"type": "string"}},
//!             "required": ["text"]
//!         }))
//!     }
//!     fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
//!         match call.args.get("text").and_then(|t| t.as_str()) {
//!             Some(text) => ToolOutput::text(text.to_uppercase()),
//!             None => ToolOutput::error("`text` is required and must be a string"),
//!         }
//!     }
//! }
//!
//! struct ShoutPlugin;
//!
//! impl Plugin for ShoutPlugin {
//!     const NAME: &'static str = "shout";
//!     const VERSION: &'static str = env!("CARGO_PKG_VERSION");
//!     fn init(host: &Host) -> Result<(), String> {
//!         host.register_tool(Shout)
//!     }
//! }
//!
//! uji_sdk::export_plugin!(ShoutPlugin);
//! ```

pub mod child;
mod guard;
mod host;
pub mod services;
pub mod testing;
mod tool;
mod wire;

pub use guard::{guard, guard_result};
pub use host::{Frontend, FrontendError, FrontendSession, Host};
pub use serde;
pub use serde_json;
pub use tool::{Canceller, Tool, ToolContext};
pub use uji_abi as abi;
pub use uji_protocol as protocol;
pub use uji_protocol::wire::{Answer, Failure, Message, ToolCallRequest, Usage, WireRequest};
pub use uji_protocol::{
    CallSandbox, DeclaredPolicy, Display, FileDiff, Image, LogLevel, SandboxMode, SubjectKind,
    ToolCall, ToolErrorKind, ToolOutput, ToolSpec,
};
pub use wire::{Reply, Wire};

/// A uji plugin. Implement it on a unit struct and pass that to
/// [`export_plugin!`].
pub trait Plugin: 'static {
    /// Unique name shown by `uji plugins`.
    const NAME: &'static str;
    /// The plugin's own version, usually `env!("CARGO_PKG_VERSION")`.
    const VERSION: &'static str;
    /// One line saying what the plugin is for.
    const DESCRIPTION: &'static str = "";
    /// The plugin ABI version reported in the handshake. Only tests that
    /// simulate an incompatible plugin override it.
    #[doc(hidden)]
    const ABI_VERSION: &'static str = uji_abi::ABI_VERSION;

    /// Registers what the plugin provides. An error here is reported by file
    /// and uji keeps running without the plugin.
    fn init(host: &Host) -> Result<(), String>;
}

/// The root module of `P`, for hosting a plugin inside the process that
/// links it (uji's compiled-in parts and tests) instead of loading a file.
pub fn in_process_module<P: Plugin>() -> uji_abi::PluginModuleRef {
    __private::plugin_module::<P>()
}

/// Exports a [`Plugin`] as this library's uji root module. Call it once, in a
/// crate built as `crate-type = ["cdylib"]`.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        fn uji_plugin_root_module() -> $crate::abi::PluginModuleRef {
            $crate::__private::plugin_module::<$plugin>()
        }
        $crate::abi::export_plugin_module!(uji_plugin_root_module);
    };
}

#[doc(hidden)]
pub mod __private {
    use uji_abi::__private::PrefixTypeTrait;
    use uji_abi::{Fault, HostBox, PluginModule, PluginModuleRef, RResult, RString};

    use crate::{Host, Plugin, guard};

    pub fn plugin_module<P: Plugin>() -> PluginModuleRef {
        PluginModule {
            manifest: manifest::<P>,
            init: init::<P>,
        }
        .leak_into_prefix()
    }

    extern "C" fn manifest<P: Plugin>() -> RResult<RString, Fault> {
        let manifest = uji_protocol::Manifest {
            name: P::NAME.to_string(),
            version: P::VERSION.to_string(),
            abi_version: P::ABI_VERSION.to_string(),
            sdk_version: String::new(),
            description: P::DESCRIPTION.to_string(),
        };
        match serde_json::to_string(&manifest) {
            Ok(json) => RResult::ROk(RString::from(json)),
            Err(e) => RResult::RErr(Fault::error(format!("manifest: {e}"))),
        }
    }

    extern "C" fn init<P: Plugin>(host: HostBox) -> RResult<(), Fault> {
        crate::guard::install_panic_hook();
        let host = Host::new(host);
        crate::child::remember_host(&host);
        match guard(|| P::init(&host)) {
            Ok(Ok(())) => RResult::ROk(()),
            Ok(Err(message)) => RResult::RErr(Fault::error(message)),
            Err(fault) => RResult::RErr(fault),
        }
    }
}

/// The Rust examples of docs/plugins.md compile and run as doctests, so the
/// guide cannot drift from the SDK.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/plugins.md")]
pub struct PluginsGuide;
