//! A session as frontends see it: operations in, events out (the
//! submission/event queue split). The agent runs turns one after another on
//! the runtime; interrupts and approval answers are handled while a turn
//! runs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc as tmpsc, oneshot};
use uji_host::SessionPort;
use uji_protocol::session::{Event, Op};

use crate::agent::{Agent, TurnOutcome};
use crate::gate::{Approval, ApprovalRequest, Approver};
use crate::interrupt::{Interrupter, interrupt_pair};

/// Asks through the frontend: an `approval_request` event, answered by an
/// `approval` operation. An unanswered question is refused after 300 s.
#[derive(Clone, Default)]
pub struct FrontendApprover {
    pending: Arc<Mutex<HashMap<String, oneshot::Sender<Approval>>>>,
    events: Arc<Mutex<Option<mpsc::Sender<Event>>>>,
}

/// How long an approval question waits for an answer.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

impl FrontendApprover {
    fn answer(&self, call_id: &str, approval: Approval) -> bool {
        let sender = self.pending.lock().ok().and_then(|mut p| p.remove(call_id));
        match sender {
            Some(tx) => tx.send(approval).is_ok(),
            None => false,
        }
    }
}

impl Approver for FrontendApprover {
    fn ask(&self, request: ApprovalRequest) -> oneshot::Receiver<Approval> {
        let (tx, rx) = oneshot::channel();
        let (inner_tx, inner_rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(request.call_id.clone(), inner_tx);
        }
        let event = Event::ApprovalRequest {
            call_id: request.call_id.clone(),
            tool: request.tool,
            verb: request.verb,
            subject: request.subject,
            question: request.question,
            diff: request.diff,
        };
        if let Ok(events) = self.events.lock()
            && let Some(events) = events.as_ref()
        {
            let _ = events.send(event);
        }
        let pending = Arc::clone(&self.pending);
        let call_id = request.call_id;
        tokio::spawn(async move {
            let answer = match tokio::time::timeout(APPROVAL_TIMEOUT, inner_rx).await {
                Ok(Ok(answer)) => answer,
                _ => {
                    if let Ok(mut pending) = pending.lock() {
                        pending.remove(&call_id);
                    }
                    Approval::Deny {
                        guidance: Some("timed out waiting for confirmation".to_string()),
                    }
                }
            };
            let _ = tx.send(answer);
        });
        rx
    }
}

/// The frontend's handle on a running session.
pub struct ServerPort {
    ops: tmpsc::UnboundedSender<Op>,
    events: Mutex<mpsc::Receiver<Event>>,
}

impl ServerPort {
    pub fn submit_op(&self, op: Op) -> Result<(), String> {
        self.ops
            .send(op)
            .map_err(|_| "the session has ended".to_string())
    }
}

impl SessionPort for ServerPort {
    fn submit(&self, op: Value) -> Result<(), String> {
        let op: Op = serde_json::from_value(op).map_err(|e| format!("invalid operation: {e}"))?;
        self.submit_op(op)
    }

    fn next_event(&self, timeout_ms: u64) -> Result<Option<Value>, String> {
        let events = self
            .events
            .lock()
            .map_err(|_| "the session has ended".to_string())?;
        match events.recv_timeout(Duration::from_millis(timeout_ms)) {
            Ok(event) => serde_json::to_value(&event)
                .map(Some)
                .map_err(|e| e.to_string()),
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err("the session has ended".to_string()),
        }
    }
}

enum Work {
    Turn(String, Vec<uji_protocol::Image>),
    Compact,
}

