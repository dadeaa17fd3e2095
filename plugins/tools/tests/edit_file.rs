//! Tests of `edit_file`. Helpers outside `#[test]` functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;

use common::*;
use serde_json::json;
use uji_plugin_tools::EditFile;
use uji_sdk::{DeclaredPolicy, SubjectKind, Tool};

fn edit(dir: &std::path::Path, args: serde_json::Value) -> uji_sdk::ToolOutput {
    run(EditFile, args, dir)
}

#[test]
fn spec_declares_policy_subject_and_display() {
    let spec = EditFile.spec();
    assert_eq!(spec.name, "edit_file");
    assert_eq!(spec.policy, Some(DeclaredPolicy::Ask));
    assert_eq!(spec.subject, SubjectKind::Path);
    assert_eq!(spec.display.verb.as_deref(), Some("Update"));
    assert_eq!(spec.display.question.as_deref(), Some("Edit this file?"));
    assert_eq!(
        spec.parameters["required"],
        json!(["path", "old_string", "new_string"])
    );
    assert_eq!(
        spec.parameters["properties"]["replace_all"]["type"],
        "boolean"
    );
}

#[test]
fn subject_is_the_path_as_given_or_the_tool_name() {
    assert_eq!(EditFile.subject(&json!({"path": "~/x.rs"})), "~/x.rs");
    assert_eq!(EditFile.subject(&json!({"old_string": "a"})), "edit_file");
    assert_eq!(EditFile.subject(&json!("x")), "edit_file");
}

#[test]
fn replaces_one_exact_match_and_reports_the_line() {
    let dir = tmp();
    write(dir.path(), "f.txt", "one\ntwo\nthree\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "two", "new_string": "TWO"}),
    );
    assert_eq!(out.text, "edited f.txt at line 2");
    assert!(!out.is_error);
    assert_eq!(read(dir.path(), "f.txt"), "one\nTWO\nthree\n");
    assert_eq!(out.summary.as_deref(), Some("Added 1 line, removed 1 line"));
    let diff = out.diff.unwrap();
    assert_eq!(diff.path, "f.txt");
    assert_eq!((diff.added, diff.removed), (1, 1));
    assert_eq!(
        diff.unified,
        "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    );
}

#[test]
fn diff_has_three_context_lines_and_line_numbers() {
    let dir = tmp();
    let content: String = (1..=20).map(|n| format!("l{n}\n")).collect();
    write(dir.path(), "f.txt", content);
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "l10\n", "new_string": "ten\nTEN\n"}),
    );
    assert_eq!(out.text, "edited f.txt at line 10");
    let diff = out.diff.unwrap();
    assert_eq!((diff.added, diff.removed), (2, 1));
    assert_eq!(
        diff.unified,
        "--- f.txt\n+++ f.txt\n@@ -7,7 +7,8 @@\n l7\n l8\n l9\n-l10\n+ten\n+TEN\n l11\n l12\n l13\n"
    );
    assert_eq!(
        out.summary.as_deref(),
        Some("Added 2 lines, removed 1 line")
    );
}

#[test]
fn first_line_match() {
    let dir = tmp();
    write(dir.path(), "f.txt", "abc");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "a", "new_string": "x"}),
    );
    assert_eq!(out.text, "edited f.txt at line 1");
    assert_eq!(read(dir.path(), "f.txt"), "xbc");
}

#[test]
fn empty_new_string_deletes() {
    let dir = tmp();
    write(dir.path(), "f.txt", "keep\ndrop me\nkeep\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "drop me\n", "new_string": ""}),
    );
    assert_eq!(out.text, "edited f.txt at line 2");
    assert_eq!(read(dir.path(), "f.txt"), "keep\nkeep\n");
    assert_eq!(
        out.summary.as_deref(),
        Some("Added 0 lines, removed 1 line")
    );
}

