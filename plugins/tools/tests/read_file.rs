//! Tests of `read_file`. Helpers outside `#[test]` functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::io::Write;
use std::time::Instant;

use base64::Engine as _;
use common::*;
use serde_json::json;
use uji_plugin_tools::ReadFile;
use uji_sdk::{DeclaredPolicy, SubjectKind, Tool};

fn numbered(range: std::ops::RangeInclusive<usize>, line: impl Fn(usize) -> String) -> String {
    range.map(|n| format!("{n:>5}| {}\n", line(n))).collect()
}

#[test]
fn spec_declares_policy_subject_and_display() {
    let spec = ReadFile.spec();
    assert_eq!(spec.name, "read_file");
    assert_eq!(spec.policy, Some(DeclaredPolicy::Allow));
    assert_eq!(spec.subject, SubjectKind::Path);
    assert_eq!(spec.display.verb.as_deref(), Some("Read"));
    assert_eq!(spec.display.question.as_deref(), Some("Read this file?"));
    assert_eq!(spec.parameters["required"], json!(["path"]));
    assert_eq!(spec.parameters["properties"]["offset"]["type"], "integer");
    assert!(spec.description.contains("continue with offset"));
}

#[test]
fn subject_is_the_path_as_given_or_the_tool_name() {
    assert_eq!(
        ReadFile.subject(&json!({"path": "src/../a.rs"})),
        "src/../a.rs"
    );
    assert_eq!(ReadFile.subject(&json!({})), "read_file");
    assert_eq!(ReadFile.subject(&json!({"path": 3})), "read_file");
    assert_eq!(ReadFile.subject(&json!(null)), "read_file");
}

#[test]
fn lines_are_numbered_right_aligned_to_five() {
    let dir = tmp();
    write(dir.path(), "f.txt", "alpha\nbeta\n");
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    assert_eq!(out.text, "    1| alpha\n    2| beta\n");
    assert_eq!(out.summary.as_deref(), Some("Read 2 lines"));
    assert!(!out.is_error);
}

#[test]
fn single_line_summary_is_singular() {
    let dir = tmp();
    write(dir.path(), "f.txt", "only");
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    assert_eq!(out.text, "    1| only\n");
    assert_eq!(out.summary.as_deref(), Some("Read 1 line"));
}

#[test]
fn crlf_is_stripped() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\r\nb\r\n");
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    assert_eq!(out.text, "    1| a\n    2| b\n");
}

#[test]
fn offset_and_limit_page_with_a_continuation_line() {
    let dir = tmp();
    let content: String = (1..=10).map(|n| format!("line {n}\n")).collect();
    write(dir.path(), "f.txt", content);
    let out = run(
        ReadFile,
        json!({"path": "f.txt", "offset": 3, "limit": 2}),
        dir.path(),
    );
    assert_eq!(
        out.text,
        "    3| line 3\n    4| line 4\n\n[showed lines 3-4 of 10; continue with offset 5]"
    );
    assert_eq!(out.summary.as_deref(), Some("Read 2 lines"));
}

#[test]
fn last_page_has_no_continuation_line() {
    let dir = tmp();
    let content: String = (1..=10).map(|n| format!("line {n}\n")).collect();
    write(dir.path(), "f.txt", content);
    let out = run(ReadFile, json!({"path": "f.txt", "offset": 9}), dir.path());
    assert_eq!(out.text, "    9| line 9\n   10| line 10\n");
    let out = run(
        ReadFile,
        json!({"path": "f.txt", "offset": 9, "limit": 2}),
        dir.path(),
    );
    assert_eq!(out.text, "    9| line 9\n   10| line 10\n");
}

#[test]
fn total_counts_a_last_line_without_newline() {
    let dir = tmp();
    write(dir.path(), "f.txt", "a\nb\nc");
    let out = run(ReadFile, json!({"path": "f.txt", "limit": 1}), dir.path());
    assert_eq!(
        out.text,
        "    1| a\n\n[showed lines 1-1 of 3; continue with offset 2]"
    );
    let out = run(ReadFile, json!({"path": "f.txt", "offset": 3}), dir.path());
    assert_eq!(out.text, "    3| c\n");
}

