//! Variables whose value changes what a command runs.
//!
//! `PATH=. ls` runs `./ls`, `LD_PRELOAD=x.so ls` loads code into `ls`,
//! `GIT_CONFIG_PARAMETERS=… git status` gives git a setting that runs a
//! program, `HOME=. git status` makes git read `./.gitconfig`. A part that
//! sets one of these (before its program, with `env`, or as a statement of
//! its own that later commands see) is not plain: no rule allows it.
//!
//! Which variables a program reads is the program's business, so the list
//! errs wide: the names below, and every name with one of the prefixes or
//! suffixes. docs/policy.md lists the same.

/// Exact names.
const NAMES: &[&str] = &[
    "PATH",
    "ENV",
    "BASH_CMDS",
    "BASH_ALIASES",
    "POSIXLY_CORRECT",
    "BASH_ENV",
    "IFS",
    "HOME",
    "SHELL",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "BROWSER",
    "LESS",
    "LESSOPEN",
    "LESSCLOSE",
    "PERL5LIB",
    "PERL5OPT",
    "RUBYOPT",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "AS",
    "MAKE",
    "MAKEFLAGS",
    "MFLAGS",
    "RUSTC",
    "RUSTDOC",
    "CARGO",
    "TERMINFO",
    "TERMCAP",
    "INPUTRC",
    "ZDOTDIR",
    "TMPDIR",
];

/// Name prefixes: loaders, version control, language runtimes and package
/// managers, configuration locations.
const PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "GIT_",
    "BASH_FUNC_",
    "PYTHON",
    "PERL",
    "RUBY",
    "NODE_",
    "NPM_CONFIG_",
    "YARN_",
    "CARGO_",
    "RUSTUP_",
    "RUSTC_",
    "XDG_",
    "LUA_",
    "JAVA",
    "_JAVA",
    "GO",
    "PIP_",
    "GEM_",
    "BUNDLE_",
    "DOCKER_",
    "SSH_",
    "SUDO_",
    "GNUPG",
    "GPG_",
];

/// Name suffixes: options, search paths, the programs to run.
const SUFFIXES: &[&str] = &[
    "_OPTIONS", "_OPTS", "OPT", "FLAGS", "PATH", "_HOME", "_DIR", "_DIRS", "_PAGER", "_EDITOR",
    "_COMMAND", "_CMD", "_PROGRAM", "_PROG", "_WRAPPER", "_SHELL", "_RUNNER", "_CONFIG",
    "_PRELOAD", "_HOOK", "_HOOKS", "_ASKPASS", "_EXEC", "_BIN", "_PLUGIN", "_PLUGINS", "_LIB",
    "_LIBS", "_INIT", "_STARTUP", "_RC", "RCFILE",
];

/// Whether setting `name` can change what a command runs (ASCII case
/// ignored: `npm_config_script_shell` counts as `NPM_CONFIG_…`).
pub(crate) fn changes_what_runs(name: &str) -> bool {
    // `BASH_CMDS[ls]=/bin/rm` sets the array `BASH_CMDS`.
    let name = name.split('[').next().unwrap_or(name);
    let upper = name.to_ascii_uppercase();
    let n = upper.as_str();
    NAMES.contains(&n)
        || PREFIXES.iter().any(|p| n.starts_with(p))
        || SUFFIXES.iter().any(|s| n.ends_with(s))
}

/// A literal value that holds code a later expansion can run: arithmetic
/// evaluates a variable's value (`x='a[$(rm -rf v)]'; (( x ))`), and so do
/// `${x@P}` and `eval "$x"`.
pub(crate) fn value_holds_code(value: &str) -> bool {
    value.contains("$(") || value.contains('`') || value.contains("${")
}

/// Builtins that assign the variable named by an argument (`read PATH`,
/// `printf -v PATH …`, `mapfile PATH`, `getopts o PATH`).
pub(crate) fn assigns_by_argument(program: &str) -> bool {
    matches!(
        program,
        "read"
            | "printf"
            | "mapfile"
            | "readarray"
            | "getopts"
            | "declare"
            | "typeset"
            | "export"
            | "local"
            | "readonly"
            | "let"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_change_what_runs() {
        for n in [
            "PATH",
            "LD_PRELOAD",
            "BASH_ENV",
            "ENV",
            "IFS",
            "GIT_CONFIG_PARAMETERS",
            "NODE_OPTIONS",
            "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS",
            "PYTHONPATH",
            "HOME",
            "npm_config_script_shell",
            "RUSTC_WRAPPER",
            "LESSOPEN",
            "PERL5OPT",
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
            "BASH_FUNC_ls%%",
            "MANPATH",
        ] {
            assert!(changes_what_runs(n), "{n}");
        }
        for n in [
            "RUST_LOG",
            "RUST_BACKTRACE",
            "LANG",
            "LC_ALL",
            "TZ",
            "NO_COLOR",
            "CI",
            "FOO",
        ] {
            assert!(!changes_what_runs(n), "{n}");
        }
    }
}
