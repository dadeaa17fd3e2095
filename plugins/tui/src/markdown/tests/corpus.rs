//! Markdown texts the tests stream and draw.

/// A small deterministic generator (xorshift), so failures repeat.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Short texts covering each construct and the places chunks are cut.
pub(crate) const SHORT: &[&str] = &[
    "# Title\n\nA paragraph with *emphasis*, **strong**, ~~strike~~, `code` and a [link](https://example.com).\nIt goes on.  \nAfter a hard break.\n",
    "- one\n- two\n  - nested *a*\n  - nested b\n- three\n\n1. first\n2. second\n\n   still second\n3. third\n\nAfter the list.\n",
    "- [ ] todo\n- [x] done\n\n> quote line one\n> line two\n>\n> > nested quote\n\nText after.\n",
    "Intro:\n```rust\nfn main() {\n    let x = 1; // note\n\n    println!(\"{x}\");\n}\n```\nAfter the code.\n\n~~~\nplain ~~~ inside\n~~~\n",
    "| Name | Value | Note |\n|:-----|------:|:----:|\n| a | 1 | x |\n| longer name | 22 | `y` |\n| **bold** | 333 | [l](u) |\nno pipe here\n\n| a |\n|---|\n| 1 |\n",
    "<div>\n<p>html block</p>\n\n</div>\n\n<!-- a comment\n\nspanning blank lines -->\nafter\n",
    "Setext\n======\n\nAnother\n-------\n\n***\n\n    indented code\n\n    more of it\nback to text\n",
    "- item with code:\n  ```python\n  def f():\n\n      return 1\n  ```\n- next item\n\n> quoted\n> ```\n> code in quote\n> ```\n",
    "Unicode: 日本語のテキストと絵文字 👩‍👩‍👧 e\u{301} combining, tabs\tinside.\r\nCRLF line.\r\n\r\n# Heading\r\n",
    "[ref]: https://example.com\n\nUse [ref] here.\n\nAutolink <https://a.b/c> and <me@x.org>.\n\n![alt text](img.png)\n",
    "```\nunclosed fence\nwith lines\n\n# not a heading\n",
    "Para\n# Heading right after\nText right after\n***\nAfter rule\n```js\nlet a = `tick`;\n```\n| x | y |\n|---|---|\n| 1 | 2 |\n",
    "1. a\n\n2. b\n\n   - c\n\n     d\n\n10. e\n",
    "Line ending in two spaces  \n\n<br>\n\nA<br>B and <kbd>Ctrl</kbd>\n\n<details>\n<summary>More</summary>\n\nInside\n\n</details>\n",
];

/// A long text of typical answers: prose, lists, code, tables and quotes
/// mixed, `repeat` times with variations.
pub(crate) fn typical(repeat: usize) -> String {
    let mut out = String::new();
    for i in 0..repeat {
        out.push_str(&format!("## Section {i}\n\n"));
        out.push_str("Here is an explanation of the change, with **important** points and `inline_code()` calls. ");
        out.push_str("It spans several sentences so that it wraps over a few lines at any width; see [the docs](https://docs.example.com/page) for more.\n\n");
        out.push_str("1. First, update the configuration:\n   ```toml\n   [package]\n   name = \"demo\"\n   ```\n2. Then run the tests.\n3. Finally, *commit*.\n\n");
        out.push_str(
            "- a bullet\n- another bullet with a longer text that wraps around\n  - nested\n\n",
        );
        out.push_str("```python\nimport sys\n\ndef main(argv):\n    \"\"\"Entry point.\"\"\"\n    for arg in argv:\n        print(f\"{arg!r}\")  # echo\n    return 0\n```\n\n");
        out.push_str("| Option | Default | Meaning |\n|---|:---:|---|\n| `width` | 80 | columns |\n| `color` | yes | use colours |\n\n");
        out.push_str("> Note: quoted remarks\n> over two lines.\n\n");
        if i % 7 == 3 {
            out.push_str(
                "<details>\n<summary>Log</summary>\n\n```\nline 1\nline 2\n```\n</details>\n\n",
            );
        }
        if i % 5 == 1 {
            out.push_str("Unicode: 日本語 👍🏽 café\n\n---\n\n");
        }
    }
    out
}
