//! `/undo`, `/redo` and the `rewind` operation in a session
//! (docs/checkpoints.md): the plan, shown in a question before anything
//! changes (`/undo`, `/redo`: put the files back, or change nothing; with
//! files changed after the turn, also whether to overwrite those), the
//! restore, and what it did as the command's output. A rewind, chosen in
//! its own picker, asks only about files changed after the turn. Runs on
//! the worker, between turns, like any other change to the session.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;
use uji_checkpoint::{Applied, ChangeSetKind, FileAction, Plan};
use uji_protocol::frontend::ApprovalDecision;
use uji_protocol::frontend::answers::{CommandOutput, Rewound};
use uji_protocol::services::{
    CheckpointEntry, CheckpointList, CheckpointRestore, CheckpointRestored, RestoreAction,
    RestoredFile,
};

use super::{Shared, answered};
use crate::gate::{Approval, ApprovalRequest, Approver};
use crate::turn::agent::{Agent, RestoreRequest, describe_restore};

/// What `rewind` goes back on, to before the user's message `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rewind {
    pub to: u64,
    pub conversation: bool,
    pub code: bool,
}

/// `rewind`: the code first (so a refused restore leaves the conversation
/// too), then the conversation.
pub(super) async fn rewind(shared: &Arc<Shared>, agent: &mut Agent, op_id: &str, rewind: Rewind) {
    let result = rewound(shared, agent, rewind)
        .await
        .and_then(|answer| answered(&answer));
    shared.reply(Some(op_id), result);
}

async fn rewound(
    shared: &Arc<Shared>,
    agent: &mut Agent,
    rewind: Rewind,
) -> Result<Rewound, String> {
    let turn = agent.turn_of(rewind.to).ok_or_else(|| {
        format!(
            "message {} is not one of your messages in this conversation; pick one from the session's history",
            rewind.to
        )
    })?;
    let restored = if rewind.code {
        let rewind = RestoreRequest::Rewind(turn);
        Some(restore(shared, agent, rewind, Ask::OnConflict).await?)
    } else {
        None
    };
    let (dropped, text) = if rewind.conversation {
        let (dropped, text) = agent.rewind(rewind.to)?;
        super::configured(shared, agent, true);
        (dropped as u64, text)
    } else {
        (0, agent.user_text(rewind.to).unwrap_or_default())
    };
    Ok(Rewound {
        dropped,
        text,
        restored,
    })
}

/// `/undo`, `/redo`: the plan is shown and nothing changes without a yes.
pub(super) async fn run(shared: &Arc<Shared>, agent: &Agent, op_id: &str, request: RestoreRequest) {
    let result = restore(shared, agent, request, Ask::First)
        .await
        .and_then(|output| answered(&CommandOutput { output }));
    shared.reply(Some(op_id), result);
}

/// When the person is asked before a restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// Always, with the whole plan (`/undo`, `/redo`).
    First,
    /// Only whether files changed after the turn are overwritten (a
    /// rewind, already chosen in its picker).
    OnConflict,
}

/// What the person said to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Go {
    /// Put the files back; those changed after the turn too when
    /// `overwrite`.
    Apply { overwrite: bool },
    /// Change nothing.
    Nothing,
}

async fn restore(
    shared: &Arc<Shared>,
    agent: &Agent,
    request: RestoreRequest,
    ask: Ask,
) -> Result<String, String> {
    let plan = agent.plan_restore(request).await?;
    if plan.files.is_empty() {
        return Ok(format!("{}: every file is already as it was", plan.title));
    }
    let overwrite = match asked(shared, &plan, ask).await {
        Go::Apply { overwrite } => overwrite,
        Go::Nothing => return Ok(format!("{}: nothing was changed", plan.title)),
    };
    // What the person agreed to is this plan. A file changed while the
    // question was open (the editor, a !cmd, a background job) would be
    // overwritten unseen, so a plan that is no longer the same is not
    // applied.
    if agent.plan_restore(request).await? != plan {
        return Ok(format!(
            "{}: files changed while you were asked, so nothing was changed; ask again to see the plan as it is now",
            plan.title
        ));
    }
    let applied = agent.apply_restore(plan.clone(), overwrite).await?;
    Ok(describe_restore(&plan, &applied, "/undo", "/redo"))
}

/// Asks what `ask` says. Without a frontend that answers questions, the
/// files are put back and those changed after the turn left; a question
/// nobody answers (or denied) changes nothing, or for a rewind leaves
/// those files.
async fn asked(shared: &Arc<Shared>, plan: &Plan, ask: Ask) -> Go {
    let conflicts: Vec<&str> = plan.conflicts().map(|f| f.path.as_str()).collect();
    let leave = Go::Apply { overwrite: false };
    let Some(approver) = shared.approver.clone() else {
        return leave;
    };
    if ask == Ask::OnConflict && conflicts.is_empty() {
        return leave;
    }
    let tool = match plan.kind() {
        ChangeSetKind::Redo { .. } => "redo",
        ChangeSetKind::Rewind { .. } => "rewind",
        _ => "undo",
    };
    let rows = plan_rows(plan, &conflicts);
    let changed = match conflicts.len() {
        0 => String::new(),
        1 => " 1 file was changed after the turn (by you or your editor).".to_string(),
        n => format!(" {n} files were changed after the turn (by you or your editor)."),
    };
    let question = match (ask, conflicts.is_empty()) {
        (Ask::First, true) => ApprovalRequest::yes_or_no(
            tool,
            format!("{}: put these files back as listed?", plan.title),
            rows,
            "put them back".to_string(),
            "change nothing".to_string(),
        ),
        (Ask::First, false) => ApprovalRequest::choice(
            tool,
            format!("{}: put these files back as listed?{changed}", plan.title),
            rows,
            [
                (
                    ApprovalDecision::AllowOnce,
                    "put back the others, leave the changed ones as they are".to_string(),
                ),
                (
                    ApprovalDecision::AllowSession,
                    "put back every file, overwriting the changed ones".to_string(),
                ),
                (ApprovalDecision::Deny, "change nothing".to_string()),
            ],
        ),
        (Ask::OnConflict, _) => ApprovalRequest::yes_or_no(
            tool,
            format!("{}:{changed} Overwrite?", plan.title),
            rows,
            "overwrite them with the checkpoint".to_string(),
            "leave them as they are".to_string(),
        ),
    };
    match (ask, approver.ask(question).await) {
        (Ask::First, Ok(Approval::Allow)) => Go::Apply { overwrite: false },
        (Ask::First, Ok(Approval::AllowSession)) => Go::Apply { overwrite: true },
        (Ask::First, _) => Go::Nothing,
        (Ask::OnConflict, Ok(Approval::Allow | Approval::AllowSession)) => {
            Go::Apply { overwrite: true }
        }
        (Ask::OnConflict, _) => leave,
    }
}

