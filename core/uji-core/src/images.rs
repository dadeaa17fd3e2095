//! Images the user attaches (docs/context.md, "Images"): each is turned
//! upright, scaled to at most [`MAX_EDGE`] pixels on its long edge and,
//! if still over [`MAX_BYTES`], encoded again smaller, once, when it joins
//! the conversation; and each request carries only the [`MAX_IMAGES`]
//! newest, older ones standing as a note.

use std::io::Cursor;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};
use std::path::{Path, PathBuf};

use uji_host::StreamError;
use uji_protocol::Image;
use uji_protocol::wire::{Failure, Message};

/// The long edge images are scaled down to.
pub const MAX_EDGE: u32 = 1568;
/// The most an image may weigh once encoded.
pub const MAX_BYTES: usize = 5 * 1024 * 1024;
/// Images a request carries at most: the newest.
pub const MAX_IMAGES: usize = 20;
/// The largest image file uji reads to fit (a photo of 50 MB is already
/// unusual; the frontends' pasted paths have the same bound).
pub const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;
/// What stands in for an image left out of a request.
pub const OLDER_IMAGE_NOTE: &str =
    "[an earlier image is not sent again: only the 20 newest images go with a request]";

/// Why an image could not be attached.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImageError {
    #[error("not an image uji reads (PNG, JPEG, GIF or WebP)")]
    Unsupported,
    #[error("the image could not be read: {0}")]
    Broken(String),
    #[error("the image's data is not base64")]
    NotBase64,
    #[error("even scaled down, the image is over 5 MB")]
    TooLarge,
    #[error("the file is {0} MB, over the 50 MB uji reads for an image; attach a smaller one")]
    FileTooLarge(u64),
}

/// An image as it goes to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

fn media_type(format: ImageFormat) -> Option<&'static str> {
    match format {
        ImageFormat::Png => Some("image/png"),
        ImageFormat::Jpeg => Some("image/jpeg"),
        ImageFormat::Gif => Some("image/gif"),
        ImageFormat::WebP => Some("image/webp"),
        _ => None,
    }
}

/// `bytes` (PNG, JPEG, GIF or WebP) fitted: kept as they are when already
/// upright, small enough and light enough; else decoded, turned upright by
/// its EXIF orientation, scaled down and encoded again (PNG, or JPEG when
/// the PNG would be too heavy or the source was a JPEG).
pub fn fit(bytes: &[u8]) -> Result<Fitted, ImageError> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ImageError::Broken(e.to_string()))?;
    let format = reader.format().ok_or(ImageError::Unsupported)?;
    let original_type = media_type(format).ok_or(ImageError::Unsupported)?;
    let mut decoder = reader
        .into_decoder()
        .map_err(|e| ImageError::Broken(e.to_string()))?;
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let (width, height) = decoder.dimensions();
    let upright = orientation == image::metadata::Orientation::NoTransforms;
    if upright && width.max(height) <= MAX_EDGE && bytes.len() <= MAX_BYTES {
        return Ok(Fitted {
            media_type: original_type,
            bytes: bytes.to_vec(),
            width,
            height,
        });
    }
    let mut picture =
        DynamicImage::from_decoder(decoder).map_err(|e| ImageError::Broken(e.to_string()))?;
    picture.apply_orientation(orientation);
    if picture.width().max(picture.height()) > MAX_EDGE {
        picture = scale_down(&picture)?;
    }
    encode(&picture, format == ImageFormat::Jpeg)
}

/// `picture` scaled so its long edge is [`MAX_EDGE`], its shape kept, by
/// fast_image_resize (SIMD; a 4000×3000 picture in a few milliseconds
/// where the image crate's own filter takes a quarter of a second).
fn scale_down(picture: &DynamicImage) -> Result<DynamicImage, ImageError> {
    let (width, height) = (picture.width(), picture.height());
    let scale = f64::from(MAX_EDGE) / f64::from(width.max(height));
    let size = |edge: u32| ((f64::from(edge) * scale).round() as u32).clamp(1, MAX_EDGE);
    let mut scaled = DynamicImage::new(size(width), size(height), picture.color());
    let options = fast_image_resize::ResizeOptions::new().resize_alg(
        fast_image_resize::ResizeAlg::Convolution(fast_image_resize::FilterType::Bilinear),
    );
    fast_image_resize::Resizer::new()
        .resize(picture, &mut scaled, &options)
        .map_err(|e| ImageError::Broken(e.to_string()))?;
    Ok(scaled)
}

