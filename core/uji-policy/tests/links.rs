//! A path deny rule cannot be walked around through a hard link.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;

use serde_json::json;
use uji_policy::{Decision, Policy, SubjectKind, ToolFacts, Verdict};

fn decide(p: &Policy, subject: &str, cwd: &Path) -> Verdict {
    p.decide(&ToolFacts {
        tool: "read_file",
        subject,
        kind: SubjectKind::Path,
        declared: Some(Decision::Allow),
        cwd,
    })
}

fn policy(rules: serde_json::Value) -> Policy {
    let mut p = Policy::new();
    assert!(p.set_rules(&json!({ "read_file": rules }), None).is_empty());
    p
}

/// `secret.txt`, `link.txt` (a hard link to it) and `plain.txt`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("secret.txt"), "s").unwrap();
    fs::hard_link(dir.path().join("secret.txt"), dir.path().join("link.txt")).unwrap();
    fs::write(dir.path().join("plain.txt"), "p").unwrap();
    dir
}

#[test]
fn an_exact_deny_rule_denies_every_name_of_the_file() {
    let dir = workspace();
    let p = policy(json!({ "deny": ["secret.txt"] }));
    let v = decide(&p, "link.txt", dir.path());
    assert_eq!(v.decision, Decision::Deny, "{}", v.because);
    assert!(
        v.because.contains("the same file as link.txt, hard-linked"),
        "{}",
        v.because
    );
    // Absolute rules too, and the subject given absolute.
    let abs = dir.path().join("secret.txt");
    let p = policy(json!({ "deny": [abs.to_string_lossy()] }));
    let link = dir.path().join("link.txt");
    let v = decide(&p, &link.to_string_lossy(), Path::new("/"));
    assert_eq!(v.decision, Decision::Deny, "{}", v.because);
    // Other files are untouched, and so is a linked file no rule names.
    assert_eq!(
        decide(&p, "plain.txt", dir.path()).decision,
        Decision::Allow
    );
    let p = policy(json!({ "deny": ["plain.txt"] }));
    let v = decide(&p, "link.txt", dir.path());
    assert_eq!(v.decision, Decision::Allow, "{}", v.because);
}

#[test]
fn a_linked_file_under_a_pattern_deny_rule_is_unresolved() {
    let dir = workspace();
    for rules in [
        json!({ "deny": ["*secret*"] }),
        json!({ "deny": ["/secret/"], "allow": ["*"] }),
    ] {
        let p = policy(rules);
        let v = decide(&p, "link.txt", dir.path());
        assert_eq!(v.decision, Decision::Ask, "{}", v.because);
        assert!(v.unresolved, "--yes must deny it: {}", v.because);
        assert!(
            v.because.contains("link.txt is a file with 2 hard links"),
            "{}",
            v.because
        );
        // A file with one name is decided as before.
        let v = decide(&p, "plain.txt", dir.path());
        assert!(!v.unresolved, "{}", v.because);
        assert_eq!(v.decision, Decision::Allow, "{}", v.because);
    }
    // Without deny rules, links change nothing.
    let p = policy(json!({ "allow": ["*"] }));
    let v = decide(&p, "link.txt", dir.path());
    assert_eq!((v.decision, v.unresolved), (Decision::Allow, false));
}
