//! When a question may take an answer: only from a key pressed once the
//! question has been on screen for [`GUARD`] and no key has been pressed
//! for [`GUARD`] either. Until then the question is not *ready*: keys go
//! to the draft (the app decides what that means for each widget) and
//! each of them starts the quiet time again, so a question that arrives
//! while someone types never takes their keystrokes. A paste is never an
//! answer: at most text for the question's own input (a filter, the
//! guidance after a denial, a key).
//!
//! Pure: every call is given the time, so the tests drive it with a
//! [`ManualClock`] and the screen with [`SystemClock`].

use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How long a question must have been on screen, and the keyboard quiet,
/// before a key answers it. Long enough that a key already on its way
/// (typing runs at 5–15 keys a second) lands in the draft; short enough
/// not to be felt by someone who reads the question first.
pub const GUARD: Duration = Duration::from_millis(400);

/// What a question that is not ready yet says (its answers are dim).
pub const NOT_READY: &str = "not ready for an answer yet · what you type goes to your draft";

/// Where a key or a paste goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The question is not ready: to the draft, never to the question.
    Draft,
    /// The question is ready: the key may answer it.
    Answer,
    /// The question is ready: pasted text for its own input (never an
    /// answer); a question without one sends it to the draft.
    Text,
}

/// The guard of one question; a new question gets a new one.
#[derive(Debug, Clone)]
pub struct Guard {
    wait: Duration,
    /// When the question was first drawn; None until then.
    shown: Option<Instant>,
    /// The last key or paste that went to the draft.
    last_typed: Option<Instant>,
    /// Whether the last frame drew the question ready.
    shown_ready: bool,
}

impl Default for Guard {
    fn default() -> Guard {
        Guard::new(GUARD)
    }
}

impl Guard {
    pub fn new(wait: Duration) -> Guard {
        Guard {
            wait,
            shown: None,
            last_typed: None,
            shown_ready: false,
        }
    }

    /// The question is drawn at `now`: the first frame starts the clock.
    /// Remembers (and returns) whether this frame shows it ready.
    pub fn frame(&mut self, now: Instant) -> bool {
        self.shown.get_or_insert(now);
        self.shown_ready = self.is_ready(now);
        self.shown_ready
    }

    /// Whether the last frame showed the question ready (how it is drawn).
    pub fn shows_ready(&self) -> bool {
        self.shown_ready
    }

    /// True when the screen shows the question otherwise than it is at
    /// `now` (it became ready, or typing made it wait again): draw again.
    pub fn stale(&self, now: Instant) -> bool {
        self.shown.is_some() && self.is_ready(now) != self.shown_ready
    }

    /// When the question becomes ready (None before it was drawn).
    pub fn ready_at(&self) -> Option<Instant> {
        let shown = self.shown? + self.wait;
        let quiet = self.last_typed.map_or(shown, |at| at + self.wait);
        Some(shown.max(quiet))
    }

    pub fn is_ready(&self, now: Instant) -> bool {
        self.ready_at().is_some_and(|at| now >= at)
    }

    /// A key pressed at `now`: an answer when the question is ready, else
    /// the draft's (and the quiet time starts again).
    pub fn key(&mut self, now: Instant) -> Route {
        if self.is_ready(now) {
            Route::Answer
        } else {
            self.typed(now);
            Route::Draft
        }
    }

    /// A paste at `now`: never an answer.
    pub fn paste(&mut self, now: Instant) -> Route {
        if self.is_ready(now) {
            Route::Text
        } else {
            self.typed(now);
            Route::Draft
        }
    }

    /// Something was typed into the draft at `now` while the question was
    /// open (also a key the ready question had no use for): the user is
    /// typing, so the quiet time starts again.
    pub fn typed(&mut self, now: Instant) {
        self.last_typed = Some(now);
    }
}

/// Where the screen gets the time from.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

/// The real time.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told (tests and benchmarks).
#[derive(Debug)]
pub struct ManualClock(Mutex<Instant>);

impl Default for ManualClock {
    fn default() -> ManualClock {
        ManualClock(Mutex::new(Instant::now()))
    }
}

