//! The workspace's paths for the `@` picker, walked and ranked.
//!
//! The walk runs on a thread of its own as ripgrep would walk (`.gitignore`,
//! `.ignore`, hidden files: the `ignore` crate) and hands its paths over in
//! batches; the list fills while it goes on. Ranking runs where the key is
//! typed, bounded by construction so no key waits long: a key that extends
//! the query rescans only what matched before (a fuzzy match of `ab` is a
//! match of `a`), large candidate sets are scored greedily (linear in the
//! path) rather than optimally (path × query), on every core, and only the
//! rows shown are ranked, not every match sorted. On 100,000 paths and 2
//! cores the broadest key takes about 1.5 ms (docs/benchmarks.md).

use std::cmp::Ordering as Order;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};

use ignore::{WalkBuilder, WalkState};
use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// Entries a walk takes at most: a mistaken start in `/` or a home
/// directory stays bounded (and so does the time a key can take).
pub const MAX_ENTRIES: usize = 300_000;
/// Paths a walking thread gathers before handing them over.
const BATCH: usize = 256;
/// Above this many candidates a key is scored greedily: optimal scoring of
/// 100,000 paths takes 10 ms on one core, greedy 2.7 ms, and for a query
/// that still matches so much the order of the first rows barely differs.
const GREEDY_ABOVE: usize = 20_000;
/// Below this many candidates one thread scores them (starting threads
/// costs more than it saves).
const PARALLEL_ABOVE: usize = 8_192;

/// A path that matched: its score and where it is in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Match {
    score: u16,
    index: u32,
}

/// The workspace's paths and the ones matching the query.
pub struct FileIndex {
    /// Relative paths, directories ending in `/`, in the order walked.
    paths: Vec<Box<str>>,
    batches: Receiver<Vec<String>>,
    walking: bool,
    query: String,
    atom: Atom,
    /// Every path of `paths[..scanned]` that matches the query.
    matches: Vec<Match>,
    scanned: usize,
    /// The best of `matches`, best first, at most `rows` of them.
    top: Vec<Match>,
    rows: usize,
}

impl FileIndex {
    /// Starts walking `root`; `rows` is how many of the best matches are
    /// kept in order.
    pub fn start(root: PathBuf, rows: usize) -> FileIndex {
        let (sender, batches) = std::sync::mpsc::channel();
        let walking = walk(root, sender);
        FileIndex {
            paths: Vec::new(),
            batches,
            walking,
            query: String::new(),
            atom: atom(""),
            matches: Vec::new(),
            scanned: 0,
            top: Vec::new(),
            rows,
        }
    }

    /// Whether the walk still runs (more paths may come).
    pub fn walking(&self) -> bool {
        self.walking
    }

    /// Ranks for `query`: a query that extends the last one rescans only
    /// what matched it.
    pub fn set_query(&mut self, query: &str) {
        if query == self.query {
            return;
        }
        let narrowing = query.starts_with(&self.query);
        self.query = query.to_string();
        self.atom = atom(query);
        let candidates: Vec<u32> = if narrowing {
            self.matches.iter().map(|m| m.index).collect()
        } else {
            (0..index_of(self.scanned)).collect()
        };
        self.matches = score(&self.paths, &candidates, &self.atom);
        self.top = best(&self.paths, &self.matches, self.rows);
    }

    /// Takes in what the walk found since and ranks it; true when any came.
    pub fn poll(&mut self) -> bool {
        let before = self.paths.len();
        while self.walking {
            match self.batches.try_recv() {
                Ok(batch) => self
                    .paths
                    .extend(batch.into_iter().map(String::into_boxed_str)),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => self.walking = false,
            }
        }
        if self.paths.len() == before {
            return false;
        }
        let fresh: Vec<u32> = (index_of(self.scanned)..index_of(self.paths.len())).collect();
        self.scanned = self.paths.len();
        let found = score(&self.paths, &fresh, &self.atom);
        self.matches.extend_from_slice(&found);
        let mut merged = std::mem::take(&mut self.top);
        merged.extend(best(&self.paths, &found, self.rows));
        self.top = best(&self.paths, &merged, self.rows);
        true
    }

