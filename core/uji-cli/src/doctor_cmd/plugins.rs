//! Plugins: the directories searched (nobody else may write them), where
//! each plugin came from and whether it loaded, and that every plugin uji
//! ships was found.

use std::path::Path;

use uji_host::{FailureReason, Origin, PluginSearch, Refusal};

use super::Check;

/// The manifest names of the plugins a release ships (scripts/dist.sh
/// packs every `plugins/*` cdylib; the install test holds the two equal).
pub const SHIPPED: &[&str] = &[
    "acp",
    "anthropic",
    "gemini",
    "lua",
    "mcp",
    "openai-chat",
    "openai-responses",
    "tools",
    "tui",
];

/// Each directory plugins are taken from, when it exists.
pub fn check_directories(search: &PluginSearch) -> Vec<Check> {
    search
        .directories()
        .into_iter()
        .filter(|(dir, origin)| dir.is_dir() && (*origin != Origin::Bundled || holds_plugin(dir)))
        .map(|(dir, origin)| directory(&dir, origin))
        .collect()
}

/// Whether the directory holds a shipped plugin (the executable's own
/// directory is searched too, and is usually `bin/`).
fn holds_plugin(dir: &Path) -> bool {
    let prefix = format!(
        "{}{}",
        std::env::consts::DLL_PREFIX,
        uji_host::BUNDLED_PREFIX
    );
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(&prefix))
    })
}

fn directory(dir: &Path, origin: Origin) -> Check {
    let shown = format!("{} ({})", dir.display(), origin.as_str());
    match uji_host::check_plugin_dir(dir) {
        Ok(()) => Check::ok("plugins", format!("plugin directory {shown}")),
        Err(refusal) => Check::problem(
            "plugins",
            format!("plugin directory {shown}: {refusal}"),
            fix_for_refusal(&refusal),
        ),
    }
}

fn fix_for_refusal(refusal: &Refusal) -> String {
    match refusal {
        Refusal::Writable { path, .. } => format!("`chmod go-w {}`", path.display()),
        Refusal::ForeignOwner { path, .. } => format!(
            "`chown $(id -u) {}`, or remove it if you did not put it there",
            path.display()
        ),
        Refusal::Damaged(_) => "rebuild or reinstall the plugin, or remove the file".to_string(),
    }
}

/// What the boot loaded (with its origin and path), what failed and why,
/// what was shadowed, and any shipped plugin not found at all.
pub fn check_loaded(booted: &uji_core::Booted) -> Vec<Check> {
    let set = &booted.plugins;
    let mut checks: Vec<Check> = set.loaded.iter().map(loaded).collect();
    checks.extend(set.failed.iter().map(|failure| {
        Check::problem(
            "plugins",
            format!(
                "{} did not load: {}",
                failure.path.display(),
                failure.reason
            ),
            fix_for_failure(&failure.reason),
        )
    }));
    checks.extend(set.shadowed.iter().map(|s| {
        Check::warn(
            "plugins",
            format!(
                "{} is not used: plugin {} was found first at {}",
                s.path.display(),
                s.name,
                s.used.display()
            ),
            "remove the copy you do not want",
        )
    }));
    checks.extend(missing_shipped(set));
    checks
}

fn loaded(plugin: &uji_host::LoadedPlugin) -> Check {
    let text = format!(
        "{} {} (plugin ABI {}, {}, {})",
        plugin.manifest.name,
        plugin.manifest.version,
        plugin.manifest.claimed_abi().unwrap_or("?"),
        plugin.origin.as_str(),
        plugin.path.display()
    );
    match plugin.failure() {
        Some(why) => Check::problem(
            "plugins",
            format!("{text} failed: {why}"),
            "report the bug to its author, or remove it",
        ),
        None => Check::ok("plugins", text),
    }
}

fn fix_for_failure(reason: &FailureReason) -> String {
    match reason {
        FailureReason::Refused(refusal) => fix_for_refusal(refusal),
        FailureReason::Missing => "fix UJI_PLUGIN_PATH".to_string(),
        FailureReason::IncompatibleAbi { .. } | FailureReason::BadManifest(_) => {
            "rebuild the plugin against this uji's SDK, or remove it".to_string()
        }
        _ => "rebuild or reinstall the plugin, or remove it".to_string(),
    }
}

/// The shipped plugins neither loaded nor failed: an install that left
/// them behind (`cargo install` of the CLI alone).
fn missing_shipped(set: &uji_host::PluginSet) -> Vec<Check> {
    let missing: Vec<&str> = SHIPPED
        .iter()
        .copied()
        .filter(|name| !set.loaded.iter().any(|p| p.manifest.name == *name))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    let installed = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|bin| bin.join("../lib/uji/plugins")))
        .map_or_else(
            || "<prefix>/lib/uji/plugins".to_string(),
            |d| d.display().to_string(),
        );
    vec![Check::problem(
        "plugins",
        format!("shipped plugins not loaded: {}", missing.join(", ")),
        format!(
            "install uji whole (`./install.sh`, or unpack the release archive) so that {installed} holds them; docs/install.md"
        ),
    )]
}