#[test]
fn a_page_holds_at_most_2000_lines() {
    let dir = tmp();
    let content: String = (1..=2500).map(|n| format!("{n}\n")).collect();
    write(dir.path(), "f.txt", content);
    let expected = numbered(1..=2000, |n| n.to_string())
        + "\n[showed lines 1-2000 of 2500; continue with offset 2001]";
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    assert_eq!(out.text, expected);
    assert_eq!(out.summary.as_deref(), Some("Read 2000 lines"));
    // A larger limit is capped.
    let out = run(
        ReadFile,
        json!({"path": "f.txt", "limit": 5000}),
        dir.path(),
    );
    assert_eq!(out.text, expected);
    let out = run(
        ReadFile,
        json!({"path": "f.txt", "offset": 2001}),
        dir.path(),
    );
    assert_eq!(out.text, numbered(2001..=2500, |n| n.to_string()));
}

#[test]
fn a_page_stops_before_50_kb() {
    let dir = tmp();
    let line = "x".repeat(1000);
    let content: String = (0..100).map(|_| format!("{line}\n")).collect();
    write(dir.path(), "f.txt", content);
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    // Each row is 1008 bytes: 50 rows fit in 51200 bytes, 51 do not.
    let expected = numbered(1..=50, |_| line.clone())
        + "\n[showed lines 1-50 of 100; continue with offset 51]";
    assert_eq!(out.text, expected);
    let rows = out.text.split("\n\n[").next().unwrap();
    assert!(rows.len() <= 50 * 1024);
    let out = run(ReadFile, json!({"path": "f.txt", "offset": 51}), dir.path());
    assert_eq!(out.text, numbered(51..=100, |_| line.clone()));
}

#[test]
fn long_lines_are_cut_at_2000_bytes() {
    let dir = tmp();
    let long = "y".repeat(3000);
    write(dir.path(), "f.txt", format!("short\n{long}\nafter\n"));
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    assert_eq!(
        out.text,
        format!(
            "    1| short\n    2| {} …[line truncated]\n    3| after\n",
            "y".repeat(2000)
        )
    );
}

#[test]
fn a_line_of_exactly_2000_bytes_with_crlf_is_not_cut() {
    let dir = tmp();
    let line = "z".repeat(2000);
    write(dir.path(), "f.txt", format!("{line}\r\n"));
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    assert_eq!(out.text, format!("    1| {line}\n"));
}

#[test]
fn long_lines_are_cut_at_a_char_boundary() {
    let dir = tmp();
    // 3-byte characters: 2000 bytes would split the 667th.
    write(dir.path(), "f.txt", "€".repeat(1000));
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    assert_eq!(
        out.text,
        format!("    1| {} …[line truncated]\n", "€".repeat(666))
    );
}

#[test]
fn invalid_utf8_is_shown_lossily() {
    let dir = tmp();
    write(dir.path(), "f.txt", b"caf\xe9\n");
    let out = run(ReadFile, json!({"path": "f.txt"}), dir.path());
    assert_eq!(out.text, "    1| caf\u{fffd}\n");
}

#[test]
fn empty_file() {
    let dir = tmp();
    write(dir.path(), "empty.txt", "");
    let out = run(ReadFile, json!({"path": "empty.txt"}), dir.path());
    assert_eq!(out.text, "empty.txt is empty");
    assert!(!out.is_error);
}

#[test]
fn offset_past_the_end() {
    let dir = tmp();
    let content: String = (1..=10).map(|n| format!("{n}\n")).collect();
    write(dir.path(), "f.txt", content);
    let out = run(ReadFile, json!({"path": "f.txt", "offset": 20}), dir.path());
    assert_eq!(
        out.text,
        "error: offset 20 is past the end of f.txt (10 lines)"
    );
    assert!(out.is_error);
    let out = run(ReadFile, json!({"path": "f.txt", "offset": 11}), dir.path());
    assert_eq!(
        out.text,
        "error: offset 11 is past the end of f.txt (10 lines)"
    );
    let out = run(
        ReadFile,
        json!({"path": "f.txt", "offset": u64::MAX}),
        dir.path(),
    );
    assert!(
        out.text
            .starts_with("error: offset 18446744073709551615 is past the end")
    );
}

