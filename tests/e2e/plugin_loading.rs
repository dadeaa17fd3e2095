//! The plugin loading matrix, in process (through uji-host, as core uses it)
//! and through the real `uji plugins` command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use uji_host::{
    CallError, FailureReason, ProgressSink, Registry, StreamError, WireEvents, load_plugin_file,
};
use uji_protocol::ToolCall;
use uji_protocol::wire::{ProviderInfo, WireRequest};
use uji_tests::{Sandbox, artifact, plugin_dir, text};

fn load_one(
    lib: &str,
) -> (
    Registry,
    Result<uji_host::LoadedPlugin, uji_host::LoadFailure>,
    tempfile::TempDir,
) {
    let dir = plugin_dir(&[lib]);
    let registry = Registry::new();
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let result = load_plugin_file(&file, &registry);
    (registry, result, dir)
}

fn call(name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall {
        id: format!("call_{name}"),
        args,
        cwd: std::env::temp_dir().to_string_lossy().into_owned(),
        roots: None,
        sandbox: None,
        spill: None,
        session: None,
    }
}

fn no_progress() -> ProgressSink {
    Arc::new(|_: &str| {})
}

#[test]
fn missing_file_is_reported() {
    let registry = Registry::new();
    let failure = load_plugin_file(
        std::path::Path::new("/nonexistent/libnothing.so"),
        &registry,
    )
    .unwrap_err();
    assert_eq!(failure.reason, FailureReason::Missing);
    assert!(
        failure.reason.to_string().contains("no such file"),
        "{}",
        failure.reason
    );
}

#[test]
fn a_cdylib_that_is_not_a_uji_plugin_is_named_as_such() {
    let (registry, result, _dir) = load_one("uji_fixture_not_a_plugin");
    let failure = result.unwrap_err();
    assert_eq!(
        failure.reason,
        FailureReason::Load(uji_host::LoadError::NotAPlugin)
    );
    assert!(
        failure.reason.to_string().starts_with("not a uji plugin"),
        "{}",
        failure.reason
    );
    assert!(registry.tools().is_empty());
}

#[test]
fn a_file_that_is_not_a_shared_library_is_refused_with_the_loader_reason() {
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("libbogus.so");
    std::fs::write(&bogus, b"this is not ELF").unwrap();
    let failure = load_plugin_file(&bogus, &Registry::new()).unwrap_err();
    let text = failure.reason.to_string();
    assert!(text.starts_with("not a loadable shared library"), "{text}");
}

/// The refusal uji prints for a plugin built for `plugin_abi`.
fn refusal(plugin_abi: &str, family: &str) -> String {
    let host = uji_host::ABI_VERSION;
    format!(
        "built for uji plugin ABI {plugin_abi}, but this uji ({}) speaks plugin ABI {host}: rebuild the plugin against a uji-sdk for plugin ABI {host}, or use a uji that speaks plugin ABI {plugin_abi}{family}",
        uji_host::UJI_VERSION
    )
}

fn refused(lib: &str) -> FailureReason {
    let (registry, result, _dir) = load_one(lib);
    let failure = result.unwrap_err();
    assert!(registry.commands().is_empty(), "{lib} registered nothing");
    failure.reason
}

#[test]
fn a_manifest_claiming_another_abi_is_refused_naming_both_abis() {
    let reason = refused("uji_fixture_incompatible");
    assert_eq!(
        reason,
        FailureReason::IncompatibleAbi {
            plugin: "9.0".to_string()
        }
    );
    assert_eq!(reason.to_string(), refusal("9.0", " or a later 9.x"));
}

#[test]
fn a_plugin_for_a_newer_abi_minor_is_refused_by_the_handshake() {
    let reason = refused("uji_fixture_abi_next_minor");
    assert_eq!(reason.to_string(), refusal("1.2", " or a later 1.x"));
}

