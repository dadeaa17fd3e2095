//! A pseudo-terminal for end-to-end tests of screen programs (the TUI):
//! the real program runs in a pty (`portable-pty`), and a reader thread
//! feeds everything it prints, in order, to a terminal emulator (`vt100`),
//! so a test reads the screen as a person would see it.
//!
//! ```no_run
//! # use uji_tests::{Sandbox, tty::Tty};
//! let sandbox = Sandbox::new();
//! let mut tty = Tty::spawn(sandbox.uji_tty().then_stty(), 24, 80);
//! tty.wait_for_text("uji");
//! tty.type_text("hello");
//! tty.press("<CR>");
//! tty.press("<C-c>");
//! assert_eq!(tty.wait_exit(std::time::Duration::from_secs(10)), Some(0));
//! tty.terminal_restored().unwrap();
//! tty.cooked_mode().unwrap();
//! ```
//!
//! - [`Tty::press`] sends what an xterm sends for a key written in uji's
//!   key syntax (`<CR>`, `<C-x>`, `<S-CR>`, `<PageUp>`, `y`; see
//!   `uji_protocol::keymap`).
//! - [`Tty::wait_for`] polls the screen until a condition holds (15 s by
//!   default) and panics with the last screen otherwise; tests never sleep.
//! - After the program exits, [`Tty::terminal_restored`] says whether it
//!   left the alternate screen, showed the cursor and switched mouse
//!   reporting and bracketed paste off. Raw mode is a setting of the pty,
//!   not something printed, so [`TtyCommand::then_stty`] runs `stty -a`
//!   after the program and [`Tty::cooked_mode`] reads what it printed.
//! - The child's environment is cleared like [`crate::Sandbox::uji`]'s,
//!   plus `TERM=xterm-256color`.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use uji_protocol::keymap::{Key, KeyCode, NamedKey, parse_key};

/// How long [`Tty::wait_for`] waits.
pub const WAIT: Duration = Duration::from_secs(15);

/// The variable naming the file [`TtyCommand::then_stty`] writes.
const STTY_FILE_VAR: &str = "UJI_TEST_STTY_FILE";

/// What to run in the pty.
#[derive(Debug, Clone)]
pub struct TtyCommand {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The whole environment (nothing is inherited) besides `TERM`.
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
}

