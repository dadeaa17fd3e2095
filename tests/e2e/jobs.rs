//! Background jobs through `uji run`, the real tools plugin and the fake
//! model: started, read while running and after they end, stopped with
//! their whole tree, moved to the background at a timeout, limited, reported
//! to the model in its next request, stopped when uji ends or is killed,
//! and driven from Lua.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_fake_model::{FakeModel, RecordedRequest};
use uji_tests::chat::{answer, call, uji_with_model};
use uji_tests::scripted::{assert_ok, drive_with_env, of_type};
use uji_tests::{NO_DENY_RULES, Sandbox, text};

const MODEL: &str = "openrouter/test-model";
const KEY: &str = "sk-jobs-test-key";

fn run(sandbox: &Sandbox, model: &FakeModel, prompt: &str) -> Output {
    uji_with_model(sandbox, model, KEY)
        .args(["run", "--yes", "--model", MODEL, prompt])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn run_ok(sandbox: &Sandbox, model: &FakeModel) -> (String, String) {
    let output = run(sandbox, model, "go");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    (stdout, stderr)
}

/// The last tool result a request carried.
fn last_result(request: &RecordedRequest) -> String {
    let messages = request.json["messages"].as_array().unwrap();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    tool["content"].as_str().unwrap().to_string()
}

/// Every user message's text in a request.
fn user_texts(request: &RecordedRequest) -> Vec<String> {
    request.json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn background(id: &str, command: &str) -> uji_fake_model::Script {
    call(
        id,
        "run_command",
        json!({"command": command, "run_in_background": true}),
    )
}

/// Processes still alive (not zombies) that a command of the uji with
/// process id `uji` started: they carry `UJI_COMMAND_ID=<uji>-N`.
fn left_over(uji: u32) -> Vec<i32> {
    let wanted = format!("UJI_COMMAND_ID={uji}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            environ
                .split(|&b| b == 0)
                .any(|v| v.starts_with(wanted.as_bytes()))
                && alive(*pid)
        })
        .collect()
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            state != Some("Z")
        }
        Err(_) => false,
    }
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

/// Waits up to `limit` for `done`.
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// A config with no deny rules (not even uji's defaults): the jobs these
/// tests start use `$$` and `$!`, which are never plain, and under `--yes`
/// a command that is not plain runs only when no deny rule could have
/// matched it (docs/policy.md).
fn no_deny_rules() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_init(NO_DENY_RULES);
    sandbox
}

#[test]
fn a_job_is_read_while_it_runs_and_after_it_exits_and_its_report_reaches_the_model() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    let job = "echo started; while [ ! -e go ]; do sleep 0.05; done; echo finished; exit 3";
    model
        .push(background("c1", job))
        .push(call("c2", "job_output", json!({"id": 1})))
        .push(call(
            "c3",
            "run_command",
            json!({"command": "touch go; sleep 1"}),
        ))
        .push(call("c4", "job_output", json!({"id": "job 1"})))
        .push(answer("done"));
    let (stdout, stderr) = run_ok(&sandbox, &model);
    assert_eq!(stdout, "done\n");
    let requests = model.requests();

    let started = last_result(&requests[1]);
    assert!(
        started.contains("Started job 1 in the background"),
        "{started}"
    );
    assert!(started.contains("Its output so far:\nstarted"), "{started}");

    let running = last_result(&requests[2]);
    assert!(
        running.starts_with("(no new output)\njob 1 is running"),
        "{running}"
    );

    // The job ended while `touch go; sleep 1` ran: its report came with
    // the next request, as a user message after the tool result.
    let report = user_texts(&requests[3])
        .into_iter()
        .find(|t| t.starts_with("[Background job 1"))
        .unwrap_or_else(|| panic!("no report in {}", requests[3].body_text()));
    assert!(
        report.contains("exited with code 3 after")
            && report.contains("Its last 2 lines of 2:]\nstarted\nfinished"),
        "{report}"
    );

    let after = last_result(&requests[4]);
    assert!(
        after.starts_with("finished\njob 1 exited with code 3 after"),
        "{after}"
    );
    assert!(
        stderr.contains("job 1 (`echo started;"),
        "the user is told: {stderr}"
    );
}

