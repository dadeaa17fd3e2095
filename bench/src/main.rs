//! uji's benchmarks. Run them all with `bench/run` (release build), which
//! prints a table and, with `--write docs/benchmarks.md`, records it.
//!
//! Every measurement runs the real release `uji` binary in a fresh process:
//! wall time from spawn to exit, and peak RSS from the kernel's accounting of
//! that child (wait4), taken by a small helper process so nothing the bench
//! itself allocates is counted (`measure.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod acp;
mod agents;
mod bounds;
mod context;
mod examples;
mod jobs;
mod lua_runtime;
mod mcp;
mod measure;
mod run;
mod startup;
mod tools;
mod tui_frames;
mod tui_live;
mod web;

pub use measure::{Run, measure, measure_with_stdin};

/// One line of the results table.
pub struct Row {
    pub area: &'static str,
    pub what: String,
    pub value: f64,
    pub unit: &'static str,
    /// Upper bound from the issue that asked for the benchmark.
    pub target: Option<f64>,
}

impl Row {
    fn verdict(&self) -> &'static str {
        match self.target {
            Some(target) if self.value <= target => "ok",
            Some(_) => "OVER",
            None => "",
        }
    }
}

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    if values.is_empty() {
        return f64::NAN;
    }
    values[values.len() / 2]
}

/// The highest peak RSS of `runs`, in MiB.
pub fn peak_mib(runs: &[Run]) -> f64 {
    runs.iter().map(|r| r.peak_rss_kb).max().unwrap_or(0) as f64 / 1024.0
}

/// The directory holding the release `uji` and its plugins.
pub fn release_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().expect("bench dir").to_path_buf()
}

pub fn uji_bin() -> PathBuf {
    let path = release_dir().join("uji");
    assert!(
        path.exists(),
        "{} is missing: run bench/run, which builds the release workspace first",
        path.display()
    );
    path
}

/// A `uji` command isolated from the user's real config and data.
pub fn uji(home: &Path) -> Command {
    let mut cmd = Command::new(uji_bin());
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("UJI_CONFIG_DIR", home.join("config"))
        .env("UJI_DATA_DIR", home.join("data"))
        // Not the bench's own directory: the tools plugin looks through the
        // working directory at start (leftover temporary files), and a
        // checkout with its target/ would make every start slower.
        .current_dir(home)
        .stdin(Stdio::null());
    cmd
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    format!("{cores} cores, {cpu}")
}

