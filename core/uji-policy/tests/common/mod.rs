//! Helpers the policy test files share.

use uji_policy::command_parts;

/// The parts of `line` as text; an unresolved part is written `?text`.
pub fn shown_parts(line: &str) -> Vec<String> {
    command_parts(line)
        .into_iter()
        .map(|p| {
            if p.resolved {
                p.text
            } else {
                format!("?{}", p.text)
            }
        })
        .collect()
}
