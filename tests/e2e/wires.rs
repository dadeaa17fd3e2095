//! The wire plugins against the fake model server (filled in by the wires work).
