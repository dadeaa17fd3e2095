//! Programs that run their arguments as a command, and how to find that
//! command: `sudo rm -rf v` runs `rm -rf v`, `bash -c 'rm -rf v'` runs the
//! script `rm -rf v`, `find . -delete` deletes.

use super::CommandPart;
use super::assign::changes_what_runs;
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

/// How a program that runs a command given as its later words is called.
struct Wrapper {
    /// Options taking a value as the next word (`-u USER`); as the last
    /// letter of a cluster of short options too (`-iu USER`).
    takes: &'static [&'static str],
    /// Words between the options and the command (a duration, a
    /// directory, a CPU mask, a lock file).
    positional: usize,
    /// `-c STRING` among the arguments is a script (`flock`, `runuser`).
    script_option: bool,
}

const fn w(takes: &'static [&'static str], positional: usize) -> Wrapper {
    Wrapper {
        takes,
        positional,
        script_option: false,
    }
}

const NONE: &[&str] = &[];

/// The wrappers uji looks through, by program name.
fn wrapper(program: &str) -> Option<Wrapper> {
    Some(match program {
        "command" | "builtin" | "exec" | "nohup" | "setsid" | "chronic" | "unbuffer" | "coproc"
        | "nocache" | "catchsegv" | "valgrind" | "firejail" | "dbus-run-session"
        | "proxychains" | "proxychains4" => w(&["-a", "-f"], 0),
        "time" => w(&["-f", "--format", "-o", "--output"], 0),
        "env" => w(&["-u", "-C", "--unset", "--chdir", "-a", "--argv0"], 0),
        "nice" => w(&["-n", "--adjustment"], 0),
        "watch" => w(&["-n", "--interval", "-q", "--equexit"], 0),
        "ionice" => w(&["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"], 0),
        "timeout" => w(&["-s", "-k", "--signal", "--kill-after"], 1),
        "stdbuf" => w(&["-i", "-o", "-e", "--input", "--output", "--error"], 0),
        "sudo" => w(SUDO, 0),
        "doas" => w(&["-u", "-C"], 0),
        "busybox" => w(NONE, 0),
        "runuser" => Wrapper {
            script_option: true,
            ..w(&["-u", "-g", "-G", "--user", "--group", "--supp-group"], 0)
        },
        "chroot" => w(&["--userspec", "--groups"], 1),
        "flock" => Wrapper {
            script_option: true,
            ..w(&["-w", "-E", "--timeout", "--conflict-exit-code"], 1)
        },
        "strace" | "ltrace" => w(
            &[
                "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-I", "-P", "-b", "-X", "-O", "-S",
            ],
            0,
        ),
        "xargs" => w(XARGS, 0),
        "taskset" => w(NONE, 1),
        "chrt" => w(
            &[
                "-T",
                "-P",
                "-D",
                "--sched-runtime",
                "--sched-period",
                "--sched-deadline",
            ],
            1,
        ),
        "setpriv" => w(SETPRIV, 0),
        "unshare" => w(
            &[
                "-S",
                "-G",
                "-R",
                "-w",
                "--setuid",
                "--setgid",
                "--root",
                "--wd",
                "--map-user",
                "--map-group",
                "--map-users",
                "--map-groups",
                "--propagation",
                "--monotonic",
                "--boottime",
            ],
            0,
        ),
        "prlimit" => w(&["-p", "--pid", "-o", "--output"], 0),
        "fakeroot" => w(&["-l", "--lib", "--faked", "-s", "-i", "-b"], 0),
        "systemd-run" => w(SYSTEMD_RUN, 0),
        "nsenter" => w(&["-t", "--target", "-S", "--setuid", "-G", "--setgid"], 0),
        "pkexec" => w(&["--user"], 0),
        "xvfb-run" => w(
            &[
                "-n",
                "-s",
                "-e",
                "-f",
                "-p",
                "-w",
                "--server-num",
                "--server-args",
                "--error-file",
                "--auth-file",
                "--xauth-protocol",
                "--wait",
            ],
            0,
        ),
        "faketime" => w(NONE, 1),
        "cpulimit" => w(&["-l", "--limit", "-p", "--pid", "-e", "--exe"], 0),
        "torsocks" => w(&["-u", "-p", "-a", "-P"], 0),
        "perf" => w(
            &[
                "-e", "-o", "-p", "-t", "-C", "-r", "-G", "-x", "-I", "--event", "--output",
                "--pid", "--tid", "--cpu", "--repeat",
            ],
            1,
        ),
        _ => return None,
    })
}

