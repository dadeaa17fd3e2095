//! The screen as a person starts it: the release `uji` in a pseudo-terminal
//! of 120×40 (the test suite's `Tty`), against the fake model. Start-up to
//! the drawn prompt, peak memory with long sessions on screen, and the CPU
//! an idle screen uses.

use std::path::Path;
use std::time::{Duration, Instant};

use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::tty::{Tty, TtyCommand};

use crate::{Row, median, release_dir, uji, uji_bin};

const PROMPT: &str = "Ask uji anything";

/// A home whose init.lua uses the fake model.
pub(crate) fn home(model: &FakeModel) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    for dir in ["config", "data", "work"] {
        std::fs::create_dir_all(home.path().join(dir)).expect("mkdir");
    }
    let init = format!(
        "require(\"uji.defaults\")\nuji.provider.add({{ id = \"fake\", wire = \"openai-chat\", base_url = \"{}\", models = {{ \"m1\" }} }})\nuji.model.use(\"fake/m1\")\n",
        model.base_url()
    );
    std::fs::write(home.path().join("config/init.lua"), init).expect("init.lua");
    home
}

pub(crate) fn screen_cmd(home: &Path, args: &[&str]) -> TtyCommand {
    let mut cmd = TtyCommand::new(uji_bin())
        .args(args.iter().copied())
        .env("HOME", home)
        .env("UJI_CONFIG_DIR", home.join("config"))
        .env("UJI_DATA_DIR", home.join("data"));
    cmd.cwd = home.join("work");
    cmd
}

pub(crate) fn quit(tty: &mut Tty) {
    tty.press("<C-c>");
    tty.press("<C-c>");
    tty.wait_exit(Duration::from_secs(10));
}

/// Milliseconds from spawning `uji` to its prompt on screen.
pub(crate) fn startup(home: &Path) -> f64 {
    let started = Instant::now();
    let mut tty = Tty::spawn(screen_cmd(home, &[]), 40, 120);
    tty.wait_for_text(PROMPT);
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    quit(&mut tty);
    ms
}

/// An answer about 1 KB long, Markdown like a real one.
fn reply(i: usize) -> String {
    format!(
        "## Step {i}\n\nI looked at `src/module_{i}.rs` and changed **two** things:\n\n\
         1. the parser now returns an error instead of panicking\n\
         2. the tests cover the empty input\n\n```rust\nfn parse(input: &str) -> Result<Ast, Error> {{\n    \
         let Some(end) = input.find(';') else {{ return Err(Error::Unterminated) }};\n    \
         Ok(Ast::new(&input[..end]))\n}}\n```\n\n| file | lines |\n|---|---|\n| src/module_{i}.rs | +12 −3 |\n"
    )
}

/// The id of the newest session of `home` (`uji list`'s first row).
fn newest_session(home: &Path) -> Option<String> {
    let out = uji(home)
        .current_dir(home.join("work"))
        .arg("list")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .nth(1)?
        .split_whitespace()
        .last()
        .map(str::to_string)
}

/// Grows the newest session of `home` to `messages` messages (a prompt and
/// an answer per `uji run`).
fn grow_session(home: &Path, model: &FakeModel, messages: usize, from: usize) {
    for i in from / 2..messages / 2 {
        model.push(Script::sse(
            ChatEvents::new("m1")
                .text(&reply(i), 4)
                .finish("stop")
                .usage(100, 50, 0)
                .done(),
        ));
        let mut cmd = uji(home);
        cmd.current_dir(home.join("work"))
            .env("UJI_PLUGIN_PATH", release_dir())
            .args(["run", &format!("step {i}: fix the next module")]);
        if let Some(id) = (i > 0).then(|| newest_session(home)).flatten() {
            cmd.args(["--resume", &id]);
        }
        let status = cmd
            .stdout(std::process::Stdio::null())
            .status()
            .expect("uji run");
        assert!(status.success(), "uji run failed while growing the session");
    }
}

