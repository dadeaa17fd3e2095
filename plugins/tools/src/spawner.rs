//! Every command starts from one thread that lives as long as uji.
//!
//! Why: a command's `sh` asks the kernel to kill it when its parent dies
//! (`PR_SET_PDEATHSIG`), so a job never outlives a uji that was killed
//! outright. The kernel means the parent *thread*: spawned from a tool call's
//! thread, which ends with the call, a command moved to the background would
//! be killed the moment its call returned.

use std::io;
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::sync::mpsc::{Sender, channel};

use parking_lot::Mutex;

type Request = (Command, Sender<io::Result<Child>>);

static SPAWNER: OnceLock<Mutex<Sender<Request>>> = OnceLock::new();

fn spawner() -> &'static Mutex<Sender<Request>> {
    SPAWNER.get_or_init(|| {
        let (tx, rx) = channel::<Request>();
        // When the thread cannot start, the receiver goes with the closure
        // and `spawn` falls back to the caller's thread.
        let _ = std::thread::Builder::new()
            .name("uji-spawner".to_string())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            });
        Mutex::new(tx)
    })
}

/// Spawns `command` from the spawner thread (from the calling thread when
/// that thread could not start).
pub fn spawn(command: Command) -> io::Result<Child> {
    let (reply, answer) = channel();
    let sent = spawner().lock().send((command, reply));
    match sent {
        Ok(()) => answer
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("the command spawner stopped"))),
        Err(std::sync::mpsc::SendError((mut command, _))) => command.spawn(),
    }
}
