//! The editing actions the app maps keys to.

/// One editing step on the composer. The app maps keys to these (or looks
/// them up by their keymap name with [`EditAction::from_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditAction {
    CursorLeft,
    CursorRight,
    CursorUp,
    CursorDown,
    CursorStart,
    CursorEnd,
    WordLeft,
    WordRight,
    Backspace,
    DeleteForward,
    DeleteWordBack,
    DeleteWordForward,
    DeleteToStart,
    DeleteToEnd,
    Yank,
    Transpose,
    InsertNewline,
    HistoryPrev,
    HistoryNext,
    Clear,
}

impl EditAction {
    /// Every action with its keymap name (snake_case, as in the reference's
    /// action list; `Clear` is `clear_input`).
    pub const ALL: [(&'static str, EditAction); 20] = [
        ("cursor_left", EditAction::CursorLeft),
        ("cursor_right", EditAction::CursorRight),
        ("cursor_up", EditAction::CursorUp),
        ("cursor_down", EditAction::CursorDown),
        ("cursor_start", EditAction::CursorStart),
        ("cursor_end", EditAction::CursorEnd),
        ("word_left", EditAction::WordLeft),
        ("word_right", EditAction::WordRight),
        ("backspace", EditAction::Backspace),
        ("delete_forward", EditAction::DeleteForward),
        ("delete_word_back", EditAction::DeleteWordBack),
        ("delete_word_forward", EditAction::DeleteWordForward),
        ("delete_to_start", EditAction::DeleteToStart),
        ("delete_to_end", EditAction::DeleteToEnd),
        ("yank", EditAction::Yank),
        ("transpose", EditAction::Transpose),
        ("insert_newline", EditAction::InsertNewline),
        ("history_prev", EditAction::HistoryPrev),
        ("history_next", EditAction::HistoryNext),
        ("clear_input", EditAction::Clear),
    ];

    /// The action bound under this keymap name, if it is an editing action.
    pub fn from_name(name: &str) -> Option<EditAction> {
        EditAction::ALL
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, action)| *action)
    }

    /// The keymap name of this action.
    pub fn name(self) -> &'static str {
        EditAction::ALL
            .iter()
            .find(|(_, action)| *action == self)
            .map_or("", |(name, _)| name)
    }
}

#[cfg(test)]
mod tests {
    use super::EditAction;

    #[test]
    fn names_round_trip() {
        for (name, action) in EditAction::ALL {
            assert_eq!(EditAction::from_name(name), Some(action));
            assert_eq!(action.name(), name);
        }
        assert_eq!(
            EditAction::from_name("clear_input"),
            Some(EditAction::Clear)
        );
        assert_eq!(EditAction::from_name("submit"), None);
        assert_eq!(EditAction::from_name(""), None);
    }
}
