//! Finding and loading plugins.
//!
//! Search order (first hit wins per plugin name): each entry of
//! `$UJI_PLUGIN_PATH` (a directory or a file), then `<config>/plugins/`, then
//! the plugins shipped with uji (next to the executable, or in
//! `<prefix>/lib/uji/plugins/` for an installed uji). Winners are initialised
//! in the reverse order, shipped plugins first. A plugin that registers a
//! tool another plugin provides is refused (see
//! [`Registry::register_tool`](crate::Registry::register_tool)) unless the
//! user's config allows it. The Lua plugin, which runs the user's init.lua,
//! always comes last, and may replace any tool.
//!
//! Each file passes [`crate::checks`] (nobody else can change it, and it is
//! a whole library for this machine) before the dynamic loader maps it.
//!
//! Next to the executable only `libuji_plugin_*` files count (that directory
//! is also cargo's target directory); in the other directories every shared
//! library is taken as a plugin, since the user put it there.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use uji_abi::{
    ABI_VERSION, LayoutCheck, LoadError, PluginModuleRef, abi_compatible, abi_refusal,
    load_plugin_module_with,
};
use uji_protocol::Manifest;

use crate::checks::{Refusal, check_plugin_file};
use crate::host_api::host_for;
use crate::registry::{PluginState, Provided, Registry};

/// The plugin that runs the user's configuration (init.lua). It is
/// initialised after every other plugin, so the configuration sees — and can
/// replace or remove — everything they provide.
pub const CONFIG_PLUGIN: &str = "lua";

/// uji's release version, which plugin compatibility does not depend on (see
/// [`ABI_VERSION`]).
pub const UJI_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `0.1.0 (plugin ABI 1.0)`: what `uji --version` prints after the name.
pub fn version_line() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| format!("{UJI_VERSION} (plugin ABI {ABI_VERSION})"))
}

/// Prefix of the shipped plugins' file names.
pub const BUNDLED_PREFIX: &str = "uji_plugin_";

/// Where a plugin was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    PluginPath,
    Config,
    Bundled,
    /// Linked into the uji executable.
    Builtin,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::PluginPath => "UJI_PLUGIN_PATH",
            Origin::Config => "config",
            Origin::Bundled => "bundled",
            Origin::Builtin => "builtin",
        }
    }
}

/// Where to look.
#[derive(Debug, Clone, Default)]
pub struct PluginSearch {
    /// The directory of the `uji` executable.
    pub exe_dir: Option<PathBuf>,
    /// The value of `$UJI_PLUGIN_PATH` (colon-separated).
    pub plugin_path: Option<String>,
    /// `<config>/plugins`.
    pub config_plugins: Option<PathBuf>,
}

impl PluginSearch {
    /// The directories searched, in order, each with the origin its plugins
    /// get: `$UJI_PLUGIN_PATH`'s directories, `<config>/plugins`, then the
    /// executable's directory and `<exe>/../lib/uji/plugins` (an installed
    /// uji). Files named in `$UJI_PLUGIN_PATH` are not directories and are
    /// left out.
    pub fn directories(&self) -> Vec<(PathBuf, Origin)> {
        let mut dirs: Vec<(PathBuf, Origin)> = self
            .plugin_path
            .iter()
            .flat_map(|var| var.split(':'))
            .filter(|e| !e.trim().is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .map(|p| (p, Origin::PluginPath))
            .collect();
        dirs.extend(self.config_plugins.clone().map(|d| (d, Origin::Config)));
        if let Some(exe_dir) = &self.exe_dir {
            let installed = exe_dir.join("..").join("lib").join("uji").join("plugins");
            // `uji plugins` and `uji doctor` show `<prefix>/lib/…`, not `bin/../lib/…`.
            let installed = installed.canonicalize().unwrap_or(installed);
            dirs.push((exe_dir.clone(), Origin::Bundled));
            dirs.push((installed, Origin::Bundled));
        }
        dirs
    }

    /// The usual search for this process.
    pub fn for_process(config_plugins: PathBuf) -> PluginSearch {
        PluginSearch {
            exe_dir: std::env::current_exe()
                .ok()
                .and_then(|exe| exe.canonicalize().ok())
                .and_then(|exe| exe.parent().map(Path::to_path_buf)),
            plugin_path: std::env::var("UJI_PLUGIN_PATH").ok(),
            config_plugins: Some(config_plugins),
        }
    }
}

/// A file that is not (or no longer) a working plugin, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureReason {
    /// An entry of `$UJI_PLUGIN_PATH` that does not exist.
    Missing,
    Load(LoadError),
    BadManifest(String),
    /// Built for a plugin ABI this uji cannot use; holds the plugin's.
    IncompatibleAbi {
        plugin: String,
    },
    InitError(String),
    InitPanicked(String),
    /// Refused before it was mapped: others could change it, or it is not
    /// a whole library for this machine.
    Refused(Refusal),
}

