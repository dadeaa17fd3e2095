//! Issue 12 end to end: commands dressed up to dodge `deny = { "rm *" }`
//! are denied under `--yes`, unresolved commands are denied rather than
//! run unasked, and `before_tool` hooks see the parts of a command. The
//! real binary, the real plugins, the fake model on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use uji_tests::chat::run_commands;
use uji_tests::{Sandbox, text};

fn sandbox(init: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

/// One `uji run` in which the model sends each command as a run_command
/// call, in order; returns the output and what each call's result said.
fn run(sandbox: &Sandbox, commands: &[&str], args: &[&str]) -> (Output, Vec<String>) {
    run_commands(sandbox, commands, args, &[])
}

const DENY_RM: &str = r#"
require("uji.defaults")
uji.tool.policy({ run_command = { deny = { "rm *" } } })
"#;

/// Each command would delete `v<i>`; `{v}` is replaced by that name.
const DRESSED_UP: &[&str] = &[
    "{ rm -rf {v}; }",
    "if true; then rm -rf {v}; fi",
    "rm\t-rf {v}",
    "/bin/rm -rf {v}",
    "command rm -rf {v}",
    "bash -c 'rm -rf {v}'",
    "echo `echo \\`rm -rf {v}\\``",
    "find . -name {v} -exec rm -rf {} ;",
    "find . -name {v} -delete",
    "\\rm -f {v}",
    "\"rm\" -f {v}",
    "env A=1 nice timeout 5 rm -f {v}",
    "sudo -n rm -f {v} 2>/dev/null || rm -f {v}",
    "ls | xargs -I{} rm {v}",
    "eval 'rm -f {v}'",
    "sh -c \"eval 'rm -f {v}'\"",
    "(cd . && rm -f {v})",
    "f() { rm -f {v}; }; f",
    "X=rm; $X -f {v}",
    "$(echo rm) -f {v}",
    "git -c core.pager='rm -f {v}' log",
];

#[test]
fn dressed_up_deletions_are_denied_under_yes_and_the_model_is_told() {
    let sandbox = sandbox(DENY_RM);
    let mut commands = Vec::new();
    for (i, c) in DRESSED_UP.iter().enumerate() {
        let v = format!("v{i}");
        std::fs::write(sandbox.work().join(&v), "keep").unwrap();
        commands.push(c.replace("{v}", &v));
    }
    // More than 64 parts ending in a deletion.
    std::fs::write(sandbox.work().join("vlong"), "keep").unwrap();
    commands.push(format!("{}; rm -rf vlong", vec!["true"; 70].join("; ")));
    // A control: an ask nobody denied runs under --yes.
    commands.push("touch made".to_string());
    let refs: Vec<&str> = commands.iter().map(String::as_str).collect();
    let (output, results) = run(&sandbox, &refs, &["--yes"]);
    assert!(output.status.success(), "{:?}", text(&output));
    for (i, (command, result)) in commands.iter().zip(&results).enumerate() {
        if command == "touch made" {
            continue;
        }
        let v = if i < DRESSED_UP.len() {
            format!("v{i}")
        } else {
            "vlong".into()
        };
        assert!(
            sandbox.work().join(&v).exists(),
            "{command:?} deleted {v}: {result}"
        );
        assert!(result.starts_with("denied:"), "{command:?}: {result}");
    }
    assert!(sandbox.work().join("made").exists(), "{results:?}");
}

#[test]
fn an_unresolved_command_says_why_it_was_denied() {
    let sandbox = sandbox(DENY_RM);
    std::fs::write(sandbox.work().join("v"), "keep").unwrap();
    let (_, results) = run(&sandbox, &["X=rm; $X -f v"], &["--yes"]);
    assert!(sandbox.work().join("v").exists());
    let result = &results[0];
    assert!(
        result.contains("could not tell what `$X -f v` runs")
            && result.contains("run_command has deny rules and no one can answer"),
        "{result}"
    );
    // Without deny rules (no uji.defaults either, whose "defaults" set
    // denies `rm -rf`) an unresolved ask is an ordinary ask: --yes runs it.
    let sandbox = sandbox_plain();
    let (_, results) = run(&sandbox, &["X=touch; $X made"], &["--yes"]);
    assert!(sandbox.work().join("made").exists(), "{results:?}");
}

fn sandbox_plain() -> Sandbox {
    sandbox("uji.tool.policy({ run_command = { ask = { \"*\" } } })\n")
}

const HOOKS: &str = r#"
require("uji.defaults")
uji.tool.policy({ run_command = { deny = { "rm *" }, default = "ask" } })
uji.on("before_tool", function(e)
  if e.tool ~= "run_command" then return end
  if e.subject:match("^echo parts") then
    local shown = {}
    for _, p in ipairs(e.parts) do
      shown[#shown + 1] = p.program .. ":" .. p.text .. ":" .. tostring(p.resolved)
    end
    return { deny = table.concat(shown, " | ") }
  end
  -- Checks the line, not its parts: its allow only covers one-part lines.
  if e.subject:match("^echo allowed") then return { allow = true } end
  -- Checks every part, and says so.
  local all = true
  for _, p in ipairs(e.parts) do
    if p.program ~= "echo" or not p.resolved then all = false end
  end
  if all then return { allow = true, all_parts = true } end
end)
"#;

#[test]
fn hooks_see_parts_and_an_allow_covers_a_compound_line_only_when_it_says_so() {
    let sandbox = sandbox(HOOKS);
    let commands = [
        "echo parts; $X y && echo `ls`",
        "echo allowed",
        "echo allowed; touch x",
        "echo one > one.txt; echo two > two.txt",
    ];
    // Headless without --yes: nobody answers an ask.
    let (output, results) = run(&sandbox, &commands, &[]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert_eq!(
        results[0],
        "denied: echo:echo parts:true | :$X y:false | echo:echo `ls`:false | ls:ls:true"
    );
    assert!(results[1].contains("allowed"), "{}", results[1]);
    assert!(
        results[2].starts_with("denied: run_command needs approval"),
        "{}",
        results[2]
    );
    assert!(!sandbox.work().join("x").exists());
    assert!(sandbox.work().join("one.txt").exists(), "{}", results[3]);
    assert!(sandbox.work().join("two.txt").exists(), "{}", results[3]);
}

/// Issue 26's red team config: `echo *` allowed, `rm *` denied.
const RED_TEAM: &str = r#"
uji.tool.policy({ run_command = { allow = { "echo *", "ls *", "ls", "git *" }, deny = { "rm *" } } })
"#;

/// Each of these ran `rm -rf v` with no question under RED_TEAM (the first
/// three were even allowed). `{v}` is replaced by the line's own directory.
const ROUND_THREE: &[&str] = &[
    "echo ${x:-`rm -rf {v}`}",
    "echo $'\\'; rm -rf {v} #'",
    "echo x &>/dev/null rm -rf {v}",
    "bash -o pipefail -c 'rm -rf {v}'",
    "env --split-string='rm -rf {v}'",
    "nice >/dev/null rm -rf {v}",
    "command 2>&1 rm -rf {v}",
    "exec 3>&1 rm -rf {v}",
    "bash -c 'coproc rm -rf {v}'",
    "taskset 1 rm -rf {v}",
    "su root -c'rm -rf {v}'",
    "echo \\ #; rm -rf {v}",
    "env -iu X rm -rf {v}",
    "chrt -o 0 rm -rf {v}",
    "script -qc 'rm -rf {v}' /dev/null",
];

fn keep_dirs(sandbox: &Sandbox, prefix: &str, lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let v = format!("{prefix}{i}");
            std::fs::create_dir_all(sandbox.work().join(&v).join("inner")).unwrap();
            line.replace("{v}", &v)
        })
        .collect()
}

#[test]
fn round_three_escapes_leave_their_target_in_place() {
    for args in [&[][..], &["--yes"][..]] {
        let sandbox = sandbox(RED_TEAM);
        let commands = keep_dirs(&sandbox, "v", ROUND_THREE);
        let refs: Vec<&str> = commands.iter().map(String::as_str).collect();
        let (output, results) = run(&sandbox, &refs, args);
        assert!(output.status.success(), "{:?}", text(&output));
        for (i, (command, result)) in commands.iter().zip(&results).enumerate() {
            assert!(
                sandbox.work().join(format!("v{i}/inner")).exists(),
                "{args:?} {command:?} deleted its target: {result}"
            );
        }
    }
}

#[test]
fn the_shipped_defaults_deny_recursive_forced_deletion_however_spelled() {
    let sandbox = sandbox("require(\"uji.defaults\")\n");
    let lines = [
        "rm -fr {v}",
        "rm -Rf {v}",
        "rm -r -f {v}",
        "rm --recursive --force {v}",
        "rm {v} -rf",
        "find {v} -delete",
        "find {v} -depth -exec rm -r {} +",
        "/bin/rm -fR {v}",
    ];
    let commands = keep_dirs(&sandbox, "d", &lines);
    let refs: Vec<&str> = commands.iter().map(String::as_str).collect();
    let (_, results) = run(&sandbox, &refs, &["--yes"]);
    for (i, (command, result)) in commands.iter().zip(&results).enumerate() {
        assert!(
            sandbox.work().join(format!("d{i}/inner")).exists(),
            "{command:?}: {result}"
        );
        assert!(
            result.starts_with("denied: recursive forced deletion"),
            "{command:?}: {result}"
        );
    }
}

#[test]
fn a_variable_that_changes_what_runs_is_never_allowed() {
    let sandbox = sandbox(RED_TEAM);
    // The model wrote an executable `./ls` that leaves a mark.
    let ls = sandbox.work().join("ls");
    std::fs::write(&ls, "#!/bin/sh\ntouch marked\n").unwrap();
    std::fs::set_permissions(&ls, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let commands = [
        "PATH=.:$PATH ls",
        "PATH=. ls",
        "export PATH=.; ls",
        "env PATH=. ls",
        "GIT_CONFIG_PARAMETERS=\"'core.pager=touch marked'\" git log",
        "echo $HOME",
    ];
    let (output, results) = run(&sandbox, &commands, &["--yes"]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert!(!sandbox.work().join("marked").exists(), "{results:?}");
    // Nothing ran: each was refused, saying why and what to do instead.
    for (command, result) in commands.iter().zip(&results) {
        assert!(
            result.starts_with("denied: could not tell what"),
            "{command:?}: {result}"
        );
        assert!(
            result.contains("literal words only"),
            "{command:?}: {result}"
        );
    }
}

/// Issue 28: with the shipped defaults, plain commands that only read
/// files read_file may read run unasked, even in a headless run with
/// nobody to ask; anything more still needs an answer. (That they run in
/// the sandbox: tests/e2e/sandbox.rs.)
#[test]
fn the_shipped_defaults_run_read_only_commands_unasked() {
    let sandbox = sandbox("require(\"uji.defaults\")\n");
    std::fs::write(sandbox.work().join("notes.txt"), "hello notes\n").unwrap();
    let ran = [
        "cat notes.txt",
        "grep -c hello notes.txt",
        "ls | wc -l",
        "head -1 notes.txt 2>/dev/null",
    ];
    let asked = [
        "cat notes.txt > copy.txt",
        "cat ../home/.profile",
        "cat *.txt",
        "touch made.txt",
    ];
    let commands: Vec<&str> = ran.iter().chain(&asked).copied().collect();
    let (output, results) = run(&sandbox, &commands, &[]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert!(results[0].contains("hello notes"), "{}", results[0]);
    assert!(results[1].contains('1'), "{}", results[1]);
    assert!(results[2].contains('1'), "{}", results[2]);
    assert!(results[3].contains("hello notes"), "{}", results[3]);
    for (command, result) in asked.iter().zip(&results[ran.len()..]) {
        assert!(
            result.contains("needs approval, and no one can answer"),
            "{command:?}: {result}"
        );
    }
    assert!(!sandbox.work().join("copy.txt").exists());
    assert!(!sandbox.work().join("made.txt").exists());
}
