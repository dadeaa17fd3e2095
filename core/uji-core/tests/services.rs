//! Every typed host service of `uji_protocol::services`, sent as the JSON a
//! plugin sends and answered by core's own implementation: the registry's,
//! the gate's and the providers' services, booted in process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use serde_json::{Value, json};
use uji_core::Gate;
use uji_core::auth::providers::{EnvLookup, Providers};
use uji_host::{Registry, load_module};
use uji_sdk::services::*;
use uji_sdk::{Host, Plugin};

struct NoEnv;

impl EnvLookup for NoEnv {
    fn get(&self, _name: &str) -> Option<String> {
        None
    }
}

struct Core {
    registry: Registry,
    gate: Gate,
    providers: Providers,
}

fn core() -> Core {
    let registry = Registry::new();
    registry.install_services();
    let gate = Gate::new(registry.clone());
    gate.install_services();
    let providers = Providers::new(Arc::new(NoEnv));
    providers.install_services(&registry);
    Core {
        registry,
        gate,
        providers,
    }
}

/// Sends `request` as JSON, like `Host::call`, and decodes the answer.
fn call<S: Service>(core: &Core, request: S) -> Result<S::Answer, String> {
    core.registry.call("test", &request)
}

fn echo() -> Provider {
    Provider::new("echo", "echo")
        .model(ModelInfo::new("parrot").context_window(8_000))
        .model(ModelInfo::new("shout"))
}

#[test]
fn the_policy_services_change_what_the_gate_decides() {
    let core = core();
    let cwd = Path::new("/tmp");
    let rules = json!({"run_command": {"deny": ["rm *"]}, "nope": 3});
    let answer = call(
        &core,
        ToolPolicy {
            rules,
            name: Some("ci".into()),
        },
    )
    .unwrap();
    assert_eq!(answer.problems.len(), 1, "{answer:?}");
    let (verdict, _) = core.gate.check("run_command", "rm x", cwd);
    assert_eq!(verdict.decision, uji_policy::Decision::Deny);

    call(
        &core,
        ToolDisable {
            names: vec!["write_file".into()],
        },
    )
    .unwrap();
    assert!(core.gate.is_disabled("write_file"));
    call(
        &core,
        ToolEnable {
            names: vec!["write_file".into()],
        },
    )
    .unwrap();
    assert!(!core.gate.is_disabled("write_file"));

    assert!(
        !call(
            &core,
            ToolConfine {
                enabled: Some(false)
            }
        )
        .unwrap()
    );
    assert!(
        !call(&core, ToolConfine::default()).unwrap(),
        "None leaves it"
    );
    let roots = call(
        &core,
        ToolRoots {
            paths: Some(vec!["/srv/data".into()]),
        },
    )
    .unwrap();
    assert_eq!(roots, ["/srv/data"]);
    assert_eq!(call(&core, ToolRoots::default()).unwrap(), roots);
    assert_eq!(call(&core, ToolList {}).unwrap(), Vec::<String>::new());
    assert!(!call(&core, ToolRemove { name: "x".into() }).unwrap());
}

