//! Starting uji's core: the registry, the gate, host services, and every
//! plugin, in the same way for every command.

pub mod logging;

use std::path::{Path, PathBuf};

use serde_json::Value;
use uji_host::paths::Dirs;
use uji_host::{
    CONFIG_PLUGIN, LoadFailure, PluginModuleRef, PluginSearch, PluginSet, Registry, load_module,
    load_plugins, load_plugins_keeping, load_session_plugins,
};
use uji_protocol::frontend::NoticeLevel;

use crate::auth::providers::{ProcessEnvLookup, Providers};
use crate::gate::Gate;

/// A started core.
pub struct Booted {
    pub registry: Registry,
    pub gate: Gate,
    pub providers: Providers,
    pub plugins: PluginSet,
    pub dirs: Dirs,
    pub cwd: PathBuf,
}

/// Configuration keys plugins can read with `Host::config` from the start.
pub const CONFIG_DIR_KEY: &str = "config_dir";
pub const DATA_DIR_KEY: &str = "data_dir";
pub const CWD_KEY: &str = "cwd";
/// The frontend serving the session (`headless`, `tui`, `acp`…), set when
/// one starts.
pub const FRONTEND_KEY: &str = "frontend";
/// Set by the Lua plugin (`config.set`) when init.lua failed: the text to
/// show, naming the file, the line and what uji did instead.
pub const CONFIG_ERROR_KEY: &str = "config_error";

/// Which plugins a boot opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Load {
    /// Every plugin the search finds (`uji plugins`, `uji tool list`…).
    #[default]
    Everything,
    /// A session's (`uji`, `uji run`, `uji acp`): the shipped wires and
    /// frontends are opened when the session first needs them (uji-host's
    /// `on_demand`).
    Session,
    /// What `uji models` needs: the catalogue, init.lua's
    /// `uji.provider.add` and keys, and any plugin not shipped with uji (it
    /// may add providers). The shipped wires, tools and frontends add none,
    /// so they are not opened: the listing is the same, in a fraction of the
    /// time.
    Providers,
}

/// How to start the core: where, which plugins, and which plugins linked
/// into the executable (the headless frontend) come first.
pub struct BootOptions<'a> {
    pub dirs: Dirs,
    pub cwd: PathBuf,
    pub load: Load,
    /// Where plugins are found; the process's usual places when `None`.
    pub search: Option<PluginSearch>,
    /// Plugins linked into the executable, each with a label for listings.
    pub builtins: &'a [(PluginModuleRef, &'a str)],
}

impl<'a> BootOptions<'a> {
    /// Every plugin from the usual places, nothing linked in.
    pub fn new(dirs: Dirs, cwd: &Path) -> BootOptions<'a> {
        BootOptions {
            dirs,
            cwd: cwd.to_path_buf(),
            load: Load::Everything,
            search: None,
            builtins: &[],
        }
    }

    pub fn load(self, load: Load) -> Self {
        BootOptions { load, ..self }
    }

    pub fn search(self, search: PluginSearch) -> Self {
        BootOptions {
            search: Some(search),
            ..self
        }
    }

    pub fn builtins(self, builtins: &'a [(PluginModuleRef, &'a str)]) -> Self {
        BootOptions { builtins, ..self }
    }
}

/// Builds the registry and gate, offers the host services, then loads the
/// plugins `options` names (the Lua plugin runs the user's init.lua while
/// it initialises, so the policy it sets is in place when this returns).
pub fn boot(options: BootOptions<'_>) -> Booted {
    let BootOptions {
        dirs,
        cwd,
        load,
        search,
        builtins,
    } = options;
    let search = search.unwrap_or_else(|| PluginSearch::for_process(dirs.plugins()));
    boot_loading(dirs, &cwd, builtins, &|registry| match load {
        Load::Everything => load_plugins(&search, registry),
        Load::Session => load_session_plugins(&search, registry),
        Load::Providers => load_plugins_keeping(&search, registry, &|name| name == CONFIG_PLUGIN),
    })
}

fn boot_loading(
    dirs: Dirs,
    cwd: &Path,
    builtins: &[(PluginModuleRef, &str)],
    load: &dyn Fn(&Registry) -> PluginSet,
) -> Booted {
    // Spill files past their retention go at every start.
    crate::session::spills::clean_old(&dirs.data, crate::session::spills::RETENTION);
    // Old checkpoints go once a day, off the start's path.
    let data = dirs.data.clone();
    let _ = std::thread::Builder::new()
        .name("uji-prune-checkpoints".into())
        .spawn(move || {
            if let Some(report) = uji_checkpoint::prune_if_due(&data) {
                tracing::info!(?report, "pruned old checkpoints");
            }
        });
    // Plugins that passed abi_stable's layout check before skip it.
    uji_host::remember_checked_layouts(dirs.data.join("cache").join("checked-plugins.json"));
    let registry = Registry::new();
    registry.set_config(
        CONFIG_DIR_KEY,
        Value::from(dirs.config.to_string_lossy().into_owned()),
    );
    registry.set_config(
        DATA_DIR_KEY,
        Value::from(dirs.data.to_string_lossy().into_owned()),
    );
    registry.set_config(CWD_KEY, Value::from(cwd.to_string_lossy().into_owned()));
    registry.install_services();
    let gate = Gate::new(registry.clone());
    gate.install_services();
    let providers = Providers::new(std::sync::Arc::new(ProcessEnvLookup));
    // A damaged key file must not stop uji: the error says how to fix it
    // and the environment's keys still work.
    match crate::auth::keys::KeyStore::new(&dirs.data).load() {
        Ok(keys) => providers.set_stored_keys(keys),
        Err(e) => registry.notify_at(NoticeLevel::Warn, "keys", &e.to_string()),
    }
    providers.install_services(&registry);
    crate::auth::search::install_services(&providers, &registry);
    crate::gate::child_env::install_service(&registry, &providers);
    crate::session::service::install_builtin_names(&registry);
    let mut builtin_failures: Vec<LoadFailure> = Vec::new();
    let mut builtin_loaded = Vec::new();
    for (module, label) in builtins {
        match load_module(*module, label, &registry) {
            Ok(loaded) => builtin_loaded.push(loaded),
            Err(failure) => builtin_failures.push(failure),
        }
    }
    let mut plugins = load(&registry);
    plugins.loaded.splice(0..0, builtin_loaded);
    plugins.failed.extend(builtin_failures);
    crate::gate::child_env::announce(&registry, &providers);
    crate::subagents::register(&gate, &registry, &providers, &dirs.data);
    // A broken config is an error the user must see, wherever uji runs.
    if let Some(text) = registry.config(CONFIG_ERROR_KEY)
        && let Some(text) = text.as_str()
    {
        registry.notify_at(NoticeLevel::Error, "lua", text);
    }
    Booted {
        registry,
        gate,
        providers,
        plugins,
        dirs,
        cwd: cwd.to_path_buf(),
    }
}
