//! Validation of the arguments a model sends. Every failure is a one-line
//! message naming the argument; nothing here panics on any JSON value.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
// Shared with the core, which bounds every tool's output the same way.
pub use uji_sdk::protocol::spill::{cut_at_char_boundary, os_error};

pub type Args = Map<String, Value>;

/// The arguments as an object.
pub fn object(args: &Value) -> Result<&Args, String> {
    args.as_object()
        .ok_or_else(|| "arguments must be a JSON object".to_string())
}

/// A required string that must not be empty.
pub fn non_empty_str<'a>(args: &'a Args, name: &str) -> Result<&'a str, String> {
    match args.get(name).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(format!(
            "`{name}` is required and must be a non-empty string"
        )),
    }
}

/// A required string that must contain more than whitespace (paths, commands).
pub fn non_blank_str<'a>(args: &'a Args, name: &str) -> Result<&'a str, String> {
    match args.get(name).and_then(Value::as_str) {
        Some(s) if !s.trim().is_empty() => Ok(s),
        _ => Err(format!(
            "`{name}` is required and must be a non-empty string"
        )),
    }
}

/// A required string that may be empty.
pub fn string<'a>(args: &'a Args, name: &str) -> Result<&'a str, String> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{name}` is required and must be a string"))
}

/// An optional whole number ≥ 1. `null` counts as absent; `3.0` is accepted,
/// `3.5`, `0`, `-1` and `"3"` are not. Huge values saturate.
pub fn optional_positive_int(args: &Args, name: &str) -> Result<Option<u64>, String> {
    let bad = || format!("`{name}` must be an integer ≥ 1");
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            if let Some(v) = n.as_u64() {
                return if v >= 1 { Ok(Some(v)) } else { Err(bad()) };
            }
            if n.as_i64().is_some() {
                return Err(bad());
            }
            match n.as_f64() {
                Some(f) if f.is_finite() && f >= 1.0 && f.fract() == 0.0 => {
                    // `as` saturates at u64::MAX.
                    Ok(Some(f as u64))
                }
                _ => Err(bad()),
            }
        }
        Some(_) => Err(bad()),
    }
}

/// An optional boolean; `null` counts as absent.
pub fn optional_bool(args: &Args, name: &str) -> Result<Option<bool>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(format!("`{name}` must be true or false")),
    }
}

/// The subject of a call: the string argument `name` as given, or `fallback`.
pub fn subject(args: &Value, name: &str, fallback: &str) -> String {
    match args.get(name).and_then(Value::as_str) {
        Some(s) if !s.trim().is_empty() => s.to_string(),
        _ => fallback.to_string(),
    }
}

/// Resolves a path the model gave: `~` and `~/…` expand to `$HOME`, relative
/// paths are relative to `cwd`.
pub fn resolve(cwd: &str, path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").filter(|h| !h.is_empty());
    if path == "~" {
        if let Some(home) = home() {
            return PathBuf::from(home);
        }
    } else if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = home()
    {
        // `~//etc` is under home, as the policy reads it: a leading slash in
        // the rest must not turn the join into an absolute path.
        return Path::new(&home).join(rest.trim_start_matches('/'));
    }
    Path::new(cwd).join(path)
}

/// "1 line", "2 lines".
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_double_slash_after_the_tilde_stays_under_home() {
        // `~//x` must name $HOME/x, as the policy gate reads it, not /x.
        let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
            return;
        };
        assert_eq!(
            resolve("/work", "~//etc/passwd"),
            Path::new(&home).join("etc/passwd")
        );
        assert_eq!(resolve("/work", "~/a"), Path::new(&home).join("a"));
        assert_eq!(resolve("/work", "a/b"), Path::new("/work/a/b"));
    }
}