#[test]
fn stop_job_kills_the_whole_tree() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    // sh, a child, and a grandchild that left the process group.
    let job = "echo $$ > sh.pid; sleep 300 & echo $! > child.pid; \
               setsid sh -c 'echo $$ > escaped.pid; sleep 301' & \
               while [ ! -s escaped.pid ]; do sleep 0.02; done; echo ready; wait";
    model
        .push(background("c1", job))
        .push(call("c2", "stop_job", json!({"id": 1})))
        .push(call("c3", "job_output", json!({"id": 1})))
        .push(answer("stopped"));
    let output = run(&sandbox, &model, "go");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "stopped\n");
    let requests = model.requests();
    assert!(last_result(&requests[1]).contains("ready"));
    let stopped = last_result(&requests[2]);
    assert!(
        stopped.contains("job 1 stopped by the model after"),
        "{stopped}"
    );
    assert!(last_result(&requests[3]).contains("job 1 stopped by the model"));
    for file in ["sh.pid", "child.pid", "escaped.pid"] {
        let pid = read_pid(&sandbox.work().join(file));
        assert!(!alive(pid), "{file} ({pid}) is still running");
    }
    // A job the model stopped sends no report.
    assert!(
        !requests[3].body_text().contains("[Background job"),
        "{}",
        requests[3].body_text()
    );
}

#[test]
fn a_command_still_running_at_its_timeout_moves_to_the_background() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "run_command",
            json!({"command": "echo before; sleep 2; echo after", "timeout": 1}),
        ))
        .push(call("c2", "job_output", json!({"id": 1})).delay(Duration::from_millis(2500)))
        .push(answer("done"));
    run_ok(&sandbox, &model);
    let requests = model.requests();
    let moved = last_result(&requests[1]);
    assert!(
        moved.starts_with("before\n\n[It was still running at its 1s timeout: it goes on as job 1"),
        "{moved}"
    );
    let after = last_result(&requests[2]);
    assert!(
        after.starts_with("after\njob 1 exited with code 0"),
        "{after}"
    );
}

#[test]
fn a_command_that_only_sleeps_is_killed_at_its_timeout() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "run_command",
            json!({"command": "sleep 30", "timeout": 1}),
        ))
        .push(call("c2", "job_output", json!({"id": 1})))
        .push(answer("done"));
    let output = run(&sandbox, &model, "go");
    let pid = output.status.code();
    assert_eq!(pid, Some(0), "{}", text(&output).1);
    let requests = model.requests();
    assert!(last_result(&requests[1]).contains("error: command timed out after 1s"));
    assert!(
        last_result(&requests[2])
            .contains("there is no job 1: no background job was started in this session"),
        "{}",
        last_result(&requests[2])
    );
}

