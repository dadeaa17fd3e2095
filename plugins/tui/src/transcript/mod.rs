//! The conversation as blocks (messages, tool calls, notices), each drawn
//! to lines once per width and cached.

pub mod diff;
pub mod tool;
