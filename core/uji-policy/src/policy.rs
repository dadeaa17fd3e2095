//! The [`Policy`]: rule sets, disabled tools, confinement, and `decide`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::links::{self, Linked};
use crate::paths::{self, ConfineError, canonicalize_lenient, expand_home, home_dir};
use crate::rules::{self, Hits, ListKind, Mode, RuleProblem, ToolRules};
use crate::shell::{CommandPart, command_parts, mark_hidden_programs};
use crate::{Decision, SubjectKind, ToolFacts, Verdict};

/// The tool whose rules decide which files a read-only command may name
/// (its declared policy is allow).
const READ_FILE: &str = "read_file";

/// The set `set_rules(…, None)` writes to.
pub const DEFAULT_SET: &str = "default";

/// One named group of rules, e.g. the user's config ("default") or a mode
/// such as "readonly" layered on top.
#[derive(Debug, Clone)]
struct RuleSet {
    name: String,
    tools: HashMap<String, ToolRules>,
    default: Option<Decision>,
    /// The top-level default or the table itself was invalid: nothing may be
    /// decided `allow`.
    capped_all: bool,
}

/// The decision engine's state.
///
/// `Default` has no rules, nothing disabled, confinement on and no extra
/// roots; with no rules every tool falls back to its declared policy, else
/// ask.
#[derive(Debug, Clone)]
pub struct Policy {
    sets: Vec<RuleSet>,
    disabled: BTreeSet<String>,
    confine: bool,
    roots: Vec<PathBuf>,
    /// Directories only reading may reach (`uji.tool.read_roots`): skills
    /// and references kept outside the workspace.
    read_roots: Vec<PathBuf>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            sets: Vec::new(),
            disabled: BTreeSet::new(),
            confine: true,
            roots: Vec::new(),
            read_roots: Vec::new(),
        }
    }
}

/// A matching rule found while deciding.
struct Hit<'p> {
    set: &'p str,
    idx: usize,
    rules: &'p ToolRules,
    /// The text the rule matched (a part, the line, a path form).
    matched: String,
}

impl Hit<'_> {
    fn text(&self) -> &str {
        self.rules
            .rules
            .get(self.idx)
            .map_or("", |r| r.text.as_str())
    }

    fn message(&self) -> Option<String> {
        self.rules
            .rules
            .get(self.idx)
            .and_then(|r| r.message.clone())
    }
}

/// Fold step keeping the strictest decision (the first set on ties).
fn strictest<'s>(
    acc: Option<(Decision, &'s str)>,
    (d, set): (Decision, &'s str),
) -> Option<(Decision, &'s str)> {
    match acc {
        Some((best, _)) if best >= d => acc,
        _ => Some((d, set)),
    }
}

/// One set's opinion of the tool: its name and compiled rules.
type Entry<'p> = (&'p str, &'p ToolRules);

/// Per-set query results for one probe text.
type SetHits = Vec<Hits>;

fn first_hit<'p>(
    entries: &[Entry<'p>],
    hits: &SetHits,
    list: ListKind,
    matched: &str,
) -> Option<Hit<'p>> {
    entries
        .iter()
        .zip(hits.iter())
        .find_map(|(&(set, rules), h)| {
            h.get(list).map(|idx| Hit {
                set,
                idx,
                rules,
                matched: matched.to_string(),
            })
        })
}

