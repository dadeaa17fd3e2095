//! Issue 29's Lua runtime, through `uji run` as a plugin uses it: a Lua
//! tool times `uji.job.start` of `true` to its `on_exit`, and
//! `uji.http.request` to a local server against the same request made
//! directly here; and how long the Lua plugin takes to load an init.lua with
//! 50 tools, a context provider and a pack (`uji models --all` opens only
//! the Lua plugin; measured against an empty init.lua).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use uji_fake_model::FakeModel;

use crate::run::{ok, run_cmd, text_answer, tool_call};
use crate::{Row, measure, median, uji};

const JOBS: usize = 100;
const REQUESTS: usize = 200;
const LOADS: usize = 30;

/// A keep-alive-free HTTP server on 127.0.0.1 answering `ok` to anything.
fn server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let Ok(clone) = stream.try_clone() else {
                continue;
            };
            let mut reader = BufReader::new(clone);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line == "\r\n" {
                    break;
                }
                line.clear();
            }
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        }
    });
    base
}

/// The same request without uji: connect, send, read the whole answer.
fn direct_request_ms(base: &str) -> f64 {
    let address = base.trim_start_matches("http://").to_string();
    let mut samples = Vec::with_capacity(REQUESTS);
    for _ in 0..REQUESTS {
        let started = Instant::now();
        let mut stream = std::net::TcpStream::connect(&address).expect("connect");
        stream
            .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .expect("send");
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    median(samples)
}

const TIMER: &str = r#"
local function median(t) table.sort(t) return t[math.floor(#t / 2) + 1] end
uji.tool.add("time_jobs", {
  description = "d", policy = "allow", parameters = { type = "object", properties = {} },
  run = function(args)
    local samples = {}
    for _ = 1, args.n do
      local p = uji.promise()
      local started = uji.os.clock()
      uji.job.start({ cmd = { "true" }, on_exit = function() p:resolve(uji.os.clock() - started) end })
      samples[#samples + 1] = p:await() * 1000
    end
    return string.format("%.4f", median(samples))
  end,
})
uji.tool.add("time_http", {
  description = "d", policy = "allow", parameters = { type = "object", properties = {} },
  run = function(args)
    local samples = {}
    for _ = 1, args.n do
      local started = uji.os.clock()
      local response = assert(uji.http.request({ url = args.url }))
      assert(response.body == "ok")
      samples[#samples + 1] = (uji.os.clock() - started) * 1000
    end
    return string.format("%.4f", median(samples))
  end,
})
"#;

/// A Lua tool's answer: the number it returned, read from the request the
/// model got next.
fn timed(model: &FakeModel, home: &Path, tool: &str, args: serde_json::Value) -> f64 {
    model
        .push(tool_call("c1", tool, args))
        .push(text_answer("done", 1));
    ok(
        measure(&mut run_cmd(home, home, model, "time it")),
        "lua runtime",
    );
    let body: serde_json::Value =
        serde_json::from_str(&model.last_request().body_text()).expect("request JSON");
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
        .and_then(|m| m["content"].as_str())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

/// Milliseconds `uji models --all` takes with `init` as init.lua (median).
pub(crate) fn load_ms(home: &Path, init: &str) -> f64 {
    std::fs::write(home.join("config/init.lua"), init).expect("init.lua");
    median((0..LOADS).map(|_| load_once(home)).collect())
}

/// Milliseconds one `uji models --all` takes in `home` (its config loaded,
/// the catalogue listed).
pub(crate) fn load_once(home: &Path) -> f64 {
    let started = Instant::now();
    let status = uji(home)
        .args(["models", "--all"])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("uji models");
    assert!(
        status.success(),
        "uji models failed in a Lua load benchmark"
    );
    started.elapsed().as_secs_f64() * 1000.0
}

/// init.lua with 50 tools, a context provider and a pack (a folder with a
/// module and a plugin file).
fn rich_init(home: &Path) -> String {
    let pack = home.join("pack");
    std::fs::create_dir_all(pack.join("lua/benchpack")).expect("pack");
    std::fs::create_dir_all(pack.join("plugin")).expect("pack");
    std::fs::write(
        pack.join("lua/benchpack/init.lua"),
        "return { setup = function() uji.context.add('pack', function() return 'from the pack' end) end }",
    )
    .expect("pack module");
    std::fs::write(pack.join("plugin/one.lua"), "BENCH_PACK_PLUGIN = true").expect("plugin");
    let mut init = String::from("require(\"uji.builtin.defaults\")\n");
    for i in 0..50 {
        init.push_str(&format!(
            "uji.tool.add(\"t{i}\", {{ description = \"tool {i}\", parameters = {{ type = \"object\", properties = {{ x = {{ type = \"string\" }} }} }}, run = function(a) return a.x end }})\n"
        ));
    }
    init.push_str(
        "uji.context.add(\"notes\", function() return \"notes\" end, { priority = 10 })\n",
    );
    init.push_str(&format!(
        "uji.pack.add({{ {{ dir = {:?} }} }})\nrequire(\"benchpack\").setup()\n",
        pack.display().to_string()
    ));
    init
}

pub fn run() -> Vec<Row> {
    let home = tempfile::tempdir().expect("tempdir");
    for dir in ["config", "data"] {
        std::fs::create_dir_all(home.path().join(dir)).expect("mkdir");
    }
    std::fs::write(home.path().join("config/init.lua"), TIMER).expect("init.lua");
    let model = FakeModel::start();
    let job_ms = timed(&model, home.path(), "time_jobs", json!({ "n": JOBS }));
    let base = server();
    // Warm both paths (connection set-up, the first thread) before timing.
    let _ = direct_request_ms(&base);
    let through_uji = timed(
        &model,
        home.path(),
        "time_http",
        json!({ "n": REQUESTS, "url": format!("{base}/") }),
    );
    let direct = direct_request_ms(&base);
    std::thread::sleep(Duration::from_millis(10));
    let empty = load_ms(home.path(), "");
    let rich = load_ms(home.path(), &rich_init(home.path()));
    vec![
        Row {
            area: "lua",
            what: format!("`uji.job.start` of `true` to its `on_exit` (median of {JOBS}, in a Lua tool)"),
            value: job_ms,
            unit: "ms",
            target: Some(5.0),
        },
        Row {
            area: "lua",
            what: format!(
                "`uji.http.request` to a local server, over the same request made directly (medians of {REQUESTS})"
            ),
            value: (through_uji - direct).max(0.0),
            unit: "ms",
            target: Some(2.0),
        },
        Row {
            area: "lua",
            what: "loading an init.lua with 50 tools, a context provider and a pack (`uji models --all`, over an empty init.lua; medians of 30)".to_string(),
            value: (rich - empty).max(0.0),
            unit: "ms",
            target: Some(5.0),
        },
    ]
}