#[test]
fn the_ninth_job_is_refused_and_a_timeout_then_kills_and_nothing_outlives_uji() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    for i in 1..=9 {
        model.push(background(&format!("c{i}"), "sleep 300 & echo up; wait"));
    }
    model
        .push(call(
            "c10",
            "run_command",
            json!({"command": "echo slow; sleep 5; echo never", "timeout": 1}),
        ))
        .push(answer("done"));
    let child = uji_with_model(&sandbox, &model, KEY)
        .args(["run", "--yes", "--model", MODEL, "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let uji = child.id();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output).1);
    let requests = model.requests();
    for (i, request) in requests.iter().enumerate().take(9).skip(1) {
        assert!(
            last_result(request).contains(&format!("Started job {i} ")),
            "{}",
            last_result(request)
        );
    }
    let refused = last_result(&requests[9]);
    assert!(
        refused.contains(
            "cannot start a background job: 8 background jobs are running, the most uji runs at once"
        ),
        "{refused}"
    );
    let killed = last_result(&requests[10]);
    assert!(
        killed.contains(
            "error: command timed out after 1s and was killed: 8 background jobs were running"
        ),
        "{killed}"
    );
    assert!(!killed.contains("never"));
    assert!(
        eventually(Duration::from_secs(2), || left_over(uji).is_empty()),
        "left running: {:?}",
        left_over(uji)
    );
}

#[test]
fn sigterm_stops_every_job_before_uji_exits() {
    signal_stops_every_job(libc::SIGTERM);
}

#[test]
fn sighup_stops_every_job_before_uji_exits() {
    signal_stops_every_job(libc::SIGHUP);
}

fn signal_stops_every_job(signal: i32) {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(background("c1", "echo one; sleep 300"))
        .push(background(
            "c2",
            "setsid sh -c 'sleep 301' & echo two; wait",
        ))
        .push(answer("late").delay(Duration::from_secs(30)));
    let child = uji_with_model(&sandbox, &model, KEY)
        .args(["run", "--yes", "--model", MODEL, "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let uji = child.id();
    assert!(model.wait_for_requests(3, Duration::from_secs(20)));
    assert!(
        eventually(Duration::from_secs(5), || left_over(uji).len() >= 4),
        "the jobs run: {:?}",
        left_over(uji)
    );
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(uji as i32, signal) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(128 + signal));
    assert!(
        eventually(Duration::from_secs(2), || left_over(uji).is_empty()),
        "left running after signal {signal}: {:?}",
        left_over(uji)
    );
}

#[test]
fn lua_lists_stops_and_configures_jobs() {
    let sandbox = no_deny_rules();
    std::fs::write(
        sandbox.config().join("init.lua"),
        r#"
require("uji.defaults")
uji.jobs.configure({ max = 1, limit = 60 })
uji.tool.add("probe", {
  description = "Lists the jobs and stops the first.",
  policy = "allow",
  run = function()
    local listed = uji.jobs.list()
    local stopped = uji.jobs.stop(listed[1].id)
    local _, bad_max = pcall(uji.jobs.configure, { max = 0 })
    local _, bad_id = pcall(uji.jobs.stop, 42)
    local settings = uji.jobs.configure({ wake = true })
    return uji.json.encode({
      listed = listed, stopped = stopped, bad_max = bad_max, bad_id = bad_id,
      settings = settings,
    })
  end,
})
"#,
    )
    .unwrap();
    let model = FakeModel::start();
    model
        .push(background("c1", "echo hello; sleep 300"))
        .push(background("c2", "sleep 300"))
        .push(call("c3", "probe", json!({})))
        .push(answer("done"));
    run_ok(&sandbox, &model);
    let requests = model.requests();
    assert!(last_result(&requests[1]).contains("Started job 1"));
    let refused = last_result(&requests[2]);
    assert!(
        refused.contains("1 background job is running, the most uji runs at once"),
        "{refused}"
    );
    let probe: Value = serde_json::from_str(&last_result(&requests[3])).unwrap();
    let first = &probe["listed"][0];
    assert_eq!(
        (
            first["id"].as_u64(),
            first["state"].as_str(),
            first["last_line"].as_str()
        ),
        (Some(1), Some("running"), Some("hello"))
    );
    assert_eq!(first["command"], "echo hello; sleep 300");
    assert_eq!(probe["stopped"]["state"], "stopped");
    assert_eq!(probe["stopped"]["by"], "user");
    assert!(
        probe["bad_max"]
            .as_str()
            .unwrap()
            .contains("`max` must be from 1 to 64 jobs, not 0"),
        "{probe}"
    );
    assert!(
        probe["bad_id"]
            .as_str()
            .unwrap()
            .contains("there is no job 42; the jobs are 1"),
        "{probe}"
    );
    assert_eq!(
        probe["settings"],
        json!({"wake": true, "max": 1, "limit": 60})
    );
}

#[test]
fn a_job_uji_was_killed_under_dies_with_it() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(background(
            "c1",
            "echo $$ > job.pid; echo up; exec sleep 300",
        ))
        .push(answer("late").delay(Duration::from_secs(30)));
    let mut child = uji_with_model(&sandbox, &model, KEY)
        .args(["run", "--yes", "--model", MODEL, "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(model.wait_for_requests(2, Duration::from_secs(20)));
    let job = read_pid(&sandbox.work().join("job.pid"));
    assert!(alive(job));
    child.kill().unwrap();
    child.wait().unwrap();
    // PR_SET_PDEATHSIG: the kernel kills the job's leader with uji.
    assert!(
        eventually(Duration::from_secs(3), || !alive(job)),
        "job {job} outlived a killed uji"
    );
}

#[test]
fn a_job_lives_at_most_its_timeout_and_the_model_is_told() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "run_command",
            json!({"command": "echo $$ > job.pid; echo tick; exec sleep 30",
                   "run_in_background": true, "timeout": 1}),
        ))
        .push(call("c2", "job_output", json!({"id": 1})).delay(Duration::from_millis(1800)))
        .push(answer("done"));
    run_ok(&sandbox, &model);
    let requests = model.requests();
    assert!(last_result(&requests[1]).contains("it lives at most 1s"));
    let status = last_result(&requests[2]);
    assert!(
        status.contains("job 1 stopped at the end of its 1s lifetime after 1."),
        "{status}"
    );
    let report = user_texts(&requests[2]).pop().unwrap();
    assert!(
        report.starts_with("[Background job 1 (`echo $$ > job.pid; echo tick; exec sleep 30`) stopped at the end of its 1s lifetime"),
        "{report}"
    );
    assert!(!alive(read_pid(&sandbox.work().join("job.pid"))));
}

