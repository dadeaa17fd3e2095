//! Path canonicalisation and confinement of the file tools.
// Helpers outside #[test] fns unwrap too; a failed setup should just fail the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use uji_policy::{ConfineError, Policy, canonicalize_lenient, expand_tilde};

/// A scratch tree:
/// ```text
/// <root>/repo/               the working directory
/// <root>/repo/src/main.rs
/// <root>/repo/out-file  ->  <root>/outside/secret.txt
/// <root>/repo/out-dir   ->  <root>/outside
/// <root>/repo/in-link   ->  src/main.rs
/// <root>/repo/loop-a    ->  loop-b  ->  loop-a
/// <root>/repo/dangling  ->  <root>/outside/new.txt (missing)
/// <root>/repo/dangling-in -> src/new.rs (missing)
/// <root>/outside/secret.txt
/// <root>/ref/doc.md          an extra root
/// <root>/repo2/x             a sibling sharing the "repo" prefix
/// ```
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    repo: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let repo = root.join("repo");
    fs::create_dir_all(repo.join("src")).unwrap();
    fs::write(repo.join("src/main.rs"), "fn main() {}").unwrap();
    fs::create_dir_all(root.join("outside")).unwrap();
    fs::write(root.join("outside/secret.txt"), "s").unwrap();
    fs::create_dir_all(root.join("ref")).unwrap();
    fs::write(root.join("ref/doc.md"), "d").unwrap();
    fs::create_dir_all(root.join("repo2")).unwrap();
    fs::write(root.join("repo2/x"), "x").unwrap();
    symlink(root.join("outside/secret.txt"), repo.join("out-file")).unwrap();
    symlink(root.join("outside"), repo.join("out-dir")).unwrap();
    symlink("src/main.rs", repo.join("in-link")).unwrap();
    symlink("loop-b", repo.join("loop-a")).unwrap();
    symlink("loop-a", repo.join("loop-b")).unwrap();
    symlink(root.join("outside/new.txt"), repo.join("dangling")).unwrap();
    symlink("src/new.rs", repo.join("dangling-in")).unwrap();
    Tree {
        _dir: dir,
        root,
        repo,
    }
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn escapes_are_refused() {
    let t = tree();
    let p = Policy::default();
    let outside_abs = s(&t.root.join("outside/secret.txt"));
    let sibling = s(&t.root.join("repo2/x"));
    let cases: &[&str] = &[
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        "..",
        &outside_abs,
        "/etc/passwd",
        "/",
        &sibling,             // shares a string prefix with the repo only
        "out-file",           // symlinked file pointing out
        "out-dir/secret.txt", // through a symlinked directory
        "out-dir",
        "out-dir/new-file.txt", // a new file under a symlinked dir
        "out-dir/sub/../new.txt",
        "dangling",         // dangling symlink pointing out
        "src/../out-dir/x", // `..` then a link
    ];
    for path in cases {
        match p.check_path(path, &t.repo) {
            Err(ConfineError::Outside {
                path: shown,
                allowed,
            }) => {
                assert_eq!(shown, *path);
                assert_eq!(allowed, vec![t.repo.clone()]);
            }
            other => panic!("{path}: expected Outside, got {other:?}"),
        }
    }
}

#[test]
fn symlink_loops_are_refused_even_unconfined() {
    let t = tree();
    let mut p = Policy::default();
    for confined in [true, false] {
        p.confine(Some(confined));
        for path in ["loop-a", "loop-b/x", "./loop-a/../y"] {
            let err = p.check_path(path, &t.repo).unwrap_err();
            assert_eq!(
                err,
                ConfineError::Loop {
                    path: path.to_string()
                }
            );
            assert_eq!(
                err.to_string(),
                format!("{path}: too many levels of symbolic links")
            );
        }
    }
    assert!(matches!(
        canonicalize_lenient(&t.repo.join("loop-a")),
        Err(ConfineError::Loop { .. })
    ));
}

