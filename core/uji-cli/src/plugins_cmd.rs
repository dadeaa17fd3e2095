//! `uji plugins`: what loaded, what it provides, and what failed and why.

use std::path::PathBuf;

use serde_json::json;
use uji_host::{PluginSet, Registry};

pub fn run(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    as_json: bool,
) -> Result<(), String> {
    let booted = crate::boot_here(config_dir, data_dir)?;
    let (registry, set) = (booted.registry, booted.plugins);
    crate::print_notices(&registry);
    let text = if as_json {
        render_json(&set, &registry)
    } else {
        render_table(&set, &registry)
    };
    crate::out::print(&text)
}

fn provides_list(provided: &uji_host::Provided) -> String {
    let mut parts = Vec::new();
    for (label, names) in [
        ("tools", &provided.tools),
        ("wires", &provided.wires),
        ("frontends", &provided.frontends),
        ("hooks", &provided.hooks),
        ("commands", &provided.commands),
        ("services", &provided.services),
    ] {
        if !names.is_empty() {
            parts.push(format!("{label}: {}", names.join(", ")));
        }
    }
    if parts.is_empty() {
        "nothing".to_string()
    } else {
        parts.join("; ")
    }
}

fn render_table(set: &PluginSet, registry: &Registry) -> String {
    let mut rows: Vec<[String; 5]> = Vec::new();
    for plugin in &set.loaded {
        let provided = set.provided(registry, plugin);
        let kinds = provided.kinds();
        rows.push([
            plugin.manifest.name.clone(),
            plugin.manifest.version.clone(),
            if kinds.is_empty() {
                "-".to_string()
            } else {
                kinds.join(",")
            },
            provides_list(&provided),
            plugin.path.display().to_string(),
        ]);
    }
    rows.sort_by(|a, b| a[0].cmp(&b[0]));
    let mut widths = [0usize; 4];
    for row in &rows {
        for (i, width) in widths.iter_mut().enumerate() {
            *width = (*width).max(row[i].chars().count());
        }
    }
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str("no plugins loaded\n");
    }
    for row in &rows {
        out.push_str(&format!(
            "{:w0$}  {:w1$}  {:w2$}  {:w3$}  {}\n",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
        ));
    }
    for shadowed in &set.shadowed {
        out.push_str(&format!(
            "\nnot used: {} (plugin {} is already loaded from {})\n",
            shadowed.path.display(),
            shadowed.name,
            shadowed.used.display()
        ));
    }
    out.push_str(&render_tool_changes(registry));
    if !set.failed.is_empty() {
        out.push_str("\nfailed to load:\n");
        for failure in &set.failed {
            out.push_str(&format!(
                "  {}: {}\n",
                failure.path.display(),
                failure.reason
            ));
        }
    }
    out
}

/// Tools that replaced another plugin's, and registrations refused for
/// clashing with one.
fn render_tool_changes(registry: &Registry) -> String {
    let mut out = String::new();
    for (tool, plugin, old) in replacements(registry) {
        out.push_str(&format!(
            "\nreplaced: tool {tool} of plugin {old}, by plugin {plugin}\n"
        ));
    }
    for clash in registry.clashes() {
        out.push_str(&format!("\nrefused: plugin {}: {clash}\n", clash.plugin));
    }
    out
}

/// (tool, its plugin, the plugin whose tool it replaced).
fn replacements(registry: &Registry) -> Vec<(String, String, String)> {
    registry
        .tools()
        .iter()
        .filter_map(|tool| {
            let name = tool.spec().name.clone();
            let old = registry.replaced_from(&name)?;
            Some((name, tool.plugin().to_string(), old))
        })
        .collect()
}

fn render_json(set: &PluginSet, registry: &Registry) -> String {
    let loaded: Vec<_> = set
        .loaded
        .iter()
        .map(|plugin| {
            let provided = set.provided(registry, plugin);
            json!({
                "name": plugin.manifest.name,
                "version": plugin.manifest.version,
                "abi_version": plugin.manifest.claimed_abi(),
                "description": plugin.manifest.description,
                "kinds": provided.kinds(),
                "tools": provided.tools,
                "wires": provided.wires,
                "frontends": provided.frontends,
                "hooks": provided.hooks,
                "commands": provided.commands,
                "services": provided.services,
                "path": plugin.path,
                "origin": plugin.origin.as_str(),
                "load_micros": plugin.load_time.as_micros() as u64,
            })
        })
        .collect();
    let failed: Vec<_> = set
        .failed
        .iter()
        .map(|f| json!({"path": f.path, "reason": f.reason.to_string()}))
        .collect();
    let shadowed: Vec<_> = set
        .shadowed
        .iter()
        .map(|s| json!({"name": s.name, "path": s.path, "used": s.used}))
        .collect();
    let replaced: Vec<_> = replacements(registry)
        .into_iter()
        .map(|(tool, plugin, old)| json!({"tool": tool, "plugin": plugin, "replaced": old}))
        .collect();
    let refused: Vec<_> = registry
        .clashes()
        .iter()
        .map(|c| json!({"tool": c.tool, "plugin": c.plugin, "provider": c.provider, "reason": c.to_string()}))
        .collect();
    let doc = json!({
        "uji_version": uji_host::UJI_VERSION,
        "abi_version": uji_host::ABI_VERSION,
        "plugins": loaded,
        "failed": failed,
        "shadowed": shadowed,
        "replaced_tools": replaced,
        "refused_tools": refused,
        "load_micros": set.elapsed.as_micros() as u64,
    });
    format!("{doc}\n")
}
