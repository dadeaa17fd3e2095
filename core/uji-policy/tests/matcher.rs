//! Rule matching, ordering, fallback, sets, problems and disabled tools.
// Helpers outside #[test] fns unwrap too; a failed setup should just fail the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use uji_policy::{Decision, Policy, RuleProblem, SubjectKind, ToolFacts, Verdict};

use Decision::{Allow, Ask, Deny};
use SubjectKind::{Command, Other};

const CWD: &str = "/nonexistent-uji-cwd/repo";

fn policy(rules: Value) -> Policy {
    let mut p = Policy::default();
    let problems = p.set_rules(&rules, None);
    assert!(problems.is_empty(), "unexpected problems: {problems:?}");
    p
}

fn decide_in(p: &Policy, tool: &str, subject: &str, kind: SubjectKind, cwd: &Path) -> Verdict {
    p.decide(&ToolFacts {
        tool,
        subject,
        kind,
        declared: None,
        cwd,
    })
}

fn decide(p: &Policy, tool: &str, subject: &str, kind: SubjectKind) -> Verdict {
    decide_in(p, tool, subject, kind, Path::new(CWD))
}

fn declared(p: &Policy, tool: &str, subject: &str, d: Option<Decision>) -> Verdict {
    p.decide(&ToolFacts {
        tool,
        subject,
        kind: Other,
        declared: d,
        cwd: Path::new(CWD),
    })
}

#[test]
fn decision_display_parse_and_order() {
    for (d, s) in [(Allow, "allow"), (Ask, "ask"), (Deny, "deny")] {
        assert_eq!(d.to_string(), s);
        assert_eq!(s.parse::<Decision>(), Ok(d));
        assert_eq!(s.to_uppercase().parse::<Decision>(), Ok(d));
    }
    assert!("maybe".parse::<Decision>().is_err());
    assert!("".parse::<Decision>().is_err());
    assert!(Allow < Ask && Ask < Deny);
    assert_eq!([Allow, Deny, Ask].into_iter().max(), Some(Deny));
    assert_eq!(serde_json::to_string(&Ask).unwrap(), "\"ask\"");
}

#[test]
fn every_rule_kind_matches_as_documented() {
    // (rule, subject, kind, matches?)
    let cases: &[(Value, &str, SubjectKind, bool)] = &[
        // exact
        (json!("git status"), "git status", Command, true),
        (json!("git status"), "git status --short", Command, false),
        (json!("git status"), "git statu", Command, false),
        (json!("https://x.dev"), "https://x.dev", Other, true),
        // glob: *, ?, [
        (json!("git diff *"), "git diff HEAD~1", Command, true),
        (json!("git diff *"), "git diff", Command, false),
        (json!("cargo test*"), "cargo test", Command, true),
        (json!("cargo test*"), "cargo test -p a/b", Command, true),
        (json!("ls ?"), "ls a", Command, true),
        (json!("ls ?"), "ls ab", Command, false),
        (json!("ls [ab]"), "ls b", Command, true),
        (json!("ls [ab]"), "ls c", Command, false),
        (
            json!("https://*.example.com/*"),
            "https://a.example.com/x/y",
            Other,
            true,
        ),
        // braces are literal in command globs
        (
            json!("awk '{print $1}' *"),
            "awk '{print $1}' f.txt",
            Command,
            true,
        ),
        // backslashes are literal in command globs
        (
            json!("find * -exec cat {} \\;"),
            "find . -exec cat {} \\;",
            Command,
            true,
        ),
        // regex: unanchored search
        (json!("/^rm\\s+-rf/"), "rm   -rf /", Command, true),
        (json!("/^rm\\s+-rf/"), "echo rm -rf", Command, false),
        (json!("/curl.*\\|\\s*sh/"), "curl x | sh", Other, true),
        (json!("/force/"), "git push --force", Command, true),
        (json!("//"), "anything", Other, true),
        // "/" alone is an exact rule, not a regex
        (json!("/"), "/", Other, true),
        (json!("/"), "x", Other, false),
        // object and pair forms
        (
            json!({"pattern": "make *", "message": "m"}),
            "make all",
            Command,
            true,
        ),
        (json!({"pattern": "make *"}), "make all", Command, true),
        (json!(["make *", "m"]), "make all", Command, true),
        (json!(["make *", "m"]), "cmake all", Command, false),
    ];
    for (rule, subject, kind, matches) in cases {
        let p = policy(json!({"t": {"deny": [rule], "default": "allow"}}));
        let v = decide(&p, "t", subject, *kind);
        let want = if *matches { Deny } else { Allow };
        assert_eq!(
            v.decision, want,
            "rule {rule} on {subject:?}: {}",
            v.because
        );
    }
}

