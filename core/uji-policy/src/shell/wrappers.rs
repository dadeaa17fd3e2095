//! Programs that run their arguments as a command, and how to find that
//! command: `sudo rm -rf v` runs `rm -rf v`, `bash -c 'rm -rf v'` runs the
//! script `rm -rf v`, `find . -delete` deletes.

use super::CommandPart;
use super::words::Word;

/// What a program runs besides itself.
pub(crate) enum Inner {
    /// A command given as words (`sudo rm -rf v` → `rm -rf v`).
    Command(Vec<Word>),
    /// A command given as a string to parse (`bash -c`, `eval`, `env -S`).
    Script(String),
    /// A finished part (an unresolved one, or `find -delete`'s deletion).
    Part(CommandPart),
}

/// Options taking a value, per wrapper; the command starts at the first
/// other non-option word.
fn option_values(program: &str) -> Option<&'static [&'static str]> {
    Some(match program {
        "command" | "builtin" | "exec" | "nohup" | "time" | "setsid" | "chronic" | "unbuffer" => {
            &["-a"]
        }
        "env" => &["-u", "-C", "--unset", "--chdir", "-S", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "watch" => &["-n", "--interval", "-q", "--equexit"],
        "ionice" => &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "sudo" => &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "--user",
            "--group",
            "--chdir",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
            "--close-from",
            "--host",
            "--command-timeout",
            "--chroot",
        ],
        "doas" => &["-u", "-C"],
        "busybox" => &[],
        "runuser" => &["-u", "-g", "-G", "--user", "--group", "--supp-group"],
        "chroot" => &["--userspec", "--groups"],
        "flock" => &["-w", "-E", "--timeout", "--conflict-exit-code"],
        "strace" | "ltrace" => &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-I", "-P", "-b", "-X", "-O", "-S",
        ],
        "xargs" => &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--delimiter",
            "--arg-file",
            "--eof",
            "--replace",
            "--process-slot-var",
        ],
        _ => return None,
    })
}

/// The inner commands `program` (already reduced to its name) runs.
pub(crate) fn look_through(program: &str, words: &[Word]) -> Vec<Inner> {
    let args = words.get(1..).unwrap_or(&[]);
    match program {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" => shell_c(args),
        // `su user -c STRING`: the option may come after the user.
        "su" => command_option(args).into_iter().collect(),
        // An alias runs its value wherever its name is used later.
        "alias" => args
            .iter()
            .filter_map(|w| w.plain().split_once('='))
            .map(|(_, v)| Inner::Script(v.to_string()))
            .collect(),
        "eval" => joined_script(args, "eval"),
        // `trap 'cmd' SIGNAL` runs cmd later; the signal names are not code.
        "trap" => match args.first().filter(|w| !w.plain().starts_with('-')) {
            Some(w) => joined_script(std::slice::from_ref(w), "trap"),
            None => Vec::new(),
        },
        "find" => find(words),
        "git" => git(words),
        _ => match option_values(program) {
            // `flock FILE -c STRING`, `runuser USER -c STRING`, or a command.
            Some(takes) => {
                match command_option(args).filter(|_| matches!(program, "flock" | "runuser")) {
                    Some(script) => vec![script],
                    None => wrapped(program, args, takes),
                }
            }
            None => Vec::new(),
        },
    }
}

fn unknown(words: &[Word], why: String) -> Inner {
    let raw: Vec<&str> = words.iter().map(|w| w.raw.as_str()).collect();
    Inner::Part(CommandPart::unresolved(&raw.join(" "), why))
}