const SUDO: &[&str] = &[
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
];

const XARGS: &[&str] = &[
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
];

const SETPRIV: &[&str] = &[
    "--reuid",
    "--regid",
    "--ruid",
    "--rgid",
    "--euid",
    "--egid",
    "--groups",
    "--inh-caps",
    "--ambient-caps",
    "--bounding-set",
    "--securebits",
    "--pdeathsig",
    "--selinux-label",
    "--apparmor-profile",
    "--landlock-access",
    "--landlock-rule",
    "--seccomp-filter",
];

const SYSTEMD_RUN: &[&str] = &[
    "-u",
    "-p",
    "-E",
    "-M",
    "-H",
    "--unit",
    "--property",
    "--description",
    "--slice",
    "--setenv",
    "--machine",
    "--host",
    "--uid",
    "--gid",
    "--nice",
    "--working-directory",
    "--on-active",
    "--on-boot",
    "--on-startup",
    "--on-unit-active",
    "--on-unit-inactive",
    "--on-calendar",
    "--timer-property",
    "--path-property",
    "--socket-property",
    "--service-type",
];

/// Programs whose later words uji reads for what they run (the wrappers,
/// the shells, `find`, `git`, `eval`…), sorted for a binary search: those
/// words are parts of their own.
const LOOKED_THROUGH: &[&str] = &[
    ".",
    "alias",
    "ash",
    "at",
    "bash",
    "batch",
    "builtin",
    "busybox",
    "catchsegv",
    "chronic",
    "chroot",
    "chrt",
    "command",
    "coproc",
    "cpulimit",
    "crontab",
    "dash",
    "dbus-run-session",
    "doas",
    "env",
    "eval",
    "exec",
    "fakeroot",
    "faketime",
    "find",
    "firejail",
    "flock",
    "git",
    "ionice",
    "ksh",
    "ltrace",
    "mksh",
    "nice",
    "nocache",
    "nohup",
    "nsenter",
    "parallel",
    "perf",
    "pkexec",
    "prlimit",
    "proxychains",
    "proxychains4",
    "rbash",
    "runuser",
    "script",
    "setpriv",
    "setsid",
    "sg",
    "sh",
    "source",
    "ssh",
    "stdbuf",
    "strace",
    "su",
    "sudo",
    "systemd-run",
    "taskset",
    "time",
    "timeout",
    "torsocks",
    "trap",
    "unbuffer",
    "unshare",
    "valgrind",
    "watch",
    "xargs",
    "xvfb-run",
    "zsh",
];

/// Whether uji reads what `program` runs from its later words.
pub(crate) fn is_looked_through(program: &str) -> bool {
    LOOKED_THROUGH.binary_search(&program).is_ok()
}