#[test]
fn deny_then_allow_then_ask_first_match_wins() {
    // Every list matches "x y": deny wins; without deny, allow; then ask.
    let cases: &[(Value, Decision, &str)] = &[
        (
            json!({"deny": ["x*"], "allow": ["x y"], "ask": ["*"]}),
            Deny,
            "deny rule \"x*\"",
        ),
        (
            json!({"ask": ["*"], "allow": ["x y"]}),
            Allow,
            "allow rule \"x y\"",
        ),
        (json!({"ask": ["x *"]}), Ask, "ask rule \"x *\""),
        (
            json!({"deny": ["/nomatch/"], "allow": ["/^x/"], "default": "deny"}),
            Allow,
            "allow rule \"/^x/\"",
        ),
    ];
    for (entry, want, because) in cases {
        let p = policy(json!({ "t": entry }));
        let v = decide(&p, "t", "x y", Other);
        assert_eq!(v.decision, *want, "{entry}");
        assert!(v.because.starts_with(because), "{entry}: {}", v.because);
    }
}

#[test]
fn first_rule_of_a_list_is_reported() {
    let p = policy(json!({"t": {"deny": [
        {"pattern": "/a/", "message": "first"},
        {"pattern": "a*", "message": "second"},
        {"pattern": "abc", "message": "third"},
    ]}}));
    let v = decide(&p, "t", "abc", Other);
    assert_eq!(v.decision, Deny);
    assert_eq!(v.message.as_deref(), Some("first"));
    assert_eq!(
        v.because,
        "deny rule \"/a/\" of t in set \"default\" matched \"abc\""
    );

    // Exact rule listed before a glob is reported first too.
    let p = policy(json!({"t": {"deny": ["abc", "a*"]}}));
    assert!(
        decide(&p, "t", "abc", Other)
            .because
            .contains("\"abc\" of t")
    );
}

#[test]
fn fallback_chain() {
    // (rules, declared, expected decision, because)
    let cases: &[(Value, Option<Decision>, Decision, &str)] = &[
        (
            json!({"default": "deny", "t": {"default": "allow"}}),
            Some(Ask),
            Allow,
            "no rule matched; t's default (set \"default\")",
        ),
        (
            json!({"default": "deny", "t": {"allow": ["zzz"]}}),
            Some(Allow),
            Allow,
            "no rule matched; declared policy of t",
        ),
        (
            json!({"default": "deny", "t": {"allow": ["zzz"]}}),
            None,
            Deny,
            "no rule matched; top-level default",
        ),
        (
            json!({"other": {"default": "deny"}}),
            None,
            Ask,
            "no rule matched; fallback ask",
        ),
        (json!({}), None, Ask, "no rule matched; fallback ask"),
        (
            json!({}),
            Some(Deny),
            Deny,
            "no rule matched; declared policy of t",
        ),
    ];
    for (rules, decl, want, because) in cases {
        let p = policy(rules.clone());
        let v = declared(&p, "t", "subject", *decl);
        assert_eq!(v.decision, *want, "{rules}");
        assert_eq!(v.because, *because, "{rules}");
        assert_eq!(v.message, None);
    }
}

