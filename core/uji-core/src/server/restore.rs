//! `/undo`, `/redo` and the `rewind` operation in a session
//! (docs/checkpoints.md): the plan, a question when files were changed
//! after the turn (overwrite them, or leave them), the restore, and what it
//! did as the command's output. Runs on the worker, between turns, like any
//! other change to the session.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;
use uji_checkpoint::{Applied, ChangeSetKind, FileAction, Plan};
use uji_protocol::frontend::ApprovalDecision;
use uji_protocol::frontend::answers::{CommandOutput, Rewound};

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
    let labels = BTreeMap::from([
        (
            ApprovalDecision::AllowOnce.as_str().to_string(),
            "overwrite them with the checkpoint".to_string(),
        ),
        (
            ApprovalDecision::Deny.as_str().to_string(),
            "leave them as they are".to_string(),
        ),
    ]);
    let question = ApprovalRequest {
        call_id: crate::session::store::new_call_id(),
        tool: "undo".to_string(),
        verb: "Undo".to_string(),
        subject: conflicts.join(", "),
        question: format!(
            "{}: {} changed after the turn (by you or your editor). Overwrite?",
            plan.title,
            if conflicts.len() == 1 {
                "this file was".to_string()
            } else {
                format!("these {} files were", conflicts.len())
            }
        ),
        diff: None,
        args: json!({"files": conflicts}),
        labels,
    };
    matches!(
        approver.ask(question).await,
        Ok(Approval::Allow | Approval::AllowSession)
    )
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
