//! Approval questions asked through a frontend: an `approval_request`
//! event, answered by an `approval` operation, and an `approval_resolved`
//! event however the question ended (answered, timed out, withdrawn).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use tokio::sync::oneshot;
use uji_protocol::frontend::{ApprovalDecision, Event, Resolution};

use crate::gate::{Approval, ApprovalRequest, Approver};
use crate::turn::control::EventSink;

/// How long an approval question waits for an answer.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

/// What an unanswered question tells the model.
const TIMED_OUT: &str = "timed out waiting for confirmation";

/// The decisions every question accepts.
const ANSWERS: [ApprovalDecision; 3] = [
    ApprovalDecision::AllowOnce,
    ApprovalDecision::AllowSession,
    ApprovalDecision::Deny,
];

/// Asks through the frontend. An unanswered question is refused after
/// [`APPROVAL_TIMEOUT`].
#[derive(Clone)]
pub struct FrontendApprover {
    pending: Arc<Mutex<HashMap<String, oneshot::Sender<Approval>>>>,
    events: EventSink,
    timeout: Duration,
}

impl FrontendApprover {
    pub fn new(events: EventSink) -> FrontendApprover {
        FrontendApprover {
            pending: Arc::default(),
            events,
            timeout: APPROVAL_TIMEOUT,
        }
    }

    /// Answers the open question of `call_id`; `Err` when there is none.
    pub fn answer(
        &self,
        call_id: &str,
        decision: ApprovalDecision,
        guidance: Option<String>,
    ) -> Result<(), String> {
        let sender = self.pending.lock().remove(call_id);
        let Some(sender) = sender else {
            return Err(format!(
                "no approval question is open for call {call_id:?} (it was answered, timed out or withdrawn)"
            ));
        };
        let approval = match decision {
            ApprovalDecision::AllowOnce => Approval::Allow,
            ApprovalDecision::AllowSession => Approval::AllowSession,
            ApprovalDecision::Deny => Approval::Deny { guidance },
        };
        let _ = sender.send(approval);
        (self.events)(Event::ApprovalResolved {
            call_id: call_id.to_string(),
            resolution: Resolution::Answered,
            decision: Some(decision),
        });
        Ok(())
    }

    /// Withdraws every open question (an interrupt or a shutdown). Call it
    /// after the interrupt is set: the gate then reports the call as
    /// interrupted, not denied.
    pub fn withdraw_all(&self) {
        let withdrawn: Vec<String> = self.pending.lock().drain().map(|(id, _)| id).collect();
        for call_id in withdrawn {
            (self.events)(Event::ApprovalResolved {
                call_id,
                resolution: Resolution::Withdrawn,
                decision: None,
            });
        }
    }

    /// Denies the question after the timeout, unless it ended before.
    fn expire_later(&self, call_id: String) {
        let pending = Arc::clone(&self.pending);
        let events = Arc::clone(&self.events);
        let timeout = self.timeout;
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            let sender = pending.lock().remove(&call_id);
            if let Some(sender) = sender {
                let _ = sender.send(Approval::Deny {
                    guidance: Some(TIMED_OUT.to_string()),
                });
                events(Event::ApprovalResolved {
                    call_id,
                    resolution: Resolution::TimedOut,
                    decision: None,
                });
            }
        });
    }
}

/// The decisions a question offers: those its labels name, else all.
fn offered(labels: &BTreeMap<String, String>) -> Vec<ApprovalDecision> {
    if labels.is_empty() {
        return ANSWERS.to_vec();
    }
    ANSWERS
        .into_iter()
        .filter(|d| labels.contains_key(d.as_str()))
        .collect()
}

/// What a question that is not about a tool call (`session.ask`) was
/// answered: the decision's name, or None when it timed out or was
/// withdrawn.
pub fn decision_name(approval: Option<Approval>) -> Option<String> {
    let decision = match approval? {
        Approval::Allow => ApprovalDecision::AllowOnce,
        Approval::AllowSession => ApprovalDecision::AllowSession,
        Approval::Deny { guidance } if guidance.as_deref() == Some(TIMED_OUT) => return None,
        Approval::Deny { .. } => ApprovalDecision::Deny,
        Approval::Unavailable => return None,
    };
    Some(decision.as_str().to_string())
}

impl Approver for FrontendApprover {
    fn ask(&self, request: ApprovalRequest) -> oneshot::Receiver<Approval> {
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(request.call_id.clone(), tx);
        let answers = offered(&request.labels);
        (self.events)(Event::ApprovalRequest {
            call_id: request.call_id.clone(),
            tool: request.tool,
            verb: request.verb,
            subject: request.subject,
            question: request.question,
            diff: request.diff,
            args: request.args,
            answers,
            labels: request.labels,
        });
        self.expire_later(request.call_id);
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_offers_the_decisions_its_labels_name() {
        let labels = BTreeMap::from([
            ("allow_session".to_string(), "Trust it".to_string()),
            ("deny".to_string(), "Don't".to_string()),
        ]);
        assert_eq!(
            offered(&labels),
            [ApprovalDecision::AllowSession, ApprovalDecision::Deny]
        );
        assert_eq!(offered(&BTreeMap::new()), ANSWERS.to_vec());
    }

    #[test]
    fn a_timed_out_or_withdrawn_question_has_no_decision() {
        let timed_out = Approval::Deny {
            guidance: Some(TIMED_OUT.to_string()),
        };
        assert_eq!(decision_name(Some(timed_out)), None);
        assert_eq!(decision_name(None), None);
        let denied = Approval::Deny { guidance: None };
        assert_eq!(decision_name(Some(denied)).as_deref(), Some("deny"));
        assert_eq!(
            decision_name(Some(Approval::AllowSession)).as_deref(),
            Some("allow_session")
        );
    }
}
