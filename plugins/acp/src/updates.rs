//! uji's frontend events as ACP `session/update` payloads. Pure functions:
//! the state they need (the session directory, a file's text before an
//! edit) is passed in.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use uji_protocol::ApprovalMode;
use uji_protocol::frontend::{ApprovalDecision, CommandInfo, ModelEntry, ModelState};
use uji_protocol::session::{MessageBody, StoredMessage};
use uji_protocol::wire::ToolCallRequest;

/// ACP's tool kind for a uji tool, so editors pick the right icon and
/// know which calls change files.
pub fn kind(tool: &str) -> &'static str {
    match tool {
        "read_file" => "read",
        "edit_file" | "write_file" => "edit",
        "run_command" => "execute",
        t if t.contains("grep") || t.contains("glob") || t.contains("search") => "search",
        t if t.contains("fetch") => "fetch",
        _ => "other",
    }
}

/// True for the tools whose subject is a path.
pub fn touches_file(tool: &str) -> bool {
    matches!(kind(tool), "read" | "edit")
}

/// The title an editor shows for a call: uji's verb and subject.
pub fn title(verb: &str, subject: &str) -> String {
    match (verb.is_empty(), subject.is_empty()) {
        (false, false) => format!("{verb} {subject}"),
        (false, true) => verb.to_string(),
        _ => subject.to_string(),
    }
}

/// The absolute path of a tool's subject, for `locations` and diffs.
pub fn absolute(cwd: &str, subject: &str) -> String {
    Path::new(cwd).join(subject).to_string_lossy().into_owned()
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

pub fn message_chunk(text: &str) -> Value {
    chunk("agent_message_chunk", text)
}

pub fn thought_chunk(text: &str) -> Value {
    chunk("agent_thought_chunk", text)
}

pub fn user_chunk(text: &str) -> Value {
    chunk("user_message_chunk", text)
}

/// The `tool_call` update for a decided call (`tool_started`).
pub fn tool_call(call_id: &str, tool: &str, verb: &str, subject: &str, cwd: &str) -> Value {
    let locations = if touches_file(tool) && !subject.is_empty() {
        json!([{"path": absolute(cwd, subject)}])
    } else {
        json!([])
    };
    json!({
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": title(verb, subject),
        "kind": kind(tool),
        "status": "pending",
        "locations": locations,
        "rawInput": {"subject": subject},
    })
}

/// The answers a permission question offers: the usual three, or, for a
/// question that names its answers (`labels`, by decision), those it
/// offers, in its words. An option's id is its decision's name.
pub fn permission_options(
    answers: &[ApprovalDecision],
    labels: &BTreeMap<String, String>,
) -> Value {
    if labels.is_empty() {
        return json!([
            {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "allow_session", "name": "Allow for this session", "kind": "allow_always"},
            {"optionId": "deny", "name": "Reject", "kind": "reject_once"},
        ]);
    }
    let options: Vec<Value> = answers
        .iter()
        .filter_map(|decision| {
            let name = labels.get(decision.as_str())?;
            let kind = match decision {
                ApprovalDecision::AllowOnce => "allow_once",
                ApprovalDecision::AllowSession => "allow_always",
                ApprovalDecision::Deny | ApprovalDecision::Stop | ApprovalDecision::Unknown => {
                    "reject_once"
                }
            };
            Some(json!({"optionId": decision.as_str(), "name": name, "kind": kind}))
        })
        .collect();
    Value::Array(options)
}

/// The decision an editor's chosen option stands for (its id is the
/// decision's name); one uji does not know is a denial.
pub fn chosen_decision(option_id: &str) -> ApprovalDecision {
    match serde_json::from_value(Value::String(option_id.to_string())) {
        Ok(ApprovalDecision::Unknown) | Err(_) => ApprovalDecision::Deny,
        Ok(decision) => decision,
    }
}

pub fn status(call_id: &str, status: &str) -> Value {
    json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status})
}

/// The `tool_call_update` for a finished call: its summary, and for an
/// edit the whole file before and after, as ACP's diff wants.
pub fn finished(call_id: &str, summary: &str, is_error: bool, diff: Option<Value>) -> Value {
    let mut content =
        vec![json!({"type": "content", "content": {"type": "text", "text": summary}})];
    content.extend(diff);
    json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": if is_error { "failed" } else { "completed" },
        "content": content,
    })
}