#[test]
fn a_command_that_ends_at_once_is_no_job_and_its_result_says_how_it_ended() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(background("c1", "exit 4"))
        .push(call("c2", "run_command", json!({"command": "sleep 0.3"})))
        .push(answer("done"));
    run_ok(&sandbox, &model);
    let requests = model.requests();
    let result = last_result(&requests[1]);
    assert_eq!(result, "(exit code 4)");
    assert!(!requests[2].body_text().contains("[Background job"));
}

// ---- through an interactive frontend (the scripted fixture) -----------------

fn drive_jobs(sandbox: &Sandbox, model: &FakeModel, script: Value) -> Vec<Value> {
    std::fs::write(
        sandbox.config().join("init.lua"),
        format!(
            "uji.model.use(\"{MODEL}\")\n\
             -- The commands use $$, never plain, so no rule or default allows\n\
             -- them; a hook that answers for every part may.\n\
             uji.on(\"before_tool\", function() return {{ allow = true, all_parts = true }} end)\n\
             uji.jobs.configure({{ wake = true }})\n"
        ),
    )
    .unwrap();
    let base_url = model.base_url();
    let (output, events) = drive_with_env(
        sandbox,
        &["--frontend", "scripted"],
        &[
            ("OPENROUTER_API_KEY", KEY),
            ("OPENROUTER_BASE_URL", &base_url),
        ],
        script,
    );
    assert_ok(&output, &events);
    events
}

fn ack<'a>(events: &'a [Value], id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "ack" && e["op_id"] == id)
        .unwrap_or_else(|| panic!("no ack of {id}: {events:#?}"))
}

#[test]
fn a_job_ending_while_the_session_is_idle_wakes_it_with_the_report() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(background("c1", "echo hi; sleep 1; echo bye"))
        .push(answer("it runs"))
        .push(answer("it said bye"));
    let events = drive_jobs(
        &sandbox,
        &model,
        json!([
            {"send": {"id": "m", "type": "user_message", "text": "start it"}},
            {"wait": "turn_finished"},
            {"wait": "job_finished"},
            {"wait": "turn_finished"},
            {"send": {"id": "l", "type": "list_jobs"}},
            {"wait": "ack", "where": {"op_id": "l"}},
        ]),
    );
    let started = of_type(&events, "job_started");
    assert_eq!(started[0]["job"]["id"], 1);
    assert_eq!(started[0]["job"]["command"], "echo hi; sleep 1; echo bye");
    let lines: Vec<&Value> = of_type(&events, "job_output")
        .iter()
        .map(|e| &e["line"])
        .collect();
    assert!(lines.contains(&&json!("bye")), "{lines:?}");
    let finished = of_type(&events, "job_finished");
    assert_eq!(
        (&finished[0]["job"]["state"], &finished[0]["job"]["code"]),
        (&json!("exited"), &json!(0))
    );
    assert!(
        of_type(&events, "notice")
            .iter()
            .any(|n| n["text"] == "job 1 (`echo hi; sleep 1; echo bye`) exited with code 0"),
        "{events:#?}"
    );
    // The wake turn's request carried the report.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let report = user_texts(&requests[2]).pop().unwrap();
    assert!(
        report.starts_with("[Background job 1 (`echo hi; sleep 1; echo bye`) exited with code 0")
            && report.ends_with("hi\nbye"),
        "{report}"
    );
    let jobs = &ack(&events, "l")["result"]["jobs"];
    assert_eq!(
        (&jobs[0]["id"], &jobs[0]["state"]),
        (&json!(1), &json!("exited"))
    );
}

