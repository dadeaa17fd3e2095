//! `@path` mentions in a user's message (docs/context.md): which words
//! name files or directories, and the context message that carries what
//! they hold to the model. Pure: the caller says which paths exist and
//! reads them (through the gate, so the policy applies).
//!
//! A mention is `@` at the start of the message or after whitespace or an
//! opening bracket, then a path up to the next whitespace (or, quoted,
//! `@"a path with spaces"`), optionally ending in a line range:
//! `@src/lib.rs:10-40`, `@src/lib.rs:10` (from line 10 on). Punctuation
//! that ends a sentence (`@notes.txt,`) is not part of the path unless the
//! path with it exists. A word that names nothing on disk stays plain text
//! (`@someone`, an e-mail address).

/// Lines read when a range gives no end (`@file:10`): read_file's page.
pub const PAGE_LINES: u64 = 2000;

/// Most entries a directory mention lists.
pub const MAX_LISTED: usize = 500;

/// `(first, last)` lines, 1-based; no last: a page from the first.
pub type LineRange = (u64, Option<u64>);

/// One mention found in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The path as written (relative to the working directory, absolute,
    /// or starting with `~/`).
    pub path: String,
    /// The lines asked for, when a range was given.
    pub lines: Option<LineRange>,
    /// It names a directory (as `look` found it).
    pub directory: bool,
}

/// What a path is, as the caller found it on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    File,
    Directory,
    Missing,
}

/// The mentions in `text`, each once, in order. `look` says what a
/// written path is on disk.
pub fn find(text: &str, look: impl Fn(&str) -> Found) -> Vec<Mention> {
    let mut mentions: Vec<Mention> = Vec::new();
    for word in candidates(text) {
        if let Some(mention) = resolve(&word, &look)
            && !mentions.contains(&mention)
        {
            mentions.push(mention);
        }
    }
    mentions
}

/// The words after an `@` that starts a mention, as written.
fn candidates(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut previous: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let starts = c == '@' && previous.is_none_or(|p| p.is_whitespace() || "([{<".contains(p));
        previous = Some(c);
        if !starts {
            continue;
        }
        let rest = &text[at + 1..];
        let word = match rest.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().filter(|_| quoted.contains('"')),
            None => rest.split(char::is_whitespace).next(),
        };
        if let Some(word) = word.filter(|w| !w.is_empty()) {
            words.push(word.to_string());
            // Skip the word so an `@` inside it starts nothing.
            let end = at + 1 + word.len();
            while chars.peek().is_some_and(|&(i, _)| i < end) {
                previous = chars.next().map(|(_, c)| c);
            }
        }
    }
    words
}

/// `word` as a mention of something on disk: as written, then with a line
/// range taken off, then with trailing punctuation taken off.
fn resolve(word: &str, look: &impl Fn(&str) -> Found) -> Option<Mention> {
    let mut word = word;
    loop {
        if let Some(mention) = as_written(word, look) {
            return Some(mention);
        }
        let trimmed = word.strip_suffix(|c: char| ",.;:!?)]}>'\"".contains(c))?;
        word = trimmed;
    }
}

fn as_written(word: &str, look: &impl Fn(&str) -> Found) -> Option<Mention> {
    let found = look(word);
    if found != Found::Missing {
        return Some(Mention {
            path: word.to_string(),
            lines: None,
            directory: found == Found::Directory,
        });
    }
    let (path, range) = word.rsplit_once(':')?;
    let lines = line_range(range)?;
    (look(path) == Found::File).then(|| Mention {
        path: path.to_string(),
        lines: Some(lines),
        directory: false,
    })
}

/// `10-40` or `10` (from line 10 on); lines count from 1.
fn line_range(range: &str) -> Option<LineRange> {
    let (first, last) = match range.split_once('-') {
        Some((first, last)) => (first, Some(last)),
        None => (range, None),
    };
    let first: u64 = first.parse().ok().filter(|&n| n >= 1)?;
    match last {
        None => Some((first, None)),
        Some(last) => {
            let last: u64 = last.parse().ok().filter(|&n| n >= first)?;
            Some((first, Some(last)))
        }
    }
}

impl Mention {
    /// read_file's `offset` and `limit` for the range (none: its first page).
    pub fn read_window(&self) -> (Option<u64>, Option<u64>) {
        match self.lines {
            None => (None, None),
            Some((first, None)) => (Some(first), Some(PAGE_LINES)),
            Some((first, Some(last))) => (Some(first), Some((last - first + 1).min(PAGE_LINES))),
        }
    }

    /// How the mention reads in the context message (`src/lib.rs:10-40`).
    pub fn label(&self) -> String {
        match self.lines {
            None => self.path.clone(),
            Some((first, None)) => format!("{}:{first}", self.path),
            Some((first, Some(last))) => format!("{}:{first}-{last}", self.path),
        }
    }
}

/// What one mention brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attached {
    /// read_file's text of the file (numbered lines and its note on how to
    /// read on).
    File(String),
    /// A file read_file gave back as an image (attached to the message).
    Image,
    /// The directory's entries, `name/` for directories, and how many
    /// more there were.
    Directory { entries: Vec<String>, more: usize },
    /// Not attached, and why (the policy refused it, it could not be read).
    Refused(String),
}

