//! uji's web tools as a plugin on the public SDK (docs/web.md):
//! `web_fetch` (a page as Markdown) and `web_search` (a search API's
//! results), both over core's `http.*` services, so this plugin links no
//! TLS stack and never holds a search key: core adds it.
//!
//! `web_search` is offered only once init.lua chose a backend: core emits
//! [`SEARCH_CONFIGURED`] then, and the plugin registers the tool.

mod args;
mod backends;
mod fetch;
mod net;
mod page;
mod search;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use uji_sdk::protocol::HookOptions;
use uji_sdk::protocol::web::{SEARCH_CONFIGURED, WebSearchCurrent};
use uji_sdk::{Host, Plugin};

pub use fetch::WebFetch;
pub use search::WebSearchTool;

/// The plugin that registers the web tools.
pub struct WebPlugin;

impl Plugin for WebPlugin {
    const NAME: &'static str = "web";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "uji's web tools: web_fetch, and web_search once a search backend is set";

    fn init(host: &Host) -> Result<(), String> {
        host.register_tool(WebFetch::new(host.clone()))?;
        let offered = Arc::new(AtomicBool::new(false));
        let hook_host = host.clone();
        let hook_offered = Arc::clone(&offered);
        let options = HookOptions {
            name: Some("web".to_string()),
            ..HookOptions::default()
        };
        host.on(SEARCH_CONFIGURED, options, move |_| {
            offer_search(&hook_host, &hook_offered)?;
            Ok(uji_sdk::serde_json::Value::Null)
        })?;
        // A backend set before this plugin started (a plugin loaded late).
        if let Ok(Some(_)) = host.service(&WebSearchCurrent {}) {
            offer_search(host, &offered)?;
        }
        Ok(())
    }
}

/// Registers `web_search` once; it reads the backend at each call, so a
/// later `uji.web.search` changes it without registering again.
fn offer_search(host: &Host, offered: &AtomicBool) -> Result<(), String> {
    if offered.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    host.register_tool(WebSearchTool::new(host.clone()))
}

uji_sdk::export_plugin!(WebPlugin);