#[test]
fn the_user_moves_a_command_to_the_background_then_stops_it_and_nothing_wakes() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "run_command",
            json!({"command": "echo fg; sleep 300 & wait"}),
        ))
        .push(answer("moved"));
    let events = drive_jobs(
        &sandbox,
        &model,
        json!([
            {"send": {"id": "m", "type": "user_message", "text": "run it"}},
            {"wait": "progress", "where": {"line": "fg"}},
            {"send": {"id": "z", "type": "background"}},
            {"wait": "turn_finished"},
            {"send": {"id": "l", "type": "list_jobs"}},
            {"wait": "ack", "where": {"op_id": "l"}},
            {"send": {"id": "s", "type": "stop_job", "job_id": 1}},
            {"wait": "job_finished"},
            {"wait": "ack", "where": {"op_id": "s"}},
        ]),
    );
    assert_eq!(ack(&events, "z")["result"], json!({"running": 1}));
    let requests = model.requests();
    let moved = last_result(&requests[1]);
    assert!(
        moved.starts_with("fg\n\n[The user moved it to the background after"),
        "{moved}"
    );
    assert_eq!(ack(&events, "l")["result"]["jobs"][0]["state"], "running");
    let stopped = &ack(&events, "s")["result"]["job"];
    assert_eq!(
        (&stopped["state"], &stopped["by"]),
        (&json!("stopped"), &json!("user"))
    );
    // A job the user stopped wakes nothing.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(model.requests().len(), 2);
}

#[test]
fn switching_sessions_stops_the_jobs_of_the_one_left() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(background(
            "c1",
            "echo $$ > job.pid; echo up; exec sleep 300",
        ))
        .push(answer("started"));
    let check = "kill -0 $(cat job.pid) 2>/dev/null && echo alive || echo gone";
    let events = drive_jobs(
        &sandbox,
        &model,
        json!([
            {"send": {"id": "m", "type": "user_message", "text": "go"}},
            {"wait": "turn_finished"},
            {"exec": ["sh", "-c", check]},
            {"send": {"id": "n", "type": "new_session"}},
            {"wait": "ack", "where": {"op_id": "n"}},
            {"exec": ["sh", "-c", check]},
            {"send": {"id": "l", "type": "list_jobs"}},
            {"wait": "ack", "where": {"op_id": "l"}},
        ]),
    );
    let checks: Vec<&Value> = of_type(&events, "fixture_exec");
    let outputs: Vec<String> = checks.iter().map(|e| e.to_string()).collect();
    assert!(
        outputs[0].contains("alive") && outputs[1].contains("gone"),
        "{outputs:?}"
    );
    let jobs = &ack(&events, "l")["result"]["jobs"];
    assert_eq!(
        (&jobs[0]["state"], &jobs[0]["by"]),
        (&json!("stopped"), &json!("uji"))
    );
}

#[test]
fn an_interrupt_stops_the_turn_and_its_command_but_not_the_jobs() {
    let sandbox = no_deny_rules();
    let model = FakeModel::start();
    model
        .push(background("c1", "echo $$ > job.pid; echo up; sleep 300"))
        .push(call(
            "c2",
            "run_command",
            json!({"command": "echo $$ > fg.pid; echo fg; sleep 300"}),
        ));
    let events = drive_jobs(
        &sandbox,
        &model,
        json!([
            {"send": {"id": "m", "type": "user_message", "text": "go"}},
            {"wait": "progress", "where": {"line": "fg"}},
            {"send": {"id": "i", "type": "interrupt"}},
            {"wait": "turn_finished"},
            {"send": {"id": "l", "type": "list_jobs"}},
            {"wait": "ack", "where": {"op_id": "l"}},
            {"exec": ["cat", "job.pid", "fg.pid"]},
        ]),
    );
    let jobs = &ack(&events, "l")["result"]["jobs"];
    assert_eq!(jobs.as_array().unwrap().len(), 1, "{jobs}");
    assert_eq!(jobs[0]["state"], "running");
    let turn = of_type(&events, "turn_finished");
    assert_eq!(turn[0]["interrupted"], true);
    // Then quitting stopped the job too.
    let job = read_pid(&sandbox.work().join("job.pid"));
    let fg = read_pid(&sandbox.work().join("fg.pid"));
    assert!(!alive(job) && !alive(fg));
}