#[test]
fn allowed_paths_resolve_to_their_canonical_form() {
    let t = tree();
    let mut p = Policy::default();
    p.roots(Some(vec![s(&t.root.join("ref"))]));
    let doc = s(&t.root.join("ref/doc.md"));
    let repo_abs = s(&t.repo.join("src/main.rs"));
    let cases: &[(&str, PathBuf)] = &[
        ("src/main.rs", t.repo.join("src/main.rs")),
        ("./src/../src/main.rs", t.repo.join("src/main.rs")),
        (&repo_abs, t.repo.join("src/main.rs")),
        ("in-link", t.repo.join("src/main.rs")),
        ("new/dir/file.txt", t.repo.join("new/dir/file.txt")),
        ("dangling-in", t.repo.join("src/new.rs")),
        ("", t.repo.clone()),
        (".", t.repo.clone()),
        ("src/nope/../main.rs", t.repo.join("src/main.rs")),
        (&doc, t.root.join("ref/doc.md")),
        ("../ref/doc.md", t.root.join("ref/doc.md")),
        ("../ref/new.md", t.root.join("ref/new.md")),
    ];
    for (path, want) in cases {
        assert_eq!(p.check_path(path, &t.repo).as_ref(), Ok(want), "{path}");
    }
}

#[test]
fn cwd_given_through_a_symlink_is_compared_canonically() {
    let t = tree();
    symlink(&t.repo, t.root.join("repo-link")).unwrap();
    let p = Policy::default();
    let via_link = t.root.join("repo-link");
    assert_eq!(
        p.check_path("src/main.rs", &via_link),
        Ok(t.repo.join("src/main.rs"))
    );
    // An absolute path spelled through the real directory is inside too.
    assert!(p.check_path(&s(&t.repo.join("src")), &via_link).is_ok());
    assert!(p.check_path("../outside/secret.txt", &via_link).is_err());
}

#[test]
fn roots_replace_expand_and_are_reported() {
    let t = tree();
    let mut p = Policy::default();
    assert!(p.roots(None).is_empty());
    let first = p.roots(Some(vec![s(&t.root.join("ref")), "rel/dir".into()]));
    assert_eq!(first, vec![t.root.join("ref"), PathBuf::from("rel/dir")]);
    assert_eq!(p.roots(None), first);
    // Replacing, not appending.
    let second = p.roots(Some(vec![s(&t.root.join("outside"))]));
    assert_eq!(second, vec![t.root.join("outside")]);
    assert!(p.check_path("../outside/secret.txt", &t.repo).is_ok());
    assert!(p.check_path("../ref/doc.md", &t.repo).is_err());
    // `~/` roots are expanded when set.
    let home = uji_policy::home_dir();
    let expanded = p.roots(Some(vec!["~/projects".into()]));
    match home {
        Some(h) => assert_eq!(expanded, vec![h.join("projects")]),
        None => assert_eq!(expanded, vec![PathBuf::from("~/projects")]),
    }
    // The error lists cwd and the roots as given.
    p.roots(Some(vec![
        s(&t.root.join("ref")),
        "/nonexistent-uji/other".into(),
    ]));
    let err = p.check_path("../outside/secret.txt", &t.repo).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "../outside/secret.txt is outside the allowed directories ({}, {}, \
             /nonexistent-uji/other); file tools can only reach files under them",
            t.repo.display(),
            t.root.join("ref").display()
        )
    );
    // A relative root is taken against the working directory.
    p.roots(Some(vec!["../ref".into()]));
    assert!(p.check_path("../ref/doc.md", &t.repo).is_ok());
}

#[test]
fn confinement_off_allows_outside_and_confine_none_reads() {
    let t = tree();
    let mut p = Policy::default();
    assert!(p.confine(None));
    assert!(p.check_path("../outside/secret.txt", &t.repo).is_err());
    assert!(!p.confine(Some(false)));
    assert!(!p.confine(None));
    let cases: &[(&str, PathBuf)] = &[
        ("../outside/secret.txt", t.root.join("outside/secret.txt")),
        ("out-file", t.root.join("outside/secret.txt")),
        ("out-dir/new.txt", t.root.join("outside/new.txt")),
        ("dangling", t.root.join("outside/new.txt")),
    ];
    for (path, want) in cases {
        assert_eq!(p.check_path(path, &t.repo).as_ref(), Ok(want), "{path}");
    }
    assert!(p.confine(Some(true)));
    assert!(p.check_path("out-file", &t.repo).is_err());
}

