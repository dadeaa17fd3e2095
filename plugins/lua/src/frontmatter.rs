//! `uji.markdown.front_matter(text)`: the front matter of a Markdown file
//! (commands, skills, agents), the small part of YAML such files use, read
//! without a YAML library: a YAML parser refuses a whole file for one line
//! such as `description: Fix: the bug`, which these files are full of, and
//! this reader keeps every line it understands and reports the others.
//!
//! Native because uji's defaults read every command and skill file at
//! start-up: in Lua (without the JIT) parsing took 4–7 µs a file, here
//! well under one.
//!
//! The front matter is the block between a first line `---` and the next
//! `---`. Each field is `key: value` on one line, where the value is plain
//! or quoted text, an inline list `[a, "b c"]`, or a block after the key:
//! `- item` lines (a list) or, after `>` or `|`, indented lines (text,
//! folded into one line or kept as lines). A line it cannot read is a
//! problem `{ line = N, text = "..." }` (N counts from the file's first
//! line) and is left out; the rest is read.

use mlua::{Lua, Table, Value};

use crate::api::{a_type, lerr};
use crate::convert;

/// A field's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    Text(Vec<u8>),
    List(Vec<Vec<u8>>),
}

/// A line of front matter that was not understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub text: Vec<u8>,
}

/// A file split into its front matter fields (in the order written; a
/// repeated key keeps its last value) and its body.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FrontMatter {
    pub fields: Vec<(Vec<u8>, FieldValue)>,
    pub body: Vec<u8>,
    pub problems: Vec<Problem>,
}

fn is_space(b: u8) -> bool {
    // Lua's %s: space, \t, \n, \v, \f, \r.
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn trim(text: &[u8]) -> &[u8] {
    let start = text
        .iter()
        .position(|b| !is_space(*b))
        .unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|b| !is_space(*b))
        .map_or(start, |i| i + 1);
    &text[start..end.max(start)]
}

/// A `---` line (trailing blanks allowed) ending at `\n`, `\r\n` or the
/// end of the text, starting at `at`: where the line after it starts.
fn fence_at(text: &[u8], at: usize) -> Option<usize> {
    let rest = text.get(at..)?.strip_prefix(b"---")?;
    let blanks = rest
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    let after = &rest[blanks..];
    let start = at + 3 + blanks;
    match after {
        [] => Some(start),
        [b'\n', ..] => Some(start + 1),
        [b'\r', b'\n', ..] => Some(start + 2),
        _ => None,
    }
}

/// Parses `text`; a text without front matter is all body.
pub fn parse(text: &[u8]) -> FrontMatter {
    let Some(first) = fence_at(text, 0).filter(|&f| f <= text.len() && text[..f].ends_with(b"\n"))
    else {
        return FrontMatter {
            body: text.to_vec(),
            ..FrontMatter::default()
        };
    };
    // The closing fence: a `---` line after a line end, from the opening
    // line's own end (so `---\n---` is an empty header).
    let close = (first - 1..text.len())
        .filter(|&i| text[i] == b'\n')
        .find_map(|i| fence_at(text, i + 1).map(|body| (i, body)));
    let Some((close_start, body_start)) = close else {
        return FrontMatter {
            body: text.to_vec(),
            problems: vec![Problem {
                line: 1,
                text: b"the front matter opened with --- is never closed".to_vec(),
            }],
            ..FrontMatter::default()
        };
    };
    let mut parsed = read_header(&text[first..=close_start]);
    parsed.body = text[body_start..].to_vec();
    parsed
}

/// A block being gathered under a key given no value on its line.
struct Block {
    key: Vec<u8>,
    lines: Vec<Vec<u8>>,
    /// `None` until its first line says: a list, `>` folded, `|` literal.
    style: Option<u8>,
}

impl Block {
    fn finish(self, fields: &mut Vec<(Vec<u8>, FieldValue)>) {
        let value = match self.style {
            Some(b'-') => FieldValue::List(self.lines),
            Some(b'|') => FieldValue::Text(self.lines.join(&b"\n"[..])),
            _ => FieldValue::Text(self.lines.join(&b" "[..])),
        };
        set(fields, self.key, value);
    }
}

