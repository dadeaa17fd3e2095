//! Decision latency with a large policy.
//!
//! `cargo run --release -p uji-policy --example decision_bench`
//!
//! Builds 1,000 rules over 10 tools (exact, glob and regex; ~100 for
//! `run_command`), then times a mix of decisions and, separately, a
//! `run_command` decision on a 10-part compound command. Prints one line:
//! `policy_decision_us <median> compound_10_part_us <median>`, each the median
//! over 10 batches of the mean microseconds per decision.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value, json};
use uji_policy::{Policy, SubjectKind, ToolFacts};

const BATCHES: usize = 10;
const PER_BATCH: usize = 2_000;

/// `n` rules for `tool`, a third each exact, glob and regex, spread over
/// deny/allow/ask.
fn rules_for(n: usize, kind: SubjectKind) -> Value {
    let mut lists: [Vec<Value>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for i in 0..n {
        let rule = match (kind, i % 3) {
            (SubjectKind::Path, 0) => format!("src/module_{i}/file.rs"),
            (SubjectKind::Path, 1) => format!("**/generated_{i}/**/*.rs"),
            (SubjectKind::Path, _) => format!("/secret_{i}\\.(pem|key)$/"),
            (SubjectKind::Command, 0) => format!("tool{i} --check"),
            (SubjectKind::Command, 1) => format!("tool{i} run *"),
            (SubjectKind::Command, _) => format!("/^tool{i}\\s+(-f|--force)/"),
            (SubjectKind::Other, 0) => format!("https://site{i}.example.com/"),
            (SubjectKind::Other, 1) => format!("https://*.site{i}.example.org/*"),
            (SubjectKind::Other, _) => format!("/site{i}\\.evil\\.(com|net)/"),
        };
        // Spread: 1 in 5 deny, 3 in 5 allow, 1 in 5 ask.
        let list = match i % 5 {
            0 => 0,
            4 => 2,
            _ => 1,
        };
        if let Some(l) = lists.get_mut(list) {
            l.push(Value::String(rule));
        }
    }
    let [deny, allow, ask] = lists;
    json!({"deny": deny, "allow": allow, "ask": ask})
}

fn build() -> Policy {
    let mut table = Map::new();
    table.insert("default".into(), json!("ask"));
    // run_command: ~100 realistic-looking rules plus generated ones.
    let mut run = rules_for(88, SubjectKind::Command);
    let extra_allow = [
        "git status",
        "git diff*",
        "git log*",
        "cargo test*",
        "cargo build*",
        "ls*",
        "cat *",
        "grep *",
        "tail*",
        "head*",
        "echo *",
    ];
    if let Some(Value::Array(a)) = run.get_mut("allow") {
        a.extend(extra_allow.iter().map(|s| json!(s)));
    }
    if let Some(Value::Array(d)) = run.get_mut("deny") {
        d.push(json!("/^rm\\s+-rf/"));
        d.push(json!({"pattern": "sudo *", "message": "no sudo here"}));
    }
    table.insert("run_command".into(), run);
    let tools: [(&str, SubjectKind); 9] = [
        ("read_file", SubjectKind::Path),
        ("write_file", SubjectKind::Path),
        ("edit_file", SubjectKind::Path),
        ("list_dir", SubjectKind::Path),
        ("fetch", SubjectKind::Other),
        ("web_search", SubjectKind::Other),
        ("http_post", SubjectKind::Other),
        ("shell_bg", SubjectKind::Command),
        ("task", SubjectKind::Command),
    ];
    for (tool, kind) in tools {
        table.insert(tool.into(), rules_for(100, kind));
    }
    let mut p = Policy::default();
    let problems = p.set_rules(&Value::Object(table), None);
    for problem in problems {
        eprintln!("{problem}");
    }
    p
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Mean microseconds per decision of `facts`, per batch; median of batches.
fn time(policy: &Policy, facts: &[ToolFacts<'_>]) -> f64 {
    // Warm up caches and lazy DFAs.
    for f in facts.iter().cycle().take(PER_BATCH) {
        black_box(policy.decide(black_box(f)));
    }
    let mut per_batch = Vec::with_capacity(BATCHES);
    for _ in 0..BATCHES {
        let start = Instant::now();
        for f in facts.iter().cycle().take(PER_BATCH) {
            black_box(policy.decide(black_box(f)));
        }
        per_batch.push(start.elapsed().as_secs_f64() * 1e6 / PER_BATCH as f64);
    }
    median(per_batch)
}

fn main() {
    let policy = build();
    let cwd: PathBuf = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let cwd: &Path = &cwd;
    let f = |tool, subject, kind| ToolFacts::new(tool, subject, kind, cwd);
    let mix = [
        f("run_command", "git status", SubjectKind::Command),
        f(
            "run_command",
            "cargo test -p uji-policy",
            SubjectKind::Command,
        ),
        f("run_command", "tool30 --check", SubjectKind::Command),
        f("run_command", "rm -rf /", SubjectKind::Command),
        f(
            "run_command",
            "cargo test 2>&1 | tail -20",
            SubjectKind::Command,
        ),
        f("run_command", "unknown thing", SubjectKind::Command),
        f("read_file", "src/module_3/file.rs", SubjectKind::Path),
        f("read_file", "src/lib.rs", SubjectKind::Path),
        f("write_file", "a/generated_4/b/c.rs", SubjectKind::Path),
        f("edit_file", "keys/secret_5.pem", SubjectKind::Path),
        f("list_dir", ".", SubjectKind::Path),
        f("fetch", "https://site0.example.com/", SubjectKind::Other),
        f("fetch", "https://a.site1.example.org/x", SubjectKind::Other),
        f("web_search", "site2.evil.com", SubjectKind::Other),
        f("http_post", "https://nowhere.test/", SubjectKind::Other),
        f("shell_bg", "tool7 run server", SubjectKind::Command),
        f("task", "tool1 run x && tool3 --check", SubjectKind::Command),
        f("undeclared_tool", "x", SubjectKind::Other),
    ];
    let compound = "git status && git diff HEAD~1 | head -50; cargo build --release 2>&1 | \
                    tail -5 && ls -la src || cat README.md; git log --oneline \
                    -5; echo $(tool3 --check)";
    let parts = uji_policy::command_parts(compound).len();
    if parts != 10 {
        eprintln!("compound command has {parts} parts, expected 10");
    }
    let compound_facts = [f("run_command", compound, SubjectKind::Command)];
    if std::env::var_os("DECISION_BENCH_SHOW").is_some() {
        for facts in mix.iter().chain(compound_facts.iter()) {
            eprintln!(
                "{} {:?}: {}",
                facts.tool,
                facts.subject,
                policy.decide(facts)
            );
        }
    }
    let mixed = time(&policy, &mix);
    let compound_us = time(&policy, &compound_facts);
    // The parse alone (tree-sitter and the walk), to see where time goes.
    let mut per_batch = Vec::with_capacity(BATCHES);
    for _ in 0..BATCHES {
        let start = Instant::now();
        for _ in 0..PER_BATCH {
            black_box(uji_policy::command_parts(black_box(compound)));
        }
        per_batch.push(start.elapsed().as_secs_f64() * 1e6 / PER_BATCH as f64);
    }
    let parse_us = median(per_batch);
    println!(
        "policy_decision_us {mixed:.2} compound_10_part_us {compound_us:.2} \
         compound_parse_us {parse_us:.2}"
    );
}
