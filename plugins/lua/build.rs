//! Embeds the Lua modules uji ships (the repository's top-level `lua/`) into
//! the plugin: generates `$OUT_DIR/modules.rs`, a table of (module name,
//! chunk name, source, bytecode) built with `include_str!`/`include_bytes!`,
//! so `require("uji.defaults")` works without any file on disk. `lua/types/`
//! holds editor annotations only and is not embedded.
//!
//! Each module, and the plugin's own prelude, tasks and surface chunks, is
//! also compiled here by the same LuaJIT the plugin links (mlua, same
//! features), with its debug information (chunk name and lines, so errors
//! read the same): parsing them was a fifth of every process's start. The
//! source stays embedded too, loaded only if the bytecode is refused. A
//! syntax error in a shipped module stops the build, naming the file.

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

/// Stops the build with `what` went wrong with `path`: cargo shows the
/// message as the build's error.
fn fail(path: &Path, what: &str) -> ! {
    println!("cargo::error={}: {what}", path.display());
    std::process::exit(1)
}

/// Compiles `path` under `chunk_name` and writes its bytecode into
/// `out_dir`; the file written. Stops the build on any error.
fn compile(lua: &mlua::Lua, path: &Path, chunk_name: &str, out_dir: &Path) -> PathBuf {
    let source =
        std::fs::read(path).unwrap_or_else(|e| fail(path, &format!("cannot read it: {e}")));
    let function = lua
        .load(source)
        .set_name(chunk_name)
        .set_mode(mlua::prelude::LuaChunkMode::Text)
        .into_function()
        .unwrap_or_else(|e| fail(path, &e.to_string()));
    let bytecode = function.dump(false);
    let name = chunk_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>();
    let target = out_dir.join(format!("{name}.luac"));
    // Two chunk names that escape alike (`a_b.lua`, `a/b.lua`) would share
    // a file and one module load the other's code: refuse instead.
    if target.exists() {
        fail(
            path,
            &format!(
                "its bytecode file {} is already another module's; rename one of them",
                target.display()
            ),
        );
    }
    std::fs::write(&target, bytecode)
        .unwrap_or_else(|e| fail(path, &format!("cannot write {}: {e}", target.display())));
    target
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    // Emptied first: every bytecode file in it is this run's.
    let bytecode_dir = out_dir.join("luac");
    let _ = std::fs::remove_dir_all(&bytecode_dir);
    if let Err(e) = std::fs::create_dir_all(&bytecode_dir) {
        fail(&bytecode_dir, &format!("cannot create it: {e}"));
    }
    let root = manifest.join("..").join("..").join("lua");
    println!("cargo:rerun-if-changed={}", root.display());
    let lua = mlua::Lua::new();
    let mut modules = Vec::new();
    collect(&root, &root, &mut modules);
    // Each chunk once: its name (what errors and tracebacks show), its
    // source and its bytecode, as a `Compiled` of load.rs.
    let chunk = |path: &Path, chunk_name: &str| {
        let absolute = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let bytecode = compile(&lua, path, chunk_name, &bytecode_dir);
        format!(
            "super::Compiled {{ chunk_name: {chunk_name:?}, source: include_str!({:?}), bytecode: include_bytes!({:?}) }}",
            absolute.to_string_lossy(),
            bytecode.to_string_lossy()
        )
    };
    let mut code = String::from("/// (module name, chunk) of every shipped Lua module.\n");
    code.push_str("pub static MODULES: &[(&str, super::Compiled)] = &[\n");
    for (name, path) in &modules {
        let file = path
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let compiled = chunk(path, &format!("@[uji lua]/{file}"));
        let _ = writeln!(code, "    ({name:?}, {compiled}),");
    }
    code.push_str("];\n");
    // The plugin's own chunks (src/*.lua).
    for (constant, file) in [
        ("PRELUDE", "prelude.lua"),
        ("TASKS", "tasks.lua"),
        ("SURFACE", "surface.lua"),
    ] {
        let path = manifest.join("src").join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let compiled = chunk(&path, &format!("@[uji]/{file}"));
        let _ = writeln!(
            code,
            "/// src/{file}, compiled.\npub static {constant}: super::Compiled = {compiled};"
        );
    }
    let out = out_dir.join("modules.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
}
