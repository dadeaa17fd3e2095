//! The parts of command lines (tree-sitter-bash), and deciding compound
//! commands.
// Helpers outside #[test] fns unwrap too; a failed setup should just fail the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use uji_policy::{
    Decision, MAX_COMMAND_PARTS, MAX_NESTING, Policy, SubjectKind, ToolFacts, Verdict,
    command_parts,
};

use Decision::{Allow, Ask, Deny};

mod common;
use common::shown_parts as split;

#[test]
fn splits_on_every_separator() {
    let cases: &[(&str, &[&str])] = &[
        ("a", &["a"]),
        ("a && b", &["a", "b"]),
        ("a || b", &["a", "b"]),
        ("a; b", &["a", "b"]),
        ("a;b;c", &["a", "b", "c"]),
        ("a | b", &["a", "b"]),
        ("a|b", &["a", "b"]),
        ("a |& b", &["a", "b"]),
        ("a & b", &["a", "b"]),
        ("a &", &["a"]),
        ("a\nb\n\nc", &["a", "b", "c"]),
        ("a\r\nb", &["a", "b"]),
        (
            "a && b || c; d | e & f\ng",
            &["a", "b", "c", "d", "e", "f", "g"],
        ),
        ("  git   status  ", &["git status"]),
        ("", &[]),
        ("   ", &[]),
        (";;;", &["?;;;"]), // not a line bash accepts either
        ("a;;b", &["a", "b"]),
    ];
    for (line, want) in cases {
        assert_eq!(split(line), *want, "{line:?}");
    }
}

#[test]
fn respects_quotes_and_escapes() {
    let cases: &[(&str, &[&str])] = &[
        ("echo 'a; b' ; c", &["echo 'a; b'", "c"]),
        ("echo \"a && b\" || c", &["echo \"a && b\"", "c"]),
        ("echo 'a \"; b'", &["echo 'a \"; b'"]),
        ("echo \"it's; fine\"", &["echo \"it's; fine\""]),
        ("echo a\\;b", &["echo a\\;b"]),
        ("echo a\\&\\& b", &["echo a\\&\\& b"]),
        ("echo \"a \\\" ; b\"", &["echo \"a \\\" ; b\""]),
        ("echo 'a\\'; b", &["echo 'a\\'", "b"]), // no escapes in single quotes
        ("echo a\\\nb", &["echo a b", "echo ab"]), // both readings of a continuation
        ("echo '|' \"|\" \\|", &["echo '|' \"|\" \\|"]),
        ("echo é; ünï", &["echo é", "ünï"]),
        (
            "find . -exec rm {} \\;",
            &["find . -exec rm {} \\;", "rm {}", "rm -rf {} (find -exec)"],
        ),
    ];
    for (line, want) in cases {
        assert_eq!(split(line), *want, "{line:?}");
    }
}

#[test]
fn recurses_into_substitutions_and_subshells() {
    let cases: &[(&str, &[&str])] = &[
        ("echo $(date)", &["?echo $(date)", "date"]),
        ("echo $(a; b) c", &["?echo $(a; b) c", "a", "b"]),
        ("echo `date`", &["?echo `date`", "date"]),
        ("echo `a | b`; c", &["?echo `a | b`", "a", "b", "c"]),
        ("(cd x && make)", &["cd x", "make"]),
        ("(a) > log; b", &["(a) > log", "a", "b"]),
        (
            "echo \"$(rm -rf ~)\"",
            &["?echo \"$(rm -rf ~)\"", "rm -rf ~"],
        ),
        ("echo \"`id`\"", &["?echo \"`id`\"", "id"]),
        ("echo '$(not run)'", &["echo '$(not run)'"]),
        // An escaped `$` leaves a `( … )` the grammar refuses: unresolved,
        // and what it might run is still checked.
        (
            "echo \\$(not run)",
            &["?echo \\$(not run)", "echo", "not run"],
        ),
        (
            "a $(b $(c; d) e) f",
            &["?a $(b $(c; d) e) f", "?b $(c; d) e", "c", "d"],
        ),
        ("echo $(( 1 + (2 * 3) ))", &["?echo $(( 1 + (2 * 3) ))"]),
        (
            "echo $(( $(id -u) + 1 ))",
            &["?echo $(( $(id -u) + 1 ))", "id -u"],
        ),
        (
            "echo ${HOME:-a;b}",
            &["?echo ${HOME:-a;b}", "?echo ${HOME:-a;b}"],
        ),
        ("echo ${X:-$(id)}", &["?echo ${X:-$(id)}", "id"]),
        (
            "diff <(ls a) <(ls b)",
            &["?diff <(ls a) <(ls b)", "ls a", "ls b"],
        ),
        ("echo $# $? $$", &["?echo $# $? $$"]),
    ];
    for (line, want) in cases {
        assert_eq!(split(line), *want, "{line:?}");
    }
}

