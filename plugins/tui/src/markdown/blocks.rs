//! What a line of Markdown starts, judged from the line alone (CommonMark's
//! block rules, simplified where only a line is known): enough to find where
//! top-level blocks begin and end without parsing.

/// An open code fence: its character and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    ch: u8,
    len: usize,
}

/// How an HTML block ends (CommonMark's seven kinds of HTML block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HtmlEnd {
    /// At the line holding this closing tag (`pre`, `script`, `style`,
    /// `textarea`).
    Tag(&'static str),
    /// At the line holding this text.
    Marker(&'static str),
    /// Before the next blank line.
    Blank,
}

const VERBATIM_TAGS: [&str; 4] = ["pre", "script", "style", "textarea"];

const BLOCK_TAGS: &[&str] = &[
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

fn spaces(line: &str) -> usize {
    line.bytes().take_while(|&b| b == b' ').count()
}

/// True when the line starts at column 0 with something visible.
pub(crate) fn at_margin(line: &str) -> bool {
    line.bytes()
        .next()
        .is_some_and(|b| !b.is_ascii_whitespace())
}

pub(crate) fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b.is_ascii_whitespace())
}

/// An opening code fence: up to three spaces, then three or more backticks
/// or tildes; a backtick fence takes no backtick in its info string.
pub(crate) fn fence_open(line: &str) -> Option<Fence> {
    let indent = spaces(line);
    let rest = line.get(indent..)?;
    let ch = *rest.as_bytes().first()?;
    if indent > 3 || (ch != b'`' && ch != b'~') {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    let bad_info = ch == b'`' && rest[len..].contains('`');
    (len >= 3 && !bad_info).then_some(Fence { ch, len })
}

/// True when `line` closes a block opened by `fence`.
pub(crate) fn fence_closes(line: &str, fence: Fence) -> bool {
    let indent = spaces(line);
    let Some(rest) = line.get(indent..) else {
        return false;
    };
    let len = rest.bytes().take_while(|&b| b == fence.ch).count();
    indent <= 3 && len >= fence.len && is_blank(&rest[len..])
}

/// True when `line` may still become the line closing `fence` (it holds
/// only fence characters so far).
pub(crate) fn may_close(line: &str, fence: Fence) -> bool {
    let rest = line.trim_start_matches(' ');
    !rest.is_empty() && line.len() - rest.len() <= 3 && rest.bytes().all(|b| b == fence.ch)
}

/// The info string of a fence line (its language, first).
pub(crate) fn fence_info(line: &str) -> &str {
    line.trim_start().trim_start_matches(['`', '~']).trim()
}

/// An ATX heading: one to six `#` then a space or the line's end.
pub(crate) fn atx_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    let after = line.as_bytes().get(hashes);
    (1..=6).contains(&hashes) && after.is_none_or(|&b| b == b' ' || b == b'\t' || b == b'\r')
}

/// A thematic break of `*` or `_` (one of `-` may be a setext underline, so
/// it is left to the parser).
pub(crate) fn star_break(line: &str) -> bool {
    [b'*', b'_'].into_iter().any(|mark| {
        let marks = line.bytes().filter(|&b| b == mark).count();
        marks >= 3
            && line
                .bytes()
                .all(|b| b == mark || b == b' ' || b == b'\t' || b == b'\r')
    })
}

/// The length of a list marker and its space at the start of `line`.
fn list_marker(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let marker = match bytes.first()? {
        b'-' | b'*' | b'+' => 1,
        _ if (1..=9).contains(&digits) && matches!(bytes.get(digits), Some(b'.' | b')')) => {
            digits + 1
        }
        _ => return None,
    };
    match bytes.get(marker) {
        None => Some(marker),
        Some(b' ' | b'\t') => Some(marker + 1),
        _ => None,
    }
}

/// A list item or block quote line at column 0.
pub(crate) fn starts_item_or_quote(line: &str) -> bool {
    line.starts_with('>') || list_marker(line).is_some()
}