/// How much of a command's result the editor is shown: its end, which says
/// how it finished. The model's result is bounded already; this keeps the
/// editor's panel small too.
const SHOWN_OUTPUT: usize = 64 * 1024;

/// Text as a Markdown code block, shown verbatim: the fence is longer than
/// any run of backticks inside.
pub fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}\n{}\n{fence}", text.trim_end_matches('\n'))
}

fn text_content(text: &str) -> Value {
    json!({"type": "content", "content": {"type": "text", "text": text}})
}

/// A running command's latest output line (uji paces them to about ten a
/// second), as the call's content while it runs.
pub fn progress(call_id: &str, line: &str) -> Value {
    json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": "in_progress",
        "content": [text_content(&fenced(line))],
    })
}

/// A finished command's summary and output (its end, when long), so the
/// editor shows what ran and what it printed.
pub fn command_output(call_id: &str, summary: &str, output: &str, is_error: bool) -> Value {
    let mut start = output.len().saturating_sub(SHOWN_OUTPUT);
    while !output.is_char_boundary(start) {
        start += 1;
    }
    let shown = if start > 0 {
        format!("[… {start} bytes before]\n{}", &output[start..])
    } else {
        output.to_string()
    };
    let mut content = Vec::new();
    if !summary.is_empty() {
        content.push(text_content(summary));
    }
    content.push(text_content(&fenced(&shown)));
    json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": if is_error { "failed" } else { "completed" },
        "content": content,
    })
}

pub fn diff(path: &str, old: Option<&str>, new: &str) -> Value {
    json!({"type": "diff", "path": path, "oldText": old, "newText": new})
}

/// How full the context is: tokens the last request read, of the window.
pub fn usage(used: u64, size: u64) -> Value {
    json!({"sessionUpdate": "usage_update", "used": used, "size": size})
}

/// The slash commands as ACP's `available_commands_update`.
pub fn commands(commands: &[CommandInfo]) -> Value {
    let list: Vec<Value> = commands
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "description": c.description,
                "input": {"hint": "arguments"},
            })
        })
        .collect();
    json!({"sessionUpdate": "available_commands_update", "availableCommands": list})
}

pub fn mode(mode: &str) -> Value {
    json!({"sessionUpdate": "current_mode_update", "currentModeId": mode})
}

/// The ACP id of each approval mode (the ids Claude Code's ACP agent uses).
const MODE_IDS: [(ApprovalMode, &str); 3] = [
    (ApprovalMode::Ask, "default"),
    (ApprovalMode::AcceptEdits, "acceptEdits"),
    (ApprovalMode::Plan, "plan"),
];

/// The ACP id of `mode` (a mode this plugin does not know reads as default).
pub fn mode_id(mode: ApprovalMode) -> &'static str {
    MODE_IDS
        .iter()
        .find(|(m, _)| *m == mode)
        .map_or("default", |(_, id)| id)
}

/// The approval mode of an ACP id.
pub fn mode_of(id: &str) -> Option<ApprovalMode> {
    MODE_IDS.iter().find(|(_, i)| *i == id).map(|(m, _)| *m)
}

/// The modes a session offers: uji's approval modes.
pub fn modes(current: &str) -> Value {
    json!({
        "currentModeId": current,
        "availableModes": [
            {"id": "default", "name": "Default", "description": "Read, edit and run, asking as the policy says"},
            {"id": "acceptEdits", "name": "Accept edits", "description": "Edits and writes inside the workspace run without asking"},
            {"id": "plan", "name": "Plan", "description": "Read and propose; nothing changes files"},
        ],
    })
}

/// `provider/model`, as `set_model` takes it.
pub fn model_id(provider: &str, model: &str) -> String {
    format!("{provider}/{model}")
}

/// The model choice as ACP's select config option (category `model`).
/// Models without a key are left out: choosing one would fail.
pub fn model_options(current: Option<&ModelState>, models: &[ModelEntry]) -> Value {
    let options: Vec<Value> = models
        .iter()
        .filter(|m| m.available)
        .map(|m| {
            let id = model_id(&m.provider, &m.model);
            json!({"value": id, "name": id})
        })
        .collect();
    // A session without a model offers the choice with none current.
    let current = current.map_or_else(|| model_id("", ""), |m| model_id(&m.provider, &m.model));
    json!([{
        "id": "model", "name": "Model", "category": "model", "type": "select",
        "currentValue": current, "options": options,
    }])
}