/// `sudo`, `env`, `timeout`…: skip options (and the values of those that
/// take one), `VAR=val` for `env`, the duration for `timeout`; the rest is
/// the command.
fn wrapped(program: &str, args: &[Word], takes: &[&str]) -> Vec<Inner> {
    let mut i = 0;
    // Words between the options and the command: a duration, a directory,
    // a lock file.
    let mut positional_skip = usize::from(matches!(program, "timeout" | "chroot" | "flock"));
    let mut out = Vec::new();
    while let Some(w) = args.get(i) {
        let Some(v) = w.value.as_deref() else {
            return vec![unknown(
                args,
                format!("`{program}` runs `{}`, only known when it runs", w.raw),
            )];
        };
        if v == "--" {
            i += 1;
            break;
        }
        if program == "env" && (v == "-S" || v == "--split-string" || v.starts_with("-S")) {
            // `env -S 'cmd args'` splits a string into the command.
            let s = if v.len() > 2 && !v.starts_with("--") {
                v.get(2..).map(str::to_string)
            } else {
                args.get(i + 1).and_then(|w| w.value.clone())
            };
            match s {
                Some(s) => out.push(Inner::Script(s)),
                None => out.push(unknown(
                    args,
                    "`env -S` with a string only known when it runs".into(),
                )),
            }
            return out;
        }
        if v.starts_with('-') && v.len() > 1 {
            let name = v.split('=').next().unwrap_or(v);
            let needs_value = takes.contains(&name) && !v.contains('=') && v.len() == name.len();
            // A short option with its value attached (`-n10`, `-oL`) takes none.
            i += if needs_value { 2 } else { 1 };
            continue;
        }
        if program == "env" && v.contains('=') {
            i += 1;
            continue;
        }
        if positional_skip > 0 {
            positional_skip -= 1;
            i += 1;
            continue;
        }
        break;
    }
    let mut inner: Vec<Word> = args.get(i..).unwrap_or(&[]).to_vec();
    if inner.is_empty() {
        return out;
    }
    if program == "xargs" {
        // The input adds arguments nobody can see yet.
        inner.push(Word::known("<arguments from xargs>"));
    }
    out.push(Inner::Command(inner));
    out
}

/// `-c STRING` / `--command STRING` anywhere among the arguments (`su`,
/// `flock`): STRING is a script.
fn command_option(args: &[Word]) -> Option<Inner> {
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let v = w.plain();
        let script = if v == "-c" || v == "--command" {
            it.next()
        } else if let Some(rest) = v.strip_prefix("--command=") {
            return Some(Inner::Script(rest.to_string()));
        } else {
            continue;
        };
        return Some(match script.map(|s| s.value.clone()) {
            Some(Some(s)) => Inner::Script(s),
            Some(None) => unknown(args, "the command string is only known when it runs".into()),
            None => return None,
        });
    }
    None
}

/// `bash -c 'STRING'` (also `-ec`, `-lc`…): STRING is parsed as a script.
fn shell_c(args: &[Word]) -> Vec<Inner> {
    let mut has_c = false;
    for (i, w) in args.iter().enumerate() {
        let Some(v) = w.value.as_deref() else {
            if has_c {
                return vec![unknown(
                    args,
                    format!("the script `{}` is only known when it runs", w.raw),
                )];
            }
            return Vec::new();
        };
        if v.starts_with('-') && !v.starts_with("--") && v.len() > 1 {
            has_c |= v.contains('c');
            let _ = i;
            continue;
        }
        if v.starts_with("--") || v.starts_with('+') {
            continue;
        }
        return if has_c {
            vec![Inner::Script(v.to_string())]
        } else {
            Vec::new()
        };
    }
    Vec::new()
}

/// `eval a b` runs the script `a b`.
fn joined_script(args: &[Word], who: &str) -> Vec<Inner> {
    let mut s = Vec::new();
    for w in args {
        match &w.value {
            Some(v) => s.push(v.clone()),
            None => {
                return vec![unknown(
                    args,
                    format!("`{who}` runs `{}`, only known when it runs", w.raw),
                )];
            }
        }
    }
    if s.is_empty() {
        Vec::new()
    } else {
        vec![Inner::Script(s.join(" "))]
    }
}

