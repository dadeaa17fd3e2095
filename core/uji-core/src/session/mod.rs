//! Sessions: the session service (create, resume, list, switch, delete),
//! the crash-safe store, spill files, and the running sessions' rules.

pub mod live;
pub mod service;
pub mod spills;
pub mod store;
