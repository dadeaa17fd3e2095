//! Parsing and compiling one tool's rules.
//!
//! All of a tool's deny, allow and ask rules are compiled together, once, at
//! `set_rules` time: exact rules into a hash map, globs into one `GlobSet` per
//! matching mode and regular expressions into one `RegexSet`. A single query
//! then reports the first matching rule of each list, so a compound command of
//! ten parts costs ten queries, not thirty.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use regex::{Regex, RegexSet};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Decision;

/// A rule that could not be used. It is dropped, and the tool it belongs to
/// can no longer be decided `allow` (allow outcomes become ask), so that a
/// typo never silently widens what runs unasked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleProblem {
    /// The tool whose entry held the rule; `*` for the top-level default or
    /// a malformed rules table, which cap every tool.
    pub tool: String,
    /// The rule's text as written (JSON for non-string values).
    pub rule: String,
    /// What is wrong with it, e.g. `is not a valid regular expression: …`.
    pub problem: String,
}

impl fmt::Display for RuleProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = if self.tool == "*" {
            "every tool"
        } else {
            self.tool.as_str()
        };
        write!(
            f,
            "policy for {who}: rule \"{}\" {}; {who} now asks instead of allowing",
            self.rule, self.problem
        )
    }
}

/// Which list a rule came from. The discriminant indexes [`Hits::first`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Deny = 0,
    Allow = 1,
    Ask = 2,
}

impl ListKind {
    pub(crate) fn decision(self) -> Decision {
        match self {
            ListKind::Deny => Decision::Deny,
            ListKind::Allow => Decision::Allow,
            ListKind::Ask => Decision::Ask,
        }
    }
}

/// How a subject is compared with globs and exact rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `*`/`?` stop at `/`; `~/` in rules is the home directory; `\` escapes.
    Path,
    /// `*` matches anything; `\`, `{` and `}` are literal.
    Plain,
}

/// One usable rule.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub text: String,
    pub message: Option<String>,
    pub list: ListKind,
}

/// The first matching rule (index into [`ToolRules::rules`]) of each list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Hits {
    pub first: [Option<usize>; 3],
}

impl Hits {
    fn note(&mut self, list: ListKind, idx: usize) {
        let slot = &mut self.first[list as usize];
        if slot.is_none_or(|s| idx < s) {
            *slot = Some(idx);
        }
    }

    pub(crate) fn get(&self, list: ListKind) -> Option<usize> {
        self.first[list as usize]
    }
}

/// One tool's compiled rules within one set.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolRules {
    /// Deny rules, then allow rules, then ask rules, each in written order,
    /// so a lower index is an earlier rule of its list.
    pub rules: Vec<Rule>,
    /// The tool's own `default`.
    pub default: Option<Decision>,
    /// What a plain read-only command part no rule matched gets
    /// (`read_only = "allow"`; see `shell::read_only`).
    pub read_only: Option<Decision>,
    /// An entry of this tool was invalid: it may not be decided `allow`.
    pub capped: bool,
    /// The programs the deny rules name (`rm` for `rm *` and
    /// `/^rm\s+-rf/`), for commands whose later words may run them.
    pub denied_programs: Vec<String>,
    exact_plain: HashMap<String, Hits>,
    exact_path: HashMap<String, Hits>,
    globs_plain: GlobSet,
    globs_path: GlobSet,
    glob_ids: Vec<usize>,
    regex_set: Option<RegexSet>,
    regexes: Vec<(Regex, usize)>,
}

impl ToolRules {
    /// Whether the tool has any rule at all (defaults aside).
    pub(crate) fn has_rules(&self) -> bool {
        !self.rules.is_empty()
    }

    /// Whether the tool has a deny rule.
    pub(crate) fn has_deny_rules(&self) -> bool {
        self.rules.iter().any(|r| r.list == ListKind::Deny)
    }

    /// The exact path deny rules (`~/` expanded), with their index.
    pub(crate) fn exact_path_denies(&self) -> impl Iterator<Item = (&str, usize)> {
        self.exact_path
            .iter()
            .filter_map(|(text, hits)| Some((text.as_str(), hits.get(ListKind::Deny)?)))
    }

