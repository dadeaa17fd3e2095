//! Walking the syntax tree and turning each simple command into parts.

use std::cell::RefCell;
use std::sync::OnceLock;

use tree_sitter::{Node, Parser, Tree, TreeCursor};

use super::assign::{assigns_by_argument, changes_what_runs, value_holds_code};
use super::read_only::named_paths;
use super::words::{Word, text, unescape_backticks, word};
use super::wrappers::{Inner, look_through};
use super::{CommandPart, MAX_DEPTH, MAX_PARTS, SYSTEM_DIRS, normalise_space};

/// A command's redirections as the shell reads them.
#[derive(Default)]
pub(crate) struct Redirects {
    /// Their text (`> out 2>&1`, `<<EOF`), each up to its target.
    text: String,
    /// Words the grammar hung on a redirection after its target. It reads
    /// `nice >/dev/null rm -rf v` as one redirection with four targets;
    /// the shell redirects to the first and passes the rest to the command.
    extra: Vec<Word>,
    /// Why a redirection is not plain (a target only known at run time, a
    /// here-document that expands).
    not_plain: Option<String>,
    /// What here-strings and here-documents feed the command.
    input: String,
    /// Output goes to a file (`> f`, `>> f`, `&> f`, `<> f`, `>&f`), not
    /// only to `/dev/null`, the terminal's streams or a descriptor.
    writes: bool,
    /// The command has leading `NAME=value` assignments (kept with the
    /// redirections: both are what the words alone do not show).
    assigns: bool,
}

impl Redirects {
    fn add(&mut self, other: Redirects) {
        if !other.text.is_empty() {
            if !self.text.is_empty() {
                self.text.push(' ');
            }
            self.text.push_str(&other.text);
        }
        self.extra.extend(other.extra);
        self.not_plain = self.not_plain.take().or(other.not_plain);
        self.input.push_str(&other.input);
        self.writes |= other.writes;
        self.assigns |= other.assigns;
    }
}

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
    let skipped = parse_one(src, depth, col);
    // The shell drops `\<newline>` before splitting words (`r\<newline>m`
    // is `rm`); the grammar keeps it as a blank. And the grammar reads a
    // backslash before a blank as a blank, where the shell keeps the blank
    // in the word (`\ #` is a word, not a comment). Check the readings
    // that match the shell's words too.
    let mut readings = Vec::new();
    if src.contains("\\\n") {
        readings.push(src.replace("\\\n", ""));
    }
    if skipped {
        readings.push(
            src.replace("\\ ", "\\_")
                .replace("\\\t", "\\_")
                .replace("\\\x0b", "\\_")
                .replace("\\\x0c", "\\_"),
        );
    }
    for reading in readings {
        let mut more = Collector::default();
        parse_one(&reading, depth, &mut more);
        for part in more.finish() {
            if !col.parts.contains(&part) {
                col.push(part);
            }
        }
    }
}

/// A backslash before a blank other than a newline.
fn has_escaped_blank(src: &str) -> bool {
    src.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'\\' && matches!(w[1], b' ' | b'\t' | 0x0b | 0x0c))
}