/// `find … -exec cmd {} ;` runs `cmd {}`; `find … -delete` deletes, shown
/// as the part `rm <paths> (find -delete)` so that rules on `rm` apply.
fn find(words: &[Word]) -> Vec<Inner> {
    let args = words.get(1..).unwrap_or(&[]);
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let v = w.plain();
        if matches!(v, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let cmd: Vec<Word> = args
                .get(i + 1..)
                .unwrap_or(&[])
                .iter()
                .take_while(|w| !matches!(w.plain(), ";" | "+"))
                .cloned()
                .collect();
            i += cmd.len() + 2;
            match cmd.first().map(|w| w.value.is_some()) {
                Some(true) => out.push(Inner::Command(cmd)),
                Some(false) => out.push(unknown(
                    &cmd,
                    format!("`find {v}` runs a program only known when it runs"),
                )),
                None => {}
            }
            continue;
        }
        if v == "-delete" {
            let paths: Vec<&str> = args
                .iter()
                .map(Word::plain)
                .take_while(|p| !p.starts_with('-') && !matches!(*p, "(" | "!"))
                .collect();
            let paths = if paths.is_empty() {
                ".".to_string()
            } else {
                paths.join(" ")
            };
            out.push(Inner::Command(vec![
                Word::known("rm"),
                Word::known(&paths),
                Word::known("(find -delete)"),
            ]));
        }
        i += 1;
    }
    out
}

/// Git configs that make git run a program of the config's choosing.
fn runs_commands(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    const EXACT: &[&str] = &[
        "core.pager",
        "core.sshcommand",
        "core.editor",
        "core.fsmonitor",
        "core.hookspath",
        "core.askpass",
        "core.gitproxy",
        "sequence.editor",
        "credential.helper",
        "gpg.program",
        "gpg.ssh.program",
        "gpg.x509.program",
        "diff.external",
        "merge.tool",
        "diff.tool",
        "pager.log",
        "uploadpack.packobjectshook",
        "include.path",
        "ssh.variant",
        "protocol.allow",
        "http.proxy",
    ];
    const PREFIX: &[&str] = &[
        "alias.",
        "filter.",
        "pager.",
        "includeif.",
        "difftool.",
        "mergetool.",
        "credential.",
        "remote.",
        "url.",
        "protocol.",
        "gpg.",
    ];
    EXACT.contains(&k.as_str())
        || PREFIX.iter().any(|p| k.starts_with(p))
        || (k.starts_with("diff.") && (k.ends_with(".textconv") || k.ends_with(".command")))
        || (k.starts_with("merge.") && k.ends_with(".driver"))
}

/// `git -c key=val …` / `--config-env key=ENV`: a key that runs commands
/// makes the call unresolved; so does a key only known at run time.
fn git(words: &[Word]) -> Vec<Inner> {
    let args = words.get(1..).unwrap_or(&[]);
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let v = w.plain();
        let setting = match v {
            "-c" | "--config-env" => args.get(i + 1).map(|n| (n, 2)),
            _ if v.starts_with("--config-env=") => Some((w, 1)),
            _ if v.starts_with("-c") && v.len() > 2 => Some((w, 1)),
            _ if v.starts_with('-') => {
                i += if matches!(v, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
                    2
                } else {
                    1
                };
                continue;
            }
            _ => break,
        };
        let Some((setting, step)) = setting else {
            break;
        };
        let kv = setting.value.as_deref().map(|s| {
            let s = s
                .strip_prefix("--config-env=")
                .or_else(|| s.strip_prefix("-c"))
                .filter(|_| step == 1)
                .unwrap_or(s);
            s.split('=').next().unwrap_or("").to_string()
        });
        match kv {
            Some(k) if !runs_commands(&k) => i += step,
            Some(k) => {
                return vec![unknown(
                    words,
                    format!("the git setting `{k}` can run any command"),
                )];
            }
            None => {
                return vec![unknown(
                    words,
                    format!(
                        "the git setting `{}` is only known when it runs",
                        setting.raw
                    ),
                )];
            }
        }
    }
    Vec::new()
}