impl std::fmt::Display for FailureReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FailureReason::Missing => write!(
                f,
                "no such file or directory (listed in UJI_PLUGIN_PATH); fix the variable or create it"
            ),
            FailureReason::Load(e) => write!(f, "{e}"),
            FailureReason::BadManifest(why) => write!(
                f,
                "its manifest is invalid ({why}); rebuild it with the current uji-sdk"
            ),
            FailureReason::IncompatibleAbi { plugin } => write!(
                f,
                "{}",
                abi_refusal(plugin, &format!("this uji ({UJI_VERSION})"))
            ),
            FailureReason::InitError(why) => write!(f, "its init returned an error: {why}"),
            FailureReason::InitPanicked(why) => write!(
                f,
                "its init panicked: {why}; report the bug to its author or remove the file"
            ),
            FailureReason::Refused(refusal) => write!(f, "{refusal}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct LoadFailure {
    pub path: PathBuf,
    pub reason: FailureReason,
}

/// A plugin that loaded and initialised.
#[derive(Debug, Clone)]
pub struct LoadedPlugin {
    pub manifest: Manifest,
    pub path: PathBuf,
    pub origin: Origin,
    /// Time to open, check and initialise it.
    pub load_time: Duration,
    state: Arc<PluginState>,
}

impl LoadedPlugin {
    /// Why it was marked failed during this session, if it was.
    pub fn failure(&self) -> Option<String> {
        self.state.failure()
    }
}

/// A plugin found but not used because one with the same name came first.
#[derive(Debug, Clone)]
pub struct Shadowed {
    pub name: String,
    pub path: PathBuf,
    pub used: PathBuf,
}

/// The result of loading every plugin.
#[derive(Debug, Clone, Default)]
pub struct PluginSet {
    pub loaded: Vec<LoadedPlugin>,
    pub failed: Vec<LoadFailure>,
    pub shadowed: Vec<Shadowed>,
    /// Wall time for discovery and loading, all plugins together.
    pub elapsed: Duration,
}

impl PluginSet {
    /// What a loaded plugin provides right now.
    pub fn provided(&self, registry: &Registry, plugin: &LoadedPlugin) -> Provided {
        registry.provided_by(&plugin.manifest.name)
    }
}

pub(crate) struct Candidate {
    pub(crate) path: PathBuf,
    pub(crate) origin: Origin,
}

fn is_shared_library(path: &Path) -> bool {
    path.is_file()
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(std::env::consts::DLL_SUFFIX))
}

fn is_bundled_plugin(path: &Path) -> bool {
    let wanted = format!("{}{BUNDLED_PREFIX}", std::env::consts::DLL_PREFIX);
    is_shared_library(path)
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(&wanted))
}

/// `lua` for `libuji_plugin_lua.so`.
fn bundled_name(path: &Path) -> &str {
    let prefix = format!("{}{BUNDLED_PREFIX}", std::env::consts::DLL_PREFIX);
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(prefix.as_str()))
        .and_then(|n| n.strip_suffix(std::env::consts::DLL_SUFFIX))
        .unwrap_or_default()
}