/// Programs known to treat their arguments as data, never as a program to
/// run, sorted for a binary search. For any other program uji does not
/// look through, a later word naming a program a deny rule names makes
/// the part unresolved.
const RUN_NO_ARGUMENTS: &[&str] = &[
    "[",
    "base64",
    "basename",
    "cat",
    "cd",
    "chgrp",
    "chmod",
    "chown",
    "cmp",
    "column",
    "comm",
    "cp",
    "cut",
    "date",
    "declare",
    "df",
    "diff",
    "dirname",
    "du",
    "echo",
    "egrep",
    "exit",
    "expand",
    "export",
    "false",
    "fgrep",
    "file",
    "fmt",
    "fold",
    "grep",
    "head",
    "hexdump",
    "hostname",
    "id",
    "join",
    "jq",
    "kill",
    "ln",
    "local",
    "ls",
    "md5sum",
    "mkdir",
    "mktemp",
    "mv",
    "nl",
    "od",
    "paste",
    "printenv",
    "printf",
    "ps",
    "pwd",
    "read",
    "readlink",
    "realpath",
    "return",
    "rev",
    "rg",
    "rm",
    "rmdir",
    "seq",
    "set",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "shift",
    "shopt",
    "shuf",
    "sleep",
    "sort",
    "split",
    "stat",
    "tac",
    "tail",
    "tee",
    "test",
    "touch",
    "tr",
    "tree",
    "true",
    "truncate",
    "type",
    "uname",
    "unexpand",
    "uniq",
    "unset",
    "wait",
    "wc",
    "which",
    "whoami",
    "xxd",
    "yes",
];

/// Whether `program` is known to run none of its arguments.
pub(crate) fn runs_no_arguments(program: &str) -> bool {
    RUN_NO_ARGUMENTS.binary_search(&program).is_ok()
}

/// The inner commands `program` (already reduced to its name) runs.
pub(crate) fn look_through(program: &str, words: &[Word]) -> Vec<Inner> {
    let args = words.get(1..).unwrap_or(&[]);
    match program {
        "bash" | "rbash" => shell_script(program, words, shell_c(args)),
        // Their grammar is not bash's: what uji reads in the script may not
        // be what they run (`$'…'` is no quoting to dash).
        "sh" | "zsh" | "dash" | "ksh" | "mksh" | "ash" => {
            let mut inner = shell_script(program, words, shell_c(args));
            if inner.iter().any(|i| matches!(i, Inner::Script(_))) {
                inner.push(unknown(
                    words,
                    format!(
                        "`{program}` reads its script with a grammar other than bash's; \
                         run it with `bash -c` instead"
                    ),
                ));
            }
            inner
        }
        // `su user -c STRING`: the option may come after the user.
        "su" | "script" => command_option(args).into_iter().collect(),
        // `sg GROUP -c STRING` or `sg GROUP STRING`.
        "sg" => command_option(args)
            .into_iter()
            .chain(
                args.get(1)
                    .filter(|w| !w.plain().starts_with('-'))
                    .map(|w| script_word(w, args)),
            )
            .collect(),
        "parallel" => parallel(args),
        "ssh" => ssh(args),
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
        // They run commands from their input or a file, which nobody sees.
        "source" | "." => vec![unknown(
            words,
            format!("`{program}` runs commands from a file, which nobody can see in the line"),
        )],
        "at" | "batch" | "crontab" => vec![unknown(
            words,
            format!("`{program}` runs commands from its input, which nobody can see yet"),
        )],
        _ => match wrapper(program) {
            Some(spec) => match command_option(args).filter(|_| spec.script_option) {
                Some(script) => vec![script],
                None => wrapped(program, args, &spec),
            },
            None => Vec::new(),
        },
    }
}

fn unknown(words: &[Word], why: String) -> Inner {
    let raw: Vec<&str> = words.iter().map(|w| w.raw.as_str()).collect();
    Inner::Part(CommandPart::unresolved(&raw.join(" "), why))
}

/// A word holding a script: parsed, or unresolved when only known at run
/// time or expanded by the shell.
fn script_word(w: &Word, args: &[Word]) -> Inner {
    match &w.value {
        Some(v) if !w.expands => Inner::Script(v.clone()),
        _ => unknown(
            args,
            format!("the command string `{}` is only known when it runs", w.raw),
        ),
    }
}

/// Whether the option word `v` needs the next word as its value: a long
/// option in `takes` without `=`, or a cluster of short options whose last
/// letter is one in `takes` (`-u`, `-iu`; `-uX` has its value attached).
fn needs_value(v: &str, takes: &[&str]) -> bool {
    if v.starts_with("--") {
        return !v.contains('=') && takes.contains(&v);
    }
    let letters = v.get(1..).unwrap_or("");
    for (i, c) in letters.char_indices() {
        let mut short = [0u8; 4];
        let opt = format!("-{}", c.encode_utf8(&mut short));
        if takes.contains(&opt.as_str()) {
            return i + c.len_utf8() == letters.len();
        }
    }
    false
}

