//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use uji_sdk::testing::run_tool;
use uji_sdk::{Tool, ToolCall, ToolOutput};

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn run<T: Tool>(tool: T, args: Value, cwd: &Path) -> ToolOutput {
    run_tool(tool, args, cwd)
}

pub fn call(args: Value, cwd: &Path) -> ToolCall {
    ToolCall {
        id: "call_test".to_string(),
        args,
        cwd: cwd.to_string_lossy().into_owned(),
        roots: None,
        sandbox: None,
        spill: None,
        session: None,
    }
}

pub fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(&path, content).unwrap();
    path
}

pub fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap()
}

/// Names in `dir`, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

pub fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Root ignores permission bits, so tests that rely on them skip.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Values that are not an object of arguments.
pub fn non_objects() -> Vec<Value> {
    vec![
        Value::Null,
        serde_json::json!([]),
        serde_json::json!(["path"]),
        serde_json::json!("path"),
        serde_json::json!(42),
        serde_json::json!(true),
    ]
}
