//! Tests of `write_file`. Helpers outside `#[test]` functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;

use common::*;
use serde_json::json;
use uji_plugin_tools::WriteFile;
use uji_sdk::{DeclaredPolicy, SubjectKind, Tool};

fn write_tool(dir: &std::path::Path, args: serde_json::Value) -> uji_sdk::ToolOutput {
    run(WriteFile, args, dir)
}

#[test]
fn spec_declares_policy_subject_and_display() {
    let spec = WriteFile.spec();
    assert_eq!(spec.name, "write_file");
    assert_eq!(spec.policy, Some(DeclaredPolicy::Ask));
    assert_eq!(spec.subject, SubjectKind::Path);
    assert_eq!(spec.display.verb.as_deref(), Some("Write"));
    assert_eq!(
        spec.display.question.as_deref(),
        Some("Create or overwrite this file?")
    );
    assert_eq!(spec.parameters["required"], json!(["path", "content"]));
}

#[test]
fn subject_is_the_path_as_given_or_the_tool_name() {
    assert_eq!(WriteFile.subject(&json!({"path": "a/b.txt"})), "a/b.txt");
    assert_eq!(WriteFile.subject(&json!({"path": ""})), "write_file");
    assert_eq!(WriteFile.subject(&json!([])), "write_file");
}

#[test]
fn creates_a_file_and_its_parent_directories() {
    let dir = tmp();
    let out = write_tool(
        dir.path(),
        json!({"path": "a/b/c.txt", "content": "one\ntwo\n"}),
    );
    assert_eq!(out.text, "created a/b/c.txt (2 lines)");
    assert!(!out.is_error);
    assert_eq!(out.summary.as_deref(), Some("Wrote 2 lines"));
    // A new file's diff is all of it, added.
    let diff = out.diff.expect("a diff");
    assert_eq!((diff.added, diff.removed), (2, 0));
    assert!(diff.unified.contains("+one\n+two"), "{}", diff.unified);
    assert_eq!(read(dir.path(), "a/b/c.txt"), "one\ntwo\n");
    assert_eq!(entries(&dir.path().join("a/b")), ["c.txt"]);
}

#[test]
fn new_files_get_the_default_mode() {
    let dir = tmp();
    write_tool(dir.path(), json!({"path": "f.txt", "content": "x"}));
    // 0666 minus the umask: at least owner read/write, never executable.
    let m = mode(&dir.path().join("f.txt"));
    assert_eq!(m & 0o600, 0o600);
    assert_eq!(m & 0o111, 0);
}

#[test]
fn overwrites_keeping_permissions_with_a_diff() {
    let dir = tmp();
    let path = write(dir.path(), "f.sh", "echo a\necho b\n");
    set_mode(&path, 0o741);
    let out = write_tool(
        dir.path(),
        json!({"path": "f.sh", "content": "echo a\necho c\n"}),
    );
    assert_eq!(out.text, "overwrote f.sh (2 lines)");
    assert_eq!(read(dir.path(), "f.sh"), "echo a\necho c\n");
    assert_eq!(mode(&path), 0o741);
    let diff = out.diff.unwrap();
    assert_eq!(diff.path, "f.sh");
    assert_eq!((diff.added, diff.removed), (1, 1));
    assert_eq!(
        diff.unified,
        "--- f.sh\n+++ f.sh\n@@ -1,2 +1,2 @@\n echo a\n-echo b\n+echo c\n"
    );
    assert_eq!(out.summary.as_deref(), Some("Wrote 2 lines"));
    assert_eq!(entries(dir.path()), ["f.sh"]);
}

#[test]
fn line_counts() {
    let dir = tmp();
    let cases = [
        ("", "created f0 (0 lines)", "Wrote 0 lines"),
        ("a", "created f1 (1 line)", "Wrote 1 line"),
        ("a\n", "created f2 (1 line)", "Wrote 1 line"),
        ("a\nb", "created f3 (2 lines)", "Wrote 2 lines"),
        ("\n\n", "created f4 (2 lines)", "Wrote 2 lines"),
        ("a\r\nb\r\n", "created f5 (2 lines)", "Wrote 2 lines"),
    ];
    for (i, (content, text, summary)) in cases.into_iter().enumerate() {
        let name = format!("f{i}");
        let out = write_tool(dir.path(), json!({"path": name, "content": content}));
        assert_eq!(out.text, text);
        assert_eq!(out.summary.as_deref(), Some(summary));
        assert_eq!(read(dir.path(), &name), content);
    }
}

