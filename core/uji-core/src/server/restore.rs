//! `/undo`, `/redo` and the `rewind` operation in a session
//! (docs/checkpoints.md): the plan, a question when files were changed
//! after the turn (overwrite them, or leave them), the restore, and what it
//! did as the command's output. Runs on the worker, between turns, like any
//! other change to the session.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;
use uji_checkpoint::{Applied, ChangeSetKind, FileAction, Plan};
use uji_protocol::frontend::answers::{CommandOutput, Rewound};
use uji_protocol::services::{
    CheckpointEntry, CheckpointList, CheckpointRestore, CheckpointRestored, RestoreAction,
    RestoredFile,
};

use super::{Shared, answered};
use crate::gate::{Approval, ApprovalRequest, Approver};
use crate::turn::agent::{Agent, RestoreRequest};

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
        Some(restore(shared, agent, RestoreRequest::Rewind(turn)).await?)
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

pub(super) async fn run(shared: &Arc<Shared>, agent: &Agent, op_id: &str, request: RestoreRequest) {
    let result = restore(shared, agent, request)
        .await
        .and_then(|output| answered(&CommandOutput { output }));
    shared.reply(Some(op_id), result);
}

async fn restore(
    shared: &Arc<Shared>,
    agent: &Agent,
    request: RestoreRequest,
) -> Result<String, String> {
    let plan = agent.plan_restore(request).await?;
    if plan.files.is_empty() {
        return Ok(format!("{}: every file is already as it was", plan.title));
    }
    let conflicts: Vec<&str> = plan.conflicts().map(|f| f.path.as_str()).collect();
    let overwrite = !conflicts.is_empty() && overwrite_asked(shared, &plan, &conflicts).await;
    let applied = agent.apply_restore(plan.clone(), overwrite).await?;
    Ok(described(&plan, &applied))
}

/// Asks whether files changed after the turn are overwritten too; no
/// frontend to ask, or no answer, leaves them.
async fn overwrite_asked(shared: &Arc<Shared>, plan: &Plan, conflicts: &[&str]) -> bool {
    let Some(approver) = shared.approver.clone() else {
        return false;
    };
    let files = if conflicts.len() == 1 {
        "this file was".to_string()
    } else {
        format!("these {} files were", conflicts.len())
    };
    let question = ApprovalRequest::yes_or_no(
        "undo",
        format!(
            "{}: {files} changed after the turn (by you or your editor). Overwrite?",
            plan.title
        ),
        plan_rows(plan, conflicts),
        "overwrite them with the checkpoint".to_string(),
        "leave them as they are".to_string(),
    );
    matches!(
        approver.ask(question).await,
        Ok(Approval::Allow | Approval::AllowSession)
    )
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

/// The command's output: each file and what happened to it.
fn described(plan: &Plan, applied: &Applied) -> String {
    let mut out = format!("{}:", plan.title);
    for path in &applied.restored {
        let verb = match plan
            .files
            .iter()
            .find(|f| &f.path == path)
            .map(|f| &f.action)
        {
            Some(FileAction::Recreate) => "recreated",
            _ => "restored",
        };
        out.push_str(&format!("\n  {verb} {path}"));
    }
    for path in &applied.removed {
        out.push_str(&format!("\n  removed {path}"));
    }
    for (path, why) in applied.left.iter().chain(&applied.failed) {
        out.push_str(&format!("\n  left {path}: {why}"));
    }
    let back = match plan.kind() {
        ChangeSetKind::Redo { .. } => "/undo",
        _ => "/redo",
    };
    out.push_str(&format!("\n{back} takes this back"));
    out
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
    if shared.busy() {
        return Err("a turn is running; restore when it has ended".to_string());
    }
    let checkpointing = shared.checkpointing.lock().clone().ok_or(NO_SESSION)?;
    let turn = checkpointing.turn();
    checkpointing.blocking(|c| {
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
    })
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