#[test]
fn identical_strings_are_refused() {
    let dir = tmp();
    write(dir.path(), "f.txt", "x\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "x", "new_string": "x"}),
    );
    assert_eq!(out.text, "error: old_string and new_string are identical");
    assert!(out.is_error);
}

#[test]
fn not_found() {
    let dir = tmp();
    write(dir.path(), "f.txt", "hello world\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "    1| hello", "new_string": "bye"}),
    );
    assert_eq!(
        out.text,
        "error: old_string was not found in f.txt. Read the file again and copy the snippet exactly, without line-number prefixes."
    );
    assert!(out.is_error);
    assert_eq!(read(dir.path(), "f.txt"), "hello world\n");
    assert_eq!(entries(dir.path()), ["f.txt"]);
}

#[test]
fn matching_is_literal() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a.c abc  x\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "a.c", "new_string": "A"}),
    );
    assert_eq!(out.text, "edited f.txt at line 1");
    assert_eq!(read(dir.path(), "f.txt"), "A abc  x\n");
    // No whitespace normalisation.
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "abc x", "new_string": "B"}),
    );
    assert!(out.text.starts_with("error: old_string was not found"));
}

#[test]
fn several_matches_need_replace_all() {
    let dir = tmp();
    write(dir.path(), "f.txt", "x = 1\nx = 1\nx = 1\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "x = 1", "new_string": "x = 2"}),
    );
    assert_eq!(
        out.text,
        "error: old_string matches 3 places in f.txt. Add surrounding lines to make it unique, or pass replace_all: true."
    );
    assert!(out.is_error);
    assert_eq!(read(dir.path(), "f.txt"), "x = 1\nx = 1\nx = 1\n");
    assert_eq!(entries(dir.path()), ["f.txt"]);

    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true}),
    );
    assert_eq!(out.text, "edited f.txt: replaced 3 occurrences");
    assert_eq!(read(dir.path(), "f.txt"), "x = 2\nx = 2\nx = 2\n");
    assert_eq!(
        out.summary.as_deref(),
        Some("Added 3 lines, removed 3 lines")
    );
    assert_eq!(entries(dir.path()), ["f.txt"]);
}

#[test]
fn replace_all_with_one_match_reports_the_line() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\nb\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "b", "new_string": "c", "replace_all": true}),
    );
    assert_eq!(out.text, "edited f.txt at line 2");
}

#[test]
fn matches_are_counted_without_overlap() {
    let dir = tmp();
    write(dir.path(), "f.txt", "aaaa");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "aa", "new_string": "b"}),
    );
    assert!(out.text.starts_with("error: old_string matches 2 places"));
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "aa", "new_string": "b", "replace_all": true}),
    );
    assert_eq!(out.text, "edited f.txt: replaced 2 occurrences");
    assert_eq!(read(dir.path(), "f.txt"), "bb");
}

#[test]
fn crlf_files_keep_crlf_when_the_strings_use_lf() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\r\nb\r\nc\r\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "a\nb\n", "new_string": "a\nx\ny\n"}),
    );
    assert_eq!(out.text, "edited f.txt at line 1");
    assert_eq!(read(dir.path(), "f.txt"), "a\r\nx\r\ny\r\nc\r\n");
    let diff = out.diff.unwrap();
    assert_eq!((diff.added, diff.removed), (2, 1));
    assert!(!diff.unified.contains('\r'));
}

#[test]
fn crlf_strings_match_crlf_files_as_given() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\r\nb\r\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "a\r\nb", "new_string": "b\r\na"}),
    );
    assert_eq!(out.text, "edited f.txt at line 1");
    assert_eq!(read(dir.path(), "f.txt"), "b\r\na\r\n");
}

#[test]
fn lf_files_stay_lf_when_the_strings_use_crlf() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\nb\nc\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "a\r\nb", "new_string": "a\r\nB"}),
    );
    assert_eq!(out.text, "edited f.txt at line 1");
    assert_eq!(read(dir.path(), "f.txt"), "a\nB\nc\n");
}

