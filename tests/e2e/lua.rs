//! The Lua plugin end to end: the real `libuji_plugin_lua` (and the real
//! built-in tools) loaded the way uji loads them, a config directory with
//! init.lua, and calls through the real gate. Covers every example of
//! /work/shared/spec/uji.tool.md as written, each result form and error of
//! `uji.tool.add`, hooks, timers, wires, loading order and the defaults.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use uji_core::{
    Approval, ApprovalRequest, Approver, Booted, DecidedBy, GateResult, HeadlessApprover,
    Interrupt, ToolRequest, interrupt_pair,
};
use uji_host::paths::Dirs;
use uji_host::{PluginSearch, ProgressSink, StreamError, WireEvents};
use uji_protocol::wire::{Auth, Failure, Message, ProviderInfo, WireRequest};
use uji_tests::{Sandbox, artifact, plugin_dir, text};

// ---- harness ---------------------------------------------------------------------

struct Env {
    booted: Booted,
    root: tempfile::TempDir,
}

/// Boots uji's core with the Lua and tools plugins and a config directory
/// holding `files` (paths relative to it).
fn boot(files: &[(&str, &str)]) -> Env {
    let plugin_path = format!(
        "{}:{}",
        artifact("uji_plugin_lua").display(),
        artifact("uji_plugin_tools").display()
    );
    boot_in(files, plugin_path)
}

