//! `uji tool list` and `uji tool run`: call a tool by hand, through the same
//! gate (rules, confinement, hooks) a model's call goes through.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use uji_core::{HeadlessApprover, ToolRequest, interrupt_pair};
use uji_host::ProgressSink;

use crate::out::say;

pub(crate) fn boot(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
) -> Result<uji_core::Booted, String> {
    let booted = crate::boot_here(config_dir, data_dir)?;
    for failure in &booted.plugins.failed {
        say!(
            "uji: plugin {} failed to load: {}",
            failure.path.display(),
            failure.reason
        );
    }
    crate::print_notices(&booted.registry);
    Ok(booted)
}

pub fn list(config_dir: Option<PathBuf>, data_dir: Option<PathBuf>) -> Result<(), String> {
    let booted = boot(config_dir, data_dir)?;
    let mut out = String::new();
    for tool in booted.registry.tools() {
        let spec = tool.spec();
        let first_line = spec.description.lines().next().unwrap_or_default();
        let disabled = if booted.gate.is_disabled(&spec.name) {
            " (disabled)"
        } else {
            ""
        };
        let replaces = booted
            .registry
            .replaced_from(&spec.name)
            .map(|old| format!(" (replaces {old})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "{}\t{}\t{}{replaces}{disabled}\t{first_line}\n",
            spec.name,
            spec.policy.map_or("-", |p| p.as_str()),
            tool.plugin()
        ));
    }
    // Servers start with a session, not for a listing: say where their
    // tools are.
    for server in crate::mcp_cmd::not_started(&booted.registry) {
        out.push_str(&format!(
            "{server}__*\t-\tmcp\tthe tools of MCP server {server}, listed once a session starts it (`uji mcp list` starts it)\n"
        ));
    }
    out.push_str(&web_search_hint(&booted.registry));
    crate::out::print(&out)
}

/// The row of `web_search` while it is not offered: the web plugin is
/// there, but init.lua chose no search backend (docs/web.md).
fn web_search_hint(registry: &uji_host::Registry) -> String {
    if registry.tool("web_fetch").is_none() || registry.tool("web_search").is_some() {
        return String::new();
    }
    "web_search\t-\tweb\tnot offered to the model: no search backend is set; add uji.web.search({ backend = \"brave\" }) (or \"searxng\", \"tavily\", \"exa\") to init.lua, see docs/web.md\n".to_string()
}

/// The spill directory of `uji tool run` calls (no session id looks like it).
const TOOL_RUN_SPILL: &str = "tool-run";

pub struct RunOptions {
    pub name: String,
    pub args: Option<String>,
    pub yes: bool,
    pub sandbox: Option<String>,
    pub progress: bool,
}

/// Prints the text the model would read. Exit status: 0 when the tool ran
/// and reported no error, 1 otherwise (refused, failed, bad arguments).
pub fn run(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    options: RunOptions,
) -> Result<bool, String> {
    let args_text = match options.args {
        Some(dash) if dash == "-" => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| format!("cannot read the arguments from stdin: {e}"))?;
            Some(text)
        }
        other => other,
    };
    let args: Value = match args_text {
        None => Value::Object(Default::default()),
        // The text is dropped once parsed: it can be megabytes.
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| format!("the arguments are not valid JSON ({e}); pass one JSON object, e.g. '{{\"path\": \"README.md\"}}'"))?,
    };
    let booted = boot(config_dir, data_dir)?;
    if booted.registry.tool(&options.name).is_none() {
        // Perhaps an MCP server's tool: servers start only when needed.
        crate::mcp_cmd::start(&booted.registry);
    }
    crate::set_sandbox(&booted.gate, options.sandbox.as_deref());
    // No session: long output goes to a spill directory of its own, under
    // the same retention as the sessions' ones.
    booted.gate.set_spill(
        uji_core::session::spills::session_dir(&booted.dirs.data, TOOL_RUN_SPILL),
        booted.providers.secret_values(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let progress: ProgressSink = if options.progress {
        Arc::new(|line: &str| say!("  {line}"))
    } else {
        Arc::new(|_: &str| {})
    };
    let request = ToolRequest {
        call_id: "call_cli".to_string(),
        name: options.name,
        args,
        cwd: booted.cwd.clone(),
        session: None,
    };
    let approver = HeadlessApprover { yes: options.yes };
    let result = runtime.block_on(async {
        let (interrupter, mut interrupt) = interrupt_pair();
        let ctrl_c = async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupter.interrupt();
            }
            std::future::pending::<()>().await;
        };
        tokio::select! {
            result = booted.gate.run(request, &approver, progress, &mut interrupt) => result,
            () = ctrl_c => unreachable_pending(),
        }
    });
    // One call and no session: a command it moved to the background (or
    // started there) ends with it.
    uji_core::server::jobs::stop_all(&booted.registry);
    crate::print_notices(&booted.registry);
    let mut text = result.output.text.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    crate::out::print(&text)?;
    if let Some(summary) = &result.output.summary {
        say!("uji: {summary}");
    }
    Ok(result.ran && !result.output.is_error)
}

/// The Ctrl-C branch never completes: it only triggers the interrupt, and
/// the gate then finishes the call.
fn unreachable_pending() -> uji_core::GateResult {
    unreachable!("the ctrl-c future never resolves")
}
