//! Diagnostics end to end: log lines from the real binary and the real Lua
//! plugin land in `<data>/logs/uji.log`, `UJI_LOG` sets the level, and only
//! `--log-stderr` on a command without a screen copies them to stderr. Also
//! keeps the libraries from printing behind a frontend's back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::{Sandbox, plugin_dir, text};

/// init.lua logging one line at each interesting level.
const INIT: &str = r#"
uji.log("warn", "marker-warn from init")
uji.log("debug", "marker-debug from init")
print("marker-print from init")
uji.notify("heads-up from init")
"#;

const KEY: &str = "sk-logging-secret-77";

fn with_init() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config().join("init.lua"), INIT).unwrap();
    sandbox
}

fn log_path(sandbox: &Sandbox) -> PathBuf {
    sandbox
        .root
        .path()
        .join("data")
        .join("logs")
        .join("uji.log")
}

fn log(sandbox: &Sandbox) -> String {
    std::fs::read_to_string(log_path(sandbox)).unwrap_or_default()
}

fn output(mut cmd: Command) -> (Output, String, String) {
    let output = cmd.stdin(Stdio::null()).output().unwrap();
    let (stdout, stderr) = text(&output);
    (output, stdout, stderr)
}

fn tool_list(sandbox: &Sandbox, env: &[(&str, &str)], args: &[&str]) -> (Output, String) {
    let mut cmd = sandbox.uji();
    cmd.args(["tool", "list"])
        .args(args)
        .envs(env.iter().copied());
    let (output, _, stderr) = output(cmd);
    (output, stderr)
}

/// `uji run` against `model`, which answers with `script`s in order.
fn run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> (Output, String, String) {
    let mut cmd = sandbox.uji();
    cmd.env("OPENROUTER_API_KEY", KEY)
        .env("OPENROUTER_BASE_URL", model.base_url())
        .args(["run", "--model", "openrouter/test-model"])
        .args(args);
    output(cmd)
}

fn answer(text: &str) -> Script {
    Script::sse(
        ChatEvents::new("test-model")
            .text(text, 2)
            .finish("stop")
            .usage(10, 5, 0)
            .done(),
    )
}

/// The log line holding `marker`.
fn line<'a>(log: &'a str, marker: &str) -> &'a str {
    log.lines()
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no line with {marker:?} in the log:\n{log}"))
}

#[test]
fn a_plugin_log_line_goes_to_the_file_with_time_level_and_source_not_to_stderr() {
    let sandbox = with_init();
    let (out, stderr) = tool_list(&sandbox, &[], &[]);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("marker"), "stderr: {stderr}");
    let log = log(&sandbox);
    let warn = line(&log, "marker-warn from init");
    // e.g. 2026-01-02T03:04:05.678901Z  WARN plugin: marker-warn from init plugin="lua"
    assert!(warn.starts_with("20") && warn.contains('T'), "{warn}");
    assert!(warn.contains(" WARN plugin: "), "{warn}");
    assert!(warn.ends_with("plugin=\"lua\""), "{warn}");
    // print goes to the log at info; the default level (info) drops debug.
    assert!(line(&log, "marker-print from init").contains(" INFO plugin: "));
    assert!(!log.contains("marker-debug"), "{log}");
}

#[test]
fn notices_and_plugin_load_failures_are_logged() {
    let sandbox = with_init();
    let broken = plugin_dir(&["uji_fixture_init_error"]);
    let (out, stderr) = tool_list(
        &sandbox,
        &[("UJI_PLUGIN_PATH", broken.path().to_str().unwrap())],
        &[],
    );
    assert!(out.status.success(), "{stderr}");
    let log = log(&sandbox);
    let notice = line(&log, "notice: heads-up from init");
    assert!(
        notice.contains(" INFO ") && notice.contains("source=\"lua\""),
        "{notice}"
    );
    // The fixture's line (other libraries next to uji may fail too).
    let failed = line(&log, "uji_fixture_init_error");
    assert!(
        failed.contains(" WARN ") && failed.contains("failed to load"),
        "{failed}"
    );
}

#[cfg(unix)]
#[test]
fn the_log_file_is_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = with_init();
    tool_list(&sandbox, &[], &[]);
    let mode = std::fs::metadata(log_path(&sandbox))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn uji_log_sets_the_level() {
    let sandbox = with_init();
    tool_list(&sandbox, &[("UJI_LOG", "debug")], &[]);
    assert!(line(&log(&sandbox), "marker-debug from init").contains(" DEBUG plugin: "));

    let sandbox = with_init();
    tool_list(&sandbox, &[("UJI_LOG", "error")], &[]);
    assert!(!log(&sandbox).contains("marker"), "{}", log(&sandbox));

    let sandbox = with_init();
    tool_list(&sandbox, &[("UJI_LOG", "plugin=debug")], &[]);
    assert!(log(&sandbox).contains("marker-debug from init"));
}

#[test]
fn a_bad_uji_log_warns_once_and_keeps_the_default() {
    let sandbox = with_init();
    let (out, stderr) = tool_list(&sandbox, &[("UJI_LOG", "loud")], &[]);
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("UJI_LOG")).collect();
    assert_eq!(
        warnings,
        [
            "uji: warning: UJI_LOG=\"loud\" is not a level (error, warn, info, debug, trace) or a list of target=level; logging at info"
        ]
    );
    let log = log(&sandbox);
    let warning = line(&log, "UJI_LOG=\"loud\"");
    assert!(
        warning.contains(" WARN uji_core::boot::logging: "),
        "{warning}"
    );
    assert!(log.contains("marker-warn") && !log.contains("marker-debug"));
}