fn set(fields: &mut Vec<(Vec<u8>, FieldValue)>, key: Vec<u8>, value: FieldValue) {
    match fields.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => fields.push((key, value)),
    }
}

/// The lines between the fences (each ending in `\n`); line 2 is the
/// header's first.
fn read_header(header: &[u8]) -> FrontMatter {
    let mut out = FrontMatter::default();
    let mut block: Option<Block> = None;
    for (i, raw) in header.split_inclusive(|b| *b == b'\n').enumerate() {
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let number = i + 2;
        let indented = line.first().is_some_and(|b| is_space(*b)) && !trim(line).is_empty();
        if let (Some(open), true) = (&mut block, indented) {
            block_line(open, line, number, &mut out.problems);
        } else if trim(line).is_empty() || trim(line).starts_with(b"#") {
            // Blank lines and comments.
        } else {
            if let Some(done) = block.take() {
                done.finish(&mut out.fields);
            }
            match key_and_value(line) {
                None => out.problems.push(Problem {
                    line: number,
                    text: line.to_vec(),
                }),
                Some((key, value)) => match value {
                    b"" | b">" | b"|" | b">-" | b"|-" => {
                        block = Some(Block {
                            key: key.to_vec(),
                            lines: Vec::new(),
                            style: value.first().copied(),
                        });
                    }
                    [b'[', .., b']'] => {
                        set(&mut out.fields, key.to_vec(), inline_list(value));
                    }
                    _ => set(
                        &mut out.fields,
                        key.to_vec(),
                        FieldValue::Text(unquote(value)),
                    ),
                },
            }
        }
    }
    if let Some(done) = block {
        done.finish(&mut out.fields);
    }
    out
}

/// An indented line inside a block: a `- item` of a list, or a line of
/// text.
fn block_line(block: &mut Block, line: &[u8], number: usize, problems: &mut Vec<Problem>) {
    let content = trim(line);
    let lead = &line[line.iter().take_while(|b| is_space(**b)).count()..];
    let item = lead
        .strip_prefix(b"-")
        .filter(|rest| rest.first().is_some_and(|b| is_space(*b)));
    if block.style == Some(b'-') || (block.style.is_none() && item.is_some()) {
        block.style = Some(b'-');
        match item {
            Some(item) => block.lines.push(unquote(trim(item))),
            None => problems.push(Problem {
                line: number,
                text: line.to_vec(),
            }),
        }
    } else {
        block.lines.push(content.to_vec());
    }
}

/// `key: value` (the key letters, digits, `_` and `-`; the value trimmed).
fn key_and_value(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let key_len = line
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        .count();
    if key_len == 0 {
        return None;
    }
    let rest = &line[key_len..];
    let spaces = rest.iter().take_while(|b| is_space(**b)).count();
    let value = rest[spaces..].strip_prefix(b":")?;
    Some((&line[..key_len], trim(value)))
}

/// A quoted value without its quotes; in double quotes `\"`, `\n` and
/// `\\` are read as escapes.
fn unquote(value: &[u8]) -> Vec<u8> {
    let quoted =
        value.len() >= 2 && matches!(value[0], b'"' | b'\'') && value.last() == value.first();
    if !quoted {
        return value.to_vec();
    }
    let inner = &value[1..value.len() - 1];
    if value[0] == b'\'' {
        return inner.to_vec();
    }
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        match (inner[i], inner.get(i + 1)) {
            (b'\\', Some(b'"')) => out.push(b'"'),
            (b'\\', Some(b'n')) => out.push(b'\n'),
            (b'\\', Some(b'\\')) => out.push(b'\\'),
            (other, _) => {
                out.push(other);
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    out
}

/// `[a, "b, c"]` as a list: split at commas outside quotes and
/// parentheses, each item trimmed and unquoted, an empty last item left
/// out.
fn inline_list(value: &[u8]) -> FieldValue {
    let inner = &value[1..value.len() - 1];
    let mut items = Vec::new();
    let (mut start, mut quote, mut depth) = (0, None, 0usize);
    for (i, &b) in inner.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'(') => depth += 1,
            (None, b')') => depth = depth.saturating_sub(1),
            (None, b',') if depth == 0 => {
                items.push(unquote(trim(&inner[start..i])));
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = trim(&inner[start..]);
    if !last.is_empty() {
        items.push(unquote(last));
    }
    FieldValue::List(items)
}

/// Installs the natives the prelude makes `uji.markdown.front_matter` and
/// `uji.markdown.files`.
pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "markdown_front_matter",
        crate::api::raw(lua, |lua, _, text: Value| front_matter(lua, &text))?,
    )?;
    t.set(
        "markdown_files",
        crate::api::raw(lua, |lua, _, pattern: Value| files(lua, &pattern))?,
    )
}