/// Like [`boot`], with the plugins found along `plugin_path`.
fn boot_in(files: &[(&str, &str)], plugin_path: String) -> Env {
    let root = tempfile::tempdir().unwrap();
    let config = root.path().join("config");
    let data = root.path().join("data");
    let work = root.path().join("work");
    for dir in [&config, &data, &work] {
        std::fs::create_dir_all(dir).unwrap();
    }
    for (path, content) in files {
        let path = config.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let search = PluginSearch {
        exe_dir: None,
        plugin_path: Some(plugin_path),
        config_plugins: None,
    };
    let booted =
        uji_core::boot(uji_core::BootOptions::new(Dirs { config, data }, &work).search(search));
    assert!(
        booted.plugins.failed.is_empty(),
        "plugins failed: {:?}",
        booted.plugins.failed
    );
    Env { booted, root }
}

fn init(lua: &str) -> Env {
    boot(&[("init.lua", lua)])
}

struct Ask {
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl Ask {
    fn new() -> Ask {
        Ask {
            asked: Mutex::new(Vec::new()),
        }
    }
    fn questions(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.question.clone())
            .collect()
    }
}

impl Approver for Ask {
    fn ask(&self, request: ApprovalRequest) -> oneshot::Receiver<Approval> {
        self.asked.lock().unwrap().push(request);
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(Approval::Allow);
        rx
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

impl Env {
    fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    fn request(&self, name: &str, args: Value) -> ToolRequest {
        ToolRequest {
            call_id: format!("call_{name}"),
            name: name.to_string(),
            args,
            cwd: self.work(),
            session: None,
        }
    }

    fn call(&self, name: &str, args: Value) -> GateResult {
        self.call_with(name, args, &HeadlessApprover { yes: true })
    }

    fn call_with(&self, name: &str, args: Value, approver: &dyn Approver) -> GateResult {
        let progress: ProgressSink = Arc::new(|_| {});
        runtime().block_on(self.booted.gate.run(
            self.request(name, args),
            approver,
            progress,
            &mut Interrupt::never(),
        ))
    }

    fn command(&self, name: &str, args: &str) -> String {
        let command = self
            .booted
            .registry
            .command(name)
            .unwrap_or_else(|| panic!("no command {name}"));
        command.run(args).unwrap()
    }

    fn notices(&self) -> Vec<String> {
        self.booted
            .registry
            .take_notices()
            .into_iter()
            .map(|n| n.text)
            .collect()
    }

    /// The notices until `done` holds of them all, or 10 s have passed:
    /// for what Lua timers report in their own time.
    fn notices_until(&self, done: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut all = Vec::new();
        loop {
            all.extend(self.notices());
            if done(&all) || Instant::now() > deadline {
                return all;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn decision(&self, tool: &str, subject: &str) -> String {
        let (verdict, _) = self.booted.gate.check(tool, subject, &self.work());
        verdict.decision.to_string()
    }
}

fn any_contains(notices: &[String], needles: &[&str]) -> bool {
    notices
        .iter()
        .any(|n| needles.iter().all(|needle| n.contains(needle)))
}

// ---- the examples of uji.tool.md, as written ---------------------------------------

const SPEC_EXAMPLES: &str = r#"
uji.tool.add("branch", {
  description = "Name of the current git branch.",
  parameters = { type = "object", properties = {} },
  policy = "allow",
  display = { verb = "Checked the branch", question = "Read the current branch?" },
  run = function()
    return io.popen("git branch --show-current"):read("*l")
  end,
})

uji.tool.remove("write_file")

for _, name in ipairs(uji.tool.list()) do
  uji.notify(name)
end

uji.tool.disable({ "edit_file", "write_file" })

uji.tool.enable({ "edit_file", "write_file" })

uji.tool.policy({
  default = "ask",
  run_command = {
    allow = { "git status", "git diff *", "cargo test*" },
    deny = { "/^rm\\s+-rf/" },
  },
})

uji.tool.confine(true)
local confined = uji.tool.confine()

uji.tool.roots({ "~/reference/other-project" })
local roots = uji.tool.roots()

uji.notify("confined=" .. tostring(confined))
uji.notify("roots=" .. table.concat(roots, ","))
uji.notify("removed again=" .. tostring(uji.tool.remove("write_file")))
"#;

#[test]
fn every_example_of_the_spec_runs_as_written() {
    let env = init(SPEC_EXAMPLES);
    let notices = env.notices();
    // uji.tool.list() after removing write_file, in name order.
    assert_eq!(
        &notices[..6],
        [
            "branch",
            "edit_file",
            "job_output",
            "read_file",
            "run_command",
            "stop_job"
        ],
        "{notices:?}"
    );
    assert_eq!(notices[6], "confined=true");
    assert!(
        notices[7].starts_with("roots=") && notices[7].ends_with("reference/other-project"),
        "{notices:?}"
    );
    assert!(!notices[7].contains('~'), "~/ is expanded: {notices:?}");
    assert_eq!(notices[8], "removed again=false");
    assert_eq!(notices.len(), 9, "no error notices: {notices:?}");

    let registry = &env.booted.registry;
    assert!(registry.tool("write_file").is_none());
    let branch = registry.tool("branch").unwrap().spec().clone();
    assert_eq!(branch.description, "Name of the current git branch.");
    assert_eq!(
        branch.parameters,
        json!({"type": "object", "properties": {}}),
        "an empty table stays an empty JSON object"
    );
    assert_eq!(branch.policy.map(|p| p.as_str()), Some("allow"));
    assert_eq!(branch.display.verb.as_deref(), Some("Checked the branch"));
    assert_eq!(
        branch.display.question.as_deref(),
        Some("Read the current branch?")
    );

    // disable then enable: back on.
    assert!(!env.booted.gate.is_disabled("edit_file"));
    // The policy example.
    assert_eq!(env.decision("run_command", "git status"), "allow");
    assert_eq!(env.decision("run_command", "git diff HEAD~1"), "allow");
    assert_eq!(env.decision("run_command", "cargo test -p x"), "allow");
    assert_eq!(env.decision("run_command", "rm -rf build"), "deny");
    assert_eq!(env.decision("run_command", "make"), "ask");
    // confine and roots.
    assert!(env.booted.gate.confine(None));
    let roots = env.booted.gate.roots(None);
    assert_eq!(roots.len(), 1);
    assert!(roots[0].ends_with("reference/other-project"), "{roots:?}");
}

#[test]
fn the_branch_example_reports_the_branch_through_the_real_binary() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config().join("init.lua"), SPEC_EXAMPLES).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(sandbox.work())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["symbolic-ref", "HEAD", "refs/heads/lua-e2e-branch"]);
    let plugins = plugin_dir(&["uji_plugin_lua"]);
    let output = sandbox
        .uji()
        .args(["tool", "run", "branch"])
        .env("UJI_PLUGIN_PATH", plugins.path())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(
        output.status.success(),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert_eq!(stdout.trim(), "lua-e2e-branch", "stderr: {stderr}");
}

#[test]
fn policy_check_through_the_binary_applies_the_rules_init_lua_sets() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config().join("init.lua"),
        r#"
        uji.tool.policy({
          run_command = { allow = { "git status" }, deny = { "/^rm\\s+-rf/" } },
        })
        uji.tool.disable({ "edit_file" })
        "#,
    )
    .unwrap();
    let plugins = plugin_dir(&["uji_plugin_lua"]);
    let check = |tool: &str, subject: &str| {
        let output = sandbox
            .uji()
            .args(["policy", "check", tool, subject])
            .env("UJI_PLUGIN_PATH", plugins.path())
            .output()
            .unwrap();
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "stderr: {stderr}");
        stdout
    };
    let out = check("run_command", "git status");
    assert!(out.starts_with("allow"), "{out}");
    let out = check("run_command", "rm -rf build");
    assert!(out.starts_with("deny"), "{out}");
    assert!(out.contains("rm\\s+-rf"), "names the rule: {out}");
    let out = check("edit_file", "a.txt");
    assert!(out.starts_with("deny (disabled)"), "{out}");
    let out = check("run_command", "make");
    assert!(out.starts_with("ask"), "{out}");
}

// ---- result forms ---------------------------------------------------------------------

const FORMS: &str = r#"
uji.tool.add("now", { policy = "allow", run = function(args) return "now " .. args.x end })

uji.tool.add("later", {
  policy = "allow",
  run = function(args, ctx)
    ctx.progress("working on " .. args.x)
    uji.defer(0.05, function()
      ctx.done("later " .. args.x)
      ctx.done("ignored")
    end)
  end,
})

uji.tool.add("stoppable", {
  policy = "allow",
  run = function(args, ctx)
    local cancel_timer = uji.defer(30, function() ctx.done("too late") end)
    return function()
      cancel_timer()
      uji.notify("stopped " .. ctx.call_id)
    end
  end,
})

uji.tool.add("picture", {
  policy = "allow",
  run = function()
    return {
      text = "see",
      images = {
        { media_type = "image/png", data = "aGVsbG8=", name = "ok.png" },
        { media_type = "image/bmp", data = "aGVsbG8=", name = "old.bmp" },
        { media_type = "image/png", name = "empty.png" },
        { media_type = "image/png", data = string.rep("A", 7 * 1024 * 1024), name = "huge.png" },
        { data = "aGVsbG8=" },
      },
    }
  end,
})

uji.tool.add("picture_later", {
  policy = "allow",
  run = function(_, ctx)
    uji.schedule(function()
      ctx.done({ text = "later picture", images = { { media_type = "image/jpeg", data = "aGVsbG8=" } } })
    end)
  end,
})

uji.tool.add("number", { policy = "allow", run = function() return 42 end })

uji.tool.add("twice", {
  policy = "allow",
  run = function(_, ctx)
    ctx.done("first")
    ctx.done("second")
    return "third"
  end,
})

uji.on("after_tool", function(e)
  if e.tool == "picture" then return e.text .. " (after_tool saw text only)" end
end)
"#;

#[test]
fn a_string_result_is_the_result_at_once() {
    let env = init(FORMS);
    let result = env.call("now", json!({"x": 1}));
    assert!(result.ran);
    assert_eq!(result.output.text, "now 1");
    assert!(!result.output.is_error);
}

#[test]
fn ctx_done_from_a_timer_finishes_the_call_and_later_calls_are_ignored() {
    let env = init(FORMS);
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    let progress: ProgressSink = Arc::new(move |line| sink.lock().unwrap().push(line.to_string()));
    let result = runtime().block_on(env.booted.gate.run(
        env.request("later", json!({"x": "a"})),
        &HeadlessApprover { yes: true },
        progress,
        &mut Interrupt::never(),
    ));
    assert_eq!(result.output.text, "later a");
    assert_eq!(*lines.lock().unwrap(), ["working on a"]);

    let result = env.call("twice", json!({}));
    assert_eq!(result.output.text, "first", "the first ctx.done wins");
}

#[test]
fn a_returned_function_is_called_on_interrupt() {
    let env = init(FORMS);
    let (interrupter, mut interrupt) = interrupt_pair();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        interrupter.interrupt();
    });
    let started = Instant::now();
    let progress: ProgressSink = Arc::new(|_| {});
    let result = runtime().block_on(env.booted.gate.run(
        env.request("stoppable", json!({})),
        &HeadlessApprover { yes: true },
        progress,
        &mut interrupt,
    ));
    assert!(result.interrupted);
    assert!(
        result.output.text.contains("interrupted"),
        "{:?}",
        result.output
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "stopped at once"
    );
    assert_eq!(env.notices(), ["stopped call_stoppable"]);
}

