//! Small plugins written in the public uji's plugin style, run end to end:
//! the real binary, the real Lua plugin, `uji run` against the fake model on
//! 127.0.0.1. Each asserts on what uji sent and on what happened on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Output, Stdio};

use serde_json::{Value, json};
use uji_fake_model::{FakeModel, RecordedRequest};
use uji_tests::chat::{answer, call, uji_with_model};
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/qwen/qwen3-coder";
const KEY: &str = "sk-e2e-secret-key-42";

fn run(sandbox: &Sandbox, model: &FakeModel, prompt: &str) -> (Output, String) {
    let output = uji_with_model(sandbox, model, KEY)
        .args(["run", "--yes", "--model", MODEL, prompt])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    (output, format!("{stdout}{stderr}"))
}

fn tool_results(request: &RecordedRequest) -> Vec<String> {
    request.json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A read-only guard as the public uji's readonly plugin was written: a
/// before_tool handler reading `event.name` and `event.arguments`.
const READONLY: &str = r#"
require("uji.builtin.defaults")
local M = {}
function M.setup(opts)
  uji.on("before_tool", function(event)
    if event.name ~= "write_file" and event.name ~= "edit_file" then
      return nil
    end
    local path = event.arguments.path or ""
    for _, root in ipairs(opts.paths) do
      if path:sub(1, #root) == root then
        return { deny = path .. " is read-only (readonly plugin)" }
      end
    end
  end, { name = "readonly", priority = 20 })
end
M.setup({ paths = { "protected/" } })
"#;

#[test]
fn a_readonly_guard_reading_the_public_field_names_denies_the_write() {
    let sandbox = Sandbox::new();
    sandbox.write_init(READONLY);
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "write_file",
            json!({"path": "protected/x.txt", "content": "x"}),
        ))
        .push(call(
            "c2",
            "write_file",
            json!({"path": "open.txt", "content": "y"}),
        ))
        .push(answer("done"));
    let (output, said) = run(&sandbox, &model, "write both");
    assert!(output.status.success(), "{said}");
    assert!(!sandbox.work().join("protected/x.txt").exists(), "{said}");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("open.txt")).unwrap(),
        "y"
    );
    let results = tool_results(&model.requests()[1]);
    assert!(
        results[0].contains("protected/x.txt is read-only (readonly plugin)"),
        "{results:?}"
    );
}