/// The hidden message that follows the user's: each mention's content,
/// in the order mentioned.
pub fn context_message(attached: &[(Mention, Attached)]) -> String {
    let mut out = String::from(
        "The user's message mentions these paths; uji attached what they hold (a file as \
         read_file's first page or the lines asked for; read on with read_file where it says so).",
    );
    for (mention, what) in attached {
        let label = escape(&mention.label());
        out.push_str("\n\n");
        match what {
            Attached::File(text) => {
                out.push_str(&format!(
                    "<file path=\"{label}\">\n{}\n</file>",
                    text.trim_end()
                ));
            }
            Attached::Image => {
                out.push_str(&format!(
                    "<file path=\"{label}\">attached as an image</file>"
                ));
            }
            Attached::Directory { entries, more } => {
                out.push_str(&format!("<directory path=\"{label}\">\n"));
                for entry in entries {
                    out.push_str(entry);
                    out.push('\n');
                }
                if *more > 0 {
                    out.push_str(&format!("… {more} more entries not listed\n"));
                }
                out.push_str("</directory>");
            }
            Attached::Refused(why) => {
                out.push_str(&format!(
                    "<file path=\"{label}\">not attached: {}</file>",
                    why.trim()
                ));
            }
        }
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(path: &str) -> Found {
        match path {
            "notes.txt" | "src/lib.rs" | "a b.txt" | "x@y.rs" | "~/todo.md" => Found::File,
            "src" | "src/" => Found::Directory,
            _ => Found::Missing,
        }
    }

    fn paths(text: &str) -> Vec<(String, Option<LineRange>)> {
        find(text, disk)
            .into_iter()
            .map(|m| (m.path, m.lines))
            .collect()
    }

    #[test]
    fn mentions_are_found_at_word_starts_and_only_for_what_exists() {
        assert_eq!(
            paths("look at @notes.txt and @src, not @nobody or me@notes.txt"),
            vec![("notes.txt".into(), None), ("src".into(), None)]
        );
        let kinds: Vec<bool> = find("@notes.txt @src", disk)
            .iter()
            .map(|m| m.directory)
            .collect();
        assert_eq!(kinds, [false, true], "each says whether it is a directory");
    }

    #[test]
    fn sentence_punctuation_is_not_part_of_the_path() {
        assert_eq!(
            paths("read @notes.txt, then (see @src/lib.rs). And @~/todo.md!"),
            vec![
                ("notes.txt".into(), None),
                ("src/lib.rs".into(), None),
                ("~/todo.md".into(), None)
            ]
        );
    }

    #[test]
    fn a_line_range_or_a_first_line_can_follow_a_file() {
        assert_eq!(
            paths("@src/lib.rs:10-40 and @notes.txt:7"),
            vec![
                ("src/lib.rs".into(), Some((10, Some(40)))),
                ("notes.txt".into(), Some((7, None)))
            ]
        );
        assert_eq!(paths("@src/lib.rs:40-10 @src/lib.rs:0"), vec![]);
        assert_eq!(paths("@src:1-2"), vec![], "no range on a directory");
    }

    #[test]
    fn a_quoted_path_may_hold_spaces_and_each_path_comes_once() {
        assert_eq!(
            paths("@\"a b.txt\" and @notes.txt and @notes.txt again"),
            vec![("a b.txt".into(), None), ("notes.txt".into(), None)]
        );
    }

    #[test]
    fn an_at_inside_a_mentioned_path_starts_nothing() {
        assert_eq!(paths("@x@y.rs"), vec![("x@y.rs".into(), None)]);
    }

    #[test]
    fn read_windows_follow_the_range_and_stay_within_a_page() {
        let m = |lines| Mention {
            path: "f".into(),
            lines,
            directory: false,
        };
        assert_eq!(m(None).read_window(), (None, None));
        assert_eq!(m(Some((10, Some(40)))).read_window(), (Some(10), Some(31)));
        assert_eq!(
            m(Some((5, None))).read_window(),
            (Some(5), Some(PAGE_LINES))
        );
        assert_eq!(
            m(Some((1, Some(9000)))).read_window(),
            (Some(1), Some(PAGE_LINES))
        );
    }

    #[test]
    fn the_context_message_holds_each_mention_in_order() {
        let file = Mention {
            path: "notes.txt".into(),
            lines: Some((2, Some(3))),
            directory: false,
        };
        let dir = Mention {
            path: "src".into(),
            lines: None,
            directory: true,
        };
        let secret = Mention {
            path: ".env".into(),
            lines: None,
            directory: false,
        };
        let text = context_message(&[
            (file, Attached::File("    2| b\n    3| c\n".into())),
            (
                dir,
                Attached::Directory {
                    entries: vec!["lib.rs".into(), "bin/".into()],
                    more: 2,
                },
            ),
            (secret, Attached::Refused("denied by your policy".into())),
        ]);
        let file_at = text.find("<file path=\"notes.txt:2-3\">\n    2| b\n    3| c\n</file>");
        let dir_at = text.find(
            "<directory path=\"src\">\nlib.rs\nbin/\n… 2 more entries not listed\n</directory>",
        );
        let refused_at =
            text.find("<file path=\".env\">not attached: denied by your policy</file>");
        assert!(
            file_at < dir_at && dir_at < refused_at && file_at.is_some(),
            "{text}"
        );
    }
}
