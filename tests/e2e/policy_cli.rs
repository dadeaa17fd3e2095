//! `uji policy check` through the real binary, with the policy set by a
//! plugin through the host services (as the Lua config does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use uji_tests::{Sandbox, plugin_dir, text};

fn check(policy: serde_json::Value, tool: &str, subject: &str) -> String {
    let plugins = plugin_dir(&["uji_fixture_policy_setter"]);
    let sandbox = Sandbox::new();
    let output = sandbox
        .uji()
        .args(["policy", "check", tool, subject])
        .env("UJI_PLUGIN_PATH", plugins.path())
        .env("UJI_FIXTURE_POLICY", policy.to_string())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "stderr: {stderr}");
    stdout
}

fn first_word(out: &str) -> &str {
    out.split_whitespace().next().unwrap_or_default()
}

#[test]
fn the_first_word_is_the_decision_then_the_rule_that_made_it() {
    let policy = json!({"rules": {
        "default": "ask",
        "run_command": {"allow": ["git status", "git diff *", "cargo test*"], "deny": ["/^rm\\s+-rf/"]}
    }});
    let out = check(policy.clone(), "run_command", "git diff HEAD~1");
    assert_eq!(first_word(&out), "allow", "{out}");
    assert!(out.contains("git diff *"), "names the rule: {out}");

    let out = check(policy.clone(), "run_command", "git diff; rm -rf ~");
    assert_eq!(first_word(&out), "deny", "{out}");
    assert!(out.contains("rm -rf ~"), "names the part: {out}");

    let out = check(policy.clone(), "run_command", "make");
    assert_eq!(first_word(&out), "ask", "{out}");
    assert!(out.contains("no rule matched"), "names the fallback: {out}");

    let out = check(policy, "read_file", "src/main.rs");
    assert_eq!(first_word(&out), "allow", "read_file declares allow: {out}");
}

#[test]
fn named_sets_disable_and_confinement_show_up_in_checks() {
    let out = check(
        json!({"rules": {"write_file": {"deny": [{"pattern": "*.lock", "message": "lock files are generated"}]}}, "name": "readonly"}),
        "write_file",
        "Cargo.lock",
    );
    assert_eq!(first_word(&out), "deny", "{out}");
    assert!(out.contains("readonly"), "names the set: {out}");
    assert!(
        out.contains("the model reads: lock files are generated"),
        "{out}"
    );

    let out = check(json!({"disable": ["edit_file"]}), "edit_file", "a.txt");
    assert!(
        out.starts_with("deny (disabled) edit_file is disabled"),
        "{out}"
    );

    let out = check(json!({}), "write_file", "../elsewhere.txt");
    assert!(out.starts_with("deny (confinement)"), "{out}");
    assert!(out.contains("outside the allowed directories"), "{out}");

    let out = check(json!({"confine": false}), "write_file", "../elsewhere.txt");
    assert_eq!(
        first_word(&out),
        "ask",
        "confinement off: the declared policy decides: {out}"
    );
}

#[test]
fn an_invalid_rule_is_reported_and_the_tool_asks_instead_of_allowing() {
    let plugins = plugin_dir(&["uji_fixture_policy_setter"]);
    let sandbox = Sandbox::new();
    let output = sandbox
        .uji()
        .args(["policy", "check", "read_file", "notes.md"])
        .env("UJI_PLUGIN_PATH", plugins.path())
        .env(
            "UJI_FIXTURE_POLICY",
            json!({"rules": {"read_file": {"allow": ["*.md", "/(unclosed/"]}}}).to_string(),
        )
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert_eq!(first_word(&stdout), "ask", "{stdout}");
    assert!(
        stderr.contains("/(unclosed/"),
        "the bad rule is reported with its text: {stderr}"
    );
}

#[test]
fn policy_check_says_an_unresolved_command_is_denied_under_yes() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config().join("init.lua"),
        "uji.tool.policy({ run_command = { deny = { \"rm *\" } } })\n",
    )
    .unwrap();
    let output = sandbox
        .uji()
        .args(["policy", "check", "run_command", "$CMD -rf victim"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("ask"), "{stdout}");
    assert!(
        stdout.contains("with --yes or in a headless run: deny"),
        "{stdout}"
    );
}

#[test]
fn policy_check_names_a_read_only_command_and_what_keeps_one_asking() {
    let policy = json!({"rules": {"run_command": {"read_only": "allow"}}});
    let out = check(policy.clone(), "run_command", "ls -la");
    assert!(
        out.starts_with(
            "allow (policy) read-only command \"ls -la\"; read_only = allow of run_command in set \"default\""
        ),
        "{out}"
    );
    let out = check(policy.clone(), "run_command", "ls -la > listing.txt");
    assert_eq!(first_word(&out), "ask", "{out}");
    let out = check(policy, "run_command", "cat ~/.ssh/id_rsa");
    assert_eq!(first_word(&out), "ask", "{out}");
}