#[test]
fn directory_is_refused() {
    let dir = tmp();
    fs::create_dir(dir.path().join("sub")).unwrap();
    let out = run(ReadFile, json!({"path": "sub"}), dir.path());
    assert_eq!(out.text, "error: sub is a directory, not a file");
    assert!(out.is_error);
}

#[test]
fn binary_file_is_refused() {
    let dir = tmp();
    write(dir.path(), "bin", b"text then \0 a NUL");
    let out = run(ReadFile, json!({"path": "bin"}), dir.path());
    assert_eq!(out.text, "error: bin looks like a binary file");
    assert!(out.is_error);
}

#[test]
fn nul_after_the_first_8_kb_is_not_checked() {
    let dir = tmp();
    let mut content = "a\n".repeat(5000).into_bytes();
    content.extend_from_slice(b"\0\n");
    write(dir.path(), "late", content);
    let out = run(ReadFile, json!({"path": "late", "limit": 1}), dir.path());
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with("of 5001; continue with offset 2]"));
}

#[test]
fn missing_file_reports_the_os_error() {
    let dir = tmp();
    let out = run(ReadFile, json!({"path": "nope.txt"}), dir.path());
    assert_eq!(out.text, "error: read nope.txt: No such file or directory");
    assert!(out.is_error);
}

#[test]
fn unreadable_file_reports_the_os_error() {
    if is_root() {
        return;
    }
    let dir = tmp();
    let path = write(dir.path(), "secret", "x");
    set_mode(&path, 0o000);
    let out = run(ReadFile, json!({"path": "secret"}), dir.path());
    assert_eq!(out.text, "error: read secret: Permission denied");
}

#[test]
fn fifo_is_refused_without_blocking() {
    let dir = tmp();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let out = run(ReadFile, json!({"path": "pipe"}), dir.path());
    assert_eq!(out.text, "error: pipe is not a regular file");
}

#[test]
fn absolute_and_relative_paths() {
    let dir = tmp();
    let path = write(dir.path(), "sub/f.txt", "x\n");
    let out = run(
        ReadFile,
        json!({"path": path.to_str().unwrap()}),
        dir.path(),
    );
    assert_eq!(out.text, "    1| x\n");
    let out = run(ReadFile, json!({"path": "sub/f.txt"}), dir.path());
    assert_eq!(out.text, "    1| x\n");
    let out = run(ReadFile, json!({"path": "f.txt"}), &dir.path().join("sub"));
    assert_eq!(out.text, "    1| x\n");
}

#[test]
fn tilde_expands_to_home() {
    let Some(home) = std::env::var_os("HOME") else {
        return;
    };
    let Ok(dir) = tempfile::tempdir_in(&home) else {
        return;
    };
    write(dir.path(), "f.txt", "home\n");
    let name = dir.path().file_name().unwrap().to_str().unwrap();
    let elsewhere = tmp();
    let out = run(
        ReadFile,
        json!({"path": format!("~/{name}/f.txt")}),
        elsewhere.path(),
    );
    assert_eq!(out.text, "    1| home\n");
}

#[test]
fn a_50_mb_file_is_paged_fast_and_counted() {
    let dir = tmp();
    let path = dir.path().join("big.txt");
    let line = format!("{}\n", "b".repeat(99));
    let block = line.repeat(10 * 1024); // about 1 MB
    let mut file = fs::File::create(&path).unwrap();
    for _ in 0..50 {
        file.write_all(block.as_bytes()).unwrap();
    }
    drop(file);
    let total = 50 * 10 * 1024;
    let started = Instant::now();
    let out = run(ReadFile, json!({"path": "big.txt", "limit": 3}), dir.path());
    let elapsed = started.elapsed();
    assert_eq!(
        out.text,
        numbered(1..=3, |_| "b".repeat(99))
            + &format!("\n[showed lines 1-3 of {total}; continue with offset 4]")
    );
    assert!(elapsed.as_secs_f64() < 5.0, "took {elapsed:?}");
    // A page deep in the file.
    let out = run(
        ReadFile,
        json!({"path": "big.txt", "offset": total, "limit": 3}),
        dir.path(),
    );
    assert_eq!(out.text, format!("{total:>5}| {}\n", "b".repeat(99)));
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&width.to_be_bytes());
    b.extend_from_slice(&height.to_be_bytes());
    b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    b
}

