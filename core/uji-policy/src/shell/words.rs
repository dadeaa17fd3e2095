//! Static values of shell words: quotes and escapes removed the way the
//! shell would, without expanding anything. A word whose value depends on
//! the environment (a `$VAR`, a substitution) has no static value.

use tree_sitter::Node;

/// One word of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The word as written.
    pub raw: String,
    /// What the program receives, when that is known before running.
    pub value: Option<String>,
    /// The shell expands the word into file names or several words: an
    /// unquoted glob (`*`, `?`, `[…]`) or brace expansion (`{a,b}`,
    /// `{1..3}`). `value` is then the pattern, not what the program gets.
    pub expands: bool,
}

impl Word {
    /// A word known without running anything.
    pub(crate) fn known(s: &str) -> Self {
        Word {
            raw: s.to_string(),
            value: Some(s.to_string()),
            expands: false,
        }
    }

    /// The value, or the raw text when it is only known at run time.
    pub(crate) fn plain(&self) -> &str {
        self.value.as_deref().unwrap_or(&self.raw)
    }

    /// The program gets exactly `value`: nothing is substituted or expanded.
    pub(crate) fn is_literal(&self) -> bool {
        self.value.is_some() && !self.expands
    }
}

/// The word `node` spans in `src`.
pub(crate) fn word(node: Node<'_>, src: &str) -> Word {
    Word {
        raw: text(node, src).to_string(),
        value: value(node, src),
        expands: expands(node, src),
    }
}

/// Whether the shell would expand the word into file names or several
/// words. Quoted pieces never expand; unquoted ones are read as the shell
/// reads them, escapes included.
fn expands(node: Node<'_>, src: &str) -> bool {
    // Most words hold none of the characters that could expand.
    if !text(node, src).contains(['*', '?', '[', '{', '@', '+', '!']) {
        return false;
    }
    match node.kind() {
        "brace_expression" | "extglob_pattern" => true,
        "word" | "number" => unquoted_expands(text(node, src)),
        "concatenation" | "command_name" => {
            // The unquoted text with every quoted piece blanked out, so a
            // brace split over several nodes (`{`, `a,b`, `}`) is still seen.
            let mut unquoted = String::new();
            for child in named_children(node) {
                match child.kind() {
                    "word" | "number" => unquoted.push_str(text(child, src)),
                    "brace_expression" | "extglob_pattern" => return true,
                    "concatenation" | "command_name" if expands(child, src) => return true,
                    _ => unquoted.push('q'),
                }
            }
            unquoted_expands(&unquoted)
        }
        _ => false,
    }
}

/// An unescaped glob character, or a `{…}` holding an unescaped `,` or
/// `..` (a brace expansion; `{}` and `{x}` stay as they are).
fn unquoted_expands(t: &str) -> bool {
    let mut chars = t.chars().peekable();
    let mut open_brace = false;
    let mut brace_has_list = false;
    let mut prev_dot = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
                prev_dot = false;
                continue;
            }
            '*' | '?' | '[' => return true,
            '{' => {
                open_brace = true;
                brace_has_list = false;
            }
            ',' if open_brace => brace_has_list = true,
            '.' if open_brace && prev_dot => brace_has_list = true,
            '}' if open_brace && brace_has_list => return true,
            _ => {}
        }
        prev_dot = c == '.';
    }
    false
}

/// The source text of a node (empty if the range is not on a char boundary).
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn value(node: Node<'_>, src: &str) -> Option<String> {
    let t = text(node, src);
    match node.kind() {
        "word" | "number" => Some(unescape_word(t)),
        "raw_string" => Some(strip(t, 1, 1).to_string()),
        "string" | "translated_string" => {
            let only_text = named_children(node).all(|n| n.kind() == "string_content");
            let open = if node.kind() == "string" { 1 } else { 2 };
            only_text.then(|| unescape_double(strip(t, open, 1)))
        }
        "ansi_c_string" => Some(ansi_c(strip(t, 2, 1))),
        "concatenation" | "command_name" => {
            let mut out = String::new();
            for child in named_children(node) {
                out.push_str(&value(child, src)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// A node's named children by index: words have a few, and a cursor would
/// cost an allocation per word.
fn named_children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    (0..node.named_child_count()).filter_map(move |i| node.named_child(i))
}

fn strip(t: &str, open: usize, close: usize) -> &str {
    t.get(open..t.len().saturating_sub(close)).unwrap_or("")
}

/// Unquoted word: a backslash keeps the next character (a newline is a
/// line continuation and vanishes).
fn unescape_word(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            },
            _ => out.push(c),
        }
    }
    out
}

/// Inside double quotes only `\"`, `\\`, `\$`, `` \` `` and a newline are
/// escapes.
fn unescape_double(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some(&e @ ('"' | '\\' | '$' | '`')) => {
                    out.push(e);
                    chars.next();
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside backticks a backslash escapes only `$`, `` ` `` and `\`: the
/// text the inner shell parses.
pub(crate) fn unescape_backticks(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('$' | '`' | '\\')) {
            if let Some(e) = chars.next() {
                out.push(e);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decode `$'…'` (ANSI-C quoting), so that `$'\x72m'` is `rm`.
fn ansi_c(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        match numeric(e, &mut chars) {
            Some(ch) => out.push(ch),
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

/// `\xHH`, `\uHHHH`, `\UHHHHHHHH` and `\NNN` (octal) after the backslash
/// and `e`; `None` (nothing consumed beyond `e`) for anything else.
fn numeric(e: char, chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    let (radix, max) = match e {
        'x' => (16, 2),
        'u' => (16, 4),
        'U' => (16, 8),
        '0'..='7' => (8, 3),
        _ => return None,
    };
    let mut digits = String::new();
    if radix == 8 {
        digits.push(e);
    }
    while digits.len() < max {
        match chars.peek() {
            Some(d) if d.is_digit(radix) => {
                digits.push(*d);
                chars.next();
            }
            _ => break,
        }
    }
    if digits.is_empty() {
        return None;
    }
    u32::from_str_radix(&digits, radix)
        .ok()
        .and_then(char::from_u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes() {
        assert_eq!(ansi_c(r"\x72m"), "rm");
        assert_eq!(ansi_c(r"\162m"), "rm");
        assert_eq!(ansi_c(r"a\tb"), "a\tb");
        assert_eq!(ansi_c(r"\u0072m"), "rm");
        assert_eq!(ansi_c(r"\q"), r"\q");
    }

    #[test]
    fn expansion_patterns() {
        for t in [
            "*",
            "a*",
            "?x",
            "x[ab]",
            "{a,b}",
            "a{b,c}d",
            "{1..3}",
            "{a,{b,c}}",
        ] {
            assert!(unquoted_expands(t), "{t}");
        }
        for t in ["{}", "{x}", "a\\*", "\\{a,b}", "a.b", "x,y", "}{,"] {
            assert!(!unquoted_expands(t), "{t}");
        }
    }

    #[test]
    fn backtick_escapes() {
        assert_eq!(unescape_backticks(r"echo \`rm\` \\ \n"), r"echo `rm` \ \n");
    }
}