const RUNAWAY: &str = r#"
uji.tool.add("spin", { policy = "allow", run = function(args, ctx)
  ctx.progress("spinning")
  while true do end
end })
uji.tool.add("stubborn", { policy = "allow", run = function(args, ctx)
  ctx.progress("spinning")
  pcall(function() while true do end end)
  while true do local x = {} end
end })
uji.tool.add("free", { policy = "allow", run = function() return "the Lua thread is free" end })
uji.notify("jit " .. tostring(jit.status()))
local ok, err = pcall(jit.on)
uji.notify(tostring(ok) .. " " .. err)
"#;

/// Runs `name` and interrupts it once it reports progress (so its Lua code
/// is running): the result, and how long the interrupt took to end it.
fn interrupt_when_running(env: &Env, name: &str, args: Value) -> (GateResult, Duration) {
    let (interrupter, mut interrupt) = interrupt_pair();
    let at = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&at);
    let progress: ProgressSink = Arc::new(move |_| {
        seen.lock().unwrap().get_or_insert_with(Instant::now);
        interrupter.interrupt();
    });
    let result = runtime().block_on(env.booted.gate.run(
        env.request(name, args),
        &HeadlessApprover { yes: true },
        progress,
        &mut interrupt,
    ));
    let at = at.lock().unwrap().expect("the tool reported progress");
    (result, at.elapsed())
}

#[test]
fn runaway_lua_code_stops_on_the_first_interrupt() {
    let env = init(RUNAWAY);
    assert_eq!(
        env.notices(),
        [
            "jit false",
            "false jit.on: uji keeps LuaJIT's compiler off, because compiled loops cannot be interrupted"
        ]
    );
    for name in ["spin", "stubborn", "spin"] {
        let (result, took) = interrupt_when_running(&env, name, json!({}));
        assert!(result.interrupted, "{name}");
        assert_eq!(
            result.output.text, "error: interrupted by the user while this tool ran",
            "{name}"
        );
        // The gate gives up waiting after a grace of 5 s; stopping the code
        // itself is far quicker.
        assert!(took < Duration::from_secs(4), "{name}: {took:?}");
        let free = env.call("free", json!({}));
        assert_eq!(free.output.text, "the Lua thread is free", "after {name}");
    }
    assert!(env.notices().is_empty(), "an interrupt is not a failure");
}

#[test]
fn a_table_result_carries_images_and_bad_images_are_left_out_with_a_note() {
    let env = init(FORMS);
    let result = env.call("picture", json!({}));
    let output = &result.output;
    assert_eq!(output.images.len(), 1, "{output:?}");
    assert_eq!(output.images[0].media_type, "image/png");
    assert_eq!(output.images[0].name.as_deref(), Some("ok.png"));
    let text = &output.text;
    assert!(text.starts_with("see\n"), "{text}");
    assert!(
        text.contains("[image 2 left out: media_type \"image/bmp\" (old.bmp) is not supported"),
        "{text}"
    );
    assert!(
        text.contains("[image 3 left out: it has no data (empty.png)]"),
        "{text}"
    );
    assert!(
        text.contains("[image 4 left out: it is 5.")
            && text.contains("(huge.png), over the 5 MB limit]"),
        "{text}"
    );
    assert!(
        text.contains("[image 5 left out: it has no media_type"),
        "{text}"
    );
    assert!(
        text.ends_with("(after_tool saw text only)"),
        "after_tool folds the text: {text}"
    );

    let result = env.call("picture_later", json!({}));
    assert_eq!(result.output.text, "later picture");
    assert_eq!(result.output.images.len(), 1);
    assert_eq!(result.output.images[0].media_type, "image/jpeg");
}

#[test]
fn any_other_result_type_is_an_error_explaining_the_forms() {
    let env = init(FORMS);
    let result = env.call("number", json!({}));
    assert!(result.output.is_error);
    let text = &result.output.text;
    assert!(
        text.starts_with("error: tool number gave a number"),
        "{text}"
    );
    assert!(text.contains("return a string"), "{text}");
    assert!(text.contains("ctx.done"), "{text}");
    let notices = env.notices();
    assert!(
        any_contains(
            &notices,
            &[
                "tool number failed: ",
                "init.lua:51: tool number gave a number"
            ]
        ),
        "where run is defined: {notices:?}"
    );
}

// ---- errors ------------------------------------------------------------------------------