/// Starts serving `agent` on the current tokio runtime. The returned join
/// handle yields the outcome of the last turn when the session shuts down.
pub fn serve(
    mut agent: Agent,
    approver: Option<FrontendApprover>,
    resumed: bool,
) -> (
    Arc<ServerPort>,
    tokio::task::JoinHandle<Option<TurnOutcome>>,
) {
    let (ops_tx, mut ops_rx) = tmpsc::unbounded_channel::<Op>();
    let (events_tx, events_rx) = mpsc::channel::<Event>();
    let sink_tx = Mutex::new(events_tx.clone());
    agent.events = Arc::new(move |event| {
        if let Ok(tx) = sink_tx.lock() {
            let _ = tx.send(event);
        }
    });
    // The session event comes first, always: before any notice kept while
    // plugins loaded.
    let _ = events_tx.send(Event::Session {
        id: agent.session.id().to_string(),
        resumed,
    });
    // Notices from plugins and hooks (and those kept while plugins loaded)
    // reach the frontend as events.
    let notice_tx = Mutex::new(events_tx.clone());
    agent.registry.set_notice_sink(Arc::new(move |notice| {
        let text = if notice.source == "uji" {
            notice.text.clone()
        } else {
            format!("{}: {}", notice.source, notice.text)
        };
        if let Ok(tx) = notice_tx.lock() {
            let _ = tx.send(Event::Notice { text });
        }
    }));
    if let Some(approver) = &approver {
        if let Ok(mut slot) = approver.events.lock() {
            *slot = Some(events_tx.clone());
        }
        agent.approver = Arc::new(approver.clone());
    }
    install_session_services(&agent, &ops_tx);
    let info = Arc::new(Mutex::new(session_info(&agent)));
    let info_for_service = Arc::clone(&info);
    agent.registry.add_service(
        "session.info",
        Arc::new(move |_plugin, _params| {
            Ok(info_for_service
                .lock()
                .map(|i| i.clone())
                .unwrap_or(Value::Null))
        }),
    );
    let port = Arc::new(ServerPort {
        ops: ops_tx,
        events: Mutex::new(events_rx),
    });

    let current: Arc<Mutex<Option<Interrupter>>> = Arc::new(Mutex::new(None));
    // An interrupt that arrives between two pieces of work applies to the
    // next one; after a shutdown, queued work is dropped.
    let pending_interrupt = Arc::new(AtomicBool::new(false));
    let closing = Arc::new(AtomicBool::new(false));
    let (work_tx, mut work_rx) = tmpsc::unbounded_channel::<Work>();
    let router_current = Arc::clone(&current);
    let router_pending = Arc::clone(&pending_interrupt);
    let router_closing = Arc::clone(&closing);
    let steering = agent.steering.clone();
    let router_steering = steering.clone();
    tokio::spawn(async move {
        while let Some(op) = ops_rx.recv().await {
            match op {
                Op::UserMessage { text, images } => {
                    // During a turn the message steers it; otherwise it
                    // starts the next one.
                    let busy = router_current.lock().map(|c| c.is_some()).unwrap_or(false);
                    if busy {
                        router_steering.push(text, images);
                    } else {
                        let _ = work_tx.send(Work::Turn(text, images));
                    }
                }
                Op::Compact => {
                    let _ = work_tx.send(Work::Compact);
                }
                Op::Interrupt => match router_current.lock() {
                    Ok(current) => match current.as_ref() {
                        Some(interrupter) => interrupter.interrupt(),
                        None => router_pending.store(true, Ordering::SeqCst),
                    },
                    Err(_) => router_pending.store(true, Ordering::SeqCst),
                },
                Op::Approval {
                    call_id,
                    allow,
                    guidance,
                } => {
                    if let Some(approver) = &approver {
                        let answer = if allow {
                            Approval::Allow
                        } else {
                            Approval::Deny { guidance }
                        };
                        approver.answer(&call_id, answer);
                    }
                }
                Op::Shutdown => {
                    router_closing.store(true, Ordering::SeqCst);
                    if let Ok(current) = router_current.lock()
                        && let Some(interrupter) = current.as_ref()
                    {
                        interrupter.interrupt();
                    }
                    break;
                }
            }
        }
        // Dropping work_tx ends the agent loop once queued work is done.
    });

    let events = events_tx;
    let handle = tokio::spawn(async move {
        // Whatever happens to this task (even a panic), the frontend hears
        // that the session ended and stops waiting.
        let _closed = ClosedOnDrop(events.clone());
        let session_event = if resumed {
            "session_resumed"
        } else {
            "session_created"
        };
        agent
            .registry
            .emit(session_event, serde_json::json!({"id": agent.session.id()}));
        let mut last = None;
        while let Some(work) = work_rx.recv().await {
            if closing.load(Ordering::SeqCst) {
                break;
            }
            let (interrupter, mut interrupt) = interrupt_pair();
            if pending_interrupt.swap(false, Ordering::SeqCst) {
                interrupter.interrupt();
            }
            if let Ok(mut slot) = current.lock() {
                *slot = Some(interrupter);
            }
            match work {
                Work::Turn(text, images) => {
                    last = Some(agent.turn(text, images, &mut interrupt).await);
                }
                Work::Compact => {
                    // Asked for: fold everything before the latest exchange.
                    let keep = 0;
                    let text =
                        match crate::compaction::compact(&mut agent, keep, &mut interrupt).await {
                            Ok(count) => format!("compacted {count} earlier messages"),
                            Err(e) => format!("could not compact: {e}"),
                        };
                    let _ = events.send(Event::Notice { text });
                }
            }
            if let Ok(mut slot) = current.lock() {
                *slot = None;
            }
            if let Ok(mut info) = info.lock() {
                *info = session_info(&agent);
            }
            // A message that arrived as the turn was ending starts the next.
            while let Some((text, images)) = steering.pop() {
                if closing.load(Ordering::SeqCst) {
                    break;
                }
                let (interrupter, mut interrupt) = interrupt_pair();
                if let Ok(mut slot) = current.lock() {
                    *slot = Some(interrupter);
                }
                last = Some(agent.turn(text, images, &mut interrupt).await);
                if let Ok(mut slot) = current.lock() {
                    *slot = None;
                }
            }
        }
        last
    });
    (port, handle)
}

/// Sends `Closed` when dropped: at the end of the agent task, or while a
/// panic unwinds it.
struct ClosedOnDrop(mpsc::Sender<Event>);

impl Drop for ClosedOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(Event::Closed);
    }
}

/// What `uji.session.info()` returns.
fn session_info(agent: &Agent) -> Value {
    serde_json::json!({
        "id": agent.session.id(),
        "title": agent.session.header.title,
        "cwd": agent.session.header.cwd,
        "model": agent.settings.model.label(),
        "messages": agent.session.messages.len(),
        "usage": agent.usage,
    })
}

/// `session.submit` (queue a user message) and `quit` for plugins.
fn install_session_services(agent: &Agent, ops: &tmpsc::UnboundedSender<Op>) {
    let submit = ops.clone();
    agent.registry.add_service(
        "session.submit",
        Arc::new(move |_plugin, params| {
            let text = params
                .get("text")
                .and_then(Value::as_str)
                .ok_or("session.submit needs the text to send")?;
            submit
                .send(Op::UserMessage {
                    text: text.to_string(),
                    images: Vec::new(),
                })
                .map_err(|_| "the session has ended".to_string())?;
            Ok(Value::Null)
        }),
    );
    let quit = ops.clone();
    agent.registry.add_service(
        "quit",
        Arc::new(move |_plugin, _params| {
            let _ = quit.send(Op::Shutdown);
            Ok(Value::Null)
        }),
    );
}