fn gif(width: u16, height: u16) -> Vec<u8> {
    let mut b = b"GIF89a".to_vec();
    b.extend_from_slice(&width.to_le_bytes());
    b.extend_from_slice(&height.to_le_bytes());
    b.extend_from_slice(&[0, 0, 0, 0x3b]);
    b
}

fn jpeg(width: u16, height: u16) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
    b.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    b.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x11, 0x08]);
    b.extend_from_slice(&height.to_be_bytes());
    b.extend_from_slice(&width.to_be_bytes());
    b.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xFF, 0xD9]);
    b
}

fn webp(chunk: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut b = b"RIFF\0\0\0\0WEBP".to_vec();
    b.extend_from_slice(chunk);
    b.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    b.extend_from_slice(payload);
    b
}

fn image(dir: &std::path::Path, name: &str) -> uji_sdk::ToolOutput {
    run(ReadFile, json!({"path": name}), dir)
}

#[test]
fn png_comes_back_as_an_image_with_its_size() {
    let dir = tmp();
    let bytes = png(3, 2);
    write(dir.path(), "img.png", &bytes);
    let out = image(dir.path(), "img.png");
    assert_eq!(out.text, "img.png is a 3x2 image/png image, attached here.");
    assert!(!out.is_error);
    assert_eq!(out.images.len(), 1);
    let img = &out.images[0];
    assert_eq!(img.media_type, "image/png");
    assert_eq!(img.name.as_deref(), Some("img.png"));
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&img.data)
        .unwrap();
    assert_eq!(decoded, bytes);
}

#[test]
fn gif_and_jpeg_sizes() {
    let dir = tmp();
    write(dir.path(), "a.gif", gif(640, 480));
    let out = image(dir.path(), "a.gif");
    assert_eq!(
        out.text,
        "a.gif is a 640x480 image/gif image, attached here."
    );
    assert_eq!(out.images[0].media_type, "image/gif");

    write(dir.path(), "b.jpg", jpeg(64, 32));
    let out = image(dir.path(), "b.jpg");
    assert_eq!(
        out.text,
        "b.jpg is a 64x32 image/jpeg image, attached here."
    );
    write(dir.path(), "c.JPEG", jpeg(1920, 1080));
    let out = image(dir.path(), "c.JPEG");
    assert_eq!(
        out.text,
        "c.JPEG is a 1920x1080 image/jpeg image, attached here."
    );
}

#[test]
fn webp_sizes_for_all_three_encodings() {
    let dir = tmp();
    // VP8X: 24-bit width-1 and height-1.
    let mut payload = vec![0u8; 4];
    payload.extend_from_slice(&[199, 0, 0, 99, 0, 0]);
    write(dir.path(), "x.webp", webp(b"VP8X", &payload));
    let out = image(dir.path(), "x.webp");
    assert_eq!(
        out.text,
        "x.webp is a 200x100 image/webp image, attached here."
    );

    // VP8L: 14-bit width-1 and height-1 packed after the 0x2f signature.
    write(dir.path(), "l.webp", webp(b"VP8L", &[0x2f, 99, 64, 12, 0]));
    let out = image(dir.path(), "l.webp");
    assert_eq!(
        out.text,
        "l.webp is a 100x50 image/webp image, attached here."
    );

    // VP8 (lossy): frame tag, start code, 14-bit sizes.
    let mut payload = vec![0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a];
    payload.extend_from_slice(&320u16.to_le_bytes());
    payload.extend_from_slice(&240u16.to_le_bytes());
    write(dir.path(), "v.webp", webp(b"VP8 ", &payload));
    let out = image(dir.path(), "v.webp");
    assert_eq!(
        out.text,
        "v.webp is a 320x240 image/webp image, attached here."
    );
    assert_eq!(out.images[0].media_type, "image/webp");
}

