//! Micro-benchmarks that live next to their code as cargo examples (built by
//! `bench/run`): each prints `name value name value ...` on one line.

use std::collections::HashMap;
use std::process::Command;

use crate::{Row, release_dir};

/// Runs `target/release/examples/<example>` and returns its named numbers.
pub fn numbers(example: &str) -> HashMap<String, f64> {
    numbers_with(example, &[])
}

/// [`numbers`] of the example run with `args`.
pub fn numbers_with(example: &str, args: &[&str]) -> HashMap<String, f64> {
    let path = release_dir().join("examples").join(example);
    let output = Command::new(&path).args(args).output().unwrap_or_else(|e| {
        panic!(
            "{} could not run ({e}); bench/run builds the examples",
            path.display()
        )
    });
    assert!(output.status.success(), "{example} failed");
    let text = String::from_utf8_lossy(&output.stdout);
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .chunks(2)
        .filter_map(|pair| match pair {
            [name, value] => value.parse().ok().map(|v| (name.to_string(), v)),
            _ => None,
        })
        .collect()
}

pub fn policy() -> Vec<Row> {
    let found = numbers("decision_bench");
    vec![
        Row {
            area: "policy",
            what: "decision, 1,000 rules across 10 tools".to_string(),
            value: found.get("policy_decision_us").copied().unwrap_or(f64::NAN),
            unit: "µs",
            target: Some(20.0),
        },
        Row {
            area: "policy",
            what: "decision on a 10-part compound command (parsed with tree-sitter-bash)"
                .to_string(),
            value: found
                .get("compound_10_part_us")
                .copied()
                .unwrap_or(f64::NAN),
            unit: "µs",
            target: Some(50.0),
        },
    ]
}

pub fn lua() -> Vec<Row> {
    let found = numbers("lua_bench");
    vec![
        Row {
            area: "lua",
            what: "round trip of a trivial Lua tool call through the gate".to_string(),
            value: found
                .get("lua_tool_roundtrip_us")
                .copied()
                .unwrap_or(f64::NAN),
            unit: "µs",
            target: Some(50.0),
        },
        Row {
            area: "lua",
            what: "load an init.lua that adds 50 tools and a policy".to_string(),
            value: found.get("init_50_tools_ms").copied().unwrap_or(f64::NAN),
            unit: "ms",
            target: Some(5.0),
        },
    ]
}

pub fn sandbox() -> Vec<Row> {
    let found = numbers("sandbox_setup");
    vec![Row {
        area: "tools",
        what: "run_command: sandbox set-up added to a call (Landlock ruleset, namespace with \
               the protected paths, enforcing both)"
            .to_string(),
        value: found.get("sandbox_setup_ms").copied().unwrap_or(f64::NAN),
        unit: "ms",
        target: Some(2.0),
    }]
}

/// Issue 31's checkpoints, in process (`core/uji-checkpoint/examples/checkpoint_bench.rs`):
/// a workspace of 10,000 files and 200 MB.
pub fn checkpoints() -> Vec<Row> {
    let found = numbers("checkpoint_bench");
    let get = |name: &str| found.get(name).copied().unwrap_or(f64::NAN);
    vec![
        Row {
            area: "checkpoints",
            what: "first checkpoint of a 10,000-file, 200 MB workspace".to_string(),
            value: get("first_ms"),
            unit: "ms",
            target: Some(2000.0),
        },
        Row {
            area: "checkpoints",
            what: "a checkpoint of it with one file changed (median of 100)".to_string(),
            value: get("one_changed_ms"),
            unit: "ms",
            target: Some(20.0),
        },
        Row {
            area: "checkpoints",
            what: "undo of a 10-file turn (plan, checkpoints before and after, restore)"
                .to_string(),
            value: get("undo_10_ms"),
            unit: "ms",
            target: Some(100.0),
        },
        Row {
            area: "checkpoints",
            what: "storage after 100 turns of small edits, over the workspace's size".to_string(),
            value: get("storage_ratio"),
            unit: "×",
            target: Some(2.0),
        },
    ]
}

/// Issue 33: what uji's network proxy adds to one connection of a
/// sandboxed command (`core/uji-core/examples/proxy_bench.rs`).
pub fn network() -> Vec<Row> {
    let found = numbers("proxy_bench");
    let get = |name: &str| found.get(name).copied().unwrap_or(f64::NAN) / 1000.0;
    vec![
        Row {
            area: "network",
            what: "proxy: a plain HTTP request through it, over a direct one (median of 400)"
                .to_string(),
            value: get("plain_added_us"),
            unit: "ms",
            target: Some(1.0),
        },
        Row {
            area: "network",
            what: "proxy: a CONNECT tunnel and a request through it, over a direct one".to_string(),
            value: get("connect_added_us"),
            unit: "ms",
            target: Some(1.0),
        },
    ]
}
