//! The built-in tools on big inputs, each through `uji tool run` (a fresh
//! uji process: plugin loading, the gate, the tools plugin).

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::{Row, Run, measure_with_stdin, uji};

fn run_tool(home: &Path, work: &Path, name: &str, args: &str) -> Run {
    let mut cmd = uji(home);
    cmd.current_dir(work)
        .args(["tool", "run", name, "-", "--yes"]);
    // Arguments go through stdin: a 10 MB JSON argument exceeds argv limits.
    let args_file = work.join(".bench-args.json");
    std::fs::write(&args_file, args).expect("write args");
    let stdin = Stdio::from(std::fs::File::open(&args_file).expect("open args"));
    let run = measure_with_stdin(&mut cmd, stdin);
    assert!(
        run.success,
        "uji tool run {name} failed: {}",
        String::from_utf8_lossy(&run.stdout)
    );
    run
}

fn write_lines(path: &Path, bytes: usize) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut written = 0;
    let mut i = 0u64;
    while written < bytes {
        let line = format!("line {i:>10}: the quick brown fox jumps over the lazy dog\n");
        written += line.len();
        file.write_all(line.as_bytes()).expect("write");
        i += 1;
    }
    file.write_all(b"the very last line\n").expect("write");
}

fn rows_for(what: &str, runs: Vec<Run>, rows: &mut Vec<Row>) {
    let wall = crate::median(runs.iter().map(|r| r.wall.as_secs_f64()).collect());
    let peak = crate::peak_mib(&runs);
    rows.push(Row {
        area: "tools",
        what: format!("{what}: wall time"),
        value: wall,
        unit: "s",
        target: Some(1.0),
    });
    rows.push(Row {
        area: "tools",
        what: format!("{what}: uji peak RSS"),
        value: peak,
        unit: "MB",
        target: Some(60.0),
    });
}

pub fn run() -> Vec<Row> {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let (h, w) = (home.path(), work.path());
    let mut rows = Vec::new();

    write_lines(&w.join("big50.txt"), 50 << 20);
    let runs = (0..5)
        .map(|_| run_tool(h, w, "read_file", r#"{"path": "big50.txt"}"#))
        .collect();
    rows_for("read_file: first page of a 50 MB file", runs, &mut rows);

    let runs = (0..5)
        .map(|i| {
            write_lines(&w.join("big20.txt"), 20 << 20);
            let _ = i;
            run_tool(
                h,
                w,
                "edit_file",
                r#"{"path": "big20.txt", "old_string": "the very last line", "new_string": "the edited last line"}"#,
            )
        })
        .collect();
    rows_for("edit_file: the last line of a 20 MB file", runs, &mut rows);

    let content = "x".repeat(99) + "\n";
    let args =
        serde_json::json!({"path": "out10.txt", "content": content.repeat(100_000)}).to_string();
    let runs = (0..5)
        .map(|_| run_tool(h, w, "write_file", &args))
        .collect();
    rows_for("write_file: a 10 MB file", runs, &mut rows);

    let runs = (0..5)
        .map(|_| run_tool(h, w, "run_command", r#"{"command": "seq 1 1000000"}"#))
        .collect();
    rows_for("run_command: 1,000,000 lines of output", runs, &mut rows);

    let runs = (0..5)
        .map(|_| {
            run_tool(
                h,
                w,
                "run_command",
                r#"{"command": "head -c 10000000 /dev/zero | tr '\\0' a"}"#,
            )
        })
        .collect();
    rows_for("run_command: one 10 MB line", runs, &mut rows);
    rows
}
