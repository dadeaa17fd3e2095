//! `uji completions SHELL` and `uji man`: what packagers install
//! (scripts/dist.sh puts both in the release archive), generated from the
//! same clap definition that parses the arguments, so they never drift.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::Cli;

/// The completion script for `shell` on stdout.
pub fn completions(shell: Shell) -> Result<(), String> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "uji", &mut script);
    print_bytes(script)
}

/// The man page (roff, section 1) on stdout.
pub fn man() -> Result<(), String> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|e| format!("cannot write the man page: {e}"))?;
    print_bytes(page)
}

fn print_bytes(bytes: Vec<u8>) -> Result<(), String> {
    let text = String::from_utf8(bytes)
        .map_err(|e| format!("clap wrote text that is not UTF-8 ({e}); report this bug"))?;
    crate::out::print(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(shell: Shell) -> String {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "uji", &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn every_shell_script_names_the_commands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let text = script(shell);
            for command in ["run", "doctor", "completions", "plugins"] {
                assert!(text.contains(command), "{shell}: no {command} in\n{text}");
            }
        }
        assert!(script(Shell::Bash).contains("complete -F _uji"));
    }

    #[test]
    fn the_man_page_is_roff_for_section_one() {
        let mut page = Vec::new();
        assert!(
            clap_mangen::Man::new(Cli::command())
                .render(&mut page)
                .is_ok()
        );
        let page = String::from_utf8(page).unwrap_or_default();
        assert!(page.starts_with(".ie \\n(.g .ds Aq"), "{page}");
        assert!(page.contains(".TH uji 1"), "{page}");
        assert!(page.contains("doctor"), "{page}");
    }
}
