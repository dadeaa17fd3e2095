//! Walking the syntax tree and turning each simple command into parts.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree, TreeCursor};

use super::words::{Word, text, unescape_backticks, word};
use super::wrappers::{Inner, look_through};
use super::{CommandPart, MAX_DEPTH, MAX_PARTS, SYSTEM_DIRS, normalise_space};

thread_local! {
    /// Making a parser costs more than parsing a short line; keep one.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn parse(src: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut p = Parser::new();
            p.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(p);
        }
        slot.as_mut()?.parse(src, None)
    })
}

/// The parts found so far, capped at [`MAX_PARTS`].
#[derive(Default)]
pub(crate) struct Collector {
    parts: Vec<CommandPart>,
    overflow: bool,
}

impl Collector {
    fn push(&mut self, part: CommandPart) {
        if self.parts.len() < MAX_PARTS {
            self.parts.push(part);
        } else {
            self.overflow = true;
        }
    }

    /// The parts, with one unresolved part standing for any beyond the cap.
    pub(crate) fn finish(mut self) -> Vec<CommandPart> {
        if self.overflow {
            self.parts.push(CommandPart::unresolved(
                "…",
                format!("the line has more than {MAX_PARTS} commands; the rest were not checked"),
            ));
        }
        self.parts
    }
}

/// Parse `src` (the line, or a command string found inside it) and collect
/// its parts.
pub(crate) fn parse_into(src: &str, depth: usize, col: &mut Collector) {
    parse_one(src, depth, col);
    // The shell drops `\<newline>` before splitting words (`r\<newline>m`
    // is `rm`); the grammar keeps it as a blank. Check both readings.
    if src.contains("\\\n") {
        let joined = src.replace("\\\n", "");
        let mut more = Collector::default();
        parse_one(&joined, depth, &mut more);
        for part in more.finish() {
            if !col.parts.contains(&part) {
                col.push(part);
            }
        }
    }
}