/// `sudo`, `env`, `timeout`…: skip options (and the values of those that
/// take one), `VAR=val` for `env`, the positional words; the rest is the
/// command. A word before the command that the shell expands, or that is
/// only known at run time, leaves the command unknown.
fn wrapped(program: &str, args: &[Word], spec: &Wrapper) -> Vec<Inner> {
    let mut i = 0;
    let mut positional_skip = spec.positional;
    while let Some(w) = args.get(i) {
        let Some(v) = w.value.as_deref().filter(|_| !w.expands) else {
            return vec![unknown(
                args,
                format!("`{program}` runs `{}`, only known when it runs", w.raw),
            )];
        };
        if v == "--" {
            i += 1;
            break;
        }
        // `env -` is `env -i`.
        if program == "env" && v == "-" {
            i += 1;
            continue;
        }
        // `env -S STRING`, `-SSTRING`, `-iS STRING`, `--split-string[=]STRING`:
        // the string is split into the command.
        if program == "env"
            && let Some(script) = script_option(args, i, &["--split-string"], 'S')
        {
            return vec![
                script.unwrap_or_else(|| unknown(args, "`env -S` with no string after it".into())),
            ];
        }
        if v.starts_with('-') && v.len() > 1 {
            i += if needs_value(v, spec.takes) { 2 } else { 1 };
            continue;
        }
        if program == "env" && v.contains('=') {
            let name = v.split('=').next().unwrap_or("");
            if changes_what_runs(name) {
                return vec![unknown(
                    args,
                    format!("`env {name}=…` changes what the command runs"),
                )];
            }
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
        return Vec::new();
    }
    if program == "xargs" {
        // The input adds arguments nobody can see yet.
        inner.push(Word::known("<arguments from xargs>"));
    }
    vec![Inner::Command(inner)]
}

/// The value of a long option among `names`: `Some(Some(value))` for
/// `--name=value`, `Some(None)` for `--name` (the value is the next word),
/// `None` when `v` is none of them.
fn long_value<'v>(v: &'v str, names: &[&str]) -> Option<Option<&'v str>> {
    names.iter().find_map(|name| {
        let rest = v.strip_prefix(name)?;
        if rest.is_empty() {
            Some(None)
        } else {
            rest.strip_prefix('=').map(Some)
        }
    })
}

/// The value of the short option `letter` in the cluster `v` (`-S`, `-iS`,
/// `-SVALUE`): `Some(Some(value))` when attached, `Some(None)` when it is
/// the next word, `None` when `v` is no cluster holding the letter.
fn short_value(v: &str, letter: char) -> Option<Option<&str>> {
    if v.starts_with("--") || !v.starts_with('-') {
        return None;
    }
    let letters = v.get(1..)?;
    let at = letters.find(letter)?;
    let rest = letters.get(at + letter.len_utf8()..).unwrap_or("");
    Some((!rest.is_empty()).then_some(rest))
}

/// The script an option given as `long` or as the short `letter` holds,
/// if `args[i]` is that option: attached, or the next word (unresolved
/// when only known at run time; `None` when there is no next word).
fn script_option(args: &[Word], i: usize, long: &[&str], letter: char) -> Option<Option<Inner>> {
    let v = args.get(i)?.plain();
    let value = long_value(v, long).or_else(|| short_value(v, letter))?;
    Some(match value {
        Some(script) => Some(Inner::Script(script.to_string())),
        None => args.get(i + 1).map(|next| script_word(next, args)),
    })
}

/// `-c STRING`, `-cSTRING`, a cluster ending in `c` (`-lc STRING`),
/// `--command STRING`, `--command=STRING` or `--session-command[=]STRING`
/// anywhere among the arguments (`su`, `flock`, `runuser`, `script`, `sg`):
/// STRING is a script. Reading a `c` inside any cluster as this option errs
/// towards finding more commands, never fewer.
fn command_option(args: &[Word]) -> Option<Inner> {
    (0..args.len())
        .find_map(|i| script_option(args, i, &["--command", "--session-command"], 'c'))
        .flatten()
}