/// Records the events it hears, in order, in a file of the workspace.
const EVENTS: &str = r#"
require("uji.builtin.defaults")
local seen = {}
local function note(line)
  seen[#seen + 1] = line
  uji.fs.write("events.log", table.concat(seen, "\n"))
end
uji.on("message_submitted", function(e) note("message_submitted " .. e.text) end)
uji.on("tool_started", function(e) note("tool_started " .. e.name) end)
uji.on("after_tool", function(e) note("after_tool " .. e.name .. " " .. tostring(#e.content > 0)) end)
uji.on("before_quit", function() note("before_quit") end)
uji.tool.policy({ write_file = { deny = { "secret.txt" } } })
"#;

#[test]
fn message_submitted_tool_started_after_the_decision_and_before_quit_fire_in_order() {
    let sandbox = Sandbox::new();
    sandbox.write_init(EVENTS);
    std::fs::write(sandbox.work().join("a.txt"), "hello").unwrap();
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "write_file",
            json!({"path": "secret.txt", "content": "x"}),
        ))
        .push(call("c2", "read_file", json!({"path": "a.txt"})))
        .push(answer("read it"));
    let (output, said) = run(&sandbox, &model, "look at a.txt");
    assert!(output.status.success(), "{said}");
    let log = std::fs::read_to_string(sandbox.work().join("events.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines,
        [
            "message_submitted look at a.txt",
            "tool_started read_file",
            "after_tool read_file true",
            "before_quit",
        ],
        "the denied write neither started nor ran after_tool (uji runs after_tool over what a tool returned, not over refusals); {said}"
    );
}

/// A skills loader in the public style: uji.config.files finds the skills,
/// uji.context.add announces them in the system prompt, and a skill asked
/// for goes after the user's message for that turn only.
const SKILLS: &str = r#"
require("uji.builtin.defaults")
local skills = {}
for _, file in ipairs(uji.config.files("skills", { project = true })) do
  local name = file.name:gsub("%.md$", "")
  skills[#skills + 1] = { name = name, text = file.text, project = file.project }
end
uji.context.add("skills", function()
  local names = {}
  for _, s in ipairs(skills) do names[#names + 1] = s.name end
  return "Skills you may ask for: " .. table.concat(names, ", ")
end, { priority = 20 })
local pending
uji.on("message_submitted", function(e)
  local wanted = e.text:match("use skill (%w+)")
  for _, s in ipairs(skills) do
    if s.name == wanted then pending = s.text end
  end
end)
uji.context.add("skill", function()
  local text = pending
  pending = nil
  if text then
    return { text = "Skill instructions:\n" .. text, at = "turn" }
  end
end, { priority = 21 })
"#;

#[test]
fn a_skills_loader_puts_its_list_in_the_system_prompt_and_a_skill_after_the_message() {
    let sandbox = Sandbox::new();
    sandbox.write_init(SKILLS);
    let skills = sandbox.config().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(skills.join("release.md"), "Tag, then push the tag.").unwrap();
    let project = sandbox.work().join(".uji/skills");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("lint.md"), "Run the linter first.").unwrap();
    let model = FakeModel::start();
    model.push(answer("ok"));
    let (output, said) = run(&sandbox, &model, "please use skill release");
    assert!(output.status.success(), "{said}");
    let request = &model.requests()[0];
    let messages: Vec<Value> = request.json["messages"].as_array().unwrap().clone();
    let system = messages[0]["content"].as_str().unwrap();
    assert!(
        system.contains("Skills you may ask for: release, lint"),
        "{system}"
    );
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(users[0], "please use skill release");
    assert!(
        users
            .get(1)
            .is_some_and(|u| u.contains("Tag, then push the tag.")),
        "the skill follows the user's message: {users:?}"
    );
}

/// What a status-line plugin reads: the session's facts, during a turn
/// (from a tool's run) and after it (turn_finished).
const FACTS: &str = r#"
require("uji.builtin.defaults")
local during
uji.tool.add("peek", {
  description = "peek", parameters = { type = "object", properties = {} }, policy = "allow",
  run = function()
    during = { state = uji.session.state(), elapsed = uji.session.elapsed() }
    return "peeked"
  end,
})
uji.on("turn_finished", function()
  local usage = uji.session.usage()
  local lines = {
    "during " .. during.state .. " " .. tostring(type(during.elapsed) == "number"),
    "after " .. uji.session.state() .. " " .. tostring(uji.session.elapsed()),
    "usage " .. usage.input .. " " .. usage.output .. " " .. usage.total .. " " .. usage.requests,
    "last " .. usage.last.input .. " " .. usage.last.output,
    "context " .. uji.session.context().used .. " " .. tostring(uji.session.context().window ~= nil),
    "queue " .. #uji.session.queue(),
  }
  for _, m in ipairs(uji.session.messages()) do
    lines[#lines + 1] = m.type .. ":" .. (m.name or "") .. ":" .. m.text
  end
  uji.fs.write("facts.log", table.concat(lines, "\n"))
end)
"#;

#[test]
fn a_status_plugin_reads_the_sessions_facts_during_and_after_a_turn() {
    let sandbox = Sandbox::new();
    sandbox.write_init(FACTS);
    let model = FakeModel::start();
    model
        .push(call("c1", "peek", json!({})))
        .push(answer("all seen"));
    let (output, said) = run(&sandbox, &model, "peek please");
    assert!(output.status.success(), "{said}");
    let log = std::fs::read_to_string(sandbox.work().join("facts.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    // The fake model's usage: 100 in / 10 out for the call, 120 in (20 of
    // them read from the cache) / 30 out for the answer; uji counts cached
    // input apart from input.
    assert_eq!(lines[0], "during working true", "{log}");
    assert_eq!(lines[1], "after idle nil", "{log}");
    assert_eq!(lines[2], "usage 200 40 260 2", "{log}");
    assert_eq!(lines[3], "last 100 30", "{log}");
    assert!(
        lines[4].starts_with("context ") && lines[4].ends_with(" true"),
        "{log}"
    );
    assert_eq!(lines[5], "queue 0", "{log}");
    assert_eq!(
        &lines[6..],
        [
            "user::peek please",
            "assistant::",
            "tool:peek:peeked",
            "assistant::all seen"
        ],
        "{log}"
    );
}

/// A small HTTP server on 127.0.0.1 for the web plugins: `/search?q=...`
/// answers JSON results, `/lines` three lines in separate writes, anything
/// else 404. Records each request line and body.
fn web_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            let mut length = 0usize;
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header.trim().is_empty() {
                    break;
                }
                let lower = header.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            record.lock().unwrap().push(format!(
                "{} {}",
                first.trim(),
                String::from_utf8_lossy(&body)
            ));
            let path = first.split_whitespace().nth(1).unwrap_or("/").to_string();
            if path.starts_with("/search") {
                let json = r#"{"results":[{"title":"uji docs","url":"https://uji.example/docs","content":"The Lua API"},{"title":"Two","url":"https://two.example","content":null}]}"#;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
                    json.len()
                );
            } else if path == "/lines" {
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n"
                );
                for part in ["one\ntw", "o\n", "three"] {
                    let _ = stream.write_all(part.as_bytes());
                    let _ = stream.flush();
                    std::thread::sleep(std::time::Duration::from_millis(30));
                }
            } else {
                let _ = write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 4\r\nconnection: close\r\n\r\nnope"
                );
            }
        }
    });
    (base, seen)
}

