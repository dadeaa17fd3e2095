//! Whole frames as insta snapshots (`tests/screen/snapshots/`): what a
//! person sees, row by row. A change on screen shows as a snapshot diff to
//! review; `INSTA_UPDATE=always cargo test -p uji-plugin-tui` rewrites them.

use super::*;

fn finished(call_id: &str, name: &str, summary: Option<&str>, is_error: bool) -> UjiEvent {
    UjiEvent::ToolFinished {
        call_id: call_id.into(),
        name: name.into(),
        summary: summary.map(str::to_string),
        diff: None,
        is_error,
    }
}

const ALLOWED: (GateDecision, &str) = (GateDecision::Allow, "rule");

/// The screen as text, uji's version written as `*`s of its width so the
/// snapshots outlive a release and the header's box stays aligned.
fn frame(s: &mut Screen) -> String {
    let version = env!("CARGO_PKG_VERSION");
    s.text().replace(version, &"*".repeat(version.len()))
}

/// The transcript (a message, a command with its output, an edit with its
/// diff, an answer in Markdown), the input and the status line.
#[test]
fn a_working_frame() {
    let mut s = Screen::new(60, 30);
    let edit = diff("notes.txt", "@@ -1 +1 @@\n-hello world\n+goodbye world\n");
    s.event(message(1, user("fix the greeting")))
        .event(tool_started(
            "c1",
            ("run_command", "Shell"),
            "cat notes.txt",
            ALLOWED,
        ))
        .event(finished(
            "c1",
            "run_command",
            Some("1 line, exit code 0, 0.0s"),
            false,
        ))
        .event(message(
            2,
            tool_result("c1", "run_command", "hello world", None),
        ))
        .event(tool_started(
            "c2",
            ("edit_file", "Update"),
            "notes.txt",
            ALLOWED,
        ))
        .event(UjiEvent::ToolFinished {
            call_id: "c2".into(),
            name: "edit_file".into(),
            summary: None,
            diff: Some(edit),
            is_error: false,
        })
        .event(delta("Changed **hello** to `goodbye`:\n\n- one file\n"))
        .event(usage(2100, 90, 2100));
    s.type_text("thanks");
    insta::assert_snapshot!(frame(&mut s));
}

/// A new session opens with the header: version, directory, model, hints.
#[test]
fn the_header_of_a_new_session() {
    let mut s = Screen::new(70, 14);
    insta::assert_snapshot!(frame(&mut s));
}

/// Narrow, the header drops its box and cuts its lines.
#[test]
fn the_header_at_twenty_columns() {
    let mut s = Screen::new(20, 12);
    insta::assert_snapshot!(frame(&mut s));
}

/// With no provider set up, the header says how to add one.
#[test]
fn the_header_without_a_model_points_to_login() {
    let mut s = Screen::new(70, 12);
    let UjiEvent::SessionConfigured(mut configured) = configured(vec![], vec![]) else {
        unreachable!()
    };
    configured.model = None;
    s.event(UjiEvent::SessionConfigured(configured));
    insta::assert_snapshot!(frame(&mut s));
}

/// The status line in each approval mode.
#[test]
fn the_status_line_in_each_mode() {
    let mut rows = Vec::new();
    for mode in uji_protocol::ApprovalMode::ALL {
        let mut s = Screen::new(60, 6);
        s.event(UjiEvent::ModeChanged { mode });
        let text = s.text();
        rows.push(format!("{mode:?}: {}", text.lines().last().unwrap_or("")));
    }
    insta::assert_snapshot!(rows.join("\n"));
}

/// A failed command is red and shows its last lines, then its summary.
#[test]
fn a_failed_command() {
    let mut s = Screen::new(60, 20);
    let output: String = (1..=30)
        .map(|i| format!("test case_{i} ... ok\n"))
        .chain(["error: test failed, to rerun pass `--lib`\n(exit code 101)".to_string()])
        .collect();
    s.event(message(1, user("run the tests")))
        .event(tool_started(
            "c1",
            ("run_command", "Shell"),
            "cargo test",
            ALLOWED,
        ))
        .event(finished(
            "c1",
            "run_command",
            Some("32 lines, exit code 101, 4.2s"),
            true,
        ));
    let mut result = tool_result("c1", "run_command", &output, None);
    if let MessageBody::Tool { is_error, .. } = &mut result {
        *is_error = true;
    }
    s.event(message(2, result));
    insta::assert_snapshot!(frame(&mut s));
    assert!(
        s.term.backend().buffer().content.iter().any(|cell| {
            cell.symbol() == "●" && cell.fg == Theme::colored().tool_failed.fg.unwrap_or(Color::Red)
        }),
        "the failed call's mark is red"
    );
}

/// Consecutive reads are one block; ctrl+o shows each again.
#[test]
fn consecutive_reads_are_grouped() {
    let mut s = Screen::new(60, 22);
    s.event(message(1, user("look around")));
    for (i, path) in ["src/main.rs", "src/lib.rs", "Cargo.toml"]
        .iter()
        .enumerate()
    {
        let id = format!("r{i}");
        s.event(tool_started(&id, ("read_file", "Read"), path, ALLOWED))
            .event(finished(&id, "read_file", Some("Read 10 lines"), false));
    }
    // A failed read is not taken into a group: its error shows.
    s.event(tool_started(
        "r9",
        ("read_file", "Read"),
        "nope.rs",
        ALLOWED,
    ))
    .event(finished("r9", "read_file", Some("no such file"), true))
    .event(delta("Read them."));
    insta::assert_snapshot!("consecutive_reads_are_grouped", frame(&mut s));
    s.ctrl('o');
    insta::assert_snapshot!("consecutive_reads_unfolded", frame(&mut s));
}

/// Three retries of one request are one line.
#[test]
fn the_retry_line() {
    let mut s = Screen::new(70, 12);
    s.event(message(1, user("hi")))
        .event(turn_started("hi"))
        .event(delta("partial answ"));
    for attempt in 1..=3 {
        s.event(retry(attempt));
    }
    insta::assert_snapshot!(frame(&mut s));
}
