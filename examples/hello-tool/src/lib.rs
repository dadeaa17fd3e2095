//! A third-party tool plugin for uji: `word_count` counts the lines, words
//! and bytes of a file. Build it with `cargo build --release`, copy the
//! library into a plugins directory, and the model can call it.

use uji_sdk::{Host, Plugin, SubjectKind, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};

struct WordCount;

impl Tool for WordCount {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "word_count",
            "Counts the lines, words and bytes of a text file.",
        )
        .parameters(uji_sdk::serde_json::json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "File to count."}},
            "required": ["path"]
        }))
        .allow() // read-only, so no need to ask; policy rules can still say otherwise
        .subject_kind(SubjectKind::Path) // rules and confinement see the path
        .verb("Counted")
    }

    fn subject(&self, args: &uji_sdk::serde_json::Value) -> String {
        args["path"].as_str().unwrap_or("word_count").to_string()
    }

    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        let Some(path) = call.args["path"].as_str().filter(|p| !p.is_empty()) else {
            return ToolOutput::error("`path` is required and must be a non-empty string");
        };
        match std::fs::read_to_string(std::path::Path::new(&call.cwd).join(path)) {
            Ok(text) => ToolOutput::text(format!(
                "{path}: {} lines, {} words, {} bytes",
                text.lines().count(),
                text.split_whitespace().count(),
                text.len()
            )),
            Err(e) => ToolOutput::error(format!("read {path}: {e}")),
        }
    }
}

struct HelloPlugin;

impl Plugin for HelloPlugin {
    const NAME: &'static str = "hello-tool";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Example third-party tool: word_count";

    fn init(host: &Host) -> Result<(), String> {
        host.register_tool(WordCount)
    }
}

uji_sdk::export_plugin!(HelloPlugin);
