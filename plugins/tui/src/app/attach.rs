//! Images into the draft (docs/tui.md, "The input"): a pasted or dragged
//! path of an image file, or Ctrl+V with an image on the clipboard, becomes
//! an `[image #n]` marker; core fits the image (upright, 1568 px, 5 MB)
//! when the message is sent.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use uji_protocol::Image;

use super::state::App;
use crate::transcript::Level;

/// Image files larger than this are not read (core would refuse them
/// anyway after scaling; a photo of 50 MB is already unusual).
const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;

/// The media type of an image file, by its extension.
fn media_type(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    match extension.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

/// What a terminal pastes for a dragged file: the path, maybe quoted, maybe
/// a `file://` URL, maybe with `\ ` for spaces.
fn pasted_path(text: &str) -> Option<PathBuf> {
    let text = text.trim();
    if text.is_empty() || text.contains('\n') {
        return None;
    }
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|q| text.strip_prefix(*q).and_then(|t| t.strip_suffix(*q)))
        .unwrap_or(text);
    let path = unquoted.strip_prefix("file://").unwrap_or(unquoted);
    let path = path.replace("\\ ", " ");
    let path = match path.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => PathBuf::from(path),
    };
    Some(path)
}

/// The image a pasted text names, when it is the path of an image file:
/// `None` for any other text, `Some(Err)` for an image that cannot be read.
pub(super) fn image_file(text: &str) -> Option<Result<Image, String>> {
    let path = pasted_path(text)?;
    let media_type = media_type(&path)?;
    let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file())?;
    if meta.len() > MAX_FILE_BYTES {
        return Some(Err(format!(
            "{} is over 50 MB; it was pasted as text, not attached",
            path.display()
        )));
    }
    Some(
        std::fs::read(&path)
            .map(|bytes| Image {
                media_type: media_type.to_string(),
                data: base64::engine::general_purpose::STANDARD.encode(bytes),
                name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
            })
            .map_err(|e| {
                format!(
                    "{} could not be read ({e}); it was pasted as text",
                    path.display()
                )
            }),
    )
}

impl App {
    /// Ctrl+V: the clipboard's image as an attachment, else its text.
    pub(super) fn paste_from_clipboard(&mut self) {
        let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
        if has_display && self.clipboard.is_none() {
            self.clipboard = arboard::Clipboard::new().ok();
        }
        let Some(clipboard) = self.clipboard.as_mut() else {
            return self.notice(
                Level::Warn,
                "there is no system clipboard here: paste with your terminal (often Ctrl+Shift+V), or drop an image file's path into the input",
            );
        };
        match clipboard.get_image() {
            Ok(picture) => match png_of(&picture) {
                Ok(image) => {
                    self.composer.attach_image(image);
                    self.draft_changed();
                }
                Err(why) => self.notice(Level::Warn, why),
            },
            Err(_) => match clipboard.get_text() {
                Ok(text) => {
                    self.composer.paste(&text);
                    self.draft_changed();
                }
                Err(_) => self.notice(Level::Warn, "the clipboard holds no image and no text"),
            },
        }
    }
}

/// The clipboard's pixels (RGBA) as a PNG.
fn png_of(picture: &arboard::ImageData<'_>) -> Result<Image, String> {
    let (width, height) = (
        u32::try_from(picture.width)
            .map_err(|_| "the clipboard's image is too wide".to_string())?,
        u32::try_from(picture.height)
            .map_err(|_| "the clipboard's image is too tall".to_string())?,
    );
    let pixels = image::RgbaImage::from_raw(width, height, picture.bytes.to_vec())
        .ok_or_else(|| "the clipboard's image has fewer pixels than its size says".to_string())?;
    let mut png = Vec::new();
    image::DynamicImage::ImageRgba8(pixels)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| format!("the clipboard's image could not be encoded: {e}"))?;
    Ok(Image {
        media_type: "image/png".to_string(),
        data: base64::engine::general_purpose::STANDARD.encode(png),
        name: Some("clipboard.png".to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dragged_path_is_read_quoted_escaped_or_as_a_file_url() {
        assert_eq!(
            pasted_path("'/tmp/a b.png'"),
            Some(PathBuf::from("/tmp/a b.png"))
        );
        assert_eq!(
            pasted_path("/tmp/a\\ b.png "),
            Some(PathBuf::from("/tmp/a b.png"))
        );
        assert_eq!(
            pasted_path("file:///tmp/x.png"),
            Some(PathBuf::from("/tmp/x.png"))
        );
        assert_eq!(pasted_path("two\nlines"), None);
    }

    #[test]
    fn only_an_existing_image_file_is_attached() {
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("shot.PNG");
        std::fs::write(&shot, b"\x89PNG\r\n\x1a\n").unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "hello").unwrap();
        let image = image_file(&shot.display().to_string()).unwrap().unwrap();
        assert_eq!(image.media_type, "image/png");
        assert_eq!(image.name.as_deref(), Some("shot.PNG"));
        assert!(image_file(&text.display().to_string()).is_none());
        assert!(image_file("/nowhere/missing.png").is_none());
        assert!(image_file("just some words").is_none());
    }
}
