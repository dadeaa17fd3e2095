//! Installing uji: the release archive (scripts/dist.sh) unpacked into a
//! fresh prefix and run, install.sh into a prefix and out again, the
//! completions loaded by bash, the Debian package's contents, and `uji
//! doctor` naming a broken init.lua and a plugin directory others can
//! write, each with its fix.
//!
//! The archive packs the artefacts this test suite was built with
//! (target/debug under `cargo test`): the suite never builds a release.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use uji_fake_model::FakeModel;
use uji_tests::chat::answer;
use uji_tests::{Sandbox, target_dir, text};

/// The checkout's root (this crate is `tests/`).
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The `[lib]` names of the shipped plugins: every cdylib under plugins/,
/// read from the workspace itself rather than from the script under test.
fn shipped_libs() -> Vec<String> {
    let mut libs = Vec::new();
    for entry in std::fs::read_dir(checkout().join("plugins")).unwrap() {
        let manifest = std::fs::read_to_string(entry.unwrap().path().join("Cargo.toml")).unwrap();
        if !manifest.contains("cdylib") {
            continue;
        }
        let lib = manifest.split("[lib]").nth(1).unwrap();
        let name = lib.lines().find(|l| l.starts_with("name")).unwrap();
        libs.push(name.split('"').nth(1).unwrap().to_string());
    }
    libs.sort();
    libs
}

