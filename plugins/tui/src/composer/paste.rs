//! Bracketed pastes too long for the box, kept aside behind a placeholder
//! token such as `[paste #1 +12 lines]` until the draft is sent; and
//! attached images, behind `[image #1]` (the marker stays in the text sent,
//! so the model knows where each image belongs; deleting the marker drops
//! the image).

use std::ops::Range;

/// Pastes of at most this many characters on one line go in as typed.
const INLINE_PASTE_CHARS: usize = 80;

/// Every paste placeholder starts with this; expansion looks for it only.
const TOKEN_PREFIX: &str = "[paste #";
/// Every image marker starts with this.
const IMAGE_PREFIX: &str = "[image #";

struct Paste {
    label: String,
    content: String,
    /// An attached image: its marker is sent as it is, with the image.
    image: Option<uji_protocol::Image>,
}

/// What goes into the draft for a paste.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Stashed {
    /// The placeholder standing for the stashed paste.
    Placeholder(String),
    /// The pasted text itself, short enough to show.
    Inline(String),
}

/// The pastes whose placeholders may appear in the draft or its history.
#[derive(Default)]
pub(super) struct Pastes {
    /// Numbers are never reused, so a label names one paste for good.
    next_number: usize,
    /// Images are numbered apart (`[image #1]` is the first image).
    next_image: usize,
    items: Vec<Paste>,
}

/// Line endings as the draft keeps them: LF only.
pub(super) fn normalize_newlines(text: &str) -> String {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_owned()
    }
}

impl Pastes {
    /// Keeps a paste that is too long to show aside, behind a placeholder.
    pub(super) fn stash(&mut self, content: String) -> Stashed {
        let lines = content.lines().count();
        let label = if lines > 1 {
            format!("{TOKEN_PREFIX}{} +{lines} lines]", self.next_number + 1)
        } else {
            let chars = content.chars().count();
            if chars <= INLINE_PASTE_CHARS {
                return Stashed::Inline(content);
            }
            format!("{TOKEN_PREFIX}{} {chars} chars]", self.next_number + 1)
        };
        self.next_number += 1;
        self.items.push(Paste {
            label: label.clone(),
            content,
            image: None,
        });
        Stashed::Placeholder(label)
    }

    /// Keeps an attached image; returns its marker, `[image #n]`.
    pub(super) fn attach_image(&mut self, image: uji_protocol::Image) -> String {
        self.next_image += 1;
        let label = format!("{IMAGE_PREFIX}{}]", self.next_image);
        self.items.push(Paste {
            label: label.clone(),
            content: label.clone(),
            image: Some(image),
        });
        label
    }

    /// The images whose markers are in `text`, in the order they appear.
    pub(super) fn images_in(&self, text: &str) -> Vec<uji_protocol::Image> {
        let mut found: Vec<(usize, &uji_protocol::Image)> = self
            .items
            .iter()
            .filter_map(|item| Some((text.find(item.label.as_str())?, item.image.as_ref()?)))
            .collect();
        found.sort_by_key(|(at, _)| *at);
        found.into_iter().map(|(_, image)| image.clone()).collect()
    }

    /// The placeholder ending exactly at byte `pos`.
    pub(super) fn token_ending_at(&self, text: &str, pos: usize) -> Option<Range<usize>> {
        let before = text.get(..pos)?;
        self.items
            .iter()
            .find(|paste| before.ends_with(paste.label.as_str()))
            .map(|paste| pos - paste.label.len()..pos)
    }

    /// The placeholder starting exactly at byte `pos`.
    pub(super) fn token_starting_at(&self, text: &str, pos: usize) -> Option<Range<usize>> {
        let after = text.get(pos..)?;
        self.items
            .iter()
            .find(|paste| after.starts_with(paste.label.as_str()))
            .map(|paste| pos..pos + paste.label.len())
    }

    /// The placeholder that has byte `pos` strictly inside it.
    pub(super) fn token_around(&self, text: &str, pos: usize) -> Option<Range<usize>> {
        let longest = self.items.iter().map(|p| p.label.len()).max()?;
        let before = text.get(..pos)?;
        for (start, _) in before.rmatch_indices('[') {
            if start + longest <= pos {
                break;
            }
            if let Some(token) = self.token_starting_at(text, start)
                && token.end > pos
            {
                return Some(token);
            }
        }
        None
    }

    /// Placeholders that lie within `range` of `text`, in order.
    pub(super) fn tokens_in(&self, text: &str, range: Range<usize>) -> Vec<Range<usize>> {
        let Some(slice) = text.get(range.clone()) else {
            return Vec::new();
        };
        let mut tokens: Vec<Range<usize>> = slice
            .match_indices(TOKEN_PREFIX)
            .chain(slice.match_indices(IMAGE_PREFIX))
            .filter_map(|(at, _)| self.token_starting_at(text, range.start + at))
            .filter(|token| token.end <= range.end)
            .collect();
        tokens.sort_by_key(|token| token.start);
        tokens
    }

