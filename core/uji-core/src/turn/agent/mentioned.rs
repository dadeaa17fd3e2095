//! Reading what a user's `@path` mentions name (turn/mentions.rs finds
//! them): each file through the gate as a `read_file` call the user asked
//! for (deny rules and confinement still refuse; an ask needs no question,
//! the mention is the user's own request), each directory listed when the
//! gate would let `read_file` read it. Nothing of it reaches the transcript:
//! the user's message shows the mention, the model reads a hidden message.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use uji_policy::Decision;
use uji_protocol::Image;

use super::Agent;
use crate::gate::{HeadlessApprover, ToolRequest};
use crate::turn::interrupt::Interrupt;
use crate::turn::mentions::{self, Attached, Found, MAX_LISTED, Mention};

/// What the mentions of one message brought.
#[derive(Default)]
pub(crate) struct Mentioned {
    /// The hidden message for the model; `None` without mentions.
    pub context: Option<String>,
    /// Images read_file gave back, attached to the user's message.
    pub images: Vec<Image>,
}

impl Agent {
    /// Reads the mentions of `text`. A refused or unreadable one is
    /// named in the context (so the model knows) and in a notice.
    pub(crate) async fn read_mentions(&self, text: &str, interrupt: &mut Interrupt) -> Mentioned {
        if !text.contains('@') {
            return Mentioned::default();
        }
        let cwd = self.settings.cwd.clone();
        let found = mentions::find(text, |path| look(&cwd, path));
        let mut attached = Vec::with_capacity(found.len());
        let mut images = Vec::new();
        for mention in found {
            let what = if mention.directory {
                self.list_directory(&cwd, &mention.path)
            } else {
                self.read_file(&mention, interrupt, &mut images).await
            };
            if let Attached::Refused(why) = &what {
                self.notice(format!("@{} was not attached: {why}", mention.label()));
            }
            attached.push((mention, what));
        }
        if attached.is_empty() {
            return Mentioned::default();
        }
        Mentioned {
            context: Some(mentions::context_message(&attached)),
            images,
        }
    }

    async fn read_file(
        &self,
        mention: &Mention,
        interrupt: &mut Interrupt,
        images: &mut Vec<Image>,
    ) -> Attached {
        let (offset, limit) = mention.read_window();
        let mut args = json!({ "path": mention.path });
        if let (Some(offset), Some(limit)) = (offset, limit) {
            args["offset"] = Value::from(offset);
            args["limit"] = Value::from(limit);
        }
        let request = ToolRequest {
            call_id: format!("mention-{}", self.id()),
            name: "read_file".to_string(),
            args,
            cwd: self.settings.cwd.clone(),
            session: Some(self.session.id().to_string()),
        };
        let approver = HeadlessApprover { yes: true };
        let result = self
            .gate
            .run(request, &approver, Arc::new(|_: &str| {}), interrupt)
            .await;
        let output = result.output;
        if result.decision == Decision::Deny || output.is_error || !result.ran {
            return Attached::Refused(output.text);
        }
        if !output.images.is_empty() {
            images.extend(output.images);
            return Attached::Image;
        }
        // read_file leaves out an image over 5 MB; the policy let it be
        // read, so a mentioned one is fitted as an attached image is
        // (scaled, encoded again smaller) instead of being left out.
        let path = absolute(&self.settings.cwd, &mention.path);
        let (gate, cwd) = (self.gate.clone(), self.settings.cwd.clone());
        let fitted = move || {
            let Some((file, real)) = crate::images::open_regular(&path)? else {
                return Ok(None);
            };
            // The file opened is one the policy lets read_file read, not
            // something swapped in since read_file checked the path.
            let (verdict, _) = gate.check("read_file", &real.to_string_lossy(), &cwd);
            if verdict.decision == Decision::Deny {
                return Err(crate::images::ImageError::Broken(format!(
                    "{} is not a file read_file may read: {}",
                    real.display(),
                    verdict.message.unwrap_or(verdict.because)
                )));
            }
            crate::images::fit_opened(file, &path)
        };
        match tokio::task::spawn_blocking(fitted).await {
            Ok(Ok(None)) => Attached::File(output.text),
            Ok(Ok(Some(image))) => {
                images.push(image);
                Attached::Image
            }
            Ok(Err(e)) => Attached::Refused(e.to_string()),
            Err(e) => Attached::Refused(format!("the image could not be prepared ({e})")),
        }
    }

    /// The directory's entries as ripgrep would walk them (`.gitignore`,
    /// `.ignore` and hidden files left out), directories first, by name.
    fn list_directory(&self, cwd: &Path, written: &str) -> Attached {
        let (verdict, _) = self.gate.check("read_file", written, cwd);
        if verdict.decision == Decision::Deny {
            return Attached::Refused(verdict.message.unwrap_or(verdict.because));
        }
        let dir = absolute(cwd, written);
        let mut entries: Vec<(bool, String)> = ignore::WalkBuilder::new(&dir)
            .max_depth(Some(1))
            .build()
            .filter_map(Result::ok)
            .filter(|entry| entry.depth() == 1)
            .map(|entry| {
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                let name = entry.file_name().to_string_lossy().into_owned();
                (!is_dir, if is_dir { format!("{name}/") } else { name })
            })
            .collect();
        entries.sort();
        let more = entries.len().saturating_sub(MAX_LISTED);
        entries.truncate(MAX_LISTED);
        Attached::Directory {
            entries: entries.into_iter().map(|(_, name)| name).collect(),
            more,
        }
    }
}

/// `written` from `cwd`, with `~/` as the home directory.
fn absolute(cwd: &Path, written: &str) -> PathBuf {
    match written.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join(rest),
        None => cwd.join(written),
    }
}

fn look(cwd: &Path, written: &str) -> Found {
    match std::fs::metadata(absolute(cwd, written)) {
        Ok(meta) if meta.is_dir() => Found::Directory,
        Ok(_) => Found::File,
        Err(_) => Found::Missing,
    }
}
