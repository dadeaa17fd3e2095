//! The configuration and data directories, the saved keys' file, and what
//! the boot reported (an init.lua that failed is an error notice).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use uji_host::paths::Dirs;
use uji_protocol::frontend::NoticeLevel;

use super::Check;

pub fn check(dirs: &Dirs) -> Vec<Check> {
    let mut checks = vec![
        directory("config", &dirs.config, false),
        directory("data", &dirs.data, true),
    ];
    let keys = uji_core::auth::keys::KeyStore::new(&dirs.data);
    checks.extend(keys_file(keys.path()));
    checks
}

/// A directory uji reads (config) or writes (data): present or not, and
/// nobody else able to change it.
fn directory(area: &'static str, dir: &Path, written: bool) -> Check {
    let shown = dir.display();
    let Ok(meta) = std::fs::metadata(dir) else {
        let text = format!("{shown} does not exist yet; uji creates what it needs");
        return Check::ok(area, text);
    };
    let me = rustix::process::getuid().as_raw();
    let mode = meta.mode() & 0o7777;
    if meta.uid() != me && meta.uid() != 0 {
        return Check::problem(
            area,
            format!("{shown} belongs to user {}, not to you", meta.uid()),
            format!("`chown -R $(id -u) {shown}`, or point uji elsewhere with --{area}-dir"),
        );
    }
    if mode & 0o022 != 0 {
        return Check::problem(
            area,
            format!(
                "{shown} is writable by other users (mode {mode:o}): they could change what uji reads"
            ),
            format!("`chmod go-w {shown}`"),
        );
    }
    if written && rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_err() {
        return Check::problem(
            area,
            format!("{shown} is not writable: sessions and logs cannot be saved"),
            format!("`chmod u+w {shown}`, or pass --data-dir DIR"),
        );
    }
    Check::ok(area, format!("{shown} (mode {mode:o})"))
}

/// The keys `uji login` saved: readable by the user alone.
fn keys_file(path: &Path) -> Option<Check> {
    let meta = std::fs::metadata(path).ok()?;
    let mode = meta.mode() & 0o777;
    let shown = path.display();
    Some(if mode & 0o077 != 0 {
        Check::problem(
            "keys",
            format!("{shown} can be read by other users (mode {mode:o})"),
            format!("`chmod 600 {shown}`, then change the keys it holds"),
        )
    } else {
        Check::ok("keys", format!("{shown} (mode {mode:o})"))
    })
}

/// init.lua (present, and whether it ran) and every other notice the boot
/// kept.
pub fn check_config(booted: &uji_core::Booted) -> Vec<Check> {
    let init = booted.dirs.config.join("init.lua");
    let notices = booted.registry.take_notices();
    let failed = notices
        .iter()
        .any(|n| n.level == NoticeLevel::Error && n.source == uji_host::CONFIG_PLUGIN);
    let lua_loaded = booted
        .plugins
        .loaded
        .iter()
        .any(|p| p.manifest.name == uji_host::CONFIG_PLUGIN);
    let mut checks = Vec::new();
    if !lua_loaded {
        checks.push(Check::problem(
            "init.lua",
            "the Lua plugin did not load, so init.lua did not run",
            "see the plugins above",
        ));
    } else if !failed {
        checks.push(Check::ok(
            "init.lua",
            match init.exists() {
                true => format!("{} ran without errors", init.display()),
                false => format!("no {}: the shipped defaults apply", init.display()),
            },
        ));
    }
    checks.extend(notices.into_iter().map(|n| notice(n, &init)));
    checks
}

fn notice(notice: uji_host::Notice, init: &Path) -> Check {
    let text = format!("{}: {}", notice.source, notice.text);
    match notice.level {
        NoticeLevel::Error if notice.source == uji_host::CONFIG_PLUGIN => Check::problem(
            "init.lua",
            text,
            format!(
                "edit {} at the line named above, then run `uji doctor` again",
                init.display()
            ),
        ),
        NoticeLevel::Error => Check::problem("notice", text, "the message says what to do"),
        NoticeLevel::Warn => Check::warn("notice", text, "the message says what to do"),
        _ => Check::ok("notice", text),
    }
}