/// The smallest of a few encodings that fits: PNG first (unless the source
/// was a photo in JPEG), then JPEG at falling quality.
fn encode(picture: &DynamicImage, photo: bool) -> Result<Fitted, ImageError> {
    let (width, height) = (picture.width(), picture.height());
    let fitted = |media_type, bytes: Vec<u8>| {
        (bytes.len() <= MAX_BYTES).then_some(Fitted {
            media_type,
            bytes,
            width,
            height,
        })
    };
    if !photo {
        let mut png = Vec::new();
        // Fast compression: a few percent larger, several times quicker
        // to write than the default, and the model reads pixels, not bytes.
        let encoder = PngEncoder::new_with_quality(
            &mut png,
            image::codecs::png::CompressionType::Fast,
            image::codecs::png::FilterType::Adaptive,
        );
        picture
            .write_with_encoder(encoder)
            .map_err(|e| ImageError::Broken(e.to_string()))?;
        if let Some(fitted) = fitted("image/png", png) {
            return Ok(fitted);
        }
    }
    // JPEG has no alpha: flatten to RGB first.
    let rgb = DynamicImage::ImageRgb8(picture.to_rgb8());
    for quality in [85, 70, 50] {
        let mut jpeg = Vec::new();
        rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut jpeg, quality))
            .map_err(|e| ImageError::Broken(e.to_string()))?;
        if let Some(fitted) = fitted("image/jpeg", jpeg) {
            return Ok(fitted);
        }
    }
    Err(ImageError::TooLarge)
}

/// An attached image (base64) fitted, its name kept.
pub fn fit_image(image: &Image) -> Result<Image, ImageError> {
    let bytes = STANDARD
        .decode(image.data.trim())
        .map_err(|_| ImageError::NotBase64)?;
    let fitted = fit(&bytes)?;
    Ok(Image {
        media_type: fitted.media_type.to_string(),
        data: STANDARD.encode(&fitted.bytes),
        name: image.name.clone(),
    })
}

/// Opens `path` for [`fit_opened`] without blocking (a FIFO put in its
/// place cannot hang the turn); `Ok(None)` for anything but a regular
/// file. Also gives the path the opened file really has (links followed),
/// for the caller to check against the policy: a link or folder swapped in
/// since the path was checked shows there.
pub fn open_regular(path: &Path) -> Result<Option<(std::fs::File, PathBuf)>, ImageError> {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let broken = |e: std::io::Error| ImageError::Broken(e.to_string());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(broken)?;
    if !file.metadata().map_err(broken)?.is_file() {
        return Ok(None);
    }
    let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(broken)?;
    Ok(Some((file, real)))
}

/// The image file `path`, opened by [`open_regular`], read and fitted
/// ([`fit`]), named by its file name; `Ok(None)` when its first bytes are
/// not those of a PNG, JPEG, GIF or WebP (a text file, say).
pub fn fit_opened(mut file: std::fs::File, path: &Path) -> Result<Option<Image>, ImageError> {
    use std::io::Read as _;
    let broken = |e: std::io::Error| ImageError::Broken(e.to_string());
    let mut head = Vec::with_capacity(16);
    (&mut file)
        .take(16)
        .read_to_end(&mut head)
        .map_err(broken)?;
    let supported = image::guess_format(&head).ok().and_then(media_type);
    if supported.is_none() {
        return Ok(None);
    }
    let size = file.metadata().map_err(broken)?.len();
    if size > MAX_FILE_BYTES {
        return Err(ImageError::FileTooLarge(size.div_ceil(1024 * 1024)));
    }
    let mut bytes = head;
    // Bounded even if the file grew since its size was read.
    (&mut file)
        .take(MAX_FILE_BYTES + 1 - bytes.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(broken)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ImageError::FileTooLarge(
            bytes.len().div_ceil(1024 * 1024) as u64
        ));
    }
    let fitted = fit(&bytes)?;
    Ok(Some(Image {
        media_type: fitted.media_type.to_string(),
        data: STANDARD.encode(&fitted.bytes),
        name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
    }))
}

/// Whether `error` is an API refusing a request for its images: a client
/// error (400, 415, 422) or a provider error whose message speaks of
/// images. Only asked when the request carried images.
pub fn is_image_refusal(error: &StreamError) -> bool {
    let message = match error {
        StreamError::Failure(Failure::Http {
            status: Some(400 | 415 | 422),
            message,
            ..
        })
        | StreamError::Failure(Failure::Provider { message }) => message,
        _ => return false,
    };
    let message = message.to_ascii_lowercase();
    ["image", "vision", "multimodal"]
        .iter()
        .any(|word| message.contains(word))
}

/// Where uji remembers the models that refused images.
const REMEMBERED: &str = "models-without-images.json";

/// Whether `model` (`provider/model`) refused images before.
pub fn remembered_without_images(data_dir: &Path, model: &str) -> bool {
    std::fs::read(data_dir.join(REMEMBERED))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Vec<String>>(&bytes).ok())
        .is_some_and(|models| models.iter().any(|m| m == model))
}

