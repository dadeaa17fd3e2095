//! `read_only = "allow"`: plain commands that only read files `read_file`
//! reads unasked run without asking; everything else is decided as before.
// Helpers outside #[test] fns unwrap too; a failed setup should just fail the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use uji_policy::{Decision, Policy, SubjectKind, ToolFacts};

use Decision::{Allow, Ask, Deny};

/// `<root>/repo` (the working directory) with `a.txt`, `src/main.rs`,
/// `.env`, and `out -> <root>/outside`; `<root>/outside/secret.txt`.
struct Tree {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let repo = root.join("repo");
    let outside = root.join("outside");
    fs::create_dir_all(repo.join("src")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(repo.join("a.txt"), "a").unwrap();
    fs::write(repo.join("src/main.rs"), "fn main() {}").unwrap();
    fs::write(repo.join(".env"), "KEY=1").unwrap();
    fs::write(outside.join("secret.txt"), "s").unwrap();
    symlink(&outside, repo.join("out")).unwrap();
    Tree {
        _dir: dir,
        repo,
        outside,
    }
}

/// The shipped defaults' shape: a deny rule and `read_only = "allow"`.
fn policy(extra: Value) -> Policy {
    let mut policy = Policy::default();
    let defaults = json!({"run_command": {
        "read_only": "allow",
        "deny": [["rm -rf *", "no recursive deletion"]],
    }});
    assert!(policy.set_rules(&defaults, Some("defaults")).is_empty());
    assert!(policy.set_rules(&extra, None).is_empty());
    policy
}

fn decide(policy: &Policy, cwd: &Path, line: &str) -> Decision {
    let facts = ToolFacts {
        declared: Some(Ask),
        ..ToolFacts::new("run_command", line, SubjectKind::Command, cwd)
    };
    policy.decide(&facts).decision
}

#[test]
fn plain_reads_inside_the_workspace_run_unasked() {
    let t = tree();
    let policy = policy(json!({}));
    for line in [
        "cat a.txt",
        "cat ./a.txt src/main.rs",
        "ls",
        "ls -la src",
        "ls src | head -5",
        "head -n 3 src/main.rs",
        "tail -1 a.txt",
        "wc -l a.txt src/main.rs",
        "grep -rn 'fn main' src",
        "grep -c a a.txt 2>/dev/null",
        "rg -n main",
        "find . -name '*.rs' -type f",
        "git status",
        "git status --short && git diff",
        "git log --oneline -5",
        "git show HEAD:a.txt",
        "git branch -a",
        "ls 2>&1 | wc -l",
        "wc -c < a.txt",
        "/usr/bin/cat a.txt",
        &format!("cat {}/a.txt", t.repo.display()),
    ] {
        assert_eq!(decide(&policy, &t.repo, line), Allow, "{line}");
    }
}

#[test]
fn what_may_write_run_or_read_outside_still_asks() {
    let t = tree();
    let policy = policy(json!({"read_file": {"deny": [".env"]}}));
    let secret = t.outside.join("secret.txt");
    for line in [
        &format!("cat {}", secret.display()),
        "cat ~/.ssh/id_rsa",
        "cat /etc/passwd",
        "cat ../outside/secret.txt",
        "cat out/secret.txt",
        "ls ..",
        "cat .env",
        "cat *.txt",
        "cat $HOME/a.txt",
        "cat $(ls)",
        "ls > listing.txt",
        "cat a.txt >> b.txt",
        "grep a a.txt &> out.txt",
        "ls 1>&2 >copy.txt",
        "FOO=1 cat a.txt",
        "cat a.txt; touch b.txt",
        "cat a.txt | sh",
        "cat a.txt | tee b.txt",
        "sudo cat a.txt",
        "env cat a.txt",
        "./cat a.txt",
        "/tmp/cat a.txt",
        "find . -exec cat {} ;",
        "find . -fprint list.txt",
        "rg --pre ./x main",
        "grep -R main .",
        "git branch new-feature",
        "git diff --output=patch.txt",
        "git -c core.pager=sh log",
        "git commit -m x",
        "echo hi",
    ] {
        assert_eq!(decide(&policy, &t.repo, line), Ask, "{line}");
    }
}

#[test]
fn deny_rules_and_ask_rules_win_over_read_only() {
    let t = tree();
    let policy = policy(json!({"run_command": {"ask": ["git log*"]}}));
    assert_eq!(decide(&policy, &t.repo, "cat a.txt; rm -rf /"), Deny);
    assert_eq!(decide(&policy, &t.repo, "find . -delete"), Deny);
    assert_eq!(decide(&policy, &t.repo, "git log -3"), Ask);
    assert_eq!(decide(&policy, &t.repo, "git status"), Allow);
}

#[test]
fn the_strictest_read_only_of_the_sets_decides_and_names_itself() {
    let t = tree();
    let policy = policy(json!({"run_command": {"read_only": "ask"}}));
    assert_eq!(decide(&policy, &t.repo, "cat a.txt"), Ask);
    let policy = self::policy(json!({}));
    let facts = ToolFacts::new("run_command", "ls | wc -l", SubjectKind::Command, &t.repo);
    let verdict = policy.decide(&facts);
    assert_eq!(verdict.decision, Allow);
    assert!(verdict.because.contains("read-only"), "{}", verdict.because);
}

#[test]
fn without_read_only_nothing_changes() {
    let t = tree();
    let mut policy = Policy::default();
    policy.set_rules(&json!({"run_command": {"deny": ["rm -rf *"]}}), None);
    assert_eq!(decide(&policy, &t.repo, "cat a.txt"), Ask);
    assert_eq!(decide(&Policy::default(), &t.repo, "ls"), Ask);
}

#[test]
fn with_confinement_off_reads_anywhere_are_read_only_as_read_file_s_are() {
    let t = tree();
    let mut policy = policy(json!({}));
    let secret = t.outside.join("secret.txt");
    let line = format!("cat {}", secret.display());
    assert_eq!(decide(&policy, &t.repo, &line), Ask);
    policy.confine(Some(false));
    assert_eq!(decide(&policy, &t.repo, &line), Allow);
}

#[test]
fn a_bad_read_only_value_is_a_problem_and_caps_the_tool() {
    let t = tree();
    let mut policy = Policy::default();
    let problems = policy.set_rules(&json!({"run_command": {"read_only": "sure"}}), None);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].to_string().contains("read_only"),
        "{}",
        problems[0]
    );
    assert_eq!(decide(&policy, &t.repo, "cat a.txt"), Ask);
}
