//! Splitting a shell command line into the simple commands it runs, by
//! hand.
//!
//! Decisions no longer use it: [`Policy::decide`](crate::Policy::decide)
//! reads commands with a real shell grammar ([`command_parts`](crate::command_parts)).
//! It stays for [`split_command`]'s callers and its own tests.
//!
//! This is not a shell parser; it finds every place where the shell would
//! start another command so that each one can be checked against the policy.
//! Whenever the structure is unclear (unbalanced quotes or brackets, absurd
//! nesting) it refuses with a [`SplitError`], and the caller asks the user
//! rather than guessing.

use std::fmt;

/// Most parts a line may split into; more is refused as suspicious.
pub const MAX_PARTS: usize = 64;
/// Deepest nesting of `$( )`, backticks, `( )` and `${ }` accepted.
pub const MAX_DEPTH: usize = 16;

/// Why a command line could not be split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitError {
    /// A `'` or `"` is never closed.
    UnbalancedQuote {
        /// The quote character.
        quote: char,
    },
    /// A `(` or `$(` is never closed, or a `)` closes nothing.
    UnbalancedParens,
    /// A backtick substitution is never closed.
    UnbalancedBacktick,
    /// A `${` is never closed.
    UnbalancedBrace,
    /// The line has more than [`MAX_PARTS`] parts.
    TooManyParts {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// Substitutions or subshells nest deeper than [`MAX_DEPTH`].
    TooDeep {
        /// The limit that was exceeded.
        limit: usize,
    },
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::UnbalancedQuote { quote } => write!(f, "unbalanced {quote} quote"),
            SplitError::UnbalancedParens => f.write_str("unbalanced parentheses"),
            SplitError::UnbalancedBacktick => f.write_str("unbalanced backtick"),
            SplitError::UnbalancedBrace => f.write_str("unbalanced ${ brace"),
            SplitError::TooManyParts { limit } => {
                write!(f, "more than {limit} commands in one line")
            }
            SplitError::TooDeep { limit } => {
                write!(f, "substitutions nested deeper than {limit} levels")
            }
        }
    }
}

impl std::error::Error for SplitError {}

/// One simple command found in a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// Text with leading `VAR=value` assignments stripped and whitespace
    /// trimmed.
    pub text: String,
    /// The part is only a `( … )` subshell: it runs nothing by itself, its
    /// inner parts do. With anything after the `)` (even a redirection,
    /// which writes a file) it is not, and must be allowed as a whole.
    pub group: bool,
    /// The text with top-level quotes and backslashes removed, when that
    /// differs (`\rm -rf /` → `rm -rf /`). Deny and ask rules also look at it
    /// so that quoting cannot dodge them.
    pub plain: Option<String>,
    /// Byte offset where the part starts, for ordering.
    start: usize,
}

/// Split `line` into the simple commands it would run, in order of appearance.
///
/// Separators are `&&`, `||`, `;`, `|`, `|&`, `&` and newlines. The commands
/// inside `$( … )`, backticks and `( … )` subshells are parts of their own;
/// the enclosing part keeps its full text. Single quotes, double quotes (with
/// substitutions still active inside) and backslash escapes are respected;
/// redirections such as `2>&1`, `>&2`, `&>file` and `>|file` do not split.
/// Leading `VAR=value` assignments are stripped from each part, `#` comments
/// end a part, and empty parts are dropped.
///
/// # Errors
/// See [`SplitError`].
pub fn split_command(line: &str) -> Result<Vec<String>, SplitError> {
    Ok(split_parts(line)?.into_iter().map(|p| p.text).collect())
}

/// [`split_command`] keeping the subshell flag the decision needs.
pub(crate) fn split_parts(line: &str) -> Result<Vec<Part>, SplitError> {
    let mut sc = Scanner {
        b: line.as_bytes(),
        pos: 0,
        parts: Vec::new(),
    };
    sc.list(0, End::Eof)?;
    // Inner parts are finished before the part that encloses them; order by
    // where each part starts (stable, so equal starts keep finishing order).
    sc.parts.sort_by_key(|p| p.start);
    Ok(sc.parts)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Eof,
    Paren,
    Backtick,
}

/// State of the part currently being scanned inside one `list` frame.
struct PartState {
    /// First non-blank byte of the part.
    start: Option<usize>,
    /// Where the command proper starts (after `VAR=value` words).
    cmd_start: usize,
    /// Still inside the leading assignments.
    in_prefix: bool,
    /// The next byte begins a word.
    at_word_start: bool,
    /// Byte just after the `)` of a subshell that opens the command.
    group_end: Option<usize>,
    /// Where a `#` comment began; the part's text ends there.
    comment_at: Option<usize>,
}