    /// Whether a deny rule is a glob or a regex (it may match names no
    /// one can list).
    pub(crate) fn has_pattern_deny_rules(&self) -> bool {
        self.rules.iter().any(|r| {
            r.list == ListKind::Deny && (regex_body(&r.text).is_some() || is_glob(&r.text))
        })
    }

    /// First rule of each list matching `text`. `buf` is scratch space.
    pub(crate) fn query(&self, text: &str, mode: Mode, buf: &mut Vec<usize>) -> Hits {
        let mut hits = self.query_exact(text, mode);
        let globs = match mode {
            Mode::Path => &self.globs_path,
            Mode::Plain => &self.globs_plain,
        };
        if !globs.is_empty() {
            let cand = Candidate::new(text);
            buf.clear();
            globs.matches_candidate_into(&cand, buf);
            for &g in buf.iter() {
                if let Some(&idx) = self.glob_ids.get(g) {
                    self.note(&mut hits, idx);
                }
            }
        }
        if !self.regexes.is_empty() {
            match &self.regex_set {
                Some(set) => {
                    for r in set.matches(text).iter() {
                        if let Some((_, idx)) = self.regexes.get(r) {
                            self.note(&mut hits, *idx);
                        }
                    }
                }
                None => {
                    for (re, idx) in &self.regexes {
                        if re.is_match(text) {
                            self.note(&mut hits, *idx);
                        }
                    }
                }
            }
        }
        hits
    }

    /// Only exact rules: what a whole compound line may be allowed by.
    pub(crate) fn query_exact(&self, text: &str, mode: Mode) -> Hits {
        let map = match mode {
            Mode::Path => &self.exact_path,
            Mode::Plain => &self.exact_plain,
        };
        map.get(text).copied().unwrap_or_default()
    }

    fn note(&self, hits: &mut Hits, idx: usize) {
        if let Some(rule) = self.rules.get(idx) {
            hits.note(rule.list, idx);
        }
    }
}

/// Parse a `default` value. `Ok(None)` for null (not given).
pub(crate) fn parse_default(v: &Value) -> Result<Option<Decision>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => s.parse().map(Some).map_err(|_| s.clone()),
        other => Err(other.to_string()),
    }
}

pub(crate) const BAD_DEFAULT: &str = "is not a valid default (use \"allow\", \"ask\" or \"deny\")";

/// A rule as written, before compilation.
struct RawRule {
    pattern: String,
    message: Option<String>,
}

/// Collect the rules of one list value, reporting malformed ones.
fn raw_rules(tool: &str, v: &Value, problems: &mut Vec<RuleProblem>) -> (Vec<RawRule>, bool) {
    let mut out = Vec::new();
    let mut bad = false;
    let mut problem = |rule: String, problem: &str| {
        problems.push(RuleProblem {
            tool: tool.to_string(),
            rule,
            problem: problem.to_string(),
        });
    };
    let items: Vec<&Value> = match v {
        Value::Null => Vec::new(),
        Value::Array(a) => a.iter().collect(),
        Value::String(_) => vec![v],
        Value::Object(m) if m.is_empty() => Vec::new(),
        Value::Object(m) if m.contains_key("pattern") => vec![v],
        other => {
            problem(
                other.to_string(),
                "is not a list of rules (strings or {pattern, message} tables)",
            );
            return (out, true);
        }
    };
    for item in items {
        match rule_of(item) {
            Some(r) => out.push(r),
            None => {
                bad = true;
                problem(
                    item.to_string(),
                    "is not a string or a {pattern, message} table",
                );
            }
        }
    }
    (out, bad)
}

