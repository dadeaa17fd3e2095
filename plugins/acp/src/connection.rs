//! The ACP connection: the crate's agent side on newline-delimited stdin and
//! stdout, its request handlers forwarding into the one channel the agent
//! loop reads, beside uji's events. Nothing but the crate's frames is ever
//! written to stdout: the editor parses every line of it.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, CancelNotification, InitializeRequest,
    InitializeResponse, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest,
    LoadSessionResponse, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse,
    RequestPermissionResponse, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Lines};
use futures::StreamExt;
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use uji_protocol::frontend::Event;
use uji_sdk::FrontendSession;

use crate::Settings;
use crate::agent::{self, Ops};
use crate::editor_fs::{self, EditorLink};

/// A request from the editor with the responder that answers it.
#[allow(
    clippy::large_enum_variant,
    reason = "built once per editor request and boxed in Input"
)]
pub enum Request {
    Initialize(InitializeRequest, Responder<InitializeResponse>),
    Authenticate(AuthenticateRequest, Responder<AuthenticateResponse>),
    NewSession(NewSessionRequest, Responder<NewSessionResponse>),
    Load(LoadSessionRequest, Responder<LoadSessionResponse>),
    List(ListSessionsRequest, Responder<ListSessionsResponse>),
    Prompt(PromptRequest, Responder<PromptResponse>),
    SetMode(SetSessionModeRequest, Responder<SetSessionModeResponse>),
    SetConfig(
        SetSessionConfigOptionRequest,
        Responder<SetSessionConfigOptionResponse>,
    ),
}

/// What the agent loop waits for.
pub enum Input {
    Request(Box<Request>),
    Cancel(CancelNotification),
    /// The editor's answer to a permission question about a call.
    Permission(
        String,
        Result<RequestPermissionResponse, agent_client_protocol::Error>,
    ),
    /// A request for the editor's files (`fs/read_text_file`,
    /// `fs/write_text_file`) from an after_tool handler waiting for it.
    Editor(editor_fs::Ask),
    Event(Box<Event>),
    StdinClosed,
    SessionEnded(String),
}

pub type Inputs = UnboundedSender<Input>;

fn send(tx: &Inputs, input: Input) {
    // The loop is gone only when the session has ended: nothing to do.
    let _ = tx.unbounded_send(input);
}

/// Registers one typed request handler that forwards into the channel and
/// returns at once, so the crate's dispatch loop never waits on uji.
macro_rules! forward {
    ($builder:expr, $tx:expr, $request:ty, $variant:path) => {{
        let tx = $tx.clone();
        $builder.on_receive_request(
            async move |request: $request, responder, _cx| {
                send(&tx, Input::Request(Box::new($variant(request, responder))));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
    }};
}

/// Serves the editor until stdin closes or the session ends.
pub async fn serve(
    session: Arc<FrontendSession>,
    ops: &dyn Ops,
    settings: Settings,
    editor: Arc<EditorLink>,
) -> Result<(), String> {
    let (tx, rx) = unbounded();
    start_event_reader(session, tx.clone())?;
    let transport = stdio(tx.clone())?;
    let builder = Agent.v1().name("uji");
    let builder = forward!(builder, tx, InitializeRequest, Request::Initialize);
    let builder = forward!(builder, tx, AuthenticateRequest, Request::Authenticate);
    let builder = forward!(builder, tx, NewSessionRequest, Request::NewSession);
    let builder = forward!(builder, tx, LoadSessionRequest, Request::Load);
    let builder = forward!(builder, tx, ListSessionsRequest, Request::List);
    let builder = forward!(builder, tx, PromptRequest, Request::Prompt);
    let builder = forward!(builder, tx, SetSessionModeRequest, Request::SetMode);
    let builder = forward!(
        builder,
        tx,
        SetSessionConfigOptionRequest,
        Request::SetConfig
    );
    let cancel_tx = tx.clone();
    let builder = builder.on_receive_notification(
        async move |cancel: CancelNotification, _cx| {
            send(&cancel_tx, Input::Cancel(cancel));
            Ok(())
        },
        agent_client_protocol::on_receive_notification!(),
    );
    let mut outcome = Ok(());
    let served = builder
        .connect_with(transport, async |cx: ConnectionTo<Client>| {
            outcome = run_loop(cx, rx, tx, ops, settings, editor).await;
            Ok(())
        })
        .await;
    if let Err(e) = served {
        crate::log_warn(&format!("the connection to the editor ended: {e}"));
    }
    outcome
}

async fn run_loop(
    cx: ConnectionTo<Client>,
    mut rx: UnboundedReceiver<Input>,
    tx: Inputs,
    ops: &dyn Ops,
    settings: Settings,
    editor: Arc<EditorLink>,
) -> Result<(), String> {
    let mut agent = agent::Agent::new(cx, ops, tx, settings, editor);
    agent.hello();
    while let Some(input) = rx.next().await {
        match agent.input(input) {
            agent::Flow::Go => {}
            agent::Flow::Done(result) => return result,
        }
    }
    Ok(())
}

fn start_event_reader(session: Arc<FrontendSession>, tx: Inputs) -> Result<(), String> {
    std::thread::Builder::new()
        .name("acp-events".into())
        .spawn(move || {
            loop {
                let input = match session.next_event(Duration::from_secs(1)) {
                    // From a newer uji, or unreadable: skipped.
                    Ok(Some(Event::Unknown) | None) => continue,
                    Ok(Some(event)) => Input::Event(Box::new(event)),
                    Err(e) => Input::SessionEnded(e.to_string()),
                };
                let ended = matches!(input, Input::SessionEnded(_));
                if tx.unbounded_send(input).is_err() || ended {
                    return;
                }
            }
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the event reader: {e}"))
}

/// Lines from stdin (read on a thread: stdin blocks in read(2) with no way
/// to wake it, so the thread is left to end with the process) and lines to
/// stdout, written whole and flushed one by one.
fn stdio(tx: Inputs) -> Result<impl agent_client_protocol::ConnectTo<Agent>, String> {
    let (lines_tx, lines_rx) = unbounded::<std::io::Result<String>>();
    std::thread::Builder::new()
        .name("acp-stdin".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if lines_tx.unbounded_send(Ok(line)).is_err() {
                    return;
                }
            }
            drop(lines_tx);
            send(&tx, Input::StdinClosed);
        })
        .map_err(|e| format!("cannot start the stdin reader: {e}"))?;
    let outgoing = futures::sink::unfold(std::io::stdout(), async |out, mut line: String| {
        // One write per message, newline included: a line written in two
        // parts wakes the editor twice, once for a line it cannot use yet.
        line.push('\n');
        let mut out_lock = out.lock();
        out_lock.write_all(line.as_bytes())?;
        out_lock.flush()?;
        drop(out_lock);
        Ok::<_, std::io::Error>(out)
    });
    Ok(Lines::new(Box::pin(outgoing), lines_rx))
}