#[test]
fn permissions_are_kept() {
    let dir = tmp();
    let path = write(dir.path(), "run.sh", "#!/bin/sh\necho hi\n");
    set_mode(&path, 0o750);
    let out = edit(
        dir.path(),
        json!({"path": "run.sh", "old_string": "hi", "new_string": "bye"}),
    );
    assert_eq!(out.text, "edited run.sh at line 2");
    assert_eq!(mode(&path), 0o750);
    set_mode(&path, 0o604);
    edit(
        dir.path(),
        json!({"path": "run.sh", "old_string": "bye", "new_string": "hi"}),
    );
    assert_eq!(mode(&path), 0o604);
    assert_eq!(read(dir.path(), "run.sh"), "#!/bin/sh\necho hi\n");
}

#[test]
fn final_newline_is_kept() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\nb\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "b\n", "new_string": "c"}),
    );
    assert_eq!(out.text, "edited f.txt at line 2");
    assert_eq!(read(dir.path(), "f.txt"), "a\nc\n");

    write(dir.path(), "crlf.txt", "a\r\nb\r\n");
    edit(
        dir.path(),
        json!({"path": "crlf.txt", "old_string": "b\n", "new_string": "c"}),
    );
    assert_eq!(read(dir.path(), "crlf.txt"), "a\r\nc\r\n");
}

#[test]
fn missing_final_newline_stays_missing() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\nb");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "b", "new_string": "c\n"}),
    );
    assert_eq!(out.text, "edited f.txt at line 2");
    assert_eq!(read(dir.path(), "f.txt"), "a\nc");
    edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "c", "new_string": "c\nd"}),
    );
    assert_eq!(read(dir.path(), "f.txt"), "a\nc\nd");
}

#[test]
fn no_temporary_files_are_left() {
    let dir = tmp();
    write(dir.path(), "f.txt", "x\n");
    edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "x", "new_string": "y"}),
    );
    assert_eq!(entries(dir.path()), ["f.txt"]);
    edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "zzz", "new_string": "y"}),
    );
    assert_eq!(entries(dir.path()), ["f.txt"]);
}

#[test]
fn a_failed_write_leaves_the_file_and_no_temporary_file() {
    if is_root() {
        return;
    }
    let dir = tmp();
    let sub = dir.path().join("locked");
    write(dir.path(), "locked/f.txt", "x\n");
    set_mode(&sub, 0o555);
    let out = edit(
        dir.path(),
        json!({"path": "locked/f.txt", "old_string": "x", "new_string": "y"}),
    );
    set_mode(&sub, 0o755);
    assert_eq!(out.text, "error: write locked/f.txt: Permission denied");
    assert!(out.is_error);
    assert_eq!(read(dir.path(), "locked/f.txt"), "x\n");
    assert_eq!(entries(&sub), ["f.txt"]);
}

#[test]
fn read_only_files_are_refused() {
    let dir = tmp();
    let path = write(dir.path(), "ro.txt", "x\n");
    set_mode(&path, 0o444);
    let out = edit(
        dir.path(),
        json!({"path": "ro.txt", "old_string": "x", "new_string": "y"}),
    );
    assert_eq!(out.text, "error: ro.txt is read-only");
    assert_eq!(read(dir.path(), "ro.txt"), "x\n");
}

