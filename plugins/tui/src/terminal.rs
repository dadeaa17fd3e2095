//! Taking the terminal over and giving it back: raw mode, the alternate
//! screen, bracketed paste, mouse reporting and key disambiguation on the
//! way in; all of it undone on the way out, also after a panic or a signal.

use std::io::{self, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether the terminal is ours right now (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);
static PANIC_HOOK: Once = Once::new();

pub type Screen = Terminal<CrosstermBackend<io::Stdout>>;

/// The terminal in screen mode; dropping it restores the terminal.
pub struct TerminalGuard {
    pub screen: Screen,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        take_over()?;
        match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(screen) => Ok(TerminalGuard { screen }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }

    /// Gives the terminal back for a while (an external editor runs).
    pub fn suspend(&mut self) {
        restore();
    }

    /// Takes the terminal again after [`TerminalGuard::suspend`]; the next
    /// frame is drawn whole.
    pub fn resume(&mut self) -> io::Result<()> {
        take_over()?;
        execute!(io::stdout(), Clear(ClearType::All))?;
        // Both buffers empty: the next frame is written whole. (Terminal::
        // clear would ask the terminal for the cursor position, which not
        // every terminal answers.)
        self.screen.swap_buffers();
        Ok(())
    }
}

/// Raw mode, the alternate screen, bracketed paste, focus events, the
/// keyboard protocol and the mouse; undone by [`restore`].
fn take_over() -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = io::stdout();
    // Terminals that do not know the keyboard protocol ignore the push;
    // those that do report Shift+Enter apart from Enter. Asking first
    // would wait for an answer some terminals never send.
    // The title is saved on the terminal's stack (XTWINOPS 22) so the
    // one uji sets goes when uji does.
    let _ = stdout.write_all(SAVE_TITLE);
    let entered = execute!(
        stdout,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
    );
    if let Err(e) = entered.and_then(|()| stdout.write_all(MOUSE_ON)) {
        restore();
        return Err(e);
    }
    Ok(())
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back as it was. Safe to call at any time, any number
/// of times; errors are ignored because there is nobody left to tell.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    let _ = execute!(
        stdout,
        PopKeyboardEnhancementFlags,
        DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show,
    );
    let _ = stdout.write_all(MOUSE_OFF);
    let _ = stdout.write_all(CURSOR_DEFAULT);
    let _ = stdout.write_all(RESTORE_TITLE);
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

/// The mouse reports the screen uses: buttons and the wheel (mode 1000) in
/// SGR form (1006), never motion (1002, 1003, which crossterm's capture
/// turns on), so the terminal's own selection works with Shift held (in
/// most terminals; Option in iTerm2), as in other full-screen programs.
pub const MOUSE_ON: &[u8] = b"\x1b[?1000h\x1b[?1006h";
/// Off again; motion tracking is switched off too, in case a program
/// before uji left it on.
pub const MOUSE_OFF: &[u8] = b"\x1b[?1006l\x1b[?1003l\x1b[?1002l\x1b[?1000l";

/// The terminal's own cursor shape again (DECSCUSR 0), after vi mode set
/// one.
pub const CURSOR_DEFAULT: &[u8] = b"\x1b[0 q";

/// XTWINOPS: push the window title on the terminal's stack, and pop it.
const SAVE_TITLE: &[u8] = b"\x1b[22;2t";
const RESTORE_TITLE: &[u8] = b"\x1b[23;2t";

/// A panic while the screen is up would print its message into the
/// alternate screen, where nobody sees it: give the terminal back first.
fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
