//! Host services, typed: every request a plugin can send with
//! [`Host::service`](crate::Host::service), what it answers, and the error
//! a call can end with.
//!
//! ```no_run
//! use uji_sdk::services::{ModelInfo, Provider, ToolDisable};
//!
//! fn init(host: &uji_sdk::Host) -> Result<(), String> {
//!     host.add_provider(Provider::new("echo", "echo").model(ModelInfo::new("parrot")))?;
//!     host.service(&ToolDisable { names: vec!["write_file".into()] })?;
//!     Ok(())
//! }
//! ```

pub use uji_protocol::services::*;

/// Why a host service call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// This uji does not offer the service (an older uji, or a session
    /// service called while no session runs).
    #[error("{method} is not available: {message}")]
    Unavailable {
        method: &'static str,
        message: String,
    },
    /// The service refused the request; `message` says why.
    #[error("{method}: {message}")]
    Failed {
        method: &'static str,
        message: String,
    },
    /// The request or the answer could not be encoded or decoded.
    #[error("{method}: {message}")]
    Encoding {
        method: &'static str,
        message: String,
    },
}

impl ServiceError {
    /// Sorts the host's error message for `method`.
    pub(crate) fn from_host(method: &'static str, message: String) -> ServiceError {
        if message.starts_with(NO_SUCH_SERVICE) {
            ServiceError::Unavailable { method, message }
        } else {
            ServiceError::Failed { method, message }
        }
    }

    /// The host's own message, without the method name.
    pub fn message(&self) -> &str {
        match self {
            ServiceError::Unavailable { message, .. }
            | ServiceError::Failed { message, .. }
            | ServiceError::Encoding { message, .. } => message,
        }
    }
}

/// So `?` works in a plugin's `init`, which returns `Result<(), String>`.
impl From<ServiceError> for String {
    fn from(error: ServiceError) -> String {
        error.to_string()
    }
}