#[test]
fn the_command_sandbox_is_the_one_a_command_nobody_approved_gets() {
    let work = tempfile::tempdir().unwrap();
    let cwd = work.path().canonicalize().unwrap();
    std::fs::create_dir_all(cwd.join(".git/hooks")).unwrap();
    // As boot does: the directory is known before the services are installed.
    let registry = Registry::new();
    registry.set_config(uji_core::boot::CWD_KEY, json!(cwd.to_string_lossy()));
    registry.install_services();
    let gate = Gate::new(registry.clone());
    gate.install_services();
    let core = Core {
        registry,
        gate,
        providers: Providers::new(Arc::new(NoEnv)),
    };
    // A plugin moving "cwd" later does not move the workspace.
    call(
        &core,
        ConfigSet {
            key: uji_core::boot::CWD_KEY.into(),
            value: json!("/"),
        },
    )
    .unwrap();
    let default = call(&core, CommandSandbox {}).unwrap();
    assert_eq!(default.mode, uji_sdk::SandboxMode::WorkspaceWrite);
    assert!(default.network);
    assert_eq!(
        Some(&default),
        core.gate
            .call_sandbox(uji_sdk::SubjectKind::Command, &cwd)
            .as_ref()
    );
    assert!(
        default
            .writable
            .contains(&cwd.to_string_lossy().into_owned())
    );
    assert!(!default.writable.contains(&"/".to_string()), "{default:?}");
    let hooks = cwd.join(".git/hooks").to_string_lossy().into_owned();
    assert!(default.read_only.contains(&hooks), "{default:?}");
    call(
        &core,
        ToolSandbox {
            mode: Some(uji_sdk::SandboxMode::ReadOnly),
            network: Some(uji_protocol::Network::None),
            writable: None,
        },
    )
    .unwrap();
    let set = call(&core, CommandSandbox {}).unwrap();
    assert_eq!(set.mode, uji_sdk::SandboxMode::ReadOnly);
    assert!(!set.network);
}

#[test]
fn the_policy_services_keep_their_checks() {
    let core = core();
    let e = call(
        &core,
        ToolPolicy {
            rules: json!(["a list"]),
            name: None,
        },
    )
    .unwrap_err();
    assert!(e.contains("policy rules must be a table"), "{e}");
    // What older callers sent still reads: one name alone, null parameters.
    core.registry
        .call_service("test", "tool.disable", json!({"names": "edit_file"}))
        .unwrap();
    assert!(core.gate.is_disabled("edit_file"));
    let e = core
        .registry
        .call_service("test", "tool.disable", json!({"names": [1]}))
        .unwrap_err();
    assert_eq!(
        e,
        "tool.disable expects {\"names\": [tool names]}: expected a list of tool names (strings)"
    );
    assert_eq!(
        core.registry
            .call_service("test", "tool.confine", Value::Null)
            .unwrap(),
        json!(true)
    );
}

#[test]
fn a_provider_added_as_a_service_is_listed_and_chosen() {
    let core = core();
    call(&core, ProviderAdd(echo())).unwrap();
    let listed = call(&core, ProviderList {}).unwrap();
    assert_eq!(listed.iter().find(|p| p.id == "echo"), Some(&echo()));
    assert_eq!(
        call(&core, ModelCurrent {}).unwrap(),
        None,
        "no key, no choice"
    );

    let chosen = call(&core, ModelUse::new("echo/shout").effort("high")).unwrap();
    assert_eq!(
        chosen,
        ModelChoice {
            provider: "echo".into(),
            model: "shout".into()
        }
    );
    assert_eq!(core.providers.chosen_effort().as_deref(), Some("high"));
    // Only the provider: its first model, as there is no default_model.
    let chosen = call(&core, ModelUse::new("echo")).unwrap();
    assert_eq!(chosen.model, "parrot");
    assert_eq!(core.providers.chosen_effort(), None);
    assert_eq!(call(&core, ModelCurrent {}).unwrap(), Some(chosen));
    let resolved = core.providers.resolve(None).unwrap();
    assert_eq!(resolved.model.context_window, 8_000);
    assert_eq!(resolved.base_url, "");

    // The older {provider, model} form still reads.
    let legacy = core
        .registry
        .call_service(
            "test",
            "model.use",
            json!({"provider": "echo", "model": "shout"}),
        )
        .unwrap();
    assert_eq!(legacy, json!({"provider": "echo", "model": "shout"}));
}

#[test]
fn provider_and_model_mistakes_say_what_to_do() {
    let core = core();
    let e = call(&core, ProviderAdd(Provider::new(" ", "echo"))).unwrap_err();
    assert_eq!(e, "a provider needs a non-empty id");
    let e = call(&core, ProviderAdd(Provider::new("p", ""))).unwrap_err();
    assert!(e.contains("needs a wire"), "{e}");
    let e = core
        .registry
        .call_service("test", "provider.add", json!({"id": "p"}))
        .unwrap_err();
    assert!(e.contains("provider p needs a wire"), "{e}");
    let e = call(&core, ModelUse::default()).unwrap_err();
    assert!(e.starts_with("model.use needs a model"), "{e}");
    let e = call(&core, ModelUse::new("nope/x")).unwrap_err();
    assert!(e.contains("unknown provider \"nope\""), "{e}");
}