fn run_ok(cmd: &mut Command) -> (String, String) {
    let output = cmd.stdin(Stdio::null()).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(
        output.status.success(),
        "{cmd:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    (stdout, stderr)
}

/// Runs a script of the checkout on this suite's artefacts; the path it
/// printed last.
fn script(name: &str, out: &Path, extra: &[&str]) -> PathBuf {
    let target = target_dir();
    let profile = target.file_name().unwrap().to_str().unwrap().to_string();
    let (stdout, _) = run_ok(
        Command::new(checkout().join("scripts").join(name))
            .args(["--profile", &profile, "--no-build", "--target-dir"])
            .arg(target.parent().unwrap())
            .arg("--out")
            .arg(out)
            .args(extra),
    );
    PathBuf::from(stdout.lines().last().unwrap())
}

/// The one entry of `dir`: an archive's top directory.
fn only_entry(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    found.sort();
    found
}

/// A command for the unpacked or installed `uji` with a fresh HOME and
/// nothing else of this machine's: no config, no keys.
fn fresh_uji(bin: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .current_dir(home);
    cmd
}

/// `uji plugins --json` of `bin`: each loaded plugin's name and path.
fn loaded_plugins(bin: &Path, home: &Path) -> Vec<(String, PathBuf)> {
    let (stdout, _) = run_ok(fresh_uji(bin, home).args(["plugins", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["failed"], serde_json::json!([]), "{doc}");
    doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["origin"] == "bundled")
        .map(|p| {
            let path = PathBuf::from(p["path"].as_str().unwrap());
            (p["name"].as_str().unwrap().to_string(), path)
        })
        .collect()
}

#[test]
fn the_archive_unpacks_anywhere_installs_and_uninstalls_and_makes_a_deb() {
    let out = tempfile::tempdir().unwrap();
    let archive = script("dist.sh", out.path(), &[]);
    let name = archive.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("uji-0.") && name.ends_with(".tar.gz"),
        "{name}"
    );
    run_ok(
        Command::new("sha256sum")
            .args(["--quiet", "-c"])
            .arg(format!("{name}.sha256"))
            .current_dir(out.path()),
    );
    let unpacked = unpacked_runs(&archive);
    completions_load_in_bash(&unpacked);
    // A debug build unpacked is hundreds of MB: gone before the next copy.
    drop(unpacked);
    install_sh_leaves_nothing_behind(&archive);
    deb_lists_the_expected_files(&archive, out.path());
}

/// Unpacks `archive` into a fresh directory: the layout, `uji --version`,
/// every shipped plugin from lib/uji/plugins, one `uji run`. Returns the
/// unpacked tree (kept for the completions).
fn unpacked_runs(archive: &Path) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    run_ok(
        Command::new("tar")
            .arg("-xzf")
            .arg(archive)
            .arg("-C")
            .arg(root.path()),
    );
    let top = only_entry(root.path());
    let mut expected: Vec<String> = [
        "LICENSE-APACHE",
        "LICENSE-MIT",
        "README.md",
        "bin",
        "bin/uji",
        "install.sh",
        "lib",
        "lib/uji",
        "lib/uji/plugins",
        "share",
        "share/bash-completion",
        "share/bash-completion/completions",
        "share/bash-completion/completions/uji",
        "share/fish",
        "share/fish/vendor_completions.d",
        "share/fish/vendor_completions.d/uji.fish",
        "share/man",
        "share/man/man1",
        "share/man/man1/uji.1.gz",
        "share/zsh",
        "share/zsh/site-functions",
        "share/zsh/site-functions/_uji",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    expected.extend(
        shipped_libs()
            .iter()
            .map(|l| format!("lib/uji/plugins/lib{l}.so")),
    );
    expected.sort();
    assert_eq!(files_under(&top), expected);

    let home = tempfile::tempdir().unwrap();
    let bin = top.join("bin/uji");
    let (version, _) = run_ok(fresh_uji(&bin, home.path()).arg("--version"));
    assert!(
        version.starts_with("uji 0.") && version.contains("plugin ABI"),
        "{version}"
    );

    let plugins = loaded_plugins(&bin, home.path());
    let plugin_dir = top.join("lib/uji/plugins").canonicalize().unwrap();
    assert!(
        plugins.iter().all(|(_, p)| p.starts_with(&plugin_dir)),
        "{plugins:?}"
    );
    let mut files: Vec<String> = plugins
        .iter()
        .map(|(_, p)| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    files.sort();
    let wanted: Vec<String> = shipped_libs()
        .iter()
        .map(|l| format!("lib{l}.so"))
        .collect();
    assert_eq!(files, wanted, "every shipped plugin, from lib/uji/plugins");

    let model = FakeModel::start();
    model.push(answer("hello from the archive"));
    let (stdout, _) = run_ok(
        fresh_uji(&bin, home.path())
            .env("OPENROUTER_API_KEY", "sk-archive")
            .env("OPENROUTER_BASE_URL", model.base_url())
            .args(["run", "--model", "openrouter/test-model", "say hello"]),
    );
    assert_eq!(stdout.trim(), "hello from the archive");
    assert_eq!(model.requests().len(), 1);
    root
}

/// The bash completion parses and registers `uji`; zsh and fish check
/// theirs where they are installed.
fn completions_load_in_bash(root: &tempfile::TempDir) {
    let top = only_entry(root.path());
    let share = top.join("share");
    let bash = share.join("bash-completion/completions/uji");
    run_ok(Command::new("bash").arg("-n").arg(&bash));
    let (stdout, _) = run_ok(
        Command::new("bash")
            .arg("-c")
            .arg("source \"$1\" && complete -p uji")
            .arg("bash")
            .arg(&bash),
    );
    assert!(
        stdout.starts_with("complete ")
            && stdout.contains(" -F _uji ")
            && stdout.trim_end().ends_with(" uji"),
        "{stdout}"
    );
    for (shell, file) in [
        ("zsh", "zsh/site-functions/_uji"),
        ("fish", "fish/vendor_completions.d/uji.fish"),
    ] {
        if Command::new(shell).arg("--version").output().is_ok() {
            run_ok(Command::new(shell).arg("-n").arg(share.join(file)));
        } else {
            eprintln!("{shell} is not installed: its completion file was not parsed");
        }
    }
    let (page, _) = run_ok(
        Command::new("gzip")
            .arg("-dc")
            .arg(share.join("man/man1/uji.1.gz")),
    );
    assert!(
        page.contains(".TH uji 1") && page.contains("doctor"),
        "{page}"
    );
}

/// install.sh into a prefix holding a file of someone else's, twice (an
/// upgrade), then --uninstall: only that file is left.
fn install_sh_leaves_nothing_behind(archive: &Path) {
    let home = tempfile::tempdir().unwrap();
    let prefix = tempfile::tempdir().unwrap();
    let p = prefix.path();
    std::fs::create_dir_all(p.join("bin")).unwrap();
    std::fs::write(p.join("bin/other-tool"), "#!/bin/sh\n").unwrap();
    let install = |args: &[&str]| {
        run_ok(
            fresh_uji(&checkout().join("install.sh"), home.path())
                .env("PATH", "/usr/bin:/bin")
                .arg("--prefix")
                .arg(p)
                .args(args),
        )
    };
    let archive = archive.to_str().unwrap();
    install(&[archive]);
    let (said, _) = install(&[archive]);
    assert!(
        said.contains(&format!("export PATH=\"{}/bin:$PATH\"", p.display())),
        "{said}"
    );
    for file in [
        "bin/uji",
        "share/man/man1/uji.1.gz",
        "share/bash-completion/completions/uji",
        "share/zsh/site-functions/_uji",
        "share/fish/vendor_completions.d/uji.fish",
        "share/doc/uji/README.md",
        "lib/uji/install-manifest",
    ] {
        assert!(p.join(file).is_file(), "{file} not installed");
    }
    let plugin_dir = p.join("lib/uji/plugins");
    let mode = std::fs::metadata(&plugin_dir).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o022,
        0,
        "a plugin directory others can write: {mode:o}"
    );
    let plugins = loaded_plugins(&p.join("bin/uji"), home.path());
    assert_eq!(plugins.len(), shipped_libs().len(), "{plugins:?}");
    assert!(
        plugins
            .iter()
            .all(|(_, path)| path.starts_with(&plugin_dir)),
        "{plugins:?}"
    );

    let (said, _) = install(&["--uninstall"]);
    assert!(said.contains("removed"), "{said}");
    assert_eq!(files_under(p), ["bin", "bin/other-tool"]);
}

/// The .deb (from the same archive) installs into /usr with the plugins in
/// /usr/lib/uji/plugins.
fn deb_lists_the_expected_files(archive: &Path, out: &Path) {
    if Command::new("dpkg-deb").arg("--version").output().is_err() {
        eprintln!("dpkg-deb is not installed: the .deb was not built");
        return;
    }
    let (deb, _) = run_ok(
        Command::new(checkout().join("scripts/deb.sh"))
            .arg("--archive")
            .arg(archive)
            // Compressing a debug build's 200 MB would take most of the test.
            .arg("--uncompressed")
            .arg("--out")
            .arg(out),
    );
    let deb = PathBuf::from(deb.lines().last().unwrap());
    let (contents, _) = run_ok(Command::new("dpkg-deb").arg("--contents").arg(&deb));
    let mut wanted: Vec<String> = [
        "./usr/bin/uji",
        "./usr/share/man/man1/uji.1.gz",
        "./usr/share/bash-completion/completions/uji",
        "./usr/share/zsh/vendor-completions/_uji",
        "./usr/share/fish/vendor_completions.d/uji.fish",
        "./usr/share/doc/uji/copyright",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    wanted.extend(
        shipped_libs()
            .iter()
            .map(|l| format!("./usr/lib/uji/plugins/lib{l}.so")),
    );
    for file in &wanted {
        assert!(
            contents
                .lines()
                .any(|l| l.ends_with(file.as_str()) && l.starts_with("-rw")),
            "{file} missing from\n{contents}"
        );
    }
    assert!(
        contents.lines().all(|l| l.contains(" root/root ")),
        "{contents}"
    );
    let (control, _) = run_ok(
        Command::new("dpkg-deb")
            .args(["--field"])
            .arg(&deb)
            .args(["Package", "Depends"]),
    );
    assert!(
        control.contains("Package: uji") && control.contains("libc6"),
        "{control}"
    );
}

fn doctor(sandbox: &Sandbox, args: &[&str]) -> (Output, String) {
    let output = sandbox
        .uji()
        .env("OPENROUTER_API_KEY", "sk-doctor-secret-1234")
        .arg("doctor")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&output).0;
    assert!(
        !stdout.contains("sk-doctor-secret-1234"),
        "a key printed:\n{stdout}"
    );
    (output, stdout)
}

#[test]
fn doctor_offline_names_a_broken_init_lua_and_a_plugin_directory_others_can_write() {
    let sandbox = Sandbox::new();
    sandbox.write_init("-- fine\nlocal x = = 1\n");
    let plugins = sandbox.config().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::set_permissions(&plugins, std::fs::Permissions::from_mode(0o777)).unwrap();

    let started = std::time::Instant::now();
    let (output, stdout) = doctor(&sandbox, &["--offline"]);
    eprintln!(
        "uji doctor --offline took {:?} (this build's profile)",
        started.elapsed()
    );
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let after = |needle: &str| {
        let at = lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in\n{stdout}"));
        (lines[at], lines.get(at + 1).copied().unwrap_or_default())
    };
    let (problem, fix) = after("init.lua:2:");
    assert!(problem.starts_with("PROBLEM  init.lua"), "{stdout}");
    assert!(
        fix.contains(&format!(
            "fix: edit {}",
            sandbox.config().join("init.lua").display()
        )),
        "{stdout}"
    );
    let (problem, fix) = after("writable by other users (mode 777)");
    assert!(
        problem.starts_with("PROBLEM  plugins") && problem.contains(&plugins.display().to_string()),
        "{stdout}"
    );
    assert!(
        fix.contains(&format!("fix: `chmod go-w {}`", plugins.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("providers with a key: openrouter (key from OPENROUTER_API_KEY)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("(not asked: --offline)") || stdout.contains("no default model"),
        "{stdout}"
    );
    for area in ["version", "sandbox", "bash", "git", "mcp", "terminal"] {
        assert!(
            lines.iter().any(|l| l[9..].starts_with(area)),
            "no {area} line in\n{stdout}"
        );
    }
}

#[test]
fn doctor_on_a_healthy_setup_asks_the_default_model_once_and_exits_0() {
    let sandbox = Sandbox::new();
    sandbox.write_init("uji.model.use(\"openrouter/qwen/qwen3-coder\")\n");
    let model = FakeModel::start();
    model.push(answer("ok"));
    let (stdout, _) = run_ok(
        uji_tests::chat::uji_with_model(&sandbox, &model, "sk-doctor-secret-1234")
            .args(["doctor", "--json"]),
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let checks = doc["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["status"] != "problem"), "{doc}");
    let model_check = checks.iter().find(|c| c["area"] == "model").unwrap();
    assert!(
        model_check["text"]
            .as_str()
            .unwrap()
            .contains("openrouter/qwen/qwen3-coder answered"),
        "{doc}"
    );
    assert_eq!(model.requests().len(), 1);
    assert!(!stdout.contains("sk-doctor-secret-1234"));
}
