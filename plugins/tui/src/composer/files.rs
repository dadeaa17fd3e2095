//! The `@` file picker: while the word at the cursor starts with `@`, a
//! fuzzy list of the workspace's files and directories opens above the box
//! (docs/context.md). The paths are walked and ranked by `FileIndex`: the
//! walk on a thread of its own, the list filling while it goes on. Tab or
//! Enter puts the path in the draft; core reads what it names when the
//! message is sent.

use std::ops::Range;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::file_index::FileIndex;
use crate::theme::Theme;

/// Rows the list shows at most.
pub const MAX_ROWS: usize = 8;
/// A walk older than this is done again when the picker next opens, so
/// files created meanwhile show up.
const STALE_AFTER: Duration = Duration::from_secs(30);

/// The `@word` at the cursor: where it is in the draft and what is typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// From the `@` to the end of the word.
    pub range: Range<usize>,
    /// What follows the `@` up to the cursor.
    pub query: String,
}

/// The `@word` the cursor is in, if the word starts a mention (at the start
/// of the draft or after whitespace or an opening bracket).
pub fn token_at(draft: &str, cursor: usize) -> Option<Token> {
    let before = draft.get(..cursor)?;
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word_start = draft[start..]
        .strip_prefix(['(', '[', '{', '<'])
        .map_or(start, |_| start + 1);
    let query = draft.get(word_start..cursor)?.strip_prefix('@')?;
    if query.contains(['"', '@']) {
        return None;
    }
    let end = draft[cursor..]
        .find(char::is_whitespace)
        .map_or(draft.len(), |i| cursor + i);
    Some(Token {
        range: word_start..end,
        query: query.to_string(),
    })
}

/// How a chosen path goes into the draft: `@path ` for a file (the word
/// done), `@dir/` for a directory (to go on typing inside it), quoted
/// when the path holds whitespace.
pub fn mention_text(path: &str) -> String {
    let quoted = path.contains(char::is_whitespace);
    match (quoted, path.ends_with('/')) {
        (true, _) => format!("@\"{path}\" "),
        (false, true) => format!("@{path}"),
        (false, false) => format!("@{path} "),
    }
}

/// The picker: closed, or open on the `@word` at the cursor.
pub struct FilePicker {
    root: PathBuf,
    index: Option<FileIndex>,
    /// When the index was started (it is walked again once stale).
    walked_at: Instant,
    token: Option<Token>,
    /// The draft Esc closed the list on: it stays closed until it changes.
    dismissed: Option<String>,
    shown: Vec<String>,
    /// Paths that matched, of all walked so far.
    matched: usize,
    selected: usize,
}

impl FilePicker {
    /// A closed picker over the files under `root`; nothing is walked
    /// until the first `@`.
    pub fn new(root: PathBuf) -> FilePicker {
        FilePicker {
            root,
            index: None,
            walked_at: Instant::now(),
            token: None,
            dismissed: None,
            shown: Vec::new(),
            matched: 0,
            selected: 0,
        }
    }

    /// The draft or its cursor changed: opens, moves or closes the list.
    pub fn update(&mut self, draft: &str, cursor: usize) {
        if self.dismissed.as_deref().is_some_and(|d| d != draft) {
            self.dismissed = None;
        }
        let token = token_at(draft, cursor);
        let opening = self.token.is_none() && token.is_some();
        self.token = token;
        let Some(token) = &self.token else {
            return;
        };
        let stale = self.index.is_none() || (opening && self.walked_at.elapsed() > STALE_AFTER);
        if stale {
            self.index = Some(FileIndex::start(self.root.clone(), MAX_ROWS));
            self.walked_at = Instant::now();
        }
        if let Some(index) = &mut self.index {
            index.set_query(&token.query);
        }
        self.selected = 0;
        self.poll();
    }

    /// Takes in what the walk found since; true when what the list shows
    /// changed.
    pub fn poll(&mut self) -> bool {
        let (Some(index), Some(_)) = (&mut self.index, &self.token) else {
            return false;
        };
        index.poll();
        let shown: Vec<String> = index.best().map(str::to_string).collect();
        let count = index.matched();
        let changed = shown != self.shown || count != self.matched;
        self.shown = shown;
        self.matched = count;
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
        changed
    }

    /// While open, whether more may come (the walk goes on):
    /// the screen then ticks each frame.
    pub fn busy(&self) -> bool {
        self.token.is_some()
            && self.dismissed.is_none()
            && self.index.as_ref().is_some_and(FileIndex::walking)
    }

    pub fn is_open(&self) -> bool {
        self.token.is_some() && self.dismissed.is_none() && !self.shown.is_empty()
    }

    /// Closes the list (Esc) until the draft changes.
    pub fn close(&mut self, draft: &str) {
        self.dismissed = Some(draft.to_string());
    }

    pub fn up(&mut self) {
        if let Some(last) = self.shown.len().checked_sub(1) {
            self.selected = self.selected.checked_sub(1).unwrap_or(last);
        }
    }

    pub fn down(&mut self) {
        if !self.shown.is_empty() {
            self.selected = (self.selected + 1) % self.shown.len();
        }
    }

    /// The selected path, while open.
    pub fn selected(&self) -> Option<&str> {
        self.is_open()
            .then(|| self.shown.get(self.selected).map(String::as_str))
            .flatten()
    }

