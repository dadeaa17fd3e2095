//! MCP shapes to uji's: tool lists into specs, call results into outputs,
//! arguments into the short subject policy rules and approvals see.

use serde_json::Value;
use uji_sdk::{Image, ToolOutput};

/// Longest subject shown in the transcript and matched by rules.
const SUBJECT_MAX: usize = 120;

/// The model-facing name: `server__tool`, only characters every model API
/// accepts in a tool name, at most 64 of them.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{server}__{clean}");
    name.truncate(64);
    name
}

/// A short `key=value, …` line of the arguments, cut to [`SUBJECT_MAX`].
pub fn subject(args: &Value) -> String {
    let text = match args {
        Value::Object(map) if map.is_empty() => String::new(),
        // Sorted, whatever order the model wrote them in (serde_json keeps
        // insertion order in this workspace): rules match this summary.
        Value::Object(map) => {
            let mut pairs: Vec<_> = map.iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(b.0));
            pairs
                .into_iter()
                .map(|(key, value)| match value {
                    Value::String(s) => format!("{key}={s}"),
                    other => format!("{key}={other}"),
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let one_line = text.replace(['\n', '\r'], " ");
    cut(&one_line, SUBJECT_MAX)
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max - 1).collect();
    format!("{kept}…")
}

/// The hints a server gives about a tool, as words for the description
/// and the approval question. Shown only: the gate never trusts them.
pub fn hints(annotations: Option<&Value>) -> Vec<&'static str> {
    let Some(a) = annotations else {
        return Vec::new();
    };
    let flag = |key: &str| a.get(key).and_then(Value::as_bool);
    let mut words = Vec::new();
    if flag("readOnlyHint") == Some(true) {
        words.push("read-only");
    }
    if flag("destructiveHint") == Some(true) {
        words.push("destructive");
    }
    if flag("idempotentHint") == Some(true) {
        words.push("idempotent");
    }
    if flag("openWorldHint") == Some(true) {
        words.push("open-world");
    }
    words
}

/// A `tools/call` result (as JSON) into what the model reads: the server's
/// text marked as untrusted (`uji_protocol::untrusted`), as it is text from
/// outside that may try to direct the model. `tool` is the uji tool name.
pub fn output(result: &Value, tool: &str) -> ToolOutput {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        content_block(block, &mut texts, &mut images);
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        texts.push(structured.to_string());
    }
    let text = texts.join("\n");
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let mut out = ToolOutput::error(if text.is_empty() {
            "the tool failed"
        } else {
            &text
        });
        out.images = images;
        return out;
    }
    let text = if text.is_empty() {
        text
    } else {
        uji_sdk::protocol::untrusted::wrap("mcp", &[("tool", tool)], &text)
    };
    let mut out = ToolOutput::text(text);
    out.images = images;
    out
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn content_block(block: &Value, texts: &mut Vec<String>, images: &mut Vec<Image>) {
    match str_of(block, "type") {
        "text" => texts.push(str_of(block, "text").to_string()),
        "image" => images.push(Image {
            media_type: str_of(block, "mimeType").to_string(),
            data: str_of(block, "data").to_string(),
            name: None,
        }),
        "resource" => texts.push(resource(block.get("resource").unwrap_or(&Value::Null))),
        "resource_link" => texts.push(format!(
            "[resource {}: {}]",
            str_of(block, "name"),
            str_of(block, "uri")
        )),
        "audio" => texts.push(format!("[audio {} not shown]", str_of(block, "mimeType"))),
        other => texts.push(format!("[{other} content not shown]")),
    }
}

/// An embedded resource: its text, or a note for binary contents the model
/// cannot read as text.
fn resource(res: &Value) -> String {
    let uri = str_of(res, "uri");
    match res.get("text").and_then(Value::as_str) {
        Some(text) => format!("[resource {uri}]\n{text}"),
        None => format!(
            "[resource {uri}: {} binary, not shown]",
            str_of(res, "mimeType")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_model_safe() {
        assert_eq!(tool_name("fs", "read.file"), "fs__read_file");
        assert!(tool_name("s", &"x".repeat(100)).len() <= 64);
    }

    #[test]
    fn subject_is_short_and_one_line() {
        assert_eq!(subject(&json!({"path": "a\nb", "n": 2})), "n=2, path=a b");
        assert!(subject(&json!({"t": "y".repeat(500)})).chars().count() <= SUBJECT_MAX);
    }

    #[test]
    fn results() {
        let r = json!({"content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"}
        ], "structuredContent": {"n": 1}});
        let out = output(&r, "docs__read");
        assert_eq!(
            out.text,
            "<untrusted source=\"mcp\" tool=\"docs__read\">\nhi\n[resource file:///a]\nbody\n[resource b: file:///b]\n{\"n\":1}\n</untrusted>"
        );
        assert_eq!(out.images.len(), 1);
        assert!(!out.is_error);
        let err = output(
            &json!({"content": [{"type": "text", "text": "bad"}], "isError": true}),
            "docs__read",
        );
        assert!(err.is_error && err.text.contains("bad"));
    }

    #[test]
    fn hints_are_words() {
        assert_eq!(
            hints(Some(&json!({"readOnlyHint": true}))),
            vec!["read-only"]
        );
    }
}
