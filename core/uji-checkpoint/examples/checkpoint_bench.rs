//! Issue 31's checkpoint rows, in process: a workspace of 10,000 files and
//! 200 MB (plus a `.gitignore`d `target/` of 10,000 more that is never
//! read). Prints `name value` pairs on one line for `bench/run`.
//!
//! cargo run --release -p uji-checkpoint --example checkpoint_bench

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Instant;

use uji_checkpoint::{Checkpoints, Limits};

const FILES: usize = 10_000;
const BYTES: usize = 200 * 1024 * 1024;

/// Source-like text: lines that repeat with small differences, as code
/// does, so compression sees what it would see in a repository.
fn content(i: usize, size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size);
    let mut line = 0usize;
    while out.len() < size {
        out.extend_from_slice(
            format!(
                "    let value_{line} = compute({i}, {line}) + offset_{};\n",
                line % 17
            )
            .as_bytes(),
        );
        line += 1;
    }
    out.truncate(size);
    out
}

fn make(root: &Path) {
    let per = BYTES / FILES;
    for i in 0..FILES {
        let dir = root.join(format!("src/m{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i:05}.rs")), content(i, per)).unwrap();
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    for i in 0..FILES {
        let dir = root.join(format!("target/d{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("o{i:05}")), b"built").unwrap();
    }
}

fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() {
            dir_size(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (data, root) = (dir.path().join("data"), dir.path().join("work"));
    make(&root);
    let mut checkpoints = Checkpoints::open(&data, "bench", &root, Limits::default()).unwrap();
    let started = Instant::now();
    checkpoints.checkpoint(1, "first").unwrap();
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    checkpoints.end_turn(1).unwrap();
    // Files the test wrote a moment ago are "racy" (read again until their
    // time is settled); a workspace in use has older files.
    std::thread::sleep(std::time::Duration::from_millis(
        uji_checkpoint::RACY_MS + 100,
    ));
    checkpoints.checkpoint(2, "settle").unwrap();
    checkpoints.end_turn(2).unwrap();
    let mut one_changed = Vec::new();
    for turn in 3..103u64 {
        let n = turn as usize * 7 % FILES;
        let path = root.join(format!("src/m{:03}/f{n:05}.rs", n / 100));
        let started = Instant::now();
        checkpoints.checkpoint(turn, "edit_file").unwrap();
        one_changed.push(started.elapsed().as_secs_f64() * 1000.0);
        let mut text = std::fs::read(&path).unwrap();
        text.extend_from_slice(format!("// turn {turn}\n").as_bytes());
        std::fs::write(&path, text).unwrap();
        checkpoints.end_turn(turn).unwrap();
    }
    // Undo of a 10-file turn.
    let turn = 200;
    checkpoints.checkpoint(turn, "run_command").unwrap();
    for i in 0..10 {
        let path = root.join(format!("src/m{:03}/f{:05}.rs", i, i * 100 + 1));
        std::fs::write(&path, format!("rewritten {i}\n")).unwrap();
    }
    checkpoints.end_turn(turn).unwrap();
    let started = Instant::now();
    let plan = checkpoints.plan_undo().unwrap();
    let applied = checkpoints.apply(&plan, turn, false).unwrap();
    let undo_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(applied.restored.len(), 10);
    let workspace = dir_size(&root.join("src"));
    let storage = dir_size(&data);
    println!(
        "first_ms {first_ms:.1} one_changed_ms {:.2} undo_10_ms {undo_ms:.1} storage_ratio {:.3} workspace_mb {:.1} storage_mb {:.1}",
        median(one_changed),
        storage as f64 / workspace as f64,
        workspace as f64 / 1e6,
        storage as f64 / 1e6,
    );
}
