//! Diagnostics: `tracing` events go to `<data>/logs/uji.log`, and to stderr
//! only when a command without a screen asks for it. Nothing else writes
//! diagnostics to the terminal, so an interactive frontend owns it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt;
use tracing_subscriber::prelude::*;
use uji_host::paths::Dirs;

/// The level when `UJI_LOG` is unset or unusable: retries, compactions,
/// notices, plugin failures and Lua `print` are kept; debug chatter is not.
pub const DEFAULT_LEVEL: LevelFilter = LevelFilter::INFO;

/// Past this size `uji.log` becomes `uji.log.1` (replacing the previous
/// one), so the log takes at most about twice this much.
pub const MAX_BYTES: u64 = 5 * 1024 * 1024;

/// How one process logs.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    /// `UJI_LOG`: a level, or `target=level` directives.
    pub level: Option<String>,
    /// `--log-stderr`: also write each line to stderr.
    pub stderr: bool,
    /// The command draws on the terminal; it never gets the stderr copy.
    pub interactive: bool,
}

/// `<data>/logs/uji.log`.
pub fn log_file(dirs: &Dirs) -> PathBuf {
    dirs.data.join("logs").join("uji.log")
}

/// Installs the process-wide subscriber. Returns a warning for the user
/// (a bad `UJI_LOG`), already written to the log; a command without a
/// screen should print it. Call once; a second call changes nothing.
pub fn init(dirs: &Dirs, options: &LogOptions) -> Option<String> {
    let (filter, warning) = filter(options.level.as_deref());
    let file = fmt::layer()
        .with_ansi(false)
        .with_writer(CappedFile::new(log_file(dirs), MAX_BYTES));
    let mirror = options.stderr && !options.interactive;
    let stderr = mirror.then(|| fmt::layer().with_ansi(false).with_writer(io::stderr));
    let subscriber = tracing_subscriber::registry()
        .with(filter)
        .with(file)
        .with(stderr);
    // Fails only when a subscriber is already installed: keep that one.
    let _ = tracing::subscriber::set_global_default(subscriber);
    if let Some(warning) = &warning {
        tracing::warn!("{warning}");
    }
    if options.stderr && options.interactive {
        tracing::warn!("--log-stderr ignored: this command draws on the terminal");
    }
    warning
}

/// The filter for a `UJI_LOG` value, and a warning when it is unusable.
fn filter(value: Option<&str>) -> (EnvFilter, Option<String>) {
    let default = || EnvFilter::default().add_directive(DEFAULT_LEVEL.into());
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return (default(), None);
    };
    match parse(value) {
        Some(filter) => (filter, None),
        None => (
            default(),
            Some(format!(
                "UJI_LOG={value:?} is not a level (error, warn, info, debug, trace) or a list of target=level; logging at {DEFAULT_LEVEL}"
            )),
        ),
    }
}

/// Parses `UJI_LOG`. A bare word must be a level (EnvFilter would take it
/// as a target and silence everything else); `target=level` directives
/// without a bare level refine the default level.
fn parse(value: &str) -> Option<EnvFilter> {
    let directives: Vec<&str> = value.split(',').map(str::trim).collect();
    let is_level = |d: &str| d.parse::<LevelFilter>().is_ok();
    if directives.iter().any(|d| !d.contains('=') && !is_level(d)) {
        return None;
    }
    let has_level = directives.iter().any(|d| is_level(d));
    let full = if has_level {
        value.to_string()
    } else {
        format!("{DEFAULT_LEVEL},{value}")
    };
    EnvFilter::builder().parse(full).ok()
}

/// The log file: opened for appending on first write (owner-only), and
/// renamed to `<name>.1` once it reaches `max_bytes`.
#[derive(Clone)]
pub struct CappedFile {
    state: Arc<Mutex<Capped>>,
}

struct Capped {
    path: PathBuf,
    max_bytes: u64,
    file: Option<File>,
}

impl CappedFile {
    pub fn new(path: PathBuf, max_bytes: u64) -> CappedFile {
        CappedFile {
            state: Arc::new(Mutex::new(Capped {
                path,
                max_bytes,
                file: None,
            })),
        }
    }
}

impl<'a> fmt::MakeWriter<'a> for CappedFile {
    type Writer = CappedFile;

    fn make_writer(&'a self) -> CappedFile {
        self.clone()
    }
}

impl Write for CappedFile {
    /// The formatter hands over one whole line per call, so rotation never
    /// splits a line.
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        self.state.lock().append(line)?;
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Capped {
    fn append(&mut self, line: &[u8]) -> io::Result<()> {
        let on_disk = fs::metadata(&self.path).ok();
        // Another uji process may have rotated the file: follow the path.
        if !self.holds(on_disk.as_ref()) {
            self.file = None;
        }
        if on_disk.is_some_and(|m| m.len() >= self.max_bytes) {
            self.file = None;
            fs::rename(&self.path, rotated(&self.path))?;
        }
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(open_append(&self.path)?),
        };
        file.write_all(line)
    }

