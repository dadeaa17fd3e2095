//! uji's frontend events as ACP `session/update` payloads. Pure functions:
//! the state they need (the session directory, a file's text before an
//! edit) is passed in.

use std::path::Path;

use serde_json::{Value, json};

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

pub fn usage(event: &Value) -> Option<Value> {
    let used = event["context_used"].as_u64()?;
    let size = event["context_window"].as_u64()?;
    Some(json!({"sessionUpdate": "usage_update", "used": used, "size": size}))
}

/// The slash commands as ACP's `available_commands_update`.
pub fn commands(commands: &Value) -> Value {
    let list: Vec<Value> = commands
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some(json!({
                "name": c["name"].as_str()?,
                "description": c["description"].as_str().unwrap_or(""),
                "input": {"hint": "arguments"},
            }))
        })
        .collect();
    json!({"sessionUpdate": "available_commands_update", "availableCommands": list})
}

pub fn mode(mode: &str) -> Value {
    json!({"sessionUpdate": "current_mode_update", "currentModeId": mode})
}

/// The modes a session offers: uji's plan mode (Lua's `uji.planmode`,
/// toggled by `/plan`) or not.
pub fn modes(current: &str) -> Value {
    json!({
        "currentModeId": current,
        "availableModes": [
            {"id": "default", "name": "Default", "description": "Read, edit and run, asking as the policy says"},
            {"id": "plan", "name": "Plan", "description": "Read and propose; edit_file and write_file are off"},
        ],
    })
}

/// `provider/model`, as `set_model` takes it.
pub fn model_id(model: &Value) -> String {
    format!(
        "{}/{}",
        model["provider"].as_str().unwrap_or(""),
        model["model"].as_str().unwrap_or("")
    )
}

/// The model choice as ACP's select config option (category `model`).
/// Models without a key are left out: choosing one would fail.
pub fn model_options(current: &Value, models: &[Value]) -> Value {
    let options: Vec<Value> = models
        .iter()
        .filter(|m| m["available"] != false)
        .map(|m| json!({"value": model_id(m), "name": model_id(m)}))
        .collect();
    json!([{
        "id": "model", "name": "Model", "category": "model", "type": "select",
        "currentValue": model_id(current), "options": options,
    }])
}

/// One saved message as the updates that show it again (`session/load`).
pub fn replay(message: &Value) -> Vec<Value> {
    let text = message["text"].as_str().unwrap_or("");
    match message["role"].as_str() {
        Some("user") => vec![user_chunk(text)],
        Some("assistant") => assistant(message, text),
        Some("tool") => {
            let id = message["tool_call_id"].as_str().unwrap_or("");
            let content = message["content"].as_str().unwrap_or("");
            vec![finished(id, content, message["is_error"] == true, None)]
        }
        Some("error") => vec![message_chunk(&format!("error: {text}"))],
        _ => vec![],
    }
}

fn assistant(message: &Value, text: &str) -> Vec<Value> {
    let mut updates = Vec::new();
    if let Some(reasoning) = message["reasoning"].as_str().filter(|r| !r.is_empty()) {
        updates.push(thought_chunk(reasoning));
    }
    if !text.is_empty() {
        updates.push(message_chunk(text));
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let name = call["name"].as_str().unwrap_or("");
        updates.push(json!({
            "sessionUpdate": "tool_call",
            "toolCallId": call["id"],
            "title": name,
            "kind": kind(name),
            "status": "pending",
            "rawInput": serde_json::from_str::<Value>(call["arguments"].as_str().unwrap_or("")).unwrap_or(Value::Null),
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
        let user = json!({"role": "user", "text": "hi"});
        assert_eq!(replay(&user)[0]["sessionUpdate"], "user_message_chunk");
        let answer = json!({"role": "assistant", "text": "ok", "reasoning": "hm",
            "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"path\":\"a\"}"}]});
        let kinds: Vec<Value> = replay(&answer)
            .iter()
            .map(|u| u["sessionUpdate"].clone())
            .collect();
        assert_eq!(
            kinds,
            vec!["agent_thought_chunk", "agent_message_chunk", "tool_call"]
        );
    }
}