    /// How many paths match, of all walked so far.
    pub fn matched(&self) -> usize {
        self.matches.len()
    }

    /// The best matches, best first.
    pub fn best(&self) -> impl Iterator<Item = &str> {
        self.top.iter().map(|m| &*self.paths[m.index as usize])
    }
}

fn index_of(position: usize) -> u32 {
    u32::try_from(position).unwrap_or(u32::MAX)
}

fn atom(query: &str) -> Atom {
    Atom::new(
        query,
        CaseMatching::Smart,
        Normalization::Smart,
        AtomKind::Fuzzy,
        false,
    )
}

/// The candidates that match `atom`, with their scores, in the order given.
fn score(paths: &[Box<str>], candidates: &[u32], atom: &Atom) -> Vec<Match> {
    let greedy = candidates.len() > GREEDY_ABOVE;
    let threads = if candidates.len() > PARALLEL_ABOVE {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    } else {
        1
    };
    if threads == 1 {
        return score_part(paths, candidates, atom, greedy);
    }
    let part = candidates.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = candidates
            .chunks(part)
            .map(|chunk| {
                (
                    chunk,
                    scope.spawn(move || score_part(paths, chunk, atom, greedy)),
                )
            })
            .collect();
        let mut all = Vec::new();
        for (chunk, handle) in parts {
            // A scoring thread has nothing that panics on text; if one
            // did, its share is scored here rather than lost.
            all.extend(
                handle
                    .join()
                    .unwrap_or_else(|_| score_part(paths, chunk, atom, greedy)),
            );
        }
        all
    })
}

fn score_part(paths: &[Box<str>], candidates: &[u32], atom: &Atom, greedy: bool) -> Vec<Match> {
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    // `Atom::score` sets the matcher's case and normalisation from the
    // query (smart case); the greedy scorer below relies on that setting.
    let _ = atom.score(Utf32Str::Ascii(b""), &mut matcher);
    let needle = atom.needle_text();
    let mut buf = Vec::new();
    let mut found = Vec::new();
    for &index in candidates {
        let Some(path) = paths.get(index as usize) else {
            continue;
        };
        let haystack = Utf32Str::new(path, &mut buf);
        let scored = if needle.is_empty() {
            Some(0)
        } else if greedy {
            matcher.fuzzy_match_greedy(haystack, needle)
        } else {
            atom.score(haystack, &mut matcher)
        };
        if let Some(score) = scored {
            found.push(Match { score, index });
        }
    }
    found
}

/// Best first: the higher score, then the shorter path, then by name.
fn order(paths: &[Box<str>], a: &Match, b: &Match) -> Order {
    let (pa, pb) = (&paths[a.index as usize], &paths[b.index as usize]);
    b.score
        .cmp(&a.score)
        .then(pa.len().cmp(&pb.len()))
        .then_with(|| pa.cmp(pb))
}

/// The `rows` best of `matches`, best first, without sorting them all.
fn best(paths: &[Box<str>], matches: &[Match], rows: usize) -> Vec<Match> {
    let mut top: Vec<Match> = Vec::with_capacity(rows + 1);
    for candidate in matches {
        let beats_last = top
            .last()
            .is_none_or(|last| order(paths, candidate, last) == Order::Less);
        if top.len() < rows || beats_last {
            let at = top.partition_point(|kept| order(paths, kept, candidate) == Order::Less);
            top.insert(at, *candidate);
            top.truncate(rows);
        }
    }
    top
}

