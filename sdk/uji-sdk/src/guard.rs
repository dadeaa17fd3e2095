//! Panic containment. Every call the host makes into plugin code runs inside
//! [`guard`], so a panic becomes a [`Fault`] instead of unwinding into an
//! `extern "C"` frame (which aborts the whole process).

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use uji_abi::Fault;

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Replaces the default panic printer in this plugin's copy of std: a cdylib
/// links its own std, so this never touches uji's hook. The message is kept
/// for the fault instead of being written over the user's terminal.
pub(crate) fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let message = payload_text(info.payload());
            let text = match info.location() {
                Some(at) => format!("{message} (at {}:{})", at.file(), at.line()),
                None => message,
            };
            LAST_PANIC.with(|slot| *slot.borrow_mut() = Some(text));
        }));
    });
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
    match catch_unwind(AssertUnwindSafe(f)) {
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
