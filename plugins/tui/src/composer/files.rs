//! The `@` file picker: while the word at the cursor starts with `@`, a
//! fuzzy list of the workspace's files and directories opens above the box
//! (docs/context.md). The workspace is walked once on a thread of its own as
//! ripgrep would walk it (`.gitignore`, `.ignore`, hidden files: the
//! `ignore` crate), and the list fills while the walk goes on; nucleo ranks
//! on its own threads, so no key waits for a large tree. Tab or Enter puts
//! the path in the draft; core reads what it names when the message is sent.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ignore::{WalkBuilder, WalkState};
use nucleo::pattern::{CaseMatching, Normalization};
use nucleo::{Config, Nucleo};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::theme::Theme;

/// Rows the list shows at most.
pub const MAX_ROWS: usize = 8;
/// Entries a walk takes at most: a mistaken start in `/` or a home
/// directory stays bounded.
pub const MAX_ENTRIES: usize = 300_000;
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

/// The workspace's paths being walked and matched.
struct Index {
    nucleo: Nucleo<String>,
    walking: Arc<AtomicBool>,
    started: Instant,
    /// The pattern nucleo matches now.
    query: String,
    /// nucleo's matching was still running at the last tick.
    matching: bool,
}

impl Index {
    fn start(root: PathBuf) -> Index {
        // Redraws come from the screen's frame ticks while the list is
        // busy, so nucleo's own wake-up has nothing to do.
        let nucleo = Nucleo::new(Config::DEFAULT.match_paths(), Arc::new(|| {}), None, 1);
        let walking = Arc::new(AtomicBool::new(true));
        walk(root, &nucleo, Arc::clone(&walking));
        Index {
            nucleo,
            walking,
            started: Instant::now(),
            query: String::new(),
            matching: true,
        }
    }

    /// Walking, matching, or holding paths not matched yet (the walk may
    /// end between a tick and this look).
    fn busy(&self) -> bool {
        self.matching
            || self.walking.load(Ordering::Acquire)
            || self.nucleo.snapshot().item_count() < self.nucleo.injector().injected_items()
    }

    fn set_query(&mut self, query: &str) {
        if query == self.query {
            return;
        }
        // Typing on narrows the last matches instead of starting over.
        let append = query.starts_with(&self.query);
        self.nucleo
            .pattern
            .reparse(0, query, CaseMatching::Smart, Normalization::Smart, append);
        self.query = query.to_string();
    }
}

/// Walks `root` on a thread of its own, handing each path (relative,
/// directories ending in `/`) to nucleo.
fn walk(root: PathBuf, nucleo: &Nucleo<String>, walking: Arc<AtomicBool>) {
    let injector = nucleo.injector();
    let done = Arc::clone(&walking);
    let spawned = std::thread::Builder::new()
        .name("uji-tui-files".into())
        .spawn(move || {
            let taken = AtomicUsize::new(0);
            WalkBuilder::new(&root).build_parallel().run(|| {
                let (injector, root, taken) = (injector.clone(), root.clone(), &taken);
                Box::new(move |entry| {
                    let Ok(entry) = entry else {
                        return WalkState::Continue;
                    };
                    if entry.depth() == 0 {
                        return WalkState::Continue;
                    }
                    if taken.fetch_add(1, Ordering::Relaxed) >= MAX_ENTRIES {
                        return WalkState::Quit;
                    }
                    let Ok(relative) = entry.path().strip_prefix(&root) else {
                        return WalkState::Continue;
                    };
                    let mut path = relative.to_string_lossy().into_owned();
                    if entry.file_type().is_some_and(|t| t.is_dir()) {
                        path.push('/');
                    }
                    injector.push(path, |path, columns| columns[0] = path.as_str().into());
                    WalkState::Continue
                })
            });
            done.store(false, Ordering::Release);
        });
    if spawned.is_err() {
        // No thread, no walk: the list stays empty rather than busy.
        walking.store(false, Ordering::Release);
    }
}

/// The picker: closed, or open on the `@word` at the cursor.
pub struct FilePicker {
    root: PathBuf,
    index: Option<Index>,
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
        let stale = self
            .index
            .as_ref()
            .is_none_or(|index| opening && index.started.elapsed() > STALE_AFTER);
        if stale {
            self.index = Some(Index::start(self.root.clone()));
        }
        if let Some(index) = &mut self.index {
            index.set_query(&token.query);
            index.matching = true;
        }
        self.selected = 0;
        self.poll();
    }

    /// Lets nucleo take in what was walked and matched since; true when
    /// what the list shows changed.
    pub fn poll(&mut self) -> bool {
        let (Some(index), Some(_)) = (&mut self.index, &self.token) else {
            return false;
        };
        index.matching = index.nucleo.tick(2).running;
        let snapshot = index.nucleo.snapshot();
        let count = snapshot.matched_item_count();
        let rows = count.min(MAX_ROWS as u32);
        let shown: Vec<String> = snapshot
            .matched_items(..rows)
            .map(|item| item.data.clone())
            .collect();
        let changed = shown != self.shown || count as usize != self.matched;
        self.shown = shown;
        self.matched = count as usize;
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
        changed
    }

    /// While open, whether more may come (the walk or the matching runs):
    /// the screen then ticks each frame.
    pub fn busy(&self) -> bool {
        self.token.is_some()
            && self.dismissed.is_none()
            && self.index.as_ref().is_some_and(Index::busy)
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
