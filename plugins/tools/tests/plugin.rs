//! Tests of the plugin as a whole. Helpers outside `#[test]` functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::{Value, json};
use uji_plugin_tools::{
    EditFile, JobOutput, ReadFile, RunCommand, StopJob, ToolsPlugin, WriteFile,
};
use uji_sdk::{Plugin, Tool};

#[test]
fn plugin_identity() {
    assert_eq!(ToolsPlugin::NAME, "tools");
    assert_eq!(ToolsPlugin::VERSION, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        ToolsPlugin::DESCRIPTION,
        "uji's built-in tools: read_file, edit_file, write_file, run_command, job_output, stop_job"
    );
}

#[test]
fn every_tool_has_a_description_and_an_object_schema() {
    let specs = [
        ReadFile.spec(),
        EditFile.spec(),
        WriteFile.spec(),
        RunCommand::default().spec(),
        JobOutput::default().spec(),
        StopJob::default().spec(),
    ];
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "edit_file",
            "write_file",
            "run_command",
            "job_output",
            "stop_job"
        ]
    );
    for spec in &specs {
        assert!(spec.description.len() > 150, "{}", spec.name);
        assert_eq!(spec.parameters["type"], "object");
        for required in spec.parameters["required"].as_array().unwrap() {
            let name = required.as_str().unwrap();
            assert!(
                spec.parameters["properties"][name]["description"].is_string(),
                "{}.{name}",
                spec.name
            );
        }
        // The spec survives the JSON trip to uji.
        let json = serde_json::to_string(spec).unwrap();
        let back: uji_sdk::ToolSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, spec);
    }
}

/// Arguments a confused model might send.
fn odd_arguments() -> Vec<Value> {
    let mut all = non_objects();
    all.extend([
        json!({}),
        json!({"path": null, "command": null}),
        json!({"path": {}, "command": {}, "content": 1, "old_string": [], "new_string": {}}),
        json!({"path": "", "command": ""}),
        json!({"path": "\u{0}", "command": "\u{0}", "content": "", "old_string": "\u{0}", "new_string": ""}),
        json!({"path": "missing/file", "offset": 1e300, "limit": -1e300}),
        json!({"path": "missing/file", "offset": u64::MAX, "limit": i64::MIN}),
        json!({"command": "true", "timeout": 1e300}),
        json!({"command": "true", "timeout": f64::MIN_POSITIVE}),
        json!({"path": ".", "old_string": "a", "new_string": "b", "replace_all": null}),
        json!({"path": "/", "content": "x"}),
        json!({"path": "~", "old_string": "a", "new_string": "b"}),
    ]);
    all
}

fn check<T: Tool + Clone>(tool: T, dir: &std::path::Path) {
    let name = tool.spec().name;
    for args in odd_arguments() {
        let subject = tool.subject(&args);
        assert!(!subject.is_empty());
        let _ = tool.preview(&call(args.clone(), dir));
        let out = run(tool.clone(), args.clone(), dir);
        assert!(!out.text.is_empty(), "{name} {args}");
        if out.is_error {
            assert!(
                out.text.starts_with("error: "),
                "{name} {args}: {}",
                out.text
            );
            assert!(!out.text.contains('\n'), "{name} {args}: {}", out.text);
        }
    }
}

#[test]
fn no_tool_panics_on_odd_arguments() {
    let dir = tmp();
    check(ReadFile, dir.path());
    check(EditFile, dir.path());
    check(WriteFile, dir.path());
    check(RunCommand::default(), dir.path());
    // Nothing odd was written.
    assert!(entries(dir.path()).is_empty());
}
