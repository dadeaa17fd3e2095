//! The messages sent from this box, walked newest first with the draft kept
//! aside while browsing.

#[derive(Default)]
pub(super) struct History {
    /// Oldest first.
    entries: Vec<String>,
    /// The entry shown, while browsing.
    browsing: Option<usize>,
    /// What the user was typing before browsing started.
    draft: String,
}

impl History {
    pub(super) fn replace(&mut self, entries: Vec<String>) {
        self.entries = entries;
        self.stop_browsing();
    }

    pub(super) fn entries(&self) -> impl Iterator<Item = &str> + Clone {
        self.entries.iter().map(String::as_str)
    }

    /// Records a sent draft, unless it repeats the one sent just before.
    pub(super) fn push(&mut self, entry: String) {
        if self.entries.last() != Some(&entry) {
            self.entries.push(entry);
        }
        self.stop_browsing();
    }

    pub(super) fn stop_browsing(&mut self) {
        self.browsing = None;
        self.draft.clear();
    }

    /// The next older entry to show, keeping `current` as the draft when
    /// browsing starts; `None` when there is nothing older.
    pub(super) fn older(&mut self, current: &str) -> Option<&str> {
        let index = match self.browsing {
            None => {
                let newest = self.entries.len().checked_sub(1)?;
                self.draft = current.to_owned();
                newest
            }
            Some(index) => index.checked_sub(1)?,
        };
        self.browsing = Some(index);
        self.entries.get(index).map(String::as_str)
    }

    /// The next newer entry to show, or the kept draft after the newest;
    /// `None` when not browsing.
    pub(super) fn newer(&mut self) -> Option<String> {
        let index = self.browsing?;
        if let Some(entry) = self.entries.get(index + 1) {
            self.browsing = Some(index + 1);
            return Some(entry.clone());
        }
        let draft = std::mem::take(&mut self.draft);
        self.stop_browsing();
        Some(draft)
    }
}
