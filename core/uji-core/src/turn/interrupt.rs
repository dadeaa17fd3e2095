//! Interrupting a turn: the frontend (a key, SIGINT) triggers it; the stream,
//! an approval wait or a running tool each stop at once.

use tokio::sync::watch;

/// The frontend's side: trigger the interrupt.
#[derive(Debug, Clone)]
pub struct Interrupter(std::sync::Arc<watch::Sender<bool>>);

/// The turn's side: wait for the interrupt.
#[derive(Debug, Clone)]
pub struct Interrupt(Option<watch::Receiver<bool>>);

/// A fresh interrupt pair (one per turn).
pub fn interrupt_pair() -> (Interrupter, Interrupt) {
    let (tx, rx) = watch::channel(false);
    (Interrupter(std::sync::Arc::new(tx)), Interrupt(Some(rx)))
}

impl Interrupter {
    pub fn interrupt(&self) {
        self.0.send_replace(true);
    }
}

impl Interrupt {
    /// True once interrupted.
    pub fn is_set(&self) -> bool {
        self.0.as_ref().is_some_and(|rx| *rx.borrow())
    }

    /// Resolves when interrupted; never, if the interrupter is gone unused.
    pub async fn wait(&mut self) {
        if let Some(rx) = &mut self.0
            && rx.wait_for(|set| *set).await.is_ok()
        {
            return;
        }
        std::future::pending::<()>().await;
    }

    /// An interrupt that never fires (tests, one-off calls).
    pub fn never() -> Interrupt {
        Interrupt(None)
    }
}