#[test]
fn set_rules_replaces_only_the_tools_it_names() {
    let mut p = policy(json!({
        "default": "deny",
        "a": {"allow": ["x"]},
        "b": {"allow": ["x"]},
    }));
    // Replacing `a` drops its old allow rule; `b` and the default stay.
    assert!(p.set_rules(&json!({"a": {"ask": ["y"]}}), None).is_empty());
    assert_eq!(decide(&p, "a", "x", Other).decision, Deny);
    assert_eq!(decide(&p, "a", "y", Other).decision, Ask);
    assert_eq!(decide(&p, "b", "x", Other).decision, Allow);
    assert_eq!(decide(&p, "c", "x", Other).decision, Deny);
    // A new top-level default replaces the old one.
    assert!(p.set_rules(&json!({"default": "allow"}), None).is_empty());
    assert_eq!(decide(&p, "c", "x", Other).decision, Allow);
    assert_eq!(decide(&p, "a", "y", Other).decision, Ask);
    // Naming the default set explicitly is the same as None.
    assert!(p.set_rules(&json!({"b": {}}), Some("default")).is_empty());
    assert_eq!(decide(&p, "b", "x", Other).decision, Allow); // top default
    assert_eq!(p.set_names(), vec!["default".to_string()]);
}

#[test]
fn named_sets_are_kept_apart_and_combined() {
    let mut p = policy(json!({
        "default": "allow",
        "write_file": {"allow": ["src/**"], "default": "allow"},
        "run_command": {"allow": ["git *"]},
    }));
    let problems = p.set_rules(
        &json!({
            "default": "ask",
            "write_file": {"default": "deny", "deny": ["src/secret/**"]},
            "run_command": {"deny": ["git push*"], "allow": ["ls"]},
        }),
        Some("readonly"),
    );
    assert!(problems.is_empty());
    assert_eq!(
        p.set_names(),
        vec!["default".to_string(), "readonly".to_string()]
    );

    let cases: &[(&str, &str, SubjectKind, Decision, &str)] = &[
        // deny of readonly is checked before allow of default
        (
            "write_file",
            "src/secret/k",
            SubjectKind::Path,
            Deny,
            "set \"readonly\"",
        ),
        // allow of default still applies (allow before defaults)
        (
            "write_file",
            "src/main.rs",
            SubjectKind::Path,
            Allow,
            "set \"default\"",
        ),
        // strictest tool default wins: deny (readonly) over allow (default)
        (
            "write_file",
            "README.md",
            SubjectKind::Path,
            Deny,
            "write_file's default (set \"readonly\")",
        ),
        ("run_command", "git push origin", Command, Deny, "readonly"),
        ("run_command", "git status", Command, Allow, "\"default\""),
        ("run_command", "ls", Command, Allow, "\"readonly\""),
        // strictest top-level default: ask (readonly) over allow (default)
        (
            "fetch",
            "https://x",
            Other,
            Ask,
            "top-level default (set \"readonly\")",
        ),
    ];
    for (tool, subject, kind, want, because) in cases {
        let v = decide(&p, tool, subject, *kind);
        assert_eq!(v.decision, *want, "{tool} {subject}: {}", v.because);
        assert!(
            v.because.contains(because),
            "{tool} {subject}: {}",
            v.because
        );
    }

    // Re-setting the default set does not touch readonly.
    assert!(
        p.set_rules(&json!({"write_file": {"allow": ["**"]}}), None)
            .is_empty()
    );
    let v = decide(&p, "write_file", "src/secret/k", SubjectKind::Path);
    assert_eq!(v.decision, Deny);
    // Clearing readonly restores the default set alone.
    assert!(p.clear_rules(Some("readonly")));
    assert!(!p.clear_rules(Some("readonly")));
    let v = decide(&p, "write_file", "src/secret/k", SubjectKind::Path);
    assert_eq!(v.decision, Allow);
    assert_eq!(
        decide(&p, "fetch", "https://x", Other).because,
        "no rule matched; top-level default"
    );
}

