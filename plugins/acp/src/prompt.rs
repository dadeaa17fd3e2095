//! An ACP prompt (content blocks) as one uji user message: text as it is,
//! resource links as mentions the model can read with its tools, embedded
//! resources inline, images attached.

use serde_json::Value;
use uji_protocol::Image;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PromptError {
    #[error("prompt must be an array of content blocks")]
    NotAnArray,
    #[error("content block {0} has no type; expected text, resource_link, resource or image")]
    NoType(usize),
    #[error("content block {0} is of type {1:?}, which uji does not take (audio is not supported)")]
    Unsupported(usize, String),
    #[error("image block {0} needs data and mimeType")]
    BadImage(usize),
}

pub struct Message {
    pub text: String,
    pub images: Vec<Image>,
}

pub fn from_blocks(blocks: &Value) -> Result<Message, PromptError> {
    let blocks = blocks.as_array().ok_or(PromptError::NotAnArray)?;
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        match block["type"].as_str().ok_or(PromptError::NoType(i))? {
            "text" => parts.push(block["text"].as_str().unwrap_or("").to_string()),
            "resource_link" => parts.push(link(block)),
            "resource" => parts.push(embedded(&block["resource"])),
            "image" => images.push(image(i, block)?),
            other => return Err(PromptError::Unsupported(i, other.to_string())),
        }
    }
    Ok(Message {
        text: parts.join("\n"),
        images,
    })
}

fn path_of(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

/// A resource link as a mention core reads (docs/context.md); quoted
/// when the path holds whitespace.
fn link(block: &Value) -> String {
    mention(path_of(block["uri"].as_str().unwrap_or("")))
}

fn mention(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
}

fn embedded(resource: &Value) -> String {
    let uri = path_of(resource["uri"].as_str().unwrap_or(""));
    match resource["text"].as_str() {
        Some(text) => format!("<file path=\"{uri}\">\n{text}\n</file>"),
        // A binary resource cannot be inlined: name it so the model knows.
        None => mention(uri),
    }
}

fn image(i: usize, block: &Value) -> Result<Image, PromptError> {
    let (Some(data), Some(mime)) = (block["data"].as_str(), block["mimeType"].as_str()) else {
        return Err(PromptError::BadImage(i));
    };
    Ok(Image {
        media_type: mime.to_string(),
        data: data.to_string(),
        name: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_become_one_message() {
        let blocks = json!([
            {"type": "text", "text": "look at"},
            {"type": "resource_link", "uri": "file:///w/a.rs", "name": "a.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/b.rs", "text": "fn b() {}"}},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        ]);
        let message = from_blocks(&blocks).unwrap();
        assert_eq!(
            message.text,
            "look at\n@/w/a.rs\n<file path=\"/w/b.rs\">\nfn b() {}\n</file>"
        );
        assert_eq!(message.images[0].media_type, "image/png");
        let audio = json!([{"type": "audio", "data": "", "mimeType": "audio/wav"}]);
        assert!(matches!(
            from_blocks(&audio),
            Err(PromptError::Unsupported(0, _))
        ));
        assert_eq!(
            from_blocks(&json!("hi")).err(),
            Some(PromptError::NotAnArray)
        );
    }

    #[test]
    fn a_linked_path_with_spaces_is_quoted_so_core_reads_it_whole() {
        let blocks = json!([
            {"type": "resource_link", "uri": "file:///w/my notes.txt", "name": "my notes.txt"},
        ]);
        assert_eq!(from_blocks(&blocks).unwrap().text, "@\"/w/my notes.txt\"");
    }
}
