//! The approval question.