/// The line without the block quote markers, list markers and indentation
/// that may come before a nested code fence.
pub(crate) fn strip_containers(mut line: &str) -> &str {
    loop {
        let trimmed = line.trim_start_matches([' ', '\t']);
        let next = match trimmed.strip_prefix('>') {
            Some(rest) => rest,
            None => match list_marker(trimmed) {
                Some(n) => &trimmed[n..],
                None => return trimmed,
            },
        };
        line = next;
    }
}

/// Cells of a table row split on unescaped pipes (a leading and a trailing
/// pipe don't count); 0 for a line without any pipe.
pub(crate) fn table_cells(line: &str) -> Vec<&str> {
    let trimmed = line.trim();
    if !trimmed.contains('|') {
        return Vec::new();
    }
    let inner = trimmed.strip_prefix('|').unwrap_or(trimmed);
    let inner = match inner.strip_suffix('|') {
        Some(rest) if !rest.ends_with('\\') => rest,
        _ => inner,
    };
    let mut cells = Vec::new();
    let mut start = 0;
    let bytes = inner.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'|' && (i == 0 || bytes[i - 1] != b'\\') {
            cells.push(&inner[start..i]);
            start = i + 1;
        }
    }
    cells.push(&inner[start..]);
    cells
}

/// The number of cells of a table's delimiter row (`|---|:--:|`), if it is
/// one.
pub(crate) fn delimiter_cells(line: &str) -> Option<usize> {
    let cells = table_cells(line);
    let valid = |cell: &&str| {
        let cell = cell.trim();
        let dashes = cell.trim_start_matches(':').trim_end_matches(':');
        !dashes.is_empty() && dashes.bytes().all(|b| b == b'-')
    };
    (!cells.is_empty() && cells.iter().all(valid)).then_some(cells.len())
}

/// The kind of HTML block `line` (at column 0) starts, if any. The seventh
/// kind (any lone tag) cannot interrupt a paragraph, hence `after_break`.
pub(crate) fn html_start(line: &str, whole: bool, after_break: bool) -> Option<HtmlEnd> {
    let rest = line.strip_prefix('<')?;
    let lower = rest[..floor_boundary(rest, 16)].to_ascii_lowercase();
    for tag in VERBATIM_TAGS {
        if lower.starts_with(tag) && ends_tag_name(&lower[tag.len()..]) {
            return Some(HtmlEnd::Tag(tag));
        }
    }
    let marker = [("!--", "-->"), ("?", "?>"), ("![cdata[", "]]>")]
        .into_iter()
        .find(|(start, _)| lower.starts_with(start));
    if let Some((_, end)) = marker {
        return Some(HtmlEnd::Marker(end));
    }
    if lower.starts_with('!') && lower.as_bytes().get(1).is_some_and(u8::is_ascii_alphabetic) {
        return Some(HtmlEnd::Marker(">"));
    }
    let name = lower.strip_prefix('/').unwrap_or(&lower);
    let block = BLOCK_TAGS
        .iter()
        .any(|tag| name.starts_with(tag) && ends_tag_name(&name[tag.len()..]));
    (block || (whole && after_break && lone_tag(line))).then_some(HtmlEnd::Blank)
}

fn ends_tag_name(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with([' ', '\t', '>', '\r']) || rest.starts_with("/>")
}

/// A line holding one opening or closing tag and nothing else.
fn lone_tag(line: &str) -> bool {
    let line = line.trim_end();
    let Some(inner) = line.strip_prefix('<').and_then(|l| l.strip_suffix('>')) else {
        return false;
    };
    let name = inner.strip_prefix('/').unwrap_or(inner);
    name.starts_with(|c: char| c.is_ascii_alphabetic()) && !inner.contains(['<', '>'])
}

/// True when `line` ends an HTML block of kind `end`.
pub(crate) fn html_ends(line: &str, end: HtmlEnd) -> bool {
    match end {
        HtmlEnd::Tag(tag) => {
            let lower = line.to_ascii_lowercase();
            lower.contains(&format!("</{tag}>"))
        }
        HtmlEnd::Marker(marker) => line.contains(marker),
        HtmlEnd::Blank => false,
    }
}

/// The largest char boundary of `text` at or before `at`.
pub(crate) fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