impl PartState {
    fn new() -> Self {
        PartState {
            start: None,
            cmd_start: 0,
            in_prefix: true,
            at_word_start: true,
            group_end: None,
            comment_at: None,
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    parts: Vec<Part>,
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Remove quoting the way the shell would for the command's words, without
/// expanding anything. Only used to make deny and ask rules harder to dodge.
fn dequote(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next()
                    && n != '\n'
                {
                    out.push(n);
                }
            }
            '\'' => {
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    out.push(n);
                }
            }
            '"' => {
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => out.push(e),
                            Some('\n') | None => {}
                            Some(e) => {
                                out.push('\\');
                                out.push(e);
                            }
                        },
                        _ => out.push(n),
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

impl Scanner<'_> {
    fn peek(&self, off: usize) -> Option<u8> {
        self.b.get(self.pos + off).copied()
    }

    /// Does an assignment word (`NAME=…`) start at the current position?
    fn assignment_here(&self) -> bool {
        let rest = &self.b[self.pos..];
        match rest.first() {
            Some(&c) if is_name_start(c) => {}
            _ => return false,
        }
        let n = rest.iter().take_while(|&&c| is_name_char(c)).count();
        let tail = &rest[n..];
        tail.first() == Some(&b'=') || tail.starts_with(b"+=")
    }

    /// Note that a word begins at the current position.
    fn begin_word(&mut self, st: &mut PartState) {
        if st.start.is_none() {
            st.start = Some(self.pos);
        }
        if st.at_word_start {
            st.at_word_start = false;
            if st.in_prefix && !self.assignment_here() {
                st.in_prefix = false;
                st.cmd_start = self.pos;
            }
        }
    }

    fn finish_part(&mut self, st: &mut PartState, end: usize) -> Result<(), SplitError> {
        let end = st.comment_at.map_or(end, |c| c.min(end));
        if let Some(start) = st.start {
            let cmd_start = if st.in_prefix { end } else { st.cmd_start };
            let raw = String::from_utf8_lossy(self.b.get(cmd_start..end).unwrap_or(&[]));
            let text = raw.trim();
            if !text.is_empty() {
                if self.parts.len() >= MAX_PARTS {
                    return Err(SplitError::TooManyParts { limit: MAX_PARTS });
                }
                let group = match st.group_end {
                    Some(g) => self
                        .b
                        .get(g..end)
                        .is_some_and(|rest| rest.iter().all(u8::is_ascii_whitespace)),
                    None => false,
                };
                let plain = dequote(text);
                self.parts.push(Part {
                    text: text.to_string(),
                    plain: (plain != text).then_some(plain),
                    group,
                    start,
                });
            }
        }
        *st = PartState::new();
        Ok(())
    }

    /// Scan a command list until `end`; on return `pos` is at the terminator
    /// (not consumed) or at the end of input.
    fn list(&mut self, depth: usize, end: End) -> Result<(), SplitError> {
        if depth > MAX_DEPTH {
            return Err(SplitError::TooDeep { limit: MAX_DEPTH });
        }
        let mut st = PartState::new();
        while let Some(c) = self.peek(0) {
            match c {
                b' ' | b'\t' | b'\r' => {
                    self.pos += 1;
                    st.at_word_start = true;
                }
                b'\n' | b';' => {
                    self.finish_part(&mut st, self.pos)?;
                    self.pos += 1;
                }
                b'&' => {
                    if self.peek(1) == Some(b'>') {
                        // `&>file` / `&>>file`: a redirection.
                        self.begin_word(&mut st);
                        self.pos += 2;
                    } else {
                        self.finish_part(&mut st, self.pos)?;
                        self.pos += if self.peek(1) == Some(b'&') { 2 } else { 1 };
                    }
                }
                b'|' => {
                    self.finish_part(&mut st, self.pos)?;
                    self.pos += match self.peek(1) {
                        Some(b'|') | Some(b'&') => 2,
                        _ => 1,
                    };
                }
                b'>' | b'<' => {
                    self.begin_word(&mut st);
                    // `>&2`, `2>&1`, `<&3`, `>|file` stay inside the part.
                    self.pos += match self.peek(1) {
                        Some(b'&') | Some(b'|') => 2,
                        _ => 1,
                    };
                }
                b'#' if st.at_word_start => {
                    // A comment runs to the end of the line.
                    st.comment_at.get_or_insert(self.pos);
                    while let Some(c) = self.peek(0) {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                b'\\' => {
                    self.begin_word(&mut st);
                    self.pos = (self.pos + 2).min(self.b.len());
                }
                b'\'' => {
                    self.begin_word(&mut st);
                    self.single_quote()?;
                }
                b'"' => {
                    self.begin_word(&mut st);
                    self.double_quote(depth)?;
                }
                b'`' => {
                    if end == End::Backtick {
                        break;
                    }
                    self.begin_word(&mut st);
                    self.backtick(depth)?;
                }
                b'$' => {
                    self.begin_word(&mut st);
                    self.dollar(depth)?;
                }
                b'(' => {
                    let opens_command = st.start.is_none() || (st.at_word_start && st.in_prefix);
                    self.begin_word(&mut st);
                    self.pos += 1;
                    self.list(depth + 1, End::Paren)?;
                    if self.peek(0) != Some(b')') {
                        return Err(SplitError::UnbalancedParens);
                    }
                    self.pos += 1;
                    if opens_command {
                        st.group_end = Some(self.pos);
                    }
                }
                b')' => {
                    if end == End::Paren {
                        break;
                    }
                    return Err(SplitError::UnbalancedParens);
                }
                _ => {
                    self.begin_word(&mut st);
                    self.pos += 1;
                }
            }
        }
        let stop = self.pos;
        self.finish_part(&mut st, stop)?;
        if self.pos >= self.b.len() {
            match end {
                End::Eof => Ok(()),
                End::Paren => Err(SplitError::UnbalancedParens),
                End::Backtick => Err(SplitError::UnbalancedBacktick),
            }
        } else {
            Ok(())
        }
    }

    /// At a `'`: skip to just past the closing quote.
    fn single_quote(&mut self) -> Result<(), SplitError> {
        self.pos += 1;
        match self.b[self.pos..].iter().position(|&c| c == b'\'') {
            Some(i) => {
                self.pos += i + 1;
                Ok(())
            }
            None => Err(SplitError::UnbalancedQuote { quote: '\'' }),
        }
    }

    /// At a `"`: skip to just past the closing quote, recursing into
    /// substitutions.
    fn double_quote(&mut self, depth: usize) -> Result<(), SplitError> {
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            match c {
                b'"' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => self.pos = (self.pos + 2).min(self.b.len()),
                b'`' => self.backtick(depth)?,
                b'$' => self.dollar(depth)?,
                _ => self.pos += 1,
            }
        }
        Err(SplitError::UnbalancedQuote { quote: '"' })
    }

    /// At a backtick: scan the inner command list to the closing backtick.
    fn backtick(&mut self, depth: usize) -> Result<(), SplitError> {
        self.pos += 1;
        self.list(depth + 1, End::Backtick)?;
        if self.peek(0) != Some(b'`') {
            return Err(SplitError::UnbalancedBacktick);
        }
        self.pos += 1;
        Ok(())
    }

    /// At a `$`: handle `$(`, `$((`, `${` or a plain `$`.
    fn dollar(&mut self, depth: usize) -> Result<(), SplitError> {
        match (self.peek(1), self.peek(2)) {
            (Some(b'('), Some(b'(')) => self.arithmetic(depth),
            (Some(b'('), _) => {
                self.pos += 2;
                self.list(depth + 1, End::Paren)?;
                if self.peek(0) != Some(b')') {
                    return Err(SplitError::UnbalancedParens);
                }
                self.pos += 1;
                Ok(())
            }
            (Some(b'{'), _) => self.brace(depth),
            _ => {
                self.pos += 1;
                Ok(())
            }
        }
    }

    /// At `$((`: skip the arithmetic expansion, recursing into substitutions.
    fn arithmetic(&mut self, depth: usize) -> Result<(), SplitError> {
        if depth + 1 > MAX_DEPTH {
            return Err(SplitError::TooDeep { limit: MAX_DEPTH });
        }
        self.pos += 3;
        let mut open = 0usize;
        while let Some(c) = self.peek(0) {
            match c {
                b'(' => {
                    open += 1;
                    self.pos += 1;
                }
                b')' if open > 0 => {
                    open -= 1;
                    self.pos += 1;
                }
                b')' => {
                    if self.peek(1) == Some(b')') {
                        self.pos += 2;
                        return Ok(());
                    }
                    return Err(SplitError::UnbalancedParens);
                }
                b'\\' => self.pos = (self.pos + 2).min(self.b.len()),
                b'\'' => self.single_quote()?,
                b'"' => self.double_quote(depth + 1)?,
                b'`' => self.backtick(depth + 1)?,
                b'$' => self.dollar(depth + 1)?,
                _ => self.pos += 1,
            }
        }
        Err(SplitError::UnbalancedParens)
    }

    /// At `${`: skip the parameter expansion, recursing into substitutions.
    fn brace(&mut self, depth: usize) -> Result<(), SplitError> {
        if depth + 1 > MAX_DEPTH {
            return Err(SplitError::TooDeep { limit: MAX_DEPTH });
        }
        self.pos += 2;
        let mut open = 0usize;
        while let Some(c) = self.peek(0) {
            match c {
                b'{' => {
                    open += 1;
                    self.pos += 1;
                }
                b'}' if open > 0 => {
                    open -= 1;
                    self.pos += 1;
                }
                b'}' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => self.pos = (self.pos + 2).min(self.b.len()),
                b'\'' => self.single_quote()?,
                b'"' => self.double_quote(depth + 1)?,
                b'`' => self.backtick(depth + 1)?,
                b'$' => self.dollar(depth + 1)?,
                _ => self.pos += 1,
            }
        }
        Err(SplitError::UnbalancedBrace)
    }
}
