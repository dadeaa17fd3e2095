//! Turning Lua errors into a message and the place it happened.

/// A Lua error as uji reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaFailure {
    /// What went wrong, without the `file:line:` prefix.
    pub message: String,
    /// `file:line` of the Lua code that failed, when known.
    pub location: Option<String>,
}

impl LuaFailure {
    /// `file:line: message`, or just the message.
    pub fn full(&self) -> String {
        match &self.location {
            Some(at) => format!("{at}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

impl std::fmt::Display for LuaFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.full())
    }
}

/// Splits `chunk:line: message` into its location and message.
pub fn split_location(text: &str) -> (Option<String>, String) {
    let bytes = text.as_bytes();
    let mut i = 0;
    // Only look at the first line: a location never spans lines.
    let first_line_end = text.find('\n').unwrap_or(text.len());
    while i < first_line_end {
        if bytes[i] == b':' {
            let mut j = i + 1;
            while j < first_line_end && bytes[j].is_ascii_digit() {
                j += 1;
            }
            if j > i + 1 && j < first_line_end && bytes[j] == b':' {
                let location = text[..j].to_string();
                let rest = text[j + 1..].strip_prefix(' ').unwrap_or(&text[j + 1..]);
                return (Some(location), rest.to_string());
            }
        }
        i += 1;
    }
    (None, text.to_string())
}

/// The first `file:line` of Lua code in a traceback (skipping C frames and
/// uji's own wrappers).
pub fn location_in_traceback(traceback: &str) -> Option<String> {
    for line in traceback.lines() {
        let line = line.trim();
        if line.starts_with("[C]") || line.starts_with("[uji]") || line == "stack traceback:" {
            continue;
        }
        if let (Some(location), _) = split_location(line) {
            return Some(location);
        }
    }
    None
}

fn from_message(text: &str) -> LuaFailure {
    let (head, traceback) = match text.find("\nstack traceback:") {
        Some(at) => (&text[..at], Some(&text[at..])),
        None => (text, None),
    };
    let (location, message) = split_location(head);
    let location = location.or_else(|| traceback.and_then(location_in_traceback));
    LuaFailure { message, location }
}

/// The file a chunk came from: its name without the `@`, else Lua's
/// printable form of it.
fn chunk_file(source: Option<&str>, short_src: Option<&str>) -> Option<String> {
    source
        .and_then(|s| s.strip_prefix('@'))
        .or(short_src)
        .map(str::to_string)
}

/// `file:line` where Lua function `f` is defined (for a value it returned,
/// which has no line of its own once returned).
pub fn defined_at(f: &mlua::Function) -> Option<String> {
    let info = f.info();
    let file = chunk_file(info.source.as_deref(), info.short_src.as_deref())?;
    Some(format!("{file}:{}", info.line_defined?))
}

/// `file:line` of the Lua code `level` frames up the stack (1: whoever
/// called the running Rust function).
pub fn called_at(lua: &mlua::Lua, level: usize) -> Option<String> {
    lua.inspect_stack(level, |debug| {
        let source = debug.source();
        let file = chunk_file(source.source.as_deref(), source.short_src.as_deref())?;
        Some(format!("{file}:{}", debug.current_line()?))
    })
    .flatten()
}

/// Describes an mlua error.
pub fn describe(err: &mlua::Error) -> LuaFailure {
    match err {
        mlua::Error::SyntaxError { message, .. } => from_message(message),
        mlua::Error::RuntimeError(text) => from_message(text),
        mlua::Error::MemoryError(text) => LuaFailure {
            message: format!(
                "out of memory: {text} (past Lua's memory limit; UJI_LUA_MEMORY sets it, in MiB)"
            ),
            location: None,
        },
        mlua::Error::CallbackError { traceback, cause } => {
            let mut inner = describe(cause);
            if inner.location.is_none() {
                inner.location = location_in_traceback(traceback);
            }
            inner
        }
        mlua::Error::WithContext { context, cause } => {
            let mut inner = describe(cause);
            inner.message = format!("{context}: {}", inner.message);
            inner
        }
        mlua::Error::ExternalError(e) => from_message(&e.to_string()),
        other => from_message(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn splits_file_and_line() {
        let (at, msg) = split_location("/home/a/init.lua:12: boom: again");
        assert_eq!(at.as_deref(), Some("/home/a/init.lua:12"));
        assert_eq!(msg, "boom: again");
        let (at, msg) = split_location("no location: here");
        assert_eq!(at, None);
        assert_eq!(msg, "no location: here");
    }

    #[test]
    fn takes_the_location_from_the_traceback_when_the_message_has_none() {
        let f = from_message(
            "boom\nstack traceback:\n\t[C]: in function 'error'\n\t/c/init.lua:3: in function </c/init.lua:2>",
        );
        assert_eq!(f.message, "boom");
        assert_eq!(f.location.as_deref(), Some("/c/init.lua:3"));
    }
}