#[test]
fn the_registry_services_answer_typed() {
    let core = core();
    assert_eq!(call(&core, WireList {}).unwrap(), Vec::<String>::new());
    assert!(!call(&core, WireRemove { name: "w".into() }).unwrap());
    assert!(
        !call(
            &core,
            HookRemove {
                event: "before_tool".into(),
                name: "h".into()
            }
        )
        .unwrap()
    );
    let answers = call(
        &core,
        Emit {
            event: "nobody_listens".into(),
            payload: json!({"x": 1}),
        },
    )
    .unwrap();
    assert!(answers.is_empty());
    let binding = KeymapAdd {
        mode: "normal".into(),
        key: "<C-b>".into(),
        binding: json!({"command": "plan"}),
    };
    call(&core, binding.clone()).unwrap();
    call(&core, binding.clone()).unwrap();
    assert_eq!(call(&core, KeymapList {}).unwrap(), [binding]);
    call(
        &core,
        ConfigSet {
            key: "theme".into(),
            value: json!("dark"),
        },
    )
    .unwrap();
    assert_eq!(core.registry.config("theme"), Some(json!("dark")));
}

#[test]
fn a_service_uji_does_not_offer_is_reported_as_unavailable() {
    let core = core();
    let e = call(&core, SessionInfoRequest {}).unwrap_err();
    assert_eq!(e, format!("{NO_SUCH_SERVICE} \"session.info\""));
}

// ---- through a plugin's Host, across the ABI --------------------------------------

static RESULTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct TypedCaller;

impl Plugin for TypedCaller {
    const NAME: &'static str = "typed-caller";
    const VERSION: &'static str = "0.0.0";

    fn init(host: &Host) -> Result<(), String> {
        host.add_provider(echo())?;
        let chosen = host.use_model("echo/shout")?;
        let problems = host.set_policy(json!({"read_file": {"allow": ["*"]}}), None)?;
        host.disable_tools(&["write_file", "edit_file"])?;
        host.enable_tools(&["edit_file"])?;
        let missing = host.session_info().unwrap_err();
        let mut results = RESULTS.lock();
        results.push(format!(
            "{}/{} {}",
            chosen.provider,
            chosen.model,
            problems.len()
        ));
        results.push(format!(
            "{} | {}",
            matches!(missing, ServiceError::Unavailable { .. }),
            missing
        ));
        Ok(())
    }
}

#[test]
fn the_sdk_wrappers_reach_core_through_the_plugin_abi() {
    let core = core();
    load_module(
        uji_sdk::in_process_module::<TypedCaller>(),
        "typed-caller",
        &core.registry,
    )
    .unwrap();
    assert_eq!(
        *RESULTS.lock(),
        [
            "echo/shout 0".to_string(),
            "true | session.info is not available: uji has no host service named \"session.info\""
                .to_string()
        ]
    );
    assert!(core.gate.is_disabled("write_file"));
    assert!(!core.gate.is_disabled("edit_file"));
    assert_eq!(core.providers.chosen().as_deref(), Some("echo/shout"));
}

#[test]
fn mcp_add_is_a_service_core_does_not_offer_without_the_mcp_plugin() {
    // The MCP plugin serves it: tests/e2e/mcp.rs's
    // a_plugin_adds_a_server_through_the_mcp_add_host_service.
    let core = core();
    let request = McpAdd {
        name: "ed".into(),
        spec: json!({"command": "srv"}),
    };
    assert!(!core.registry.serves("mcp.add"));
    let e = core.registry.call("acp", &request).unwrap_err();
    assert_eq!(e, "uji has no host service named \"mcp.add\"");
}
