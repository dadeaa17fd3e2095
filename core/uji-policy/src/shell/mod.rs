//! Finding every simple command a shell line would run, with a real shell
//! grammar (tree-sitter-bash).
//!
//! Each command anywhere in the line becomes a [`CommandPart`]: inside
//! lists and pipelines, subshells, groups, `if`/`while`/`for`/`case` bodies,
//! function bodies, `$( )`, backticks (re-parsed with their escapes, at any
//! nesting), `<( )`/`>( )` and here-documents. Programs that run their
//! arguments as a command (`sudo`, `env`, `find -exec`, `bash -c`, `eval`…)
//! are looked through: the inner command is a part too (see `wrappers`).
//! Whatever cannot be accounted for becomes an *unresolved* part, which the
//! policy never allows.
//!
//! The contract: commands run with bash, so the reading is bash's. Where
//! tree-sitter-bash and bash could disagree (text the grammar skips or
//! rejects, a non-bash shell's script) the part is unresolved; where they
//! differ in a known way (words after a redirection target, a pipeline's
//! redirection) the walk follows bash. `tests/differential.rs` runs
//! generated lines under bash and holds every resolved line to its parts.

mod assign;
mod read_only;
mod walk;
mod words;
mod wrappers;

use serde::{Deserialize, Serialize};

/// Most parts one line may have; beyond it the rest is one unresolved part.
pub const MAX_PARTS: usize = 256;
/// Deepest re-parse of command strings (`bash -c`, `eval`, backticks,
/// wrappers inside wrappers).
pub const MAX_DEPTH: usize = 16;

/// Directories whose programs are the ordinary system ones: `/bin/rm` is
/// `rm` for allow rules too. (Any path counts for deny and ask rules.)
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// One simple command found in a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandPart {
    /// The command as written, words joined by one space (leading
    /// `VAR=value` assignments dropped, redirections kept).
    pub text: String,
    /// The program it runs, quotes removed and a path reduced to its last
    /// component; empty when it is only known at run time.
    pub program: String,
    /// The part is plain: uji knows exactly what it runs. An unresolved part
    /// (a word only known at run time, a glob or brace as the program, an
    /// assignment that changes what runs, text the grammar may misread, a
    /// git config that runs commands, too many parts) is never allowed by
    /// an allow rule, a default or a session rule.
    pub resolved: bool,
    /// Why the part is unresolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Other spellings allow rules may match (program path reduced when it
    /// is a system directory or the name was only quoted).
    #[serde(skip)]
    pub(crate) allow_forms: Vec<String>,
    /// Other spellings deny and ask rules match: quotes removed, any program
    /// path reduced to its name.
    #[serde(skip)]
    pub(crate) strict_forms: Vec<String>,
    /// The words the program receives, quotes removed (as written where
    /// only known at run time); empty for a part with no known program.
    #[serde(skip)]
    pub(crate) argv: Vec<String>,
    /// What here-strings and here-documents feed the program.
    #[serde(skip)]
    pub(crate) input: String,
    /// When the part only reads (a plain command of `read_only`'s list,
    /// with no output redirected to a file and no leading assignment): the
    /// words that may name files. `None` when it may do more.
    #[serde(skip)]
    pub(crate) read_paths: Option<Vec<String>>,
}

impl CommandPart {
    /// An unresolved part for `text`.
    pub(crate) fn unresolved(text: &str, reason: String) -> Self {
        CommandPart {
            text: normalise_space(text),
            program: String::new(),
            resolved: false,
            reason: Some(reason),
            allow_forms: Vec::new(),
            strict_forms: Vec::new(),
            argv: Vec::new(),
            input: String::new(),
            read_paths: None,
        }
    }

    /// The words that may name files, when the part only reads (see
    /// [`CommandPart::read_paths`]).
    pub fn read_paths(&self) -> Option<&[String]> {
        self.read_paths.as_deref().filter(|_| self.resolved)
    }

    /// The words the program receives, program first, with quotes and
    /// escapes removed; a word only known at run time is as written. Empty
    /// when the program itself is unknown.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// Every text deny and ask rules are matched against.
    pub(crate) fn strict_texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.text.as_str()).chain(self.strict_forms.iter().map(String::as_str))
    }

    /// Every text allow rules are matched against.
    pub(crate) fn allow_texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.text.as_str()).chain(self.allow_forms.iter().map(String::as_str))
    }
}

/// Collapse runs of whitespace (tabs, newlines) to one space.
fn normalise_space(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Marks unresolved each part whose program uji neither looks through nor
/// knows to run no arguments, when a later word or what a here-string or
/// here-document feeds it names one of `denied` (programs deny rules name):
/// `foo --flag rm -rf v` and `python3 <<< 'os.system("rm -rf v")'` may run
/// `rm`.
pub(crate) fn mark_hidden_programs(parts: &mut [CommandPart], denied: &[&str]) {
    if denied.is_empty() {
        return;
    }
    // A word names a program when it holds the name with no name
    // character on either side: `rm`, `/bin/rm`, `'rm -rf v'`,
    // `os.system('rm -rf v')`, but not `rm_tests` or `form`.
    let is_name_byte =
        |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b"_-.".contains(b));
    let names = |w: &str| -> bool {
        let w = w.as_bytes();
        denied.iter().map(|d| d.as_bytes()).any(|d| {
            !d.is_empty()
                && w.windows(d.len()).enumerate().any(|(at, window)| {
                    window == d
                        && !is_name_byte(at.checked_sub(1).and_then(|i| w.get(i)))
                        && !is_name_byte(w.get(at + d.len()))
                })
        })
    };
    for part in parts.iter_mut().filter(|p| p.resolved) {
        let program = part.program.as_str();
        if wrappers::is_looked_through(program) || wrappers::runs_no_arguments(program) {
            continue;
        }
        let fed = std::iter::once(&part.input).filter(|i| !i.is_empty());
        if let Some(w) = part.argv.iter().skip(1).chain(fed).find(|w| names(w)) {
            part.reason = Some(format!(
                "`{program}` is not a program uji knows, and its argument `{w}` names a \
                 program a deny rule refuses"
            ));
            part.resolved = false;
        }
    }
}

/// Every simple command `line` would run, in order of appearance. Never
/// fails: what cannot be parsed is an unresolved part.
pub fn command_parts(line: &str) -> Vec<CommandPart> {
    let mut col = walk::Collector::default();
    walk::parse_into(line, 0, &mut col);
    col.finish()
}
