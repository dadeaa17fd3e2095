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

/// The decisions a question about a tool call accepts.
const ANSWERS: [ApprovalDecision; 4] = [
    ApprovalDecision::AllowOnce,
    ApprovalDecision::AllowSession,
    ApprovalDecision::Deny,
    ApprovalDecision::Stop,
];

/// An open question: where its answer goes, and what it accepts.
struct Open {
    answer: oneshot::Sender<Approval>,
    offered: Vec<ApprovalDecision>,
}

/// Asks through the frontend. An unanswered question is refused after
/// [`APPROVAL_TIMEOUT`].
#[derive(Clone)]
pub struct FrontendApprover {
    pending: Arc<Mutex<HashMap<String, Open>>>,
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

    /// Answers the open question of `call_id`; `Err` when there is none,
    /// or when it does not accept `decision` (the question stays open).
    pub fn answer(
        &self,
        call_id: &str,
        decision: ApprovalDecision,
        guidance: Option<String>,
    ) -> Result<(), String> {
        let open = {
            let mut pending = self.pending.lock();
            let Some(open) = pending.get(call_id) else {
                return Err(format!(
                    "no approval question is open for call {call_id:?} (it was answered, timed out or withdrawn)"
                ));
            };
            if !open.offered.contains(&decision) {
                let names: Vec<&str> = open.offered.iter().map(|d| d.as_str()).collect();
                return Err(format!(
                    "the question for call {call_id:?} does not accept {:?}; answer one of {}",
                    decision.as_str(),
                    names.join(", ")
                ));
            }
            pending.remove(call_id)
        };
        let approval = match decision {
            ApprovalDecision::AllowOnce => Approval::Allow,
            ApprovalDecision::AllowSession => Approval::AllowSession,
            ApprovalDecision::Deny => Approval::Deny { guidance },
            ApprovalDecision::Stop => Approval::Stop,
            // No question offers it, so it was refused above.
            ApprovalDecision::Unknown => Approval::Deny { guidance: None },
        };
        if let Some(open) = open {
            let _ = open.answer.send(approval);
        }
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
            let open = pending.lock().remove(&call_id);
            if let Some(open) = open {
                let _ = open.answer.send(Approval::Deny {
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
        Approval::Stop => ApprovalDecision::Stop,
        Approval::Unavailable => return None,
    };
    Some(decision.as_str().to_string())
}

impl Approver for FrontendApprover {
    fn ask(&self, request: ApprovalRequest) -> oneshot::Receiver<Approval> {
        let (tx, rx) = oneshot::channel();
        let answers = offered(&request.labels);
        let open = Open {
            answer: tx,
            offered: answers.clone(),
        };
        self.pending.lock().insert(request.call_id.clone(), open);
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
            agent: request.agent,
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
    fn a_tool_call_question_offers_stop_and_a_labelled_one_only_if_named() {
        assert!(offered(&BTreeMap::new()).contains(&ApprovalDecision::Stop));
        let labels = BTreeMap::from([("allow_once".to_string(), "Trust".to_string())]);
        assert_eq!(offered(&labels), [ApprovalDecision::AllowOnce]);
        assert_eq!(decision_name(Some(Approval::Stop)).as_deref(), Some("stop"));
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
