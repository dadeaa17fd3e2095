//! Plan mode's answer as ACP's `plan` update: the steps of the plan the
//! model proposed (its list items, numbered or bulleted), for the editor's
//! plan view. uji's plan mode is a prompt, not a tracked task list, so every
//! entry is pending; a new plan replaces the last one, as ACP wants.

use serde_json::{Value, json};

/// The list items of `text`, the plan's steps, in order.
pub fn entries(text: &str) -> Vec<String> {
    let mut in_code = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                return false;
            }
            !in_code
        })
        .filter_map(|line| item(line.trim_start()))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The text of a list item (`- x`, `* x`, `+ x`, `1. x`, `1) x`).
fn item(line: &str) -> Option<&str> {
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return Some(rest.trim_start_matches("[ ] "));
        }
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let rest = &line[digits..];
    rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "))
}

pub fn update(entries: &[String]) -> Value {
    let entries: Vec<Value> = entries
        .iter()
        .map(|content| json!({"content": content, "priority": "medium", "status": "pending"}))
        .collect();
    json!({"sessionUpdate": "plan", "entries": entries})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_are_the_steps() {
        let text = "Here is the plan:\n\n1. Read src/a.rs\n2) Change `f`\n   - add a test\n\
            ```\n- not a step\n```\n* [ ] run cargo test\nDone.";
        assert_eq!(
            entries(text),
            [
                "Read src/a.rs",
                "Change `f`",
                "add a test",
                "run cargo test"
            ]
        );
        assert!(entries("no list here").is_empty());
        assert_eq!(update(&["x".into()])["entries"][0]["status"], "pending");
    }
}
