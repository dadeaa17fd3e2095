//! The command corpus: lines → decision and parts under one fixed policy.
//!
//! Each row is a command line, the decision expected under [`policy`], and
//! the parts [`command_parts`] finds, in order; a part written `?…` is
//! unresolved (never allowed; denied under `--yes` when deny rules exist).
//! It covers every construct of issue 12 and every example it lists.

use std::path::Path;

use serde_json::json;
use uji_policy::Decision::{self, Allow, Ask, Deny};
use uji_policy::{Policy, SubjectKind, ToolFacts, command_parts};

mod common;
use common::shown_parts;

type Row = (&'static str, Decision, &'static [&'static str]);

/// The fixed policy the corpus is decided under.
fn policy() -> Policy {
    let mut p = Policy::default();
    let problems = p.set_rules(
        &json!({"run_command": {
            "allow": ["echo *", "git *", "find *", "ls *", "ls", "cat *", "cat", "grep *", "true"],
            "deny": ["rm *", "/^rm\\s+-rf/"],
            "ask": ["touch *"],
        }}),
        None,
    );
    assert!(problems.is_empty(), "{problems:?}");
    p
}

fn check(p: &Policy, line: &str, want: Decision, parts: Option<&[&str]>) {
    let v = p.decide(&ToolFacts::new(
        "run_command",
        line,
        SubjectKind::Command,
        Path::new("/tmp"),
    ));
    assert_eq!(v.decision, want, "{line:?}: {}", v.because);
    let unresolved = command_parts(line).iter().any(|p| !p.resolved);
    assert_eq!(
        v.unresolved,
        unresolved && want == Ask,
        "{line:?}: {}",
        v.because
    );
    if let Some(parts) = parts {
        assert_eq!(shown_parts(line), parts, "{line:?}");
    }
}

#[test]
fn corpus() {
    let p = policy();
    for (line, want, parts) in CORPUS {
        check(&p, line, *want, Some(parts));
    }
    assert!(CORPUS.len() >= 200);
}

#[test]
fn long_lines() {
    let p = policy();
    // Issue 12: more than 64 parts ending in a deletion.
    let line = format!("{}; rm -rf v", vec!["echo a"; 70].join(";"));
    check(&p, &line, Deny, None);
    assert_eq!(command_parts(&line).len(), 71);
    // Past MAX_COMMAND_PARTS the rest is one unresolved part: never allowed.
    let line = format!("{}; rm -rf v", vec!["echo a"; 300].join(";"));
    check(&p, &line, Ask, None);
    let parts = command_parts(&line);
    assert_eq!(parts.len(), uji_policy::MAX_COMMAND_PARTS + 1);
    assert!(parts.last().is_some_and(|p| !p.resolved));
    let line = vec!["echo a"; 256].join(";");
    check(&p, &line, Allow, None);
}

#[test]
fn random_bytes_never_panic() {
    let p = policy();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let alphabet = b"rm -f;&|()`$'\"\\{}<>\n\t#!=*ecox";
    for _ in 0..3000 {
        let mut line = Vec::new();
        for _ in 0..(seed % 40) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = (seed % alphabet.len() as u64) as usize;
            line.push(alphabet[i]);
        }
        let line = String::from_utf8_lossy(&line);
        let v = p.decide(&ToolFacts::new(
            "run_command",
            &line,
            SubjectKind::Command,
            Path::new("/tmp"),
        ));
        // Anything mentioning a deletion is never allowed.
        if line.contains("rm") && v.decision == Allow {
            let parts = shown_parts(&line);
            assert!(
                !parts.iter().any(|p| p.starts_with("rm ")),
                "{line:?} allowed: {parts:?}"
            );
        }
    }
    // Deep nesting and huge input.
    let deep = format!("{}ls{}", "$(".repeat(5000), ")".repeat(5000));
    let _ = command_parts(&deep);
    let deep = format!("{}rm x{}", "(".repeat(3000), ")".repeat(3000));
    assert_ne!(
        p.decide(&ToolFacts::new(
            "run_command",
            &deep,
            SubjectKind::Command,
            Path::new("/")
        ))
        .decision,
        Allow
    );
}

/// (line, decision, parts)
#[rustfmt::skip]
const CORPUS: &[Row] = &[
    ("echo `echo \\`rm -rf victim\\``", Deny, &["?echo `echo \\`rm -rf victim\\``", "?echo `rm -rf victim`", "rm -rf victim"]),
    ("find . -exec rm -rf {} ;", Deny, &["find . -exec rm -rf {}", "rm -rf {}", "rm -rf {} (find -exec)"]),
    ("find . -exec rm -rf {} \\;", Deny, &["find . -exec rm -rf {} \\;", "rm -rf {}", "rm -rf {} (find -exec)"]),
    ("git -c core.pager='rm -rf x' log", Ask, &["git -c core.pager='rm -rf x' log", "?git -c core.pager='rm -rf x' log"]),
    ("{ rm -rf v; }", Deny, &["rm -rf v"]),
    ("if true; then rm -rf v; fi", Deny, &["true", "rm -rf v"]),
    ("rm\t-rf v", Deny, &["rm -rf v"]),
    ("/bin/rm -rf v", Deny, &["/bin/rm -rf v"]),
    ("command rm -rf v", Deny, &["command rm -rf v", "rm -rf v"]),
    ("bash -c 'rm -rf v'", Deny, &["bash -c 'rm -rf v'", "rm -rf v"]),
    ("echo allowed; touch x", Ask, &["echo allowed", "touch x"]),
    ("echo hi", Allow, &["echo hi"]),
    ("ls", Allow, &["ls"]),
    ("ls -la", Allow, &["ls -la"]),
    ("cat a b", Allow, &["cat a b"]),
    ("git status", Allow, &["git status"]),
    ("git log --oneline", Allow, &["git log --oneline"]),
    ("git push origin main", Allow, &["git push origin main"]),
    ("touch x", Ask, &["touch x"]),
    ("rm x", Deny, &["rm x"]),
    ("rm -rf /", Deny, &["rm -rf /"]),
    ("echo a; echo b", Allow, &["echo a", "echo b"]),
    ("echo a && ls", Allow, &["echo a", "ls"]),
    ("echo a || ls", Allow, &["echo a", "ls"]),
    ("ls | cat", Allow, &["ls", "cat"]),
    ("ls |& cat", Allow, &["ls", "cat"]),
    ("ls & echo b", Allow, &["ls", "echo b"]),
    ("ls &", Allow, &["ls"]),
    ("ls; rm x", Deny, &["ls", "rm x"]),
    ("ls && rm x", Deny, &["ls", "rm x"]),
    ("ls || rm x", Deny, &["ls", "rm x"]),
    ("ls | rm x", Deny, &["ls", "rm x"]),
    ("ls & rm x", Deny, &["ls", "rm x"]),
    ("ls; touch y", Ask, &["ls", "touch y"]),
    ("ls | sh", Ask, &["ls", "sh", "?sh"]),
    ("echo a\necho b", Allow, &["echo a", "echo b"]),
    ("echo a\nrm b", Deny, &["echo a", "rm b"]),
    ("echo a\r\nrm b", Deny, &["echo a", "rm b"]),
    ("  rm   -rf   v  ", Deny, &["rm -rf v"]),
    ("echo a;rm b", Deny, &["echo a", "rm b"]),
    ("echo a&&rm b", Deny, &["echo a", "rm b"]),
    ("! ls", Allow, &["ls"]),
    ("! rm x", Deny, &["rm x"]),
    ("echo hi # ; rm x", Allow, &["echo hi"]),
    ("echo hi; # x\nrm y", Deny, &["echo hi", "rm y"]),
    ("(ls)", Allow, &["ls"]),
    ("(rm x)", Deny, &["rm x"]),
    ("(ls; (rm x))", Deny, &["ls", "rm x"]),
    ("{ ls; rm x; }", Deny, &["ls", "rm x"]),
    ("{ ls; echo a; }", Allow, &["ls", "echo a"]),
    ("(ls) > log", Ask, &["(ls) > log", "ls"]),
    ("(((rm x)))", Ask, &["?(((rm x)))", "?(((rm x)))"]),
    ("(ls && cat f)", Allow, &["ls", "cat f"]),
    ("(cd sub && ls)", Ask, &["cd sub", "ls"]),
    ("echo $(rm x)", Deny, &["?echo $(rm x)", "rm x"]),
    ("echo \"$(rm x)\"", Deny, &["?echo \"$(rm x)\"", "rm x"]),
    ("echo `rm x`", Deny, &["?echo `rm x`", "rm x"]),
    ("echo \"`rm x`\"", Deny, &["?echo \"`rm x`\"", "rm x"]),
    ("echo $(echo $(rm x))", Deny, &["?echo $(echo $(rm x))", "?echo $(rm x)", "rm x"]),
    ("echo `echo \\`echo \\\\\\`rm x\\\\\\`\\``", Deny, &["?echo `echo \\`echo \\\\\\`rm x\\\\\\`\\``", "?echo `echo \\`rm x\\``", "?echo `rm x`", "rm x"]),
    ("echo $(ls)", Ask, &["?echo $(ls)", "ls"]),
    ("echo $(whoami)", Ask, &["?echo $(whoami)", "whoami"]),
    ("echo `ls`", Ask, &["?echo `ls`", "ls"]),
    ("echo ${x:-$(rm y)}", Deny, &["?echo ${x:-$(rm y)}", "rm y"]),
    ("echo $((1 + $(rm x)))", Deny, &["?echo $((1 + $(rm x)))", "rm x"]),
    ("cat <(rm x)", Deny, &["?cat <(rm x)", "rm x"]),
    ("ls > >(rm x)", Deny, &["?ls > >(rm x)", "rm x"]),
    ("cat <(ls)", Ask, &["?cat <(ls)", "ls"]),
    ("x=$(rm y)", Deny, &["rm y"]),
    ("export A=$(rm y)", Deny, &["rm y"]),
    ("local a=`rm y`", Deny, &["rm y"]),
    ("A=1", Ask, &[]),
    ("[[ $(rm x) ]]", Deny, &["rm x"]),
    ("echo \"a ${b} $(rm c) d\"", Deny, &["?echo \"a ${b} $(rm c) d\"", "rm c"]),
    ("if rm x; then ls; fi", Deny, &["rm x", "ls"]),
    ("if ls; then ls; elif ls; then rm x; fi", Deny, &["ls", "ls", "ls", "rm x"]),
    ("if ls; then ls; else rm x; fi", Deny, &["ls", "ls", "rm x"]),
    ("while true; do rm x; done", Deny, &["true", "rm x"]),
    ("until false; do rm x; done", Deny, &["false", "rm x"]),
    ("for f in a b; do rm $f; done", Deny, &["?rm $f"]),
    ("for f in $(rm x); do ls; done", Deny, &["rm x", "ls"]),
    ("for ((i=0;i<3;i++)); do rm x; done", Deny, &["?for ((i=0;i<3;i++)); do rm x; done", "rm x"]),
    ("case a in a) rm x;; esac", Deny, &["rm x"]),
    ("case a in b) ls;; *) rm x;; esac", Deny, &["ls", "rm x"]),
    ("case $(rm x) in *) ls;; esac", Deny, &["rm x", "ls"]),
    ("if true; then ls; fi", Allow, &["true", "ls"]),
    ("for f in a b; do echo $f; done", Ask, &["?echo $f"]),
    ("while true; do ls; done", Allow, &["true", "ls"]),
    ("select x in a; do rm x; done", Deny, &["rm x"]),
    ("f() { rm x; }", Deny, &["rm x"]),
    ("function f { rm x; }", Deny, &["rm x"]),
    ("f() { rm x; }; f", Deny, &["rm x", "f"]),
    ("f() { ls; }; f", Ask, &["ls", "f"]),
    ("f() ( rm x )", Deny, &["rm x"]),
    ("cat <<EOF\nhello\nEOF", Allow, &["cat <<EOF"]),
    ("cat <<EOF\n$(rm x)\nEOF", Deny, &["?cat <<EOF", "rm x"]),
    ("cat <<EOF\n`rm x`\nEOF", Deny, &["?cat <<EOF", "rm x"]),
    ("cat <<'EOF'\nx\nEOF\nrm y", Deny, &["cat <<'EOF'", "rm y"]),
    ("cat <<< hi", Allow, &["cat <<< hi"]),
    ("cat <<< $(rm x)", Deny, &["?cat <<< $(rm x)", "rm x"]),
    // Substitutions hidden in words, assignments and redirection targets.
    ("ls > $(rm x)", Deny, &["?ls > $(rm x)", "rm x"]),
    ("x=$(rm v) ls", Deny, &["?ls", "rm v"]),
    ("ls \"$(rm x)\"", Deny, &["?ls \"$(rm x)\"", "rm x"]),
    ("ls a$(rm x)b", Deny, &["?ls a$(rm x)b", "rm x"]),
    ("echo ${x:-$(rm x)}", Deny, &["?echo ${x:-$(rm x)}", "rm x"]),
    ("ls 2>&1 >`rm x`", Deny, &["?ls 2>&1 >`rm x`", "rm x"]),
    ("a=`rm x`", Deny, &["rm x"]),
    ("echo \"a`rm x`b\"", Deny, &["?echo \"a`rm x`b\"", "rm x"]),
    ("cat <<-EOF\n\t$(rm x)\n\tEOF", Ask, &["?cat <<EOF", "?$(rm x)"]),
    ("\\rm -rf v", Deny, &["\\rm -rf v"]),
    ("\"rm\" -rf v", Deny, &["\"rm\" -rf v"]),
    ("'rm' -rf v", Deny, &["'rm' -rf v"]),
    ("r\"m\" -rf v", Deny, &["r\"m\" -rf v"]),
    ("r''m -rf v", Deny, &["r''m -rf v"]),
    ("$'rm' -rf v", Deny, &["$'rm' -rf v"]),
    ("$'\\x72m' -rf v", Deny, &["$'\\x72m' -rf v"]),
    ("$'\\162m' -rf v", Deny, &["$'\\162m' -rf v"]),
    ("rm \"-rf\" v", Deny, &["rm \"-rf\" v"]),
    ("rm '-rf' v", Deny, &["rm '-rf' v"]),
    ("rm \\-rf v", Deny, &["rm \\-rf v"]),
    ("\\r\\m x", Deny, &["\\r\\m x"]),
    ("r\\\nm x", Deny, &["r m x", "rm x"]),
    ("echo 'rm -rf v'", Allow, &["echo 'rm -rf v'"]),
    ("echo \"rm -rf v\"", Allow, &["echo \"rm -rf v\""]),
    ("echo $'rm -rf v'", Allow, &["echo $'rm -rf v'"]),
    ("echo rm -rf v", Allow, &["echo rm -rf v"]),
    ("cat 'a b'", Allow, &["cat 'a b'"]),
    ("grep -r 'a;b' .", Allow, &["grep -r 'a;b' ."]),
    ("echo \"a | b\"", Allow, &["echo \"a | b\""]),
    ("echo 'a && b'", Allow, &["echo 'a && b'"]),
    ("echo a\\;b", Allow, &["echo a\\;b"]),
    ("rm\t\t-rf\tv", Deny, &["rm -rf v"]),
    ("\trm -rf v", Deny, &["rm -rf v"]),
    ("echo a;\n\n\trm -rf v", Deny, &["echo a", "rm -rf v"]),
    ("rm \\\n -rf v", Deny, &["rm -rf v"]),
    ("/usr/bin/rm -rf v", Deny, &["/usr/bin/rm -rf v"]),
    ("./rm x", Deny, &["./rm x"]),
    ("../bin/rm x", Deny, &["../bin/rm x"]),
    ("/usr/local/bin/rm x", Deny, &["/usr/local/bin/rm x"]),
    ("~/bin/rm x", Deny, &["~/bin/rm x"]),
    ("/bin/ls", Allow, &["/bin/ls"]),
    ("/usr/bin/cat f", Allow, &["/usr/bin/cat f"]),
    ("./ls", Ask, &["./ls"]),
    ("/tmp/ls", Ask, &["/tmp/ls"]),
    ("/bin/\"rm\" x", Deny, &["/bin/\"rm\" x"]),
    ("builtin rm x", Deny, &["builtin rm x", "rm x"]),
    ("exec rm x", Deny, &["exec rm x", "rm x"]),
    ("env rm x", Deny, &["env rm x", "rm x"]),
    ("env -i A=1 B=2 rm x", Deny, &["env -i A=1 B=2 rm x", "rm x"]),
    ("env -u HOME rm x", Deny, &["env -u HOME rm x", "rm x"]),
    ("env -- rm x", Deny, &["env -- rm x", "rm x"]),
    ("env -S 'rm -rf v'", Deny, &["env -S 'rm -rf v'", "rm -rf v"]),
    ("nice rm x", Deny, &["nice rm x", "rm x"]),
    ("nice -n 10 rm x", Deny, &["nice -n 10 rm x", "rm x"]),
    ("nice -10 rm x", Deny, &["nice -10 rm x", "rm x"]),
    ("nohup rm x", Deny, &["nohup rm x", "rm x"]),
    ("timeout 5 rm x", Deny, &["timeout 5 rm x", "rm x"]),
    ("timeout -s KILL 5 rm x", Deny, &["timeout -s KILL 5 rm x", "rm x"]),
    ("timeout --signal=KILL 5s rm x", Deny, &["timeout --signal=KILL 5s rm x", "rm x"]),
    ("time rm x", Deny, &["time rm x", "rm x"]),
    ("time -p rm x", Deny, &["time -p rm x", "rm x"]),
    ("stdbuf -oL rm x", Deny, &["stdbuf -oL rm x", "rm x"]),
    ("stdbuf -o L rm x", Deny, &["stdbuf -o L rm x", "rm x"]),
    ("sudo rm x", Deny, &["sudo rm x", "rm x"]),
    ("sudo -u root rm x", Deny, &["sudo -u root rm x", "rm x"]),
    ("sudo -E -H rm x", Deny, &["sudo -E -H rm x", "rm x"]),
    ("doas rm x", Deny, &["doas rm x", "rm x"]),
    ("doas -u root rm x", Deny, &["doas -u root rm x", "rm x"]),
    ("setsid rm x", Deny, &["setsid rm x", "rm x"]),
    ("sudo env A=1 nice timeout 1 /bin/rm -rf v", Deny, &["sudo env A=1 nice timeout 1 /bin/rm -rf v", "env A=1 nice timeout 1 /bin/rm -rf v", "nice timeout 1 /bin/rm -rf v", "timeout 1 /bin/rm -rf v", "/bin/rm -rf v"]),
    ("command -p rm x", Deny, &["command -p rm x", "rm x"]),
    ("ls | xargs rm", Deny, &["ls", "xargs rm", "rm <arguments from xargs>"]),
    ("ls | xargs -0 rm -f", Deny, &["ls", "xargs -0 rm -f", "rm -f <arguments from xargs>"]),
    ("ls | xargs -I{} rm {}", Deny, &["ls", "xargs -I{} rm {}", "rm {} <arguments from xargs>"]),
    ("ls | xargs -n 1 rm", Deny, &["ls", "xargs -n 1 rm", "rm <arguments from xargs>"]),
    ("command ls", Ask, &["command ls", "ls"]),
    ("ls | xargs echo", Ask, &["ls", "xargs echo", "echo <arguments from xargs>"]),
    ("timeout 5 ls", Ask, &["timeout 5 ls", "ls"]),
    ("ionice -c 3 rm x", Deny, &["ionice -c 3 rm x", "rm x"]),
    ("env $CMD x", Ask, &["?env $CMD x", "?$CMD x"]),
    ("sudo $X", Ask, &["?sudo $X", "?$X"]),
    ("find . -delete", Deny, &["find . -delete", "rm -rf . (find -delete)"]),
    ("find /tmp -name '*.o' -delete", Deny, &["find /tmp -name '*.o' -delete", "rm -rf /tmp (find -delete)"]),
    ("find . -execdir rm {} +", Deny, &["find . -execdir rm {} +", "rm {}", "rm -rf {} (find -execdir)"]),
    ("find . -ok rm {} \\;", Deny, &["find . -ok rm {} \\;", "rm {}", "rm -rf {} (find -ok)"]),
    ("find . -okdir rm {} \\;", Deny, &["find . -okdir rm {} \\;", "rm {}", "rm -rf {} (find -okdir)"]),
    ("find . -exec touch {} \\;", Ask, &["find . -exec touch {} \\;", "touch {}"]),
    ("find . -exec ls {} \\;", Allow, &["find . -exec ls {} \\;", "ls {}"]),
    ("find . -name '*.rs'", Allow, &["find . -name '*.rs'"]),
    ("find . -exec sh -c 'rm -rf \"$1\"' _ {} \\;", Deny, &["find . -exec sh -c 'rm -rf \"$1\"' _ {} \\;", "sh -c 'rm -rf \"$1\"' _ {}", "?rm -rf \"$1\"", "?sh -c 'rm -rf \"$1\"' _ {}"]),
    ("find . -exec $X {} \\;", Ask, &["?find . -exec $X {} \\;", "?$X {}"]),
    ("find . -exec ls {} \\; -exec rm {} \\;", Deny, &["find . -exec ls {} \\; -exec rm {} \\;", "ls {}", "rm {}", "rm -rf {} (find -exec)"]),
    ("sh -c 'rm x'", Deny, &["sh -c 'rm x'", "rm x", "?sh -c 'rm x'"]),
    ("bash -c \"rm x\"", Deny, &["bash -c \"rm x\"", "rm x"]),
    ("zsh -c 'ls; rm x'", Deny, &["zsh -c 'ls; rm x'", "ls", "rm x", "?zsh -c 'ls; rm x'"]),
    ("dash -c 'rm x'", Deny, &["dash -c 'rm x'", "rm x", "?dash -c 'rm x'"]),
    ("ksh -c 'rm x'", Deny, &["ksh -c 'rm x'", "rm x", "?ksh -c 'rm x'"]),
    ("bash -lc 'rm x'", Deny, &["bash -lc 'rm x'", "rm x"]),
    ("bash -e -c 'rm x'", Deny, &["bash -e -c 'rm x'", "rm x"]),
    ("/bin/sh -c 'rm x'", Deny, &["/bin/sh -c 'rm x'", "rm x", "?/bin/sh -c 'rm x'"]),
    ("bash -c 'bash -c \"rm x\"'", Deny, &["bash -c 'bash -c \"rm x\"'", "bash -c \"rm x\"", "rm x"]),
    ("sh -c 'echo $(rm x)'", Deny, &["sh -c 'echo $(rm x)'", "?echo $(rm x)", "rm x", "?sh -c 'echo $(rm x)'"]),
    ("bash -c \"$CMD\"", Ask, &["?bash -c \"$CMD\"", "?-c \"$CMD\""]),
    ("bash script.sh", Ask, &["bash script.sh", "?bash script.sh"]),
    ("bash -c 'touch x'", Ask, &["bash -c 'touch x'", "touch x"]),
    ("eval rm x", Deny, &["eval rm x", "rm x"]),
    ("eval 'rm -rf v'", Deny, &["eval 'rm -rf v'", "rm -rf v"]),
    ("eval \"ls; rm x\"", Deny, &["eval \"ls; rm x\"", "ls", "rm x"]),
    ("eval $CMD", Ask, &["?eval $CMD", "?$CMD"]),
    ("eval \"$(cat f)\"", Ask, &["?eval \"$(cat f)\"", "?\"$(cat f)\"", "cat f"]),
    ("echo 'rm x' | sh -c 'cat; rm y'", Deny, &["echo 'rm x'", "sh -c 'cat; rm y'", "cat", "rm y", "?sh -c 'cat; rm y'"]),
    ("git -c core.sshCommand='rm x' fetch", Ask, &["git -c core.sshCommand='rm x' fetch", "?git -c core.sshCommand='rm x' fetch"]),
    ("git -c core.editor=vi commit", Ask, &["git -c core.editor=vi commit", "?git -c core.editor=vi commit"]),
    ("git -c core.fsmonitor=x status", Ask, &["git -c core.fsmonitor=x status", "?git -c core.fsmonitor=x status"]),
    ("git -c core.hooksPath=/tmp/h commit", Ask, &["git -c core.hooksPath=/tmp/h commit", "?git -c core.hooksPath=/tmp/h commit"]),
    ("git -c alias.x='!rm y' x", Ask, &["git -c alias.x='!rm y' x", "?git -c alias.x='!rm y' x"]),
    ("git -c diff.foo.textconv=rm diff", Ask, &["git -c diff.foo.textconv=rm diff", "?git -c diff.foo.textconv=rm diff"]),
    ("git -c filter.x.clean=rm add .", Ask, &["git -c filter.x.clean=rm add .", "?git -c filter.x.clean=rm add ."]),
    ("git -c sequence.editor=vi rebase -i", Ask, &["git -c sequence.editor=vi rebase -i", "?git -c sequence.editor=vi rebase -i"]),
    ("git -c credential.helper='!rm x' push", Ask, &["git -c credential.helper='!rm x' push", "?git -c credential.helper='!rm x' push"]),
    ("git -c gpg.program=rm commit -S", Ask, &["git -c gpg.program=rm commit -S", "?git -c gpg.program=rm commit -S"]),
    ("git --config-env=core.pager=PAGER log", Ask, &["git --config-env=core.pager=PAGER log", "?git --config-env=core.pager=PAGER log"]),
    ("git --config-env core.pager=PAGER log", Ask, &["git --config-env core.pager=PAGER log", "?git --config-env core.pager=PAGER log"]),
    ("git -c CORE.PAGER=less log", Ask, &["git -c CORE.PAGER=less log", "?git -c CORE.PAGER=less log"]),
    ("git -c \"$K\"=1 log", Ask, &["?git -c \"$K\"=1 log", "?git -c \"$K\"=1 log"]),
    ("git -c user.name=x commit -m hi", Allow, &["git -c user.name=x commit -m hi"]),
    ("git -C sub status", Allow, &["git -C sub status"]),
    ("git mylias", Allow, &["git mylias"]),
    ("git -c core.pager=less log; ls", Ask, &["git -c core.pager=less log", "?git -c core.pager=less log", "ls"]),
    ("$X -rf v", Ask, &["?$X -rf v"]),
    ("${X} -rf v", Ask, &["?${X} -rf v"]),
    ("$(echo rm) -rf v", Ask, &["?$(echo rm) -rf v", "echo rm"]),
    ("`echo rm` -rf v", Ask, &["?`echo rm` -rf v", "echo rm"]),
    ("\"$X\" v", Ask, &["?\"$X\" v"]),
    ("r$X -rf v", Ask, &["?r$X -rf v"]),
    ("$X; rm y", Deny, &["?$X", "rm y"]),
    ("a=rm; $a x", Ask, &["?$a x"]),
    ("echo 'unbalanced", Ask, &["?echo 'unbalanced", "echo"]),
    ("echo \"unbalanced", Ask, &["?echo \"unbalanced", "echo"]),
    ("echo $(", Ask, &["?echo $(", "echo"]),
    ("echo `x", Ask, &["?echo `x", "?echo `x"]),
    (")", Ask, &["?)"]),
    ("ls ((", Ask, &["?ls ((", "ls"]),
    ("if true; then ls", Ask, &["?if true; then ls", "true"]),
    ("{ ls", Ask, &["?{ ls"]),
    ("echo x\\", Ask, &["?echo x\\", "echo x"]),
    ("echo hi > out.txt", Allow, &["echo hi > out.txt"]),
    ("ls 2>&1", Allow, &["ls 2>&1"]),
    ("ls >/dev/null 2>&1", Allow, &["ls >/dev/null 2>&1"]),
    ("cat < f", Allow, &["cat < f"]),
    ("rm x 2>/dev/null", Deny, &["rm x 2>/dev/null"]),
    ("echo a >> log", Allow, &["echo a >> log"]),
    ("ls &> log", Allow, &["ls &> log"]),
    ("", Ask, &[]),
    ("true", Allow, &["true"]),
    ("cd x && ls", Ask, &["cd x", "ls"]),
    ("ls; sudo rm x", Deny, &["ls", "sudo rm x", "rm x"]),
    ("git push; ls", Allow, &["git push", "ls"]),
    ("git diff | cat", Allow, &["git diff", "cat"]),
    ("echo $(ls $(rm x))", Deny, &["?echo $(ls $(rm x))", "?ls $(rm x)", "rm x"]),
    ("a=1 b=2 rm x", Deny, &["rm x"]),
    ("A=$(ls) rm x", Deny, &["?rm x", "ls"]),
    ("grep -n foo $(ls)", Ask, &["?grep -n foo $(ls)", "ls"]),
    ("watch ls", Ask, &["watch ls", "ls"]),
    ("exec 3>&1; rm x", Deny, &["exec 3>&1", "rm x"]),
    ("trap 'rm x' EXIT", Deny, &["trap 'rm x' EXIT", "rm x"]),
    ("busybox rm -rf v", Deny, &["busybox rm -rf v", "rm -rf v"]),
    ("busybox sh -c \"rm x\"", Deny, &["busybox sh -c \"rm x\"", "sh -c \"rm x\"", "rm x", "?sh -c \"rm x\""]),
    ("su root -c \"rm x\"", Deny, &["su root -c \"rm x\"", "rm x"]),
    ("chroot /mnt rm x", Deny, &["chroot /mnt rm x", "rm x"]),
    ("flock /tmp/l rm x", Deny, &["flock /tmp/l rm x", "rm x"]),
    ("flock /tmp/l -c \"rm x\"", Deny, &["flock /tmp/l -c \"rm x\"", "rm x"]),
    ("strace -f -o log rm x", Deny, &["strace -f -o log rm x", "rm x"]),
    ("alias x=\"rm -rf v\"", Deny, &["alias x=\"rm -rf v\"", "rm -rf v"]),
    ("alias ll=\"ls -l\"", Ask, &["alias ll=\"ls -l\"", "ls -l"]),
    ("su root", Ask, &["su root"]),
    ("runuser -u root -- rm x", Deny, &["runuser -u root -- rm x", "rm x"]),
    ("runuser root -c \"rm x\"", Deny, &["runuser root -c \"rm x\"", "rm x"]),
];

/// The policy of issue 26's red team: `echo *` allowed, `rm *` denied.
fn red_team_policy() -> Policy {
    let mut p = Policy::default();
    let problems = p.set_rules(
        &json!({"run_command": {"allow": ["echo *", "ls *", "ls", "git *", "cat *"], "deny": ["rm *"]}}),
        None,
    );
    assert!(problems.is_empty(), "{problems:?}");
    p
}

/// uji's shipped defaults for commands (`lua/uji/defaults.lua`).
fn shipped_defaults() -> Policy {
    let mut p = Policy::default();
    let problems = p.set_rules(
        &json!({"run_command": {"deny": [["rm -rf *", "recursive forced deletion"]]}}),
        Some("defaults"),
    );
    assert!(problems.is_empty(), "{problems:?}");
    p
}

fn decide(p: &Policy, line: &str) -> uji_policy::Verdict {
    p.decide(&ToolFacts::new(
        "run_command",
        line,
        SubjectKind::Command,
        Path::new("/tmp"),
    ))
}

/// Lines that ran `rm -rf v` unasked (issue 26) and their kin: each is
/// denied, or asks and is marked unresolved, so `--yes` and headless runs
/// deny it too.
#[rustfmt::skip]
const ESCAPES: &[&str] = &[
    "echo ${x:-`rm -rf v`}",
    "echo \"${x:-`rm -rf v`}\"",
    "bash -o pipefail -c 'rm -rf v'",
    "bash -O extglob -c 'rm -rf v'",
    "bash +o posix -c 'rm -rf v'",
    "bash --rcfile /dev/null -c 'rm -rf v'",
    "bash --norc --noprofile -c 'rm -rf v'",
    "bash -eo pipefail -c 'rm -rf v'",
    "env --split-string='rm -rf v'",
    "env -S'rm -rf v'",
    "env -iS 'rm -rf v'",
    "env -iu X rm -rf v",
    "env -u X -C /tmp rm -rf v",
    "nice >/dev/null rm -rf v",
    "command 2>&1 rm -rf v",
    "exec 3>&1 rm -rf v",
    "echo x 2>/dev/null | exec 2>&1 rm -rf v",
    "(echo a) | command >/dev/null rm -rf v",
    "bash -c 'coproc rm -rf v'",
    "coproc rm -rf v",
    "coproc (rm -rf v)",
    "coproc x { rm -rf v; }",
    "taskset 1 rm -rf v",
    "taskset -c 0 rm -rf v",
    "chrt 10 rm -rf v",
    "chrt -T 1 -P 2 10 rm -rf v",
    "setpriv --reuid 0 rm -rf v",
    "unshare -r rm -rf v",
    "unshare --map-user 0 rm -rf v",
    "prlimit --nofile=10 rm -rf v",
    "prlimit -p 1 rm -rf v",
    "fakeroot rm -rf v",
    "fakeroot -l lib -- rm -rf v",
    "ionice -c 3 rm -rf v",
    "systemd-run --user -p X=1 rm -rf v",
    "script -c 'rm -rf v'",
    "script -qc 'rm -rf v' /dev/null",
    "script --command='rm -rf v'",
    "parallel rm -rf ::: v",
    "parallel 'rm -rf {}' ::: v",
    "ls | parallel",
    "su root -c'rm -rf v'",
    "su -c 'rm -rf v' root",
    "su -lc 'rm -rf v'",
    "su --session-command='rm -rf v' root",
    "sg users -c 'rm -rf v'",
    "sg users 'rm -rf v'",
    "ssh localhost rm -rf v",
    "ssh -p 22 localhost 'rm -rf v'",
    "nsenter -t 1 -m rm -rf v",
    "pkexec --user root rm -rf v",
    "xvfb-run -a rm -rf v",
    "timeout -k 1 5 rm -rf v",
    "flock -w 1 /tmp/l rm -rf v",
    "sudo -u root -- rm -rf v",
    "sudo --user=root rm -rf v",
    "sudo 'rm -rf v'",
    "watch 'rm -rf v'",
    "perf stat -e cycles rm -rf v",
    "valgrind --tool=none rm -rf v",
    "echo \\ #; rm -rf v",
    "echo \\\t#; rm -rf v",
    "sh -c 'echo $'\\''\\'\\''; rm -rf v #'\\'",
    "somewrapper --flag rm -rf v",
    "somewrapper -x 'rm -rf v'",
    "make clean rm",
    "r? -rf v",
    "/bin/r* -rf v",
    "{rm,-rf,v}",
    "sudo {rm,-rf,v}",
    "nice r* -rf v",
    "timeout {1,rm} -rf v",
    "eval {rm,-rf,v}",
    "$X -rf v",
    "xargs -a list rm",
    "x='a[$(rm -rf v)]'; (( x ))",
    "x='a[$(rm -rf v)]'; [[ x -eq 1 ]]",
    "declare -i x='a[$(rm -rf v)]'",
    "x='$(rm -rf v)'; echo ${x@P}",
    "BASH_CMDS[ls]=/bin/rm; ls -rf v",
    "echo rm -rf v | bash",
    "bash <<< 'rm -rf v'",
    "bash script.sh",
    "sh < script.sh",
    "at now <<< 'rm -rf v'",
    "git submodule foreach 'rm -rf v'",
    "git bisect run rm -rf v",
    "git rebase -x 'rm -rf v' HEAD~1",
    "git filter-branch --tree-filter 'rm -rf v' HEAD",
    "python3 -c \"import os; os.system('rm -rf v')\"",
    "docker run img rm -rf /w",
    "tmux new -d 'rm -rf v'",
    "python3 <<< 'import os; os.system(\"rm -rf v\")'",
    "python3 <<EOF\nimport os\nos.system('rm -rf v')\nEOF",
    "make -f /dev/stdin <<< $'all:\\n\\trm -rf v'",
    "source ./x.sh",
    ". ./x.sh",
    "env - rm -rf v",
];

/// Lines that change what a later or the same command runs, or hold words
/// only known at run time: never allowed, and not run unasked.
#[rustfmt::skip]
const NOT_PLAIN: &[&str] = &[
    "PATH=.:$PATH ls",
    "PATH=. ls",
    "PATH=.; ls",
    "export PATH=.; ls",
    "declare -x PATH=.; ls",
    "IFS=/; ls",
    "LD_PRELOAD=./x.so ls",
    "LD_LIBRARY_PATH=. ls",
    "BASH_ENV=./x bash -c ls",
    "ENV=./x ls",
    "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor=touch x'\" git status",
    "GIT_DIR=x git status",
    "HOME=. git status",
    "XDG_CONFIG_HOME=. git status",
    "NODE_OPTIONS='--require ./x.js' ls",
    "env PATH=. ls",
    "env GIT_CONFIG_GLOBAL=x git status",
    "read PATH <<< .; ls",
    "printf -v PATH . ; ls",
    "hash -p ./x ls; ls",
    "enable -f ./x.so ls; ls",
    "echo $HOME",
    "echo \"$HOME\"",
    "echo ${HOME}",
    "echo $(ls)",
    "echo `ls`",
    "echo $((1+2))",
    "cat <(ls)",
    "echo > $F",
    "echo hi > \"$F\"",
    "cat <<< $X",
    "cat <<EOF\n$HOME\nEOF",
    "ls $(echo .)",
    "X=$(ls) ls",
    "for f in a; do echo $f; done",
    "git status $X",
];

/// Plain lines the red team's policy still allows: quoting, globs and
/// braces in arguments, literal redirections, harmless assignments.
#[rustfmt::skip]
const PLAIN: &[(&str, &[&str])] = &[
    ("echo $'\\'; rm -rf v #'", &["echo $'\\'; rm -rf v #'"]),
    ("echo x &>/dev/null rm -rf v", &["echo x rm -rf v &>/dev/null"]),
    ("echo 'a b' \"c\" d\\ e", &["echo 'a b' \"c\" d\\ e"]),
    ("echo *.rs", &["echo *.rs"]),
    ("echo {a,b}", &["echo {a,b}"]),
    ("ls ~/x", &["ls ~/x"]),
    ("echo hi > out.txt 2>&1", &["echo hi > out.txt 2>&1"]),
    ("cat <<'EOF'\n$HOME\nEOF", &["cat <<'EOF'"]),
    ("RUST_LOG=debug git status", &["git status"]),
    ("LANG=C ls", &["ls"]),
    ("git status | cat -n", &["git status", "cat -n"]),
];

#[test]
fn red_team_escapes_never_run_unasked() {
    let p = red_team_policy();
    for line in ESCAPES {
        let v = decide(&p, line);
        assert!(
            v.decision == Deny || (v.decision == Ask && v.unresolved),
            "{line:?} would run unasked under --yes: {v:?}"
        );
    }
}

#[test]
fn what_is_not_plain_is_never_allowed() {
    let p = red_team_policy();
    for line in NOT_PLAIN {
        let v = decide(&p, line);
        assert_eq!(v.decision, Ask, "{line:?}: {}", v.because);
        assert!(v.unresolved && v.opaque, "{line:?}: {v:?}");
        assert!(
            v.because.contains("could not tell"),
            "{line:?}: {}",
            v.because
        );
    }
    // With no deny rules the line still asks (and no session rule may
    // allow it), but an unattended run is not told to deny it.
    let mut open = Policy::default();
    open.set_rules(
        &json!({"run_command": {"allow": ["ls *", "ls", "echo *"], "default": "allow"}}),
        None,
    );
    for line in NOT_PLAIN {
        let v = decide(&open, line);
        assert_eq!(v.decision, Ask, "{line:?}: {}", v.because);
        assert!(v.opaque && !v.unresolved, "{line:?}: {v:?}");
    }
}

#[test]
fn plain_lines_are_read_as_bash_reads_them() {
    let p = red_team_policy();
    for (line, parts) in PLAIN {
        assert_eq!(shown_parts(line), *parts, "{line:?}");
        let v = decide(&p, line);
        assert_eq!(v.decision, Allow, "{line:?}: {}", v.because);
    }
}

#[test]
fn shipped_defaults_deny_recursive_forced_deletion_however_spelled() {
    let p = shipped_defaults();
    let denied = [
        "rm -rf v",
        "rm -fr v",
        "rm -Rf v",
        "rm -fR v",
        "rm -r -f v",
        "rm -f -r v",
        "rm -R -f v",
        "rm --recursive --force v",
        "rm --force -R v",
        "rm -r --force v",
        "rm v -rf",
        "rm -rfv v",
        "rm -vrf v",
        "rm -r v -f",
        "\\rm -fr v",
        "'rm' -r -f v",
        "/bin/rm -Rf v",
        "command rm -fr v",
        "sudo rm -r -f v",
        "busybox rm -fr v",
        "find v -delete",
        "find . -name x -delete",
        "find v -exec rm {} +",
        "find v -exec rm -f {} \\;",
        "find v -execdir /bin/rm {} \\;",
        "ls | xargs rm -rf",
        "bash -c 'rm -fr v'",
        "nice -n 5 rm -Rf v",
        "echo; rm -r -f v",
    ];
    for line in denied {
        let v = decide(&p, line);
        assert_eq!(v.decision, Deny, "{line:?}: {}", v.because);
        assert_eq!(
            v.message.as_deref(),
            Some("recursive forced deletion"),
            "{line:?}"
        );
    }
    for line in [
        "rm v",
        "rm -r v",
        "rm -f v",
        "rm -- -rf",
        "echo rm -rf v",
        "git rm -rf v",
    ] {
        let v = decide(&p, line);
        assert_ne!(v.decision, Deny, "{line:?}: {}", v.because);
    }
}
