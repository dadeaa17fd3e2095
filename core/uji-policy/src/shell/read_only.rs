//! Which plain commands only read, and the files they name.
//!
//! A short, closed list of programs (`cat`, `ls`, `head`, `tail`, `wc`,
//! `grep`, `rg`, `find` without actions, `git status|diff|log|show|branch`
//! that lists) whose every option is known not to write, run another
//! program or follow links out of the tree. Anything else, or any option
//! that could (`find -exec`, `rg --pre`, `git diff --output`, `git branch
//! NEW`), is not read-only. A word the shell expands (a glob, a brace) is
//! never read-only either: nobody can tell what it names before it runs.
//!
//! The answer is what the command could *name*: every word that is not an
//! option, and every `--option=value` value. The policy reads a command as
//! read-only only when each of those is a path `read_file` would read
//! unasked (inside the working directory and the roots, and no rule of
//! `read_file` against it), so `cat ~/.ssh/id_rsa` still asks. A pattern
//! that is no path (`grep "fn main" src`) is checked like one, which can
//! only make uji ask where it need not.

use super::words::Word;

/// The words of `words` (program first) that may name files, when the
/// command only reads; `None` when it may do more.
pub(crate) fn named_paths(program: &str, words: &[Word]) -> Option<Vec<String>> {
    if words.iter().any(|w| !w.is_literal()) {
        return None;
    }
    let args: Vec<&str> = words.iter().skip(1).map(|w| w.plain()).collect();
    let reads = match program {
        "cat" | "ls" | "head" | "tail" | "wc" => true,
        "grep" => !args
            .iter()
            .any(|a| short_has(a, 'R') || *a == "--dereference-recursive"),
        "rg" => rg_only_reads(&args),
        "find" => find_only_reads(&args),
        "git" => return git_named_paths(&args),
        _ => false,
    };
    if !reads {
        return None;
    }
    operands(&args)
}

/// The words that may name files: each that is not an option, and each
/// `--option=value` value. An option cluster holding a path (`-f/etc/x`)
/// cannot be told apart, so the command is not read-only.
fn operands(args: &[&str]) -> Option<Vec<String>> {
    let mut named = Vec::new();
    let mut options_done = false;
    for arg in args {
        if options_done || !arg.starts_with('-') || *arg == "-" {
            named.push((*arg).to_string());
        } else if *arg == "--" {
            options_done = true;
        } else if let Some((_, value)) = arg.split_once('=') {
            named.push(value.to_string());
        } else if arg.contains(['/', '~']) {
            return None;
        }
    }
    Some(named)
}

/// A cluster of short options (`-rnR`) holding `letter`.
fn short_has(arg: &str, letter: char) -> bool {
    arg.starts_with('-') && !arg.starts_with("--") && arg.contains(letter)
}

/// The option named `long`, alone or as `--long=value`.
fn is_long(arg: &str, long: &str) -> bool {
    arg == long
        || arg
            .strip_prefix(long)
            .is_some_and(|rest| rest.starts_with('='))
}

/// `rg` without a preprocessor (`--pre` runs a program on each file),
/// decompression (`-z` runs one) or following links (`-L`).
fn rg_only_reads(args: &[&str]) -> bool {
    !args.iter().any(|a| {
        ["--pre", "--pre-glob", "--search-zip", "--follow"]
            .iter()
            .any(|long| is_long(a, long))
            || short_has(a, 'z')
            || short_has(a, 'L')
    })
}

/// `find` with none of the actions that run, delete or write.
fn find_only_reads(args: &[&str]) -> bool {
    const ACTS: &[&str] = &[
        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
    ];
    !args.iter().any(|a| ACTS.contains(a))
}

/// `git status|diff|log|show`, and `git branch` listing, after no global
/// option but `--no-pager` and `-C DIR`; none may write a file
/// (`--output`) or run a configured diff program (`--ext-diff`). The
/// directories of `-C` are named too.
fn git_named_paths(args: &[&str]) -> Option<Vec<String>> {
    let mut named = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match *arg {
            "--no-pager" => i += 1,
            "-C" => {
                named.push(args.get(i + 1)?.to_string());
                i += 2;
            }
            _ => break,
        }
    }
    let (sub, rest) = args.get(i..)?.split_first()?;
    let writes = rest
        .iter()
        .any(|a| is_long(a, "--output") || *a == "--ext-diff");
    let reads = match *sub {
        "status" | "diff" | "log" | "show" => !writes,
        "branch" => !writes && branch_lists(rest),
        _ => false,
    };
    if !reads {
        return None;
    }
    named.extend(operands(rest)?);
    Some(named)
}