fn list_dir(dir: &Path, keep: fn(&Path) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| keep(p))
        .collect();
    files.sort();
    files
}

fn discover(search: &PluginSearch, failed: &mut Vec<LoadFailure>) -> Vec<Candidate> {
    let mut found = Vec::new();
    if let Some(var) = &search.plugin_path {
        for entry in var.split(':').filter(|e| !e.trim().is_empty()) {
            let path = PathBuf::from(entry);
            if path.is_dir() {
                found.extend(list_dir(&path, is_shared_library).into_iter().map(|path| {
                    Candidate {
                        path,
                        origin: Origin::PluginPath,
                    }
                }));
            } else if path.exists() {
                found.push(Candidate {
                    path,
                    origin: Origin::PluginPath,
                });
            } else {
                failed.push(LoadFailure {
                    path,
                    reason: FailureReason::Missing,
                });
            }
        }
    }
    if let Some(dir) = &search.config_plugins {
        found.extend(
            list_dir(dir, is_shared_library)
                .into_iter()
                .map(|path| Candidate {
                    path,
                    origin: Origin::Config,
                }),
        );
    }
    for (dir, _) in search
        .directories()
        .into_iter()
        .filter(|(_, origin)| *origin == Origin::Bundled)
    {
        found.extend(
            list_dir(&dir, is_bundled_plugin)
                .into_iter()
                .map(|path| Candidate {
                    path,
                    origin: Origin::Bundled,
                }),
        );
    }
    // The same file reached twice (a symlink, a repeated PATH entry) is one plugin.
    let mut seen = std::collections::HashSet::new();
    found.retain(|c| seen.insert(c.path.canonicalize().unwrap_or_else(|_| c.path.clone())));
    found
}

fn read_manifest(module: PluginModuleRef) -> Result<Manifest, FailureReason> {
    let json = (module.manifest())()
        .into_result()
        .map_err(|fault| FailureReason::BadManifest(fault.message.to_string()))?;
    let manifest: Manifest = serde_json::from_str(json.as_str())
        .map_err(|e| FailureReason::BadManifest(e.to_string()))?;
    if manifest.name.trim().is_empty() {
        return Err(FailureReason::BadManifest("empty plugin name".to_string()));
    }
    let Some(plugin_abi) = manifest.claimed_abi() else {
        return Err(FailureReason::BadManifest(
            "it names no plugin ABI version".to_string(),
        ));
    };
    if !abi_compatible(ABI_VERSION, plugin_abi) {
        return Err(FailureReason::IncompatibleAbi {
            plugin: plugin_abi.to_string(),
        });
    }
    Ok(manifest)
}

fn open(path: &Path) -> Result<(PluginModuleRef, Manifest), FailureReason> {
    check_plugin_file(path).map_err(FailureReason::Refused)?;
    let (passed_before, identity) = crate::checked_layouts::verdict_for(path);
    let layout = if passed_before {
        LayoutCheck::PassedBefore
    } else {
        LayoutCheck::Check
    };
    let module = load_plugin_module_with(path, layout).map_err(|e| match e {
        LoadError::IncompatibleAbi { plugin } => FailureReason::IncompatibleAbi { plugin },
        other => FailureReason::Load(other),
    })?;
    if !passed_before {
        crate::checked_layouts::record_pass(path, identity);
    }
    let manifest = read_manifest(module)?;
    Ok((module, manifest))
}

/// Loads every plugin `search` finds into `registry`. Never fails: problems
/// are collected per file and uji goes on without those plugins.
pub fn load_plugins(search: &PluginSearch, registry: &Registry) -> PluginSet {
    load_plugins_keeping(search, registry, &|_| true)
}