#[test]
fn edits_through_a_symlink_keep_the_link() {
    let dir = tmp();
    write(dir.path(), "target.txt", "old\n");
    symlink("target.txt", dir.path().join("link.txt")).unwrap();
    let out = edit(
        dir.path(),
        json!({"path": "link.txt", "old_string": "old", "new_string": "new"}),
    );
    assert_eq!(out.text, "edited link.txt at line 1");
    assert!(
        fs::symlink_metadata(dir.path().join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(dir.path(), "target.txt"), "new\n");
}

#[test]
fn missing_file_and_directory() {
    let dir = tmp();
    let out = edit(
        dir.path(),
        json!({"path": "nope.txt", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(
        out.text,
        "error: nope.txt does not exist; use write_file to create a new file"
    );
    fs::create_dir(dir.path().join("d")).unwrap();
    let out = edit(
        dir.path(),
        json!({"path": "d", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(out.text, "error: d is a directory, not a file");
    assert_eq!(entries(dir.path()), ["d"]);
}

#[test]
fn preview_shows_the_diff_without_writing() {
    let dir = tmp();
    write(dir.path(), "f.txt", "one\ntwo\n");
    let args = json!({"path": "f.txt", "old_string": "two", "new_string": "2"});
    let diff = EditFile.preview(&call(args.clone(), dir.path())).unwrap();
    assert_eq!(diff.path, "f.txt");
    assert_eq!((diff.added, diff.removed), (1, 1));
    assert_eq!(
        diff.unified,
        "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    );
    assert_eq!(read(dir.path(), "f.txt"), "one\ntwo\n");
    assert_eq!(entries(dir.path()), ["f.txt"]);
    // The run gives the same diff.
    let out = edit(dir.path(), args);
    assert_eq!(out.diff.unwrap(), diff);
    // Nothing to preview for a call that would fail.
    let bad = json!({"path": "f.txt", "old_string": "zzz", "new_string": "2"});
    assert!(EditFile.preview(&call(bad, dir.path())).is_none());
    assert!(EditFile.preview(&call(json!(null), dir.path())).is_none());
}

#[test]
fn bad_arguments_get_one_line_errors() {
    let dir = tmp();
    write(dir.path(), "f.txt", "x\n");
    for args in non_objects() {
        let out = edit(dir.path(), args);
        assert_eq!(out.text, "error: arguments must be a JSON object");
        assert!(out.is_error);
    }
    let cases = [
        (
            json!({"old_string": "a", "new_string": "b"}),
            "error: `path` is required and must be a non-empty string",
        ),
        (
            json!({"path": "", "old_string": "a", "new_string": "b"}),
            "error: `path` is required and must be a non-empty string",
        ),
        (
            json!({"path": "f.txt", "new_string": "b"}),
            "error: `old_string` is required and must be a non-empty string",
        ),
        (
            json!({"path": "f.txt", "old_string": "", "new_string": "b"}),
            "error: `old_string` is required and must be a non-empty string",
        ),
        (
            json!({"path": "f.txt", "old_string": 1, "new_string": "b"}),
            "error: `old_string` is required and must be a non-empty string",
        ),
        (
            json!({"path": "f.txt", "old_string": "x"}),
            "error: `new_string` is required and must be a string",
        ),
        (
            json!({"path": "f.txt", "old_string": "x", "new_string": null}),
            "error: `new_string` is required and must be a string",
        ),
        (
            json!({"path": "f.txt", "old_string": "x", "new_string": "y", "replace_all": "yes"}),
            "error: `replace_all` must be true or false",
        ),
    ];
    for (args, expected) in cases {
        let out = edit(dir.path(), args.clone());
        assert_eq!(out.text, expected, "{args}");
        assert!(out.is_error);
    }
    assert_eq!(read(dir.path(), "f.txt"), "x\n");
}

#[test]
fn whitespace_only_old_string_is_allowed() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\tb\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "old_string": "\t", "new_string": "    "}),
    );
    assert_eq!(out.text, "edited f.txt at line 1");
    assert_eq!(read(dir.path(), "f.txt"), "a    b\n");
}

#[test]
fn non_utf8_bytes_around_the_match_are_kept() {
    let dir = tmp();
    write(dir.path(), "latin1.txt", b"caf\xe9 = 1\n");
    let out = edit(
        dir.path(),
        json!({"path": "latin1.txt", "old_string": "= 1", "new_string": "= 2"}),
    );
    assert_eq!(out.text, "edited latin1.txt at line 1");
    assert_eq!(
        fs::read(dir.path().join("latin1.txt")).unwrap(),
        b"caf\xe9 = 2\n"
    );
}