/// `uji.markdown.front_matter(text)` → `{ fields, body, problems }`.
fn front_matter(lua: &Lua, text: &Value) -> Result<Table, String> {
    let Value::String(text) = text else {
        return Err(format!(
            "uji.markdown.front_matter needs the file's text as a string, got {}",
            a_type(text)
        ));
    };
    let out = lua.create_table().map_err(lerr)?;
    fill(lua, &Keys::new(lua)?, &out, parse(&text.as_bytes()))?;
    Ok(out)
}

/// `uji.markdown.files(pattern)` → for each file the glob finds, in path
/// order, `{ path, fields, body, problems }`, or `{ path, error }` when it
/// cannot be read. One call for a folder of command files: each value
/// crossing into Lua costs a protected call, so the files are read and
/// parsed here, not one `uji.fs.read` and one parse at a time.
fn files(lua: &Lua, pattern: &Value) -> Result<Table, String> {
    const API: &str = "uji.markdown.files";
    let shown = crate::api::string_arg(pattern, API, "the pattern")?;
    let list = lua.create_table().map_err(lerr)?;
    let paths = crate::files::glob_paths(API, &shown)??;
    let keys = Keys::new(lua)?;
    for path in paths {
        let row = lua.create_table_with_capacity(0, 4).map_err(lerr)?;
        match crate::files::read_bounded(&crate::files::resolve(&path), &path) {
            Ok(text) => fill(lua, &keys, &row, parse(&text))?,
            Err(message) => row.raw_set(&keys.error, message).map_err(lerr)?,
        }
        row.raw_set(&keys.path, path).map_err(lerr)?;
        list.raw_push(row).map_err(lerr)?;
    }
    convert::mark_array(lua, &list).map_err(lerr)?;
    Ok(list)
}

/// The keys of the tables given back, made into Lua strings once per call
/// rather than once per file (each value made in Lua costs a protected
/// call).
struct Keys {
    fields: mlua::LuaString,
    body: mlua::LuaString,
    problems: mlua::LuaString,
    path: mlua::LuaString,
    error: mlua::LuaString,
}

impl Keys {
    fn new(lua: &Lua) -> Result<Keys, String> {
        let key = |name: &str| lua.create_string(name).map_err(lerr);
        Ok(Keys {
            fields: key("fields")?,
            body: key("body")?,
            problems: key("problems")?,
            path: key("path")?,
            error: key("error")?,
        })
    }
}

/// Sets `fields`, `body` and `problems` on `out`.
fn fill(lua: &Lua, keys: &Keys, out: &Table, parsed: FrontMatter) -> Result<(), String> {
    let fields = lua.create_table().map_err(lerr)?;
    for (key, value) in parsed.fields {
        let key = lua.create_string(&key).map_err(lerr)?;
        match value {
            FieldValue::Text(text) => fields.raw_set(key, lua.create_string(&text).map_err(lerr)?),
            FieldValue::List(items) => fields.raw_set(key, strings(lua, items)?),
        }
        .map_err(lerr)?;
    }
    out.raw_set(&keys.fields, fields).map_err(lerr)?;
    out.raw_set(&keys.body, lua.create_string(&parsed.body).map_err(lerr)?)
        .map_err(lerr)?;
    let problems = lua.create_table().map_err(lerr)?;
    for problem in parsed.problems {
        let row = lua.create_table().map_err(lerr)?;
        row.raw_set("line", problem.line).map_err(lerr)?;
        row.raw_set("text", lua.create_string(&problem.text).map_err(lerr)?)
            .map_err(lerr)?;
        problems.raw_push(row).map_err(lerr)?;
    }
    convert::mark_array(lua, &problems).map_err(lerr)?;
    out.raw_set(&keys.problems, problems).map_err(lerr)
}

