//! Where a tool's long output goes: a spill file in the temporary
//! directory, named by the uji process, that the model may read back with
//! `read_file` even when file tools are confined to the workspace. The
//! name is shared here so the tool that writes it and the gate that lets
//! `read_file` reach it agree.

use std::path::{Path, PathBuf};

/// The spill file number `n` of process `pid`, in `dir`.
pub fn spill_path(dir: &Path, pid: u32, n: usize) -> PathBuf {
    dir.join(format!("uji-output-{pid}-{n}.log"))
}

/// Whether `name` is the name of a spill file of process `pid`.
pub fn is_spill_name(name: &str, pid: u32) -> bool {
    name.strip_prefix(&format!("uji-output-{pid}-"))
        .and_then(|rest| rest.strip_suffix(".log"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_other_processes_do_not_match() {
        let path = spill_path(Path::new("/tmp"), 42, 7);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(is_spill_name(name, 42));
        assert!(!is_spill_name(name, 43));
        for other in [
            "uji-output-42-.log",
            "uji-output-42-7.txt",
            "uji-output-42-7/../x.log",
            "notes.log",
        ] {
            assert!(!is_spill_name(other, 42), "{other}");
        }
    }
}
