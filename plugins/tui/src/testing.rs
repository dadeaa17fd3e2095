//! Helpers for the crate's unit tests.

use ratatui::buffer::Buffer;

/// The text of each row of `buf`, trailing spaces trimmed.
pub(crate) fn buffer_rows(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            let row: String = (area.left()..area.right())
                .map(|x| buf[(x, y)].symbol())
                .collect();
            row.trim_end().to_string()
        })
        .collect()
}