    /// The draft with every placeholder replaced by its paste, in one pass.
    pub(super) fn expand(&self, text: &str) -> String {
        if self.items.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len() + self.content_len());
        let mut copied = 0;
        for (at, _) in text.match_indices(TOKEN_PREFIX) {
            if at < copied {
                continue;
            }
            let after = &text[at..];
            if let Some(paste) = self.items.iter().find(|p| after.starts_with(&p.label)) {
                out.push_str(&text[copied..at]);
                out.push_str(&paste.content);
                copied = at + paste.label.len();
            }
        }
        out.push_str(&text[copied..]);
        out
    }

    fn content_len(&self) -> usize {
        self.items.iter().map(|paste| paste.content.len()).sum()
    }

    /// Forgets the pastes no longer named by any of `texts`.
    pub(super) fn retain_named_in<'a>(&mut self, texts: impl Iterator<Item = &'a str> + Clone) {
        self.items.retain(|paste| {
            texts
                .clone()
                .any(|text| text.contains(paste.label.as_str()))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label_of(stashed: Stashed) -> String {
        match stashed {
            Stashed::Placeholder(label) => label,
            Stashed::Inline(text) => panic!("not stashed: {text}"),
        }
    }

    #[test]
    fn short_pastes_are_not_stashed() {
        let mut pastes = Pastes::default();
        assert_eq!(
            pastes.stash("x".repeat(80)),
            Stashed::Inline("x".repeat(80))
        );
        assert_eq!(
            pastes.stash("one line\n".to_owned()),
            Stashed::Inline("one line\n".to_owned())
        );
        assert_eq!(
            pastes.stash("y".repeat(81)),
            Stashed::Placeholder("[paste #1 81 chars]".to_owned())
        );
        assert_eq!(
            pastes.stash("a\nb\nc".to_owned()),
            Stashed::Placeholder("[paste #2 +3 lines]".to_owned())
        );
    }

    #[test]
    fn expansion_replaces_each_placeholder_once_per_occurrence() {
        let mut pastes = Pastes::default();
        let label = label_of(pastes.stash("a\nb".to_owned()));
        let text = format!("x {label} y {label} [paste #9 +2 lines]");
        assert_eq!(pastes.expand(&text), "x a\nb y a\nb [paste #9 +2 lines]");
    }

    #[test]
    fn tokens_are_found_around_and_at_positions() {
        let mut pastes = Pastes::default();
        let label = label_of(pastes.stash("a\nb".to_owned()));
        let text = format!("é{label}z");
        let start = "é".len();
        let end = start + label.len();
        assert_eq!(pastes.token_starting_at(&text, start), Some(start..end));
        assert_eq!(pastes.token_ending_at(&text, end), Some(start..end));
        assert_eq!(pastes.token_around(&text, start + 3), Some(start..end));
        assert_eq!(pastes.token_around(&text, start), None);
        assert_eq!(pastes.token_around(&text, end), None);
        assert_eq!(pastes.tokens_in(&text, 0..text.len()), vec![start..end]);
        assert_eq!(
            pastes.tokens_in(&text, 0..end - 1),
            Vec::<std::ops::Range<usize>>::new()
        );
    }

    #[test]
    fn crlf_and_cr_become_lf() {
        assert_eq!(normalize_newlines("a\r\nb\rc\n\td"), "a\nb\nc\n\td");
    }

    fn image(data: &str) -> uji_protocol::Image {
        uji_protocol::Image {
            media_type: "image/png".into(),
            data: data.into(),
            name: None,
        }
    }

    #[test]
    fn images_are_numbered_apart_and_go_in_the_order_their_markers_appear() {
        let mut pastes = Pastes::default();
        assert_eq!(pastes.attach_image(image("one")), "[image #1]");
        label_of(pastes.stash("z".repeat(90)));
        assert_eq!(pastes.attach_image(image("two")), "[image #2]");
        let text = "see [image #2] then [image #1]";
        let sent: Vec<String> = pastes.images_in(text).into_iter().map(|i| i.data).collect();
        assert_eq!(sent, ["two", "one"]);
        assert_eq!(pastes.expand(text), text, "markers stay in the text sent");
        assert_eq!(pastes.tokens_in(text, 0..text.len()), vec![4..14, 20..30]);
        pastes.retain_named_in(["only [image #1]"].into_iter());
        assert_eq!(
            pastes.images_in(text).len(),
            1,
            "a deleted marker drops its image"
        );
    }
}