/// Walks `root` on a thread of its own, sending its paths (relative,
/// directories ending in `/`) in batches; the channel closes when the walk
/// ends. False when no thread could be started (nothing will come).
fn walk(root: PathBuf, sender: Sender<Vec<String>>) -> bool {
    std::thread::Builder::new()
        .name("uji-tui-files".into())
        .spawn(move || {
            let taken = AtomicUsize::new(0);
            WalkBuilder::new(&root).build_parallel().run(|| {
                let mut batch = Batch::new(sender.clone());
                let (root, taken) = (root.clone(), &taken);
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
                    if batch.push(path) {
                        WalkState::Continue
                    } else {
                        // The picker is gone: nobody reads the rest.
                        WalkState::Quit
                    }
                })
            });
        })
        .is_ok()
}

/// One walking thread's paths, sent when full and when the thread ends.
struct Batch {
    paths: Vec<String>,
    sender: Sender<Vec<String>>,
}

impl Batch {
    fn new(sender: Sender<Vec<String>>) -> Batch {
        Batch {
            paths: Vec::with_capacity(BATCH),
            sender,
        }
    }

    /// False once the receiving end is gone.
    fn push(&mut self, path: String) -> bool {
        self.paths.push(path);
        self.paths.len() < BATCH || self.flush()
    }

    fn flush(&mut self) -> bool {
        let full = std::mem::replace(&mut self.paths, Vec::with_capacity(BATCH));
        full.is_empty() || self.sender.send(full).is_ok()
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<Box<str>> {
        list.iter().map(|p| Box::from(*p)).collect()
    }

    fn ranked(paths: &[Box<str>], query: &str, rows: usize) -> Vec<String> {
        let all: Vec<u32> = (0..index_of(paths.len())).collect();
        let found = score(paths, &all, &atom(query));
        best(paths, &found, rows)
            .iter()
            .map(|m| paths[m.index as usize].to_string())
            .collect()
    }

    #[test]
    fn an_empty_query_lists_the_shortest_paths_first() {
        let list = paths(&["src/lib.rs", "b/", "a.md", "src/"]);
        assert_eq!(ranked(&list, "", 3), ["b/", "a.md", "src/"]);
    }

    #[test]
    fn the_best_match_comes_first_and_only_rows_are_kept() {
        let list = paths(&["docs/library.md", "src/lib.rs", "tests/lib_test.rs", "x"]);
        let top = ranked(&list, "librs", 2);
        assert_eq!(top, ["src/lib.rs", "tests/lib_test.rs"]);
    }

    #[test]
    fn smart_case_ignores_case_until_the_query_has_a_capital() {
        let list = paths(&["README.md", "readme.txt"]);
        assert_eq!(ranked(&list, "readme", 5).len(), 2);
        assert_eq!(ranked(&list, "READ", 5), ["README.md"]);
    }

    #[test]
    fn greedy_scoring_of_large_sets_finds_the_same_matches() {
        let list: Vec<Box<str>> = (0..GREEDY_ABOVE + 10)
            .map(|i| format!("d{:03}/f{i:05}.rs", i % 997).into_boxed_str())
            .collect();
        let all: Vec<u32> = (0..index_of(list.len())).collect();
        let large = score(&list, &all, &atom("d12f"));
        let small: usize = all
            .chunks(GREEDY_ABOVE / 2)
            .map(|chunk| score(&list, chunk, &atom("d12f")).len())
            .sum();
        assert_eq!(
            large.len(),
            small,
            "greedy and optimal agree on what matches"
        );
    }

    #[test]
    fn a_longer_query_narrows_and_a_shorter_one_rescans() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["alpha.rs", "beta.rs", "alphabet.md"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let mut index = FileIndex::start(dir.path().to_path_buf(), 8);
        while index.walking() {
            index.poll();
            std::thread::yield_now();
        }
        index.set_query("al");
        assert_eq!(index.matched(), 2);
        index.set_query("alr");
        assert_eq!(index.best().collect::<Vec<_>>(), ["alpha.rs"]);
        index.set_query("b");
        assert_eq!(index.matched(), 2, "beta.rs and alphabet.md again");
    }
}