/// Like [`load_plugins`], but of the plugins shipped with uji only those
/// `keep` accepts (by name: `lua` for `libuji_plugin_lua.so`) are opened.
/// What a shipped plugin registers is known, so a command that needs only
/// part of it (`uji models` needs init.lua's providers, not the wires or
/// the screen) can skip the rest; any other plugin is loaded, since it may
/// register anything.
pub fn load_plugins_keeping(
    search: &PluginSearch,
    registry: &Registry,
    keep: &dyn Fn(&str) -> bool,
) -> PluginSet {
    let started = Instant::now();
    let mut set = PluginSet::default();
    let mut candidates = discover(search, &mut set.failed);
    candidates.retain(|c| c.origin != Origin::Bundled || keep(bundled_name(&c.path)));
    open_and_init(
        candidates,
        registry,
        HashMap::new(),
        &mut set,
        Undo::Snapshot,
    );
    set.elapsed = started.elapsed();
    log_outcome(&set);
    set
}

/// Loads the plugins a session starts with: all but the shipped plugins
/// that provide only one wire or one frontend ([`crate::on_demand`]). Those
/// are listed in the registry and opened when the session first asks for
/// what they provide: a session uses one wire and one frontend, and every
/// plugin opened costs its load time and the memory of its library.
pub fn load_session_plugins(search: &PluginSearch, registry: &Registry) -> PluginSet {
    let started = Instant::now();
    let mut set = PluginSet::default();
    let (mut now, mut later) = (Vec::new(), Vec::new());
    for candidate in discover(search, &mut set.failed) {
        let need = (candidate.origin == Origin::Bundled)
            .then(|| crate::on_demand::need_of(bundled_name(&candidate.path)))
            .flatten();
        match need {
            Some(need) => later.push((need, candidate.path)),
            None => now.push(candidate),
        }
    }
    // Listed before any plugin initialises: init.lua sees them in
    // `uji.wire.list()` and may remove them.
    let on_demand = crate::on_demand::OnDemand::defer(registry, later);
    let claimed = open_and_init(now, registry, HashMap::new(), &mut set, Undo::Snapshot);
    on_demand.record(registry, claimed);
    set.elapsed = started.elapsed();
    log_outcome(&set);
    set
}

/// How a plugin whose init failed is taken back out of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Undo {
    /// At start, when nothing else registers: the registry goes back to
    /// its state before the init, so what the plugin replaced comes back.
    Snapshot,
    /// In a running session, where other threads register too: only what
    /// the plugin registered goes. (An on-demand plugin replaces nothing:
    /// it is opened because what it provides is missing.)
    Forget,
}

/// Opens `candidates` and initialises them (see the module's order), adding
/// to `set`. A plugin whose manifest name is in `taken` (or comes earlier
/// in `candidates`) is shadowed. Returns `taken` with every name claimed
/// added: a plugin that opened claims its name even if its init fails.
pub(crate) fn open_and_init(
    candidates: Vec<Candidate>,
    registry: &Registry,
    taken: HashMap<String, PathBuf>,
    set: &mut PluginSet,
    undo: Undo,
) -> HashMap<String, PathBuf> {
    struct Opened {
        module: PluginModuleRef,
        manifest: Manifest,
        path: PathBuf,
        origin: Origin,
        open_time: Duration,
    }
    let mut winners: Vec<Opened> = Vec::new();
    let mut by_name = taken;
    for candidate in candidates {
        let opened_at = Instant::now();
        match open(&candidate.path) {
            Ok((module, manifest)) => {
                if let Some(used) = by_name.get(&manifest.name) {
                    set.shadowed.push(Shadowed {
                        name: manifest.name,
                        path: candidate.path,
                        used: used.clone(),
                    });
                    continue;
                }
                by_name.insert(manifest.name.clone(), candidate.path.clone());
                winners.push(Opened {
                    module,
                    manifest,
                    path: candidate.path,
                    origin: candidate.origin,
                    open_time: opened_at.elapsed(),
                });
            }
            Err(reason) => set.failed.push(LoadFailure {
                path: candidate.path,
                reason,
            }),
        }
    }
    crate::checked_layouts::save_passes();

    let mut order: Vec<Opened> = winners.into_iter().rev().collect();
    if let Some(at) = order.iter().position(|o| o.manifest.name == CONFIG_PLUGIN) {
        let config = order.remove(at);
        order.push(config);
    }
    for opened in order {
        let init_at = Instant::now();
        let before = (undo == Undo::Snapshot).then(|| registry.snapshot());
        let state = PluginState::new(opened.manifest.name.clone());
        let host = host_for(registry, &state);
        match (opened.module.init())(host).into_result() {
            Ok(()) => set.loaded.push(LoadedPlugin {
                manifest: opened.manifest,
                path: opened.path,
                origin: opened.origin,
                load_time: opened.open_time + init_at.elapsed(),
                state,
            }),
            Err(fault) => {
                match before {
                    Some(before) => registry.restore(before),
                    None => registry.forget_plugin(&opened.manifest.name),
                }
                let message = fault.message.to_string();
                let reason = if fault.panicked {
                    FailureReason::InitPanicked(message)
                } else {
                    FailureReason::InitError(message)
                };
                set.failed.push(LoadFailure {
                    path: opened.path,
                    reason,
                });
            }
        }
    }
    by_name
}