/// Lines 1 to 5 of an init.lua: `try(f)` calls `f` and notifies
/// `ok err`, so an error's text and line can be checked.
const TRY: &str = "
local function try(f)
  local ok, err = pcall(f)
  uji.notify(tostring(ok) .. \" \" .. tostring(err))
end
";

#[test]
fn uji_wire_add_names_a_missing_or_wrong_stream() {
    let env = init(
        &[
            TRY,
            r#"try(function() uji.wire.add("nostream", {}) end)
try(function() uji.wire.add("badstream", { stream = 1 }) end)
"#,
        ]
        .concat(),
    );
    let notices = env.notices();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(
        notices[0].starts_with("false ")
            && notices[0].contains(
                "init.lua:6: uji.wire.add(\"nostream\"): stream is missing; give stream = function(request, reply) ... end"
            ),
        "{notices:?}"
    );
    assert!(
        notices[1].contains(
            "init.lua:7: uji.wire.add(\"badstream\"): stream must be a function, got a number"
        ),
        "{notices:?}"
    );
}

#[test]
fn uji_tool_add_raises_clear_errors_at_the_callers_line() {
    let env = init(
        &[
            TRY,
            r#"try(function() uji.tool.add("norun", { policy = "allow" }) end)
try(function() uji.tool.add("badpolicy", { policy = "maybe", run = function() end }) end)
try(function() uji.tool.add("badsubject", { subject = 42, run = function() end }) end)
try(function() uji.tool.add("notatable", "run") end)
try(function() uji.tool.add("badrun", { run = "print" }) end)
try(function() uji.tool.add("typo", { polcy = "deny", run = function() end }) end)
try(function() uji.tool.add("typo2", { run = function() end, display = { verbb = "Ran" } }) end)
"#,
        ]
        .concat(),
    );
    let notices = env.notices();
    assert_eq!(notices.len(), 7, "{notices:?}");
    assert!(
        notices[5].contains(
            "init.lua:11: uji.tool.add(\"typo\"): unknown field polcy (did you mean policy?); the fields are description, parameters, run, subject, policy, path, display"
        ),
        "{notices:?}"
    );
    assert!(
        notices[6].contains(
            "init.lua:12: uji.tool.add(\"typo2\"): display: unknown field verbb (did you mean verb?); the fields are verb, label, question"
        ),
        "{notices:?}"
    );
    assert!(
        notices[0].starts_with("false ")
            && notices[0].contains("init.lua:6: uji.tool.add(\"norun\"): run is missing"),
        "{notices:?}"
    );
    assert!(
        notices[1].contains(
            "init.lua:7: uji.tool.add(\"badpolicy\"): policy must be \"allow\", \"ask\" or \"deny\", got \"maybe\""
        ),
        "{notices:?}"
    );
    assert!(
        notices[2].contains(
            "init.lua:8: uji.tool.add(\"badsubject\"): subject must be a string or a function of the arguments, got a number"
        ),
        "{notices:?}"
    );
    assert!(notices[3].contains("must be a table"), "{notices:?}");
    assert!(
        notices[4].contains("run must be a function, got a string"),
        "{notices:?}"
    );
    for name in [
        "norun",
        "badpolicy",
        "badsubject",
        "notatable",
        "badrun",
        "typo",
        "typo2",
    ] {
        assert!(
            env.booted.registry.tool(name).is_none(),
            "{name} registered"
        );
    }
}

#[test]
fn an_error_in_run_is_an_error_result_and_a_notice_with_file_and_line() {
    let env = init(
        r#"uji.tool.add("raises", { policy = "allow", run = function() error("no such branch") end })
uji.tool.add("broken", {
  policy = "allow",
  run = function(args)
    local t = nil
    return t.field
  end,
})
"#,
    );
    let result = env.call("raises", json!({}));
    assert!(result.output.is_error);
    assert_eq!(result.output.text, "error: no such branch");
    let notices = env.notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("tool raises failed: "),
        "{notices:?}"
    );
    assert!(
        notices[0].ends_with("init.lua:1: no such branch"),
        "{notices:?}"
    );

    let result = env.call("broken", json!({}));
    assert!(result.output.is_error);
    assert!(
        result.output.text.starts_with("error: attempt to index"),
        "{:?}",
        result.output
    );
    let notices = env.notices();
    assert!(
        any_contains(&notices, &["tool broken failed", "init.lua:6:"]),
        "{notices:?}"
    );
}

#[test]
fn a_result_table_without_text_is_an_error_naming_file_and_line() {
    let env = init(
        r#"uji.tool.add("returned", { policy = "allow", run = function()
  return { images = {} }
end })
uji.tool.add("done", { policy = "allow", run = function(_, ctx)
  uji.schedule(function()
    ctx.done({ txt = "typo" })
  end)
end })
"#,
    );
    let why = "gave a table without text; a result table is {text = \"...\", images = {...}}";
    for (name, at) in [("returned", "init.lua:1"), ("done", "init.lua:6")] {
        let result = env.call(name, json!({}));
        assert!(result.output.is_error, "{name}");
        assert_eq!(
            result.output.text,
            format!("error: tool {name} {why}"),
            "{name}"
        );
        let notices = env.notices();
        assert!(
            any_contains(
                &notices,
                &[
                    &format!("tool {name} failed: "),
                    &format!("{at}: tool {name} {why}")
                ]
            ),
            "{notices:?}"
        );
    }
}

#[test]
fn json_encode_returns_one_value_and_a_schedule_callback_error_names_uji_schedule() {
    let env = init(
        r##"uji.notify(select("#", uji.json.encode({ a = 1 })))
uji.notify(select("#", uji.notify("counted")))
uji.schedule(function() error("scheduled boom") end)
uji.defer(0, function() error("deferred boom") end)
"##,
    );
    // The timers run on the Lua thread after init, in their own time: a
    // call to a native tool does not wait for them (it failed 2 in 40
    // under load when the test read the notices right after such a call).
    let notices = env.notices_until(|n| {
        any_contains(n, &["init.lua:3: scheduled boom"])
            && any_contains(n, &["init.lua:4: deferred boom"])
    });
    assert_eq!(notices[..3], ["1", "counted", "1"], "{notices:?}");
    assert!(
        any_contains(
            &notices,
            &[
                "a uji.schedule callback failed: ",
                "init.lua:3: scheduled boom"
            ]
        ),
        "{notices:?}"
    );
    assert!(
        any_contains(
            &notices,
            &["a uji.defer callback failed: ", "init.lua:4: deferred boom"]
        ),
        "{notices:?}"
    );
}

#[test]
fn a_syntax_error_in_init_lua_is_a_notice_and_plugin_files_still_load() {
    let env = boot(&[
        ("init.lua", "-- one\n-- two\nlocal x = = 1\n"),
        (
            "plugin/a.lua",
            r#"uji.tool.add("from_plugin", { policy = "allow", run = function() return "ok" end })"#,
        ),
        ("plugin/b.lua", "error('plugin b is broken')"),
        (
            "plugin/c.lua",
            r#"uji.tool.add("after_broken", { policy = "allow", run = function() return "ok" end })"#,
        ),
    ]);
    let notices = env.notices();
    assert_eq!(notices.len(), 2, "{notices:?}");
    // The plugin file's notice comes while it loads; uji shows init.lua's
    // once every plugin has loaded.
    let (plugin, init) = (&notices[0], &notices[1]);
    assert!(
        init.contains("init.lua:3:") && init.contains("near '='"),
        "{notices:?}"
    );
    assert!(
        init.contains("(none of init.lua ran; the shipped defaults (uji.defaults) apply)"),
        "{notices:?}"
    );
    assert!(
        plugin.starts_with("loading ")
            && plugin.contains("plugin/b.lua failed: ")
            && plugin.contains("plugin/b.lua:1: plugin b is broken"),
        "{notices:?}"
    );
    assert_eq!(env.call("from_plugin", json!({})).output.text, "ok");
    assert_eq!(env.call("after_broken", json!({})).output.text, "ok");
    assert!(
        env.booted
            .plugins
            .loaded
            .iter()
            .any(|p| p.manifest.name == "lua"),
        "the plugin itself loaded"
    );
}