#[test]
fn redirections_are_not_separators() {
    let cases: &[(&str, &[&str])] = &[
        ("cargo test 2>&1", &["cargo test 2>&1"]),
        (
            "cargo test 2>&1 | tail -20",
            &["cargo test 2>&1", "tail -20"],
        ),
        ("echo x >&2", &["echo x >&2"]),
        ("echo x 1>&2 && y", &["echo x 1>&2", "y"]),
        ("make &>log", &["make &>log"]),
        ("make &>>log; z", &["make &>>log", "z"]),
        ("echo x >| file", &["echo x >| file"]),
        ("cat <&3", &["cat <&3"]),
        ("exec 3>&-", &["exec 3>&-"]),
        ("a >> b 2> c < d", &["a >> b 2> c < d"]),
    ];
    for (line, want) in cases {
        assert_eq!(split(line), *want, "{line:?}");
    }
}

#[test]
fn strips_leading_assignments_and_comments() {
    let cases: &[(&str, &[&str])] = &[
        ("FOO=1 BAR=\"a b\" cargo test", &["cargo test"]),
        ("FOO=1 cargo test && X=2 y", &["cargo test", "y"]),
        ("A_1='x y' B+=z c", &["c"]),
        ("FOO=1", &[]),
        ("FOO=$(rm -rf ~)", &["rm -rf ~"]),
        ("FOO=$(id) ls", &["?ls", "id"]),
        ("ls FOO=1", &["ls FOO=1"]),
        ("=x ls", &["=x ls"]),
        ("1A=x ls", &["?1A=x ls"]), // runs a program called `1A=x`
        ("git status # ; rm -rf ~", &["git status"]),
        ("# only a comment", &[]),
        ("a # c\nb", &["a", "b"]),
        ("echo a#b", &["echo a#b"]),
        ("echo '#'; b", &["echo '#'", "b"]),
        ("echo $#; b", &["?echo $#", "b"]),
    ];
    for (line, want) in cases {
        assert_eq!(split(line), *want, "{line:?}");
    }
}

#[test]
fn what_the_grammar_refuses_is_unresolved() {
    let cases: &[(&str, &[&str])] = &[
        ("echo 'a", &["?echo 'a", "echo"]),
        ("echo \"a", &["?echo \"a", "echo"]),
        ("echo \"$(a\"", &["?echo \"$(a\"", "echo"]),
        ("echo $(a", &["?echo $(a", "?echo $(a", "a"]),
        ("(a", &["?(a", "a"]),
        ("a)", &["?a)", "a"]),
        ("echo `a", &["?echo `a", "?echo `a"]),
        ("echo ${a", &["?echo ${a", "echo"]),
        ("echo $(( 1 + 2 )", &["?echo $(( 1 + 2 )", "echo"]),
    ];
    for (line, want) in cases {
        assert_eq!(split(line), *want, "{line:?}");
        // Every unresolved part says why.
        let parts = command_parts(line);
        assert!(
            parts
                .iter()
                .filter(|p| !p.resolved)
                .all(|p| p.reason.as_deref().is_some_and(|r| !r.is_empty())),
            "{line:?}"
        );
    }
}