impl ManualClock {
    pub fn advance(&self, by: Duration) {
        let mut now = self.0.lock();
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.0.lock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// A guard drawn at the clock's start.
    fn drawn(clock: &ManualClock) -> Guard {
        let mut guard = Guard::default();
        guard.frame(clock.now());
        guard
    }

    #[test]
    fn keys_before_the_guard_time_go_to_the_draft_and_after_it_answer() {
        let clock = ManualClock::default();
        let mut guard = Guard::default();
        // Not drawn yet: never ready, however long it waits.
        clock.advance(GUARD * 10);
        assert_eq!(guard.key(clock.now()), Route::Draft);
        guard.frame(clock.now());
        clock.advance(GUARD - MS);
        assert_eq!(guard.key(clock.now()), Route::Draft);
        // That key started the quiet time again.
        clock.advance(GUARD - MS);
        assert_eq!(guard.key(clock.now()), Route::Draft);
        clock.advance(GUARD);
        assert_eq!(guard.key(clock.now()), Route::Answer);
    }

    #[test]
    fn a_quiet_question_is_ready_exactly_at_the_guard_time() {
        let clock = ManualClock::default();
        let guard = drawn(&clock);
        assert_eq!(guard.ready_at(), Some(clock.now() + GUARD));
        clock.advance(GUARD - MS);
        assert!(!guard.is_ready(clock.now()));
        clock.advance(MS);
        assert!(guard.is_ready(clock.now()));
    }

    #[test]
    fn each_key_while_typing_restarts_the_quiet_time() {
        let clock = ManualClock::default();
        let mut guard = drawn(&clock);
        // Someone types "yes please also" at 10 keys a second for 3 s,
        // long past the time the question has been on screen.
        for _ in 0..30 {
            assert_eq!(guard.key(clock.now()), Route::Draft);
            clock.advance(100 * MS);
        }
        assert_eq!(guard.ready_at(), Some(clock.now() - 100 * MS + GUARD));
        assert_eq!(guard.key(clock.now()), Route::Draft);
        clock.advance(GUARD);
        assert_eq!(guard.key(clock.now()), Route::Answer);
    }

    #[test]
    fn a_stray_key_to_the_draft_makes_a_ready_question_wait_again() {
        let clock = ManualClock::default();
        let mut guard = drawn(&clock);
        clock.advance(GUARD);
        assert!(guard.is_ready(clock.now()));
        guard.typed(clock.now());
        assert_eq!(guard.key(clock.now() + MS), Route::Draft);
    }

    #[test]
    fn a_ready_question_stays_ready_for_the_keys_that_answer_it() {
        let clock = ManualClock::default();
        let mut guard = drawn(&clock);
        clock.advance(GUARD);
        // Down, Down, Enter in quick succession.
        for _ in 0..3 {
            assert_eq!(guard.key(clock.now()), Route::Answer);
            clock.advance(20 * MS);
        }
    }

    #[test]
    fn a_paste_never_answers() {
        let clock = ManualClock::default();
        let mut guard = drawn(&clock);
        for _ in 0..20 {
            assert_ne!(guard.paste(clock.now()), Route::Answer);
            clock.advance(GUARD / 3);
        }
        // Pasting kept the question waiting; once quiet, a paste is text.
        assert_eq!(guard.paste(clock.now()), Route::Draft);
        clock.advance(GUARD);
        assert_eq!(guard.paste(clock.now()), Route::Text);
        assert_eq!(guard.key(clock.now()), Route::Answer);
    }

    #[test]
    fn the_screen_is_stale_when_readiness_changed_since_the_last_frame() {
        let clock = ManualClock::default();
        let mut guard = Guard::default();
        assert!(!guard.stale(clock.now()), "nothing drawn, nothing stale");
        assert!(!guard.frame(clock.now()));
        assert!(!guard.shows_ready());
        clock.advance(GUARD);
        assert!(guard.stale(clock.now()));
        assert!(guard.frame(clock.now()));
        assert!(!guard.stale(clock.now()));
        guard.typed(clock.now());
        assert!(guard.stale(clock.now()), "typing makes it wait again");
    }

    #[test]
    fn drawing_again_does_not_restart_the_clock() {
        let clock = ManualClock::default();
        let mut guard = drawn(&clock);
        clock.advance(GUARD / 2);
        guard.frame(clock.now());
        clock.advance(GUARD / 2);
        assert!(guard.is_ready(clock.now()));
    }
}
