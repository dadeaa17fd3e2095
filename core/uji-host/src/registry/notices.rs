//! Notices for the user: to the sink a frontend installed, else kept until
//! one is.

use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use uji_protocol::frontend::NoticeLevel;

/// A notice for the user, from a plugin or from the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The plugin that sent it, or `uji`.
    pub source: String,
    pub text: String,
    /// Plugins' notices are `Info`; uji raises others itself (a config
    /// that failed to load is an `Error`).
    pub level: NoticeLevel,
}

pub type NoticeSink = Arc<dyn Fn(&Notice) + Send + Sync>;

#[derive(Default)]
pub(super) struct Notices {
    kept: Mutex<Vec<Notice>>,
    sink: RwLock<Option<NoticeSink>>,
}

impl Notices {
    pub fn notify(&self, level: NoticeLevel, source: &str, text: &str) {
        // Kept in the log too: a frontend may show a notice only briefly.
        match level {
            NoticeLevel::Error => tracing::error!(source, "notice: {text}"),
            NoticeLevel::Warn => tracing::warn!(source, "notice: {text}"),
            NoticeLevel::Info => tracing::info!(source, "notice: {text}"),
        }
        let notice = Notice {
            source: source.to_string(),
            text: text.to_string(),
            level,
        };
        let sink = self.sink.read().clone();
        match sink {
            Some(sink) => sink(&notice),
            None => self.kept.lock().push(notice),
        }
    }

    /// Routes notices to `sink`, first delivering the ones kept so far.
    pub fn set_sink(&self, sink: NoticeSink) {
        for notice in &self.take() {
            sink(notice);
        }
        *self.sink.write() = Some(sink);
    }

    /// Notices kept because no sink was installed.
    pub fn take(&self) -> Vec<Notice> {
        std::mem::take(&mut *self.kept.lock())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_thread_that_panicked_holding_the_notices_does_not_lose_later_ones() {
        let notices = Arc::new(Notices::default());
        let holder = Arc::clone(&notices);
        let panicked = std::thread::spawn(move || {
            let _held = holder.kept.lock();
            panic!("a plugin thread panics with the lock held");
        })
        .join();
        assert!(panicked.is_err());
        notices.notify(NoticeLevel::Warn, "uji", "kept");
        let kept = notices.take();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].text, "kept");
    }

    #[test]
    fn notices_kept_before_a_sink_reach_it_first_and_later_ones_go_straight_to_it() {
        let notices = Notices::default();
        notices.notify(NoticeLevel::Info, "a", "early");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        notices.set_sink(Arc::new(move |n: &Notice| {
            record.lock().push(n.text.clone())
        }));
        notices.notify(NoticeLevel::Info, "a", "late");
        assert_eq!(*seen.lock(), ["early", "late"]);
        assert!(notices.take().is_empty());
    }
}