/// Records what loaded, what was shadowed and what failed (commands show
/// failures too, but an interactive frontend may not).
pub(crate) fn log_outcome(set: &PluginSet) {
    for loaded in &set.loaded {
        tracing::debug!(
            "loaded plugin {} {} from {} in {:?}",
            loaded.manifest.name,
            loaded.manifest.version,
            loaded.path.display(),
            loaded.load_time
        );
    }
    for shadowed in &set.shadowed {
        tracing::info!(
            "plugin {} at {} not loaded: {} comes first",
            shadowed.name,
            shadowed.path.display(),
            shadowed.used.display()
        );
    }
    for failure in &set.failed {
        log_failure(failure);
    }
}

fn log_failure(failure: &LoadFailure) {
    tracing::warn!(
        "plugin {} failed to load: {}",
        failure.path.display(),
        failure.reason
    );
}

/// Initialises a plugin linked into this process (uji's compiled-in parts,
/// tests) through the same handshake and `init` as a file. `label` stands in
/// for the path in listings.
pub fn load_module(
    module: PluginModuleRef,
    label: &str,
    registry: &Registry,
) -> Result<LoadedPlugin, LoadFailure> {
    let path = PathBuf::from(label);
    let started = Instant::now();
    let fail = |reason| LoadFailure {
        path: path.clone(),
        reason,
    };
    let manifest = read_manifest(module).map_err(fail)?;
    let state = PluginState::new(manifest.name.clone());
    let before = registry.snapshot();
    match (module.init())(host_for(registry, &state)).into_result() {
        Ok(()) => Ok(LoadedPlugin {
            manifest,
            path: path.clone(),
            origin: Origin::Builtin,
            load_time: started.elapsed(),
            state,
        }),
        Err(fault) => {
            registry.restore(before);
            let message = fault.message.to_string();
            let failure = fail(if fault.panicked {
                FailureReason::InitPanicked(message)
            } else {
                FailureReason::InitError(message)
            });
            log_failure(&failure);
            Err(failure)
        }
    }
}

/// Loads exactly one file (used by tests and `uji plugins --check FILE`).
pub fn load_plugin_file(path: &Path, registry: &Registry) -> Result<LoadedPlugin, LoadFailure> {
    let search = PluginSearch {
        exe_dir: None,
        plugin_path: Some(path.to_string_lossy().into_owned()),
        config_plugins: None,
    };
    let mut set = load_plugins(&search, registry);
    match (set.loaded.pop(), set.failed.pop()) {
        (Some(loaded), _) => Ok(loaded),
        (None, Some(failure)) => Err(failure),
        (None, None) => Err(LoadFailure {
            path: path.to_path_buf(),
            reason: FailureReason::Missing,
        }),
    }
}
