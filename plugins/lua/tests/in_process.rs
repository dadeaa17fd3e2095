//! The Lua plugin hosted in process (no cdylib needed): a config dir, the
//! plugin's init through the real host, and calls through the real gate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use uji_core::{Gate, HeadlessApprover, Interrupt, ToolRequest};
use uji_host::{ProgressSink, Registry, load_module};

struct Env {
    registry: Registry,
    gate: Gate,
    config: tempfile::TempDir,
}

fn boot(init: &str) -> Env {
    boot_with(init, |_| {})
}

/// Boots with extra host services `install` adds before the plugin loads.
fn boot_with(init: &str, install: impl FnOnce(&Registry)) -> Env {
    let config = tempfile::tempdir().unwrap();
    std::fs::write(config.path().join("init.lua"), init).unwrap();
    let registry = Registry::new();
    registry.set_config(
        "config_dir",
        Value::from(config.path().to_string_lossy().into_owned()),
    );
    registry.install_services();
    let gate = Gate::new(registry.clone());
    gate.install_services();
    // As uji's boot does: the defaults' command files keep clear of the
    // names core answers.
    uji_core::session::service::install_builtin_names(&registry);
    install(&registry);
    load_module(
        uji_sdk::in_process_module::<uji_plugin_lua::LuaPlugin>(),
        "lua",
        &registry,
    )
    .unwrap();
    Env {
        registry,
        gate,
        config,
    }
}

/// The texts of the notices so far.
fn notice_texts(registry: &Registry) -> Vec<String> {
    registry
        .take_notices()
        .into_iter()
        .map(|n| n.text)
        .collect()
}

fn call(env: &Env, name: &str, args: Value) -> uji_core::GateResult {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let progress: ProgressSink = Arc::new(|_| {});
    rt.block_on(env.gate.run(
        ToolRequest {
            call_id: "c1".into(),
            name: name.into(),
            args,
            cwd: env.config.path().to_path_buf(),
            session: None,
        },
        &HeadlessApprover { yes: true },
        progress,
        &mut Interrupt::never(),
    ))
}

#[test]
fn a_lua_tool_runs_through_the_gate() {
    let env = boot(
        r#"
        uji.tool.add("echo", {
          description = "Echoes.",
          parameters = { type = "object", properties = { text = { type = "string" } } },
          policy = "allow",
          run = function(args) return "echo: " .. args.text end,
        })
        "#,
    );
    let notices = env.registry.take_notices();
    assert!(notices.is_empty(), "{notices:?}");
    let spec = env.registry.tool("echo").unwrap().spec().clone();
    assert_eq!(
        spec.parameters,
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    );
    let result = call(&env, "echo", json!({"text": "hi"}));
    assert_eq!(result.output.text, "echo: hi");
    assert!(result.ran);
}

#[test]
fn an_error_in_init_is_handed_to_uji_with_file_and_line_and_the_defaults_apply() {
    let env = boot("local x = 1\nerror('boom')\n");
    let error = env.registry.config("config_error").unwrap();
    let error = error.as_str().unwrap();
    assert!(
        error.contains("init.lua:2: boom (init.lua ran up to that error; the shipped defaults (uji.defaults) apply)"),
        "{error}"
    );
    assert!(env.registry.command("plan").is_some(), "the defaults ran");
    // uji (core) shows it; the plugin does not notify on its own.
    let notices = env.registry.take_notices();
    assert!(notices.is_empty(), "{notices:?}");
}

#[test]
fn services_that_are_not_there_yet_raise_a_clear_error() {
    let env = boot(
        r#"
for _, f in ipairs({
  function() uji.model.use("anthropic/claude") end,
  function() uji.model.current() end,
  function() uji.provider.add({ id = "p", wire = "w", base_url = "http://x", models = { "m" } }) end,
  function() uji.session.submit("hi") end,
  function() uji.quit() end,
  function() uji.session.set_title("t") end,
  function() uji.session.compact() end,
  function() uji.session.interrupt() end,
}) do
  local ok, err = pcall(f)
  uji.notify(tostring(ok) .. " " .. err)
end
uji.keymap.add("normal", "<C-b>", { command = "plan" })
local mine = 0
for _, b in ipairs(uji.keymap.list()) do
  if b.source == "user" then mine = mine + 1 end
end
uji.notify("keymap kept: " .. mine)
"#,
    );
    let notices = notice_texts(&env.registry);
    assert_eq!(notices.len(), 9, "{notices:?}");
    for (notice, api) in notices.iter().zip([
        "uji.model.use",
        "uji.model.current",
        "uji.provider.add",
        "uji.session.submit",
        "uji.quit",
        "uji.session.set_title",
        "uji.session.compact",
        "uji.session.interrupt",
    ]) {
        assert!(notice.starts_with("false "), "{notice}");
        assert!(
            notice.contains(&format!(
                "{api} is not available yet: uji has no host service"
            )),
            "{notice}"
        );
        assert!(notice.contains("init.lua:"), "{notice}");
    }
    assert_eq!(notices[8], "keymap kept: 1");
}