fn query_all(entries: &[Entry<'_>], text: &str, mode: Mode, buf: &mut Vec<usize>) -> SetHits {
    entries
        .iter()
        .map(|(_, r)| r.query(text, mode, buf))
        .collect()
}

fn query_exact_all(entries: &[Entry<'_>], text: &str, mode: Mode) -> SetHits {
    entries
        .iter()
        .map(|(_, r)| r.query_exact(text, mode))
        .collect()
}

fn rule_verdict(list: ListKind, tool: &str, hit: &Hit<'_>, what: &str) -> Verdict {
    let decision = list.decision();
    let what = if what.is_empty() {
        String::new()
    } else {
        format!("{what} ")
    };
    Verdict {
        decision,
        because: format!(
            "{decision} rule \"{}\" of {tool} in set \"{}\" matched {what}\"{}\"",
            hit.text(),
            hit.set,
            hit.matched
        ),
        message: if decision == Decision::Allow {
            None
        } else {
            hit.message()
        },
        unresolved: false,
        opaque: false,
    }
}

/// Rule hits for every spelling of every part and the line; each distinct
/// text is queried once and the lists are looked up after.
fn query_parts<'t>(
    entries: &[Entry<'_>],
    line: &'t str,
    parts: &'t [CommandPart],
) -> HashMap<&'t str, SetHits> {
    let mut buf = Vec::new();
    let mut cache: HashMap<&str, SetHits> = HashMap::new();
    for t in parts
        .iter()
        .flat_map(|p| p.strict_texts().chain(p.allow_texts()))
        .chain(std::iter::once(line))
    {
        if !cache.contains_key(t) {
            let hits = query_all(entries, t, Mode::Plain, &mut buf);
            cache.insert(t, hits);
        }
    }
    cache
}

/// Why one part of a command may run unasked.
enum Allowance<'p> {
    /// An allow rule matched it.
    Rule(Hit<'p>),
    /// It only reads files `read_file` reads unasked, and the tool's
    /// `read_only` (of `set`) is allow.
    ReadOnly { set: &'p str, part: String },
}

impl Allowance<'_> {
    fn describe(&self) -> String {
        match self {
            Allowance::Rule(h) => format!(
                "\"{}\" by rule \"{}\" (set \"{}\")",
                h.matched,
                h.text(),
                h.set
            ),
            Allowance::ReadOnly { set, part } => {
                format!("\"{part}\" as read-only (set \"{set}\")")
            }
        }
    }
}

/// The verdict of a part decided by the tool's `read_only`.
fn read_only_verdict(decision: Decision, tool: &str, set: &str, part: &str) -> Verdict {
    Verdict::new(
        decision,
        format!("read-only command \"{part}\"; read_only = {decision} of {tool} in set \"{set}\""),
    )
}

/// Every part was allowed by a rule or as read-only.
fn all_allowed(tool: &str, allowed: &[Allowance<'_>]) -> Verdict {
    match allowed {
        [Allowance::Rule(only)] => return rule_verdict(ListKind::Allow, tool, only, "part"),
        [Allowance::ReadOnly { set, part }] => {
            return read_only_verdict(Decision::Allow, tool, set, part);
        }
        _ => {}
    }
    let list: Vec<String> = allowed.iter().map(Allowance::describe).collect();
    let by_rules = allowed.iter().all(|a| matches!(a, Allowance::Rule(_)));
    let how = if by_rules {
        "allow rules of {tool} matched every part"
    } else {
        "allow rules and read_only of {tool} allowed every part"
    };
    Verdict::new(
        Decision::Allow,
        format!("{}: {}", how.replace("{tool}", tool), list.join(", ")),
    )
}

/// What the hard links of the subject file decide ([`links`]), if anything.
fn hard_link_verdict(facts: &ToolFacts<'_>, entries: &[Entry<'_>], file: &Path) -> Option<Verdict> {
    let verdict = match links::check(file, facts.cwd, entries)? {
        Linked::Denied {
            set,
            rules,
            idx,
            name,
        } => {
            let hit = Hit {
                set,
                idx,
                rules,
                matched: format!("{name} (the same file as {}, hard-linked)", facts.subject),
            };
            rule_verdict(ListKind::Deny, facts.tool, &hit, "path")
        }
        Linked::Unresolved { links } => Verdict {
            decision: Decision::Ask,
            because: format!(
                "{} is a file with {links} hard links, and a deny rule of {} might name one of its other names; asking",
                facts.subject, facts.tool
            ),
            message: None,
            unresolved: true,
            opaque: true,
        },
    };
    Some(verdict)
}

/// A command with an unresolved part is never allowed; its ask is marked
/// [`Verdict::unresolved`] when the tool has deny rules, and says which part.
fn fail_closed(mut verdict: Verdict, parts: &[CommandPart], entries: &[Entry<'_>]) -> Verdict {
    let Some(part) = parts.iter().find(|p| !p.resolved) else {
        return verdict;
    };
    if verdict.decision == Decision::Deny {
        return verdict;
    }
    verdict.opaque = true;
    let why = part.reason.as_deref().unwrap_or("unresolved");
    let shown: String = part.text.chars().take(120).collect();
    verdict.because = format!(
        "could not tell what `{shown}` runs ({why}); asking (was: {})",
        verdict.because
    );
    verdict.decision = Decision::Ask;
    verdict.unresolved = entries.iter().any(|(_, t)| t.has_deny_rules());
    verdict
}

impl Policy {
    /// A policy with no rules (same as `Default`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Install rules into a set (`None` = [`DEFAULT_SET`]).
    ///
    /// Replaces the tools `rules` names, and the top-level default if it
    /// gives one, keeping everything else in that set; other sets are never
    /// touched. Problems are returned, not fatal: a bad rule is dropped and
    /// its tool is capped at ask (a bad top-level default caps every tool),
    /// because silently ignoring, say, a mistyped deny rule must not leave
    /// the tool running unasked. `~/` in path rules is expanded with `$HOME`
    /// as it is now.
    pub fn set_rules(&mut self, rules: &Value, set: Option<&str>) -> Vec<RuleProblem> {
        let name = set.unwrap_or(DEFAULT_SET);
        let home = home_dir();
        let mut problems = Vec::new();
        let pos = match self.sets.iter().position(|s| s.name == name) {
            Some(p) => p,
            None => {
                self.sets.push(RuleSet {
                    name: name.to_string(),
                    tools: HashMap::new(),
                    default: None,
                    capped_all: false,
                });
                self.sets.len() - 1
            }
        };
        let Some(target) = self.sets.get_mut(pos) else {
            return problems;
        };
        match rules {
            Value::Object(map) => {
                for (key, value) in map {
                    if key == "default" {
                        match rules::parse_default(value) {
                            Ok(None) => {}
                            Ok(Some(d)) => {
                                target.default = Some(d);
                                target.capped_all = false;
                            }
                            Err(text) => {
                                problems.push(RuleProblem {
                                    tool: "*".to_string(),
                                    rule: text,
                                    problem: rules::BAD_DEFAULT.to_string(),
                                });
                                target.default = None;
                                target.capped_all = true;
                            }
                        }
                    } else {
                        let compiled =
                            rules::compile_tool(key, value, home.as_deref(), &mut problems);
                        target.tools.insert(key.clone(), compiled);
                    }
                }
            }
            Value::Null => {}
            Value::Array(a) if a.is_empty() => {}
            other => {
                problems.push(RuleProblem {
                    tool: "*".to_string(),
                    rule: other.to_string(),
                    problem: "is not a table of tool rules".to_string(),
                });
                target.capped_all = true;
            }
        }
        problems
    }

    /// Remove a set entirely (`None` = [`DEFAULT_SET`]); returns whether it
    /// existed. Useful when a mode such as "readonly" is switched off.
    pub fn clear_rules(&mut self, set: Option<&str>) -> bool {
        let name = set.unwrap_or(DEFAULT_SET);
        let before = self.sets.len();
        self.sets.retain(|s| s.name != name);
        self.sets.len() != before
    }

    /// Names of the sets that have been given rules, in creation order.
    pub fn set_names(&self) -> Vec<String> {
        self.sets.iter().map(|s| s.name.clone()).collect()
    }

    /// Disable tools: they are denied whatever the rules say.
    pub fn disable(&mut self, names: &[String]) {
        self.disabled.extend(names.iter().cloned());
    }

    /// Re-enable tools disabled with [`Policy::disable`].
    pub fn enable(&mut self, names: &[String]) {
        for n in names {
            self.disabled.remove(n);
        }
    }

    /// Is the tool disabled?
    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.contains(name)
    }

    /// The disabled tools, sorted.
    pub fn disabled(&self) -> Vec<String> {
        self.disabled.iter().cloned().collect()
    }

    /// Turn confinement on or off (`Some`), or just read it (`None`).
    /// Returns the setting in force afterwards.
    pub fn confine(&mut self, enabled: Option<bool>) -> bool {
        if let Some(e) = enabled {
            self.confine = e;
        }
        self.confine
    }

    /// Replace the extra roots the file tools may reach (`Some`), or just
    /// read them (`None`). A leading `~/` is expanded with `$HOME`; other
    /// paths are stored as given, and a relative root is taken against the
    /// working directory of each check.
    pub fn roots(&mut self, paths: Option<Vec<String>>) -> Vec<PathBuf> {
        if let Some(p) = paths {
            self.roots = p.iter().map(|r| expand_home(r)).collect();
        }
        self.roots.clone()
    }

    /// Replace the directories only reading may reach besides the roots
    /// (`Some`), or just read them (`None`); stored as [`Policy::roots`]
    /// stores its paths.
    pub fn read_roots(&mut self, paths: Option<Vec<String>>) -> Vec<PathBuf> {
        if let Some(p) = paths {
            self.read_roots = p.iter().map(|r| expand_home(r)).collect();
        }
        self.read_roots.clone()
    }

    /// [`Policy::check_path`] for a call that only reads: a path under one
    /// of the read roots is reachable too.
    ///
    /// # Errors
    /// As [`Policy::check_path`]; the allowed directories named include the
    /// read roots.
    pub fn check_read_path(&self, path: &str, cwd: &Path) -> Result<PathBuf, ConfineError> {
        match self.check_path(path, cwd) {
            Err(ConfineError::Outside { .. }) if self.read_root_of(path, cwd).is_some() => {
                paths::resolve_against(path, cwd)
            }
            Err(ConfineError::Outside { .. }) if !self.read_roots.is_empty() => {
                let mut shown = vec![cwd.to_path_buf()];
                shown.extend(self.roots.iter().cloned());
                shown.extend(self.read_roots.iter().cloned());
                Err(paths::outside(path, shown))
            }
            other => other,
        }
    }

    /// The canonical read root `path` lies under, if any (the directory a
    /// reading tool is then given to open it beneath).
    pub fn read_root_of(&self, path: &str, cwd: &Path) -> Option<PathBuf> {
        let canon = paths::resolve_against(path, cwd).ok()?;
        self.read_roots
            .iter()
            .filter_map(|dir| canonicalize_lenient(&cwd.join(dir)).ok())
            .find(|root| paths::is_within(&canon, std::slice::from_ref(root)))
    }

    /// Where a file tool may go: the canonical path of `path` (with `~/`
    /// expanded, relative to `cwd`).
    ///
    /// With confinement on, the canonical path must lie under the canonical
    /// `cwd` or one of the canonical roots; this refuses `../` escapes,
    /// absolute paths elsewhere, symlinks (to files or directories, dangling
    /// or not) leading out, and new files under such links. The check is
    /// lexical over resolved paths and so does not guard against the tree
    /// changing between the check and the use.
    ///
    /// # Errors
    /// [`ConfineError::Outside`] naming the path and the allowed directories;
    /// [`ConfineError::Loop`] for a symlink loop (also with confinement off).
    pub fn check_path(&self, path: &str, cwd: &Path) -> Result<PathBuf, ConfineError> {
        let canon = paths::resolve_against(path, cwd)?;
        if !self.confine {
            return Ok(canon);
        }
        let mut shown = vec![cwd.to_path_buf()];
        shown.extend(self.roots.iter().cloned());
        let allowed: Vec<PathBuf> = shown
            .iter()
            .filter_map(|dir| {
                let abs = if dir.is_absolute() {
                    dir.clone()
                } else {
                    cwd.join(dir)
                };
                canonicalize_lenient(&abs).ok()
            })
            .collect();
        if paths::is_within(&canon, &allowed) {
            Ok(canon)
        } else {
            Err(paths::outside(path, shown))
        }
    }

    /// Decide one tool call.
    ///
    /// Order: a disabled tool is denied; otherwise deny rules of every set,
    /// then allow rules, then ask rules, first match wins (commands differ,
    /// see below). With no match the fallback chain is the tool's own
    /// `default` (strictest across sets), the tool's declared policy, the
    /// top-level `default` (strictest across sets), and finally ask. A tool
    /// with an invalid rule is never allowed: allow becomes ask.
    ///
    /// For [`SubjectKind::Command`] the line and every part from
    /// [`command_parts`](crate::command_parts) are checked: a deny anywhere
    /// (on any spelling of a part: as written, quotes removed, program path
    /// reduced to its name) denies, then an ask anywhere asks, then the
    /// command is allowed if every part hits an allow rule; with more than
    /// one part the whole line is only allowed by an exact rule, since
    /// `git diff*` must not allow `git diff; rm -rf ~`. A part that is not
    /// [`resolved`](crate::CommandPart::resolved) is never allowed (by a
    /// rule or a fallback): the call asks, with [`Verdict::unresolved`] set
    /// when the tool has deny rules, or is denied by a deny rule or fallback.
    pub fn decide(&self, facts: &ToolFacts<'_>) -> Verdict {
        let tool = facts.tool;
        if self.disabled.contains(tool) {
            let text = format!("{tool} is disabled");
            return Verdict {
                decision: Decision::Deny,
                because: text.clone(),
                message: Some(text),
                unresolved: false,
                opaque: false,
            };
        }
        let entries: Vec<Entry<'_>> = self
            .sets
            .iter()
            .filter_map(|s| s.tools.get(tool).map(|t| (s.name.as_str(), t)))
            .collect();
        let mut verdict = match facts.kind {
            SubjectKind::Command => self.decide_command(facts, &entries),
            SubjectKind::Path => self.decide_path(facts, &entries),
            SubjectKind::Other => {
                let subject = facts.subject;
                self.decide_probes(facts, &entries, &[subject.to_string()], Mode::Plain, "")
            }
        };
        if verdict.decision == Decision::Allow {
            let tool_capped = entries.iter().any(|(_, t)| t.capped);
            let all_capped = self.sets.iter().find(|s| s.capped_all);
            if tool_capped || all_capped.is_some() {
                let whose = if tool_capped {
                    format!("the policy for {tool}")
                } else {
                    "the top-level policy".to_string()
                };
                verdict.decision = Decision::Ask;
                verdict.because = format!(
                    "{}; asking instead because {whose} has an invalid rule",
                    verdict.because
                );
            }
        }
        verdict
    }

    /// Deny, allow, ask over several probe texts, then the fallback.
    fn decide_probes(
        &self,
        facts: &ToolFacts<'_>,
        entries: &[Entry<'_>],
        probes: &[String],
        mode: Mode,
        what: &str,
    ) -> Verdict {
        if entries.iter().any(|(_, t)| t.has_rules()) {
            let mut buf = Vec::new();
            let all: Vec<(SetHits, &str)> = probes
                .iter()
                .map(|p| (query_all(entries, p, mode, &mut buf), p.as_str()))
                .collect();
            for list in [ListKind::Deny, ListKind::Allow, ListKind::Ask] {
                let hit = entries.iter().enumerate().find_map(|(i, &(set, rules))| {
                    // Within one set, the earliest rule over all probes.
                    all.iter()
                        .filter_map(|(h, text)| {
                            h.get(i).and_then(|x| x.get(list)).map(|idx| (idx, *text))
                        })
                        .min_by_key(|(idx, _)| *idx)
                        .map(|(idx, text)| Hit {
                            set,
                            idx,
                            rules,
                            matched: text.to_string(),
                        })
                });
                if let Some(hit) = hit {
                    return rule_verdict(list, facts.tool, &hit, what);
                }
            }
        }
        self.fallback(facts, entries)
    }

    /// Path subjects are matched in every form that names the same file:
    /// as given, made absolute against `cwd`, canonical, and canonical
    /// relative to the canonical `cwd`.
    fn decide_path(&self, facts: &ToolFacts<'_>, entries: &[Entry<'_>]) -> Verdict {
        let mut probes: Vec<String> = vec![facts.subject.to_string()];
        let mut file = None;
        if entries.iter().any(|(_, t)| t.has_rules()) {
            let mut add = |p: &Path| {
                let s = p.to_string_lossy();
                if !s.is_empty() && !probes.iter().any(|x| *x == s) {
                    probes.push(s.into_owned());
                }
            };
            let expanded = expand_home(facts.subject);
            let joined = if expanded.is_absolute() {
                expanded
            } else {
                facts.cwd.join(expanded)
            };
            // Drops `.` components and trailing slashes, keeps `..`.
            let joined: PathBuf = joined.components().collect();
            add(&joined);
            if let Ok(canon) = canonicalize_lenient(&joined) {
                add(&canon);
                if let Ok(ccwd) = canonicalize_lenient(facts.cwd)
                    && let Ok(rel) = canon.strip_prefix(&ccwd)
                {
                    add(rel);
                }
                file = Some(canon);
            }
        }
        let verdict = self.decide_probes(facts, entries, &probes, Mode::Path, "path");
        match file.filter(|_| verdict.decision != Decision::Deny) {
            Some(file) => hard_link_verdict(facts, entries, &file).unwrap_or(verdict),
            None => verdict,
        }
    }

    fn decide_command(&self, facts: &ToolFacts<'_>, entries: &[Entry<'_>]) -> Verdict {
        let line = facts.subject.trim();
        let mut parts = command_parts(line);
        let denied: Vec<&str> = entries
            .iter()
            .flat_map(|(_, t)| t.denied_programs.iter().map(String::as_str))
            .collect();
        mark_hidden_programs(&mut parts, &denied);
        let verdict = if entries
            .iter()
            .any(|(_, t)| t.has_rules() || t.read_only.is_some())
        {
            self.command_rules(facts, entries, line, &parts)
        } else {
            self.fallback(facts, entries)
        };
        fail_closed(verdict, &parts, entries)
    }

    /// Deny anywhere denies, then each part is allowed or asked; see
    /// [`Policy::decide`].
    fn command_rules(
        &self,
        facts: &ToolFacts<'_>,
        entries: &[Entry<'_>],
        line: &str,
        parts: &[CommandPart],
    ) -> Verdict {
        let tool = facts.tool;
        let cache = query_parts(entries, line, parts);
        let probe = |t: &str, list: ListKind| {
            cache
                .get(t)
                .and_then(|hits| first_hit(entries, hits, list, t))
        };
        for part in parts {
            if let Some(hit) = part.strict_texts().find_map(|t| probe(t, ListKind::Deny)) {
                return rule_verdict(ListKind::Deny, tool, &hit, "part");
            }
        }
        let single = parts.len() == 1 && parts.first().is_some_and(|p| p.text == line);
        if !single && let Some(hit) = probe(line, ListKind::Deny) {
            return rule_verdict(ListKind::Deny, tool, &hit, "line");
        }
        // Each part follows the rule order (an allow rule matching a part
        // wins over an ask rule matching it too); any part left asking
        // makes the call ask, and an unresolved part is never allowed.
        // A part no rule matched may be read-only.
        let mut allowed: Vec<Allowance<'_>> = Vec::new();
        let mut unmatched = false;
        for part in parts {
            let allow = if part.resolved {
                part.allow_texts().find_map(|t| probe(t, ListKind::Allow))
            } else {
                None
            };
            if let Some(hit) = allow {
                allowed.push(Allowance::Rule(hit));
                continue;
            }
            if let Some(hit) = part.strict_texts().find_map(|t| probe(t, ListKind::Ask)) {
                return rule_verdict(ListKind::Ask, tool, &hit, "part");
            }
            match self.read_only(facts, entries, part) {
                Some((Decision::Allow, set)) => allowed.push(Allowance::ReadOnly {
                    set,
                    part: part.text.clone(),
                }),
                Some((decision, set)) => {
                    return read_only_verdict(decision, tool, set, &part.text);
                }
                None => unmatched = true,
            }
        }
        if single {
            return match allowed.first() {
                Some(_) if !unmatched => all_allowed(tool, &allowed),
                _ => self.fallback(facts, entries),
            };
        }
        // A compound line is only allowed whole by an exact rule, since
        // `git diff*` must not allow `git diff; rm -rf ~`.
        let exact = query_exact_all(entries, line, Mode::Plain);
        let line_allow = first_hit(entries, &exact, ListKind::Allow, line);
        if line_allow.is_none()
            && let Some(hit) = probe(line, ListKind::Ask)
        {
            return rule_verdict(ListKind::Ask, tool, &hit, "line");
        }
        if !unmatched && !allowed.is_empty() {
            return all_allowed(tool, &allowed);
        }
        match line_allow {
            Some(hit) => rule_verdict(ListKind::Allow, tool, &hit, "line"),
            None => self.fallback(facts, entries),
        }
    }

    /// What the tool's `read_only` (strictest over sets) decides for
    /// `part`, and its set: only for a plain read-only part every named
    /// file of which `read_file` would read unasked, confinement included.
    fn read_only<'p>(
        &self,
        facts: &ToolFacts<'_>,
        entries: &[Entry<'p>],
        part: &CommandPart,
    ) -> Option<(Decision, &'p str)> {
        let (decision, set) = entries
            .iter()
            .filter_map(|(set, t)| t.read_only.map(|d| (d, *set)))
            .fold(None, strictest)?;
        let paths = part.read_paths()?;
        // Path rules see every form of the path (`decide_path`).
        let readable = |path: &String| {
            let read = ToolFacts {
                declared: Some(Decision::Allow),
                ..ToolFacts::new(READ_FILE, path, SubjectKind::Path, facts.cwd)
            };
            self.check_path(path, facts.cwd).is_ok()
                && self.decide(&read).decision == Decision::Allow
        };
        paths.iter().all(readable).then_some((decision, set))
    }

    /// The chain used when no rule matched.
    fn fallback(&self, facts: &ToolFacts<'_>, entries: &[Entry<'_>]) -> Verdict {
        let tool = facts.tool;
        let tool_default = entries
            .iter()
            .filter_map(|(set, t)| t.default.map(|d| (d, *set)))
            .fold(None, strictest);
        if let Some((d, set)) = tool_default {
            return Verdict::new(
                d,
                format!("no rule matched; {tool}'s default (set \"{set}\")"),
            );
        }
        if let Some(d) = facts.declared {
            return Verdict::new(d, format!("no rule matched; declared policy of {tool}"));
        }
        let top = self
            .sets
            .iter()
            .filter_map(|s| s.default.map(|d| (d, s.name.as_str())))
            .fold(None, strictest);
        if let Some((d, set)) = top {
            let because = if set == DEFAULT_SET {
                "no rule matched; top-level default".to_string()
            } else {
                format!("no rule matched; top-level default (set \"{set}\")")
            };
            return Verdict::new(d, because);
        }
        Verdict::new(Decision::Ask, "no rule matched; fallback ask")
    }
}