#[test]
fn a_plugin_for_another_abi_major_is_refused_by_abi_stable_naming_both_abis() {
    let reason = refused("uji_fixture_abi_next_major");
    assert_eq!(
        reason,
        FailureReason::IncompatibleAbi {
            plugin: "2.0".to_string()
        },
        "abi_stable's version check, told in ABI terms"
    );
    assert_eq!(reason.to_string(), refusal("2.0", " or a later 2.x"));
}

#[test]
fn a_plugin_from_before_abi_versions_is_refused_naming_its_abi() {
    let reason = refused("uji_fixture_abi_before_versions");
    assert_eq!(reason.to_string(), refusal("0.1", ""));
}

#[test]
fn an_old_manifest_with_only_sdk_version_is_read_as_its_abi() {
    let reason = refused("uji_fixture_abi_old_manifest");
    assert_eq!(
        reason,
        FailureReason::IncompatibleAbi {
            plugin: "0.1.0".to_string()
        }
    );
    assert_eq!(reason.to_string(), refusal("0.1", ""));
}

/// The service-echo fixture (ABI 1.1, serving `fixture.echo` and
/// `fixture.who`) and the ABI 1.0 fixture, loaded in that order into one
/// registry with core's own services; and the 1.0 fixture's probe, which
/// calls `METHOD JSON` through the 1.0 vtable.
fn echo_and_abi_1_0() -> (Registry, tempfile::TempDir) {
    let dir = plugin_dir(&["uji_fixture_service_echo", "uji_fixture_abi_1_0"]);
    let registry = Registry::new();
    registry.install_services();
    for lib in [
        "libuji_fixture_service_echo.so",
        "libuji_fixture_abi_1_0.so",
    ] {
        let loaded = load_plugin_file(&dir.path().join(lib), &registry);
        assert!(loaded.is_ok(), "{lib}: {:?}", loaded.err());
    }
    (registry, dir)
}

fn probe(registry: &Registry, args: &str) -> String {
    let command = registry
        .command("fixture-abi-1-0-probe")
        .expect("the ABI 1.0 plugin's init called back through the host");
    command.run(args).unwrap()
}