impl TtyCommand {
    /// `program` with `PATH` only, in the current directory.
    pub fn new(program: impl Into<OsString>) -> TtyCommand {
        TtyCommand {
            program: program.into(),
            args: Vec::new(),
            env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
            cwd: std::env::current_dir().expect("current dir"),
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> TtyCommand {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> TtyCommand {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets (or replaces) one variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> TtyCommand {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    /// Runs `stty -a` in the same pty after the program ends (the exit code
    /// stays the program's), for [`Tty::cooked_mode`].
    ///
    /// `stty -a` reads the pty's settings but writes them to a file: what a
    /// process prints just before the pty closes can be lost to the reader
    /// (seen under load: only the first two lines of `stty -a` arrived).
    pub fn then_stty(self) -> TtyCommand {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let file = std::env::temp_dir().join(format!("uji-tty-stty-{}-{n}", std::process::id()));
        let mut args: Vec<OsString> = vec![
            "-c".into(),
            format!(r#""$0" "$@"; status=$?; stty -a > "${STTY_FILE_VAR}"; exit $status"#).into(),
            self.program,
        ];
        args.extend(self.args);
        TtyCommand {
            program: "sh".into(),
            args,
            ..self
        }
        .env(STTY_FILE_VAR, file)
    }

    fn builder(&self) -> CommandBuilder {
        let mut builder = CommandBuilder::new(&self.program);
        builder.args(&self.args);
        builder.env_clear();
        for (key, value) in &self.env {
            builder.env(key, value);
        }
        builder.env("TERM", "xterm-256color");
        builder.cwd(&self.cwd);
        builder
    }
}

/// A program running in a pseudo-terminal, and the screen it drew.
pub struct Tty {
    parser: Arc<Mutex<vt100::Parser>>,
    /// Every byte the program printed, in order.
    transcript: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    master: Box<dyn MasterPty + Send>,
    child: Box<dyn Child + Send + Sync>,
    reader: Option<JoinHandle<()>>,
    exit: Option<u32>,
    /// Where [`TtyCommand::then_stty`]'s `stty -a` writes.
    stty_file: Option<PathBuf>,
}

fn size(rows: u16, cols: u16) -> (NonZeroU16, NonZeroU16) {
    let rows = NonZeroU16::new(rows).expect("at least one row");
    let cols = NonZeroU16::new(cols).expect("at least one column");
    (rows, cols)
}

fn pty_size(rows: u16, cols: u16) -> PtySize {
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// Feeds what the program prints to the parser until the pty closes.
/// Linux answers EIO, not end of file, once the child side is closed: both
/// end the loop.
fn read_into(
    mut from: Box<dyn Read + Send>,
    parser: Arc<Mutex<vt100::Parser>>,
    transcript: Arc<Mutex<Vec<u8>>>,
) {
    let mut buf = [0u8; 8192];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                parser.lock().process(&buf[..n]);
                transcript.lock().extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

impl Tty {
    /// Starts `cmd` in a pty of `rows`×`cols`.
    pub fn spawn(cmd: TtyCommand, rows: u16, cols: u16) -> Tty {
        let (r, c) = size(rows, cols);
        let pair = native_pty_system()
            .openpty(pty_size(rows, cols))
            .expect("open a pty");
        let child = pair
            .slave
            .spawn_command(cmd.builder())
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        // Our copy of the child's side must go, or the reader never sees
        // the pty close.
        drop(pair.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(r, c, 0)));
        let transcript = Arc::new(Mutex::new(Vec::new()));
        let from = pair.master.try_clone_reader().expect("pty reader");
        let (p, t) = (Arc::clone(&parser), Arc::clone(&transcript));
        let reader = std::thread::spawn(move || read_into(from, p, t));
        let writer = pair.master.take_writer().expect("pty writer");
        let stty_file = cmd
            .env
            .iter()
            .find(|(key, _)| key == STTY_FILE_VAR)
            .map(|(_, file)| PathBuf::from(file));
        Tty {
            stty_file,
            parser,
            transcript,
            writer,
            master: pair.master,
            child,
            reader: Some(reader),
            exit: None,
        }
    }

    /// The id of the process this Tty spawned.
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// The program's id: the spawned process, or, under
    /// [`TtyCommand::then_stty`], the program the wrapping `sh` runs.
    pub fn program_pid(&self) -> Option<u32> {
        let pid = self.pid()?;
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() != "sh" {
            return Some(pid);
        }
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
        children.split_whitespace().next()?.parse().ok()
    }

    /// Sends `signal` to the program (see [`Tty::program_pid`]).
    pub fn signal(&self, signal: i32) {
        let pid = self.program_pid().expect("the program is running");
        let pid = libc::pid_t::try_from(pid).expect("a pid");
        // SAFETY: kill(2) on our own child process.
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0, "kill({pid}, {signal}) failed");
    }

    /// Sends raw bytes, as typed.
    pub fn send(&mut self, bytes: &[u8]) {
        self.writer
            .write_all(bytes)
            .and_then(|()| self.writer.flush())
            .expect("write to the pty");
    }

    /// Presses one key, written in uji's key syntax.
    pub fn press(&mut self, key: &str) {
        self.send(&key_bytes(key));
    }

    /// Types `text` as it is.
    pub fn type_text(&mut self, text: &str) {
        self.send(text.as_bytes());
    }

    /// Pastes `text` the way a terminal with bracketed paste does.
    pub fn paste(&mut self, text: &str) {
        let mut bytes = b"\x1b[200~".to_vec();
        bytes.extend_from_slice(text.as_bytes());
        bytes.extend_from_slice(b"\x1b[201~");
        self.send(&bytes);
    }

    /// Resizes the terminal (the program gets SIGWINCH).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let (r, c) = size(rows, cols);
        self.parser.lock().screen_mut().set_size(r, c);
        self.master
            .resize(pty_size(rows, cols))
            .expect("resize the pty");
    }

    /// The visible rows, joined by `\n`.
    pub fn screen(&self) -> String {
        self.parser.lock().screen().contents()
    }

    /// Everything the program printed so far, as text.
    pub fn transcript(&self) -> String {
        String::from_utf8_lossy(&self.transcript.lock()).into_owned()
    }

    /// Waits until `pred` holds for the screen text; returns that screen.
    /// Panics after [`WAIT`], naming `what` and showing the last screen.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for_within(WAIT, what, pred)
    }

    /// [`Tty::wait_for`] with another time limit.
    pub fn wait_for_within(
        &self,
        limit: Duration,
        what: &str,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("waited {limit:?} for {what}; the screen was:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen shows `needle`.
    pub fn wait_for_text(&self, needle: &str) -> String {
        self.wait_for(&format!("{needle:?} on the screen"), |s| s.contains(needle))
    }

    /// Waits until the screen shows `needle` in a question (an approval,
    /// a picker or the key prompt) that takes answers: the screen draws a
    /// question with no row chosen and no Enter hint until its guard time
    /// has passed (docs/tui.md, "Approvals"); a key before that goes to
    /// the draft.
    pub fn wait_for_question(&self, needle: &str) -> String {
        const READY: [&str; 3] = ["❯ ", "enter choose", "enter save ·"];
        self.wait_for(&format!("a question with {needle:?} taking answers"), |s| {
            s.contains(needle) && READY.iter().any(|mark| s.contains(mark))
        })
    }

    /// Keys a person types, a key every 25 ms (a fast typist): each one a
    /// separate write, so the screen reads them as separate keys (a paste
    /// or typing ahead would arrive as one burst).
    pub fn type_keys(&mut self, text: &str) {
        for c in text.chars() {
            self.type_text(&c.to_string());
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Quits with Ctrl+C twice (one press never quits), as a person
    /// would, and asserts a clean exit (status 0 within 15 s), showing the
    /// screen otherwise.
    pub fn quit_with_ctrl_c(&mut self) {
        self.press("<C-c>");
        self.press("<C-c>");
        assert_eq!(
            self.wait_exit(Duration::from_secs(15)),
            Some(0),
            "{}",
            self.screen()
        );
    }

    /// Waits for the program to exit and for everything it printed to
    /// reach the screen; its exit code (`None`: still running).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<u32> {
        let deadline = Instant::now() + timeout;
        while self.exit.is_none() {
            match self.child.try_wait() {
                Ok(Some(status)) => self.exit = Some(status.exit_code()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(None) | Err(_) => return None,
            }
        }
        self.finish_reading(deadline.max(Instant::now() + Duration::from_secs(5)));
        self.exit
    }

    /// Joins the reader once the pty has closed (a grandchild may keep it
    /// open: then the screen is left as it is at `deadline`).
    fn finish_reading(&mut self, deadline: Instant) {
        while self.reader.as_ref().is_some_and(|r| !r.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.reader.as_ref().is_some_and(JoinHandle::is_finished)
            && let Some(reader) = self.reader.take()
        {
            let _ = reader.join();
        }
    }

    /// After exit: whether the program left the terminal as it found it
    /// (main screen, cursor shown, no mouse reporting, no bracketed paste).
    pub fn terminal_restored(&self) -> Result<(), String> {
        let parser = self.parser.lock();
        let screen = parser.screen();
        let mut left = Vec::new();
        if screen.alternate_screen() {
            left.push("the alternate screen is still on");
        }
        if screen.hide_cursor() {
            left.push("the cursor is hidden");
        }
        if screen.mouse_protocol_mode() != vt100::MouseProtocolMode::None {
            left.push("mouse reporting is on");
        }
        if screen.bracketed_paste() {
            left.push("bracketed paste is on");
        }
        match left.is_empty() {
            true => Ok(()),
            false => Err(format!(
                "the terminal was not restored: {}; the screen was:\n{}",
                left.join(", "),
                screen.contents()
            )),
        }
    }

    /// After a [`TtyCommand::then_stty`] run: whether the pty was back in
    /// cooked mode (`icanon` and `echo` on) when the program had ended.
    pub fn cooked_mode(&self) -> Result<(), String> {
        let stty = self
            .stty_file
            .as_ref()
            .and_then(|file| std::fs::read_to_string(file).ok())
            .unwrap_or_default();
        let Some(at) = stty.rfind("speed ") else {
            return Err(format!(
                "no `stty -a` output (run the command with then_stty); the program printed:\n{}",
                self.transcript()
            ));
        };
        let settings: Vec<&str> = stty[at..].split_whitespace().collect();
        let off: Vec<&str> = ["icanon", "echo"]
            .into_iter()
            .filter(|flag| !settings.contains(flag))
            .collect();
        match off.is_empty() {
            true => Ok(()),
            false => Err(format!(
                "the terminal was left in raw mode ({} off); stty -a said:\n{}",
                off.join(", "),
                &stty[at..]
            )),
        }
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        if let Some(file) = &self.stty_file {
            let _ = std::fs::remove_file(file);
        }
        if self.exit.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What an xterm sends for `spec` (uji's key syntax). Panics on a spec
/// that does not read, with the reason.
pub fn key_bytes(spec: &str) -> Vec<u8> {
    let key = parse_key(spec)
        .unwrap_or_else(|e| panic!("press({spec:?}): {e}"))
        .normalized();
    match key.code {
        KeyCode::Char(c) => char_bytes(c, key),
        KeyCode::Named(named) => named_bytes(named, key),
    }
}

/// xterm's modifier parameter: 1 + Shift 1, Alt 2, Ctrl 4.
fn modifier_code(key: Key) -> u8 {
    1 + u8::from(key.shift) + 2 * u8::from(key.alt) + 4 * u8::from(key.ctrl)
}

fn char_bytes(c: char, key: Key) -> Vec<u8> {
    let mut out = Vec::new();
    if key.ctrl && key.shift {
        // Only the CSI-u form tells Ctrl+Shift+x from Ctrl+x.
        let code = u32::from(c.to_ascii_lowercase());
        return format!("\x1b[{code};{}u", modifier_code(key)).into_bytes();
    }
    if key.alt {
        out.push(0x1b);
    }
    match (key.ctrl, control_byte(c)) {
        (true, Some(byte)) => out.push(byte),
        _ => out.extend_from_slice(c.to_string().as_bytes()),
    }
    out
}

/// The byte Ctrl+`c` sends, when it has one.
fn control_byte(c: char) -> Option<u8> {
    match c {
        'a'..='z' => Some(c as u8 - b'a' + 1),
        '@' | ' ' | '2' => Some(0),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '7' | '-' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

/// Named keys: legacy bytes unmodified (Alt adds ESC); modifiers in
/// xterm's `CSI 1;m X` / `CSI n;m ~` forms, or CSI-u for Enter, Tab,
/// Backspace and Esc (`<S-CR>` is `ESC [13;2u`).
fn named_bytes(named: NamedKey, key: Key) -> Vec<u8> {
    let m = modifier_code(key);
    let plain_or_alt = !key.ctrl && !key.shift;
    let csi_u = |code: u32| format!("\x1b[{code};{m}u").into_bytes();
    let legacy = |bytes: &[u8]| {
        let mut out = if key.alt { vec![0x1b] } else { Vec::new() };
        out.extend_from_slice(bytes);
        out
    };
    let letter = |x: char| match m {
        1 => format!("\x1b[{x}").into_bytes(),
        _ => format!("\x1b[1;{m}{x}").into_bytes(),
    };
    let tilde = |n: u8| match m {
        1 => format!("\x1b[{n}~").into_bytes(),
        _ => format!("\x1b[{n};{m}~").into_bytes(),
    };
    match named {
        NamedKey::Tab if key.shift && !key.ctrl && !key.alt => b"\x1b[Z".to_vec(),
        NamedKey::Enter if plain_or_alt => legacy(b"\r"),
        NamedKey::Tab if plain_or_alt => legacy(b"\t"),
        NamedKey::Backspace if plain_or_alt => legacy(b"\x7f"),
        NamedKey::Esc if plain_or_alt => legacy(b"\x1b"),
        NamedKey::Enter => csi_u(13),
        NamedKey::Tab => csi_u(9),
        NamedKey::Backspace => csi_u(127),
        NamedKey::Esc => csi_u(27),
        NamedKey::Up => letter('A'),
        NamedKey::Down => letter('B'),
        NamedKey::Right => letter('C'),
        NamedKey::Left => letter('D'),
        NamedKey::Home => letter('H'),
        NamedKey::End => letter('F'),
        NamedKey::Insert => tilde(2),
        NamedKey::Delete => tilde(3),
        NamedKey::PageUp => tilde(5),
        NamedKey::PageDown => tilde(6),
        NamedKey::F(n @ 1..=4) => function_low(n, m),
        NamedKey::F(n) => tilde(function_tilde(n)),
    }
}

/// F1–F4: `ESC O P`…`ESC O S`, or `CSI 1;m P`… with modifiers.
fn function_low(n: u8, m: u8) -> Vec<u8> {
    let x = char::from(b'P' + n - 1);
    match m {
        1 => format!("\x1bO{x}").into_bytes(),
        _ => format!("\x1b[1;{m}{x}").into_bytes(),
    }
}

/// The `CSI n ~` number of F5–F12.
fn function_tilde(n: u8) -> u8 {
    match n {
        5 => 15,
        6..=10 => n + 11,
        _ => n + 12,
    }
}