#[test]
fn custom_messages_reach_the_model_for_deny_and_ask_only() {
    let p = policy(json!({
        "run_command": {
            "deny": [{"pattern": "sudo *", "message": "no sudo here"}, ["rm *", "use trash"]],
            "ask": [{"pattern": "git push*", "message": "pushing needs a human"}],
            "allow": [{"pattern": "ls*", "message": "ignored"}],
        }
    }));
    let cases: &[(&str, Decision, Option<&str>)] = &[
        ("sudo ls", Deny, Some("no sudo here")),
        ("rm x", Deny, Some("use trash")),
        ("ls -la && sudo rm x", Deny, Some("no sudo here")),
        ("git push", Ask, Some("pushing needs a human")),
        ("ls", Allow, None),
        ("cat x", Ask, None),
    ];
    for (cmd, want, msg) in cases {
        let v = decide(&p, "run_command", cmd, Command);
        assert_eq!(v.decision, *want, "{cmd}");
        assert_eq!(v.message.as_deref(), *msg, "{cmd}");
    }
}

#[test]
fn invalid_rules_are_reported_and_the_tool_never_allows() {
    // (tool entry, text the problem must contain)
    let cases: &[(Value, &str)] = &[
        (json!({"allow": ["/(unclosed/", "*"]}), "/(unclosed/"),
        (json!({"allow": ["[a-", "*"]}), "[a-"),
        (json!({"allow": [42, "*"]}), "42"),
        (json!({"allow": [{"patern": "x"}, "*"]}), "patern"),
        (
            json!({"allow": [["a", "b", "c"], "*"]}),
            "[\"a\",\"b\",\"c\"]",
        ),
        (json!({"allow": ["*"], "default": "maybe"}), "maybe"),
        (json!({"allow": ["*"], "dney": ["rm *"]}), "dney"),
        (json!({"allow": 7}), "7"),
    ];
    for (entry, text) in cases {
        let mut p = Policy::default();
        let problems = p.set_rules(&json!({"t": entry, "other": {"allow": ["*"]}}), None);
        assert_eq!(problems.len(), 1, "{entry}: {problems:?}");
        let problem = &problems[0];
        assert_eq!(problem.tool, "t");
        let shown = problem.to_string();
        assert!(shown.contains(text), "{entry}: {shown}");
        assert!(shown.starts_with("policy for t: rule \""), "{shown}");
        assert!(
            shown.ends_with("; t now asks instead of allowing"),
            "{shown}"
        );
        // Allowed by "*" (or nothing), but capped at ask.
        let v = decide(&p, "t", "anything", Other);
        assert_eq!(v.decision, Ask, "{entry}: {}", v.because);
        // Other tools are unaffected.
        assert_eq!(decide(&p, "other", "anything", Other).decision, Allow);
    }

    // Capping: deny stays deny; default allow becomes ask; declared allow too.
    let mut p = Policy::default();
    let problems = p.set_rules(
        &json!({"t": {"deny": ["rm *", "/[/"], "default": "allow"}}),
        None,
    );
    assert_eq!(problems.len(), 1);
    assert!(problems[0].problem.contains("regular expression"));
    assert_eq!(decide(&p, "t", "rm x", Other).decision, Deny);
    let v = decide(&p, "t", "ls", Other);
    assert_eq!(v.decision, Ask);
    assert!(v.because.contains("invalid rule"), "{}", v.because);
    // A later valid entry for the tool lifts the cap.
    assert!(
        p.set_rules(&json!({"t": {"default": "allow"}}), None)
            .is_empty()
    );
    assert_eq!(decide(&p, "t", "ls", Other).decision, Allow);
}

#[test]
fn a_tool_entry_that_is_not_a_table_is_a_problem() {
    for entry in [json!("allow"), json!(3), json!(true), json!(["x"])] {
        let mut p = Policy::default();
        let problems = p.set_rules(&json!({"default": "allow", "t": entry}), None);
        assert_eq!(problems.len(), 1, "{entry}");
        assert_eq!(decide(&p, "t", "x", Other).decision, Ask, "{entry}");
        assert_eq!(decide(&p, "u", "x", Other).decision, Allow, "{entry}");
    }
    // Empty tables, however Lua encodes them, are fine.
    for entry in [json!({}), json!([])] {
        let mut p = Policy::default();
        assert!(
            p.set_rules(&json!({"t": entry, "u": {"allow": {}}}), None)
                .is_empty()
        );
    }
}