/// A web search tool written as the public uji's websearch plugin is: its
/// run returns the canceller uji.http.request gives and finishes through
/// ctx.done; the JSON is read with nulls = false.
const WEBSEARCH: &str = r#"
require("uji.builtin.defaults")
local base = os.getenv("SEARCH_URL")
uji.tool.add("web_search", {
  description = "Search the web",
  policy = "allow",
  parameters = { type = "object", properties = { query = { type = "string" } }, required = { "query" } },
  subject = function(args) return args.query end,
  run = function(args, ctx)
    return uji.http.request({
      url = base .. "/search?q=" .. args.query:gsub(" ", "+"),
      headers = { accept = "application/json", ["x-token"] = "t1" },
      timeout = 5,
    }, function(response, err)
      if not response then return ctx.done("error: " .. err) end
      if response.status ~= 200 then return ctx.done("error: status " .. response.status) end
      local data = uji.json.decode(response.body, { nulls = false })
      local out = {}
      for i, r in ipairs(data.results) do
        out[#out + 1] = i .. ". " .. r.title .. " <" .. r.url .. "> " .. (r.content or "")
      end
      ctx.done(table.concat(out, "\n") .. "\n(" .. response.headers["content-type"] .. ")")
    end)
  end,
})
uji.tool.add("fetch_lines", {
  description = "Fetch lines", policy = "allow",
  parameters = { type = "object", properties = {} },
  run = function()
    local seen = {}
    local response = uji.http.request({ url = base .. "/lines", on_line = function(l) seen[#seen + 1] = l end })
    local missing, err = uji.http.request({ url = base .. "/missing", method = "post", body = "x=1" })
    local refused, why = uji.http.request({ url = "http://127.0.0.1:9/" })
    return table.concat(seen, ",") .. " | " .. response.body:gsub("\n", "/") .. " | " .. missing.status
      .. " " .. missing.body .. " | " .. tostring(refused) .. " " .. tostring(why ~= nil)
  end,
})
"#;

#[test]
fn a_web_search_plugin_reaches_a_local_server_through_uji_http() {
    let (base, seen) = web_server();
    let sandbox = Sandbox::new();
    sandbox.write_init(WEBSEARCH);
    let model = FakeModel::start();
    model
        .push(call("c1", "web_search", json!({"query": "uji lua"})))
        .push(call("c2", "fetch_lines", json!({})))
        .push(answer("found"));
    let output = uji_with_model(&sandbox, &model, KEY)
        .env("SEARCH_URL", &base)
        .args(["run", "--yes", "--model", MODEL, "search"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let results = tool_results(&model.requests()[2]);
    assert_eq!(
        results[0],
        "1. uji docs <https://uji.example/docs> The Lua API\n2. Two <https://two.example> \n(application/json)",
        "{results:?}"
    );
    assert_eq!(
        results[1], "one,two,three | one/two/three | 404 nope | nil true",
        "{results:?}"
    );
    let seen = seen.lock().unwrap();
    assert!(seen[0].starts_with("GET /search?q=uji+lua "), "{seen:?}");
    assert!(
        seen.iter()
            .any(|r| r.starts_with("POST /missing") && r.ends_with("x=1")),
        "{seen:?}"
    );
}

/// `uji run` cannot ask a person: a confirm is answered no, a select is
/// refused with a message the plugin gets (not a hang).
#[test]
fn dialogs_in_uji_run_answer_no_or_refuse_without_hanging() {
    let sandbox = Sandbox::new();
    sandbox.write_init(
        r#"
require("uji.builtin.defaults")
uji.tool.add("ask_person", {
  description = "d", policy = "allow", parameters = { type = "object", properties = {} },
  run = function()
    local yes = uji.ui.confirm({ title = "Go on?" })
    local choice, why = uji.ui.select({ "a", "b" }, { title = "Which?" })
    return tostring(yes) .. " | " .. tostring(choice) .. " | " .. tostring(why)
  end,
})
"#,
    );
    let model = FakeModel::start();
    model
        .push(call("c1", "ask_person", json!({})))
        .push(answer("ok"));
    let (output, said) = run(&sandbox, &model, "ask");
    assert!(output.status.success(), "{said}");
    let results = tool_results(&model.requests()[1]);
    assert!(results[0].starts_with("false | nil | "), "{results:?}");
    assert!(
        results[0].contains("uji run cannot show dialogs"),
        "{results:?}"
    );
}

/// A stdio MCP client written in Lua on uji.job.start (as the public uji's
/// mcp plugin is): JSON-RPC lines to the test MCP server, the handshake in
/// a task, a tool call that waits for it and for its answer.
const MCP_CLIENT: &str = r#"
require("uji.builtin.defaults")
local server = os.getenv("MCP_SERVER")
local pending, next_id = {}, 0
local ready = uji.promise()
local exited
local job = uji.job.start({
  cmd = { server },
  on_stdout = function(line)
    local ok, message = pcall(uji.json.decode, line, { nulls = false })
    if ok and type(message) == "table" and message.id and pending[message.id] then
      pending[message.id]:resolve(message)
      pending[message.id] = nil
    end
  end,
  on_exit = function(code, reason) exited = code end,
})
local function request(method, params)
  next_id = next_id + 1
  local answer = uji.promise()
  pending[next_id] = answer
  job.send(uji.json.encode({ jsonrpc = "2.0", id = next_id, method = method, params = params }))
  local in_time, message = uji.task.timeout(10, function() return answer:await() end)
  if not in_time then error(method .. " timed out") end
  if message.error then error(method .. ": " .. message.error.message) end
  return message.result
end
uji.task.spawn(function()
  request("initialize", { protocolVersion = "2025-06-18", capabilities = {}, clientInfo = { name = "lua-mcp", version = "0.1" } })
  job.send(uji.json.encode({ jsonrpc = "2.0", method = "notifications/initialized" }))
  local names = {}
  for _, tool in ipairs(request("tools/list", {}).tools) do names[#names + 1] = tool.name end
  ready:resolve(names)
end)
uji.tool.add("mcp_call", {
  description = "Calls a tool of the MCP server",
  policy = "allow",
  parameters = { type = "object", properties = { tool = { type = "string" }, arguments = { type = "object" } }, required = { "tool" } },
  run = function(args)
    local names = ready:await()
    local result = request("tools/call", { name = args.tool, arguments = args.arguments or {} })
    local texts = {}
    for _, part in ipairs(result.content or {}) do
      if part.type == "text" then texts[#texts + 1] = part.text end
    end
    return table.concat(texts, "\n") .. " (tools: " .. #names .. ", error: " .. tostring(result.isError == true) .. ")"
  end,
})
uji.on("before_quit", function() job.stop() end)
"#;

#[test]
fn a_stdio_mcp_client_in_lua_talks_to_a_real_server_through_uji_job() {
    let sandbox = Sandbox::new();
    sandbox.write_init(MCP_CLIENT);
    let server = uji_tests::uji_bin().with_file_name("uji-test-mcp-server");
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "mcp_call",
            json!({"tool": "echo", "arguments": {"text": "over stdio"}}),
        ))
        .push(call("c2", "mcp_call", json!({"tool": "fail"})))
        .push(answer("done"));
    let output = uji_with_model(&sandbox, &model, KEY)
        .env("MCP_SERVER", &server)
        .args(["run", "--yes", "--model", MODEL, "use the server"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let first = tool_results(&model.requests()[1]);
    assert!(
        first[0].starts_with("echo: over stdio (tools: ") && first[0].ends_with("error: false)"),
        "{first:?}"
    );
    let listed = first[0]
        .split("tools: ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    assert!(
        listed.parse::<usize>().unwrap() >= 5,
        "tools/list answered: {first:?}"
    );
    let second = tool_results(&model.requests()[2]);
    assert_eq!(
        second[1],
        format!("it broke (tools: {listed}, error: true)")
    );
}