fn proc_field(pid: u32, file: &str, key: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// User plus system CPU ticks of `pid` so far.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| {
        fields
            .get(n)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

/// Peak and current RSS (MiB) of `uji resume` showing the newest session.
fn resumed_rss_mib(home: &Path, last_words: &str) -> (f64, f64, Tty) {
    let mut tty = Tty::spawn(screen_cmd(home, &["resume"]), 40, 120);
    tty.wait_for_text(last_words);
    // Scroll through the whole session once, as a reader would.
    tty.press("<C-Home>");
    tty.wait_for_text("Step 0");
    tty.press("<C-End>");
    tty.wait_for_text(last_words);
    let pid = tty.pid().expect("uji's pid");
    let peak = proc_field(pid, "status", "VmHWM:") as f64 / 1024.0;
    let now = proc_field(pid, "status", "VmRSS:") as f64 / 1024.0;
    (peak, now, tty)
}

/// Turns in the day's session.
const DAY_TURNS: usize = 40;

/// A working day in one screen: [`DAY_TURNS`] turns, each a command with
/// a long output (3,000 lines, of which the model reads the last 2,000), a
/// read of a 1,000-line file and an answer of about 6 KB of Markdown, typed
/// and answered live. Peak and current RSS (MiB) at the end of the day.
fn day_session(model: &FakeModel) -> (f64, f64) {
    let home = home(model);
    // A window of a million tokens (as the large models have), so the day
    // runs without compaction, whose requests this script does not answer.
    let policy = "uji.tool.policy({ run_command = { allow = { \"seq *\" } } })\n\
        uji.provider.add({ id = \"fake\", models = { { id = \"m1\", context_window = 1000000 } } })\n";
    let init = home.path().join("config/init.lua");
    let mut lua = std::fs::read_to_string(&init).expect("init.lua");
    lua.push_str(policy);
    std::fs::write(&init, lua).expect("init.lua");
    let source: String = (1..=1000)
        .map(|i| format!("fn function_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(home.path().join("work/lib.rs"), source).expect("lib.rs");
    let mut tty = Tty::spawn(screen_cmd(home.path(), &[]), 40, 120);
    tty.wait_for_text(PROMPT);
    for turn in 0..DAY_TURNS {
        let command = serde_json::json!({"command": "seq 1 3000"}).to_string();
        let read = serde_json::json!({"path": "lib.rs"}).to_string();
        model.push(Script::sse(
            ChatEvents::new("m1")
                .tool_call(0, &format!("c{turn}a"), "run_command", &command, 2)
                .tool_call(1, &format!("c{turn}b"), "read_file", &read, 2)
                .finish("tool_calls")
                .usage(2000, 80, 0)
                .done(),
        ));
        let answer: String = (0..6).map(|k| reply(turn * 10 + k)).collect();
        model.push(Script::sse(
            ChatEvents::new("m1")
                .text(&format!("{answer}\nDone with turn {turn}."), 8)
                .finish("stop")
                .usage(4000, 1500, 0)
                .done(),
        ));
        tty.type_text(&format!("turn {turn}: go on with the next module"));
        tty.press("<CR>");
        tty.wait_for_within(Duration::from_secs(60), "the turn's answer", |s| {
            s.contains(&format!("Done with turn {turn}.")) && !s.contains("esc to interrupt")
        });
    }
    let pid = tty.pid().expect("uji's pid");
    let peak = proc_field(pid, "status", "VmHWM:") as f64 / 1024.0;
    let now = proc_field(pid, "status", "VmRSS:") as f64 / 1024.0;
    quit(&mut tty);
    (peak, now)
}

pub fn run() -> Vec<Row> {
    let model = FakeModel::start();
    let home = home(&model);
    let mut starts: Vec<f64> = (0..10).map(|_| startup(home.path())).collect();
    starts.sort_by(f64::total_cmp);

    let mut rows = vec![Row {
        area: "tui",
        what: "start to the prompt drawn (`uji`, 120×40 pty, median of 10)".to_string(),
        value: median(starts),
        unit: "ms",
        target: Some(50.0),
    }];
    let mut grown = 0;
    for messages in [100, 500, 2000] {
        grow_session(home.path(), &model, messages, grown);
        grown = messages;
        let last = format!("Step {}", messages / 2 - 1);
        let (peak, now, mut tty) = resumed_rss_mib(home.path(), &last);
        rows.push(Row {
            area: "tui",
            what: format!("peak RSS, {messages}-message session on screen and scrolled through"),
            value: peak,
            unit: "MiB",
            target: (messages == 500).then_some(30.0),
        });
        rows.push(Row {
            area: "tui",
            what: format!("RSS afterwards, {messages}-message session"),
            value: now,
            unit: "MiB",
            target: None,
        });
        if messages == 500 {
            let pid = tty.pid().expect("uji's pid");
            let before = cpu_ticks(pid);
            std::thread::sleep(Duration::from_secs(10));
            let ticks = cpu_ticks(pid) - before;
            rows.push(Row {
                area: "tui",
                what: "CPU of an idle screen over 10 s (clock ticks of 10 ms)".to_string(),
                value: ticks as f64,
                unit: "ticks",
                target: Some(0.0),
            });
        }
        quit(&mut tty);
    }
    let (peak, now) = day_session(&model);
    rows.push(Row {
        area: "tui",
        what: format!(
            "peak RSS, a day's session lived in the screen ({DAY_TURNS} turns: a 3,000-line command, a 1,000-line read and a 6 KB answer each)"
        ),
        value: peak,
        unit: "MiB",
        target: Some(40.0),
    });
    rows.push(Row {
        area: "tui",
        what: "RSS at the end of that day".to_string(),
        value: now,
        unit: "MiB",
        target: None,
    });
    rows
}
