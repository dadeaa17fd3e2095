//! The provider catalogue, `uji models`, `uji login` / `uji logout`, and a
//! shipped provider merged from init.lua: the real binary against the fake
//! model server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::process::{Output, Stdio};
use std::time::Duration;

use uji_fake_model::anthropic::AnthropicEvents;
use uji_fake_model::gemini::GeminiEvents;
use uji_fake_model::responses::ResponsesEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::chat::answer;
use uji_tests::tty::Tty;
use uji_tests::{Sandbox, text, with_stdin};

const KEY: &str = "gsk-login-key-7fa93c";
const GROQ_MODEL: &str = "groq/openai/gpt-oss-120b";

/// init.lua sends the shipped `groq` provider to the fake server by giving
/// only its `base_url`.
fn groq_at(sandbox: &Sandbox, model: &FakeModel) {
    std::fs::write(
        sandbox.config().join("init.lua"),
        format!(
            "uji.provider.add({{ id = \"groq\", base_url = \"{}\" }})\n",
            model.base_url()
        ),
    )
    .unwrap();
}

/// A sandbox with groq at the fake server, which accepts the key check
/// (`GET /models`) and then answers `text`.
fn groq_accepting_a_key_then(text: &str) -> (Sandbox, FakeModel) {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    groq_at(&sandbox, &model);
    model
        .push(Script::status(
            200,
            r#"{"object": "list", "data": []}"#,
            &[],
        ))
        .push(answer(text));
    (sandbox, model)
}

fn auth_file(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.root.path().join("data/auth.json")
}

fn login(sandbox: &Sandbox, input: &str) -> (Output, String, String) {
    let mut cmd = sandbox.uji();
    cmd.args(["login", "groq"]);
    let output = with_stdin(cmd, input);
    let (stdout, stderr) = text(&output);
    (output, stdout, stderr)
}

fn run(sandbox: &Sandbox, model: &str, env: &[(&str, &str)]) -> (Output, String, String) {
    let output = sandbox
        .uji()
        .args(["run", "--model", model, "say", "hi"])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    (output, stdout, stderr)
}

#[test]
fn uji_models_lists_the_catalogue_and_marks_keys() {
    let sandbox = Sandbox::new();
    let output = sandbox.uji().args(["models", "--all"]).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    for id in [
        "anthropic",
        "openai",
        "openrouter",
        "groq",
        "deepseek",
        "mistral",
        "together",
        "fireworks",
        "xai",
        "cerebras",
        "perplexity",
        "huggingface",
        "nvidia",
        "moonshot",
        "zhipu",
        "gemini",
        "ollama",
        "lmstudio",
        "llama.cpp",
        "vllm",
        "custom",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{id}/"))),
            "{id} missing:\n{stdout}"
        );
    }
    let line = stdout.lines().find(|l| l.starts_with(GROQ_MODEL)).unwrap();
    assert!(
        line.contains("131072") && line.ends_with("no key"),
        "{line}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("ollama/MODEL") && l.ends_with("no key needed")),
        "{stdout}"
    );

    // Without --all: only what has a key (or needs none).
    let output = sandbox
        .uji()
        .arg("models")
        .env("OPENAI_API_KEY", "sk-x")
        .output()
        .unwrap();
    let (stdout, _) = text(&output);
    let gpt = stdout
        .lines()
        .find(|l| l.starts_with("openai/gpt-4.1 "))
        .unwrap();
    assert!(
        gpt.contains("1047576") && gpt.ends_with("key from OPENAI_API_KEY"),
        "{gpt}"
    );
    assert!(!stdout.contains("groq/"), "{stdout}");
    assert!(!stdout.contains("sk-x"), "{stdout}");
    assert!(stdout.contains("vllm/MODEL"), "{stdout}");
}

#[test]
fn login_from_stdin_saves_the_key_owner_only_and_a_run_sends_it() {
    let (sandbox, model) = groq_accepting_a_key_then("hello");

    let (output, stdout, stderr) = login(&sandbox, &format!("{KEY}\n"));
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("Groq accepted the key"), "{stderr}");
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "{stdout}{stderr}"
    );
    let check = &model.requests()[0];
    assert_eq!(
        (check.method.as_str(), check.path.as_str()),
        ("GET", "/models")
    );
    assert_eq!(
        check.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    let mode = std::fs::metadata(auth_file(&sandbox))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let (output, stdout, stderr) = run(&sandbox, GROQ_MODEL, &[]);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("hello"), "{stdout}");
    let request = model.last_request();
    assert_eq!(request.path, "/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(request.json["model"], "openai/gpt-oss-120b");
    let logs =
        std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap_or_default();
    assert!(!logs.contains(KEY), "the key reached the log");
}