    /// The draft with the `@word` replaced by the selected path, and the
    /// cursor after it.
    pub fn completion(&self, draft: &str) -> Option<(String, usize)> {
        let (path, token) = (self.selected()?, self.token.as_ref()?);
        let mention = mention_text(path);
        let mut text = String::with_capacity(draft.len() + mention.len());
        text.push_str(draft.get(..token.range.start)?);
        text.push_str(&mention);
        let cursor = text.len();
        let rest = draft.get(token.range.end..)?;
        // The word's own space stays; the mention brings one of its own.
        text.push_str(if mention.ends_with(' ') {
            rest.strip_prefix(' ').unwrap_or(rest)
        } else {
            rest
        });
        Some((text, cursor))
    }

    /// Rows the list needs (0 when closed).
    pub fn height(&self) -> u16 {
        if self.is_open() {
            u16::try_from(self.shown.len().min(MAX_ROWS)).unwrap_or(0)
        } else {
            0
        }
    }

    /// Draws the rows: each path (directories in the accent colour), the
    /// selection highlighted, and how many matched on the first row.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = area.intersection(buf.area);
        if !self.is_open() || area.is_empty() {
            return;
        }
        let rows = usize::from(area.height).min(MAX_ROWS);
        let first = (self.selected + 1).saturating_sub(rows);
        let width = usize::from(area.width);
        for ((index, path), y) in self
            .shown
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .zip(area.y..area.bottom())
        {
            let selected = index == self.selected;
            let style = match (selected, path.ends_with('/')) {
                (true, _) => theme.selected,
                (false, true) => theme.accent,
                (false, false) => ratatui::style::Style::new(),
            };
            if selected {
                buf.set_style(
                    Rect {
                        y,
                        height: 1,
                        ..area
                    },
                    theme.selected,
                );
            }
            buf.set_stringn(
                area.x.saturating_add(1),
                y,
                format!("@{path}"),
                width.saturating_sub(1),
                style,
            );
        }
        let count = format!("{} ", self.matched);
        if let Ok(len) = u16::try_from(count.len())
            && area.width > len + 20
        {
            let style = if self.selected == first {
                theme.selected
            } else {
                theme.dim
            };
            buf.set_string(area.right() - len, area.y, count, style);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_the_at_word_around_the_cursor() {
        let draft = "look at @src/li and more";
        let cursor = "look at @src/li".len();
        assert_eq!(
            token_at(draft, cursor),
            Some(Token {
                range: 8..15,
                query: "src/li".into()
            })
        );
        assert_eq!(token_at("@", 1).map(|t| t.query), Some(String::new()));
        assert_eq!(token_at("(@no", 4).map(|t| t.range), Some(1..4));
        assert_eq!(token_at("mail me@host", 12), None, "not at a word start");
        assert_eq!(token_at("@a b", 4), None, "the cursor is in the next word");
        assert_eq!(
            token_at("@\"a b", 5),
            None,
            "quoted paths are typed by hand"
        );
    }

    #[test]
    fn a_file_completes_the_word_and_a_directory_keeps_it_open() {
        assert_eq!(mention_text("src/lib.rs"), "@src/lib.rs ");
        assert_eq!(mention_text("src/"), "@src/");
        assert_eq!(mention_text("my notes.txt"), "@\"my notes.txt\" ");
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/bin")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::fs::write(root.join("src/bin/main.rs"), "").unwrap();
        std::fs::write(root.join("README.md"), "").unwrap();
        std::fs::write(root.join("out.log"), "").unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        dir
    }

    fn settle(picker: &mut FilePicker) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while picker.busy() && Instant::now() < deadline {
            picker.poll();
            std::thread::sleep(Duration::from_millis(5));
        }
        picker.poll();
    }

    #[test]
    fn the_list_holds_what_ripgrep_would_walk_and_narrows_as_one_types() {
        let dir = tree();
        let mut picker = FilePicker::new(dir.path().to_path_buf());
        picker.update("@", 1);
        settle(&mut picker);
        let mut all = picker.shown.clone();
        all.sort();
        assert_eq!(
            all,
            [
                "README.md",
                "src/",
                "src/bin/",
                "src/bin/main.rs",
                "src/lib.rs"
            ],
            "ignored and hidden files are left out"
        );
        picker.update("see @librs", 10);
        settle(&mut picker);
        assert_eq!(picker.shown.first().map(String::as_str), Some("src/lib.rs"));
        let (draft, cursor) = picker.completion("see @librs").unwrap();
        assert_eq!(draft, "see @src/lib.rs ");
        assert_eq!(cursor, draft.len());
    }

    #[test]
    fn escape_closes_until_the_draft_changes() {
        let dir = tree();
        let mut picker = FilePicker::new(dir.path().to_path_buf());
        picker.update("@s", 2);
        settle(&mut picker);
        assert!(picker.is_open());
        picker.close("@s");
        assert!(!picker.is_open());
        picker.update("@s", 2);
        assert!(!picker.is_open());
        picker.update("@sr", 3);
        settle(&mut picker);
        assert!(picker.is_open());
        picker.update("@sr ", 4);
        assert!(!picker.is_open(), "a space ends the word");
    }
}