// ---- hooks -----------------------------------------------------------------------------

const BEFORE: &str = r#"
uji.tool.add("probe", {
  policy = "deny",
  display = { question = "Probe it?" },
  run = function(args) return "ran " .. (args.mode or "") end,
})
uji.on("before_tool", function(e)
  if e.tool ~= "probe" then return end
  local mode = e.args.mode
  if mode == "allow" then return { allow = true }
  elseif mode == "deny" then return { deny = "no " .. e.subject }
  elseif mode == "ask" then return { ask = true }
  elseif mode == "question" then return { ask = "Really probe?" }
  elseif mode == "boom" then error("hook exploded")
  end
end)
"#;

#[test]
fn before_tool_answers_override_the_policy() {
    let env = init(BEFORE);
    let result = env.call("probe", json!({}));
    assert!(!result.ran, "no answer: the tool's declared deny applies");

    let result = env.call("probe", json!({"mode": "allow"}));
    assert!(result.ran);
    assert_eq!(result.output.text, "ran allow");
    match &result.decided_by {
        DecidedBy::Hook(name) => assert_eq!(name, "init.lua:7", "generated name"),
        other => panic!("{other:?}"),
    }

    let result = env.call("probe", json!({"mode": "deny"}));
    assert!(!result.ran);
    assert_eq!(result.output.text, "denied: no probe");

    let ask = Ask::new();
    let result = env.call_with("probe", json!({"mode": "ask"}), &ask);
    assert!(result.ran);
    let result = env.call_with("probe", json!({"mode": "question"}), &ask);
    assert!(result.ran);
    assert_eq!(ask.questions(), ["Probe it?", "Really probe?"]);
}

#[test]
fn a_failing_before_tool_hook_denies_the_call_and_says_where() {
    let env = init(BEFORE);
    let result = env.call("probe", json!({"mode": "boom"}));
    assert!(!result.ran);
    assert!(
        result.output.text.starts_with("denied:"),
        "{:?}",
        result.output
    );
    let notices = env.notices();
    assert!(
        any_contains(
            &notices,
            &["before_tool handler", "init.lua:14: hook exploded"]
        ),
        "{notices:?}"
    );
}

#[test]
fn a_hook_answer_that_is_no_decision_is_an_error_naming_file_and_line() {
    let env = init(
        r#"uji.tool.add("probe", { policy = "allow", run = function() return "ran" end })
uji.on("before_tool", function(e)
  if e.args.mode == "typo" then return { allwo = true } end
  if e.args.mode == "word" then return "allow" end
  if e.args.mode == "type" then return { deny = 42 } end
end, { name = "checker" })
uji.on("after_tool", function(e)
  if e.args.mode == "table" then return { text = "x" } end
end)
"#,
    );
    for mode in ["typo", "word", "type"] {
        let result = env.call("probe", json!({"mode": mode}));
        assert!(!result.ran, "{mode}: fails closed");
        let notices = env.notices();
        assert!(
            any_contains(
                &notices,
                &[
                    "before_tool hook checker failed, so the probe call was denied: ",
                    "init.lua:2: the before_tool handler checker returned ",
                    "it must return { allow = true }, { deny = \"reason\" }, { ask = true }, { ask = \"question\" } or nothing"
                ]
            ),
            "{mode}: {notices:?}"
        );
    }
    let result = env.call("probe", json!({"mode": "table"}));
    assert_eq!(result.output.text, "ran", "left unchanged");
    let notices = env.notices();
    assert!(
        any_contains(
            &notices,
            &[
                "after_tool hook init.lua:7 failed",
                "init.lua:7: the after_tool handler init.lua:7 returned {\"text\":\"x\"}; it must return a string or nothing"
            ]
        ),
        "{notices:?}"
    );
    let result = env.call("probe", json!({}));
    assert!(result.ran, "no answer is fine");
}

#[test]
fn after_tool_folds_in_priority_order_names_replace_and_off_removes() {
    let env = init(
        r#"
uji.tool.add("probe", { policy = "allow", run = function() return "ran" end })
uji.on("after_tool", function(e) return e.text .. " [20]" end, { priority = 20 })
uji.on("after_tool", function(e) return e.text .. " [10]" end, { priority = 10 })
uji.on("after_tool", function(e) return e.text .. " [old]" end, { name = "tag" })
local name = uji.on("after_tool", function(e) return e.text .. " [tag]" end, { name = "tag", priority = 30 })
uji.on("after_tool", function(e) if e.is_error then return "replaced error" end end, { priority = 40 })
uji.notify("registered " .. name)
uji.command.add("untag", function()
  return tostring(uji.off("after_tool", "tag")) .. " " .. tostring(uji.off("after_tool", "tag"))
end)
"#,
    );
    assert_eq!(env.notices(), ["registered tag"]);
    assert_eq!(
        env.call("probe", json!({})).output.text,
        "ran [10] [20] [tag]"
    );
    assert_eq!(env.command("untag", ""), "true false");
    assert_eq!(env.call("probe", json!({})).output.text, "ran [10] [20]");
}

#[test]
fn emit_runs_handlers_on_the_lua_thread_without_deadlock() {
    let env = init(
        r#"
uji.on("ping", function(e) return "pong " .. e.n end)
uji.on("ping", function(e) return { n = e.n, event = e.event } end, { priority = 60 })
uji.command.add("ping", function(arg)
  local answers = uji.emit("ping", { n = tonumber(arg) })
  return answers[1] .. " / " .. uji.json.encode(answers[2])
end)
local at_load = uji.emit("ping", { n = 0 })
uji.notify("at load: " .. at_load[1])
"#,
    );
    assert_eq!(env.notices(), ["at load: pong 0"]);
    assert_eq!(
        env.command("ping", "7"),
        r#"pong 7 / {"event":"ping","n":7}"#
    );
    // From outside, through the registry, too.
    let answers = env.booted.registry.emit("ping", json!({"n": 2}));
    assert_eq!(answers[0], json!("pong 2"));
}

