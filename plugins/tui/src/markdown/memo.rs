//! Colours already computed for the code blocks of the chunk being
//! streamed: a chunk is drawn again each frame while it grows, and without
//! this its code would be coloured again each frame.

use super::code::{CodeLines, Pieces, code_lines};
use crate::theme::Theme;

/// The colouring of the code blocks of the last drawing, by position in the
/// chunk; a block whose text grew from the kept one continues from it.
#[derive(Default)]
pub(crate) struct CodeMemo {
    previous: Vec<Option<Block>>,
    current: Vec<Option<Block>>,
}

struct Block {
    lang: String,
    /// The whole lines coloured so far.
    code: String,
    pieces: Vec<Pieces>,
    lines: CodeLines,
}

impl CodeMemo {
    /// The pieces of every line of the next block of the drawing.
    pub(crate) fn block(&mut self, lang: &str, code: &str, styles: &Theme) -> Vec<Pieces> {
        let index = self.current.len();
        let kept = self.previous.get_mut(index).and_then(Option::take);
        let mut block = match kept {
            Some(block) if block.lang == lang && code.starts_with(&block.code) => block,
            _ => Block {
                lang: lang.to_owned(),
                code: String::new(),
                pieces: Vec::new(),
                lines: CodeLines::new(lang, styles),
            },
        };
        let whole = code.rfind('\n').map_or(0, |n| n + 1);
        if let Some(new) = code.get(block.code.len()..whole) {
            for line in code_lines(new) {
                let pieces = block.lines.push(line);
                block.pieces.push(pieces);
            }
            block.code.push_str(new);
        }
        let mut all = block.pieces.clone();
        if let Some(partial) = code.get(whole..).filter(|rest| !rest.is_empty()) {
            all.push(
                block
                    .lines
                    .peek(partial.strip_suffix('\r').unwrap_or(partial)),
            );
        }
        self.current.push(Some(block));
        all
    }

    /// Ends a drawing: its blocks are the ones the next drawing may reuse.
    pub(crate) fn finish_drawing(&mut self) {
        self.previous = std::mem::take(&mut self.current);
    }
}
