//! Issue 30's context in: the `@` file picker on a tree of 100,000 files,
//! as a person uses it (the release `uji` in a 120×40 pty).

use std::path::Path;
use std::time::{Duration, Instant};

use uji_fake_model::FakeModel;
use uji_tests::tty::Tty;

use crate::tui_live::{home, quit, screen_cmd};
use crate::{Row, median};

const DIRS: usize = 1000;
const FILES_PER_DIR: usize = 100;
/// Loads of each kind for the skills and commands row.
const LOADS: usize = 40;
/// Typed after `@`, one key at a time: each narrows the list.
const QUERY: &str = "d0577f042";
/// How long a key may take to be drawn before it is counted as this slow
/// (and reported) rather than waited for further.
const KEY_LIMIT: Duration = Duration::from_secs(2);

/// `work/dNNNN/fNNN.rs`: DIRS × FILES_PER_DIR files.
fn make_tree(work: &Path) {
    for d in 0..DIRS {
        let dir = work.join(format!("d{d:04}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..FILES_PER_DIR {
            std::fs::write(dir.join(format!("f{f:03}.rs")), "").expect("file");
        }
    }
}

/// The list's first row: the row whose text starts with ` @` above the
/// input, with the match count at its end.
fn list_head(screen: &str) -> Option<String> {
    screen
        .lines()
        .find(|line| line.starts_with(" @d"))
        .map(|line| line.trim_end().to_string())
}

/// Whether the input shows `typed` (the `@` word so far) at the end of
/// its row. The list filters where the key is read, before the frame is
/// drawn, so the frame that shows the key shows the list it narrowed: this
/// changes with every key, where the list's first row may not (the
/// broadest keys, which match everything, leave it as it was).
fn input_shows(screen: &str, typed: &str) -> bool {
    screen
        .lines()
        .any(|line| !line.starts_with(" @") && line.trim_end().ends_with(typed))
}

/// Waits (polling the screen every half millisecond) until `pred`; the
/// time it took, or `None` after `limit`.
fn time_until(tty: &Tty, limit: Duration, pred: impl Fn(&str) -> bool) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if pred(&tty.screen()) {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    None
}

/// 50 skills and 50 commands in the config directory of `home`.
fn make_skills_and_commands(home: &Path) {
    for i in 0..50 {
        let skill = home.join(format!("config/skills/skill-{i}"));
        std::fs::create_dir_all(&skill).expect("mkdir");
        std::fs::write(
            skill.join("SKILL.md"),
            format!(
                "---\nname: skill-{i}\ndescription: Does task {i} the team's way\n---\nStep one.\n"
            ),
        )
        .expect("SKILL.md");
        let commands = home.join("config/commands");
        std::fs::create_dir_all(&commands).expect("mkdir");
        std::fs::write(
            commands.join(format!("command-{i}.md")),
            format!("---\ndescription: Command {i}\nargument-hint: [file]\nallowed-tools: Read\n---\nDo $ARGUMENTS.\n"),
        )
        .expect("command");
    }
}

/// A home with uji's defaults as init.lua.
fn defaults_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    for dir in ["config", "data"] {
        std::fs::create_dir_all(home.path().join(dir)).expect("mkdir");
    }
    std::fs::write(
        home.path().join("config/init.lua"),
        "require(\"uji.defaults\")\n",
    )
    .expect("init.lua");
    home
}

/// What 50 skills and 50 commands add to loading uji's defaults: loads
/// with and without them taken in turns, so the machine's drift falls on
/// both alike.
fn skills_and_commands_ms() -> f64 {
    let (none, hundred) = (defaults_home(), defaults_home());
    make_skills_and_commands(hundred.path());
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..LOADS {
        without.push(crate::lua_runtime::load_once(none.path()));
        with.push(crate::lua_runtime::load_once(hundred.path()));
    }
    (median(with) - median(without)).max(0.0)
}

/// A 4000×3000 PNG like a photo of a screen: smooth gradients with fine
/// detail, about 20 MB.
fn big_png(path: &Path) {
    let picture = image::RgbImage::from_fn(4000, 3000, |x, y| {
        let detail = ((x * 7 + y * 13) % 17) as u8;
        image::Rgb([
            (x / 16) as u8 ^ detail,
            (y / 12) as u8,
            ((x + y) / 28) as u8 ^ detail,
        ])
    });
    picture.save(path).expect("big.png");
}