#[test]
fn invalid_top_level_default_caps_every_tool() {
    let mut p = Policy::default();
    let problems = p.set_rules(
        &json!({"default": "maybe", "t": {"allow": ["x"], "deny": ["y"]}}),
        None,
    );
    assert_eq!(
        problems,
        vec![RuleProblem {
            tool: "*".into(),
            rule: "maybe".into(),
            problem: "is not a valid default (use \"allow\", \"ask\" or \"deny\")".into(),
        }]
    );
    assert_eq!(
        problems[0].to_string(),
        "policy for every tool: rule \"maybe\" is not a valid default (use \"allow\", \"ask\" \
         or \"deny\"); every tool now asks instead of allowing"
    );
    assert_eq!(decide(&p, "t", "x", Other).decision, Ask);
    assert_eq!(decide(&p, "t", "y", Other).decision, Deny);
    assert_eq!(declared(&p, "u", "x", Some(Allow)).decision, Ask);
    // A valid default later lifts it.
    assert!(p.set_rules(&json!({"default": "allow"}), None).is_empty());
    assert_eq!(decide(&p, "t", "x", Other).decision, Allow);

    // A rules value that is not a table at all also caps.
    let mut p = Policy::default();
    assert_eq!(p.set_rules(&json!("allow"), None).len(), 1);
    assert_eq!(declared(&p, "u", "x", Some(Allow)).decision, Ask);
    // Null and an empty list are "no rules".
    let mut p = Policy::default();
    assert!(p.set_rules(&Value::Null, None).is_empty());
    assert!(p.set_rules(&json!([]), None).is_empty());
}

#[test]
fn rule_problem_display() {
    let p = RuleProblem {
        tool: "run_command".into(),
        rule: "/(/".into(),
        problem: "is not a valid regular expression: unclosed group".into(),
    };
    assert_eq!(
        p.to_string(),
        "policy for run_command: rule \"/(/\" is not a valid regular expression: unclosed \
         group; run_command now asks instead of allowing"
    );
    // Regex errors are reduced to one line.
    let mut pol = Policy::default();
    let problems = pol.set_rules(&json!({"t": {"deny": ["/(/"]}}), None);
    assert!(!problems[0].to_string().contains('\n'), "{}", problems[0]);
}

#[test]
fn star_stays_within_a_path_component_but_double_star_does_not() {
    let p = policy(json!({
        "read_file": {"deny": ["*.key", "secrets/*", "logs/**", "/**/build/**/*.o"], "default": "allow"},
        "run_command": {"deny": ["cat *.key"], "default": "allow"},
    }));
    let cases: &[(&str, SubjectKind, Decision)] = &[
        ("a.key", SubjectKind::Path, Deny),
        ("dir/a.key", SubjectKind::Path, Allow),
        ("secrets/x", SubjectKind::Path, Deny),
        ("secrets/x/y", SubjectKind::Path, Allow),
        ("logs/x/y/z", SubjectKind::Path, Deny),
        ("/p/build/a/b/c.o", SubjectKind::Path, Deny),
        ("/p/build/c.o", SubjectKind::Path, Deny),
        ("/p/build/c.oo", SubjectKind::Path, Allow),
    ];
    for (subject, kind, want) in cases {
        let v = decide(&p, "read_file", subject, *kind);
        assert_eq!(v.decision, *want, "{subject}: {}", v.because);
    }
    // For commands `*` crosses `/`.
    let v = decide(&p, "run_command", "cat dir/sub/a.key", Command);
    assert_eq!(v.decision, Deny);
    // And for other subjects too.
    let p = policy(json!({"fetch": {"deny": ["https://evil.com/*"]}}));
    assert_eq!(
        decide(&p, "fetch", "https://evil.com/a/b/c", Other).decision,
        Deny
    );
}