/// Collects the parts of one reading of `src`; true when the grammar
/// skipped text the shell reads (see [`skipped_text`]).
fn parse_one(src: &str, depth: usize, col: &mut Collector) -> bool {
    if depth > MAX_DEPTH {
        col.push(CommandPart::unresolved(
            src,
            format!("commands nested deeper than {MAX_DEPTH} levels"),
        ));
        return false;
    }
    let Some(tree) = parse(src) else {
        col.push(CommandPart::unresolved(
            src,
            "the line could not be parsed".into(),
        ));
        return false;
    };
    let root = tree.root_node();
    if root.has_error() {
        col.push(CommandPart::unresolved(
            src,
            "the shell grammar does not accept this line".into(),
        ));
    }
    let skipped = skipped_text(root, src);
    if let Some(text) = skipped {
        col.push(CommandPart::unresolved(
            src,
            format!("the parser skipped `{text}`, which the shell reads as part of a word"),
        ));
    }
    // Depth-first with a cursor, not recursion, so a deeply nested line
    // cannot exhaust the call stack (and nothing is allocated per node).
    let mut cursor = root.walk();
    // One cursor for reading each command's children, reset per command.
    let mut scratch = root.walk();
    // The redirections of statements whose command is yet to be visited,
    // by that command's node id: several can wait at once, since a
    // pipeline's redirection belongs to its last command and the commands
    // before it may have their own (`(a > f) | b > g`).
    let mut outer: Vec<(usize, Redirects)> = Vec::new();
    loop {
        if col.overflow {
            return skipped.is_some();
        }
        let node = cursor.node();
        let descend = visit(node, src, depth, col, &mut outer, &mut scratch);
        if descend && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return skipped.is_some();
            }
        }
    }
}

/// Text between the grammar's tokens that the shell does not skip. The
/// grammar treats a backslash before a blank as a blank, so in
/// `echo \ #; rm -rf v` it reads a comment where bash reads the word ` #`
/// and then runs `rm`. Only whitespace and line continuations may lie
/// between tokens.
fn skipped_text<'s>(root: Node<'_>, src: &'s str) -> Option<&'s str> {
    if !has_escaped_blank(src) {
        return None;
    }
    let mut cursor = root.walk();
    let mut pos = 0;
    loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            let gap = src.get(pos..node.start_byte()).unwrap_or("");
            if !only_blanks(gap) {
                return Some(gap.trim());
            }
            pos = pos.max(node.end_byte());
        } else if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                let rest = src.get(pos..).unwrap_or("");
                return (!only_blanks(rest)).then(|| rest.trim());
            }
        }
    }
}

/// Whitespace and line continuations only.
fn only_blanks(gap: &str) -> bool {
    gap.replace("\\\r\n", "")
        .replace("\\\n", "")
        .chars()
        .all(char::is_whitespace)
}