/// `uji run --image big.png` over the same run without it (medians of 5):
/// reading, turning, scaling and encoding the picture, and sending it.
fn attach_ms(model: &FakeModel) -> f64 {
    let home = home(model);
    big_png(&home.path().join("work/big.png"));
    let run = |image: bool| {
        model.push(uji_fake_model::Script::sse(
            uji_fake_model::chat::ChatEvents::new("m1")
                .text("seen", 1)
                .finish("stop")
                .done(),
        ));
        let mut cmd = crate::uji(home.path());
        cmd.current_dir(home.path().join("work"))
            .args(["run", "look"]);
        if image {
            cmd.args(["--image", "big.png"]);
        }
        let started = Instant::now();
        let status = cmd.status().expect("uji run");
        assert!(
            status.success(),
            "uji run --image failed in the context benchmark"
        );
        started.elapsed().as_secs_f64() * 1000.0
    };
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        without.push(run(false));
        with.push(run(true));
    }
    (median(with) - median(without)).max(0.0)
}

pub fn run() -> Vec<Row> {
    let loading = skills_and_commands_ms();
    let model = FakeModel::start();
    let attach = attach_ms(&model);
    let home = home(&model);
    make_tree(&home.path().join("work"));
    let mut firsts = Vec::new();
    let mut keys = Vec::new();
    // Keys not drawn within KEY_LIMIT: counted at the limit and reported.
    let mut late = 0usize;
    for _ in 0..5 {
        let mut tty = Tty::spawn(screen_cmd(home.path(), &[]), 40, 120);
        tty.wait_for_text("Ask uji anything");
        tty.type_text("@");
        let first = time_until(&tty, Duration::from_secs(5), |s| list_head(s).is_some())
            .expect("the @ list opened");
        firsts.push(first.as_secs_f64() * 1000.0);
        // Let the walk finish, so each key below is the filtering alone.
        let mut last = None;
        let settled = Instant::now();
        while settled.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(200));
            let head = list_head(&tty.screen());
            if head.is_some() && head == last {
                break;
            }
            last = head;
        }
        for (at, key) in QUERY.char_indices() {
            let typed = format!("@{}", &QUERY[..at + key.len_utf8()]);
            tty.type_text(&key.to_string());
            let took =
                time_until(&tty, KEY_LIMIT, |s| input_shows(s, &typed)).unwrap_or_else(|| {
                    late += 1;
                    KEY_LIMIT
                });
            keys.push(took.as_secs_f64() * 1000.0);
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            list_head(&tty.screen()).is_some_and(|head| head.starts_with(" @d0577/f042.rs")),
            "the list narrowed to the file the query names"
        );
        quit(&mut tty);
    }
    let slowest = keys.iter().copied().fold(0.0, f64::max);
    vec![
        Row {
            area: "context",
            what: format!(
                "`@` to the first matches drawn, {} files (median of 5)",
                DIRS * FILES_PER_DIR
            ),
            value: median(firsts),
            unit: "ms",
            target: Some(50.0),
        },
        Row {
            area: "context",
            what: format!(
                "a key typed after `@` to the narrowed list drawn, {} files (median of {} keys, every key timed)",
                DIRS * FILES_PER_DIR,
                keys.len()
            ),
            value: median(keys),
            unit: "ms",
            target: Some(5.0),
        },
        Row {
            area: "context",
            what: "slowest such key".to_string(),
            value: slowest,
            unit: "ms",
            target: None,
        },
        Row {
            area: "context",
            what: format!(
                "keys not drawn within {} s (each counted as {0} s above)",
                KEY_LIMIT.as_secs()
            ),
            value: late as f64,
            unit: "keys",
            target: Some(0.0),
        },
        Row {
            area: "context",
            what: "`uji run --image` of a 4000×3000 PNG (about 20 MB) over the same run without it: read, scaled to 1568 px, sent (medians of 5)".to_string(),
            value: attach,
            unit: "ms",
            target: Some(300.0),
        },
        Row {
            area: "context",
            what: "50 skills and 50 command files, over none (uji's defaults loading them; `uji models --all`, medians of 40, taken in turns)".to_string(),
            value: loading,
            unit: "ms",
            target: Some(2.0),
        },
    ]
}
