//! Wires (model-API adapters) in plain Rust.

use std::sync::Arc;

use uji_abi::{CancelBox, Fault, ROption, RResult, RStr, RString, WireReplyBox};
use uji_protocol::wire::{Answer, Failure, WireRequest};

use crate::guard::guard;
use crate::tool::{Canceller, cancel_box};

/// Turns a [`WireRequest`] into a call to one kind of model API and streams
/// the answer back through [`Reply`].
///
/// `stream` must return at once; do the I/O on a runtime the plugin owns (a
/// plugin cannot use uji's tokio runtime). Return a [`Canceller`] that drops
/// the connection when the user interrupts.
pub trait Wire: Send + Sync + 'static {
    fn stream(&self, request: WireRequest, reply: Reply) -> Option<Canceller>;
}

/// The plugin's side of one model request. `done`, `fail` and dropping it
/// all end the request; only the first counts.
pub struct Reply {
    handle: Option<WireReplyBox>,
}

impl Reply {
    pub fn text(&self, delta: &str) {
        if let Some(handle) = &self.handle {
            handle.text(RStr::from(delta));
        }
    }

    pub fn reasoning(&self, delta: &str) {
        if let Some(handle) = &self.handle {
            handle.reasoning(RStr::from(delta));
        }
    }

    pub fn done(mut self, answer: Answer) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        match serde_json::to_string(&answer) {
            Ok(json) => handle.done(RString::from(json)),
            Err(e) => handle.fault(Fault::error(format!("answer could not be encoded: {e}"))),
        }
    }

    pub fn fail(mut self, failure: Failure) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        match serde_json::to_string(&failure) {
            Ok(json) => handle.fail(RString::from(json)),
            Err(e) => handle.fault(Fault::error(format!("failure could not be encoded: {e}"))),
        }
    }
}

pub(crate) struct WireAdapter<W: Wire>(pub(crate) Arc<W>);

impl<W: Wire> uji_abi::Wire for WireAdapter<W> {
    fn stream(
        &self,
        request_json: RString,
        reply: WireReplyBox,
    ) -> RResult<ROption<CancelBox>, Fault> {
        let reply = Reply {
            handle: Some(reply),
        };
        let request: WireRequest = match serde_json::from_str(request_json.as_str()) {
            Ok(request) => request,
            Err(e) => {
                reply.fail(Failure::Provider {
                    message: format!("uji sent an invalid wire request: {e}"),
                });
                return RResult::ROk(ROption::RNone);
            }
        };
        // The whole conversation is in both: the text goes before the wire
        // builds its body from the request (a third copy), not after.
        drop(request_json);
        let wire = Arc::clone(&self.0);
        match guard(move || wire.stream(request, reply)) {
            Ok(Some(cancel)) => RResult::ROk(ROption::RSome(cancel_box(cancel))),
            Ok(None) => RResult::ROk(ROption::RNone),
            Err(fault) => RResult::RErr(fault),
        }
    }
}
