//! Helpers for uji's end-to-end tests: where the built binary and plugins
//! are, isolated config/data directories, and running `uji`.
//!
//! The tests use what `cargo build --workspace` produced (the README's test
//! command builds first), so they exercise the real binary and real cdylibs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The plugins a screen test against the fake model (Chat Completions)
/// loads: the screen, the tools, the wire and Lua.
pub const SCREEN_PLUGINS: &[&str] = &[
    "uji_plugin_tui",
    "uji_plugin_tools",
    "uji_plugin_openai_chat",
    "uji_plugin_lua",
];

/// A valid 1×1 PNG, for tests that attach an image.
pub const ONE_PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// `target/<profile>`, where cargo put `uji` and the plugin libraries.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test binary>
    let deps = exe.parent().expect("deps dir");
    let dir = if deps.ends_with("deps") {
        deps.parent().expect("profile dir")
    } else {
        deps
    };
    dir.to_path_buf()
}

/// The `uji` executable under test.
pub fn uji_bin() -> PathBuf {
    let path = target_dir().join("uji");
    assert!(
        path.exists(),
        "{} is missing: build first with `cargo build --workspace` (the README's test command does)",
        path.display()
    );
    path
}

/// A built shared library by its library name (`uji_fixture_init_error`).
pub fn artifact(lib_name: &str) -> PathBuf {
    let file = format!(
        "{}{lib_name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let path = target_dir().join(file);
    assert!(
        path.exists(),
        "{} is missing: build first with `cargo build --workspace` (the README's test command does)",
        path.display()
    );
    path
}

/// `UJI_PLUGIN_PATH` naming the built libraries `lib_names`.
pub fn plugin_path(lib_names: &[&str]) -> String {
    lib_names
        .iter()
        .map(|lib| artifact(lib).display().to_string())
        .collect::<Vec<_>>()
        .join(":")
}

/// A fresh directory holding copies of the named libraries. Copies, so each
/// test loads its own instance (dlopen shares one instance per path).
pub fn plugin_dir(lib_names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in lib_names {
        let from = artifact(name);
        let to = dir.path().join(from.file_name().expect("file name"));
        std::fs::copy(&from, &to).expect("copy plugin");
    }
    dir
}

/// An isolated home for one uji run: config, data and HOME inside a temp dir.
pub struct Sandbox {
    pub root: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let root = tempfile::tempdir().expect("tempdir");
        for dir in ["home", "config", "data", "work"] {
            std::fs::create_dir_all(root.path().join(dir)).expect("mkdir");
        }
        Sandbox { root }
    }

    pub fn config(&self) -> PathBuf {
        self.root.path().join("config")
    }

    /// Writes `lua` as this sandbox's init.lua.
    pub fn write_init(&self, lua: &str) {
        std::fs::write(self.config().join("init.lua"), lua).expect("write init.lua");
    }

    pub fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// The data directory (sessions, checkpoints).
    pub fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    /// The whole environment of a `uji` run here: no real keys, no real
    /// config.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
            ("HOME".into(), self.root.path().join("home").into()),
            ("UJI_CONFIG_DIR".into(), self.config().into()),
            ("UJI_DATA_DIR".into(), self.data().into()),
        ]
    }

    /// A `uji` command with this sandbox's directories and a clean
    /// environment (no real keys, no real config).
    pub fn uji(&self) -> Command {
        let mut cmd = Command::new(uji_bin());
        cmd.env_clear().envs(self.env()).current_dir(self.work());
        cmd
    }

    /// The same `uji` run, for [`tty::Tty::spawn`] (which adds `TERM`).
    pub fn uji_tty(&self) -> tty::TtyCommand {
        tty::TtyCommand {
            program: uji_bin().into(),
            args: Vec::new(),
            env: self.env(),
            cwd: self.work(),
        }
    }
}

/// An init.lua with no deny rules, not even uji's defaults. A command that
/// is not plain (`$$`, `$PPID`, `$?`) runs under `--yes` only when no deny
/// rule could have matched it (docs/policy.md); tests whose commands need
/// such words use this.
pub const NO_DENY_RULES: &str = "uji.tool.policy({ run_command = { default = \"ask\" } })\n";

/// The `name` of each object in a JSON array (commands, tools).
pub fn names(list: &serde_json::Value) -> Vec<&str> {
    list.as_array()
        .expect("an array")
        .iter()
        .map(|c| c["name"].as_str().expect("a name"))
        .collect()
}

/// Stdout and stderr as text, for assertions and failure messages.
pub fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Copies `file` into `dir` and returns the new path.
pub fn copy_into(file: &Path, dir: &Path) -> PathBuf {
    let to = dir.join(file.file_name().expect("file name"));
    std::fs::copy(file, &to).expect("copy");
    to
}

/// The first spill file a `uji run` in `sandbox` writes, once it exists
/// (within ten seconds).
pub fn wait_for_spill_file(sandbox: &Sandbox) -> PathBuf {
    let root = sandbox.root.path().join("data/spill");
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(10) {
        let found = std::fs::read_dir(&root)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|session| std::fs::read_dir(session.path()).into_iter().flatten())
            .flatten()
            .map(|file| file.path())
            .find(|path| path.extension().is_some_and(|e| e == "log"));
        if let Some(path) = found {
            return path;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("no spill file appeared under {}", root.display());
}

pub mod acp;
pub mod chat;
pub mod scripted;
pub mod tty;

/// Runs `cmd` with `input` on stdin (a pipe, not a terminal).
pub fn with_stdin(mut cmd: Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The Rust examples of docs/frontends.md compile and run as doctests, so
/// the guide cannot drift from the SDK (its 40-line frontend is
/// examples/minimal-frontend, checked to be shown verbatim by
/// tests/e2e/example_plugin.rs).
#[cfg(doctest)]
#[doc = include_str!("../../docs/frontends.md")]
pub struct FrontendsGuide;
