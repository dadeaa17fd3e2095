//! `uji doctor`: what a user runs when something is off. Each check is a
//! typed result (ok, warn or problem, with the fix for anything not ok),
//! made from the same pieces the commands use: the plugin search and its
//! load report, the directories, the boot's notices (init.lua errors), the
//! providers' key sources, the MCP plugin's services.
//!
//! `--offline` skips the one model request and does not start MCP servers,
//! so it stays within a few tens of milliseconds (docs/benchmarks.md).

mod dirs;
mod model;
mod plugins;
mod system;
mod terminal;

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// Works, but something is missing or worth knowing.
    Warn,
    /// Something is broken: the fix says what to do.
    Problem,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The part of uji it is about: `plugins`, `config`, `sandbox`…
    pub area: &'static str,
    pub status: Status,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(area: &'static str, text: impl Into<String>) -> Check {
        Check {
            area,
            status: Status::Ok,
            text: text.into(),
            fix: None,
        }
    }

    pub fn warn(area: &'static str, text: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            area,
            status: Status::Warn,
            text: text.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn problem(area: &'static str, text: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            area,
            status: Status::Problem,
            text: text.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Runs every check, prints them, and exits 1 when any found a problem.
pub fn run(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    offline: bool,
    json: bool,
) -> ExitCode {
    let checks = match gather(config_dir, data_dir, offline) {
        Ok(checks) => checks,
        Err(message) => vec![Check::problem(
            "dirs",
            message,
            "set HOME, or pass --config-dir and --data-dir",
        )],
    };
    let text = if json {
        render_json(&checks)
    } else {
        render(&checks)
    };
    if let Err(message) = crate::out::print(&text) {
        crate::out::say!("uji: error: {message}");
        return ExitCode::FAILURE;
    }
    if checks.iter().any(|c| c.status == Status::Problem) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn gather(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    offline: bool,
) -> Result<Vec<Check>, String> {
    let mut checks = vec![Check::ok(
        "version",
        format!("uji {}", uji_host::version_line()),
    )];
    // The directories first: a config directory others can write is
    // worth knowing before anything it holds is believed.
    let dirs = uji_host::paths::Dirs::resolve(config_dir, data_dir, &uji_host::paths::ProcessEnv)
        .map_err(|e| e.to_string())?;
    checks.extend(dirs::check(&dirs));
    let search = uji_host::PluginSearch::for_process(dirs.plugins());
    checks.extend(plugins::check_directories(&search));
    let booted = crate::boot_here(Some(dirs.config.clone()), Some(dirs.data.clone()))?;
    checks.extend(plugins::check_loaded(&booted));
    checks.extend(dirs::check_config(&booted));
    checks.extend(model::check_keys(&booted.providers));
    checks.push(model::check_default(&booted, offline));
    checks.extend(system::check(&booted.registry, offline));
    checks.extend(terminal::check(&terminal::TermEnv::from_process()));
    Ok(checks)
}

fn label(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Warn => "warn",
        Status::Problem => "PROBLEM",
    }
}

/// One line per check, `fix:` lines under those that are not ok, then a
/// count.
pub fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for check in checks {
        out.push_str(&format!(
            "{:<7}  {:<9}  {}\n",
            label(check.status),
            check.area,
            check.text
        ));
        if let Some(fix) = &check.fix {
            out.push_str(&format!("{:<7}  {:<9}  fix: {fix}\n", "", ""));
        }
    }
    let count = |status| checks.iter().filter(|c| c.status == status).count();
    out.push_str(&format!(
        "\n{} problem(s), {} warning(s)\n",
        count(Status::Problem),
        count(Status::Warn)
    ));
    out
}

fn render_json(checks: &[Check]) -> String {
    let doc = serde_json::json!({ "checks": checks });
    format!("{doc}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_prints_its_fix_under_it_and_is_counted() {
        let text = render(&[
            Check::ok("version", "uji 0.1.0"),
            Check::problem("config", "init.lua failed", "fix line 3"),
            Check::warn("git", "no git", "install git"),
        ]);
        assert!(
            text.contains("PROBLEM  config     init.lua failed\n"),
            "{text}"
        );
        assert!(text.contains("fix: fix line 3"), "{text}");
        assert!(text.ends_with("1 problem(s), 1 warning(s)\n"), "{text}");
    }
}
