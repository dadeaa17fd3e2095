//! uji's plugin host: finds plugins, loads them through the stable ABI, keeps
//! what they register, and makes every call into them safe.
//!
//! Core code uses the plain Rust types here ([`Registry`], [`RegisteredTool`],
//! [`RunningCall`]...); the abi_stable types stay behind this crate's private
//! modules.

mod calls;
mod checked_layouts;
mod checks;
mod host_api;
mod loader;
mod native_tool;
mod on_demand;
pub mod paths;
pub mod progress;
mod registry;

pub use calls::{
    CallError, Canceller, ProgressSink, RegisteredCommand, RegisteredFrontend, RegisteredHook,
    RegisteredTool, RegisteredWire, RunningCall, RunningStream, SessionPort, StreamError,
    WireEvents,
};
pub use checked_layouts::remember_checked_layouts;
pub use checks::{Refusal, check_plugin_dir};
pub use loader::{
    BUNDLED_PREFIX, CONFIG_PLUGIN, FailureReason, LoadFailure, LoadedPlugin, Origin, PluginSearch,
    PluginSet, Shadowed, UJI_VERSION, load_module, load_plugin_file, load_plugins,
    load_plugins_keeping, load_session_plugins, version_line,
};
pub use native_tool::{CORE_TOOLS, NativeCall, NativeTool};
pub use registry::{
    CORE_CALLER, Clash, Need, Notice, Opener, PluginState, Provided, Registry, Service, Snapshot,
};
pub use uji_abi::{ABI_VERSION, LoadError, PluginModuleRef};