/// The session functions send the typed requests of `uji_sdk::services`
/// (served here by stand-ins decoding into the same types) and return the
/// typed answers.
#[test]
fn session_functions_send_the_typed_session_requests() {
    use uji_sdk::services::{
        SessionCompact, SessionInfo, SessionInfoRequest, SessionInterrupt, SessionSetTitle,
    };
    let seen = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    let env = boot_with(
        r#"
uji.session.set_title("Refactor the parser")
uji.session.compact()
uji.session.interrupt()
local info = uji.session.info()
uji.notify(info.title .. " " .. info.model .. " " .. info.messages .. " " .. info.usage.input .. " " .. info.later)
"#,
        |registry| {
            let log = Arc::clone(&seen);
            registry.serve(move |r: SessionSetTitle| {
                log.lock().push(format!("title {}", r.title));
                Ok(())
            });
            let log = Arc::clone(&seen);
            registry.serve(move |_: SessionCompact| {
                log.lock().push("compact".into());
                Ok(())
            });
            let log = Arc::clone(&seen);
            registry.serve(move |_: SessionInterrupt| {
                log.lock().push("interrupt".into());
                Ok(())
            });
            registry.serve(|_: SessionInfoRequest| {
                let mut info = SessionInfo {
                    title: "Refactor the parser".into(),
                    model: "echo/parrot".into(),
                    messages: 2,
                    ..SessionInfo::default()
                };
                info.usage.input = 7;
                info.extra.insert("later".into(), json!("kept"));
                Ok(info)
            });
        },
    );
    let notices = notice_texts(&env.registry);
    assert_eq!(notices, ["Refactor the parser echo/parrot 2 7 kept"]);
    assert_eq!(
        *seen.lock(),
        ["title Refactor the parser", "compact", "interrupt"]
    );
}

#[test]
fn provider_specs_are_checked_and_models_normalized() {
    let env = boot(
        r#"
local ok, err = pcall(uji.provider.add, { id = "p", wire = 3, base_url = "http://x" })
uji.notify(err)
"#,
    );
    let notices = notice_texts(&env.registry);
    assert!(
        notices[0].contains("uji.provider.add: wire must be a string"),
        "{notices:?}"
    );

    // With a provider.add service, the normalized, typed spec is what it
    // receives (the context window a model left out is the default one).
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("init.lua"),
        r#"local r = uji.provider.add({ id = "p", wire = "w", base_url = "http://x", models = { "a", { id = "b", context_window = 10 } } })
uji.notify(r == nil and "ok" or "not ok")"#,
    )
    .unwrap();
    let registry = Registry::new();
    registry.set_config(
        "config_dir",
        Value::from(config.path().to_string_lossy().into_owned()),
    );
    let seen = Arc::new(parking_lot::Mutex::new(Value::Null));
    let sink = Arc::clone(&seen);
    registry.add_service(
        "provider.add",
        Arc::new(move |_plugin, params| {
            *sink.lock() = params;
            Ok(Value::Null)
        }),
    );
    load_module(
        uji_sdk::in_process_module::<uji_plugin_lua::LuaPlugin>(),
        "lua",
        &registry,
    )
    .unwrap();
    assert_eq!(
        *seen.lock(),
        json!({"id": "p", "wire": "w", "base_url": "http://x", "models": [{"id": "a", "context_window": 128000}, {"id": "b", "context_window": 10}]})
    );
    let notices = notice_texts(&registry);
    assert_eq!(notices, ["ok"]);
}

/// Every ```lua block of docs/lua.md runs as an init.lua without an error,
/// except the "not available yet" of services that come with the agent loop.
#[test]
fn every_example_in_the_docs_runs() {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/lua.md")).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in docs.lines() {
        match (&mut current, line.trim_start()) {
            (None, "```lua") => current = Some(String::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(blocks.len() > 25, "found {} blocks", blocks.len());
    for block in &blocks {
        let env = boot(block);
        for notice in env.registry.take_notices() {
            assert!(
                !notice.text.contains("failed") || notice.text.contains("is not available yet"),
                "docs example failed: {}\n---\n{block}",
                notice.text
            );
        }
    }
}

#[test]
fn shipped_modules_are_embedded() {
    let names = uji_plugin_lua::shipped_names();
    assert!(names.contains(&"uji.defaults"), "{names:?}");
    assert!(names.contains(&"uji.planmode"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("types")), "{names:?}");
}

#[test]
fn hook_names_are_generated_from_the_line_and_stay_unique() {
    let env = boot(
        r#"
local names = {}
for i = 1, 2 do
  names[i] = uji.on("x", function() return i end)
end
names[3] = uji.on("x", function() return 3 end, { name = "three" })
uji.notify(table.concat(names, " "))
uji.notify(uji.json.encode(uji.emit("x")))
"#,
    );
    let notices = notice_texts(&env.registry);
    assert_eq!(notices, ["init.lua:4 init.lua:4#2 three", "[1,2,3]"]);
}

#[test]
fn the_lua_environment_is_luajit_with_the_safe_libraries() {
    let env = boot(
        r#"
uji.notify(tostring(require("uji") == uji))
uji.notify(type(jit) .. " " .. type(io.popen) .. " " .. type(os.time) .. " " .. tostring(ffi))
local ok, trace = xpcall(function() error("deep") end, debug.traceback)
uji.notify(tostring(ok) .. " " .. tostring(trace:find("stack traceback", 1, true) ~= nil))
print("to the log, not the terminal")
uji.notify(type(uji.version))
"#,
    );
    let notices = notice_texts(&env.registry);
    assert_eq!(
        notices,
        [
            "true",
            "table function function nil",
            "false true",
            "string"
        ]
    );
}
