//! Panic containment. Every call the host makes into plugin code runs inside
//! [`guard`], so a panic becomes a [`Fault`] instead of unwinding into an
//! `extern "C"` frame (which aborts the whole process).

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use uji_abi::Fault;

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static GUARD_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Keeps panics caught by [`guard`] off the user's terminal: their message
/// goes into the fault instead. Panics anywhere else still reach the previous
/// hook. (A cdylib links its own std, so in a plugin this hook is the
/// plugin's alone; linked into uji itself it chains to uji's.)
pub(crate) fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARD_DEPTH.with(Cell::get) == 0 {
                previous(info);
                return;
            }
            let message = payload_text(info.payload());
            let text = match info.location() {
                Some(at) => format!("{message} (at {}:{})", at.file(), at.line()),
                None => message,
            };
            LAST_PANIC.with(|slot| *slot.borrow_mut() = Some(text));
        }));
    });
}

struct DepthGuard;

impl DepthGuard {
    fn enter() -> DepthGuard {
        GUARD_DEPTH.with(|d| d.set(d.get() + 1));
        DepthGuard
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        GUARD_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

/// Runs `f`, turning a panic into a [`Fault`] with `panicked = true`.
pub fn guard<R>(f: impl FnOnce() -> R) -> Result<R, Fault> {
    let depth = DepthGuard::enter();
    let result = catch_unwind(AssertUnwindSafe(f));
    drop(depth);
    match result {
        Ok(value) => Ok(value),
        Err(payload) => {
            let recorded = LAST_PANIC.with(|slot| slot.borrow_mut().take());
            let message = recorded.unwrap_or_else(|| payload_text(payload.as_ref()));
            Err(Fault::panic(message))
        }
    }
}

/// Like [`guard`] for a closure that can also fail normally.
pub fn guard_result<R>(f: impl FnOnce() -> Result<R, String>) -> Result<R, Fault> {
    match guard(f) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(message)) => Err(Fault::error(message)),
        Err(fault) => Err(fault),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_becomes_fault() {
        let fault = guard(|| -> u8 { panic!("boom") }).unwrap_err();
        assert!(fault.panicked);
        assert!(fault.message.as_str().contains("boom"), "{}", fault.message);
    }

    #[test]
    fn error_is_not_a_panic() {
        let fault = guard_result(|| -> Result<(), String> { Err("nope".into()) }).unwrap_err();
        assert!(!fault.panicked);
        assert_eq!(fault.message.as_str(), "nope");
    }
}
