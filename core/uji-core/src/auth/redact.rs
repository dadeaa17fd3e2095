//! Keeping API keys out of everything uji saves or shows.

/// What replaces a key in saved and shown text.
pub const REDACTED: &str = "<redacted>";

/// Keys shorter than this are not looked for: they would match ordinary
/// text.
const MIN_SECRET_LEN: usize = 8;

/// Replaces every secret (8 characters or more) in `text`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| s.len() >= MIN_SECRET_LEN) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    out
}

/// Redacts text that arrives in pieces, where a key may be split between
/// two pieces: the end of a piece that could be the start of a key is held
/// back until the next piece (or [`StreamRedactor::flush`]) shows what it
/// is. Text that cannot start a key is passed on at once.
#[derive(Debug, Default)]
pub struct StreamRedactor {
    secrets: Vec<String>,
    held: String,
}

impl StreamRedactor {
    pub fn new(secrets: &[String]) -> StreamRedactor {
        StreamRedactor {
            secrets: secrets
                .iter()
                .filter(|s| s.len() >= MIN_SECRET_LEN)
                .cloned()
                .collect(),
            held: String::new(),
        }
    }

    /// The text that can be shown now, given the next `piece`.
    pub fn push(&mut self, piece: &str) -> String {
        if self.secrets.is_empty() {
            return piece.to_string();
        }
        self.held.push_str(piece);
        let text = redact(&self.held, &self.secrets);
        let keep = self.partial_key_len(&text);
        let cut = text.len() - keep;
        self.held = text.get(cut..).unwrap_or_default().to_string();
        text.get(..cut).unwrap_or_default().to_string()
    }

    /// What is still held back: the stream ended, so it is no key.
    pub fn flush(&mut self) -> String {
        std::mem::take(&mut self.held)
    }

    /// Length of the longest end of `text` that is the start of a key (and
    /// not a whole key, which `redact` has replaced already).
    fn partial_key_len(&self, text: &str) -> usize {
        let mut longest = 0;
        for secret in &self.secrets {
            let most = secret.len().saturating_sub(1).min(text.len());
            for len in (longest + 1..=most).rev() {
                let (Some(start), Some(end)) = (secret.get(..len), text.get(text.len() - len..))
                else {
                    continue;
                };
                if start == end {
                    longest = len;
                    break;
                }
            }
        }
        longest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-0123456789abcdef";

    fn streamed(pieces: &[&str]) -> String {
        let mut r = StreamRedactor::new(&[KEY.to_string()]);
        let mut out: String = pieces.iter().map(|p| r.push(p)).collect();
        out.push_str(&r.flush());
        out
    }

    #[test]
    fn a_key_split_anywhere_is_redacted() {
        let text = format!("the key is {KEY}, keep it safe");
        for cut in 0..=text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(
                streamed(&[a, b]),
                "the key is <redacted>, keep it safe",
                "cut at {cut}"
            );
        }
        // One character at a time.
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(streamed(&pieces), "the key is <redacted>, keep it safe");
    }

    #[test]
    fn only_a_possible_key_start_is_held() {
        let mut r = StreamRedactor::new(&[KEY.to_string()]);
        assert_eq!(r.push("plain text "), "plain text ");
        assert_eq!(r.push("and sk-te"), "and ");
        assert_eq!(r.push("a"), "sk-tea");
        assert_eq!(r.push(" then sk"), " then ");
        assert_eq!(r.flush(), "sk");
        // Without keys nothing is held.
        let mut none = StreamRedactor::new(&["short".to_string()]);
        assert_eq!(none.push("sho"), "sho");
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let mut r = StreamRedactor::new(&["ééééééééé-key".to_string()]);
        assert_eq!(r.push("ab é"), "ab ");
        assert_eq!(r.push("x"), "éx");
        assert_eq!(streamed(&["日本語", "テキスト"]), "日本語テキスト");
    }
}
