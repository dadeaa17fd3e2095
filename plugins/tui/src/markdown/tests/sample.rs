use super::*;
use crate::markdown::render;

#[test]
fn print_sample() {
    let text = "# Title\n\nSome *emphasis*, **strong**, ~~gone~~ and `code` with a [link](http://x.com).\nSoft break here.  \nHard break.\n\n- one\n- two\n  - nested\n- [ ] task\n- [x] done\n\n1. first\n2. second\n\n> quoted text that is long enough to wrap around the screen width for sure, yes indeed\n> > nested quote\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| Name | Value |\n|:-----|------:|\n| a | 1 |\n| longer name | 22 |\n\n---\n\n<div>\nhtml\n</div>\n";
    let lines = render(text, 40, &colored());
    println!("{}", plain(&lines));
    println!("{}", marked(&lines));
    assert_fits(&lines, 40);
}
