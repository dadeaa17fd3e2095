//! A list overlay to pick from.