#[test]
fn limits_parts_and_nesting() {
    let at_limit = vec!["x"; MAX_COMMAND_PARTS].join(";");
    assert!(split(&at_limit).iter().all(|p| p == "x"));
    assert_eq!(split(&at_limit).len(), MAX_COMMAND_PARTS);
    // Past the limit the rest is one unresolved part.
    let over = vec!["x"; MAX_COMMAND_PARTS + 1].join(";");
    let parts = split(&over);
    assert_eq!(parts.len(), MAX_COMMAND_PARTS + 1);
    assert!(parts.last().is_some_and(|p| p.starts_with('?')));
    // Empty parts do not count.
    assert_eq!(split(&format!("{at_limit};;")).len(), MAX_COMMAND_PARTS);

    // Command strings run by `eval` (or `bash -c`…) are read up to
    // MAX_NESTING levels; deeper is unresolved.
    let nest = |n: usize| format!("{}rm x", "eval ".repeat(n));
    let parts = split(&nest(MAX_NESTING));
    assert_eq!(parts.last().map(String::as_str), Some("rm x"));
    let parts = split(&nest(MAX_NESTING + 2));
    assert!(parts.iter().any(|p| p.starts_with('?')), "{parts:?}");
    assert!(!parts.iter().any(|p| p == "rm x"));
    // Deep input never overflows the stack.
    let deep = format!("{}x{}", "$(".repeat(10_000), ")".repeat(10_000));
    assert!(!split(&deep).is_empty());
    let _ = split(&"`".repeat(10_001));
}

#[test]
fn odd_lines_never_panic() {
    let lines = [
        "\\", "'", "\"", "`", "$", "$(", "${", "$((", ")", "&", "|", "&&&", ">&", "&>", "#", "a\\",
        "\"\\", "$'x'", "é\\é", "\0;\0", "((", "))", "$(()", "$((\"",
    ];
    for l in lines {
        let _ = command_parts(l);
    }
}

fn run(p: &Policy, cmd: &str) -> Verdict {
    p.decide(&ToolFacts {
        tool: "run_command",
        subject: cmd,
        kind: SubjectKind::Command,
        declared: None,
        cwd: Path::new("/nonexistent-uji-cwd"),
    })
}

fn policy(entry: Value) -> Policy {
    let mut p = Policy::default();
    let problems = p.set_rules(&json!({ "run_command": entry }), None);
    assert!(problems.is_empty(), "{problems:?}");
    p
}

#[test]
fn compound_commands_need_every_part_allowed() {
    let p = policy(json!({
        "allow": ["git diff*", "git status", "cargo test*", "ls*", "echo *", "make"],
        "deny": ["/^rm\\s+-rf/", "sudo *"],
        "ask": ["git push*"],
    }));
    let cases: &[(&str, Decision)] = &[
        ("git diff", Allow),
        ("git diff; rm -rf ~", Deny),
        ("git diff; rm -r ~", Ask),
        ("git diff && curl x | sh", Ask),
        ("git diff | less", Ask),
        ("cargo test 2>&1 | tail -20", Ask),
        ("cargo test 2>&1", Allow),
        ("FOO=1 cargo test", Allow),
        ("git status && git diff HEAD", Allow),
        ("git status; git push", Ask),
        ("git status && sudo ls", Deny),
        ("echo $(rm -rf /)", Deny),
        ("echo `rm -rf /`", Deny),
        ("echo \"$(rm -rf /)\"", Deny),
        ("echo $(whoami)", Ask),
        ("echo $(ls)", Ask),         // a substitution is never plain
        ("(cd sub && make)", Ask),   // `cd sub` is not allowed
        ("(ls && make)", Allow),     // a subshell needs only its inner parts
        ("(ls && make) > log", Ask), // the redirection is not allowed by `ls`
        ("(ls; rm -rf /)", Deny),
        ("ls &", Allow),
        ("ls & whoami", Ask),
        ("git status # ; rm -rf ~", Allow),
        ("git diff\nrm -rf ~", Deny),
        // Quoting does not dodge deny rules.
        ("\\rm -rf ~", Deny),
        ("'rm' -rf ~", Deny),
        ("\"sudo\" ls", Deny),
        ("", Ask),
    ];
    for (cmd, want) in cases {
        let v = run(&p, cmd);
        assert_eq!(v.decision, *want, "{cmd:?}: {}", v.because);
    }
}

#[test]
fn tail_rule_makes_the_pipeline_allowed() {
    let p = policy(json!({"allow": ["cargo test*", "tail*"]}));
    let v = run(&p, "cargo test 2>&1 | tail -20");
    assert_eq!(v.decision, Allow);
    assert_eq!(
        v.because,
        "allow rules of run_command matched every part: \"cargo test 2>&1\" by rule \
         \"cargo test*\" (set \"default\"), \"tail -20\" by rule \"tail*\" (set \"default\")"
    );
}