#[test]
fn a_plugin_built_for_abi_1_0_loads_and_calls_a_service_another_plugin_serves() {
    let (registry, _dir) = echo_and_abi_1_0();
    assert_eq!(
        probe(&registry, r#"fixture.echo {"text":"hi"}"#),
        r#"{"echo":"hi"}"#
    );
    assert_eq!(
        probe(&registry, "fixture.who {}"),
        r#"{"caller":"fixture-abi-1-0"}"#,
        "the serving plugin learns who called"
    );
    assert!(
        probe(&registry, "wire.list {}").starts_with('['),
        "core's services answer as before"
    );
    assert_eq!(
        registry.provided_by("fixture-service-echo").services,
        ["fixture.echo", "fixture.who"]
    );
    assert_eq!(
        registry.provided_by("fixture-service-echo").kinds(),
        ["command", "service"]
    );
}

#[test]
fn a_served_service_refuses_a_request_of_another_shape_and_passes_its_errors_as_written() {
    let (registry, _dir) = echo_and_abi_1_0();
    assert_eq!(
        probe(&registry, r#"fixture.echo {"text":"fail"}"#),
        "error: told to fail; send any other text"
    );
    let bad = probe(&registry, r#"fixture.echo {"txt":"hi"}"#);
    assert!(
        bad.starts_with(r#"error: fixture.echo expects {"text": string}: missing field `text`"#),
        "{bad}"
    );
    let missing = probe(&registry, "fixture.nothing {}");
    assert_eq!(
        missing,
        r#"error: uji has no host service named "fixture.nothing""#
    );
}

#[test]
fn a_plugin_cannot_serve_a_method_core_serves_but_may_serve_its_own_again() {
    let (registry, _dir) = echo_and_abi_1_0();
    let tries = registry.command("fixture-service-echo-tries").unwrap();
    assert_eq!(
        tries.run("").unwrap(),
        "wire.list: refused: uji itself serves \"wire.list\"; a plugin cannot replace a host service of uji's\n\
         fixture.echo again: ok"
    );
    assert!(
        !probe(&registry, "wire.list {}").contains("fake"),
        "core's wire.list still answers"
    );
}

#[test]
fn a_service_that_panics_names_its_plugin_and_is_not_called_again() {
    let (registry, _dir) = echo_and_abi_1_0();
    let panicked = probe(&registry, r#"fixture.echo {"text":"panic"}"#);
    assert!(
        panicked.starts_with("error: plugin fixture-service-echo panicked: told to panic"),
        "{panicked}"
    );
    let after = probe(&registry, r#"fixture.echo {"text":"hi"}"#);
    assert!(
        after.starts_with("error: plugin fixture-service-echo is disabled for this session"),
        "{after}"
    );
}

#[test]
fn a_plugin_from_another_uji_release_with_the_same_abi_loads_and_works() {
    let (registry, result, _dir) = load_one("uji_fixture_abi_other_release");
    let loaded = result.unwrap();
    assert_eq!(loaded.manifest.version, "0.9.0");
    assert_ne!(loaded.manifest.version, uji_host::UJI_VERSION);
    assert_eq!(loaded.manifest.claimed_abi(), Some(uji_host::ABI_VERSION));
    let command = registry
        .command("fixture-abi-other-release-probe")
        .expect("its init called back through the host");
    assert_eq!(command.run("").unwrap(), "probed");
}

#[test]
fn another_programs_abi_stable_library_fails_the_layout_check() {
    let (_registry, result, _dir) = load_one("uji_fixture_foreign_abi");
    let failure = result.unwrap_err();
    assert!(
        matches!(
            failure.reason,
            FailureReason::Load(uji_host::LoadError::IncompatibleLayout {
                plugin_abi: None,
                ..
            })
        ),
        "{:?}",
        failure.reason
    );
    assert_eq!(
        failure.reason.to_string(),
        format!(
            "its plugin interface does not match this uji's (plugin ABI {}): it is a library of another abi_stable program, not a uji plugin; remove it from the plugins directory",
            uji_host::ABI_VERSION
        )
    );
}

#[test]
fn init_error_is_reported_and_what_it_registered_is_forgotten() {
    let (registry, result, _dir) = load_one("uji_fixture_init_error");
    let failure = result.unwrap_err();
    assert_eq!(
        failure.reason,
        FailureReason::InitError("cannot start: FIXTURE_TOKEN is not set".to_string())
    );
    assert!(
        registry.tool("ghost_tool").is_none(),
        "a failed plugin's tool must not stay"
    );
}

#[test]
fn init_panic_is_caught_and_reported_with_the_panic_message() {
    let (registry, result, _dir) = load_one("uji_fixture_init_panic");
    let failure = result.unwrap_err();
    match &failure.reason {
        FailureReason::InitPanicked(message) => {
            assert!(message.contains("index out of bounds"), "{message}");
            assert!(
                message.contains("init-panic/src/lib.rs"),
                "location kept: {message}"
            );
        }
        other => panic!("expected InitPanicked, got {other:?}"),
    }
    assert!(registry.tools().is_empty());
}

#[test]
fn a_panic_during_a_tool_call_becomes_an_error_and_marks_the_plugin_failed() {
    let (registry, result, _dir) = load_one("uji_fixture_misbehaving");
    let loaded = result.unwrap();

    // The plugin works before the panic.
    let echo = registry.tool("echo").unwrap();
    let output = echo
        .start(&call("echo", json!({"text": "still here"})), no_progress())
        .unwrap()
        .wait_blocking()
        .unwrap();
    assert_eq!(output.text, "still here");

    let panicky = registry.tool("panic_now").unwrap();
    let err = panicky
        .start(&call("panic_now", json!({})), no_progress())
        .unwrap()
        .wait_blocking()
        .unwrap_err();
    match &err {
        CallError::Panicked { plugin, message } => {
            assert_eq!(plugin, "fixture-misbehaving");
            assert!(message.contains("the fixture tool exploded"), "{message}");
        }
        other => panic!("expected Panicked, got {other:?}"),
    }
    assert!(
        loaded
            .failure()
            .unwrap()
            .contains("the fixture tool exploded")
    );

    // Every later call to that plugin fails at once without calling into it.
    let err = echo
        .start(&call("echo", json!({"text": "again"})), no_progress())
        .err()
        .unwrap();
    assert!(matches!(err, CallError::PluginFailed { .. }), "{err:?}");
    assert!(err.to_string().contains("restart uji"), "{err}");
}

#[test]
fn a_panic_in_a_synchronous_plugin_call_is_an_error_not_an_abort() {
    let (registry, result, _dir) = load_one("uji_fixture_misbehaving");
    result.unwrap();
    let tool = registry.tool("panic_subject").unwrap();
    let err = tool.subject(&json!({})).unwrap_err();
    assert!(matches!(err, CallError::Panicked { .. }), "{err:?}");
    assert!(err.to_string().contains("no subject for you"), "{err}");
}

#[test]
fn a_dropped_completion_gives_an_error_instead_of_a_hang() {
    let (registry, result, _dir) = load_one("uji_fixture_misbehaving");
    result.unwrap();
    let tool = registry.tool("drop_call").unwrap();
    let running = tool
        .start(&call("drop_call", json!({})), no_progress())
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(running.wait_blocking());
    });
    let result = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a dropped completion must not hang the call");
    let err = result.unwrap_err();
    assert_eq!(
        err,
        CallError::Dropped {
            plugin: "fixture-misbehaving".to_string()
        }
    );
    assert!(err.to_string().contains("without finishing"), "{err}");
}

#[tokio::test]
async fn cancelling_a_tool_call_reaches_the_plugin_and_progress_streams() {
    let (registry, result, _dir) = load_one("uji_fixture_misbehaving");
    result.unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink_lines = Arc::clone(&lines);
    let sink: ProgressSink =
        Arc::new(move |line: &str| sink_lines.lock().unwrap().push(line.to_string()));
    let tool = registry.tool("until_cancelled").unwrap();
    let mut running = tool
        .start(&call("until_cancelled", json!({})), sink)
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    running.cancel();
    let output = tokio::time::timeout(Duration::from_secs(5), running.finished())
        .await
        .expect("the tool stops promptly once cancelled")
        .unwrap();
    assert_eq!(
        output.text,
        "error: interrupted by the user while this tool ran"
    );
    let lines = lines.lock().unwrap();
    assert!(lines.first().is_some_and(|l| l == "tick 1"), "{lines:?}");
}

struct Collect(Mutex<String>);

impl WireEvents for Collect {
    fn text(&self, delta: &str) {
        self.0.lock().unwrap().push_str(delta);
    }
    fn reasoning(&self, _delta: &str) {}
}

fn wire_request(model: &str) -> WireRequest {
    WireRequest {
        model: model.to_string(),
        system: String::new(),
        messages: Vec::new(),
        tools: Vec::new(),
        effort: None,
        max_output: None,
        cache: None,
        session: None,
        provider: ProviderInfo::default(),
        auth: Default::default(),
        idle_timeout: None,
    }
}

#[test]
fn wire_calls_survive_panics_and_dropped_replies() {
    let (registry, result, _dir) = load_one("uji_fixture_misbehaving");
    result.unwrap();
    let wire = registry.wire("moody").unwrap();

    let events = Arc::new(Collect(Mutex::new(String::new())));
    let answer = wire
        .stream(wire_request("fine"), events.clone())
        .unwrap()
        .wait_blocking()
        .unwrap();
    assert_eq!(answer.text, "hi");
    assert_eq!(*events.0.lock().unwrap(), "hi");

    let dropped = wire
        .stream(wire_request("drop"), events.clone())
        .unwrap()
        .wait_blocking()
        .unwrap_err();
    assert!(
        matches!(dropped, StreamError::Plugin(CallError::Dropped { .. })),
        "{dropped:?}"
    );

    let panicked = wire.stream(wire_request("panic"), events).err().unwrap();
    assert!(
        matches!(panicked, CallError::Panicked { .. }),
        "{panicked:?}"
    );
    assert!(panicked.to_string().contains("the fixture wire exploded"));
}

#[test]
fn uji_plugins_lists_good_plugins_and_each_broken_file_with_its_reason() {
    let dir = plugin_dir(&[
        "uji_fixture_misbehaving",
        "uji_fixture_not_a_plugin",
        "uji_fixture_incompatible",
        "uji_fixture_init_error",
        "uji_fixture_init_panic",
    ]);
    std::fs::write(dir.path().join("libtruncated.so"), b"\x7fELF").unwrap();
    let sandbox = Sandbox::new();
    let output = sandbox
        .uji()
        .arg("plugins")
        .env(
            "UJI_PLUGIN_PATH",
            format!("{}:/nonexistent/uji-plugins", dir.path().display()),
        )
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(
        output.status.success(),
        "exit 0 even when some failed; stderr: {stderr}"
    );

    let line = stdout
        .lines()
        .find(|l| l.starts_with("fixture-misbehaving "))
        .unwrap_or_else(|| panic!("misbehaving plugin listed:\n{stdout}"));
    assert!(line.contains("0.1.0"), "{line}");
    assert!(line.contains("tool,wire"), "{line}");
    assert!(
        line.contains("tools: drop_call, echo, panic_now, panic_subject, until_cancelled"),
        "{line}"
    );
    assert!(line.contains("wires: moody"), "{line}");
    assert!(line.contains("libuji_fixture_misbehaving.so"), "{line}");

    let failed = stdout
        .split("failed to load:")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}"));
    for (file, reason) in [
        ("libuji_fixture_not_a_plugin.so", "not a uji plugin"),
        (
            "libuji_fixture_incompatible.so",
            "built for uji plugin ABI 9.0, but this uji (",
        ),
        (
            "libuji_fixture_init_error.so",
            "its init returned an error: cannot start: FIXTURE_TOKEN is not set",
        ),
        (
            "libuji_fixture_init_panic.so",
            "its init panicked: index out of bounds",
        ),
        ("libtruncated.so", "not a loadable shared library"),
        ("/nonexistent/uji-plugins", "no such file or directory"),
    ] {
        let line = failed
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{file} reported:\n{stdout}"));
        assert!(
            line.contains(reason),
            "{file}: expected {reason:?} in {line:?}"
        );
    }
    assert!(
        !stdout.contains("ghost_tool"),
        "a failed plugin's tool is not listed"
    );
}

#[test]
fn uji_plugins_lists_the_shipped_tools_plugin_found_next_to_the_binary() {
    artifact("uji_plugin_tools");
    let sandbox = Sandbox::new();
    let output = sandbox.uji().args(["plugins", "--json"]).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let tools = doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "tools")
        .unwrap_or_else(|| panic!("tools plugin listed: {stdout}"));
    assert_eq!(tools["origin"], "bundled");
    assert_eq!(
        tools["tools"],
        json!([
            "edit_file",
            "job_output",
            "read_file",
            "run_command",
            "stop_job",
            "write_file"
        ])
    );
    assert_eq!(doc["failed"], json!([]), "nothing shipped fails: {stdout}");
}

#[test]
fn a_plugin_in_the_config_dir_is_found_and_a_same_named_one_earlier_in_the_path_wins() {
    let sandbox = Sandbox::new();
    let config_plugins = sandbox.config().join("plugins");
    std::fs::create_dir_all(&config_plugins).unwrap();
    uji_tests::copy_into(&artifact("uji_fixture_misbehaving"), &config_plugins);
    let earlier = plugin_dir(&["uji_fixture_misbehaving"]);

    let output = sandbox.uji().args(["plugins", "--json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let found = doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "fixture-misbehaving")
        .cloned();
    assert_eq!(found.unwrap()["origin"], "config");

    let output = sandbox
        .uji()
        .args(["plugins", "--json"])
        .env("UJI_PLUGIN_PATH", earlier.path())
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let found = doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "fixture-misbehaving")
        .cloned();
    assert_eq!(found.unwrap()["origin"], "UJI_PLUGIN_PATH");
    let shadowed = doc["shadowed"].as_array().unwrap();
    assert_eq!(shadowed.len(), 1, "{doc}");
    assert!(
        shadowed[0]["path"]
            .as_str()
            .unwrap()
            .starts_with(config_plugins.to_str().unwrap())
    );
}

#[test]
fn a_failed_init_puts_back_what_the_plugin_replaced() {
    let dir = plugin_dir(&["uji_plugin_tools", "uji_fixture_init_error"]);
    let registry = Registry::new();
    let lib = |name: &str| {
        dir.path()
            .join(format!("lib{name}.so"))
            .display()
            .to_string()
    };
    // Later entries initialise first: the tools plugin, then the failing one.
    let search = uji_host::PluginSearch {
        exe_dir: None,
        plugin_path: Some(format!(
            "{}:{}",
            lib("uji_fixture_init_error"),
            lib("uji_plugin_tools")
        )),
        config_plugins: None,
    };
    // Allowed, so the failing plugin's read_file does replace the built-in.
    registry.allow_replace(&["read_file".to_string()]);
    let set = uji_host::load_plugins(&search, &registry);
    assert_eq!(set.failed.len(), 1, "{:?}", set.failed);
    assert!(registry.clashes().is_empty());
    assert!(registry.replaced_from("read_file").is_none());
    let read = registry.tool("read_file").unwrap();
    assert_eq!(read.plugin(), "tools", "the built-in read_file is back");
    assert!(registry.tool("ghost_tool").is_none());
}

#[test]
fn uji_plugins_loads_same_abi_plugins_and_names_both_abis_for_the_others() {
    let dir = plugin_dir(&[
        "uji_fixture_abi_other_release",
        "uji_fixture_abi_next_minor",
        "uji_fixture_abi_next_major",
        "uji_fixture_abi_before_versions",
    ]);
    let sandbox = Sandbox::new();
    let output = sandbox
        .uji()
        .args(["plugins", "--json"])
        .env("UJI_PLUGIN_PATH", dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["abi_version"], uji_host::ABI_VERSION);
    assert_eq!(doc["uji_version"], uji_host::UJI_VERSION);
    let loaded = doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "fixture-abi-other-release")
        .unwrap_or_else(|| panic!("same ABI, other release: loaded\n{stdout}"));
    assert_eq!(loaded["version"], "0.9.0");
    assert_eq!(loaded["abi_version"], uji_host::ABI_VERSION);
    assert_eq!(
        loaded["commands"],
        json!(["fixture-abi-other-release-probe"])
    );

    let reason = |file: &str| {
        doc["failed"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(file))
            .map(|f| f["reason"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("{file} reported: {stdout}"))
    };
    assert_eq!(
        reason("libuji_fixture_abi_next_minor.so"),
        refusal("1.2", " or a later 1.x")
    );
    assert_eq!(
        reason("libuji_fixture_abi_next_major.so"),
        refusal("2.0", " or a later 2.x")
    );
    assert_eq!(
        reason("libuji_fixture_abi_before_versions.so"),
        refusal("0.1", "")
    );
}

#[test]
fn uji_version_names_the_release_and_the_plugin_abi() {
    let output = Sandbox::new().uji().arg("--version").output().unwrap();
    let (stdout, _) = text(&output);
    assert_eq!(
        stdout.trim(),
        format!(
            "uji {} (plugin ABI {})",
            uji_host::UJI_VERSION,
            uji_host::ABI_VERSION
        )
    );
}

// ---- shipped wires and frontends opened on demand ---------------------------

const ON_DEMAND_MODEL: &str = "openrouter/qwen/qwen3-coder";
/// What a run of ON_DEMAND_MODEL says when its wire is not there.
const WIRE_NOT_LOADED: &str =
    "the \"openai-chat\" wire that provider openrouter needs is not loaded";

/// A one-answer `uji run` with `init_lua`; its output and uji's log.
fn run_one_answer(init_lua: &str) -> (std::process::Output, String, String) {
    let model = uji_fake_model::FakeModel::start();
    model.push(uji_tests::chat::answer("done"));
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config().join("init.lua"), init_lua).unwrap();
    let output = uji_tests::chat::uji_with_model(&sandbox, &model, "sk-on-demand")
        .args(["run", "--model", ON_DEMAND_MODEL, "hi"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    let log =
        std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap_or_default();
    (output, stderr, log)
}

#[test]
fn a_session_opens_only_the_wire_its_model_uses_yet_init_lua_lists_them_all() {
    let (output, stderr, log) =
        run_one_answer(r#"uji.notify("wires: " .. table.concat(uji.wire.list(), ","))"#);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("wires: anthropic,gemini,openai-chat,openai-responses"),
        "{stderr}"
    );
    assert!(
        log.contains("opened plugin openai-chat for the openai-chat wire"),
        "{log}"
    );
    for unused in [
        "anthropic wire",
        "gemini wire",
        "openai-responses wire",
        "tui frontend",
    ] {
        assert!(
            !log.contains(&format!("for the {unused}")),
            "{unused}: {log}"
        );
    }
}

#[test]
fn a_wire_init_lua_removes_is_never_opened() {
    let (output, stderr, log) = run_one_answer(r#"assert(uji.wire.remove("openai-chat"))"#);
    assert!(!output.status.success());
    assert!(stderr.contains(WIRE_NOT_LOADED), "{stderr}");
    assert!(!log.contains("opened plugin"), "{log}");
}

#[test]
fn uji_plugins_still_lists_every_shipped_plugin() {
    let sandbox = Sandbox::new();
    let output = sandbox.uji().args(["plugins", "--json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for shipped in [
        "anthropic",
        "openai-chat",
        "openai-responses",
        "gemini",
        "tui",
        "acp",
    ] {
        assert!(names.contains(&shipped), "{shipped}: {names:?}");
    }
}

/// A uji install of its own in `bin/`: the binary, the plugins a run needs,
/// and a copy of the openai-chat wire cut in half.
fn install_with_a_truncated_wire() -> (tempfile::TempDir, std::path::PathBuf) {
    let install = tempfile::tempdir().unwrap();
    let bin = install.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    uji_tests::copy_into(&uji_tests::uji_bin(), &bin);
    for lib in ["uji_plugin_lua", "uji_plugin_tools"] {
        uji_tests::copy_into(&artifact(lib), &bin);
    }
    let wire = artifact("uji_plugin_openai_chat");
    let bytes = std::fs::read(&wire).unwrap();
    let broken = bin.join(wire.file_name().unwrap());
    std::fs::write(&broken, &bytes[..bytes.len() / 2]).unwrap();
    (install, broken)
}

/// `uji run` of the install in `install/bin`, against `model`.
fn run_installed(
    install: &std::path::Path,
    model: &uji_fake_model::FakeModel,
) -> std::process::Output {
    let sandbox = Sandbox::new();
    let cmd = uji_tests::chat::uji_with_model(&sandbox, model, "sk-on-demand");
    std::process::Command::new(install.join("bin").join("uji"))
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(sandbox.work())
        .args(["run", "--model", ON_DEMAND_MODEL, "hi"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The stderr of a run of the install in `install/bin` whose openai-chat
/// wire did not open: the run fails before anything is sent, saying so.
fn run_without_the_wire(install: &std::path::Path) -> String {
    let model = uji_fake_model::FakeModel::start();
    let output = run_installed(install, &model);
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(stderr.contains(WIRE_NOT_LOADED), "{stderr}");
    assert!(model.requests().is_empty(), "nothing was sent");
    stderr
}

#[test]
fn a_shipped_wire_that_fails_to_open_on_demand_says_why() {
    let (install, broken) = install_with_a_truncated_wire();
    let stderr = run_without_the_wire(install.path());
    assert!(
        stderr.contains(&format!("plugin {} failed to load", broken.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("`uji plugins` lists every plugin"),
        "{stderr}"
    );
}

#[test]
fn a_broken_copy_next_to_the_binary_falls_back_to_the_installed_one() {
    let (install, _) = install_with_a_truncated_wire();
    let installed = install.path().join("lib/uji/plugins");
    std::fs::create_dir_all(&installed).unwrap();
    uji_tests::copy_into(&artifact("uji_plugin_openai_chat"), &installed);
    let model = uji_fake_model::FakeModel::start();
    model.push(uji_tests::chat::answer("from the installed wire"));
    let output = run_installed(install.path(), &model);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("from the installed wire"), "{stdout}");
    assert_eq!(model.requests().len(), 1);
    assert!(!stderr.contains("failed to load"), "{stderr}");
}

#[test]
fn a_shipped_wire_whose_init_fails_on_demand_says_why() {
    let (install, broken) = install_with_a_truncated_wire();
    // In its place, a plugin that registers a tool and then fails to start.
    std::fs::copy(artifact("uji_fixture_init_error"), &broken).unwrap();
    let stderr = run_without_the_wire(install.path());
    assert!(
        stderr.contains("its init returned an error: cannot start: FIXTURE_TOKEN is not set"),
        "{stderr}"
    );
}

/// `uji plugins` with `UJI_PLUGIN_PATH` set to `dir`, in `sandbox`: stdout.
fn uji_plugins_in(sandbox: &Sandbox, dir: &std::path::Path) -> String {
    let output = sandbox
        .uji()
        .arg("plugins")
        .env("UJI_PLUGIN_PATH", dir)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    stdout
}

#[test]
fn a_plugin_whose_layout_passed_is_remembered_and_a_file_put_in_its_place_is_checked_again() {
    let sandbox = Sandbox::new();
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("libuji_fixture_swapped.so");
    std::fs::copy(artifact("uji_fixture_misbehaving"), &plugin).unwrap();
    let cache = sandbox.data().join("cache").join("checked-plugins.json");

    let first = uji_plugins_in(&sandbox, dir.path());
    assert!(first.contains("fixture-misbehaving "), "{first}");
    let remembered: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cache).expect("the verdicts are kept")).unwrap();
    assert!(
        remembered["passed"][plugin.to_str().unwrap()].is_object(),
        "{remembered}"
    );
    // The second start opens it on the kept verdict, and lists it the same.
    let second = uji_plugins_in(&sandbox, dir.path());
    assert!(second.contains("fixture-misbehaving "), "{second}");

    // Another program's library under the same name: its layout is checked
    // and refused, whatever was remembered for the file that was there.
    std::fs::remove_file(&plugin).unwrap();
    std::fs::copy(artifact("uji_fixture_foreign_abi"), &plugin).unwrap();
    let third = uji_plugins_in(&sandbox, dir.path());
    assert!(!third.contains("fixture-misbehaving "), "{third}");
    assert!(
        third.contains("it is a library of another abi_stable program"),
        "{third}"
    );
}