fn format_value(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

const TABLE_HEAD: &str = "| area | benchmark | result | target | |\n|---|---|---|---|---|\n";

fn table_line(row: &Row) -> String {
    let target = row
        .target
        .map(|t| format!("≤ {} {}", format_value(t), row.unit))
        .unwrap_or_default();
    format!(
        "| {} | {} | {} {} | {} | {} |\n",
        row.area,
        row.what,
        format_value(row.value),
        row.unit,
        target,
        row.verdict()
    )
}

fn table(rows: &[Row]) -> String {
    let mut out = String::from(TABLE_HEAD);
    for row in rows {
        out.push_str(&table_line(row));
    }
    out
}

/// The table of `old_doc` with `rows` measured again: a row replaces the
/// old row of the same benchmark in place, a new one goes after the last
/// row of its area. Rows not measured this time keep their old numbers.
fn merged_table(old_doc: &str, rows: &[Row]) -> String {
    let cell = |line: &str, n: usize| line.split(" | ").nth(n).map(str::trim).map(String::from);
    // The results table only: the first table of the document (notes
    // below it may hold tables of their own).
    let mut lines: Vec<String> = old_doc
        .lines()
        .skip_while(|l| !l.starts_with("| area |"))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| area |"))
        .map(|l| format!("{l}\n"))
        .collect();
    for row in rows {
        let line = table_line(row);
        let same = lines
            .iter()
            .position(|l| cell(l, 1).as_deref() == Some(row.what.as_str()));
        let area = format!("| {} |", row.area);
        match same {
            Some(i) => lines[i] = line,
            None => match lines.iter().rposition(|l| l.starts_with(&area)) {
                Some(i) => lines.insert(i + 1, line),
                None => lines.push(line),
            },
        }
    }
    let mut out = String::from(TABLE_HEAD);
    out.extend(lines);
    out
}

/// Everything of `doc` after its results table, from the next heading on.
fn after_the_table(doc: &str) -> Option<String> {
    let table = doc.find("| area |")?;
    let next = doc[table..].find("\n## ")? + table + 1;
    Some(doc[next..].to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, report, program, rest @ ..] = args.as_slice()
        && flag == measure::SPAWN_MEASURED
    {
        measure::spawn_measured(Path::new(report), program, rest);
        return;
    }
    let write_to = args
        .iter()
        .position(|a| a == "--write")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    let filter: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--write"))
        .map(|(_, a)| a)
        .collect();

    let mut rows = Vec::new();
    type Area = (&'static str, fn() -> Vec<Row>);
    let areas: [Area; 20] = [
        ("startup", startup::run),
        ("tools", tools::run),
        ("policy", examples::policy),
        ("sandbox", examples::sandbox),
        ("wire", run::wire),
        ("run", run::run),
        ("mcp", mcp::run),
        ("bounds", bounds::run),
        ("edit-bounds", bounds::edits),
        ("lua", examples::lua),
        ("lua-runtime", lua_runtime::run),
        ("tui", tui_frames::run),
        ("tui-live", tui_live::run),
        ("context", context::run),
        ("acp", acp::run),
        ("jobs", jobs::run),
        ("checkpoints", examples::checkpoints),
        ("agents", agents::run),
        ("network", examples::network),
        ("web", web::run),
    ];
    for (area, run) in areas {
        if filter.is_empty() || filter.iter().any(|f| area.contains(f.as_str())) {
            eprintln!("bench: {area}…");
            rows.extend(run());
        }
    }

    let table = table(&rows);
    println!("{table}");
    if let Some(path) = write_to {
        // Measuring some areas only keeps the others' numbers.
        let old = std::fs::read_to_string(&path).ok();
        let table = match &old {
            Some(old) if !filter.is_empty() => merged_table(old, &rows),
            _ => table,
        };
        // What follows the table (dated comparisons, what each row
        // measures) is kept as written; a new document gets the notes.
        let rest = old
            .as_deref()
            .and_then(after_the_table)
            .unwrap_or_else(|| NOTES.to_string());
        let doc = format!(
            "# Benchmarks\n\nThe latest numbers from `bench/run` (release build), on {}.\nRe-run with `bench/run --write docs/benchmarks.md`. Each row runs the real `uji` binary in fresh processes; times are medians, memory is the peak RSS of the `uji` process.\n\n{table}\n{rest}",
            machine(),
        );
        std::fs::write(&path, doc).expect("write results");
        eprintln!("bench: wrote {}", path.display());
    }
    if rows.iter().any(|r| r.verdict() == "OVER") {
        eprintln!("bench: some results are over their target");
    }
}

const NOTES: &str = "## What each row measures\n\nPeak RSS of a child (every row but the TUI's live rows, which read VmHWM) is its `ru_maxrss` from wait4, taken by a fresh copy of the bench binary that spawns and waits for the child (`bench/src/measure.rs`). Linux carries a process's peak RSS across exec, and a child forked straight from the bench started with the bench's own memory: until 2026-12-01 a full `bench/run` reported the bench's size (1171 MiB for the jobs row, right after the in-process TUI frames area) where uji used 25 MiB; rows measured one area at a time were right.\n\n- **load all shipped plugins**: discovery plus dlopen, abi_stable layout checks, handshake and `init` of every plugin next to the binary, as timed inside `uji plugins --json` (median of 20 processes).\n- **`uji --version`**: wall time from spawn to exit (median of 30) and the highest peak RSS seen.\n- **`uji models --all`**: wall time from spawn to exit (median of 30): the provider catalogue parsed and init.lua run by the Lua plugin, the only shipped plugin `uji models` opens (the shipped wires, tools and frontends add no providers; a plugin not shipped with uji is loaded, since it may). Issue 15 measured 10.6 ms on a quiet machine when every plugin was loaded.\n- **tools**: each call is a fresh `uji tool run NAME - --yes` process (arguments on stdin), so the time includes starting uji and loading its plugins; 5 runs, median time, highest peak RSS. Inputs: a 50 MB text file (first page), the last line of a 20 MB file (rewritten before each run), a 10 MB `write_file`, `seq 1 1000000`, and one 10 MB line. The 10 MB `write_file` went from 51.0 MB to 67.8 MB when the ACP plugin began registering its editor before_tool and after_tool handlers at start-up (each handler is handed the whole call, text included, in every uji command); they are now added only when `uji acp` runs with editor_fs on.\n- **wire**: a 50,000-chunk streamed answer from the fake server on 127.0.0.1, through `uji run` end to end, once per wire: Chat Completions (`openrouter/m`), Responses (`openai/gpt-6.2-sol` at `OPENAI_BASE_URL`) and Gemini (`gemini/gemini-3.8-flash` at `GEMINI_BASE_URL`), each in its own streaming format; the row is the CPU time (user + system) of the uji process, median of 5. The parser-only row is `plugins/wire-common/examples/stream_bench.rs`. The Responses parser row is `plugins/openai-responses/examples/responses_stream_bench.rs`: 49,000 `response.output_text.delta` events and a function call in 998 argument deltas. The Gemini parser row is `plugins/gemini/examples/gemini_stream_bench.rs`: 49,000 text events and 999 events with a function call each. First byte (`tests/bench-examples/wire_first_byte.rs WIRE`), per wire: in process, the real wire plugin is handed a built request and a loopback listener records when the request's first byte arrives, then answers in the wire's format (the answer must parse); cold is the first request of the process (runtime start and connect), warm the median of the next 50. The wire rows once read 0.47–0.60 s (session 5, after the ACP, jobs and MCP merges) and were taken for a regression; on a fresh quiet machine the same build and the next one measured Chat Completions 0.27–0.37 s, Responses 0.21–0.27 s and Gemini 0.28–0.31 s over several runs each: those readings were a busy machine, so wire rows are only comparable when taken on a quiet one (`uptime` load near 0).\n- **run**: `uji run` against a zero-latency fake server (release build), 20 runs: (a) a one-text-answer turn; (b) read_file + edit_file + run_command + answer, four requests. The per-round-trip overhead is (b − a) / 3: one more request plus one tool call through the gate. Opening only the wire the run uses took (a) from 18.4 ms and 22.8 MB to 9.4–10.4 ms and 17.2 MB on the machine of 2026-12-01.\n- **lua**: `tests/bench-examples/lua_bench.rs`, in process through the real gate and Lua plugin.\n- **lua, runtime** (`bench/src/lua_runtime.rs`, issue 29): through `uji run --yes` against the zero-latency fake server, a Lua tool times what a plugin does, with `uji.os.clock()`: `uji.job.start({ cmd = { \"true\" } })` to its `on_exit` (median of 100; the tools plugin's `proc.*` services, so the sandbox set-up and the reader thread are in it), and `uji.http.request` of a 2-byte answer from a loopback server (median of 200, waiting in the tool's task) minus the same request made directly by the bench over TCP (median of 200): what going through core's reqwest, the service calls and the hand-over to the Lua thread adds. Loading: `uji models --all` (which opens only the Lua plugin) with an init.lua adding 50 tools, a context provider and a pack (a folder with a module and a plugin file), minus the same with an empty init.lua (medians of 30 processes).\n- **policy decision**: `core/uji-policy/examples/decision_bench.rs`, in process: 1,000 rules (exact, glob, regex) over 10 tools, median over 10 batches of 2,000 decisions; the compound row decides a 10-part `run_command` line, parsing with tree-sitter-bash included (the target is issue 12's 50 µs; six runs on a quiet machine gave 45.8–47.0 µs, one right after a build 50.2 µs: the parse alone is 38–40 µs of it). Issue 26's reading of the line as bash reads it (plain words, redirection words, the wrappers, hidden programs for deny rules) costs about 9% more instructions (callgrind: 11.05 G against 10.16 G for `Policy::decide` over the whole example); side by side on the machine of 2026-12-02 at `uptime` load 0.05–0.5 the old build read 32.8–34.0 µs and the new 35.5–37.3 µs.\n- **tui, frames** (`bench/src/tui_frames.rs`): the TUI plugin's own `App`, in process, fed the events uji sends and drawn into a 120×40 in-memory terminal. Streaming: a 5 MB Markdown answer (prose, lists, code, tables) arrives one character per `delta` event; a frame is drawn every 1,000 characters (the screen draws at most 60 frames a second, whatever the stream's pace) and each frame is timed. Typing: 500 keys into a 10,000-line draft, each followed by its frame.\n- **tui, live** (`bench/src/tui_live.rs`): the release `uji` in a 120×40 pseudo-terminal (the test suite's `Tty`). Start: from spawn to the prompt on screen, median of 10. Memory: a session grown by `uji run` to 100, 500 and 2,000 messages (1 KB Markdown answers with Rust code and a table), opened with `uji resume`, scrolled to the top and back; peak RSS (VmHWM) of the uji process, then its RSS. Idle: CPU ticks of that process over 10 s with the 500-message session on screen. The 500-message row read 27.0 MiB with five shipped plugins; the MCP, ACP, Gemini and Responses plugins took it to 34.3 MiB (the same build measured both on one machine: each library mapped adds its code and its own statics), and since a session opens only the wire and frontend it uses (docs/plugins.md) it reads 29.4–29.6 MiB. A day's session: the same screen, lived: 40 turns typed and answered in one `uji` (a million-token window, so no compaction), each turn a `seq 1 3000` command (allowed by a rule), a read of a 1,000-line file and an answer of about 6 KB of Markdown with code; VmHWM and VmRSS at the end. uji gives the allocator's free pages back when a turn ends (`uji_core::memory`), which is what the \"RSS at the end\" row shows; the peak is reached inside a turn, while a request is built.\n- **bounds** (`bench/src/bounds.rs`, issue 13): `uji run --yes` against the zero-latency fake server, one `run_command` call then an answer, in `--json` and in text mode; the command prints `seq 1 1000000` or one 10 MB line (`head -c 10485760 /dev/zero | tr '\\0' x`). 3 runs, highest peak RSS of the uji process and the largest stdout. Progress is paced to about 10 lines a second and the result bounded, so neither grows with the output. The endless answer: the fake server streams 1 KB text chunks without end, as fast as uji reads them, until uji stops the answer at its 8 MiB cap (3 runs, highest peak RSS). The replace_all rows (`bounds::edits`, area `edit-bounds`, issue 26; target 4× the file plus 64 MiB): one `edit_file` call replacing \"quick\" on every 61-byte line of a 16 MiB and a 64 MiB file (written afresh before each of 3 runs), `uji run --yes --json`, highest peak RSS. Before issue 26 the 16 MiB row read 231 MiB (the whole file split into line tables for one diff, the diff rendered whole, then copied into the result, the event and the session line); the red team measured 483 MiB for 16 MiB and 1.8 GB for 64 MB. Release build, 2026-12-02 (`bench/run edit-bounds`): 49.5 MiB and 145 MiB; a debug build read 71.0 MiB and 166 MiB.\n- **acp** (`bench/src/acp.rs`, issue 16): the release `uji acp` with pipes, against the zero-latency fake server. Initialize: from spawn to the `initialize` answer (uji answers once the session is configured and its models listed), median of 40. A prompt: `session/prompt` sent to the answer `end_turn`, one text answer, in a running process. Per-prompt overhead (the issue's target): that prompt minus the same turn in a `uji run --json` run right after it, from its `session` line (session configured, prompt about to be submitted) to its `done` line (turn finished and saved), the median of 40 such pairs: what each prompt an editor sends costs over uji run's turn, i.e. the JSON-RPC framing, the agent-client-protocol crate's dispatch and the updates. Per-visit overhead: a whole editor visit (spawn, `initialize`, `session/new`, one prompt, stdin closed, exit) minus a `uji run` of the same answer, 40 pairs: what an editor pays once per `uji acp` process on top of the prompt (the crate's connection set-up, `session/new` and its command list, the extra thread hand-offs). Until 2026-12-01 the target was held against this per-visit row (1.70–2.28 ms then); it measures the session, not the prompt, so it is kept without a target. On the machine of 2026-12-01 (a new VM where `uji --version` takes 2.1 ms against 1.2 ms before and every row is slower) three runs gave per-prompt 0.44–0.57 ms and per-visit 2.33–2.78 ms; since sessions open the shipped wires and frontends on demand, per-prompt 0.44–0.57 ms and per-visit 2.48–3.01 ms (initialize 7.3–9.3 ms instead of 12.6–15.8).\n- **mcp** (`bench/src/mcp.rs`, issue 14): the rmcp test server of `tests/mcp-server` configured over stdio. Start-up, as the issue means it (before the first prompt can be sent): the release `uji` screen in a 120×40 pseudo-terminal, from spawn to its prompt, with two servers configured minus with none (medians of 10; floored at zero: the servers start in the background). The same for a one-answer `uji run` against the zero-latency fake server (medians of 20), no target: a headless run waits for its servers' handshakes before the first request, so the model sees their tools, and that wait is the servers' own start-up. A tool call: uji's CPU time (user + system) per call over a turn of 40 calls to one server, the model's turns included.\n- **jobs** (`bench/src/jobs.rs`, issue 17): `uji run --yes` against the zero-latency fake server: the model starts `seq 1 1000000` as a background job, waits in a foreground command until it has ended, reads it with `job_output` and answers; 3 runs, highest peak RSS of the uji process. Starting a job (`plugins/tools/examples/job_start_bench.rs`, in process through the tool as uji calls it): the median of 60 `run_in_background` calls of `echo ready; sleep 30` (each returns at its first line) minus the median of 60 foreground calls of the same command to their first progress line (the same start, sandbox set-up and read; the example also prints a plain `sh -c` start to the first line for scale).\n- **checkpoints** (`core/uji-checkpoint/examples/checkpoint_bench.rs`, issue 31): in process, a workspace of 10,000 files of 20 KB of code-like text in 100 folders (200 MB) and a `.gitignore`d `target/` of 10,000 more that is never entered. The first checkpoint reads, addresses and stores everything; then, after the files' times settle (a file modified within 2 s of its reading is read again), 100 turns each append a line to one file and are checkpointed (the row is the median checkpoint: the walk and stat of 10,000 files, the stat cache, the tree's changes, one file read and stored, a log line); an undo of a turn that rewrote 10 files (planning, the checkpoints before and after, the 10 files written back); and the storage directory's size after all of it over the workspace's.\n- **context** (`bench/src/context.rs`, issue 30): the release `uji` screen in a 120×40 pseudo-terminal on a tree of 1,000 folders of 100 empty files. First matches: from typing `@` to the list's first row on screen (median of 5 sessions). Per key: after the walk has settled, each key of `d0577f042` from being typed to the input showing it (the list is filtered where the key is read, so that frame holds the narrowed list; the list must end on `d0577/f042.rs`); every key is timed, and one not drawn within 2 s counts as 2 s and in the row of late keys (target 0). Until the issue 30 audit a key was timed by the list's first row changing, within 500 ms: the broadest keys, which match every path and leave the first row as it was, were never timed (the table's \"median of 30 keys\" of 45 typed), and a key slower than 500 ms would have been dropped. Loading: `uji models --all` with uji's defaults and 50 skills and 50 command files, over the defaults alone. An image: `uji run --image` of a 4000×3000 PNG over the same run without it.\n- **sandbox** (`plugins/tools/examples/sandbox_setup.rs`, issue 26): in process, 300 spawns of `/bin/true` from a workspace holding `.git/config` and `.git/hooks`, with the config and data directories beneath a writable directory: the median ruleset and mount-plan build in uji plus the median spawn with the sandbox (user and mount namespace, the read-only binds, pins and the tmpfs over the data directory, then Landlock with signal scoping) minus the median plain spawn. Issue 26 measured 0.37–0.42 ms (Landlock alone adds about 0.01 ms; the namespace the rest) at `uptime` load 11 on 2 shared cores while others built; a first run right after a release build read 2.57 ms at load 10.9.\n";

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Benchmarks\n\nintro\n\n| area | benchmark | result | target | |\n|---|---|---|---|---|\n| tui | start | 20.0 ms |  |  |\n| acp | init | 9.00 ms |  |  |\n\n## Issue 28, before and after\n\n| row | before | after |\n|---|---|---|\n| start | 1 | 2 |\n\n## What each row measures\n\nnotes\n";

    #[test]
    fn writing_some_areas_replaces_their_rows_and_keeps_the_sections_below_the_table() {
        let rows = [Row {
            area: "tui",
            what: "start".to_string(),
            value: 21.0,
            unit: "ms",
            target: None,
        }];
        let table = merged_table(DOC, &rows);
        assert_eq!(table.lines().count(), 4, "{table}");
        assert!(table.contains("| tui | start | 21.0 ms"), "{table}");
        assert!(!table.contains("| start | 1 | 2 |"), "{table}");
        let rest = after_the_table(DOC).unwrap();
        assert!(rest.starts_with("## Issue 28, before and after"), "{rest}");
        assert!(
            rest.contains("| start | 1 | 2 |") && rest.contains("notes"),
            "{rest}"
        );
    }
}
