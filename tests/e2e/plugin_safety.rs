//! Plugins that must not hurt uji: a truncated library is refused before it
//! is mapped, files others could change are refused as ssh refuses its
//! keys, and a native plugin cannot take another plugin's tool unless the
//! user's init.lua allows it. The real binary, the shipped plugins next to
//! it and the fixtures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::{Sandbox, artifact, plugin_dir, text};

fn uji(sandbox: &Sandbox, plugins: &Path, args: &[&str]) -> Output {
    sandbox
        .uji()
        .env("UJI_PLUGIN_PATH", plugins)
        .args(args)
        .output()
        .unwrap()
}

/// The line of `uji plugins` output naming `needle`.
fn line_with<'a>(stdout: &'a str, needle: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} in:\n{stdout}"))
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_truncated_library_is_refused_with_a_message_and_the_others_work() {
    let dir = plugin_dir(&["hello_tool"]);
    let whole = std::fs::read(artifact("hello_tool")).unwrap();
    std::fs::write(dir.path().join("libcut3000.so"), &whole[..3000]).unwrap();
    std::fs::write(dir.path().join("libhalf.so"), &whole[..whole.len() / 2]).unwrap();
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("notes.txt"), "one two\n").unwrap();

    let plugins = uji(&sandbox, dir.path(), &["plugins"]);
    let (stdout, stderr) = text(&plugins);
    assert!(plugins.status.success(), "{stderr}");
    for cut in ["libcut3000.so", "libhalf.so"] {
        let line = line_with(&stdout, cut);
        assert!(
            line.contains("not a loadable shared library (")
                && line.contains("it is truncated or damaged")
                && line.contains("rebuild or reinstall the plugin"),
            "{line}"
        );
    }
    assert!(line_with(&stdout, "hello-tool").contains("word_count"));

    let run = uji(
        &sandbox,
        dir.path(),
        &["tool", "run", "word_count", r#"{"path":"notes.txt"}"#],
    );
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    assert!(stdout.contains("1 lines, 2 words"), "{stdout}");
    assert!(
        stderr.contains("libcut3000.so failed to load: not a loadable shared library"),
        "{stderr}"
    );

    let model = FakeModel::start();
    model.push(Script::sse(
        ChatEvents::new("m")
            .text("still here", 1)
            .finish("stop")
            .done(),
    ));
    let run = sandbox
        .uji()
        .env("UJI_PLUGIN_PATH", dir.path())
        .env("OPENROUTER_API_KEY", "sk-test")
        .env("OPENROUTER_BASE_URL", model.base_url())
        .args(["run", "--model", "openrouter/m", "hello"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    assert_eq!(stdout, "still here\n");
    assert!(
        stderr.contains("libhalf.so failed to load: not a loadable shared library"),
        "{stderr}"
    );
}

#[test]
fn plugins_others_could_change_are_refused_with_how_to_fix_it() {
    let dir = plugin_dir(&["hello_tool"]);
    let sandbox = Sandbox::new();
    let lib = dir.path().join("libhello_tool.so");

    chmod(dir.path(), 0o777);
    let output = uji(&sandbox, dir.path(), &["plugins"]);
    let stdout = text(&output).0;
    assert!(output.status.success());
    let line = line_with(&stdout, "libhello_tool.so:");
    let expected = format!(
        "{} is writable by other users (mode 777), so they could change the code uji runs; make it writable by you alone with `chmod go-w {}`",
        dir.path().display(),
        dir.path().display()
    );
    assert!(line.contains(&expected), "{line}");
    assert!(!stdout.contains("word_count"), "{stdout}");

    chmod(dir.path(), 0o755);
    chmod(&lib, 0o757);
    let stdout = text(&uji(&sandbox, dir.path(), &["plugins"])).0;
    let line = line_with(&stdout, "libhello_tool.so:");
    assert!(
        line.contains("libhello_tool.so is writable by other users (mode 757)")
            && line.contains("chmod go-w"),
        "{line}"
    );

    chmod(&lib, 0o755);
    let stdout = text(&uji(&sandbox, dir.path(), &["plugins"])).0;
    assert!(line_with(&stdout, "hello-tool").contains("word_count"));

    // Owned by another user who is not root (only root can arrange that).
    if rustix_is_root() {
        std::os::unix::fs::chown(&lib, Some(4242), None).unwrap();
        let stdout = text(&uji(&sandbox, dir.path(), &["plugins"])).0;
        let line = line_with(&stdout, "libhello_tool.so:");
        assert!(
            line.contains("belongs to user 4242, not to you or root"),
            "{line}"
        );
        std::os::unix::fs::chown(&lib, Some(0), None).unwrap();
        std::os::unix::fs::chown(dir.path(), Some(4242), None).unwrap();
        let stdout = text(&uji(&sandbox, dir.path(), &["plugins"])).0;
        let line = line_with(&stdout, "libhello_tool.so:");
        let expected = format!("{} belongs to user 4242", dir.path().display());
        assert!(line.contains(&expected), "{line}");
    }
}

fn rustix_is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

const CLASH_REFUSED: &str = "tool read_file is already provided by plugin tools, and a plugin cannot replace another plugin's tool; to let plugin fixture-tool-clash replace it, add uji.plugins.allow_replace({ \"read_file\" }) to init.lua";

#[test]
fn a_native_plugin_cannot_replace_another_plugins_tool_unless_init_lua_allows_it() {
    let dir = plugin_dir(&["uji_fixture_tool_clash"]);
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "real content\n").unwrap();

    let output = uji(&sandbox, dir.path(), &["plugins"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let refused = line_with(&stdout, "refused:");
    assert_eq!(
        refused,
        format!("refused: plugin fixture-tool-clash: {CLASH_REFUSED}")
    );
    // The plugin got the error from register_tool, kept loading, and could
    // not lift the rule itself.
    assert!(
        stderr.contains(&format!("register_tool(read_file) failed: {CLASH_REFUSED}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("only the user's config (init.lua) may allow replacing tools"),
        "{stderr}"
    );
    assert!(line_with(&stdout, "fixture-tool-clash ").contains("tools: clash_probe  "));
    let read = read_a_txt(&sandbox, dir.path());
    assert!(read.contains("real content"), "{read}");

    std::fs::write(
        sandbox.config().join("init.lua"),
        "require(\"uji.defaults\")\nuji.notify(\"now: \" .. table.concat(uji.plugins.allow_replace(\"read_file\"), \",\"))\n",
    )
    .unwrap();
    let (stdout, stderr) = text(&uji(&sandbox, dir.path(), &["plugins"]));
    assert!(stderr.contains("uji: lua: now: read_file"), "{stderr}");
    // Allowed after the fact: the plugin's own call still got the error.
    assert!(
        stderr.contains("register_tool(read_file) failed"),
        "{stderr}"
    );
    assert!(!stdout.contains("refused:"), "{stdout}");
    assert!(
        stdout.contains("replaced: tool read_file of plugin tools, by plugin fixture-tool-clash"),
        "{stdout}"
    );
    let list = text(&uji(&sandbox, dir.path(), &["tool", "list"])).0;
    assert!(
        list.contains("read_file\task\tfixture-tool-clash (replaces tools)\t"),
        "{list}"
    );
    let read = read_a_txt(&sandbox, dir.path());
    assert_eq!(read, "read by fixture-tool-clash\n");
}

fn read_a_txt(sandbox: &Sandbox, plugins: &Path) -> String {
    let output = uji(
        sandbox,
        plugins,
        &["tool", "run", "--yes", "read_file", r#"{"path":"a.txt"}"#],
    );
    text(&output).0
}

#[test]
fn uji_tool_list_shows_a_lua_tool_replacing_a_plugins_tool() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config().join("init.lua"),
        r#"uji.tool.add("read_file", { description = "Lua's read_file.", run = function() return "from lua" end })"#,
    )
    .unwrap();
    let output = uji(&sandbox, dir.path(), &["tool", "list"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        line_with(&stdout, "read_file\t").contains("\tlua (replaces tools)\tLua's read_file."),
        "{stdout}"
    );
    let plugins = text(&uji(&sandbox, dir.path(), &["plugins"])).0;
    assert!(
        plugins.contains("replaced: tool read_file of plugin tools, by plugin lua"),
        "{plugins}"
    );
}
