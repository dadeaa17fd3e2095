//! `uji checkpoints` and `uji undo`: a session's checkpoints without a
//! screen (docs/checkpoints.md). The session is opened with its lock, so
//! nothing else changes it meanwhile (a session open in a running uji is
//! refused: undo there with /undo). init.lua runs first, as for a
//! session: its `uji.checkpoint.configure` (limits, `enabled`) holds here
//! too, and its `checkpoint_created` handlers hear of the checkpoints an
//! undo takes.

use std::path::PathBuf;
use std::process::ExitCode;

use uji_checkpoint::{Applied, ChangeSetKind, Checkpoints, FileAction, Plan, RestoreError};
use uji_core::session::store::{SessionFile, Store};
use uji_core::turn::agent::{
    CHECKPOINTS_DISABLED, CheckpointSettings, RestoreRequest, announce_checkpoints,
    describe_restore,
};
use uji_host::Registry;

use crate::out::say;
use crate::run_cmd::fail;

/// What `uji undo` was asked.
pub struct UndoOptions {
    pub id: Option<String>,
    pub turn: Option<u64>,
    /// Take back the last undo instead.
    pub redo: bool,
    pub dry_run: bool,
    pub force: bool,
}

/// A session opened with its checkpoints, and the configuration init.lua
/// set up.
struct Opened {
    session: SessionFile,
    checkpoints: Checkpoints,
    registry: Registry,
}

/// The session (`--id`, else the latest in this directory), opened, and
/// its checkpoints with init.lua's limits; refused when this is not the
/// session's directory, or when init.lua turned checkpoints off.
fn open(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    id: Option<&str>,
) -> Result<Opened, String> {
    let dirs = crate::run_cmd::dirs(config_dir, data_dir)?;
    let cwd = crate::run_cmd::cwd()?;
    // Only init.lua (and plugins not shipped with uji): no wire, tool or
    // frontend is needed to restore files.
    let booted =
        uji_core::boot(uji_core::BootOptions::new(dirs, &cwd).load(uji_core::Load::Providers));
    crate::print_notices(&booted.registry);
    let settings = CheckpointSettings::configured(&booted.registry);
    if !settings.enabled() {
        return Err(CHECKPOINTS_DISABLED.to_string());
    }
    let dirs = booted.dirs;
    let store = Store::new(&dirs.data);
    let id = match id {
        Some(id) => id.to_string(),
        None => {
            store
                .latest_in(&cwd)
                .ok_or("no saved session in this directory; give one with --id (uji list --all shows them)")?
                .id
        }
    };
    let session = store.open(&id).map_err(|e| e.to_string())?;
    let root = PathBuf::from(&session.header.cwd);
    let same = root.canonicalize().is_ok_and(|root| root == cwd);
    if !same {
        return Err(RestoreError::OtherWorkspace {
            expected: session.header.cwd.clone(),
            found: cwd.display().to_string(),
        }
        .to_string());
    }
    let checkpoints =
        Checkpoints::open(&dirs.data, &id, &root, settings.limits()).map_err(|e| e.to_string())?;
    Ok(Opened {
        session,
        checkpoints,
        registry: booted.registry,
    })
}

/// `uji checkpoints`: one line per checkpoint, then the change sets.
pub fn list(config_dir: Option<PathBuf>, data_dir: Option<PathBuf>, id: Option<&str>) -> ExitCode {
    let Opened {
        session,
        checkpoints,
        ..
    } = match open(config_dir, data_dir, id) {
        Ok(opened) => opened,
        Err(e) => return fail(e),
    };
    let list = checkpoints.list();
    if list.is_empty() {
        say!(
            "uji: session {} has no checkpoints (no call changed files yet)",
            session.header.id
        );
        return ExitCode::SUCCESS;
    }
    let mut out = format!(
        "{:>4}  {:<19}  {:>5}  {:>10}  REASON\n",
        "TURN", "TIME (UTC)", "FILES", "STORED"
    );
    for c in list {
        out.push_str(&format!(
            "{:>4}  {}  {:>5}  {:>10}  {}\n",
            c.turn,
            uji_protocol::time::utc(c.at_ms),
            c.changed,
            size(c.stored),
            c.reason
        ));
    }
    for set in checkpoints.change_sets() {
        let what = match set.kind {
            ChangeSetKind::Turn { turn } if !session.in_conversation(turn) => {
                format!("turn {turn} (its message was rewound out of the conversation) changed")
            }
            ref kind => describe(kind),
        };
        out.push_str(&format!("{what}: {}\n", set.paths.join(", ")));
    }
    out.push_str(&format!("stored in all: {}\n", size(checkpoints.stored())));
    print(&out)
}

