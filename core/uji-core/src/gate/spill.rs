//! Every result bounded, whichever plugin produced it: each call gets a
//! spill file name in the running session's spill directory; after the call
//! the gate takes keys out of a file the tool wrote there, and cuts a
//! result over the limits of `uji_protocol::spill` the way `run_command`
//! cuts its output (the rest goes to a spill file). `read_file`, and only
//! `read_file`, may reach that directory under confinement.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use uji_policy::{canonicalize_lenient, expand_home};
use uji_protocol::ToolOutput;
use uji_protocol::spill;

use super::Gate;
use crate::session::spills;
use crate::turn::agent::redact;

/// Where the running session's spill files go, and the keys kept out of
/// them.
#[derive(Debug, Clone)]
pub(super) struct SpillPlace {
    dir: PathBuf,
    secrets: Vec<String>,
}

impl Default for SpillPlace {
    /// Before any session runs (a gate used on its own): a directory of
    /// this process in the temporary directory.
    fn default() -> Self {
        SpillPlace {
            dir: std::env::temp_dir().join(format!("uji-spill-{}", std::process::id())),
            secrets: Vec::new(),
        }
    }
}

impl Gate {
    /// Spill files of the calls from now on go to `dir`, with `secrets`
    /// replaced (a new or resumed session sets its own).
    pub fn set_spill(&self, dir: PathBuf, secrets: Vec<String>) {
        *self.spill.write() = SpillPlace { dir, secrets };
    }

    /// The directory the running session's spill files go to.
    pub fn spill_dir(&self) -> PathBuf {
        self.spill_place().dir
    }

    fn spill_place(&self) -> SpillPlace {
        self.spill.read().clone()
    }

    /// A spill file name no call had yet.
    pub(super) fn next_spill_path(&self) -> PathBuf {
        let n = self.spill_counter.fetch_add(1, Ordering::Relaxed);
        spill::spill_path(&self.spill_dir(), std::process::id(), n)
    }

    /// `subject`, when `tool` is `read_file` and the path is a spill file
    /// of the running session: the model is told to read it back, so
    /// confinement lets `read_file`, and only `read_file`, reach it.
    pub(super) fn own_spill_file(&self, tool: &str, subject: &str, cwd: &Path) -> Option<PathBuf> {
        if tool != super::READ_FILE {
            return None;
        }
        let path = canonicalize_lenient(&cwd.join(expand_home(subject))).ok()?;
        let dir = canonicalize_lenient(&self.spill_dir()).ok()?;
        let name = path.file_name()?.to_str()?;
        (path.parent() == Some(dir.as_path()) && spill::is_spill_name(name)).then_some(path)
    }

    /// Takes keys out of the spill file the tool wrote at `written` (if it
    /// did), then bounds the text the model reads and the diff frontends
    /// draw ([`uji_protocol::diff`]).
    pub(super) fn bound_output(&self, written: Option<&str>, output: &mut ToolOutput) {
        let place = self.spill_place();
        let written = written.map(Path::new);
        if let Some(path) = written.filter(|p| p.exists())
            && let Err(e) = spills::redact_file(path, &place.secrets)
        {
            tracing::warn!(path = %path.display(), error = %e, "cannot redact a spill file");
        }
        if let Some(diff) = output.diff.as_mut() {
            diff.bound();
        }
        if spill::fits(&output.text) {
            return;
        }
        let text = redact(&output.text, &place.secrets);
        let target = match written {
            Some(path) if !path.exists() => path.to_path_buf(),
            _ => self.next_spill_path(),
        };
        if let Some(bounded) = spill::bound(&text, &target) {
            output.text = bounded;
        }
    }
}