/// Remembers that `model` takes no images (written whole through a rename,
/// so a crash leaves the old list or the new one).
pub fn remember_without_images(data_dir: &Path, model: &str) -> std::io::Result<()> {
    let path = data_dir.join(REMEMBERED);
    let mut models: Vec<String> = std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    if models.iter().any(|m| m == model) {
        return Ok(());
    }
    models.push(model.to_string());
    std::fs::create_dir_all(data_dir)?;
    let temporary = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&temporary, serde_json::to_vec_pretty(&models)?)?;
    std::fs::rename(&temporary, &path)
}

/// A message's images and the text their notes go into; `None` for an
/// assistant's message, which carries none.
fn images_and_text(message: &mut Message) -> Option<(&mut Vec<Image>, &mut String)> {
    match message {
        Message::User { images, text } => Some((images, text)),
        Message::Tool {
            images, content, ..
        } => Some((images, content)),
        Message::Assistant { .. } => None,
    }
}

/// Takes the first (oldest) `count` of `images` out, a `note` in `text`
/// for each.
fn leave_out_oldest(images: &mut Vec<Image>, text: &mut String, count: usize, note: &str) {
    let count = count.min(images.len());
    images.drain(..count);
    for _ in 0..count {
        text.push('\n');
        text.push_str(note);
    }
}

/// Takes every image out of `messages`, each replaced by `note` in its
/// message's text: for a model that takes none.
pub fn leave_out_all(messages: &mut [Message], note: &str) {
    for (images, text) in messages.iter_mut().filter_map(images_and_text) {
        let count = images.len();
        leave_out_oldest(images, text, count, note);
    }
}

