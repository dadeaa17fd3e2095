//! What a plugin file must pass before the dynamic loader maps it.
//!
//! - **Nobody else can change it**, as ssh demands of its keys: the file,
//!   the directory that lists it and the directory it really lives in are
//!   owned by the user or root and are not group- or world-writable (a
//!   sticky directory such as `/tmp` may be world-writable: others cannot
//!   replace a file there that is not theirs, and the file's own owner is
//!   checked).
//! - **It is a whole ELF library for this machine**: the loader maps every
//!   segment as the header says, and touching a page past the end of a
//!   truncated file is a SIGBUS that no error handling can catch; so every
//!   segment and section must lie inside the file, and the class, byte
//!   order, type and machine must be this process's.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use object::elf;
use object::read::ReadCache;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};

/// Why a file was refused before it was mapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "{} is writable by other users (mode {mode:o}), so they could change the code uji runs; make it writable by you alone with `chmod go-w {}`",
        path.display(),
        path.display()
    )]
    Writable { path: PathBuf, mode: u32 },
    #[error(
        "{} belongs to user {uid}, not to you or root, so that user could change the code uji runs; `chown` it to yourself or remove it",
        path.display()
    )]
    ForeignOwner { path: PathBuf, uid: u32 },
    #[error(
        "not a loadable shared library ({0}); rebuild or reinstall the plugin, or remove it from the plugins directory"
    )]
    Damaged(String),
}

/// Both checks, in the order that names the more useful problem first.
pub(crate) fn check_plugin_file(path: &Path) -> Result<(), Refusal> {
    check_ownership(path)?;
    check_elf(path).map_err(Refusal::Damaged)
}

/// The file and its directories: the one that lists it, and the one it
/// really lives in when that is elsewhere (a symlink).
fn guarded_paths(path: &Path) -> Vec<PathBuf> {
    let listed_in = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut paths = vec![path.to_path_buf(), listed_in];
    if let Some(real_dir) = path
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        && !paths.contains(&real_dir)
    {
        paths.push(real_dir);
    }
    paths
}

/// The ownership check for a plugin directory on its own (and the
/// directory it really is, when it is a symlink): `uji doctor` reports a
/// directory others can write to before any plugin in it is refused.
pub fn check_plugin_dir(dir: &Path) -> Result<(), Refusal> {
    let mut paths = vec![dir.to_path_buf()];
    if let Ok(real) = dir.canonicalize()
        && real != dir
    {
        paths.push(real);
    }
    check_paths(paths)
}

fn check_ownership(path: &Path) -> Result<(), Refusal> {
    check_paths(guarded_paths(path))
}

fn check_paths(paths: Vec<PathBuf>) -> Result<(), Refusal> {
    let me = rustix::process::getuid().as_raw();
    for guarded in paths {
        // What cannot be read is left to the loader, which says why.
        let Ok(meta) = std::fs::metadata(&guarded) else {
            continue;
        };
        let uid = meta.uid();
        if uid != me && uid != 0 {
            return Err(Refusal::ForeignOwner { path: guarded, uid });
        }
        let mode = meta.mode() & 0o7777;
        let sticky_dir = meta.is_dir() && mode & 0o1000 != 0;
        if mode & 0o022 != 0 && !sticky_dir {
            return Err(Refusal::Writable {
                path: guarded,
                mode,
            });
        }
    }
    Ok(())
}

#[cfg(target_pointer_width = "64")]
type Header = elf::FileHeader64<object::Endianness>;
#[cfg(target_pointer_width = "32")]
type Header = elf::FileHeader32<object::Endianness>;

/// The ELF class of this process.
const CLASS: u8 = if cfg!(target_pointer_width = "64") {
    elf::ELFCLASS64
} else {
    elf::ELFCLASS32
};

/// The machine of this process, when uji knows its number.
fn this_machine() -> Option<u16> {
    match std::env::consts::ARCH {
        "x86_64" => Some(elf::EM_X86_64),
        "aarch64" => Some(elf::EM_AARCH64),
        "x86" => Some(elf::EM_386),
        "arm" => Some(elf::EM_ARM),
        "riscv64" | "riscv32" => Some(elf::EM_RISCV),
        "powerpc64" => Some(elf::EM_PPC64),
        "s390x" => Some(elf::EM_S390),
        "loongarch64" => Some(elf::EM_LOONGARCH),
        _ => None,
    }
}

/// Checks the header and that every segment and section lies inside the
/// file, reading only the header tables (plugins are megabytes).
fn check_elf(path: &Path) -> Result<(), String> {
    let file = File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?
        .len();
    let data = ReadCache::new(file);
    check_ident(&data, len)?;
    let damaged = |e: object::read::Error| format!("its ELF header is cut off or damaged ({e})");
    let header = Header::parse(&data).map_err(damaged)?;
    let endian = header.endian().map_err(damaged)?;
    check_kind(header.e_type(endian), header.e_machine(endian))?;
    check_tables(header, endian, &data, len)
}