/// `git branch` options that only list; with `--list`/`-l` its other
/// words are patterns, without it a word names a branch to create.
fn branch_lists(args: &[&str]) -> bool {
    const FLAGS: &[&str] = &[
        "-a",
        "--all",
        "-r",
        "--remotes",
        "-v",
        "-vv",
        "--verbose",
        "-q",
        "--quiet",
        "--show-current",
        "--color",
        "--no-color",
        "--column",
        "--no-column",
        "-i",
        "--ignore-case",
        "--omit-empty",
    ];
    const VALUED: &[&str] = &[
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
        "--abbrev",
        "--color",
    ];
    let listing = args.iter().any(|a| matches!(*a, "--list" | "-l"));
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if matches!(*arg, "--list" | "-l") || FLAGS.contains(arg) {
            continue;
        }
        if VALUED.iter().any(|v| is_long(arg, v)) {
            if !arg.contains('=') && *arg != "--color" {
                i += 1;
            }
            continue;
        }
        if arg.starts_with('-') || !listing {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace().map(Word::known).collect()
    }

    fn named(line: &str) -> Option<Vec<String>> {
        let w = words(line);
        let program = w.first().map(|w| w.plain().to_string()).unwrap_or_default();
        named_paths(&program, &w)
    }

    #[test]
    fn reading_commands_name_their_operands() {
        let table: &[(&str, &[&str])] = &[
            ("cat README.md", &["README.md"]),
            ("ls -la src", &["src"]),
            ("ls", &[]),
            ("head -n 20 src/main.rs", &["20", "src/main.rs"]),
            ("tail -5 log.txt", &["log.txt"]),
            ("wc -l a b", &["a", "b"]),
            ("grep -rn needle src", &["needle", "src"]),
            ("grep --include=x.rs -r needle .", &["x.rs", "needle", "."]),
            ("rg -n needle", &["needle"]),
            ("find . -name x.rs -type f", &[".", "x.rs", "f"]),
            ("cat -- -weird", &["-weird"]),
            ("git status --short", &[]),
            ("git diff HEAD~1", &["HEAD~1"]),
            ("git --no-pager log --oneline -5", &[]),
            ("git -C sub show HEAD:a.txt", &["sub", "HEAD:a.txt"]),
            ("git branch", &[]),
            ("git branch -a -vv", &[]),
            ("git branch --list feat", &["feat"]),
            ("git branch --contains main", &["main"]),
            ("git branch --sort=-committerdate", &["-committerdate"]),
        ];
        for (line, expected) in table {
            let expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
            assert_eq!(named(line), Some(expected), "{line}");
        }
    }

    #[test]
    fn commands_that_may_write_run_or_follow_links_are_not_read_only() {
        for line in [
            "rm a",
            "cp a b",
            "tee a",
            "sed -i s/a/b/ f",
            "find . -delete",
            "find . -exec cat {} ;",
            "find . -execdir ls ;",
            "find . -ok rm {} ;",
            "find . -fprint out",
            "find . -fls out",
            "rg --pre ./evil needle",
            "rg --pre=./evil needle",
            "rg -z needle",
            "rg -nL needle",
            "rg --follow needle",
            "grep -R needle .",
            "grep -rnR needle .",
            "grep --dereference-recursive needle .",
            "git commit -m x",
            "git push",
            "git checkout main",
            "git branch new-feature",
            "git branch -d old",
            "git branch -D old",
            "git branch -m a b",
            "git branch --set-upstream-to=origin/main",
            "git branch -u origin/main",
            "git diff --output=patch.txt",
            "git log --output patch.txt",
            "git diff --ext-diff",
            "git -c core.pager=sh status",
            "git --git-dir=/elsewhere status",
            "git -p log",
            "git",
            "head -f/etc/passwd",
        ] {
            assert_eq!(named(line), None, "{line}");
        }
    }

    #[test]
    fn a_word_the_shell_expands_is_never_read_only() {
        let mut w = words("cat x");
        w.push(Word {
            raw: "*.rs".into(),
            value: Some("*.rs".into()),
            expands: true,
        });
        assert_eq!(named_paths("cat", &w), None);
        let mut w = words("cat x");
        w.push(Word {
            raw: "$HOME".into(),
            value: None,
            expands: false,
        });
        assert_eq!(named_paths("cat", &w), None);
    }
}
