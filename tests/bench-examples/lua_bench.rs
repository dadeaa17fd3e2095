//! Lua plugin benchmarks. Build the plugin first, then run:
//!
//! ```text
//! cargo build --release -p uji-plugin-lua
//! cargo run --release -p uji-tests --example lua_bench
//! ```
//!
//! Prints one line: `lua_tool_roundtrip_us <median> init_50_tools_ms <median>`
//! - the round trip of a trivial Lua tool call through the gate (boot once,
//!   then time many `gate.run` calls; target <= 50 us);
//! - the plugin's load time (open, handshake, init: Lua state, uji API, an
//!   init.lua adding 50 tools and a policy) over fresh boots (target <= 5 ms).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use uji_core::{HeadlessApprover, Interrupt, ToolRequest};
use uji_host::PluginSearch;
use uji_host::ProgressSink;
use uji_host::paths::Dirs;

const ROUNDTRIP_CALLS: usize = 5000;
const WARMUP_CALLS: usize = 500;
const BOOTS: usize = 40;

/// `libuji_plugin_lua` next to this example (target/<profile>/examples) or
/// one level up (target/<profile>).
fn lua_plugin() -> PathBuf {
    let file = format!(
        "{}uji_plugin_lua{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe.parent().expect("exe dir").to_path_buf();
    for candidate in [dir.join(&file), dir.join("..").join(&file)] {
        if candidate.exists() {
            return candidate;
        }
    }
    eprintln!(
        "lua_bench: {file} not found next to {} or in its parent; build it first: cargo build --release -p uji-plugin-lua",
        exe.display()
    );
    std::process::exit(2);
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

struct Home {
    root: tempfile::TempDir,
}

impl Home {
    fn new(init_lua: &str) -> Home {
        let root = tempfile::tempdir().unwrap();
        for dir in ["config", "data", "work"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        std::fs::write(root.path().join("config").join("init.lua"), init_lua).unwrap();
        Home { root }
    }

    fn boot(&self, plugin: &Path) -> uji_core::Booted {
        let search = PluginSearch {
            exe_dir: None,
            plugin_path: Some(plugin.to_string_lossy().into_owned()),
            config_plugins: None,
        };
        let dirs = Dirs {
            config: self.root.path().join("config"),
            data: self.root.path().join("data"),
        };
        let work = self.root.path().join("work");
        let booted = uji_core::boot(uji_core::BootOptions::new(dirs, &work).search(search));
        assert!(
            booted.plugins.failed.is_empty(),
            "{:?}",
            booted.plugins.failed
        );
        let notices = booted.registry.take_notices();
        assert!(notices.is_empty(), "{notices:?}");
        booted
    }
}

fn roundtrip_us(plugin: &Path) -> f64 {
    let home = Home::new(
        r#"uji.tool.add("noop", { policy = "allow", run = function(args) return "ok" end })"#,
    );
    let booted = home.boot(plugin);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let progress: ProgressSink = Arc::new(|_| {});
    let approver = HeadlessApprover { yes: false };
    let cwd = home.root.path().join("work");
    let mut samples = Vec::with_capacity(ROUNDTRIP_CALLS);
    runtime.block_on(async {
        for i in 0..WARMUP_CALLS + ROUNDTRIP_CALLS {
            let request = ToolRequest {
                call_id: format!("call_{i}"),
                name: "noop".to_string(),
                args: json!({"n": i}),
                cwd: cwd.clone(),
                session: None,
            };
            let started = Instant::now();
            let result = booted
                .gate
                .run(
                    request,
                    &approver,
                    progress.clone(),
                    &mut Interrupt::never(),
                )
                .await;
            let elapsed = started.elapsed();
            assert_eq!(result.output.text, "ok");
            if i >= WARMUP_CALLS {
                samples.push(elapsed.as_secs_f64() * 1e6);
            }
        }
    });
    median(samples)
}

fn init_ms(plugin: &Path) -> f64 {
    let mut init = String::new();
    for i in 0..50 {
        init.push_str(&format!(
            r#"uji.tool.add("tool_{i}", {{
  description = "Tool number {i}.",
  parameters = {{ type = "object", properties = {{ path = {{ type = "string" }} }}, required = {{ "path" }} }},
  policy = "ask",
  subject = function(args) return args.path end,
  display = {{ verb = "Ran", question = "Run tool {i}?" }},
  run = function(args, ctx) return "done " .. tostring(args.path) end,
}})
"#
        ));
    }
    init.push_str(
        r#"uji.tool.policy({
  default = "ask",
  run_command = { allow = { "git status", "git diff *", "cargo test*" }, deny = { "/^rm\\s+-rf/" } },
  tool_1 = { allow = { "src/*" } },
})
"#,
    );
    let home = Home::new(&init);
    let mut samples = Vec::with_capacity(BOOTS);
    for _ in 0..BOOTS {
        let booted = home.boot(plugin);
        // The 50 tools init.lua adds, beside core's own `subagent`.
        let added = booted
            .registry
            .tools()
            .iter()
            .filter(|t| t.spec().name.starts_with("tool_"))
            .count();
        assert_eq!(added, 50);
        let lua = booted
            .plugins
            .loaded
            .iter()
            .find(|p| p.manifest.name == "lua")
            .expect("the lua plugin loaded");
        samples.push(lua.load_time.as_secs_f64() * 1e3);
        // Each boot keeps its Lua thread (plugins are never unloaded); give
        // the machine a moment so boots do not overlap with teardown work.
        std::thread::sleep(Duration::from_millis(2));
    }
    median(samples)
}

fn main() {
    let plugin = lua_plugin();
    let roundtrip = roundtrip_us(&plugin);
    let init = init_ms(&plugin);
    println!("lua_tool_roundtrip_us {roundtrip:.1} init_50_tools_ms {init:.2}");
}
