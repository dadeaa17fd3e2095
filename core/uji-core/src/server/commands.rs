//! Slash commands run through the `run_command` operation: a plugin's
//! command (Lua or native) by name, else one core answers itself.

use std::sync::Arc;

use uji_protocol::frontend::answers::CommandOutput;
use uji_protocol::frontend::{Delivery, Op};

use super::{EFFORTS, Reply, Shared, Work, answered};
use crate::session::service::{Start, builtin_command};
use crate::turn::agent::RestoreRequest;

/// What `/init` asks the model.
const INIT_PROMPT: &str = "Write an AGENTS.md file at the root of this repository for coding agents \
that will work in it. Look around first: the build and test commands (and how to run one test), \
the layout of the code and what each part does, the conventions the code follows (style, naming, \
error handling, tests), and anything a newcomer would get wrong. Keep it short and concrete: \
commands in code blocks, no generic advice. If an AGENTS.md (or CLAUDE.md, or \
.github/copilot-instructions.md) exists, read it and improve it rather than starting over.";

/// What a command's ack carries.
fn output(text: impl Into<String>) -> Result<Reply, String> {
    Reply::answer(&CommandOutput {
        output: text.into(),
    })
}

impl Shared {
    pub(super) fn run_command(
        self: &Arc<Self>,
        op_id: Option<&str>,
        name: &str,
        args: &str,
    ) -> Result<Reply, String> {
        let name = name.trim_start_matches('/');
        if let Some(command) = self.sessions.registry.command(name) {
            // A plugin command may take its time (Lua runs on its own
            // thread): the router goes on meanwhile.
            let shared = Arc::clone(self);
            let (op_id, args) = (op_id.map(str::to_string), args.to_string());
            tokio::task::spawn_blocking(move || {
                let result = command
                    .run(&args)
                    .map_err(|e| e.to_string())
                    .and_then(|output| answered(&CommandOutput { output }));
                shared.reply(op_id.as_deref(), result);
            });
            return Ok(Reply::Later);
        }
        let Some(builtin) = builtin_command(name) else {
            return Err(format!(
                "no command named /{name}; /help lists the commands"
            ));
        };
        self.builtin(op_id, builtin, args.trim())
    }

    fn builtin(
        self: &Arc<Self>,
        op_id: Option<&str>,
        name: &str,
        args: &str,
    ) -> Result<Reply, String> {
        match name {
            "help" => output(self.help()),
            "model" if args.is_empty() => {
                let label = self.control.model().model?.label();
                output(label)
            }
            "model" => {
                let mut words = args.split_whitespace();
                let model = words.next();
                let effort = words.next().map(str::to_string);
                let state = self.set_model(model, effort)?;
                output(state.switched_text())
            }
            "effort" if EFFORTS.contains(&args) => {
                let state = self.set_model(None, Some(args.to_string()))?;
                output(state.switched_text())
            }
            "effort" => Err(format!("/effort takes one of {}", EFFORTS.join(", "))),
            "compact" => self.handle(op_id, Op::Compact),
            "undo" | "redo" => {
                let request = if name == "undo" {
                    RestoreRequest::Undo
                } else {
                    RestoreRequest::Redo
                };
                let op_id = op_id.unwrap_or_default().to_string();
                self.send_work(Work::Restore(op_id, request))?;
                Ok(Reply::Later)
            }
            "new" | "clear" => {
                let title = (!args.is_empty()).then(|| args.to_string());
                self.switch(
                    op_id,
                    Start::New {
                        title,
                        parent: None,
                    },
                )
            }
            "resume" if args.is_empty() => Err(
                "/resume takes a session id (its first 8 characters do); /sessions lists them"
                    .to_string(),
            ),
            "status" => output(self.status_report()),
            "diff" => output(self.diff_report()?),
            "export" => output(self.export(args)?),
            "init" => {
                let op = Op::UserMessage {
                    text: INIT_PROMPT.to_string(),
                    images: Vec::new(),
                    delivery: Delivery::Queue,
                };
                self.handle(None, op)?;
                output("asked the model to write AGENTS.md")
            }
            "resume" => self.switch(op_id, Start::Resume(args.to_string())),
            "sessions" => output(self.session_lines()),
            "title" if args.is_empty() => Err("/title takes the new title".to_string()),
            "title" => {
                let title = args.to_string();
                self.handle(None, Op::SetTitle { title })?;
                output(format!("the session's title is now {args:?}"))
            }
            "quit" => self.handle(op_id, Op::Shutdown),
            _ => Err(format!(
                "no command named /{name}; /help lists the commands"
            )),
        }
    }

    fn help(&self) -> String {
        self.sessions
            .commands()
            .iter()
            .map(|c| format!("/{}  {}", c.name, c.description))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn session_lines(&self) -> String {
        let sessions = self.sessions.list(false);
        if sessions.is_empty() {
            return "no saved sessions in this directory".to_string();
        }
        sessions
            .iter()
            .map(|s| {
                let title = if s.title.is_empty() {
                    "untitled"
                } else {
                    &s.title
                };
                format!("{}  {title}", s.id)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
