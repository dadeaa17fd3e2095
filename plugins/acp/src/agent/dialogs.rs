//! Plugins' dialogs (`ui.dialog`) in the editor: ACP has no dialogs, but
//! it has the permission question (`session/request_permission`) with
//! options, which tool approvals already use. A confirm is asked as one
//! with Yes and No; a select of at most [`MAX_OPTIONS`] items as one with
//! an option per item; anything else is refused, so the plugin gets an
//! error at once instead of waiting.

use agent_client_protocol::v1::schema::{
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
};
use serde_json::{Value, json};
use uji_protocol::frontend::{DialogAnswer, DialogKind, Op};

use super::{Agent, typed};
use crate::connection::Input;

/// The most items a select may have to be asked as options.
pub const MAX_OPTIONS: usize = 8;

/// What the editor is asked for a dialog: its options, or why it cannot
/// be asked.
fn options(kind: DialogKind, items: &[String]) -> Result<Value, String> {
    match kind {
        DialogKind::Confirm => Ok(json!([
            {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
            {"optionId": "no", "name": "No", "kind": "reject_once"},
        ])),
        DialogKind::Select if items.len() <= MAX_OPTIONS => Ok(Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    json!({"optionId": index.to_string(), "name": item, "kind": "allow_once"})
                })
                .collect(),
        )),
        DialogKind::Select => Err(format!(
            "the editor can offer at most {MAX_OPTIONS} choices (ACP's permission question), and this select has {}; offer fewer items, or ask in the terminal screen (`uji`)",
            items.len()
        )),
        DialogKind::Prompt => Err(
            "the editor cannot ask for text (ACP has no text prompt); ask in the terminal screen (`uji`), or take the text from the prompt or a file"
                .to_string(),
        ),
        DialogKind::Unknown => {
            Err("the editor shows only select and confirm dialogs".to_string())
        }
    }
}

/// The dialog's answer from the editor's: the option chosen, or a
/// cancelled question (`None`).
fn answer_for(kind: DialogKind, option: Option<&str>) -> DialogAnswer {
    match (kind, option) {
        (_, None) => DialogAnswer::Cancelled,
        (DialogKind::Confirm, Some(option)) => DialogAnswer::Confirmed {
            yes: option == "yes",
        },
        (_, Some(option)) => match option.parse() {
            Ok(index) => DialogAnswer::Selected { index },
            Err(_) => DialogAnswer::Cancelled,
        },
    }
}

/// A dialog as the `dialog` event brings it.
pub(super) struct Dialog {
    pub id: String,
    pub kind: DialogKind,
    pub title: String,
    pub items: Vec<String>,
    pub body: Option<String>,
}

impl Agent<'_> {
    /// Asks the editor in a task of the connection, as an approval is.
    pub(super) fn dialog(&mut self, dialog: Dialog) {
        let question = options(dialog.kind, &dialog.items).and_then(|options| {
            let mut tool_call = json!({
                "toolCallId": dialog.id,
                "title": dialog.title,
                "kind": "other",
                "status": "pending",
            });
            if let Some(body) = &dialog.body {
                tool_call["content"] =
                    json!([{"type": "content", "content": {"type": "text", "text": body}}]);
            }
            typed::<RequestPermissionRequest>(json!({
                "sessionId": self.session_id(),
                "toolCall": tool_call,
                "options": options,
            }))
            .map_err(|e| e.message)
        });
        let question = match question {
            Ok(question) => question,
            Err(reason) => return self.refuse_dialog(dialog.id, reason),
        };
        self.dialogs.insert(dialog.id.clone(), dialog.kind);
        let (cx, tx) = (self.cx.clone(), self.tx.clone());
        let id = dialog.id;
        let task = async move {
            let answer = cx.send_request(question).block_task().await;
            let _ = tx.unbounded_send(Input::Permission(id, answer));
            Ok(())
        };
        if let Err(e) = self.cx.spawn(task) {
            crate::log_warn(&format!("cannot ask the editor: {e}"));
        }
    }

    fn refuse_dialog(&mut self, dialog_id: String, reason: String) {
        if let Err(e) = self.op(None, &Op::RefuseDialog { dialog_id, reason }) {
            crate::log_warn(&format!("cannot refuse a dialog: {e}"));
        }
    }

    /// The editor answered a dialog's permission question; false when
    /// `id` is not an open dialog's.
    pub(super) fn dialog_answer(
        &mut self,
        id: &str,
        answer: &Result<RequestPermissionResponse, agent_client_protocol::Error>,
    ) -> bool {
        let Some(kind) = self.dialogs.remove(id) else {
            return false;
        };
        let chosen = match answer {
            Ok(RequestPermissionResponse {
                outcome: RequestPermissionOutcome::Selected(selected),
                ..
            }) => Some(selected.option_id.to_string()),
            Ok(_) => None,
            Err(e) => {
                let reason = format!("the editor could not ask: {}", e.message);
                self.refuse_dialog(id.to_string(), reason);
                return true;
            }
        };
        let op = Op::AnswerDialog {
            dialog_id: id.to_string(),
            answer: answer_for(kind, chosen.as_deref()),
        };
        if let Err(e) = self.op(None, &op) {
            crate::log_warn(&format!("dialog answer for {id}: {e}"));
        }
        true
    }

    /// A dialog closed in uji (timed out, withdrawn): its question no
    /// longer waits for the editor.
    pub(super) fn dialog_resolved(&mut self, id: &str) {
        self.dialogs.remove(id);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_confirm_is_a_permission_question_with_yes_and_no() {
        let options = options(DialogKind::Confirm, &[]).unwrap();
        assert_eq!(options[0]["optionId"], "yes");
        assert_eq!(options[1]["kind"], "reject_once");
        assert_eq!(
            answer_for(DialogKind::Confirm, Some("yes")),
            DialogAnswer::Confirmed { yes: true }
        );
        assert_eq!(
            answer_for(DialogKind::Confirm, Some("no")),
            DialogAnswer::Confirmed { yes: false }
        );
        assert_eq!(
            answer_for(DialogKind::Confirm, None),
            DialogAnswer::Cancelled
        );
    }

    #[test]
    fn a_select_of_a_handful_of_items_offers_each_and_answers_its_index() {
        let items: Vec<String> = ["main", "dev"].map(String::from).to_vec();
        let options = options(DialogKind::Select, &items).unwrap();
        assert_eq!(options[1]["name"], "dev");
        assert_eq!(
            answer_for(DialogKind::Select, Some("1")),
            DialogAnswer::Selected { index: 1 }
        );
    }

    #[test]
    fn a_long_select_or_a_prompt_is_refused_with_what_to_do() {
        let items: Vec<String> = (0..9).map(|i| format!("item {i}")).collect();
        let long = options(DialogKind::Select, &items).unwrap_err();
        assert!(long.contains("at most 8"), "{long}");
        let prompt = options(DialogKind::Prompt, &[]).unwrap_err();
        assert!(
            prompt.starts_with("the editor cannot ask for text"),
            "{prompt}"
        );
    }
}