#[test]
fn whole_line_rules() {
    let p = policy(json!({
        "allow": ["cargo test 2>&1 | tail -20", "git diff*", "/^make( |$)/"],
        "deny": ["*| sh", "/curl.*\\|\\s*bash/"],
    }));
    let cases: &[(&str, Decision, &str)] = &[
        // An exact rule may allow a whole compound line.
        ("cargo test 2>&1 | tail -20", Allow, "matched line"),
        // Globs and regexes on the whole line do not allow compounds.
        ("git diff; rm -rf ~", Ask, "fallback"),
        ("make; rm -rf ~", Ask, "fallback"),
        // But deny rules on the whole line do deny.
        ("curl x | sh", Deny, "matched line"),
        ("curl -s x | bash", Deny, "matched line"),
        ("echo hi | sh", Deny, "matched line"),
    ];
    for (cmd, want, because) in cases {
        let v = run(&p, cmd);
        assert_eq!(v.decision, *want, "{cmd:?}: {}", v.because);
        assert!(v.because.contains(because), "{cmd:?}: {}", v.because);
    }
}

#[test]
fn unsplittable_lines_ask_unless_denied() {
    let p = policy(json!({
        "allow": ["echo *", "*"],
        "deny": ["*rm -rf*"],
        "default": "allow",
    }));
    let cases: &[(&str, Decision)] = &[
        ("echo 'unbalanced", Ask),
        ("echo \"a; rm -rf ~", Deny),
        ("echo $(", Ask),
        ("echo `x", Ask),
        (")", Ask),
    ];
    for (cmd, want) in cases {
        let v = run(&p, cmd);
        assert_eq!(v.decision, *want, "{cmd:?}: {}", v.because);
    }
    let v = run(&p, "echo 'x");
    assert!(
        v.because.starts_with(
            "could not tell what `echo 'x` runs (the shell grammar does not accept this line)"
        ),
        "{}",
        v.because
    );

    // Never allow, and a deny fallback stays deny.
    let p = policy(json!({"default": "deny"}));
    assert_eq!(run(&p, "echo 'x").decision, Deny);
    // More parts than MAX_COMMAND_PARTS (256) leave the rest unresolved.
    let over = vec!["ls"; 257].join(";");
    assert_eq!(
        run(&policy(json!({"allow": ["ls"]})), &over[..over.len() - 3]).decision,
        Allow
    );
    let p = policy(json!({"allow": ["ls"]}));
    assert_eq!(run(&p, &over).decision, Ask);
}

#[test]
fn each_part_follows_deny_then_allow_then_ask() {
    // The first matching rule decides a part: allow before ask, as for
    // every other subject. An ask that no allow covers still asks.
    let p = policy(json!({"allow": ["git *"], "ask": ["git push*", "make*"]}));
    let cases: &[(&str, Decision)] = &[
        ("git status", Allow),
        ("git push", Allow),
        ("git status && git push", Allow),
        ("git status && make", Ask),
        ("make", Ask),
        ("git status && cargo build", Ask),
    ];
    for (cmd, want) in cases {
        assert_eq!(run(&p, cmd).decision, *want, "{cmd:?}");
    }
}

#[test]
fn compound_because_names_the_part() {
    let p = policy(json!({"deny": ["/^rm\\s+-rf/"], "allow": ["ls"]}));
    let v = run(&p, "ls && rm -rf /");
    assert_eq!(
        v.because,
        "deny rule \"/^rm\\s+-rf/\" of run_command in set \"default\" matched part \"rm -rf /\""
    );
    let v = run(&p, "ls");
    assert_eq!(
        v.because,
        "allow rule \"ls\" of run_command in set \"default\" matched part \"ls\""
    );
}

#[test]
fn random_lines_never_panic_and_parts_are_clean() {
    // A small deterministic generator over shell-significant characters.
    let alphabet: Vec<char> = "ab =;&|()$`'\"\\#{}<>\n\t1é*".chars().collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let p = policy(json!({
        "allow": ["a*", "/b/"],
        "deny": ["*rm*"],
        "ask": ["1"],
    }));
    for _ in 0..20_000 {
        let len = (next() % 24) as usize;
        let line: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let parts = command_parts(&line);
        assert!(parts.len() <= MAX_COMMAND_PARTS + 1);
        for part in &parts {
            assert!(!part.text.is_empty(), "{line:?}");
            assert_eq!(part.text.trim(), part.text, "{line:?}");
            assert!(part.resolved || part.reason.is_some(), "{line:?}");
        }
        let _ = run(&p, &line);
    }
}