/// One saved message as the updates that show it again (`session/load`).
pub fn replay(message: &StoredMessage) -> Vec<Value> {
    match &message.body {
        MessageBody::User { text, .. } => vec![user_chunk(text)],
        MessageBody::Assistant {
            text,
            reasoning,
            tool_calls,
            ..
        } => assistant(text, reasoning.as_deref(), tool_calls),
        MessageBody::Tool {
            tool_call_id,
            content,
            is_error,
            ..
        } => vec![finished(tool_call_id, content, *is_error, None)],
        MessageBody::Error { text } => vec![message_chunk(&format!("error: {text}"))],
        MessageBody::Compaction { .. } | MessageBody::Shell { .. } => vec![],
    }
}

fn assistant(text: &str, reasoning: Option<&str>, calls: &[ToolCallRequest]) -> Vec<Value> {
    let mut updates = Vec::new();
    if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
        updates.push(thought_chunk(reasoning));
    }
    if !text.is_empty() {
        updates.push(message_chunk(text));
    }
    for call in calls {
        // The arguments as the model sent them: shown as JSON when they are.
        let raw_input = serde_json::from_str::<Value>(&call.arguments).unwrap_or(Value::Null);
        updates.push(json!({
            "sessionUpdate": "tool_call",
            "toolCallId": call.id,
            "title": call.name,
            "kind": kind(&call.name),
            "status": "pending",
            "rawInput": raw_input,
        }));
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_titles() {
        assert_eq!(kind("read_file"), "read");
        assert_eq!(kind("write_file"), "edit");
        assert_eq!(kind("run_command"), "execute");
        assert_eq!(kind("grep_files"), "search");
        assert_eq!(kind("web_fetch"), "fetch");
        assert_eq!(kind("lua_thing"), "other");
        assert_eq!(title("Read", "src/a.rs"), "Read src/a.rs");
        assert_eq!(title("", "x"), "x");
    }

    #[test]
    fn output_is_fenced_verbatim_and_its_end_kept() {
        assert_eq!(fenced("a\n"), "```\na\n```");
        assert_eq!(fenced("x ``` y"), "````\nx ``` y\n````");
        let long = "é".repeat(40_000);
        let update = command_output("c", "Ran", &long, false);
        let shown = update["content"][1]["content"]["text"].as_str().unwrap();
        assert!(shown.len() < 70_000 && shown.contains("bytes before]"));
        assert_eq!(update["content"][0]["content"]["text"], "Ran");
    }

    #[test]
    fn replay_shows_users_answers_and_calls() {
        let saved = |body| StoredMessage {
            seq: 1,
            time: 0,
            body,
        };
        let user = saved(MessageBody::User {
            text: "hi".into(),
            images: vec![],
            hidden: false,
        });
        assert_eq!(replay(&user)[0]["sessionUpdate"], "user_message_chunk");
        let answer = saved(MessageBody::Assistant {
            text: "ok".into(),
            reasoning: Some("hm".into()),
            tool_calls: vec![ToolCallRequest {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"a\"}".into(),
            }],
            usage: None,
            model: None,
            effort: None,
            replay: None,
        });
        let kinds: Vec<Value> = replay(&answer)
            .iter()
            .map(|u| u["sessionUpdate"].clone())
            .collect();
        assert_eq!(
            kinds,
            vec!["agent_thought_chunk", "agent_message_chunk", "tool_call"]
        );
    }

    #[test]
    fn a_question_that_names_its_answers_offers_them_in_its_words() {
        let usual = permission_options(&[], &BTreeMap::new());
        assert_eq!(usual.as_array().map(Vec::len), Some(3));
        let labels = BTreeMap::from([
            ("allow_once".to_string(), "put them back".to_string()),
            ("deny".to_string(), "change nothing".to_string()),
        ]);
        let answers = [ApprovalDecision::AllowOnce, ApprovalDecision::Deny];
        assert_eq!(
            permission_options(&answers, &labels),
            json!([
                {"optionId": "allow_once", "name": "put them back", "kind": "allow_once"},
                {"optionId": "deny", "name": "change nothing", "kind": "reject_once"},
            ])
        );
        assert_eq!(
            chosen_decision("allow_session"),
            ApprovalDecision::AllowSession
        );
        assert_eq!(chosen_decision("stop"), ApprovalDecision::Stop);
        assert_eq!(chosen_decision("something else"), ApprovalDecision::Deny);
    }
}
