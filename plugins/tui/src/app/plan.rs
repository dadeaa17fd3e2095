//! After a turn in plan mode: the plan can be run at once. A question
//! offers to leave plan mode and carry it out (accepting edits, or asking
//! before each), or to keep planning.

use uji_protocol::ApprovalMode;
use uji_protocol::frontend::{Delivery, Op};

use super::state::{App, Pending, PickerKind};
use crate::picker::{Picker, PickerItem};

/// What the model is told when the user runs the plan.
pub const RUN_THE_PLAN: &str = "The plan is approved: carry it out now.";

/// The answers, by the value the picker returns.
const KEEP_PLANNING: &str = "keep";

impl App {
    /// A plan-mode turn ended with an answer: ask whether to run it.
    pub(super) fn offer_to_run_the_plan(&mut self) {
        let item = |label: &str, detail: &str, value: &str| PickerItem {
            label: label.to_string(),
            detail: detail.to_string(),
            value: value.to_string(),
        };
        let items = vec![
            item(
                "Yes, and accept edits",
                "leave plan mode; edits and writes run unasked",
                ApprovalMode::AcceptEdits.as_str(),
            ),
            item(
                "Yes, and ask before edits",
                "leave plan mode; the policy asks as usual",
                ApprovalMode::Ask.as_str(),
            ),
            item("No, keep planning", "stay in plan mode", KEEP_PLANNING),
        ];
        let picker = Picker::new("Run this plan?", items, false);
        self.picker = Some((PickerKind::RunPlan, picker));
    }

    pub(super) fn run_plan_chosen(&mut self, value: &str) {
        let mode = match value {
            v if v == ApprovalMode::AcceptEdits.as_str() => ApprovalMode::AcceptEdits,
            v if v == ApprovalMode::Ask.as_str() => ApprovalMode::Ask,
            _ => return,
        };
        self.submit(Op::SetMode { mode }, Pending::Other);
        let op = Op::UserMessage {
            text: RUN_THE_PLAN.to_string(),
            images: Vec::new(),
            delivery: Delivery::Steer,
        };
        self.submit(op, Pending::Other);
    }
}