fn parse_one(src: &str, depth: usize, col: &mut Collector) {
    if depth > MAX_DEPTH {
        col.push(CommandPart::unresolved(
            src,
            format!("commands nested deeper than {MAX_DEPTH} levels"),
        ));
        return;
    }
    let Some(tree) = parse(src) else {
        col.push(CommandPart::unresolved(
            src,
            "the line could not be parsed".into(),
        ));
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        col.push(CommandPart::unresolved(
            src,
            "the shell grammar does not accept this line".into(),
        ));
    }
    // Depth-first with a cursor, not recursion, so a deeply nested line
    // cannot exhaust the call stack (and nothing is allocated per node).
    let mut cursor = root.walk();
    // One cursor for reading each command's children, reset per command.
    let mut scratch = root.walk();
    // The statement redirections of the command about to be visited.
    let mut outer: Option<(usize, String)> = None;
    loop {
        if col.overflow {
            return;
        }
        let node = cursor.node();
        let descend = visit(node, src, depth, col, &mut outer, &mut scratch);
        if descend && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// Handle one node; false when its children must not be walked.
fn visit<'t>(
    node: Node<'t>,
    src: &str,
    depth: usize,
    col: &mut Collector,
    outer: &mut Option<(usize, String)>,
    scratch: &mut TreeCursor<'t>,
) -> bool {
    match node.kind() {
        "command" => {
            let extra = match outer.take() {
                Some((id, r)) if id == node.id() => r,
                other => {
                    *outer = other;
                    String::new()
                }
            };
            command(node, src, &extra, depth, col, scratch);
            // Only a substitution can hide another command inside a simple
            // command's words; most commands have none, and walking every
            // token would cost as much as the parse.
            return may_nest(text(node, src));
        }
        "redirected_statement" => match node.child_by_field_name("body") {
            Some(b) if b.kind() == "command" => *outer = Some((b.id(), redirections(node, src))),
            _ => compound_redirect(node, src, col),
        },
        "heredoc_body" => heredoc(node, src, depth, col),
        // Words and redirections hold a command only inside a substitution.
        "word"
        | "string"
        | "raw_string"
        | "number"
        | "concatenation"
        | "file_redirect"
        | "simple_expansion"
        | "variable_assignment"
        | "ansi_c_string"
        | "comment" => {
            return may_nest(text(node, src));
        }
        "command_substitution" if text(node, src).starts_with('`') => {
            let t = text(node, src);
            let inner = t.get(1..t.len().saturating_sub(1)).unwrap_or("");
            parse_into(&unescape_backticks(inner), depth + 1, col);
            return false;
        }
        _ => {}
    }
    true
}

/// Whether a command's text may contain another command: `$( )`,
/// `${ }` (whose default may be a substitution), backticks, `<( )`, `>( )`.
fn may_nest(t: &str) -> bool {
    t.contains(['$', '`']) || t.contains("<(") || t.contains(">(")
}

/// A simple command: its words, and its redirections with those of its
/// statement (`outer`).
fn command<'t>(
    node: Node<'t>,
    src: &str,
    outer: &str,
    depth: usize,
    col: &mut Collector,
    c: &mut TreeCursor<'t>,
) {
    let mut words = Vec::new();
    let mut redirects = String::new();
    c.reset(node);
    if c.goto_first_child() {
        loop {
            match c.field_name() {
                Some("name") | Some("argument") => words.push(word(c.node(), src)),
                Some("redirect") => {
                    if !redirects.is_empty() {
                        redirects.push(' ');
                    }
                    redirects.push_str(&redirection(c.node(), src));
                }
                _ if c.node().kind() == "variable_assignment" => {
                    if let Some(bad) = not_an_assignment(c.node(), src) {
                        col.push(CommandPart::unresolved(
                            text(node, src),
                            format!("the shell runs `{bad}` as a program, not an assignment"),
                        ));
                        return;
                    }
                }
                _ => {}
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }
    if !outer.is_empty() {
        if !redirects.is_empty() {
            redirects.push(' ');
        }
        redirects.push_str(outer);
    }
    words_part(&words, &redirects, depth, col);
}

/// The name of a leading `NAME=value` the grammar accepts but the shell
/// does not (`1A=x ls` runs a program called `1A=x`).
fn not_an_assignment<'s>(assignment: Node<'_>, src: &'s str) -> Option<&'s str> {
    let name = assignment.child_by_field_name("name")?;
    if name.kind() != "variable_name" {
        return None;
    }
    let n = text(name, src);
    let mut chars = n.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    (!valid).then(|| text(assignment, src))
}

/// The grammar reads `$( )` in an unquoted here-document but not
/// backticks; a body with a substitution it did not find is unresolved.
fn heredoc(node: Node<'_>, src: &str, depth: usize, col: &mut Collector) {
    let quoted = node
        .parent()
        .and_then(|r| {
            let mut c = r.walk();
            let start = r.children(&mut c).find(|n| n.kind() == "heredoc_start");
            start.map(|n| text(n, src).contains(['\'', '"', '\\']))
        })
        .unwrap_or(false);
    if quoted {
        return;
    }
    let body = text(node, src);
    let mut c = node.walk();
    let found = node
        .named_children(&mut c)
        .any(|n| n.kind() == "command_substitution");
    if body.contains('`') && backticks(body, depth, col) {
        return;
    }
    if body.contains('`') || (body.contains("$(") && !found) {
        col.push(CommandPart::unresolved(
            body,
            "a here-document runs a substitution the parser does not read".into(),
        ));
    }
}

/// Parse each backtick substitution of a here-document body; false when
/// the backticks do not pair up.
fn backticks(body: &str, depth: usize, col: &mut Collector) -> bool {
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                current.push(c);
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            '`' => segments.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if segments.len() % 2 == 1 {
        return false;
    }
    for inner in segments.iter().skip(1).step_by(2) {
        parse_into(&unescape_backticks(inner), depth + 1, col);
    }
    true
}

/// `( … ) > log` writes a file besides running its inner commands: the
/// whole statement is a part of its own that rules must allow too.
fn compound_redirect(node: Node<'_>, src: &str, col: &mut Collector) {
    let mut part = CommandPart::unresolved(text(node, src), String::new());
    part.resolved = true;
    part.reason = None;
    col.push(part);
}

/// The redirections of a statement as text (`> out 2>&1`, `<<EOF`).
fn redirections(stmt: Node<'_>, src: &str) -> String {
    let mut c = stmt.walk();
    let out: Vec<String> = stmt
        .children_by_field_name("redirect", &mut c)
        .map(|r| redirection(r, src))
        .collect();
    out.join(" ")
}

/// One redirection as text; a here-document by its start only.
fn redirection(r: Node<'_>, src: &str) -> String {
    if r.kind() == "heredoc_redirect" {
        let mut rc = r.walk();
        let start = r
            .children(&mut rc)
            .find(|n| n.kind() == "heredoc_start")
            .map_or("", |n| text(n, src));
        format!("<<{start}")
    } else {
        normalise_space(text(r, src))
    }
}

/// Make the part for a command's words, then the parts of whatever it runs.
pub(crate) fn words_part(words: &[Word], redirects: &str, depth: usize, col: &mut Collector) {
    // A program name the grammar only invented to recover from an error
    // (a missing node) is no command; the line is unresolved already.
    let Some(first) = words.first().filter(|w| !w.raw.is_empty()) else {
        return;
    };
    if depth > MAX_DEPTH {
        let raw: Vec<&str> = words.iter().map(|w| w.raw.as_str()).collect();
        col.push(CommandPart::unresolved(
            &raw.join(" "),
            format!("commands nested deeper than {MAX_DEPTH} levels"),
        ));
        return;
    }
    let join = |f: &dyn Fn(&Word) -> &str, prog: &str| {
        let mut s = prog.to_string();
        for w in words.iter().skip(1) {
            s.push(' ');
            s.push_str(f(w));
        }
        if !redirects.is_empty() {
            s.push(' ');
            s.push_str(redirects);
        }
        s
    };
    // The grammar may leave a newline at the edge of a word.
    let text = join(&|w| w.raw.as_str(), &first.raw).trim().to_string();
    let Some(prog) = first.value.as_deref() else {
        col.push(CommandPart::unresolved(
            &text,
            format!("the program `{}` is only known when it runs", first.raw),
        ));
        return;
    };
    let (dir, base) = match prog.rfind('/') {
        Some(i) => (prog.get(..i).unwrap_or(""), prog.get(i + 1..).unwrap_or("")),
        None => ("", prog),
    };
    // Other spellings only when they differ (most commands have none).
    let quoted = words
        .iter()
        .any(|w| w.value.as_deref() != Some(w.raw.as_str()));
    let path = prog.contains('/');
    let mut strict: Vec<String> = Vec::new();
    let add = |form: String, to: &mut Vec<String>| {
        if form != text && !to.contains(&form) {
            to.push(form);
        }
    };
    if quoted {
        add(join(&|w| w.plain(), prog), &mut strict);
    }
    if path {
        add(join(&|w| w.plain(), base), &mut strict);
        add(join(&|w| w.raw.as_str(), base), &mut strict);
    }
    let mut allow = Vec::new();
    if (path && SYSTEM_DIRS.contains(&dir)) || (!path && prog != first.raw) {
        add(join(&|w| w.raw.as_str(), base), &mut allow);
    }
    col.push(CommandPart {
        text,
        program: base.to_string(),
        resolved: true,
        reason: None,
        allow_forms: allow,
        strict_forms: strict,
    });
    for inner in look_through(base, words) {
        match inner {
            Inner::Command(w) => words_part(&w, "", depth + 1, col),
            Inner::Script(s) => parse_into(&s, depth + 1, col),
            Inner::Part(p) => col.push(p),
        }
    }
}
