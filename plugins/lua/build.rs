//! Embeds the Lua modules uji ships (the repository's top-level `lua/`) into
//! the plugin: generates `$OUT_DIR/modules.rs`, a table of (module name,
//! file name, source) built with `include_str!`, so `require("uji.defaults")`
//! works without any file on disk. `lua/types/` holds editor annotations
//! only and is not embedded.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            if dir == root && path.file_name().is_some_and(|n| n == "types") {
                continue;
            }
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "lua") {
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            let mut parts: Vec<String> = relative
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if let Some(last) = parts.last_mut() {
                *last = last.trim_end_matches(".lua").to_string();
            }
            if parts.len() > 1 && parts.last().is_some_and(|l| l == "init") {
                parts.pop();
            }
            out.push((parts.join("."), path));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("..").join("..").join("lua");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut modules = Vec::new();
    collect(&root, &root, &mut modules);
    let mut code = String::from("/// (module name, file, source) of every shipped Lua module.\n");
    code.push_str("pub static MODULES: &[(&str, &str, &str)] = &[\n");
    for (name, path) in &modules {
        let absolute = path.canonicalize().unwrap_or_else(|_| path.clone());
        let file = path
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = writeln!(
            code,
            "    ({name:?}, {file:?}, include_str!({:?})),",
            absolute.to_string_lossy()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("modules.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
}