// ---- concurrency ----------------------------------------------------------------------------

#[test]
fn a_slow_lua_tool_blocks_neither_a_native_tool_nor_other_lua_tools() {
    let env = init(
        r#"
uji.tool.add("slow", {
  policy = "allow",
  run = function(_, ctx) uji.defer(1, function() ctx.done("slow done") end) end,
})
uji.tool.add("quick", { policy = "allow", run = function() return "quick done" end })
"#,
    );
    std::fs::write(env.work().join("a.txt"), "native content\n").unwrap();
    let gate = &env.booted.gate;
    let started = Instant::now();
    let (slow, native, quick) = runtime().block_on(async {
        let run = |name: &str, args: Value| {
            let request = env.request(name, args);
            async move {
                let progress: ProgressSink = Arc::new(|_| {});
                let result = gate
                    .run(
                        request,
                        &HeadlessApprover { yes: true },
                        progress,
                        &mut Interrupt::never(),
                    )
                    .await;
                (result, started.elapsed())
            }
        };
        tokio::join!(
            run("slow", json!({})),
            run("read_file", json!({"path": "a.txt"})),
            run("quick", json!({}))
        )
    });
    assert_eq!(slow.0.output.text, "slow done");
    assert!(slow.1 >= Duration::from_millis(950), "{:?}", slow.1);
    assert!(
        native.0.output.text.contains("native content"),
        "{:?}",
        native.0.output
    );
    assert!(
        native.1 < Duration::from_millis(500),
        "native took {:?}",
        native.1
    );
    assert_eq!(quick.0.output.text, "quick done");
    assert!(
        quick.1 < Duration::from_millis(500),
        "lua took {:?}",
        quick.1
    );
}

// ---- subjects ---------------------------------------------------------------------------------

#[test]
fn subjects_feed_policy_rules_and_path_tools_are_confined() {
    let env = init(
        r#"
uji.tool.add("peek", { path = true, policy = "allow", run = function(args) return "peeked " .. args.path end })
uji.tool.add("shell", {
  policy = "allow",
  subject = function(args) return args.cmd end,
  run = function(args) return "ran " .. args.cmd end,
})
uji.tool.add("fixed", { policy = "ask", subject = "the fixed subject", run = function() return "ok" end })
uji.tool.add("fragile", {
  policy = "allow",
  subject = function(args) return args.x.y end,
  run = function() return "should not run" end,
})
uji.tool.policy({ shell = { deny = { "rm *" } }, peek = { deny = { "*.secret" } }, fixed = { allow = { "the fixed subject" } } })
"#,
    );
    let result = env.call("peek", json!({"path": "notes.txt"}));
    assert_eq!(result.output.text, "peeked notes.txt");
    assert_eq!(result.subject, "notes.txt");
    let result = env.call("peek", json!({"path": "../outside.txt"}));
    assert_eq!(result.decided_by, DecidedBy::Confinement);
    assert!(!result.ran);
    let result = env.call("peek", json!({"path": "key.secret"}));
    assert!(!result.ran);

    assert_eq!(
        env.call("shell", json!({"cmd": "ls"})).output.text,
        "ran ls"
    );
    let result = env.call("shell", json!({"cmd": "rm x"}));
    assert!(!result.ran);
    assert_eq!(result.subject, "rm x");

    let ask = Ask::new();
    let result = env.call_with("fixed", json!({}), &ask);
    assert!(
        result.ran && ask.questions().is_empty(),
        "allowed by its subject"
    );

    let result = env.call("fragile", json!({}));
    assert!(result.output.is_error);
    assert!(
        result
            .output
            .text
            .contains("subject function of fragile failed"),
        "{:?}",
        result.output
    );
    assert!(!result.output.text.contains("should not run"));
    let notices = env.notices();
    assert!(
        any_contains(
            &notices,
            &["subject function of tool fragile", "init.lua:11:"]
        ),
        "{notices:?}"
    );
}

// ---- loading --------------------------------------------------------------------------------

#[test]
fn plugin_files_load_after_init_lua_in_name_order() {
    let env = boot(&[
        ("init.lua", "order = { 'init' }"),
        ("plugin/b.lua", "table.insert(order, 'b')"),
        ("plugin/a.lua", "table.insert(order, 'a')"),
        (
            "plugin/c.lua",
            "table.insert(order, 'c'); uji.notify(table.concat(order, ','))",
        ),
        ("plugin/notes.txt", "not lua at all"),
    ]);
    assert_eq!(env.notices(), ["init,a,b,c"]);
}

#[test]
fn config_lua_modules_override_shipped_ones_and_load_their_own() {
    let env = boot(&[
        (
            "lua/uji/planmode.lua",
            "return { setup = function() uji.notify('my planmode') end }",
        ),
        (
            "lua/mine/init.lua",
            "return { hello = function() return 'hello from mine' end }",
        ),
        (
            "init.lua",
            "require('uji.defaults')\nuji.notify(require('mine').hello())",
        ),
    ]);
    assert_eq!(env.notices(), ["my planmode", "hello from mine"]);
    assert!(env.booted.registry.command("plan").is_none());
    assert_eq!(env.decision("run_command", "rm -rf /"), "deny");
}

#[test]
fn without_init_lua_the_defaults_deny_rm_rf_allow_reads_and_bind_plan() {
    let env = boot(&[(
        "plugin/keys.lua",
        r#"uji.command.add('keys', function()
  local mine = {}
  for _, b in ipairs(uji.keymap.list()) do
    if b.source == "user" then mine[#mine + 1] = b end
  end
  return uji.json.encode(mine)
end)"#,
    )]);
    assert!(env.notices().is_empty());
    assert_eq!(env.decision("run_command", "rm -rf target"), "deny");
    assert_eq!(env.decision("run_command", "ls"), "allow", "read-only");
    assert_eq!(env.decision("run_command", "make"), "ask");
    assert_eq!(
        env.command("keys", ""),
        r#"[{"binding":{"command":"effort"},"key":"<A-e>","mode":"normal","source":"user"},{"binding":{"command":"plan"},"key":"<C-b>","mode":"normal","source":"user"}]"#
    );

    // Plan mode itself needs a session (tests/e2e/frontend_plugin.rs);
    // with none, it reads as off and the prompt is left alone.
    let answers = env
        .booted
        .registry
        .emit("before_turn", json!({"system": "You are uji."}));
    assert_eq!(answers, [Value::Null]);
}