/// A single rule: a string, `{pattern, message}` or `[pattern, message]`.
fn rule_of(v: &Value) -> Option<RawRule> {
    match v {
        Value::String(s) => Some(RawRule {
            pattern: s.clone(),
            message: None,
        }),
        Value::Object(m) => {
            let pattern = m.get("pattern")?.as_str()?.to_string();
            let message = match m.get("message") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return None,
            };
            Some(RawRule { pattern, message })
        }
        Value::Array(a) if a.len() == 2 => Some(RawRule {
            pattern: a.first()?.as_str()?.to_string(),
            message: Some(a.get(1)?.as_str()?.to_string()),
        }),
        _ => None,
    }
}

/// A regex rule is `/…/` with at least the two slashes.
fn regex_body(p: &str) -> Option<&str> {
    if p.len() >= 2 && p.starts_with('/') && p.ends_with('/') {
        p.get(1..p.len() - 1)
    } else {
        None
    }
}

fn is_glob(p: &str) -> bool {
    p.contains(['*', '?', '['])
}

/// Make `{` and `}` literal outside character classes, since in commands they
/// are far more often literal text (`awk '{print}'`, `find -exec {}`) than
/// glob alternation.
fn literal_braces(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 8);
    let mut in_class = false;
    let mut class_len = 0usize;
    for c in p.chars() {
        if in_class {
            out.push(c);
            class_len += 1;
            // A `]` right after `[` or `[!`/`[^` is a literal member.
            let first = class_len == 1 || (class_len == 2 && out.ends_with(['!', '^']));
            if c == ']' && !first {
                in_class = false;
            }
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                class_len = 0;
                out.push(c);
            }
            '{' => out.push_str("[{]"),
            '}' => out.push_str("[}]"),
            _ => out.push(c),
        }
    }
    out
}

/// `~/rest` → `<home>/rest` for path rules; `escape` protects the home
/// directory's own characters when the rule is a glob.
fn with_home(p: &str, home: Option<&str>, escape: bool) -> String {
    match (p.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => {
            let h = h.trim_end_matches('/');
            if escape {
                format!("{}/{rest}", globset::escape(h))
            } else {
                format!("{h}/{rest}")
            }
        }
        _ => p.to_string(),
    }
}

/// The last non-empty line of a (possibly multi-line) error message.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

const KNOWN_KEYS: &str = "is not one of allow, ask, deny, default or read_only";

const BAD_READ_ONLY: &str =
    "is not a valid read_only decision (use \"allow\", \"ask\" or \"deny\")";

/// Compile one tool entry (`{allow = …, deny = …, ask = …, default = …}`).
pub(crate) fn compile_tool(
    tool: &str,
    entry: &Value,
    home: Option<&Path>,
    problems: &mut Vec<RuleProblem>,
) -> ToolRules {
    let mut t = ToolRules::default();
    let map = match entry {
        Value::Object(m) => m,
        Value::Array(a) if a.is_empty() => return t,
        other => {
            problems.push(RuleProblem {
                tool: tool.to_string(),
                rule: other.to_string(),
                problem: "is not a table of allow, ask, deny and default".to_string(),
            });
            t.capped = true;
            return t;
        }
    };
    let lists = entry_lists(tool, map, &mut t, problems);
    let mut sets = PatternSets::new();
    let home = home.and_then(Path::to_str);
    let kinds = [ListKind::Deny, ListKind::Allow, ListKind::Ask];
    for (list, raws) in kinds.into_iter().zip(lists) {
        for raw in raws {
            add_rule(tool, raw, list, home, &mut t, &mut sets, problems);
        }
    }
    sets.build_into(tool, &mut t, problems);
    t.denied_programs = t
        .rules
        .iter()
        .filter(|r| r.list == ListKind::Deny)
        .filter_map(|r| named_program(&r.text))
        .collect();
    t.denied_programs.sort();
    t.denied_programs.dedup();
    t
}