#[test]
fn content_is_written_exactly() {
    let dir = tmp();
    let content = "crlf\r\nno final newline ✓";
    write_tool(dir.path(), json!({"path": "f", "content": content}));
    assert_eq!(read(dir.path(), "f"), content);
}

#[test]
fn preview_against_empty_for_a_new_file() {
    let dir = tmp();
    let args = json!({"path": "new/f.txt", "content": "a\nb\n"});
    let diff = WriteFile.preview(&call(args, dir.path())).unwrap();
    assert_eq!(diff.path, "new/f.txt");
    assert_eq!((diff.added, diff.removed), (2, 0));
    assert_eq!(
        diff.unified,
        "--- /dev/null\n+++ new/f.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    );
    // Nothing was created.
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn preview_against_the_current_contents() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\nb\n");
    let args = json!({"path": "f.txt", "content": "a\nc\n"});
    let diff = WriteFile.preview(&call(args.clone(), dir.path())).unwrap();
    assert_eq!((diff.added, diff.removed), (1, 1));
    assert_eq!(read(dir.path(), "f.txt"), "a\nb\n");
    let out = write_tool(dir.path(), args);
    assert_eq!(out.diff.unwrap(), diff);
    assert!(
        WriteFile
            .preview(&call(json!({"path": "f.txt"}), dir.path()))
            .is_none()
    );
}

#[test]
fn directory_and_read_only_targets_are_refused() {
    let dir = tmp();
    fs::create_dir(dir.path().join("d")).unwrap();
    let out = write_tool(dir.path(), json!({"path": "d", "content": "x"}));
    assert_eq!(out.text, "error: d is a directory, not a file");
    assert!(out.is_error);
    let path = write(dir.path(), "ro", "keep");
    set_mode(&path, 0o444);
    let out = write_tool(dir.path(), json!({"path": "ro", "content": "x"}));
    assert_eq!(out.text, "error: ro is read-only");
    assert_eq!(read(dir.path(), "ro"), "keep");
}

#[test]
fn a_file_in_the_way_of_a_parent_directory() {
    let dir = tmp();
    write(dir.path(), "file", "x");
    let out = write_tool(dir.path(), json!({"path": "file/sub.txt", "content": "x"}));
    assert_eq!(out.text, "error: write file/sub.txt: Not a directory");
    assert!(out.is_error);
}

#[test]
fn writes_through_a_symlink_keep_the_link() {
    let dir = tmp();
    write(dir.path(), "target.txt", "old\n");
    symlink("target.txt", dir.path().join("link.txt")).unwrap();
    let out = write_tool(dir.path(), json!({"path": "link.txt", "content": "new\n"}));
    assert_eq!(out.text, "overwrote link.txt (1 line)");
    assert!(
        fs::symlink_metadata(dir.path().join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(dir.path(), "target.txt"), "new\n");
}

#[test]
fn a_failed_write_leaves_no_temporary_file() {
    if is_root() {
        return;
    }
    let dir = tmp();
    let sub = dir.path().join("locked");
    write(dir.path(), "locked/f.txt", "x\n");
    set_mode(&sub, 0o555);
    let out = write_tool(dir.path(), json!({"path": "locked/f.txt", "content": "y"}));
    set_mode(&sub, 0o755);
    assert_eq!(out.text, "error: write locked/f.txt: Permission denied");
    assert_eq!(read(dir.path(), "locked/f.txt"), "x\n");
    assert_eq!(entries(&sub), ["f.txt"]);
}

#[test]
fn bad_arguments_get_one_line_errors() {
    let dir = tmp();
    for args in non_objects() {
        let out = write_tool(dir.path(), args);
        assert_eq!(out.text, "error: arguments must be a JSON object");
    }
    let cases = [
        (
            json!({"content": "x"}),
            "error: `path` is required and must be a non-empty string",
        ),
        (
            json!({"path": "", "content": "x"}),
            "error: `path` is required and must be a non-empty string",
        ),
        (
            json!({"path": "f"}),
            "error: `content` is required and must be a string",
        ),
        (
            json!({"path": "f", "content": ["x"]}),
            "error: `content` is required and must be a string",
        ),
    ];
    for (args, expected) in cases {
        let out = write_tool(dir.path(), args);
        assert_eq!(out.text, expected);
        assert!(out.is_error);
    }
    assert!(entries(dir.path()).is_empty());
}
