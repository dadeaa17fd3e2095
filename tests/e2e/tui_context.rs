//! Issue 30 in the screen: the `@` file picker, through the real binary
//! in a pseudo-terminal against the fake model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::Sandbox;
use uji_tests::tty::Tty;

fn answer(text: &str) -> Script {
    Script::sse(
        ChatEvents::new("m1")
            .text(text, 2)
            .finish("stop")
            .usage(1000, 50, 0)
            .done(),
    )
}

fn open(model: &FakeModel) -> (Sandbox, Tty) {
    let sandbox = Sandbox::new();
    let init = format!(
        "require(\"uji.defaults\")\n\
         uji.provider.add({{ id = \"fake\", wire = \"openai-chat\", base_url = \"{}\", models = {{ \"m1\" }} }})\n\
         uji.model.use(\"fake/m1\")\n",
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    let work = sandbox.work();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(work.join("docs")).unwrap();
    std::fs::write(work.join("src/parser.rs"), "fn parse_the_input() {}\n").unwrap();
    std::fs::write(work.join("docs/guide.md"), "# Guide\n").unwrap();
    let plugins = uji_tests::plugin_path(&[
        "uji_plugin_tui",
        "uji_plugin_tools",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
    ]);
    let command = sandbox
        .uji_tty()
        .env("UJI_PLUGIN_PATH", plugins)
        .then_stty();
    let tty = Tty::spawn(command, 24, 80);
    tty.wait_for_text("Ask uji anything");
    (sandbox, tty)
}

fn type_keys(tty: &mut Tty, text: &str) {
    for c in text.chars() {
        tty.type_text(&c.to_string());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn at_opens_the_file_list_tab_completes_and_the_model_gets_the_file_not_the_screen() {
    let model = FakeModel::start();
    model.push(answer("It parses."));
    let (_sandbox, mut tty) = open(&model);
    type_keys(&mut tty, "check @");
    let screen = tty.wait_for_text("@src/parser.rs");
    assert!(
        screen.contains("@docs/guide.md"),
        "every file is offered: {screen}"
    );
    type_keys(&mut tty, "parsrs");
    tty.wait_for("the list narrowed", |s| {
        s.contains("@src/parser.rs") && !s.contains("@docs/guide.md")
    });
    tty.press("<Tab>");
    tty.wait_for_text("check @src/parser.rs");
    type_keys(&mut tty, "now");
    tty.press("<CR>");
    let screen = tty.wait_for_text("It parses.");
    assert!(screen.contains("check @src/parser.rs now"), "{screen}");
    assert!(
        !screen.contains("parse_the_input"),
        "the transcript shows the mention, not the file: {screen}"
    );
    let sent = model.last_request().body_text();
    assert!(sent.contains("check @src/parser.rs now"), "{sent}");
    assert!(
        sent.contains("fn parse_the_input()"),
        "the file went as context: {sent}"
    );
    tty.press("<C-c>");
    tty.press("<C-c>");
    assert_eq!(tty.wait_exit(Duration::from_secs(15)), Some(0));
}

#[test]
fn esc_closes_the_file_list_and_enter_then_sends() {
    let model = FakeModel::start();
    model.push(answer("Sent as typed."));
    let (_sandbox, mut tty) = open(&model);
    type_keys(&mut tty, "see @guide");
    tty.wait_for_text("@docs/guide.md");
    tty.press("<Esc>");
    tty.wait_for("the list closed", |s| !s.contains("@docs/guide.md"));
    tty.press("<CR>");
    tty.wait_for_text("Sent as typed.");
    let sent = model.last_request().body_text();
    assert!(sent.contains("see @guide"), "{sent}");
    tty.press("<C-c>");
    tty.press("<C-c>");
    assert_eq!(tty.wait_exit(Duration::from_secs(15)), Some(0));
}
