//! `uji-policy`: the decision engine every tool call passes through.
//!
//! Given what a tool is about to do ([`ToolFacts`]), a [`Policy`] answers
//! [`Decision::Allow`], [`Decision::Ask`] or [`Decision::Deny`] with a short
//! explanation ([`Verdict`]). The crate also confines the file tools to the
//! working directory and extra roots ([`Policy::check_path`]) and finds the
//! simple commands a shell line runs ([`command_parts`], a real shell grammar).
//!
//! It is deliberately pure: no async, no configuration loading and no I/O
//! beyond filesystem metadata (`lstat`/`readlink`) for path canonicalisation.
//! Nothing in it panics on any input.
//!
//! # Rules
//! Users write rules as a Lua table which reaches [`Policy::set_rules`] as
//! JSON:
//!
//! ```
//! use std::path::Path;
//! use uji_policy::{Decision, Policy, SubjectKind, ToolFacts};
//!
//! let mut policy = Policy::default();
//! let problems = policy.set_rules(
//!     &serde_json::json!({
//!         "default": "ask",
//!         "run_command": {
//!             "allow": ["git status", "git diff *", "cargo test*"],
//!             "deny": ["/^rm\\s+-rf/"]
//!         }
//!     }),
//!     None,
//! );
//! assert!(problems.is_empty());
//! let facts = ToolFacts {
//!     tool: "run_command",
//!     subject: "git diff HEAD; rm -rf ~",
//!     kind: SubjectKind::Command,
//!     declared: None,
//!     cwd: Path::new("/work/repo"),
//! };
//! assert_eq!(policy.decide(&facts).decision, Decision::Deny);
//! ```

mod links;
mod paths;
mod policy;
mod rules;
mod shell;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use paths::{
    ConfineError, MAX_SYMLINK_HOPS, canonicalize_lenient, expand_home, expand_tilde, home_dir,
};
pub use policy::{DEFAULT_SET, Policy};
pub use rules::RuleProblem;
pub use shell::{
    CommandPart, MAX_DEPTH as MAX_NESTING, MAX_PARTS as MAX_COMMAND_PARTS, command_parts,
};

/// What happens to a tool call.
///
/// Ordered by strictness, `Allow < Ask < Deny`, so that combining several
/// opinions is `max()`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run without asking.
    Allow,
    /// Ask the user first. The default when nothing else says otherwise.
    #[default]
    Ask,
    /// Refuse; the model is told why.
    Deny,
}

impl Decision {
    /// The lowercase name used in rules and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not `allow`, `ask` or `deny`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDecisionError(pub String);

impl fmt::Display for ParseDecisionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\"{}\" is not a decision (expected allow, ask or deny)",
            self.0
        )
    }
}

impl std::error::Error for ParseDecisionError {}

impl FromStr for Decision {
    type Err = ParseDecisionError;

    /// Accepts `allow`, `ask` and `deny`, ignoring ASCII case and surrounding
    /// whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("allow") {
            Ok(Decision::Allow)
        } else if t.eq_ignore_ascii_case("ask") {
            Ok(Decision::Ask)
        } else if t.eq_ignore_ascii_case("deny") {
            Ok(Decision::Deny)
        } else {
            Err(ParseDecisionError(s.to_string()))
        }
    }
}

/// How a tool's subject is matched against rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubjectKind {
    /// A file path: matched as given and as its canonical absolute path;
    /// `*` and `?` in globs stop at `/`, `~/` in rules is the home directory.
    Path,
    /// A shell command line: matched whole and part by part
    /// (see [`command_parts`]); `*` matches anything.
    Command,
    /// Any other string (a URL, a query): matched as given; `*` matches
    /// anything.
    #[default]
    Other,
}

impl SubjectKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Path => "path",
            SubjectKind::Command => "command",
            SubjectKind::Other => "other",
        }
    }
}

impl fmt::Display for SubjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SubjectKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "path" => Ok(SubjectKind::Path),
            "command" => Ok(SubjectKind::Command),
            "other" => Ok(SubjectKind::Other),
            _ => Err(format!(
                "\"{s}\" is not a subject kind (expected path, command or other)"
            )),
        }
    }
}

/// Everything the policy needs to know about one tool call.
#[derive(Debug, Clone, Copy)]
pub struct ToolFacts<'a> {
    /// The tool's name, e.g. `run_command`.
    pub tool: &'a str,
    /// What the call acts on: a path, a command line, a URL.
    pub subject: &'a str,
    /// How `subject` is matched.
    pub kind: SubjectKind,
    /// The policy the tool declares for itself; used only when no rule
    /// matched and the user gave the tool no default.
    pub declared: Option<Decision>,
    /// The working directory relative paths are resolved against.
    pub cwd: &'a Path,
}

impl<'a> ToolFacts<'a> {
    /// Facts with no declared policy.
    pub fn new(tool: &'a str, subject: &'a str, kind: SubjectKind, cwd: &'a Path) -> Self {
        ToolFacts {
            tool,
            subject,
            kind,
            declared: None,
            cwd,
        }
    }
}

/// The outcome of [`Policy::decide`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// What to do.
    pub decision: Decision,
    /// A short human explanation (shown by `uji policy check`), naming the
    /// rule, tool, set and the text that matched, or the fallback used.
    pub because: String,
    /// What the model reads when refused: the deciding rule's custom message
    /// (for deny and ask), or the "disabled" notice. `None` otherwise.
    pub message: Option<String>,
    /// The call asks because part of the command could not be accounted
    /// for (see [`CommandPart::resolved`]) while the tool has deny rules:
    /// nobody can tell whether a deny rule would have matched, so an
    /// automatic approver (`--yes`, headless) must deny it, not run it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unresolved: bool,
    /// Part of the command is not plain (see [`CommandPart::resolved`]):
    /// nothing may allow it without a person's answer, not even an
    /// "allow for this session" rule of the same line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opaque: bool,
}

impl Verdict {
    /// A verdict with no message.
    pub fn new(decision: Decision, because: impl Into<String>) -> Self {
        Verdict {
            decision,
            because: because.into(),
            message: None,
            unresolved: false,
            opaque: false,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.decision, self.because)
    }
}
