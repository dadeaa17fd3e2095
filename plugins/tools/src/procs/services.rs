//! The `proc.*` host services the plugin serves (ABI 1.1): the Lua plugin
//! and any other plugin call them with the request types of
//! `uji_protocol::procs`.

use uji_sdk::Host;
use uji_sdk::protocol::procs::{ProcClose, ProcRead, ProcStart, ProcStop, ProcWrite};

use super::Procs;

/// Serves the processes of `procs`.
pub fn install(host: &Host, procs: &Procs) -> Result<(), String> {
    let table = procs.clone();
    host.serve(move |request: ProcStart| table.start(request))?;
    let table = procs.clone();
    host.serve(move |request: ProcRead| table.read(request))?;
    let table = procs.clone();
    host.serve(move |request: ProcWrite| table.write(request))?;
    let table = procs.clone();
    host.serve(move |request: ProcClose| table.close(request))?;
    let table = procs.clone();
    host.serve(move |request: ProcStop| table.stop(request))?;
    Ok(())
}