#[test]
fn tilde_rules_start_at_home() {
    let Some(home) = uji_policy::home_dir() else {
        return; // no $HOME: nothing to expand against
    };
    let home = home.to_string_lossy().trim_end_matches('/').to_string();
    let p = policy(json!({
        "write_file": {"deny": ["~/.ssh/**", "~/.bashrc"], "default": "allow"},
        "run_command": {"deny": ["~/bin/*"], "default": "allow"},
    }));
    let cases: &[(String, Decision)] = &[
        (format!("{home}/.ssh/id_rsa"), Deny),
        (format!("{home}/.ssh/a/b"), Deny),
        ("~/.ssh/config".to_string(), Deny),
        (format!("{home}/.bashrc"), Deny),
        ("~/.bashrc".to_string(), Deny),
        (format!("{home}/.bashrc.bak"), Allow),
        (format!("{home}/notes.txt"), Allow),
    ];
    for (subject, want) in cases {
        let v = decide(&p, "write_file", subject, SubjectKind::Path);
        assert_eq!(v.decision, *want, "{subject}: {}", v.because);
    }
    // Commands are matched as written: `~/` is literal there.
    let v = decide(&p, "run_command", "~/bin/x", Command);
    assert_eq!(v.decision, Deny);
    let v = decide(&p, "run_command", &format!("{home}/bin/x"), Command);
    assert_eq!(v.decision, Allow);
}

#[test]
fn path_rules_match_the_canonical_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let secret = root.join("secret.txt");
    std::fs::write(&secret, "s").unwrap();
    std::os::unix::fs::symlink(&secret, repo.join("innocent.txt")).unwrap();
    std::os::unix::fs::symlink(root.join("repo"), root.join("repo-link")).unwrap();

    let abs = |p: &PathBuf| p.to_string_lossy().into_owned();
    let p = policy(json!({
        "read_file": {
            "deny": [abs(&secret), format!("{}/private/**", abs(&repo))],
            "allow": ["src/**", "*.md"],
        }
    }));
    let cases: &[(&str, &Path, Decision)] = &[
        // A symlink inside cwd to a denied file is denied.
        ("innocent.txt", &repo, Deny),
        ("./innocent.txt", &repo, Deny),
        // `..` is resolved before matching the absolute rule.
        ("../secret.txt", &repo, Deny),
        ("src/../../secret.txt", &repo, Deny),
        // A rule on an absolute path matches a relative subject.
        ("private/key", &repo, Deny),
        ("./private/../private/key", &repo, Deny),
        // Relative rules match absolute subjects inside cwd.
        (&format!("{}/src/main.rs", abs(&repo)), &repo, Allow),
        ("./src/main.rs", &repo, Allow),
        ("README.md", &repo, Allow),
        // cwd given through a symlink still matches
        ("private/key", &root.join("repo-link"), Deny),
        ("other.txt", &repo, Ask),
    ];
    for (subject, cwd, want) in cases {
        let v = decide_in(&p, "read_file", subject, SubjectKind::Path, cwd);
        assert_eq!(
            v.decision,
            *want,
            "{subject} in {}: {}",
            cwd.display(),
            v.because
        );
    }
}

#[test]
fn disabled_tools_are_denied_whatever_the_rules_say() {
    let mut p = policy(json!({"default": "allow", "write_file": {"allow": ["**"]}}));
    p.disable(&["write_file".to_string(), "fetch".to_string()]);
    assert!(p.is_disabled("write_file"));
    assert!(!p.is_disabled("read_file"));
    assert_eq!(
        p.disabled(),
        vec!["fetch".to_string(), "write_file".to_string()]
    );
    let v = decide(&p, "write_file", "a.txt", SubjectKind::Path);
    assert_eq!(
        v,
        Verdict {
            decision: Deny,
            because: "write_file is disabled".into(),
            message: Some("write_file is disabled".into()),
            unresolved: false,
            opaque: false,
        }
    );
    assert_eq!(declared(&p, "fetch", "x", Some(Allow)).decision, Deny);
    p.enable(&["write_file".to_string()]);
    assert!(!p.is_disabled("write_file"));
    assert_eq!(
        decide(&p, "write_file", "a.txt", SubjectKind::Path).decision,
        Allow
    );
}