#[test]
fn an_environment_variable_wins_over_a_saved_key_and_saved_keys_are_redacted() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    groq_at(&sandbox, &model);
    let mut cmd = sandbox.uji();
    cmd.args(["login", "--no-check", "groq"]);
    assert!(with_stdin(cmd, KEY).status.success());
    model
        .push(answer("env"))
        .push(answer(&format!("the saved key is {KEY}")));

    let (output, _, stderr) = run(&sandbox, GROQ_MODEL, &[("GROQ_API_KEY", "gsk-from-env")]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        model.last_request().header("authorization"),
        Some("Bearer gsk-from-env")
    );

    let (output, stdout, stderr) = run(&sandbox, GROQ_MODEL, &[]);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("the saved key is <redacted>") && !stdout.contains(KEY),
        "{stdout}"
    );
}

#[test]
fn a_refused_key_is_not_saved_and_logout_forgets_a_saved_one() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    groq_at(&sandbox, &model);
    model.push(Script::status(
        401,
        r#"{"error": {"message": "invalid key"}}"#,
        &[],
    ));
    let (output, _, stderr) = login(&sandbox, "gsk-wrong\n");
    assert!(!output.status.success());
    assert!(
        stderr.contains("Groq refused the key (HTTP 401") && stderr.contains("nothing was saved"),
        "{stderr}"
    );
    assert!(!auth_file(&sandbox).exists());

    model.push(Script::status(500, "down", &[]));
    let (output, _, stderr) = login(&sandbox, "gsk-unchecked\n");
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("could not check the key (HTTP 500") && stderr.contains("saving it anyway"),
        "{stderr}"
    );
    assert!(
        sandbox
            .uji()
            .args(["logout", "groq"])
            .output()
            .unwrap()
            .status
            .success()
    );

    let (output, _, stderr) = login(&sandbox, "\n");
    assert!(!output.status.success());
    assert!(stderr.contains("no key given"), "{stderr}");

    let mut cmd = sandbox.uji();
    cmd.args(["login", "--no-check", "groq"]);
    assert!(with_stdin(cmd, KEY).status.success());
    let output = sandbox.uji().args(["logout", "groq"]).output().unwrap();
    assert!(text(&output).1.contains("removed the saved key for groq"));
    let (output, _, stderr) = run(&sandbox, GROQ_MODEL, &[]);
    assert!(!output.status.success());
    assert!(
        stderr.contains("GROQ_API_KEY is not set: export it, or run `uji login groq`"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_model_runs_with_a_notice() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    groq_at(&sandbox, &model);
    model.push(answer("ok"));
    let (output, _, stderr) = run(&sandbox, "groq/brand-new-model", &[("GROQ_API_KEY", "k")]);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "groq/brand-new-model is not in the model list: assuming a 128000-token context window"
        ),
        "{stderr}"
    );
}

#[test]
fn on_a_terminal_the_key_is_typed_unseen_and_echo_comes_back() {
    let sandbox = Sandbox::new();
    let cmd = sandbox
        .uji_tty()
        .args(["login", "--no-check", "groq"])
        .then_stty();
    let mut tty = Tty::spawn(cmd, 24, 120);
    tty.wait_for_text("Key for Groq (GROQ_API_KEY):");
    tty.type_text(KEY);
    tty.press("<CR>");
    assert_eq!(
        tty.wait_exit(Duration::from_secs(15)),
        Some(0),
        "{}",
        tty.screen()
    );
    let transcript = tty.transcript();
    assert!(
        transcript.contains("saved the key for Groq"),
        "{transcript}"
    );
    assert!(
        !transcript.contains(KEY),
        "the key was echoed:\n{transcript}"
    );
    tty.cooked_mode().unwrap();
    let saved = std::fs::read_to_string(auth_file(&sandbox)).unwrap();
    assert!(saved.contains(KEY));
}

