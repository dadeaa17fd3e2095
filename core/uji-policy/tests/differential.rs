//! The differential test: what the policy says a line runs is what bash
//! runs.
//!
//! A few thousand lines are generated from the constructs the red team
//! used (quoting, substitutions inside `${…}`, redirections between
//! words, wrappers, nested `bash -c`, braces and globs as programs). Each
//! runs under bash (the shell `run_command` uses) in an empty directory
//! with `PATH` holding only recording stubs: every program bash starts
//! writes its argv to a trace, and the wrappers then run the real program.
//! For every line whose parts are all resolved, each recorded program run
//! must be one of the parts; a line where bash could run something else
//! must have an unresolved part.
// Setup failures should fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use uji_policy::{CommandPart, command_parts};

/// Programs that only record themselves.
const STUBS: &[&str] = &["a", "b", "rm", "echo", "printf", "true", "false"];
/// Programs that record themselves, then run the real one.
const WRAPPERS: &[&str] = &["nice", "env", "timeout", "bash", "sh"];

/// Lines per run; `UJI_DIFFERENTIAL_LINES` and `UJI_DIFFERENTIAL_SEED`
/// run more or other ones while working on the parser.
const LINES: usize = 2500;

/// A deterministic xorshift generator.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[(self.next() % of.len() as u64) as usize]
    }

    fn chance(&mut self, in_100: u64) -> bool {
        self.next() % 100 < in_100
    }
}

const PROGRAMS: &[&str] = &[
    "a",
    "b",
    "rm",
    "echo",
    "printf",
    "true",
    "'a'",
    "\"b\"",
    "\\a",
    "$'\\x61'",
    "r''m",
    "$P",
    "{a,b}",
    "a*",
    "r?",
    "${P:-a}",
    "$(echo a)",
    "`echo b`",
];
const ARGS: &[&str] = &[
    "\\ x",
    "a\tb",
    ">&2",
    "\"$x\"",
    "'$(a)'",
    "\"a b\"c",
    "x",
    "-rf",
    "'y z'",
    "\"q\"",
    "$x",
    "$(b)",
    "`a`",
    "${x:-`b`}",
    "${x:-$(a)}",
    "$'\\''",
    "$'\\';'",
    "\\;",
    "*",
    "{p,q}",
    "~",
    "#c",
    "'#'",
    "a\\\nb",
    "-n",
    "5",
    "rm",
];
const REDIRECTS: &[&str] = &[
    "",
    "",
    " >/dev/null",
    " 2>&1",
    " &>/dev/null",
    " >/dev/null b",
    " 2>/dev/null rm -rf v",
    " <<< x",
    " &>/dev/null a x",
];
const WRAPS: &[&str] = &[
    "",
    "",
    "",
    "nice ",
    "nice -n 5 ",
    "env ",
    "env -u X ",
    "command ",
    "exec ",
    "timeout 5 ",
    "eval ",
    "env -- ",
];
const SEPARATORS: &[&str] = &["; ", " && ", " || ", " | ", "\n"];

fn simple(g: &mut Gen, depth: u32) -> String {
    let mut s = String::new();
    if g.chance(10) {
        s.push_str(g.pick(&["X=1 ", "P=a ", "x=rm "]));
    }
    if depth < 2 && g.chance(8) {
        // A nested shell; the inner line has no single quotes.
        let inner = simple(g, depth + 1).replace('\'', "");
        let shell = g.pick(&["bash -c", "bash -o pipefail -c", "sh -c", "bash -ec"]);
        return format!("{s}{shell} '{inner}'");
    }
    s.push_str(g.pick(WRAPS));
    s.push_str(g.pick(PROGRAMS));
    for _ in 0..(g.next() % 4) {
        s.push(' ');
        s.push_str(g.pick(ARGS));
    }
    s.push_str(g.pick(REDIRECTS));
    s
}

