//! Providers and their keys: which wire, URL and key a model uses, the
//! keys `uji login` saves, checking a key, and keeping keys out of
//! everything saved or shown.

pub mod keys;
pub mod login;
pub mod providers;
pub mod redact;
pub mod search;