/// The program a rule names by its first word: `rm` for `rm -rf *`,
/// `/usr/bin/rm x` and `/^\s*rm\s+-rf/`; none when that word is a pattern.
fn named_program(rule: &str) -> Option<String> {
    let first = match regex_body(rule) {
        Some(body) => {
            let mut b = body.trim_start_matches("(?i)").trim_start_matches('^');
            loop {
                let next = b
                    .trim_start_matches("\\s*")
                    .trim_start_matches("\\s+")
                    .trim_start_matches("\\b")
                    .trim_start_matches(' ');
                if next.len() == b.len() {
                    break;
                }
                b = next;
            }
            let end = b
                .find(|c: char| !(c.is_ascii_alphanumeric() || "_-/".contains(c)))
                .unwrap_or(b.len());
            // Only a name the regex ends, not one it goes on to vary.
            let rest = b.get(end..).unwrap_or("");
            if !(rest.is_empty() || ["\\s", "\\b", " ", "$"].iter().any(|e| rest.starts_with(e))) {
                return None;
            }
            b.get(..end)?
        }
        None => rule.split_whitespace().next()?,
    };
    if is_glob(first) || first.contains(['{', '\\']) {
        return None;
    }
    let name = first.rsplit('/').next().unwrap_or(first);
    (!name.is_empty()).then(|| name.to_string())
}

