//! Reading the model's arguments: a clear error for each mistake.

use uji_sdk::serde_json::{Map, Value};

pub(crate) fn object(args: &Value) -> Result<&Map<String, Value>, String> {
    args.as_object()
        .ok_or_else(|| "the arguments must be a JSON object".to_string())
}

/// A required string that is not blank.
pub(crate) fn text<'a>(map: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    match map.get(name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim()),
        Some(Value::String(_)) | None => Err(format!("`{name}` is required and must not be empty")),
        Some(_) => Err(format!("`{name}` must be a string")),
    }
}

/// An optional whole number from 1 to `max` (larger is taken as `max`).
pub(crate) fn count(map: &Map<String, Value>, name: &str, max: u64) -> Result<Option<u64>, String> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match value.as_u64() {
            Some(n) if n >= 1 => Ok(Some(n.min(max))),
            _ => Err(format!("`{name}` must be a whole number from 1 to {max}")),
        },
    }
}

/// `text` cut to at most `max` characters, and whether it was cut.
pub(crate) fn cut(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use uji_sdk::serde_json::json;

    #[test]
    fn counts_are_bounded_and_checked() {
        let args = json!({"n": 500, "bad": 0, "s": "x"});
        let map = object(&args).unwrap();
        assert_eq!(count(map, "n", 20).unwrap(), Some(20));
        assert_eq!(count(map, "none", 20).unwrap(), None);
        assert!(count(map, "bad", 20).is_err());
        assert!(count(map, "s", 20).is_err());
        assert!(text(map, "none").unwrap_err().contains("required"));
    }

    #[test]
    fn cutting_counts_characters_not_bytes() {
        assert_eq!(cut("héllo", 2), ("hé", true));
        assert_eq!(cut("hé", 2), ("hé", false));
    }
}