/// Magic, class and byte order, each with its own message.
fn check_ident(data: &ReadCache<File>, len: u64) -> Result<(), String> {
    use object::read::ReadRef;
    let ident = data.read_bytes_at(0, 16).map_err(|_| {
        format!("only {len} bytes, too short for an ELF header: it is truncated or damaged")
    })?;
    if ident[..4] != elf::ELFMAG {
        return Err("not an ELF file".to_string());
    }
    if ident[4] != CLASS {
        let bits = if ident[4] == elf::ELFCLASS32 { 32 } else { 64 };
        return Err(format!("a {bits}-bit library; this uji is not"));
    }
    let native = if cfg!(target_endian = "little") {
        elf::ELFDATA2LSB
    } else {
        elf::ELFDATA2MSB
    };
    if ident[5] != native {
        return Err("built for the other byte order".to_string());
    }
    Ok(())
}

fn check_kind(e_type: u16, machine: u16) -> Result<(), String> {
    if e_type != elf::ET_DYN {
        return Err(format!("ELF type {e_type}, not a shared library"));
    }
    match this_machine() {
        Some(ours) if ours != machine => Err(format!(
            "built for ELF machine {machine}, but this uji runs on {} (machine {ours})",
            std::env::consts::ARCH
        )),
        _ => Ok(()),
    }
}

/// Every segment and section must lie inside the file (sections without
/// file data, such as .bss, have no range).
fn check_tables(
    header: &Header,
    endian: object::Endianness,
    data: &ReadCache<File>,
    len: u64,
) -> Result<(), String> {
    let cut = |table: &'static str| {
        move |e: object::read::Error| {
            format!("its {table} table is cut off ({e}): it is truncated or damaged")
        }
    };
    let segments = header
        .program_headers(endian, data)
        .map_err(cut("segment"))?;
    if segments.is_empty() {
        return Err("it has no segments to load".to_string());
    }
    let ranges = segments.iter().map(|s| Some(s.file_range(endian)));
    check_ranges("segment", ranges, len)?;
    let sections = header
        .section_headers(endian, data)
        .map_err(cut("section"))?;
    check_ranges(
        "section",
        sections.iter().map(|s| s.file_range(endian)),
        len,
    )
}

fn check_ranges(
    what: &str,
    ranges: impl Iterator<Item = Option<(u64, u64)>>,
    len: u64,
) -> Result<(), String> {
    for (index, (offset, size)) in ranges.enumerate().filter_map(|(i, r)| r.map(|r| (i, r))) {
        if offset.checked_add(size).is_none_or(|end| end > len) {
            return Err(format!(
                "{what} {index} ends past the end of the {len}-byte file: it is truncated or damaged"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn this_binary() -> PathBuf {
        std::env::current_exe().unwrap()
    }

    #[test]
    fn a_truncated_copy_of_a_real_elf_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let whole = std::fs::read(this_binary()).unwrap();
        for cut in [3, 16, 64, 3000, whole.len() / 2] {
            let path = dir.path().join(format!("lib{cut}.so"));
            std::fs::write(&path, &whole[..cut]).unwrap();
            let err = check_elf(&path).unwrap_err();
            assert!(
                err.contains("cut off") || err.contains("truncated"),
                "{cut}: {err}"
            );
        }
    }

    #[test]
    fn text_is_not_elf_and_an_executable_is_not_a_library() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libtext.so");
        std::fs::write(&path, "this is not an ELF file at all").unwrap();
        assert_eq!(check_elf(&path).unwrap_err(), "not an ELF file");
        // The test binary is a position-independent executable: ET_DYN too,
        // so only the kind check on a made-up header can show the refusal.
        assert!(
            check_kind(elf::ET_EXEC, 0)
                .unwrap_err()
                .contains("not a shared library")
        );
    }

    #[test]
    fn group_writable_files_and_directories_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libx.so");
        std::fs::write(&path, "x").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert!(matches!(
            check_ownership(&path),
            Err(Refusal::Writable { mode: 0o664, .. })
        ));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(check_ownership(&path), Ok(()));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let refusal = check_ownership(&path).unwrap_err();
        assert!(refusal.to_string().contains("chmod go-w"), "{refusal}");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(check_ownership(&path), Ok(()), "a sticky directory is fine");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(
            check_plugin_dir(dir.path()),
            Err(Refusal::Writable { mode: 0o777, .. })
        ));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(check_plugin_dir(dir.path()), Ok(()));
    }
}