    /// True when the open handle is the file now at the path.
    fn holds(&self, on_disk: Option<&fs::Metadata>) -> bool {
        let (Some(file), Some(on_disk)) = (&self.file, on_disk) else {
            return false;
        };
        file.metadata().is_ok_and(|open| same_file(&open, on_disk))
    }
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    true
}

/// `uji.log` → `uji.log.1`.
fn rotated(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

/// Opens for appending, creating the file (0600) and its directory (0700):
/// the log can hold file paths and plugin messages.
fn open_append(path: &Path) -> io::Result<File> {
    let mut dir = fs::DirBuilder::new();
    dir.recursive(true);
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        dir.mode(0o700);
        options.mode(0o600);
    }
    if let Some(parent) = path.parent() {
        dir.create(parent)?;
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `filter` lets through, as `LEVEL target` pairs.
    fn passes(value: Option<&str>) -> (Vec<String>, Option<String>) {
        let (filter, warning) = filter(value);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let layer = Recorder(Arc::clone(&seen));
        let subscriber = tracing_subscriber::registry().with(filter).with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::debug!(target: "uji_core::turn::agent", "x");
            tracing::info!(target: "uji_core::turn::agent", "x");
            tracing::debug!(target: "plugin", "x");
            tracing::warn!(target: "plugin", "x");
        });
        let seen = seen.lock().clone();
        (seen, warning)
    }

    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            let meta = event.metadata();
            self.0
                .lock()
                .push(format!("{} {}", meta.level(), meta.target()));
        }
    }

    #[test]
    fn default_is_info() {
        let (seen, warning) = passes(None);
        assert_eq!(seen, ["INFO uji_core::turn::agent", "WARN plugin"]);
        assert_eq!(warning, None);
        assert_eq!(passes(Some("  ")).0, seen);
    }

    #[test]
    fn a_level_or_directives_set_what_passes() {
        assert_eq!(
            passes(Some("debug")).0,
            [
                "DEBUG uji_core::turn::agent",
                "INFO uji_core::turn::agent",
                "DEBUG plugin",
                "WARN plugin"
            ]
        );
        assert_eq!(passes(Some("trace")).0, passes(Some("debug")).0);
        assert_eq!(passes(Some("ERROR")).0, Vec::<String>::new());
        assert_eq!(
            passes(Some("plugin=debug")).0,
            ["INFO uji_core::turn::agent", "DEBUG plugin", "WARN plugin"]
        );
        assert_eq!(
            passes(Some("warn,uji_core=debug")).0,
            [
                "DEBUG uji_core::turn::agent",
                "INFO uji_core::turn::agent",
                "WARN plugin"
            ]
        );
    }

    #[test]
    fn a_bad_value_warns_and_keeps_the_default() {
        for bad in ["loud", "plugin=loud", "debug,verbose"] {
            let (seen, warning) = passes(Some(bad));
            assert_eq!(seen, ["INFO uji_core::turn::agent", "WARN plugin"], "{bad}");
            let warning = warning.unwrap();
            assert!(warning.contains(bad), "{warning}");
            assert!(warning.contains("logging at info"), "{warning}");
        }
    }

    fn write(file: &CappedFile, line: &str) {
        file.clone().write_all(line.as_bytes()).unwrap();
    }

    #[test]
    fn the_file_is_created_on_first_write_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/logs/uji.log");
        let file = CappedFile::new(path.clone(), 1000);
        assert!(!path.exists());
        write(&file, "one\n");
        assert_eq!(fs::read_to_string(&path).unwrap(), "one\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn rotation_keeps_one_old_file_and_bounds_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("uji.log");
        let file = CappedFile::new(path.clone(), 100);
        for i in 0..100 {
            write(&file, &format!("line {i:04}\n"));
        }
        let current = fs::read_to_string(&path).unwrap();
        let old = fs::read_to_string(dir.path().join("uji.log.1")).unwrap();
        // Rotation happens before the line that would follow a full file.
        assert!(current.len() <= 100 + 10, "{}", current.len());
        assert_eq!(old.len(), 100);
        assert!(current.ends_with("line 0099\n"), "{current}");
        assert!(old.ends_with(&format!("line {:04}\n", 99 - current.len() / 10)));
        let names = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(names, 2, "only uji.log and uji.log.1");
    }

    #[test]
    fn a_file_rotated_by_another_process_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("uji.log");
        let (mine, other) = (
            CappedFile::new(path.clone(), 30),
            CappedFile::new(path.clone(), 30),
        );
        write(&mine, "mine 1\n");
        for _ in 0..5 {
            write(&other, "other\n");
        }
        write(&mine, "mine 2\n");
        assert!(fs::read_to_string(&path).unwrap().ends_with("mine 2\n"));
    }
}