#[test]
fn perplexity_speaks_the_responses_api_of_its_agent_api_with_vendor_model_ids() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    std::fs::write(
        sandbox.config().join("init.lua"),
        format!(
            "uji.provider.add({{ id = \"perplexity\", base_url = \"{}\" }})\n",
            model.base_url()
        ),
    )
    .unwrap();
    model.push(Script::sse(
        ResponsesEvents::new("anthropic/claude-sonnet-5")
            .text("from the Agent API", 3)
            .usage(10, 2, 0)
            .completed(),
    ));
    let (output, stdout, stderr) = run(
        &sandbox,
        "perplexity",
        &[("PERPLEXITY_API_KEY", "pplx-test-1")],
    );
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("from the Agent API"), "{stdout}");
    let request = model.last_request();
    assert_eq!(request.path, "/responses");
    assert_eq!(request.json["model"], "anthropic/claude-sonnet-5");
    assert_eq!(request.json["max_output_tokens"], 128000);
    assert_eq!(request.header("authorization"), Some("Bearer pplx-test-1"));
    assert!(!stderr.contains("not in the model list"), "{stderr}");
}

#[test]
fn openai_models_use_the_responses_api_at_openai_base_url_with_retries() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(Script::status(503, "busy", &[("retry-after", "0")]))
        .push(Script::sse(
            ResponsesEvents::new("gpt-6.2-sol")
                .text("from the Responses API", 3)
                .usage(10, 2, 0)
                .completed(),
        ));
    let base = model.base_url();
    let env = [
        ("OPENAI_API_KEY", "sk-openai-1"),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let (output, stdout, stderr) = run(&sandbox, "openai/gpt-6.2-sol", &env);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("from the Responses API"), "{stdout}");
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one retry after the 503");
    assert!(
        requests.iter().all(|r| r.path == "/responses"),
        "{requests:?}"
    );
    assert_eq!(requests[1].json["model"], "gpt-6.2-sol");
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer sk-openai-1")
    );
}

#[test]
fn the_default_anthropic_model_is_current_and_gets_adaptive_thinking() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(Script::sse(
        AnthropicEvents::new("claude-sonnet-5-5")
            .thinking("Short.", "c2ln", 2)
            .text("hi from Sonnet", 2)
            .build(),
    ));
    let base = model.base_url();
    let output = sandbox
        .uji()
        .args(["run", "--effort", "high", "say", "hi"])
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", &base)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("hi from Sonnet"), "{stdout}");
    let body = &model.last_request().json;
    assert_eq!(body["model"], "claude-sonnet-5-5");
    assert_eq!(body["max_tokens"], 128_000, "the catalogue's output limit");
    assert_eq!(
        body["thinking"],
        serde_json::json!({"type": "adaptive", "display": "summarized"})
    );
    assert_eq!(body["output_config"]["effort"], "high");
    assert!(!body.to_string().contains("budget_tokens"), "{body}");
}

#[test]
fn gemini_models_use_the_gemini_wire_with_a_saved_key_or_google_api_key() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let answer = || {
        Script::sse(
            GeminiEvents::new("gemini-3.8-flash")
                .text("from Gemini", 2)
                .finish("STOP"),
        )
    };
    model
        .push(Script::status(200, r#"{"models": []}"#, &[]))
        .push(answer())
        .push(answer());
    let base = model.base_url();
    let mut cmd = sandbox.uji();
    cmd.args(["login", "gemini"]).env("GEMINI_BASE_URL", &base);
    let output = with_stdin(cmd, "gem-saved-key\n");
    assert!(output.status.success(), "{}", text(&output).1);
    let check = &model.requests()[0];
    assert_eq!(check.path, "/models");
    assert_eq!(check.header("x-goog-api-key"), Some("gem-saved-key"));

    for (env, key) in [
        (vec![("GEMINI_BASE_URL", base.as_str())], "gem-saved-key"),
        (
            vec![
                ("GEMINI_BASE_URL", base.as_str()),
                ("GOOGLE_API_KEY", "google-env-key"),
            ],
            "google-env-key",
        ),
    ] {
        let (output, stdout, stderr) = run(&sandbox, "gemini/gemini-3.8-flash", &env);
        assert!(output.status.success(), "{stderr}");
        assert!(stdout.contains("from Gemini"), "{stdout}");
        let request = model.last_request();
        assert_eq!(
            request.path,
            "/models/gemini-3.8-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(request.header("x-goog-api-key"), Some(key));
    }
}

/// The TUI with the plugins a groq session needs, in a 30×100 terminal.
fn screen(sandbox: &Sandbox) -> Tty {
    screen_with(sandbox, &[])
}

fn screen_with(sandbox: &Sandbox, env: &[(&str, &str)]) -> Tty {
    let plugins = uji_tests::plugin_path(&[
        "uji_plugin_tui",
        "uji_plugin_tools",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
    ]);
    let mut cmd = sandbox.uji_tty().env("UJI_PLUGIN_PATH", plugins);
    for (key, value) in env {
        cmd = cmd.env(key, value);
    }
    let tty = Tty::spawn(cmd.then_stty(), 30, 100);
    tty.wait_for_text("Ask uji anything");
    tty
}

/// Every file under `dir` but `auth.json` that holds `needle`.
fn files_holding(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if path.file_name().is_some_and(|n| n != "auth.json")
            && std::fs::read(&path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle))
        {
            found.push(path);
        }
    }
    found
}

