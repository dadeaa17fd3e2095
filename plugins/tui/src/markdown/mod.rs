//! Markdown to styled, wrapped lines (pulldown-cmark), incrementally while
//! an answer streams.