fn statement(g: &mut Gen) -> String {
    let one = simple(g, 0);
    match g.next() % 10 {
        0 => format!("({one})"),
        1 => format!("{{ {one}; }}"),
        2 => format!("if true; then {one}; fi"),
        3 => format!("for x in 1; do {one}; done"),
        4 => format!("case x in x) {one};; esac"),
        5 => format!("f() {{ {one}; }}; f"),
        6 => format!("! {one}"),
        _ => one,
    }
}

fn line(g: &mut Gen) -> String {
    let mut l = statement(g);
    for _ in 0..(g.next() % 3) {
        l.push_str(g.pick(SEPARATORS));
        l.push_str(&statement(g));
    }
    l
}

/// The stub directory: each program appends its argv (fields split by
/// 0x1f, runs by 0x1e) to `$UJI_TRACE`.
fn stubs(dir: &Path) {
    for name in STUBS.iter().chain(WRAPPERS) {
        let real = WRAPPERS
            .contains(name)
            .then(|| which(name))
            .map(|p| format!("exec {} \"$@\"\n", p.display()))
            .unwrap_or_default();
        // One write per run, so runs side by side in a pipeline do not
        // interleave.
        let script = format!(
            "#!/bin/sh\nl=${{0##*/}}\nfor a in \"$@\"; do l=\"$l\x1f$a\"; done\n\
             printf '%s\\036' \"$l\" >> \"$UJI_TRACE\"\n{real}"
        );
        let path = dir.join(name);
        fs::write(&path, script).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn which(name: &str) -> PathBuf {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name} is needed for the differential test"))
}

/// Runs `line` under bash with the stubs; the argv of every program run.
fn run(line: &str, stubs: &Path, cwd: &Path, trace: &Path) -> Vec<Vec<String>> {
    // Builtins that would hide a run from the trace are switched off, so
    // bash starts the stubs instead.
    let script = format!("enable -n echo printf true false\n{line}");
    let mut child = Command::new(which("bash"))
        .args(["--noprofile", "--norc", "-c", &script])
        .env_clear()
        .env("PATH", stubs)
        .env("HOME", cwd)
        .env("UJI_TRACE", trace)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{line:?} did not finish");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    fs::read_to_string(trace)
        .unwrap_or_default()
        .split('\u{1e}')
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\u{1f}').map(str::to_string).collect())
        .collect()
}

/// Whether the program run `argv` is what `part` says: the same program,
/// and the same arguments unless the part has words the shell expands
/// (a glob, a brace, `~`).
fn matches(argv: &[String], part: &CommandPart) -> bool {
    let want = part.argv();
    if want.first() != argv.first() {
        return false;
    }
    let patterned = want
        .iter()
        .any(|w| w.contains(['*', '?', '[', '{']) || w.starts_with('~'));
    patterned || want == argv
}

#[test]
fn what_the_policy_reads_is_what_bash_runs() {
    let stub_dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    stubs(stub_dir.path());
    let knob = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let lines = knob("UJI_DIFFERENTIAL_LINES").map_or(LINES, |n| n as usize);
    let mut g = Gen(knob("UJI_DIFFERENTIAL_SEED").unwrap_or(0x2545_f491_4f6c_dd1d) | 1);
    let (mut resolved, mut ran) = (0, 0);
    let mut failures = Vec::new();
    for i in 0..lines {
        let line = line(&mut g);
        let parts = command_parts(&line);
        // A trace of its own per line: a program a line left running must
        // not write into the next line's.
        let trace = stub_dir.path().join(format!("trace-{i}"));
        let runs = run(&line, stub_dir.path(), work.path(), &trace);
        if parts.iter().any(|p| !p.resolved) {
            continue;
        }
        resolved += 1;
        ran += usize::from(!runs.is_empty());
        for argv in &runs {
            if !parts.iter().any(|p| matches(argv, p)) {
                let shown: Vec<&[String]> = parts.iter().map(|p| p.argv()).collect();
                failures.push(format!("{line:?} ran {argv:?}; parts {shown:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} lines ran what the policy did not see:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The generator must exercise both sides.
    assert!(resolved > lines / 8, "only {resolved} resolved lines");
    assert!(ran > lines / 10, "only {ran} resolved lines ran anything");
}