fn print(text: &str) -> ExitCode {
    match crate::out::print(text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

fn describe(kind: &ChangeSetKind) -> String {
    match kind {
        ChangeSetKind::Turn { turn } => format!("turn {turn} changed"),
        ChangeSetKind::Shell { command } => format!("!{command} changed"),
        ChangeSetKind::Undo { of } => format!("undo (of change {of}) put back"),
        ChangeSetKind::Redo { of } => format!("redo (of change {of}) put back"),
        ChangeSetKind::Rewind { to_turn, .. } => {
            format!("rewind to before turn {to_turn} put back")
        }
    }
}

/// `uji undo`: the last turn's changes (or turn N's) reverted.
pub fn undo(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    options: UndoOptions,
) -> ExitCode {
    let Opened {
        session,
        mut checkpoints,
        registry,
    } = match open(config_dir, data_dir, options.id.as_deref()) {
        Ok(opened) => opened,
        Err(e) => return fail(e),
    };
    let request = match (options.redo, options.turn) {
        (true, _) => RestoreRequest::Redo,
        (false, Some(turn)) => RestoreRequest::Turn(turn),
        (false, None) => RestoreRequest::Undo,
    };
    let plan = request.plan(&checkpoints);
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => return fail(e),
    };
    if options.dry_run || plan.files.is_empty() {
        return print(&show_plan(&plan, options.force));
    }
    // No question: a script runs this (--dry-run shows the plan first);
    // what was done, file by file, is printed after.
    let applied = checkpoints.apply(&plan, session.last_turn(), options.force);
    announce_checkpoints(
        &registry,
        session.id(),
        &checkpoints.take_created(),
        &|notice| say!("uji: {notice}"),
    );
    match applied {
        Ok(applied) => {
            let (text, code) = report(&plan, &applied, &checkpoints);
            let printed = print(&text);
            if printed == ExitCode::SUCCESS {
                code
            } else {
                printed
            }
        }
        Err(e) => fail(e),
    }
}

fn show_plan(plan: &Plan, force: bool) -> String {
    if plan.files.is_empty() {
        return format!("{}: every file is already as it was\n", plan.title);
    }
    let mut out = format!("{}:\n", plan.title);
    for file in &plan.files {
        let action = match &file.action {
            FileAction::Restore => "restore".to_string(),
            FileAction::Recreate => "recreate".to_string(),
            FileAction::Remove => "remove".to_string(),
            FileAction::Cannot { why } => format!("cannot restore ({why})"),
        };
        let conflict = match (&file.conflict, force) {
            (Some(c), false) => format!("  [{}: left as it is; --force overwrites]", c.why),
            (Some(c), true) => format!("  [{}: overwritten]", c.why),
            (None, _) => String::new(),
        };
        out.push_str(&format!("  {action:<9} {}{conflict}\n", file.path));
    }
    out
}

/// What the undo did, file by file, and how to finish it when it left
/// files changed since; failure when it left or could not change any.
fn report(plan: &Plan, applied: &Applied, checkpoints: &Checkpoints) -> (String, ExitCode) {
    let mut out = describe_restore(plan, applied, "`uji undo`", "`uji undo --redo`");
    out.push('\n');
    let changed_since = plan
        .conflicts()
        .any(|f| applied.left.iter().any(|(path, _)| *path == f.path));
    let turn = match plan.kind() {
        ChangeSetKind::Undo { of } => checkpoints
            .change_sets()
            .iter()
            .find(|set| set.id == *of)
            .and_then(|set| match set.kind {
                ChangeSetKind::Turn { turn } => Some(turn),
                _ => None,
            }),
        _ => None,
    };
    if let (true, Some(turn)) = (changed_since, turn) {
        out.push_str(&format!(
            "files changed since the turn were left; `uji undo --turn {turn} --force` overwrites them too\n"
        ));
    }
    let code = if applied.failed.is_empty() && applied.left.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    (out, code)
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}