/// A shell with no `-c` reads its commands from a file or its input
/// (`bash script.sh`, `echo rm -rf v | bash`, `bash <<< 'rm -rf v'`):
/// nobody can see them in the line. `--version` and `--help` run nothing.
fn shell_script(program: &str, words: &[Word], inner: Vec<Inner>) -> Vec<Inner> {
    let args = words.get(1..).unwrap_or(&[]);
    let reads_nothing = args
        .iter()
        .all(|w| matches!(w.plain(), "--version" | "--help"))
        && !args.is_empty();
    if !inner.is_empty() || reads_nothing {
        return inner;
    }
    vec![unknown(
        words,
        format!(
            "`{program}` runs commands from a file or its input, which nobody can see in the line"
        ),
    )]
}

/// `bash -c 'STRING'` (also `-ec`, `-lc`, `-o pipefail -c`, `--norc -c`…):
/// STRING, the first word after the options, is parsed as a script.
fn shell_c(args: &[Word]) -> Vec<Inner> {
    let mut has_c = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let Some(v) = w.value.as_deref().filter(|_| !w.expands) else {
            if has_c {
                return vec![unknown(
                    args,
                    format!("the script `{}` is only known when it runs", w.raw),
                )];
            }
            return Vec::new();
        };
        i += 1;
        if v == "--" {
            break;
        }
        if v.starts_with("--") {
            if matches!(v, "--rcfile" | "--init-file") {
                i += 1;
            }
            continue;
        }
        if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
            let letters = v.get(1..).unwrap_or("");
            has_c |= v.starts_with('-') && letters.contains('c');
            // `-o NAME` / `-O NAME` take the next word, once per letter.
            i += letters.chars().filter(|c| matches!(c, 'o' | 'O')).count();
            continue;
        }
        return if has_c {
            vec![script_word(w, args)]
        } else {
            Vec::new()
        };
    }
    match args.get(i) {
        Some(w) if has_c => vec![script_word(w, args)],
        _ => Vec::new(),
    }
}

/// GNU `parallel [options] COMMAND ::: ARGS`: the command words are a
/// script; with no command, the commands come from the input or the
/// argument lists, which nobody can see.
fn parallel(args: &[Word]) -> Vec<Inner> {
    const TAKES: &[&str] = &[
        "-j",
        "-S",
        "-N",
        "-n",
        "-I",
        "-d",
        "-a",
        "-E",
        "-L",
        "--jobs",
        "--sshlogin",
        "--max-args",
        "--delay",
        "--timeout",
        "--results",
        "--joblog",
        "--colsep",
        "--delimiter",
        "--arg-file",
        "--tmpdir",
        "--workdir",
        "--wd",
        "--env",
        "--retries",
        "--halt",
    ];
    let mut i = 0;
    while let Some(v) = args.get(i).map(Word::plain) {
        if v.starts_with("-") && !v.starts_with(":::") {
            i += if needs_value(v, TAKES) { 2 } else { 1 };
            continue;
        }
        break;
    }
    let command: Vec<&Word> = args
        .iter()
        .skip(i)
        .take_while(|w| !w.plain().starts_with(":::"))
        .collect();
    if command.is_empty() {
        return vec![unknown(
            args,
            "`parallel` runs commands from its input, which nobody can see yet".into(),
        )];
    }
    let words: Vec<Word> = command.into_iter().cloned().collect();
    joined_script(&words, "parallel")
}

/// `ssh [options] HOST COMMAND…`: the command words, joined, are a script
/// the remote shell runs (and the host may be this machine).
fn ssh(args: &[Word]) -> Vec<Inner> {
    const TAKES: &[&str] = &[
        "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
        "-Q", "-R", "-S", "-W", "-w", "-B",
    ];
    let mut i = 0;
    while let Some(v) = args.get(i).map(Word::plain) {
        if v.starts_with('-') && v.len() > 1 {
            i += if needs_value(v, TAKES) { 2 } else { 1 };
            continue;
        }
        break;
    }
    joined_script(args.get(i + 1..).unwrap_or(&[]), "ssh")
}