/// Handle one node; false when its children must not be walked.
fn visit<'t>(
    node: Node<'t>,
    src: &str,
    depth: usize,
    col: &mut Collector,
    outer: &mut Vec<(usize, Redirects)>,
    scratch: &mut TreeCursor<'t>,
) -> bool {
    match node.kind() {
        "command" => {
            let extra = match outer.iter().position(|(id, _)| *id == node.id()) {
                Some(i) => outer.swap_remove(i).1,
                None => Redirects::default(),
            };
            let compound = command(node, src, extra, depth, col, scratch);
            // Only a substitution, or a compound command the grammar hung
            // on a word (`coproc (…)`), can hide another command inside a
            // simple command; most commands have neither, and walking every
            // token would cost as much as the parse.
            return compound || may_nest(text(node, src));
        }
        "redirected_statement" => match node.child_by_field_name("body").map(last_command) {
            Some(b) if b.kind() == "command" => outer.push((b.id(), redirections(node, src))),
            _ => compound_redirect(node, src, col),
        },
        "heredoc_body" => heredoc(node, src, depth, col),
        "compound_statement" | "c_style_for_statement" | "binary_expression" => {
            arithmetic(node, src, col)
        }
        "variable_assignment" => {
            assignment_statement(node, src, col);
            return may_nest(text(node, src));
        }
        // The grammar leaves a backtick inside `${…}` as plain text; the
        // shell runs it.
        "word" | "string_content" if text(node, src).contains('`') => {
            if !backticks(text(node, src), depth, col) {
                col.push(CommandPart::unresolved(
                    text(node, src),
                    "a backtick substitution the parser does not read".into(),
                ));
            }
            return false;
        }
        // Words and redirections hold a command only inside a substitution.
        "word" | "string" | "raw_string" | "number" | "concatenation" | "file_redirect"
        | "simple_expansion" | "ansi_c_string" | "comment" => {
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

/// A child of a command node that is a compound command the grammar
/// attached to it rather than a word, an assignment or a redirection.
/// Compared by kind id: a kind's name is converted from C on every call,
/// and commands have many children.
fn is_compound(node: Node<'_>) -> bool {
    static WORDISH: OnceLock<Vec<u16>> = OnceLock::new();
    let wordish = WORDISH.get_or_init(|| {
        let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
        [
            "command_name",
            "word",
            "string",
            "raw_string",
            "number",
            "concatenation",
            "simple_expansion",
            "expansion",
            "ansi_c_string",
            "translated_string",
            "command_substitution",
            "process_substitution",
            "arithmetic_expansion",
            "variable_assignment",
            "file_redirect",
            "heredoc_redirect",
            "herestring_redirect",
            "brace_expression",
            "comment",
        ]
        .iter()
        .map(|kind| language.id_for_node_kind(kind, true))
        .collect()
    });
    node.is_named() && !wordish.contains(&node.kind_id())
}

/// An assignment that is a statement of its own (`PATH=.`, `export
/// PATH=.`): later commands of the line see it. One that changes what runs
/// is an unresolved part.
fn assignment_statement(node: Node<'_>, src: &str, col: &mut Collector) {
    if node.parent().is_some_and(|p| p.kind() == "command") {
        return;
    }
    if let Some(name) = node.child_by_field_name("name")
        && changes_what_runs(text(name, src))
    {
        col.push(CommandPart::unresolved(
            text(node, src),
            format!(
                "setting `{}` changes what later commands run",
                text(name, src)
            ),
        ));
        return;
    }
    if let Some(why) = code_in_value(node, src) {
        col.push(CommandPart::unresolved(text(node, src), why));
    }
}

/// Why an assignment's literal value is code in waiting.
fn code_in_value(node: Node<'_>, src: &str) -> Option<String> {
    let value = word(node.child_by_field_name("value")?, src).value?;
    value_holds_code(&value).then(|| {
        format!(
            "`{}` stores code that arithmetic or a later expansion can run",
            text(node, src)
        )
    })
}

/// `(( … ))`, `for (( … ))` and `[[ a -eq b ]]` evaluate the values of the
/// variables they name as arithmetic, which runs any `$(…)` inside them:
/// only numbers and operators are plain there.
fn arithmetic(node: Node<'_>, src: &str, col: &mut Collector) {
    let t = text(node, src);
    let evaluated = match node.kind() {
        "compound_statement" if t.starts_with("((") => Some(t),
        "c_style_for_statement" => t.find("))").and_then(|end| t.get(..end)),
        "binary_expression"
            if node.child_by_field_name("operator").is_some_and(|o| {
                matches!(text(o, src), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")
            }) && node.parent().is_some_and(|p| p.kind() == "test_command") =>
        {
            let side = |f| node.child_by_field_name(f).map_or("", |n| text(n, src));
            return arithmetic_operands(&format!("{} {}", side("left"), side("right")), t, col);
        }
        _ => None,
    };
    if let Some(expr) = evaluated {
        let body = expr
            .trim_start_matches("for")
            .trim_start()
            .trim_start_matches("((");
        arithmetic_operands(body, t, col);
    }
}

/// An unresolved part for `whole` when the arithmetic `body` names more
/// than numbers.
fn arithmetic_operands(body: &str, whole: &str, col: &mut Collector) {
    if body.contains(|c: char| c.is_alphabetic() || c == '$' || c == '`' || c == '_') {
        col.push(CommandPart::unresolved(
            whole,
            "arithmetic evaluates the values of the variables it names, which can run commands"
                .into(),
        ));
    }
}

/// Whether a command's text may contain another command: `$( )`,
/// `${ }` (whose default may be a substitution), backticks, `<( )`, `>( )`.
fn may_nest(t: &str) -> bool {
    t.contains(['$', '`']) || t.contains("<(") || t.contains(">(")
}

/// A simple command: its words, and its redirections with those of its
/// statement (`outer`). True when the grammar hung a compound command on
/// it, whose commands must be walked too.
fn command<'t>(
    node: Node<'t>,
    src: &str,
    mut outer: Redirects,
    depth: usize,
    col: &mut Collector,
    c: &mut TreeCursor<'t>,
) -> bool {
    let mut words = Vec::new();
    let mut redirects = Redirects::default();
    let mut not_plain = None;
    let mut compound = false;
    c.reset(node);
    if c.goto_first_child() {
        loop {
            compound |= is_compound(c.node());
            match c.field_name() {
                Some("name") | Some("argument") => words.push(word(c.node(), src)),
                Some("redirect") => {
                    let mut r = redirection(c.node(), src);
                    words.append(&mut r.extra);
                    redirects.add(r);
                }
                _ if c.node().kind() == "variable_assignment" => {
                    if let Some(bad) = not_an_assignment(c.node(), src) {
                        col.push(CommandPart::unresolved(
                            text(node, src),
                            format!("the shell runs `{bad}` as a program, not an assignment"),
                        ));
                        // Walk what it holds all the same.
                        return true;
                    }
                    not_plain = not_plain.or_else(|| leading_assignment(c.node(), src));
                    redirects.assigns = true;
                }
                _ => {}
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }
    words.append(&mut outer.extra);
    redirects.add(outer);
    redirects.not_plain = not_plain.or(redirects.not_plain);
    words_part(words, redirects, depth, col);
    compound
}

/// Why a leading `NAME=value` makes its command not plain: the name
/// changes what runs, or the value is only known at run time.
fn leading_assignment(node: Node<'_>, src: &str) -> Option<String> {
    let name = node
        .child_by_field_name("name")
        .map_or("", |n| text(n, src));
    if changes_what_runs(name) {
        return Some(format!("setting `{name}` changes what the command runs"));
    }
    let literal = node
        .child_by_field_name("value")
        .is_none_or(|v| word(v, src).value.is_some());
    if !literal {
        return Some(format!("`{}` is only known when it runs", text(node, src)));
    }
    code_in_value(node, src)
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
            start.map(|n| quoted_delimiter(text(n, src)))
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
    let redirects = redirections(node, src);
    let mut part = CommandPart::unresolved(text(node, src), String::new());
    part.resolved = redirects.not_plain.is_none() && redirects.extra.is_empty();
    part.reason = redirects.not_plain.or_else(|| {
        (!redirects.extra.is_empty())
            .then(|| "words after the redirection of a compound command".to_string())
    });
    col.push(part);
}

/// The command a statement's redirections belong to: the grammar hangs
/// them on a whole pipeline or list (`a | b > f x`), the shell on its last
/// command.
fn last_command(body: Node<'_>) -> Node<'_> {
    let mut n = body;
    while matches!(n.kind(), "pipeline" | "list") {
        match n.named_child(n.named_child_count().saturating_sub(1)) {
            Some(last) => n = last,
            None => break,
        }
    }
    n
}

/// The redirections of a statement.
fn redirections(stmt: Node<'_>, src: &str) -> Redirects {
    let mut c = stmt.walk();
    let mut all = Redirects::default();
    for r in stmt.children_by_field_name("redirect", &mut c) {
        all.add(redirection(r, src));
    }
    all
}

/// One redirection: its text up to its target (a here-document by its
/// start only), the words after its target, and whether it is plain.
fn redirection(r: Node<'_>, src: &str) -> Redirects {
    match r.kind() {
        "heredoc_redirect" => heredoc_redirection(r, src),
        "herestring_redirect" => {
            let target = r.named_child(0).map(|n| word(n, src));
            Redirects {
                text: normalise_space(text(r, src)),
                extra: Vec::new(),
                writes: false,
                assigns: false,
                input: target.as_ref().map_or("", |w| w.plain()).to_string(),
                not_plain: target
                    .filter(|w| w.value.is_none())
                    .map(|w| format!("`{}` is only known when it runs", w.raw)),
            }
        }
        _ => file_redirection(r, src),
    }
}

fn file_redirection(r: Node<'_>, src: &str) -> Redirects {
    let mut c = r.walk();
    let mut targets = r.children_by_field_name("destination", &mut c);
    let Some(first) = targets.next() else {
        return Redirects {
            text: normalise_space(text(r, src)),
            ..Redirects::default()
        };
    };
    let target = word(first, src);
    let upto = src.get(r.start_byte()..first.end_byte()).unwrap_or("");
    let operator = src.get(r.start_byte()..first.start_byte()).unwrap_or("");
    Redirects {
        text: normalise_space(upto),
        extra: targets.map(|n| word(n, src)).collect(),
        input: String::new(),
        writes: writes_a_file(operator, target.plain()),
        assigns: false,
        not_plain: (!target.is_literal()).then(|| {
            format!(
                "the redirection target `{}` is only known when it runs",
                target.raw
            )
        }),
    }
}

/// A redirection `operator` (`2>`, `>>`, `<&`, `{fd}>`) to `target` that
/// opens a file for writing. Duplicating a descriptor (`2>&1`, `>&-`) and
/// writing to `/dev/null` or the standard streams write no file.
fn writes_a_file(operator: &str, target: &str) -> bool {
    let operator = operator.trim();
    if !operator.contains('>') {
        return false;
    }
    let duplicates = operator.ends_with(">&") || operator.ends_with("<&");
    if duplicates && (target == "-" || target.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    !matches!(
        target,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    )
}

/// A here-document whose delimiter is quoted in any way (`<<'EOF'`,
/// `<<"EOF"`, `<<\EOF`) expands nothing.
fn quoted_delimiter(start: &str) -> bool {
    start.contains(['\'', '"', '\\'])
}

fn heredoc_redirection(r: Node<'_>, src: &str) -> Redirects {
    let mut rc = r.walk();
    let children: Vec<Node<'_>> = r.children(&mut rc).collect();
    let start = children
        .iter()
        .find(|n| n.kind() == "heredoc_start")
        .map_or("", |n| text(*n, src));
    let quoted = quoted_delimiter(start);
    let body: String = children
        .iter()
        .filter(|n| n.kind() == "heredoc_body")
        .map(|b| text(*b, src))
        .collect();
    let expands = body.contains(['$', '`']);
    Redirects {
        text: format!("<<{start}"),
        extra: Vec::new(),
        writes: false,
        assigns: false,
        input: body,
        not_plain: (!quoted && expands)
            .then(|| "the here-document expands variables or substitutions".to_string()),
    }
}

/// Make the part for a command's words, then the parts of whatever it runs.
/// `redirects` carries their text, what they feed the command, and why
/// they or the command's assignments keep it from being plain, if they do.
pub(crate) fn words_part(
    words: Vec<Word>,
    redirects: Redirects,
    depth: usize,
    col: &mut Collector,
) {
    let Redirects {
        text: redirects,
        not_plain,
        input,
        writes,
        assigns,
        ..
    } = redirects;
    let redirects = redirects.as_str();
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
    let prog = match first.value.as_deref() {
        Some(prog) if !first.expands => prog,
        _ => {
            let why = if first.expands {
                format!("the program `{}` is a pattern the shell expands", first.raw)
            } else {
                format!("the program `{}` is only known when it runs", first.raw)
            };
            col.push(CommandPart::unresolved(&text, why));
            return;
        }
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
    if let Some(form) = deletion_form(base, &words, redirects) {
        add(form, &mut strict);
    }
    let mut allow = Vec::new();
    if (path && SYSTEM_DIRS.contains(&dir)) || (!path && prog != first.raw) {
        add(join(&|w| w.raw.as_str(), base), &mut allow);
    }
    let reason = not_plain.or_else(|| plain_words(base, &words));
    let program = base.to_string();
    // A program name with blanks or shell characters (`sudo 'rm -rf v'`)
    // is no program anyone has; read it as the script it looks like, so
    // deny rules see what it names.
    let script = prog
        .contains(|c: char| c.is_whitespace() || ";|&<>()$`".contains(c))
        .then(|| prog.to_string());
    let inners = look_through(&program, &words);
    // Only the system's own program of that name is known to only read.
    let system_program = !path || SYSTEM_DIRS.contains(&dir);
    let read_paths = (reason.is_none() && system_program && !writes && !assigns)
        .then(|| named_paths(&program, &words))
        .flatten();
    col.push(CommandPart {
        text,
        program,
        resolved: reason.is_none(),
        reason,
        allow_forms: allow,
        strict_forms: strict,
        argv: words
            .into_iter()
            .map(|w| w.value.unwrap_or(w.raw))
            .collect(),
        input,
        read_paths,
    });
    if let Some(script) = script {
        parse_into(&script, depth + 1, col);
    }
    for inner in inners {
        match inner {
            Inner::Command(w) => words_part(w, Redirects::default(), depth + 1, col),
            Inner::Script(s) => parse_into(&s, depth + 1, col),
            Inner::Part(p) => col.push(p),
        }
    }
}

/// Why a command whose program is known is still not plain: a word only
/// known at run time, a program name with blanks, or a builtin assigning a
/// variable that changes what runs.
fn plain_words(program: &str, words: &[Word]) -> Option<String> {
    if let Some(w) = words.iter().find(|w| w.value.is_none()) {
        return Some(format!("`{}` is only known when it runs", w.raw));
    }
    if program.contains(|c: char| c.is_whitespace()) {
        return Some(format!("the program name `{program}` holds blanks"));
    }
    if assigns_by_argument(program) {
        let named = words.iter().skip(1).find(|w| {
            let name = w.plain().split('=').next().unwrap_or("");
            changes_what_runs(name)
        });
        if let Some(w) = named {
            return Some(format!(
                "`{program} {}` changes what later commands run",
                w.raw
            ));
        }
        if words.iter().skip(1).any(|w| value_holds_code(w.plain())) {
            return Some(format!("`{program}` stores code a later expansion can run"));
        }
    }
    if program == "let"
        && words
            .iter()
            .skip(1)
            .any(|w| w.plain().contains(char::is_alphabetic))
    {
        return Some(
            "`let` evaluates the values of the variables it names, which can run commands".into(),
        );
    }
    if matches!(program, "hash" | "enable")
        && words
            .iter()
            .skip(1)
            .any(|w| w.plain().starts_with(['-']) && w.plain().contains(['p', 'f']))
    {
        return Some(format!(
            "`{program}` with -p or -f changes what later commands run"
        ));
    }
    None
}

/// `rm` deleting recursively and forcibly, however its options are
/// spelled (`-rf`, `-fR`, `-r -f`, `--recursive --force`, options after
/// the paths), also reads as `rm -rf PATHS`, the form deny rules name.
fn deletion_form(program: &str, words: &[Word], redirects: &str) -> Option<String> {
    if program != "rm" {
        return None;
    }
    let (mut recursive, mut force) = (false, false);
    let mut paths = Vec::new();
    let mut options_done = false;
    for w in words.iter().skip(1) {
        let v = w.plain();
        if options_done || !v.starts_with('-') || v == "-" {
            paths.push(v);
        } else if v == "--" {
            options_done = true;
        } else if let Some(long) = v.strip_prefix("--") {
            recursive |= long == "recursive";
            force |= long == "force";
        } else {
            recursive |= v.contains(['r', 'R']);
            force |= v.contains('f');
        }
    }
    if !(recursive && force) {
        return None;
    }
    let mut form = String::from("rm -rf");
    for p in paths {
        form.push(' ');
        form.push_str(p);
    }
    if !redirects.is_empty() {
        form.push(' ');
        form.push_str(redirects);
    }
    Some(form)
}