#[test]
fn image_with_unreadable_size_is_still_attached() {
    let dir = tmp();
    write(dir.path(), "odd.jpg", [0xFF, 0xD8, 0xFF, 0xD9]);
    let out = image(dir.path(), "odd.jpg");
    assert_eq!(out.text, "odd.jpg is a image/jpeg image, attached here.");
    assert_eq!(out.images.len(), 1);
}

#[test]
fn magic_bytes_decide_over_the_extension() {
    let dir = tmp();
    // A PNG named .jpg is a PNG.
    write(dir.path(), "really-png.jpg", png(5, 7));
    let out = image(dir.path(), "really-png.jpg");
    assert_eq!(
        out.text,
        "really-png.jpg is a 5x7 image/png image, attached here."
    );
    // A text file named .png is read as text.
    write(dir.path(), "notes.png", "just text\n");
    let out = image(dir.path(), "notes.png");
    assert_eq!(out.text, "    1| just text\n");
    assert!(out.images.is_empty());
}

#[test]
fn images_over_5_mb_are_left_out() {
    let dir = tmp();
    let mut bytes = png(10_000, 10_000);
    bytes.resize(6 * 1024 * 1024, 0);
    write(dir.path(), "big.png", &bytes);
    let out = image(dir.path(), "big.png");
    assert_eq!(
        out.text,
        "big.png is a image/png image of 6.0 MB, over the 5 MB limit, so it was left out."
    );
    assert!(out.images.is_empty());
    assert!(!out.is_error);
}

#[test]
fn bad_arguments_get_one_line_errors() {
    let dir = tmp();
    write(dir.path(), "f.txt", "x\n");
    for args in non_objects() {
        let out = run(ReadFile, args.clone(), dir.path());
        assert_eq!(out.text, "error: arguments must be a JSON object", "{args}");
        assert!(out.is_error);
    }
    let path_error = "error: `path` is required and must be a non-empty string";
    for args in [
        json!({}),
        json!({"path": ""}),
        json!({"path": "   "}),
        json!({"path": null}),
        json!({"path": 7}),
        json!({"path": ["f.txt"]}),
    ] {
        assert_eq!(run(ReadFile, args, dir.path()).text, path_error);
    }
    for (name, value) in [
        ("offset", json!(0)),
        ("offset", json!(-3)),
        ("offset", json!(1.5)),
        ("offset", json!("2")),
        ("offset", json!(true)),
        ("limit", json!(0)),
        ("limit", json!(-1)),
        ("limit", json!({})),
    ] {
        let out = run(ReadFile, json!({"path": "f.txt", name: value}), dir.path());
        assert_eq!(out.text, format!("error: `{name}` must be an integer ≥ 1"));
        assert!(out.is_error);
    }
    // A whole float and an explicit null are accepted.
    let out = run(
        ReadFile,
        json!({"path": "f.txt", "offset": 1.0, "limit": null}),
        dir.path(),
    );
    assert_eq!(out.text, "    1| x\n");
}

#[test]
fn a_single_huge_line_is_cut_without_reading_it_whole() {
    let dir = tmp();
    write(dir.path(), "one.txt", "q".repeat(5 * 1024 * 1024));
    let out = run(ReadFile, json!({"path": "one.txt"}), dir.path());
    assert_eq!(
        out.text,
        format!("    1| {} …[line truncated]\n", "q".repeat(2000))
    );
    write(
        dir.path(),
        "two.txt",
        format!("{}\nend\n", "q".repeat(5 * 1024 * 1024)),
    );
    let out = run(ReadFile, json!({"path": "two.txt", "limit": 1}), dir.path());
    assert_eq!(
        out.text,
        format!(
            "    1| {} …[line truncated]\n\n[showed lines 1-1 of 2; continue with offset 2]",
            "q".repeat(2000)
        )
    );
}