/// `eval a b` runs the script `a b`.
fn joined_script(args: &[Word], who: &str) -> Vec<Inner> {
    let mut s = Vec::new();
    for w in args {
        match &w.value {
            Some(v) if !w.expands => s.push(v.clone()),
            _ => {
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
/// as the part `rm -rf <paths> (find -delete)` so that rules on `rm` apply;
/// `-exec rm …` adds the part `rm -rf {} (find -exec)` for the same reason.
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
            let deletes = cmd
                .first()
                .is_some_and(|w| w.plain().rsplit('/').next() == Some("rm"));
            match cmd.first().map(|w| w.value.is_some()) {
                Some(true) if deletes => {
                    // Whatever its options, `rm` run on what find finds
                    // deletes a tree: say so in the form deny rules name.
                    let mut deletion = vec![Word::known("rm"), Word::known("-rf")];
                    deletion.extend(
                        cmd.iter()
                            .skip(1)
                            .filter(|w| !w.plain().starts_with('-'))
                            .cloned(),
                    );
                    deletion.push(Word::known(&format!("(find {v})")));
                    out.push(Inner::Command(cmd));
                    out.push(Inner::Command(deletion));
                }
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
                Word::known("-rf"),
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

/// Git subcommands given a command to run: `submodule foreach CMD`,
/// `bisect run CMD…`, `rebase -x CMD`, `filter-branch --tree-filter CMD`,
/// `difftool -x CMD`. The command is a script of its own.
fn git_runs(sub: &[Word]) -> Vec<Inner> {
    let names: Vec<&str> = sub.iter().map(Word::plain).collect();
    match names.as_slice() {
        ["submodule", rest @ ..] => match rest.iter().position(|w| *w == "foreach") {
            Some(i) => joined_script(sub.get(i + 2..).unwrap_or(&[]), "git submodule foreach"),
            None => Vec::new(),
        },
        ["bisect", "run", ..] => joined_script(sub.get(2..).unwrap_or(&[]), "git bisect run"),
        ["rebase" | "filter-branch" | "difftool" | "mergetool", ..] => {
            const RUNS: &[&str] = &[
                "-x",
                "--exec",
                "--extcmd",
                "--tree-filter",
                "--index-filter",
                "--env-filter",
                "--msg-filter",
                "--commit-filter",
                "--parent-filter",
                "--tag-name-filter",
                "--tool",
            ];
            let mut out = Vec::new();
            for (i, w) in sub.iter().enumerate() {
                let v = w.plain();
                if RUNS.contains(&v) {
                    if let Some(next) = sub.get(i + 1) {
                        out.push(script_word(next, sub));
                    }
                } else if let Some((opt, value)) = v.split_once('=')
                    && RUNS.contains(&opt)
                {
                    out.push(Inner::Script(value.to_string()));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// `git -c key=val …` / `--config-env key=ENV`: a key that runs commands
/// makes the call unresolved; so does a key only known at run time. The
/// subcommand may run a command of its own (`git_runs`).
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
    git_runs(args.get(i..).unwrap_or(&[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_lists_are_sorted_and_complete() {
        for list in [LOOKED_THROUGH, RUN_NO_ARGUMENTS] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
        // Every wrapper is in the list of programs looked through.
        for name in [
            "sudo", "env", "taskset", "perf", "coproc", "bash", "git", "at",
        ] {
            assert!(is_looked_through(name), "{name}");
            assert!(!runs_no_arguments(name), "{name}");
        }
        assert!(
            LOOKED_THROUGH
                .iter()
                .filter(|p| wrapper(p).is_some())
                .count()
                >= 40
        );
        assert!(runs_no_arguments("echo") && runs_no_arguments("rm"));
    }
}
