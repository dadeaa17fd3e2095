//! A project's `.mcp.json`: its servers run code from the repository, so
//! they start only once the user trusts the file. The decision is asked in
//! the session (`session.ask`, the frontend's approval question) and
//! remembered in `<data>/trust.json` (see [`crate::trust`]); headless, an
//! undecided file is skipped with a notice saying how to trust it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use uji_sdk::LogLevel;
use uji_sdk::protocol::mcp::TrustDecision;
use uji_sdk::services::SessionAsk;

use crate::config::{self, ServerConfig, Transport};
use crate::manager::Manager;
use crate::trust::{Known, ProjectFile, TrustStore};

/// Trusts the project's `.mcp.json` without init.lua or a remembered
/// decision (CI, one-off runs).
pub const TRUST_ENV: &str = "UJI_MCP_TRUST_PROJECT";

/// The decisions the trust question offers, with what each means here.
const TRUST_ALWAYS: &str = "allow_session";
const TRUST_ONCE: &str = "allow_once";
const DISTRUST: &str = "deny";

fn cwd(manager: &Manager) -> PathBuf {
    manager
        .host
        .config("cwd")
        .as_ref()
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

fn store(manager: &Manager) -> Result<TrustStore, String> {
    let data = manager.host.config("data_dir");
    let data = data.as_ref().and_then(Value::as_str).ok_or(
        "uji did not say where its data directory is; pass --data-dir or set UJI_DATA_DIR",
    )?;
    Ok(TrustStore::new(std::path::Path::new(data)))
}

/// The current directory's `.mcp.json`, if any.
pub fn read(manager: &Manager) -> Result<Option<ProjectFile>, String> {
    ProjectFile::read(&cwd(manager))
}

fn servers_of(file: &ProjectFile) -> Result<Vec<ServerConfig>, String> {
    config::parse_project(&file.path.display().to_string(), &file.text).map_err(|e| e.to_string())
}

/// Adds the file's servers; answers their names.
pub fn add_servers(manager: &Manager, file: &ProjectFile) -> Result<Vec<String>, String> {
    let configs = servers_of(file)?;
    let names: Vec<String> = configs.iter().map(|c| c.name.clone()).collect();
    for config in configs {
        manager.add(config)?;
    }
    Ok(names)
}

/// When servers start: a remembered trust applies, an undecided file is
/// asked about (on a thread of its own: the answer may take minutes) or,
/// when nobody can answer, skipped with a notice.
pub fn at_start(manager: &Manager, can_ask: bool) {
    let file = match read(manager) {
        Ok(Some(file)) => file,
        Ok(None) => return,
        Err(e) => return manager.host.notify(&format!("mcp: {e}")),
    };
    let known = store(manager).and_then(|s| s.known(&file).map_err(|e| e.to_string()));
    match known {
        Ok(Known::Trusted) => {
            if let Err(e) = add_servers(manager, &file) {
                manager.host.notify(&format!("mcp: {e}"));
            }
        }
        Ok(Known::Distrusted) => manager.host.log(
            LogLevel::Info,
            &format!(
                "mcp: {} is not trusted (you said so); `uji mcp trust` trusts it",
                file.path.display()
            ),
        ),
        Ok(Known::Undecided) if can_ask => {
            let manager = manager.clone();
            std::thread::spawn(move || ask(&manager, &file));
        }
        Ok(Known::Undecided) => untrusted_notice(manager, &file),
        Err(e) => manager.host.notify(&format!("mcp: {e}")),
    }
}

/// The one-line notice for a file nobody trusted.
fn untrusted_notice(manager: &Manager, file: &ProjectFile) {
    let names = servers_of(file)
        .map(|c| {
            c.iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    manager.host.notify(&format!(
        "mcp: the servers of {} ({names}) are not started: the file is not trusted; \
         trust it with `uji mcp trust`, {TRUST_ENV}=1 or uji.mcp.trust_project() in init.lua",
        file.path.display()
    ));
}

/// What each server would run, for the question.
fn details(configs: &[ServerConfig]) -> Value {
    let rows: serde_json::Map<String, Value> = configs
        .iter()
        .map(|c| {
            let what = match &c.transport {
                Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
                Transport::Http { url, .. } => url.clone(),
            };
            (c.name.clone(), Value::String(what))
        })
        .collect();
    Value::Object(rows)
}

fn question(file: &ProjectFile, configs: &[ServerConfig]) -> SessionAsk {
    let labels = BTreeMap::from([
        (
            TRUST_ALWAYS.to_string(),
            "Trust it: start these servers now and in later sessions (a)".to_string(),
        ),
        (
            TRUST_ONCE.to_string(),
            "Start them for this session only; ask again next time (y)".to_string(),
        ),
        (
            DISTRUST.to_string(),
            "Don't trust it: don't start them, don't ask again until the file changes (n)"
                .to_string(),
        ),
    ]);
    SessionAsk {
        id: "mcp-trust".to_string(),
        tool: "mcp".to_string(),
        // The path is in the question; without a subject a frontend lists
        // the details (each server and what it runs).
        subject: String::new(),
        question: format!(
            "This project's {} starts {} MCP server(s), which run with your permissions. Trust it?",
            file.path.display(),
            configs.len()
        ),
        details: details(configs),
        labels,
    }
}

fn ask(manager: &Manager, file: &ProjectFile) {
    let configs = match servers_of(file) {
        Ok(configs) => configs,
        Err(e) => return manager.host.notify(&format!("mcp: {e}")),
    };
    let answer = match manager.host.service(&question(file, &configs)) {
        Ok(answer) => answer,
        Err(e) => {
            manager
                .host
                .log(LogLevel::Info, &format!("mcp: no trust question: {e}"));
            return untrusted_notice(manager, file);
        }
    };
    let remember =
        |trusted| store(manager).and_then(|s| s.decide(file, trusted).map_err(|e| e.to_string()));
    let outcome = match answer.as_deref() {
        Some(TRUST_ALWAYS) => remember(true).and_then(|()| add_servers(manager, file).map(drop)),
        Some(TRUST_ONCE) => add_servers(manager, file).map(drop),
        Some(DISTRUST) => remember(false),
        // Timed out or withdrawn: asked again next time.
        _ => Ok(()),
    };
    if let Err(e) = outcome {
        manager.host.notify(&format!("mcp: {e}"));
    }
}

/// `uji mcp trust [--revoke]`: remembers trust of the current directory's
/// `.mcp.json` as it is now, or forgets the decision.
pub fn remember(manager: &Manager, revoke: bool) -> Result<TrustDecision, String> {
    let file = read(manager)?.ok_or_else(|| {
        format!(
            "there is no .mcp.json in {}; run this in the project's directory",
            cwd(manager).display()
        )
    })?;
    let store = store(manager)?;
    let path = file.path.display().to_string();
    if revoke {
        let had = store.forget(&file.path).map_err(|e| e.to_string())?;
        return Ok(TrustDecision {
            path,
            file: store.path().display().to_string(),
            trusted: None,
            revoked: Some(had),
        });
    }
    let names: Vec<String> = servers_of(&file)?.into_iter().map(|c| c.name).collect();
    store.decide(&file, true).map_err(|e| e.to_string())?;
    Ok(TrustDecision {
        path,
        file: store.path().display().to_string(),
        trusted: Some(names),
        revoked: None,
    })
}
