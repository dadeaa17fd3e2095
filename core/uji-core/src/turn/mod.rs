//! The turn loop: one user message to a finished answer (the model, the
//! tools through the gate, retries, compaction), and what reaches a
//! running turn from outside (queue, interrupts).

pub mod agent;
mod answer_sink;
pub mod budget;
pub mod compaction;
pub mod control;
pub mod interrupt;
pub mod mentions;
pub mod prompt;
pub mod retry;