/// What the restore will do, as the question's detail rows: the whole
/// plan is shown before anything changes.
fn plan_rows(plan: &Plan, conflicts: &[&str]) -> serde_json::Value {
    let mut rows: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    rows.insert("changed since", conflicts.to_vec());
    for file in &plan.files {
        let row = match file.action {
            FileAction::Restore => "restores",
            FileAction::Recreate => "recreates",
            FileAction::Remove => "removes",
            FileAction::Cannot { .. } => "cannot restore",
        };
        rows.entry(row).or_default().push(&file.path);
    }
    let rows: serde_json::Map<String, serde_json::Value> = rows
        .into_iter()
        .map(|(row, paths)| (row.to_string(), json!(paths.join(", "))))
        .collect();
    serde_json::Value::Object(rows)
}

/// `checkpoint.list` (`uji.checkpoint.list()`).
pub(super) fn list(
    shared: &Arc<Shared>,
    _: CheckpointList,
) -> Result<Vec<CheckpointEntry>, String> {
    let checkpointing = shared.checkpointing.lock().clone().ok_or(NO_SESSION)?;
    let list = checkpointing.blocking(|c| Ok(c.list()))?;
    Ok(list
        .into_iter()
        .map(|c| CheckpointEntry {
            id: c.id,
            turn: c.turn,
            at_ms: c.at_ms,
            reason: c.reason,
            changed: c.changed as u64,
            stored: c.stored,
            skipped: c.skipped as u64,
        })
        .collect())
}

const NO_SESSION: &str = "no session is running, so there are no checkpoints";

/// `checkpoint.restore` (`uji.checkpoint.restore{...}`): between turns
/// only, no question asked (`overwrite` decides).
pub(super) fn service(
    shared: &Arc<Shared>,
    request: CheckpointRestore,
) -> Result<CheckpointRestored, String> {
    let what = match (request.undo, request.redo, request.turn, request.rewind) {
        (true, false, None, None) => RestoreRequest::Undo,
        (false, true, None, None) => RestoreRequest::Redo,
        (false, false, Some(turn), None) => RestoreRequest::Turn(turn),
        (false, false, None, Some(turn)) => RestoreRequest::Rewind(turn),
        _ => {
            return Err(
                "say what to restore with exactly one of undo = true, redo = true, turn = N, rewind = N"
                    .to_string(),
            );
        }
    };
    let checkpointing = shared.checkpointing.lock().clone().ok_or(NO_SESSION)?;
    let turn = checkpointing.turn();
    // Held while restoring: the worker marks a turn as running under this
    // lock, so none starts between the check and the last file put back.
    let current = shared.current.lock();
    if current.is_some() {
        return Err("a turn is running; restore when it has ended".to_string());
    }
    let (result, created) = checkpointing.blocking_unannounced(|c| {
        let plan = what.plan(c).map_err(|e| e.to_string())?;
        let applied = if request.dry_run || plan.files.is_empty() {
            None
        } else {
            Some(
                c.apply(&plan, turn, request.overwrite)
                    .map_err(|e| e.to_string())?,
            )
        };
        Ok(restored(&plan, applied.as_ref()))
    });
    // Handlers hear of the checkpoints once the lock is let go: one may
    // ask whether a turn runs.
    drop(current);
    checkpointing.announce(&created);
    result
}

fn restored(plan: &Plan, applied: Option<&Applied>) -> CheckpointRestored {
    let files = plan
        .files
        .iter()
        .map(|f| {
            let (action, why) = match &f.action {
                FileAction::Restore => (RestoreAction::Restore, None),
                FileAction::Recreate => (RestoreAction::Recreate, None),
                FileAction::Remove => (RestoreAction::Remove, None),
                FileAction::Cannot { why } => (RestoreAction::Cannot, Some(why.clone())),
            };
            let done = applied
                .is_some_and(|a| a.restored.contains(&f.path) || a.removed.contains(&f.path));
            let failed = applied.and_then(|a| {
                a.failed
                    .iter()
                    .find(|(path, _)| path == &f.path)
                    .map(|(_, why)| why.clone())
            });
            RestoredFile {
                path: f.path.clone(),
                action,
                why,
                conflict: f.conflict.as_ref().map(|c| c.why.clone()),
                done,
                failed,
            }
        })
        .collect();
    CheckpointRestored {
        title: plan.title.clone(),
        files,
        applied: applied.is_some(),
    }
}