#[test]
fn planmode_setup_refuses_the_tools_option_it_no_longer_has() {
    let env = boot(&[(
        "init.lua",
        "require(\"uji.planmode\").setup({ tools = { \"edit_file\" } })",
    )]);
    let notices = env.notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("init.lua:1") && n.contains("tools is no longer an option")),
        "{notices:?}"
    );
}

// ---- wires -----------------------------------------------------------------------------------

#[derive(Default)]
struct Deltas {
    text: Mutex<Vec<String>>,
    reasoning: Mutex<Vec<String>>,
}

impl WireEvents for Deltas {
    fn text(&self, delta: &str) {
        self.text.lock().unwrap().push(delta.to_string());
    }
    fn reasoning(&self, delta: &str) {
        self.reasoning.lock().unwrap().push(delta.to_string());
    }
}

fn wire_request(text: &str) -> WireRequest {
    WireRequest {
        model: "echo-1".to_string(),
        system: "be brief".to_string(),
        messages: vec![Message::User {
            text: text.to_string(),
            images: Vec::new(),
        }],
        tools: Vec::new(),
        effort: None,
        max_output: None,
        cache: None,
        session: None,
        provider: ProviderInfo::default(),
        auth: Auth::default(),
        idle_timeout: None,
    }
}

#[test]
fn a_lua_wire_streams_deltas_and_a_final_answer() {
    let env = init(
        r#"
uji.wire.add("echo", {
  stream = function(request, reply)
    local last = request.messages[#request.messages]
    reply.reasoning("thinking about " .. request.model)
    reply.text("you said: ")
    uji.defer(0.01, function()
      reply.text(last.text)
      reply.done()
    end)
  end,
})
uji.wire.add("caller", {
  stream = function(request, reply)
    reply.done({
      text = "",
      tool_calls = { { id = "t1", name = "read_file", arguments = { path = "a.txt" } } },
      usage = { input = 3, output = 4 },
    })
  end,
})
uji.wire.add("broken", { stream = function() error("no network") end })
uji.wire.add("hang", {
  stream = function(request, reply)
    return function() uji.notify("wire cancelled") end
  end,
})
uji.command.add("wires", function() return table.concat(uji.wire.list(), ",") end)
"#,
    );
    let registry = &env.booted.registry;
    assert_eq!(env.command("wires", ""), "broken,caller,echo,hang");

    let deltas = Arc::new(Deltas::default());
    let answer = registry
        .wire("echo")
        .unwrap()
        .stream(wire_request("hi"), deltas.clone())
        .unwrap()
        .wait_blocking()
        .unwrap();
    assert_eq!(*deltas.text.lock().unwrap(), ["you said: ", "hi"]);
    assert_eq!(*deltas.reasoning.lock().unwrap(), ["thinking about echo-1"]);
    assert_eq!(answer.text, "you said: hi");
    assert_eq!(answer.reasoning.as_deref(), Some("thinking about echo-1"));

    let answer = registry
        .wire("caller")
        .unwrap()
        .stream(wire_request("x"), Arc::new(Deltas::default()))
        .unwrap()
        .wait_blocking()
        .unwrap();
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(answer.tool_calls[0].arguments, r#"{"path":"a.txt"}"#);
    assert_eq!((answer.usage.input, answer.usage.output), (3, 4));

    let failed = registry
        .wire("broken")
        .unwrap()
        .stream(wire_request("x"), Arc::new(Deltas::default()))
        .unwrap()
        .wait_blocking()
        .unwrap_err();
    match failed {
        StreamError::Failure(Failure::Provider { message }) => {
            assert!(message.contains("init.lua:22: no network"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    let running = registry
        .wire("hang")
        .unwrap()
        .stream(wire_request("x"), Arc::new(Deltas::default()))
        .unwrap();
    running.cancel();
    assert!(running.wait_blocking().is_err());
    let notices = env.notices();
    assert!(notices.iter().any(|n| n == "wire cancelled"), "{notices:?}");
}

// ---- the rest of the API ------------------------------------------------------------------------

#[test]
fn json_keymap_commands_and_unavailable_services() {
    let env = init(
        r#"
uji.command.add("json", {
  desc = "JSON round trip",
  handler = function()
    local t = uji.json.decode('{"a":[],"b":{},"c":[1,null,3],"d":null}')
    return uji.json.encode({ empty = {}, arr = uji.json.array({}), list = { 1, 2 }, back = t, n = #t.c, null = uji.json.null })
  end,
})
uji.keymap.add("normal", "<C-x>", function() uji.notify("pressed") end)
uji.keymap.add("insert", "<C-s>", "submit")
uji.command.add("keys", function()
  local out = {}
  for _, b in ipairs(uji.keymap.list()) do
    if b.source == "user" then out[#out + 1] = b.mode .. " " .. b.key .. " " .. type(b.binding) end
  end
  return table.concat(out, "; ")
end)
uji.command.add("model", function()
  local ok, err = pcall(function() uji.model.use("nope/none") end)
  return tostring(ok) .. " " .. tostring(err)
end)
uji.command.add("cancel", function()
  local cancel = uji.defer(10, function() uji.notify("must not fire") end)
  return tostring(cancel()) .. " " .. tostring(cancel())
end)
"#,
    );
    assert_eq!(
        env.command("json", ""),
        r#"{"arr":[],"back":{"a":[],"b":{},"c":[1,null,3],"d":null},"empty":{},"list":[1,2],"n":3,"null":null}"#
    );
    assert_eq!(
        env.booted.registry.command("json").unwrap().description(),
        "JSON round trip"
    );
    assert_eq!(
        env.command("keys", ""),
        "normal <C-s> string; normal <C-x> function",
        "insert is normal; sorted by key"
    );
    assert_eq!(env.command("_key:normal:<C-x>", ""), "");
    assert_eq!(env.notices(), ["pressed"]);
    let model = env.command("model", "");
    assert!(model.starts_with("false "), "{model}");
    assert!(model.contains("init.lua:19: uji.model.use"), "{model}");
    assert_eq!(env.command("cancel", ""), "true false");
}

#[test]
fn init_lua_runs_after_every_other_plugin_whatever_the_search_order() {
    // Tools after Lua in the search path: the config must still see (and
    // here remove) what the tools plugin registers.
    let plugin_path = format!(
        "{}:{}",
        artifact("uji_plugin_tools").display(),
        artifact("uji_plugin_lua").display()
    );
    let env = boot_in(
        &[("init.lua", r#"assert(uji.tool.remove("write_file"))"#)],
        plugin_path,
    );
    let booted = &env.booted;
    assert!(booted.registry.tool("write_file").is_none());
    assert!(booted.registry.tool("read_file").is_some());
    assert_eq!(booted.plugins.loaded.last().unwrap().manifest.name, "lua");
}

#[test]
fn a_lua_tool_that_declares_no_policy_falls_back_to_the_top_level_default() {
    let env = init(
        r#"
uji.tool.add("plain", { run = function() return "ran" end })
uji.tool.add("careful", { policy = "ask", run = function() return "ran" end })
uji.tool.policy({ default = "allow" })
"#,
    );
    let ask = Ask::new();
    assert_eq!(env.call_with("plain", json!({}), &ask).output.text, "ran");
    assert!(
        ask.questions().is_empty(),
        "no declared policy: the top-level default allows"
    );
    assert_eq!(env.call_with("careful", json!({}), &ask).output.text, "ran");
    assert_eq!(
        ask.questions().len(),
        1,
        "a declared ask beats the top-level default"
    );
}

#[test]
fn keymap_add_remove_list_and_actions() {
    let env = init(
        r#"
uji.keymap.add("normal", "<c-L>", "submit")
uji.keymap.add("normal", "<C-o>", "nothing")
uji.keymap.add("confirm", "<S-y>", "confirm_allow")
uji.command.add("keys", function(args)
  if args ~= "" then uji.keymap.remove("normal", args) end
  local out = {}
  for _, b in ipairs(uji.keymap.list()) do
    if b.mode == "normal" and (b.key == "<C-l>" or b.key == "<C-o>") or b.mode == "confirm" and b.key == "Y" then
      out[#out + 1] = b.mode .. " " .. b.key .. " " .. tostring(b.binding) .. " " .. b.source
    end
  end
  return table.concat(out, "; ")
end)
uji.command.add("try", function(args)
  local f = load(args, "=init.lua")
  local ok, err = pcall(f)
  return tostring(ok) .. " " .. tostring(err)
end)
uji.command.add("actions", function()
  local all = uji.keymap.actions()
  return #all .. " " .. all[1].name .. ": " .. all[1].description
end)
"#,
    );
    assert_eq!(
        env.command("keys", ""),
        "confirm Y confirm_allow user; normal <C-l> submit user",
        "canonical keys; nothing unbinds <C-o>"
    );
    assert_eq!(
        env.command("keys", "<C-L>"),
        "confirm Y confirm_allow user; normal <C-l> clear_input default",
        "remove restores the default"
    );
    assert_eq!(
        env.command("keys", "<C-o>"),
        "confirm Y confirm_allow user; normal <C-l> clear_input default; normal <C-o> toggle_details default"
    );
    let user = env.booted.registry.keymap();
    assert_eq!(
        user.len(),
        1,
        "uji keeps the user's bindings only: {user:?}"
    );
    assert_eq!(
        (user[0].mode.as_str(), user[0].key.as_str()),
        ("confirm", "Y")
    );

    let errors = [
        (
            r#"uji.keymap.add("visual", "x", "quit")"#,
            "init.lua:1: uji.keymap.add: no mode named \"visual\"; the modes are normal, suggest, select, confirm",
        ),
        (
            r#"uji.keymap.add("normal", "<C-Entr>", "quit")"#,
            "init.lua:1: uji.keymap.add: \"<C-Entr>\" is not a key: no key named \"Entr\"; a key is one character",
        ),
        (
            r#"uji.keymap.add("normal", "x", "sumbit")"#,
            "init.lua:1: uji.keymap.add: no action named \"sumbit\"; did you mean submit? uji.keymap.actions() lists them all",
        ),
        (
            r#"uji.keymap.add("normal", "x", "zzzzzz")"#,
            "no action named \"zzzzzz\"; uji.keymap.actions() lists the actions",
        ),
        (
            r#"uji.keymap.remove("normal", "ab")"#,
            "init.lua:1: uji.keymap.remove: \"ab\" is not a key",
        ),
    ];
    for (code, expected) in errors {
        let answer = env.command("try", code);
        assert!(
            answer.starts_with("false ") && answer.contains(expected),
            "{code}: {answer}"
        );
    }
    assert_eq!(
        env.command("actions", ""),
        format!(
            "{} nothing: Do nothing (binding it unbinds the key)",
            uji_protocol::keymap::ACTIONS.len()
        )
    );
}

#[test]
fn ui_configure_refuses_an_unknown_field_or_value_at_its_line() {
    let env = boot(&[(
        "init.lua",
        "uji.ui.configure({ notify = \"osc9\" })\nuji.ui.configure({ notfy = \"bell\" })\n",
    )]);
    let notices = env.notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("init.lua:2") && n.contains("unknown field notfy")),
        "{notices:?}"
    );
    let env = boot(&[("init.lua", "uji.ui.configure({ notify = \"siren\" })\n")]);
    assert!(
        env.notices()
            .iter()
            .any(|n| n.contains("init.lua:1") && n.contains("got siren")),
        "{:?}",
        env.notices()
    );
    let env = boot(&[("init.lua", "uji.ui.configure({ notify = \"osc777\" })\n")]);
    assert_eq!(
        env.booted.registry.config("ui"),
        Some(json!({"notify": "osc777"}))
    );
    let env = boot(&[("init.lua", "uji.ui.configure({ vim = \"yes\" })\n")]);
    assert!(
        env.notices()
            .iter()
            .any(|n| n.contains("init.lua:1") && n.contains("vim must be true or false")),
        "{:?}",
        env.notices()
    );
}

#[test]
fn ui_configure_changes_only_the_fields_it_names() {
    let env = boot(&[(
        "init.lua",
        "uji.ui.configure({ notify = \"osc9\" })\nuji.ui.configure({ vim = true, mouse = false })\n",
    )]);
    assert_eq!(
        env.booted.registry.config("ui"),
        Some(json!({"notify": "osc9", "vim": true, "mouse": false}))
    );
}