#[test]
fn login_in_the_screen_checks_and_saves_the_key_and_the_next_prompt_sends_it() {
    let (sandbox, model) = groq_accepting_a_key_then("hello from groq");
    let mut tty = screen(&sandbox);
    tty.wait_for_text("no model provider is set up");

    tty.type_text("/login");
    tty.press("<CR>");
    let picker = tty.wait_for_question("Log in to");
    assert!(picker.contains("no key"), "{picker}");
    tty.type_text("groq");
    tty.wait_for_text("Groq · no key");
    tty.press("<CR>");
    tty.wait_for_text("Key for Groq (GROQ_API_KEY)");
    // Half typed, half pasted (with the newline a copied key often has).
    let (typed, pasted) = KEY.split_at(6);
    tty.type_text(typed);
    tty.paste(&format!("{pasted}\n"));
    tty.wait_for_question(&format!("{} characters (hidden)", KEY.len()));
    tty.press("<CR>");
    tty.wait_for_text("groq accepted the key");
    let check = &model.requests()[0];
    assert_eq!(check.path, "/models");
    assert_eq!(
        check.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    let saved = std::fs::read_to_string(auth_file(&sandbox)).unwrap();
    assert!(saved.contains(KEY));
    let mode = std::fs::metadata(auth_file(&sandbox))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // The model list has the provider's models usable at once.
    tty.type_text("/model");
    tty.press("<CR>");
    let models = tty.wait_for_text("enter choose");
    let line = models
        .lines()
        .find(|l| l.contains(GROQ_MODEL) && l.contains("context"))
        .unwrap();
    assert!(!line.contains("no key set"), "{models}");
    tty.press("<Esc>");
    tty.wait_for("the picker to close", |s| s.contains("Ask uji anything"));

    tty.type_text("hi");
    tty.press("<CR>");
    tty.wait_for_text("hello from groq");
    let request = model.last_request();
    assert_eq!(request.path, "/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );

    // Up recalls the prompt, not the key.
    tty.press("<C-p>");
    tty.wait_for_text("› hi");
    tty.press("<C-u>");

    // After /logout the session stops sending the key.
    tty.type_text("/logout groq");
    tty.press("<CR>");
    tty.wait_for_text("removed the saved key for groq");
    let requests = model.requests().len();
    tty.type_text("again");
    tty.press("<CR>");
    tty.wait_for_text("GROQ_API_KEY is not set");
    assert_eq!(model.requests().len(), requests, "a request went out");
    tty.quit_with_ctrl_c();
    tty.terminal_restored().unwrap();
    let drawn = tty.transcript();
    assert!(
        !drawn.contains(KEY) && !drawn.contains(pasted),
        "the key was drawn"
    );
    let data = sandbox.root.path().join("data");
    assert_eq!(files_holding(&data, KEY), Vec::<std::path::PathBuf>::new());
    assert!(data.join("logs").is_dir(), "the log was written");
    let saved = std::fs::read_to_string(auth_file(&sandbox)).unwrap();
    assert!(!saved.contains(KEY), "/logout left the key: {saved}");
}

#[test]
fn a_refused_key_in_the_screen_is_not_saved_and_logout_forgets_a_saved_one() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    groq_at(&sandbox, &model);
    model.push(Script::status(
        401,
        r#"{"error": {"message": "invalid key"}}"#,
        &[],
    ));
    let mut tty = screen(&sandbox);

    tty.type_text("/login groq");
    tty.press("<CR>");
    tty.wait_for_question("Key for Groq");
    tty.type_text("gsk-wrong-key-123");
    tty.press("<CR>");
    tty.wait_for_text("Groq refused the key (HTTP 401");
    assert!(!auth_file(&sandbox).exists());

    let mut cmd = sandbox.uji();
    cmd.args(["login", "--no-check", "groq"]);
    assert!(with_stdin(cmd, KEY).status.success());
    tty.type_text("/logout");
    tty.press("<CR>");
    tty.wait_for_question("Forget the key of");
    tty.press("<CR>");
    tty.wait_for_text("removed the saved key for groq");
    let saved = std::fs::read_to_string(auth_file(&sandbox)).unwrap();
    assert!(!saved.contains(KEY), "{saved}");

    // Esc leaves the prompt and saves nothing.
    tty.type_text("/login groq");
    tty.press("<CR>");
    tty.wait_for_text("Key for Groq");
    tty.type_text("gsk-abandoned-1");
    tty.press("<Esc>");
    tty.wait_for_text("login cancelled; nothing was saved");
    tty.quit_with_ctrl_c();
    assert!(
        !tty.transcript().contains("gsk-wrong-key"),
        "the key was drawn"
    );
    assert!(
        !std::fs::read_to_string(auth_file(&sandbox))
            .unwrap()
            .contains("abandoned")
    );
}

#[test]
fn uji_models_shows_init_lua_merges_and_providers_of_plugins_not_shipped() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config().join("init.lua"),
        r#"
uji.provider.add({ id = "groq", base_url = "http://127.0.0.1:9/v1",
  models = { { id = "openai/gpt-oss-120b", context_window = 4096 }, { id = "brand-new", context_window = 777 } } })
uji.provider.add({ id = "mine", wire = "openai-chat", base_url = "http://127.0.0.1:9/v1", models = { "m1" } })
"#,
    )
    .unwrap();
    // A third-party plugin adds its provider from its init: `uji models`
    // must still load it (only shipped plugins are skipped).
    let plugins = uji_tests::plugin_dir(&["echo_wire"]);
    let output = sandbox
        .uji()
        .args(["models", "--all"])
        .env("UJI_PLUGIN_PATH", plugins.path())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let line = |prefix: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}:\n{stdout}"))
            .to_string()
    };
    assert!(
        line("groq/openai/gpt-oss-120b ").contains(" 4096 "),
        "{stdout}"
    );
    assert!(line("groq/brand-new ").contains(" 777 "), "{stdout}");
    // Merged, not replaced: the shipped models and key variable stay.
    assert!(
        line("groq/qwen/qwen3.8-27b ").contains("131042"),
        "{stdout}"
    );
    assert!(line("mine/m1 ").ends_with("no key needed"), "{stdout}");
    assert!(line("echo/parrot ").contains("8000"), "{stdout}");
}

