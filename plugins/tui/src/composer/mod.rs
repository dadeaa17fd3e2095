//! The multi-line input box: editing, history, paste placeholders and the
//! slash-command suggestions.