/// Leaves in `messages` only the [`MAX_IMAGES`] newest images (of users'
/// messages and tool results alike); each older one becomes a note in its
/// message's text.
pub fn keep_newest(messages: &mut [Message]) {
    let mut seen = 0usize;
    for (images, text) in messages.iter_mut().rev().filter_map(images_and_text) {
        let room = MAX_IMAGES.saturating_sub(seen);
        seen += images.len();
        // The newest of a message's images are its last ones.
        let dropped = images.len().saturating_sub(room);
        leave_out_oldest(images, text, dropped, OLDER_IMAGE_NOTE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image file at `path` opened and fitted, as the mentions do.
    fn fit_file(path: &Path) -> Result<Option<Image>, ImageError> {
        match open_regular(path)? {
            Some((file, _)) => fit_opened(file, path),
            None => Ok(None),
        }
    }
    use image::{ImageBuffer, Rgba};

    fn png(width: u32, height: u32) -> Vec<u8> {
        let picture = ImageBuffer::from_fn(width, height, |x, y| {
            Rgba([(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8, 255])
        });
        let mut bytes = Vec::new();
        DynamicImage::ImageRgba8(picture)
            .write_with_encoder(PngEncoder::new(&mut bytes))
            .unwrap();
        bytes
    }

    #[test]
    fn a_small_image_is_kept_byte_for_byte() {
        let bytes = png(40, 30);
        let fitted = fit(&bytes).unwrap();
        assert_eq!(fitted.bytes, bytes);
        assert_eq!(
            (fitted.width, fitted.height, fitted.media_type),
            (40, 30, "image/png")
        );
    }

    #[test]
    fn a_large_image_is_scaled_to_the_long_edge_keeping_its_shape() {
        // (Small enough to keep the debug build's test quick; the
        // 4000×3000 case is the benchmark's.)
        let fitted = fit(&png(1600, 1200)).unwrap();
        assert_eq!((fitted.width, fitted.height), (1568, 1176));
        let decoded = image::load_from_memory(&fitted.bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (1568, 1176));
        assert!(fitted.bytes.len() <= MAX_BYTES);
    }

    /// A JPEG of `width`×`height` whose EXIF says "turn 90° clockwise".
    fn sideways_jpeg(width: u32, height: u32) -> Vec<u8> {
        let picture = DynamicImage::ImageRgb8(ImageBuffer::from_pixel(
            width,
            height,
            image::Rgb([200, 10, 10]),
        ));
        let mut jpeg = Vec::new();
        picture
            .write_with_encoder(JpegEncoder::new_with_quality(&mut jpeg, 90))
            .unwrap();
        // APP1 "Exif": a big-endian TIFF header and one IFD entry,
        // Orientation (0x0112), SHORT, 1, value 6.
        let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08\0\x01".to_vec();
        exif.extend_from_slice(&[0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1, 0x00, 0x06, 0, 0]);
        exif.extend_from_slice(&[0, 0, 0, 0]);
        let length = u16::try_from(exif.len() + 2).unwrap().to_be_bytes();
        let mut out = jpeg[..2].to_vec();
        out.extend_from_slice(&[0xff, 0xe1, length[0], length[1]]);
        out.extend_from_slice(&exif);
        out.extend_from_slice(&jpeg[2..]);
        out
    }

    #[test]
    fn a_file_is_fitted_when_its_bytes_are_an_image_and_left_alone_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.png");
        std::fs::write(&notes, "text, whatever its name says").unwrap();
        assert_eq!(fit_file(&notes), Ok(None));
        let shot = dir.path().join("shot.png");
        std::fs::write(&shot, png(1600, 800)).unwrap();
        let image = fit_file(&shot).unwrap().unwrap();
        assert_eq!(image.name.as_deref(), Some("shot.png"));
        let bytes = STANDARD.decode(&image.data).unwrap();
        let decoded = image::load_from_memory(&bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (1568, 784));
        assert!(fit_file(&dir.path().join("gone.png")).is_err());
    }

    #[test]
    fn a_fifo_in_an_images_place_is_not_read_and_a_link_names_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("shot.png");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Opened without blocking, seen not to be a file: nothing is read,
        // and nothing waits for a writer.
        assert_eq!(fit_file(&fifo), Ok(None));
        let real = dir.path().join("real.png");
        std::fs::write(&real, png(10, 10)).unwrap();
        let link = dir.path().join("link.png");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let (_, path) = open_regular(&link).unwrap().unwrap();
        assert_eq!(path, real.canonicalize().unwrap(), "what the policy checks");
    }

    #[test]
    fn an_image_is_turned_upright_by_its_exif_orientation() {
        let fitted = fit(&sideways_jpeg(40, 20)).unwrap();
        assert_eq!((fitted.width, fitted.height), (20, 40));
        assert_eq!(fitted.media_type, "image/jpeg");
    }

    #[test]
    fn what_is_not_an_image_is_refused_with_a_reason() {
        assert_eq!(
            fit(b"plain text, not a picture"),
            Err(ImageError::Unsupported)
        );
        let broken = &png(10, 10)[..20];
        assert!(matches!(fit(broken), Err(ImageError::Broken(_))));
    }

    fn user(images: usize) -> Message {
        Message::User {
            text: "look".into(),
            images: (0..images)
                .map(|i| Image {
                    media_type: "image/png".into(),
                    data: format!("{i}"),
                    name: None,
                })
                .collect(),
        }
    }

    #[test]
    fn an_image_refusal_is_a_client_error_that_speaks_of_images() {
        let http = |status, message: &str| {
            StreamError::Failure(Failure::Http {
                status: Some(status),
                message: message.into(),
                transport: None,
                retry_after: None,
            })
        };
        assert!(is_image_refusal(&http(
            400,
            "Image input is not supported for this model"
        )));
        assert!(is_image_refusal(&StreamError::Failure(Failure::Provider {
            message: "model does not support vision".into()
        })));
        assert!(!is_image_refusal(&http(400, "max_tokens is too large")));
        assert!(!is_image_refusal(&http(500, "image service down")));
        assert!(!is_image_refusal(&http(429, "too many images per minute")));
    }

    #[test]
    fn a_refusal_is_remembered_once_per_model() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!remembered_without_images(dir.path(), "p/m"));
        remember_without_images(dir.path(), "p/m").unwrap();
        remember_without_images(dir.path(), "p/m").unwrap();
        assert!(remembered_without_images(dir.path(), "p/m"));
        assert!(!remembered_without_images(dir.path(), "p/other"));
        let text = std::fs::read_to_string(dir.path().join(REMEMBERED)).unwrap();
        assert_eq!(text.matches("p/m").count(), 1);
    }

    #[test]
    fn a_model_without_images_gets_a_note_for_each() {
        let mut messages = vec![user(2), user(1)];
        leave_out_all(&mut messages, "[no images here]");
        for message in &messages {
            let Message::User { images, .. } = message else {
                panic!()
            };
            assert!(images.is_empty());
        }
        let Message::User { text, .. } = &messages[0] else {
            panic!()
        };
        assert_eq!(text, "look\n[no images here]\n[no images here]");
    }

    #[test]
    fn only_the_twenty_newest_images_go_and_older_ones_leave_a_note() {
        let mut messages = vec![user(3), user(10), user(10)];
        keep_newest(&mut messages);
        let counts: Vec<usize> = messages
            .iter()
            .map(|m| match m {
                Message::User { images, .. } => images.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(counts, vec![0, 10, 10]);
        let Message::User { text, .. } = &messages[0] else {
            panic!()
        };
        assert_eq!(text.matches(OLDER_IMAGE_NOTE).count(), 3);
        let mut split = vec![user(15), user(10)];
        keep_newest(&mut split);
        let Message::User { images, text } = &split[0] else {
            panic!()
        };
        assert_eq!(images.len(), 10, "the message's newest five go");
        assert_eq!(images[0].data, "5");
        assert_eq!(text.matches(OLDER_IMAGE_NOTE).count(), 5);
    }
}
