//! `uji --frontend minimal`: sends the first line of stdin as the prompt,
//! prints what the model streams and each tool call, asks about each
//! approval on stdin (`y` allows the call once; anything else, or no more
//! input, denies it), and quits when the turn has finished.

use std::io::{BufRead, Write};
use std::time::Duration;

use uji_sdk::protocol::frontend::ApprovalDecision::{AllowOnce, Deny};
use uji_sdk::protocol::frontend::{Event, Op};
use uji_sdk::{Frontend, FrontendError, FrontendSession, Host, Plugin};

fn talk(session: &FrontendSession) -> Result<(), FrontendError> {
    let mut input = std::io::stdin().lock().lines().map_while(Result::ok);
    let (text, images) = (input.next().unwrap_or_default(), Vec::new());
    session.submit(&Op::UserMessage { text, images, delivery: Default::default() })?;
    loop {
        match session.next_event(Duration::from_millis(250))? {
            Some(Event::Delta { text }) => print!("{text}"),
            Some(Event::ToolStarted { name, subject, .. }) => println!("\n> {name} {subject}"),
            Some(Event::ApprovalRequest { call_id, question, subject, .. }) => {
                println!("{question} {subject} [y/N]");
                let yes = input.next().is_some_and(|answer| answer.trim() == "y");
                let decision = Some(if yes { AllowOnce } else { Deny });
                session.submit(&Op::Approval { call_id, decision, allow: None, guidance: None })?;
            }
            Some(Event::TurnFinished { error: None, .. }) => {
                println!();
                session.submit(&Op::Shutdown)?;
            }
            // A failed turn, or an operation refused (an empty prompt).
            Some(
                Event::TurnFinished { error: Some(message), .. } | Event::Error { message, .. },
            ) => {
                println!("\nerror: {message}");
                session.submit(&Op::Shutdown)?;
            }
            Some(Event::Closed) => return Ok(()),
            _ => {} // everything else, and Event::Unknown: events newer than this SDK
        }
        let _ = std::io::stdout().flush();
    }
}

struct Minimal;

impl Frontend for Minimal {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        talk(&session).map_err(|e| e.to_string())
    }
}

impl Plugin for Minimal {
    const NAME: &'static str = "minimal-frontend";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    fn init(host: &Host) -> Result<(), String> {
        host.register_frontend("minimal", Minimal)
    }
}

uji_sdk::export_plugin!(Minimal);