#[test]
fn login_in_the_screen_says_when_the_environment_key_wins() {
    let (sandbox, model) = groq_accepting_a_key_then("env wins");
    let mut tty = screen_with(&sandbox, &[("GROQ_API_KEY", "gsk-from-env-1234")]);
    tty.type_text("/login");
    tty.press("<CR>");
    tty.wait_for_text("Groq · key from GROQ_API_KEY");
    tty.press("<Esc>");
    tty.wait_for("the picker to close", |s| s.contains("Ask uji anything"));
    tty.type_text("/login groq");
    tty.press("<CR>");
    tty.wait_for_question("GROQ_API_KEY is set: it wins over a saved key");
    tty.paste(KEY);
    tty.press("<CR>");
    tty.wait_for_text("GROQ_API_KEY is set and is used instead of the saved key");
    tty.type_text("hi");
    tty.press("<CR>");
    tty.wait_for_text("env wins");
    assert_eq!(
        model.last_request().header("authorization"),
        Some("Bearer gsk-from-env-1234")
    );
    tty.quit_with_ctrl_c();
}

/// `uji login` without a provider, on a terminal, lists the providers and
/// the web search backends that take a key (docs/web.md), then asks.
#[test]
fn login_without_a_provider_lists_the_search_backends_too() {
    let sandbox = Sandbox::new();
    let cmd = sandbox.uji_tty().args(["login", "--no-check"]);
    let mut tty = Tty::spawn(cmd, 60, 120);
    tty.wait_for_text("Provider:");
    let screen = tty.transcript();
    for line in ["brave", "tavily", "exa", "(web search)", "groq"] {
        assert!(screen.contains(line), "{line}: {screen}");
    }
    assert!(
        !screen.contains("searxng"),
        "SearXNG takes no key: {screen}"
    );
    tty.press("<CR>");
    assert_eq!(
        tty.wait_exit(Duration::from_secs(15)),
        Some(1),
        "{}",
        tty.screen()
    );
}
