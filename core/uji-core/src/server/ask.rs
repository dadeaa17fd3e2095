//! `session.ask`: a question from a plugin that is not about a tool call
//! (trusting a project's `.mcp.json`), asked through the same approval
//! question, timeout and withdrawal as a tool call's.

use std::sync::Arc;

use uji_protocol::services::SessionAsk;

use super::Shared;
use crate::gate::approvals::decision_name;
use crate::gate::{ApprovalRequest, Approver};

/// Asks and waits for the answer on the caller's thread (a plugin's own:
/// the session's runtime keeps running meanwhile).
pub(super) fn ask(shared: &Arc<Shared>, request: SessionAsk) -> Result<Option<String>, String> {
    let Some(approver) = shared.approver.clone() else {
        return Err("this session's frontend cannot ask questions (a headless run)".to_string());
    };
    if request.labels.is_empty() {
        return Err("session.ask needs labels: what each decision means".to_string());
    }
    let question = ApprovalRequest {
        call_id: request.id,
        tool: request.tool.clone(),
        verb: request.tool,
        subject: request.subject,
        question: request.question,
        diff: None,
        args: request.details,
        labels: request.labels,
        agent: None,
    };
    // A std channel: the caller may be on any thread, even inside another
    // runtime, where waiting on a tokio one would panic.
    let (tx, rx) = std::sync::mpsc::channel();
    shared.runtime.spawn(async move {
        let answer = approver.ask(question).await.ok();
        let _ = tx.send(decision_name(answer));
    });
    rx.recv()
        .map_err(|_| "the session ended before the question was answered".to_string())
}