#[test]
fn canonicalize_lenient_cases() {
    let t = tree();
    let r = &t.repo;
    let cases: &[(PathBuf, PathBuf)] = &[
        (r.join("src/main.rs"), r.join("src/main.rs")),
        (r.join("src/./main.rs"), r.join("src/main.rs")),
        (r.join("src//main.rs"), r.join("src/main.rs")),
        (r.join("src/../src/main.rs"), r.join("src/main.rs")),
        (r.join("missing/a/b"), r.join("missing/a/b")),
        (r.join("missing/../src/main.rs"), r.join("src/main.rs")),
        (r.join("missing/../in-link"), r.join("src/main.rs")),
        (r.join("in-link"), r.join("src/main.rs")),
        (r.join("out-dir/../repo/src"), r.join("src")),
        (
            r.join("out-dir/secret.txt"),
            t.root.join("outside/secret.txt"),
        ),
        (r.join("dangling"), t.root.join("outside/new.txt")),
        (r.join("src/main.rs/x"), r.join("src/main.rs/x")),
        (PathBuf::from("/../../"), PathBuf::from("/")),
        (PathBuf::from("/"), PathBuf::from("/")),
    ];
    for (input, want) in cases {
        assert_eq!(
            canonicalize_lenient(input).as_ref(),
            Ok(want),
            "{}",
            input.display()
        );
    }
    // Relative input is taken against the process's directory.
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    assert_eq!(canonicalize_lenient(Path::new("x/y")), Ok(cwd.join("x/y")));
}

#[test]
fn long_symlink_chains_are_followed_up_to_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    fs::write(root.join("target"), "t").unwrap();
    // l0 -> target, l1 -> l0, ... l40 -> l39: 41 links to get through l40.
    symlink("target", root.join("l0")).unwrap();
    for i in 1..=40 {
        symlink(format!("l{}", i - 1), root.join(format!("l{i}"))).unwrap();
    }
    assert_eq!(
        canonicalize_lenient(&root.join("l39")),
        Ok(root.join("target"))
    );
    assert!(matches!(
        canonicalize_lenient(&root.join("l40")),
        Err(ConfineError::Loop { .. })
    ));
}

#[test]
fn tilde_expansion_helper() {
    let home = Some(Path::new("/home/u"));
    let cases: &[(&str, Option<&Path>, &str)] = &[
        ("~", home, "/home/u"),
        ("~/", home, "/home/u/"),
        ("~/x/y", home, "/home/u/x/y"),
        ("~//x", home, "/home/u/x"),
        ("~user/x", home, "~user/x"),
        ("a/~/x", home, "a/~/x"),
        ("/abs", home, "/abs"),
        ("~/x", None, "~/x"),
    ];
    for (input, h, want) in cases {
        assert_eq!(expand_tilde(input, *h), PathBuf::from(want), "{input}");
    }
}

#[test]
fn tilde_paths_are_expanded_before_checking() {
    let Some(home) = uji_policy::home_dir() else {
        return;
    };
    let p = Policy::default();
    let cwd = Path::new("/nonexistent-uji-cwd");
    // ~/x is under $HOME, which is not the working directory.
    match p.check_path("~/.ssh/id_rsa", cwd) {
        Err(ConfineError::Outside { .. }) => {}
        other => panic!("expected Outside, got {other:?}"),
    }
    let mut p = Policy::default();
    p.confine(Some(false));
    let want = canonicalize_lenient(&home.join(".ssh/id_rsa")).unwrap();
    assert_eq!(p.check_path("~/.ssh/id_rsa", cwd), Ok(want));
}

#[test]
fn read_roots_open_a_directory_to_reading_only() {
    let t = tree();
    let mut p = Policy::default();
    p.read_roots(Some(vec![s(&t.root.join("ref"))]));
    // Reading reaches it, with the root to open it beneath.
    assert_eq!(
        p.check_read_path("../ref/doc.md", &t.repo).unwrap(),
        t.root.join("ref/doc.md")
    );
    assert_eq!(
        p.read_root_of("../ref/doc.md", &t.repo),
        Some(t.root.join("ref"))
    );
    // Writing (check_path) does not.
    assert!(p.check_path("../ref/doc.md", &t.repo).is_err());
    // Nor does reading anywhere else; the error names the read roots too.
    let err = p
        .check_read_path("../outside/secret.txt", &t.repo)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&t.root.join("ref").display().to_string()),
        "{err}"
    );
    assert_eq!(p.read_root_of("../outside/secret.txt", &t.repo), None);
    // A symlink inside the read root leading out does not widen it.
    std::os::unix::fs::symlink(t.root.join("outside"), t.root.join("ref/out")).unwrap();
    assert!(p.check_read_path("../ref/out/secret.txt", &t.repo).is_err());
    // The workspace stays readable and the list reads back.
    assert!(p.check_read_path("src/main.rs", &t.repo).is_ok());
    assert_eq!(p.read_roots(None), vec![t.root.join("ref")]);
}