/// The entry's deny, allow and ask lists, in that order; its default is
/// set on `t`, and unknown keys are problems.
fn entry_lists(
    tool: &str,
    map: &serde_json::Map<String, Value>,
    t: &mut ToolRules,
    problems: &mut Vec<RuleProblem>,
) -> [Vec<RawRule>; 3] {
    let mut lists: [Vec<RawRule>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (key, value) in map {
        match key.as_str() {
            "deny" | "allow" | "ask" => {
                let (rules, bad) = raw_rules(tool, value, problems);
                t.capped |= bad;
                let slot = match key.as_str() {
                    "deny" => 0,
                    "allow" => 1,
                    _ => 2,
                };
                if let Some(l) = lists.get_mut(slot) {
                    *l = rules;
                }
            }
            "default" => match parse_default(value) {
                Ok(d) => t.default = d,
                Err(text) => {
                    problems.push(RuleProblem {
                        tool: tool.to_string(),
                        rule: text,
                        problem: BAD_DEFAULT.to_string(),
                    });
                    t.capped = true;
                }
            },
            "read_only" => match parse_default(value) {
                Ok(d) => t.read_only = d,
                Err(text) => {
                    problems.push(RuleProblem {
                        tool: tool.to_string(),
                        rule: text,
                        problem: BAD_READ_ONLY.to_string(),
                    });
                    t.capped = true;
                }
            },
            other => {
                problems.push(RuleProblem {
                    tool: tool.to_string(),
                    rule: other.to_string(),
                    problem: KNOWN_KEYS.to_string(),
                });
                t.capped = true;
            }
        }
    }
    lists
}

/// The globs and regexes of one tool's rules, compiled together at the end.
struct PatternSets {
    plain_globs: GlobSetBuilder,
    path_globs: GlobSetBuilder,
    regex_src: Vec<String>,
}

impl PatternSets {
    fn new() -> PatternSets {
        PatternSets {
            plain_globs: GlobSetBuilder::new(),
            path_globs: GlobSetBuilder::new(),
            regex_src: Vec::new(),
        }
    }

    fn build_into(self, tool: &str, t: &mut ToolRules, problems: &mut Vec<RuleProblem>) {
        match (self.plain_globs.build(), self.path_globs.build()) {
            (Ok(a), Ok(b)) => {
                t.globs_plain = a;
                t.globs_path = b;
            }
            _ => {
                // Each glob compiled alone; only a size limit can fail here.
                problems.push(RuleProblem {
                    tool: tool.to_string(),
                    rule: "(all globs)".to_string(),
                    problem: "are too large to compile together".to_string(),
                });
                t.capped = true;
                t.glob_ids.clear();
            }
        }
        if self.regex_src.len() > 1 {
            // A set can exceed size limits its members did not; then the
            // regexes are simply tried one by one.
            t.regex_set = RegexSet::new(&self.regex_src).ok();
        }
    }
}

/// Adds one rule to `t` (a regex, a glob or an exact pattern); a pattern
/// that does not compile is a problem and caps the tool.
fn add_rule(
    tool: &str,
    raw: RawRule,
    list: ListKind,
    home: Option<&str>,
    t: &mut ToolRules,
    sets: &mut PatternSets,
    problems: &mut Vec<RuleProblem>,
) {
    let p = raw.pattern.as_str();
    let idx = t.rules.len();
    let compiled = if let Some(body) = regex_body(p) {
        Regex::new(body)
            .map(|re| {
                sets.regex_src.push(body.to_string());
                t.regexes.push((re, idx));
            })
            .map_err(|e| {
                format!(
                    "is not a valid regular expression: {}",
                    one_line(&e.to_string())
                )
            })
    } else if is_glob(p) {
        rule_globs(p, home)
            .map(|(plain, path)| {
                sets.plain_globs.add(plain);
                sets.path_globs.add(path);
                t.glob_ids.push(idx);
            })
            .map_err(|kind| format!("is not a valid glob: {kind}"))
    } else {
        t.exact_plain
            .entry(p.to_string())
            .or_default()
            .note(list, idx);
        t.exact_path
            .entry(with_home(p, home, false))
            .or_default()
            .note(list, idx);
        Ok(())
    };
    if let Err(problem) = compiled {
        problems.push(RuleProblem {
            tool: tool.to_string(),
            rule: raw.pattern.clone(),
            problem,
        });
        t.capped = true;
        return;
    }
    t.rules.push(Rule {
        text: raw.pattern,
        message: raw.message,
        list,
    });
}

/// A glob rule as matched against a plain subject and against a path.
fn rule_globs(p: &str, home: Option<&str>) -> Result<(Glob, Glob), globset::ErrorKind> {
    let plain = GlobBuilder::new(&literal_braces(p))
        .literal_separator(false)
        .backslash_escape(false)
        .build();
    let path_pat = with_home(p, home, true);
    // A rule written for a command (`awk '{print' *`, a trailing
    // `\`) may not parse as a path glob with `{a,b}` and escapes;
    // then it is matched as a path with those characters literal.
    let path = GlobBuilder::new(&path_pat)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .or_else(|_| {
            GlobBuilder::new(&literal_braces(&path_pat))
                .literal_separator(true)
                .backslash_escape(false)
                .build()
        });
    match (plain, path) {
        (Ok(plain), Ok(path)) => Ok((plain, path)),
        (Err(e), _) | (_, Err(e)) => Err(e.kind().clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_become_literal_outside_classes() {
        assert_eq!(literal_braces("awk '{print}' *"), "awk '[{]print[}]' *");
        assert_eq!(literal_braces("[{]x"), "[{]x");
        assert_eq!(literal_braces("[]{]{"), "[]{][{]");
    }

    #[test]
    fn rules_name_their_program() {
        assert_eq!(named_program("rm -rf *").as_deref(), Some("rm"));
        assert_eq!(named_program("/usr/bin/rm x").as_deref(), Some("rm"));
        assert_eq!(named_program("/^rm\\s+-rf/").as_deref(), Some("rm"));
        assert_eq!(named_program("/^\\s*sudo\\b/").as_deref(), Some("sudo"));
        assert_eq!(named_program("sudo").as_deref(), Some("sudo"));
        assert_eq!(named_program("*rm*"), None);
        assert_eq!(named_program("/.*rm/"), None);
    }

    #[test]
    fn regex_body_needs_two_slashes() {
        assert_eq!(regex_body("/"), None);
        assert_eq!(regex_body("//"), Some(""));
        assert_eq!(regex_body("/a/"), Some("a"));
        assert_eq!(regex_body("/etc/passwd"), None);
    }

    #[test]
    fn home_is_escaped_in_globs() {
        assert_eq!(with_home("~/x/*", Some("/h[1]"), true), "/h[[]1[]]/x/*");
        assert_eq!(with_home("~/x", Some("/h/"), false), "/h/x");
        assert_eq!(with_home("~/x", None, false), "~/x");
    }
}
