//! The pseudo-terminal harness (tests/support/tty.rs) on small programs:
//! what it sends for keys, what it reads back, and that it notices a
//! program that leaves the terminal broken.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use uji_tests::tty::{Tty, TtyCommand, key_bytes};

const EXIT: Duration = Duration::from_secs(15);

fn sh(script: &str) -> TtyCommand {
    TtyCommand::new("sh").arg("-c").arg(script)
}

#[test]
fn keys_are_sent_as_an_xterm_sends_them() {
    let cases: [(&str, &[u8]); 16] = [
        ("<CR>", b"\r"),
        ("<Esc>", b"\x1b"),
        ("<C-c>", b"\x03"),
        ("<C-X>", b"\x18"),
        ("<S-CR>", b"\x1b[13;2u"),
        ("<A-CR>", b"\x1b\r"),
        ("<A-x>", b"\x1bx"),
        ("<Up>", b"\x1b[A"),
        ("<C-Up>", b"\x1b[1;5A"),
        ("<PageUp>", b"\x1b[5~"),
        ("<S-PageDown>", b"\x1b[6;2~"),
        ("<S-Tab>", b"\x1b[Z"),
        ("<BS>", b"\x7f"),
        ("<F1>", b"\x1bOP"),
        ("<F12>", b"\x1b[24~"),
        ("Y", b"Y"),
    ];
    for (key, bytes) in cases {
        assert_eq!(key_bytes(key), bytes, "{key}");
    }
}

/// Runs `od` on the next `count` bytes typed, in raw mode so nothing is
/// interpreted on the way.
fn bytes_seen(count: usize, input: impl FnOnce(&mut Tty)) -> String {
    let script =
        format!("stty raw -echo; printf 'ready:'; head -c {count} | od -An -tx1; stty sane");
    let mut tty = Tty::spawn(sh(&script), 24, 80);
    // Typed before raw mode, ^C would be a signal.
    tty.wait_for_text("ready:");
    input(&mut tty);
    assert_eq!(tty.wait_exit(EXIT), Some(0), "{}", tty.screen());
    let screen = tty.screen();
    let (_, seen) = screen.split_once("ready:").unwrap();
    seen.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn presses_and_pastes_reach_the_program_in_order() {
    let seen = bytes_seen(9, |tty| {
        tty.press("<S-CR>");
        tty.press("<C-c>");
        tty.press("y");
    });
    assert_eq!(seen, "1b 5b 31 33 3b 32 75 03 79");
    let seen = bytes_seen(14, |tty| tty.paste("hi"));
    assert_eq!(seen, "1b 5b 32 30 30 7e 68 69 1b 5b 32 30 31 7e");
}

#[test]
fn typed_text_is_echoed_and_read_back() {
    let mut tty = Tty::spawn(TtyCommand::new("cat"), 24, 80);
    tty.type_text("hello tty");
    tty.press("<CR>");
    tty.wait_for("the line echoed, then printed by cat", |s| {
        s.matches("hello tty").count() == 2
    });
    tty.press("<C-d>");
    assert_eq!(tty.wait_exit(EXIT), Some(0));
    tty.terminal_restored().unwrap();
}

#[test]
fn the_exit_code_and_everything_printed_before_exit_are_kept() {
    let mut tty = Tty::spawn(sh("seq 1 3000; exit 3"), 10, 40);
    assert_eq!(tty.wait_exit(EXIT), Some(3));
    let transcript = tty.transcript();
    assert!(
        transcript.trim_end().ends_with("2999\r\n3000"),
        "in order, to the end"
    );
    assert!(
        tty.screen().trim_end().ends_with("2999\n3000"),
        "{}",
        tty.screen()
    );
}

#[test]
fn a_resize_reaches_the_program() {
    let mut tty = Tty::spawn(sh("printf 'go:'; read x; stty size"), 24, 80);
    tty.wait_for_text("go:");
    tty.resize(30, 100);
    tty.press("<CR>");
    assert_eq!(tty.wait_exit(EXIT), Some(0));
    assert!(tty.screen().contains("30 100"), "{}", tty.screen());
}

#[test]
fn a_program_that_leaves_modes_on_is_caught() {
    let on = r"\033[?1049h\033[?25l\033[?1000h\033[?2004h";
    let mut tty = Tty::spawn(sh(&format!("printf '{on}drawn'")), 24, 80);
    assert_eq!(tty.wait_exit(EXIT), Some(0));
    let problem = tty.terminal_restored().unwrap_err();
    for left in [
        "the alternate screen is still on",
        "the cursor is hidden",
        "mouse reporting is on",
        "bracketed paste is on",
    ] {
        assert!(problem.contains(left), "{problem}");
    }
    assert!(problem.contains("drawn"), "shows the screen: {problem}");

    let off = r"\033[?2004l\033[?1000l\033[?25h\033[?1049l";
    let mut tty = Tty::spawn(sh(&format!("printf '{on}drawn{off}'")), 24, 80);
    assert_eq!(tty.wait_exit(EXIT), Some(0));
    tty.terminal_restored().unwrap();
}

#[test]
fn raw_mode_left_behind_is_caught() {
    let mut tty = Tty::spawn(sh("stty raw").then_stty(), 24, 80);
    assert_eq!(tty.wait_exit(EXIT), Some(0));
    let problem = tty.cooked_mode().unwrap_err();
    assert!(problem.contains("raw mode (icanon off)"), "{problem}");

    let mut tty = Tty::spawn(sh("stty raw -echo; stty sane; exit 4").then_stty(), 24, 80);
    assert_eq!(
        tty.wait_exit(EXIT),
        Some(4),
        "the program's code, not stty's"
    );
    tty.cooked_mode().unwrap();

    let mut tty = Tty::spawn(sh("true"), 24, 80);
    tty.wait_exit(EXIT);
    assert!(
        tty.cooked_mode()
            .unwrap_err()
            .contains("run the command with then_stty")
    );
}

#[test]
fn a_wait_that_never_ends_shows_the_screen() {
    let mut tty = Tty::spawn(sh("printf 'something else'"), 24, 80);
    tty.wait_exit(EXIT);
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tty.wait_for_within(Duration::from_millis(50), "a greeting", |s| {
            s.contains("hello")
        })
    }));
    let message = match waited {
        Ok(_) => panic!("the wait succeeded"),
        Err(payload) => payload.downcast_ref::<String>().cloned().unwrap(),
    };
    assert!(
        message.contains("for a greeting; the screen was:\nsomething else"),
        "{message}"
    );
}