#[test]
fn log_stderr_mirrors_for_tool_commands() {
    let sandbox = with_init();
    std::fs::write(sandbox.work().join("f.txt"), "hello\n").unwrap();
    let mut cmd = sandbox.uji();
    cmd.args([
        "tool",
        "run",
        "read_file",
        r#"{"path": "f.txt"}"#,
        "--log-stderr",
    ]);
    let (out, stdout, stderr) = output(cmd);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("hello"), "{stdout}");
    assert!(
        line(&stderr, "marker-warn from init").contains(" WARN plugin: "),
        "{stderr}"
    );
    assert!(!stdout.contains("marker"), "log lines never go to stdout");
    assert!(
        log(&sandbox).contains("marker-warn from init"),
        "still in the file"
    );
}

#[test]
fn run_logs_retries_to_the_file_and_mirrors_only_when_asked() {
    let sandbox = with_init();
    let model = FakeModel::start();
    model
        .push(Script::status(503, "overloaded", &[("retry-after", "0")]))
        .push(answer("first"))
        .push(answer("second"));
    let (out, stdout, stderr) = run(&sandbox, &model, &["hi"]);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "first");
    assert!(!stderr.contains("marker"), "{stderr}");
    let retry = "notice: request failed (http: 503: overloaded), retrying in 0s (1/5)";
    let written = log(&sandbox);
    let logged = line(&written, retry);
    assert!(logged.contains(" INFO uji_core::turn::agent: "), "{logged}");

    let (out, _, stderr) = run(&sandbox, &model, &["--log-stderr", "hi"]);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("marker-warn from init"), "{stderr}");
    assert!(
        !log(&sandbox).contains(KEY),
        "the key never reaches the log"
    );
}

#[test]
fn interactive_commands_never_mirror() {
    let sandbox = with_init();
    let model = FakeModel::start();
    model.push(answer("saved"));
    let (out, _, stderr) = run(&sandbox, &model, &["hi"]);
    assert!(out.status.success(), "{stderr}");

    for args in [&["resume", "--log-stderr"][..], &["--log-stderr"]] {
        let before = log(&sandbox).len();
        let mut cmd = sandbox.uji();
        cmd.args(args).env("UJI_LOG", "loud");
        let (out, _, stderr) = output(cmd);
        assert!(
            !out.status.success(),
            "no interactive frontend is installed"
        );
        assert!(!stderr.contains("marker"), "{args:?}: {stderr}");
        assert!(!stderr.contains("UJI_LOG"), "{args:?}: {stderr}");
        let new = &log(&sandbox)[before..];
        assert!(
            new.contains("--log-stderr ignored: this command draws on the terminal"),
            "{args:?}: {new}"
        );
        assert!(new.contains("UJI_LOG=\"loud\""), "{args:?}: {new}");
    }
    assert_eq!(
        log(&sandbox).matches("marker-warn from init").count(),
        3,
        "run, resume and plain `uji` each loaded init.lua"
    );
}

// ---- no stray output -------------------------------------------------------------

/// Macros that write to the terminal.
const PRINTS: &[&str] = &["eprintln!", "eprint!", "println!", "print!", "dbg!"];

/// Where printing is the point: the CLI's own output, build scripts talking
/// to cargo, and the wires' test helpers noting a skipped fixture.
fn allowed(relative: &Path) -> bool {
    let path = relative.to_string_lossy();
    path.starts_with("core/uji-cli/src/")
        || relative.file_name().is_some_and(|n| n == "build.rs")
        || path == "plugins/wire-common/src/testing.rs"
}

#[test]
fn libraries_do_not_print_to_the_terminal() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found = Vec::new();
    for top in ["core", "sdk", "plugins"] {
        for file in rust_files(&root.join(top)) {
            let relative = file.strip_prefix(root).unwrap();
            if allowed(relative) {
                continue;
            }
            let source = std::fs::read_to_string(&file).unwrap();
            for (n, code) in code_lines(&source) {
                if PRINTS.iter().any(|m| calls(code, m)) {
                    found.push(format!("{}:{n}: {}", relative.display(), code.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "log through `tracing` (or the plugin Host's log) instead of printing:\n{}",
        found.join("\n")
    );
}

/// `.rs` files, leaving out tests, examples, benches and build output.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !["tests", "examples", "benches", "target"].contains(&name.as_str()) {
                files.extend(rust_files(&path));
            }
        } else if name.ends_with(".rs") {
            files.push(path);
        }
    }
    files
}

/// Numbered lines up to a file's `#[cfg(test)] mod tests`, without comments.
fn code_lines(source: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut code = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).map_or("", |l| l.trim());
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") {
            break;
        }
        if !line.trim_start().starts_with("//") {
            code.push((i + 1, *line));
        }
    }
    code
}

/// True when `line` uses `mac` itself (not as the end of a longer name).
fn calls(line: &str, mac: &str) -> bool {
    line.match_indices(mac).any(|(at, _)| {
        !line[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn the_scan_sees_prints() {
    assert!(calls("    eprintln!(\"x\");", "eprintln!"));
    assert!(!calls("    eprintln!(\"x\");", "println!"));
    assert!(calls("let x = dbg!(y);", "dbg!"));
    let source =
        "fn a() { println!(); }\n// println!\n#[cfg(test)]\nmod tests { fn b() { println!(); } }\n";
    assert_eq!(code_lines(source), [(1, "fn a() { println!(); }")]);
}
