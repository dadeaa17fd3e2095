//! A fake model to try the screen by hand: prints its base URL, then
//! answers every request in turn from a short scripted conversation (a
//! command, an edit, a Markdown answer), over and over.
//!
//! cargo run -p uji-fake-model --example demo

use std::time::Duration;

use serde_json::json;
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};

const ANSWER: &str = "## Done\n\nI ran the command and **edited** `notes.txt`:\n\n1. listed the files\n   - nested item with `code`\n2. changed the greeting\n\n> a quote\n\n| file | change |\n|---|---|\n| notes.txt | hello → goodbye |\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n";

fn round(model: &FakeModel) {
    let ls = json!({"command": "ls -la; sleep 1; echo done"}).to_string();
    model.push(Script::sse(
        ChatEvents::new("m1")
            .tool_call(0, "c1", "run_command", &ls, 2)
            .finish("tool_calls")
            .done(),
    ));
    let edit =
        json!({"path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}).to_string();
    model.push(Script::sse(
        ChatEvents::new("m1")
            .tool_call(0, "c2", "edit_file", &edit, 2)
            .finish("tool_calls")
            .done(),
    ));
    model.push(Script::sse(
        ChatEvents::new("m1")
            .reasoning("Let me think about the answer.", 4)
            .text(ANSWER, 200)
            .finish("stop")
            .usage(1200, 300, 0)
            .done(),
    ));
}

fn main() {
    let model = FakeModel::start();
    println!("{}", model.base_url());
    loop {
        while model.pending() < 3 {
            round(&model);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
