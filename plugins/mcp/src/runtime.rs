//! The plugin's own tokio runtime: a cdylib cannot use uji's (it has its own
//! copy of tokio's statics), so async work starts here and comes back to uji
//! through callbacks.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Runtime;

fn runtime() -> Result<&'static Runtime, String> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("uji-mcp")
                .enable_all()
                .build()
                .map_err(|e| format!("could not start the MCP plugin's runtime: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Runs `future` in the background. Fails only when no runtime could start.
pub fn spawn<F>(future: F) -> Result<(), String>
where
    F: Future<Output = ()> + Send + 'static,
{
    runtime()?.spawn(future);
    Ok(())
}
