//! A provider key in uji's environment never reaches a process started
//! with `proc.start`, whether or not the request's `env` names it. One test
//! alone in its binary: it sets the variable before any thread could read
//! the environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use uji_plugin_tools::Procs;
use uji_sdk::protocol::procs::{ProcCommand, ProcRead, ProcStart};

/// The name the end-to-end child-env tests use (`tests/e2e/child_env.rs`).
const KEY: (&str, &str) = ("ANTHROPIC_API_KEY", "sk-ant-proc-test");
const PLAIN: (&str, &str) = ("PATH_LIKE_PLAIN_VAR", "plain-value");

fn lines(procs: &Procs, request: ProcStart) -> Vec<String> {
    let id = procs.start(request).unwrap().id;
    let mut out = Vec::new();
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        let answer = procs.read(ProcRead { id, wait_ms: 2000 }).unwrap();
        out.extend(answer.stdout);
        if answer.exit.is_some() {
            return out;
        }
    }
    panic!("the process did not end");
}

#[test]
fn a_provider_key_of_uji_never_reaches_the_process() {
    // SAFETY: the only test of this binary, before any thread starts.
    unsafe {
        std::env::set_var(KEY.0, KEY.1);
    }
    let procs = Procs::with_sandbox(None);
    let request = |command: ProcCommand| ProcStart {
        command,
        cwd: None,
        env: [(PLAIN.0.to_string(), PLAIN.1.to_string())].into(),
        timeout_ms: None,
    };
    for command in [
        ProcCommand::Shell("env".into()),
        ProcCommand::Argv(vec!["env".into()]),
    ] {
        let env = lines(&procs, request(command));
        assert!(
            !env.iter()
                .any(|l| l.starts_with(KEY.0) || l.contains(KEY.1)),
            "{env:?}"
        );
        assert!(env.contains(&format!("{}={}", PLAIN.0, PLAIN.1)), "{env:?}");
        assert!(env.iter().any(|l| l.starts_with("PATH=")), "{env:?}");
    }
    let mut again = request(ProcCommand::Argv(vec!["env".into()]));
    again.env.insert(KEY.0.into(), KEY.1.into());
    let e = procs.start(again).unwrap_err();
    assert!(e.contains(KEY.0) && e.contains("child_env.pass"), "{e}");
}