fn strings(lua: &Lua, items: Vec<Vec<u8>>) -> Result<Table, String> {
    let list = lua.create_table().map_err(lerr)?;
    for item in items {
        list.raw_push(lua.create_string(&item).map_err(lerr)?)
            .map_err(lerr)?;
    }
    convert::mark_array(lua, &list).map_err(lerr)?;
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> FieldValue {
        FieldValue::Text(value.as_bytes().to_vec())
    }

    fn list(items: &[&str]) -> FieldValue {
        FieldValue::List(items.iter().map(|i| i.as_bytes().to_vec()).collect())
    }

    fn field<'a>(parsed: &'a FrontMatter, key: &str) -> Option<&'a FieldValue> {
        parsed
            .fields
            .iter()
            .find(|(k, _)| k == key.as_bytes())
            .map(|(_, v)| v)
    }

    #[test]
    fn plain_quoted_list_and_block_fields_are_read_and_the_body_follows() {
        let parsed = parse(
            b"---\ndescription: Fix: the bug\nmodel: \"a/b \\\"c\\\"\"\nhint: [file] [focus]\n\
              tools: [Read, \"Bash(git diff:*)\", 'x, y', (a, b)]\ntags:\n  - one\n  - 'two'\n\
              summary: >\n  folded\n  text\nkept: |\n  line one\n  line two\n# a comment\n\n---\nThe body.\n",
        );
        assert_eq!(field(&parsed, "description"), Some(&text("Fix: the bug")));
        assert_eq!(field(&parsed, "model"), Some(&text("a/b \"c\"")));
        // Read as a list, as YAML would; `frontmatter.text` gives it back as written.
        assert_eq!(field(&parsed, "hint"), Some(&list(&["file] [focus"])));
        assert_eq!(
            field(&parsed, "tools"),
            Some(&list(&["Read", "Bash(git diff:*)", "x, y", "(a, b)"]))
        );
        assert_eq!(field(&parsed, "tags"), Some(&list(&["one", "two"])));
        assert_eq!(field(&parsed, "summary"), Some(&text("folded text")));
        assert_eq!(field(&parsed, "kept"), Some(&text("line one\nline two")));
        assert_eq!(parsed.body, b"The body.\n");
        assert!(parsed.problems.is_empty());
    }

    #[test]
    fn a_text_without_front_matter_is_all_body() {
        let parsed = parse(b"Just a prompt.\n---\n");
        assert!(parsed.fields.is_empty());
        assert_eq!(parsed.body, b"Just a prompt.\n---\n");
        assert_eq!(parse(b"---").body, b"---", "a fence alone opens nothing");
    }

    #[test]
    fn lines_not_understood_are_problems_with_their_line_and_the_rest_is_read() {
        let parsed =
            parse(b"---\nthis is not a field\nok: yes\nlist:\n  - a\n  not an item\n---\nbody");
        let lines: Vec<usize> = parsed.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2, 6]);
        assert_eq!(field(&parsed, "ok"), Some(&text("yes")));
        assert_eq!(field(&parsed, "list"), Some(&list(&["a"])));
        assert_eq!(parsed.body, b"body");
    }

    #[test]
    fn an_unclosed_front_matter_is_a_problem_and_the_text_stays_body() {
        let parsed = parse(b"---\nok: yes\n");
        assert_eq!(parsed.problems.len(), 1);
        assert_eq!(parsed.problems[0].line, 1);
        assert_eq!(parsed.body, b"---\nok: yes\n");
    }

    #[test]
    fn crlf_files_empty_headers_and_a_closing_fence_at_the_end_are_read() {
        let parsed = parse(b"---\r\nname: x\r\n---\r\nbody\r\n");
        assert_eq!(field(&parsed, "name"), Some(&text("x")));
        assert_eq!(parsed.body, b"body\r\n");
        assert_eq!(parse(b"---\n---\nbody").body, b"body");
        let ending = parse(b"---\nname: y\n---  ");
        assert_eq!(field(&ending, "name"), Some(&text("y")));
        assert!(ending.body.is_empty());
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let parsed = parse(b"---\nname: a\nname: b\n---\n");
        assert_eq!(parsed.fields, vec![(b"name".to_vec(), text("b"))]);
    }
}
