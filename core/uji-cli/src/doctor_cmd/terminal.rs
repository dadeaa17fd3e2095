//! The terminal the screen would draw in: colours, synchronized output and
//! the kitty keyboard protocol. Told from the environment (`TERM`,
//! `COLORTERM`, `TERM_PROGRAM`…), not by querying the terminal: doctor's
//! output may be a pipe, and a query that goes unanswered costs a timeout.

use std::io::IsTerminal;

use super::Check;

/// What the environment says about the terminal.
#[derive(Debug, Clone, Default)]
pub struct TermEnv {
    pub term: Option<String>,
    pub colorterm: Option<String>,
    pub term_program: Option<String>,
    pub no_color: bool,
    pub in_tmux: bool,
    pub stdout_is_tty: bool,
}

impl TermEnv {
    pub fn from_process() -> TermEnv {
        let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
        TermEnv {
            term: var("TERM"),
            colorterm: var("COLORTERM"),
            term_program: var("TERM_PROGRAM"),
            no_color: var("NO_COLOR").is_some(),
            in_tmux: var("TMUX").is_some(),
            stdout_is_tty: std::io::stdout().is_terminal(),
        }
    }

    /// The terminal's own name: `TERM_PROGRAM`, else `TERM`.
    fn name(&self) -> String {
        self.term_program
            .clone()
            .or_else(|| self.term.clone())
            .unwrap_or_default()
            .to_ascii_lowercase()
    }

    fn is_one_of(&self, names: &[&str]) -> bool {
        let name = self.name();
        names.iter().any(|n| name.contains(n))
    }
}

/// Terminals known to implement both synchronized output (mode 2026) and
/// the kitty keyboard protocol.
const MODERN: &[&str] = &["kitty", "wezterm", "foot", "ghostty", "alacritty", "iterm"];

pub fn check(env: &TermEnv) -> Vec<Check> {
    let Some(term) = env.term.clone() else {
        return vec![Check::warn(
            "terminal",
            "TERM is not set: the screen (`uji`) cannot tell what this terminal draws",
            "run uji in a terminal emulator, or export TERM=xterm-256color",
        )];
    };
    if term == "dumb" {
        return vec![Check::warn(
            "terminal",
            "TERM=dumb: the screen needs a terminal that moves the cursor",
            "use `uji run` here, or a real terminal for the screen",
        )];
    }
    vec![colours(env, &term), features(env)]
}

fn colours(env: &TermEnv, term: &str) -> Check {
    let depth = if env.no_color {
        "none (NO_COLOR is set)"
    } else if matches!(env.colorterm.as_deref(), Some("truecolor" | "24bit")) {
        "24-bit"
    } else if term.contains("256color") {
        "256"
    } else {
        "16"
    };
    let tty = if env.stdout_is_tty {
        ""
    } else {
        "; stdout is not a terminal here"
    };
    Check::ok("terminal", format!("TERM={term}, colours: {depth}{tty}"))
}

fn features(env: &TermEnv) -> Check {
    let known = env.is_one_of(MODERN);
    let (sync, kitty) = if known {
        ("yes", "yes")
    } else {
        ("unknown", "unknown")
    };
    let text = format!(
        "synchronized output: {sync}; kitty keyboard: {kitty} (told from TERM/TERM_PROGRAM{})",
        if env.in_tmux { ", inside tmux" } else { "" }
    );
    if env.in_tmux {
        return Check::warn(
            "terminal",
            text,
            "tmux passes the kitty keyboard protocol only with `set -s extended-keys on` (and `extended-keys-format csi-u`, tmux 3.5+)",
        );
    }
    Check::ok("terminal", text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(term: &str, program: Option<&str>) -> TermEnv {
        TermEnv {
            term: Some(term.into()),
            term_program: program.map(str::to_string),
            ..TermEnv::default()
        }
    }

    #[test]
    fn kitty_is_known_and_a_plain_xterm_is_not() {
        let kitty = check(&env("xterm-kitty", None));
        assert!(
            kitty[1].text.starts_with("synchronized output: yes"),
            "{:?}",
            kitty
        );
        let xterm = check(&env("xterm-256color", None));
        assert!(xterm[0].text.contains("colours: 256"), "{:?}", xterm);
        assert!(xterm[1].text.contains("unknown"), "{:?}", xterm);
    }

    #[test]
    fn no_term_and_dumb_are_warnings_with_fixes() {
        assert!(check(&TermEnv::default())[0].fix.is_some());
        assert!(check(&env("dumb", None))[0].text.contains("TERM=dumb"));
    }
}