#[test]
fn the_documented_example() {
    let p = policy(json!({
        "default": "ask",
        "run_command": {
            "allow": ["git status", "git diff *", "cargo test*"],
            "deny": ["/^rm\\s+-rf/"],
        }
    }));
    let cases: &[(&str, Decision, &str)] = &[
        (
            "git status",
            Allow,
            "allow rule \"git status\" of run_command in set \"default\" matched part \"git status\"",
        ),
        (
            "git diff HEAD~1",
            Allow,
            "allow rule \"git diff *\" of run_command in set \"default\" matched part \"git diff HEAD~1\"",
        ),
        (
            "cargo test --workspace",
            Allow,
            "allow rule \"cargo test*\" of run_command in set \"default\" matched part \"cargo test --workspace\"",
        ),
        (
            "rm -rf /",
            Deny,
            "deny rule \"/^rm\\s+-rf/\" of run_command in set \"default\" matched part \"rm -rf /\"",
        ),
        ("git push", Ask, "no rule matched; top-level default"),
        (
            "git diff; rm -rf ~",
            Deny,
            "deny rule \"/^rm\\s+-rf/\" of run_command in set \"default\" matched part \"rm -rf ~\"",
        ),
        (
            "git diff HEAD && ls",
            Ask,
            "no rule matched; top-level default",
        ),
    ];
    for (cmd, want, because) in cases {
        let v = decide(&p, "run_command", cmd, Command);
        assert_eq!(v.decision, *want, "{cmd}");
        assert_eq!(v.because, *because, "{cmd}");
    }
    // Other tools fall to the top-level default.
    let v = decide(&p, "read_file", "x", SubjectKind::Path);
    assert_eq!(
        (v.decision, v.because.as_str()),
        (Ask, "no rule matched; top-level default")
    );
}

#[test]
fn policy_default_has_nothing_and_asks() {
    let p = Policy::default();
    for kind in [SubjectKind::Path, Command, Other] {
        let v = decide(&p, "t", "x", kind);
        assert_eq!(v.decision, Ask);
        assert_eq!(v.because, "no rule matched; fallback ask");
    }
    assert!(p.set_names().is_empty());
}

#[test]
fn odd_subjects_never_panic() {
    let p = policy(json!({
        "t": {"deny": ["/x/", "a*"], "allow": ["**"], "ask": ["b"]},
        "r": {"allow": ["*"]},
    }));
    let long = "a".repeat(100_000);
    let subjects = [
        "",
        " ",
        "\0",
        "é🎉",
        "../../../../../../../../..",
        "//",
        "~",
        "~/",
        "\\",
        long.as_str(),
    ];
    for s in subjects {
        for kind in [SubjectKind::Path, Command, Other] {
            for tool in ["t", "r", "none"] {
                let _ = decide(&p, tool, s, kind);
            }
        }
    }
}

#[test]
fn command_style_globs_compile_for_every_tool() {
    // Braces and backslashes that would be invalid path-glob syntax are fine.
    let p = policy(json!({"run_command": {
        "allow": ["awk '{print $1' *", "echo *\\", "find * -exec {} \\;", "ls {a,b}*"],
    }}));
    let cases: &[(&str, Decision)] = &[
        ("awk '{print $1' f", Allow),
        // A lone trailing backslash is a parse error now (fail closed).
        ("echo x\\\\", Allow),
        ("echo x\\", Ask),
        // The rule matches, but `-exec` runs `{}`, a part no rule allows.
        ("find . -exec {} \\;", Ask),
        ("ls {a,b}.txt", Allow),
        ("ls a.txt", Ask),
    ];
    for (cmd, want) in cases {
        assert_eq!(
            decide(&p, "run_command", cmd, Command).decision,
            *want,
            "{cmd}"
        );
    }
    // In path rules `{a,b}` is alternation.
    let p = policy(json!({"read_file": {"deny": ["**/*.{pem,key}"], "default": "allow"}}));
    assert_eq!(
        decide(&p, "read_file", "a/b.key", SubjectKind::Path).decision,
        Deny
    );
    assert_eq!(
        decide(&p, "read_file", "a/b.pem", SubjectKind::Path).decision,
        Deny
    );
    assert_eq!(
        decide(&p, "read_file", "a/b.rs", SubjectKind::Path).decision,
        Allow
    );
}

#[test]
fn policy_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Policy>();
    assert_send_sync::<Verdict>();
}
