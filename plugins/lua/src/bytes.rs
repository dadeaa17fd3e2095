//! Small byte helpers plugins written for the public uji use (an OAuth
//! client's PKCE, a token's storage): `uji.base64`, `uji.sha256`,
//! `uji.random`; and `uji.ui.open`, which hands a URL or a file to the
//! system's opener.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use mlua::{Lua, Table, Value};
use sha2::{Digest, Sha256};

use crate::api::{a_type, check_fields, lerr, raw};

/// The most bytes `uji.random` gives at once.
const MAX_RANDOM: usize = 64 * 1024;

fn bytes_arg(value: &Value, api: &str) -> Result<Vec<u8>, String> {
    match value {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        other => Err(format!("{api}: expects a string, got {}", a_type(other))),
    }
}

/// `{ url = bool, pad = bool }` (standard alphabet, padded by default).
fn engine(options: &Value, api: &str) -> Result<&'static base64::engine::GeneralPurpose, String> {
    let (url, pad) = match options {
        Value::Nil => (false, true),
        Value::Table(t) => {
            check_fields(t, &["url", "pad"], api)?;
            (
                t.get::<Option<bool>>("url").map_err(lerr)?.unwrap_or(false),
                t.get::<Option<bool>>("pad").map_err(lerr)?.unwrap_or(true),
            )
        }
        other => {
            return Err(format!(
                "{api}: options must be a table {{ url = bool, pad = bool }}, got {}",
                a_type(other)
            ));
        }
    };
    Ok(match (url, pad) {
        (false, true) => &STANDARD,
        (false, false) => &STANDARD_NO_PAD,
        (true, true) => &URL_SAFE,
        (true, false) => &URL_SAFE_NO_PAD,
    })
}

pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "base64_encode",
        raw(lua, |lua, _, (data, options): (Value, Value)| {
            const API: &str = "uji.base64.encode";
            let text = engine(&options, API)?.encode(bytes_arg(&data, API)?);
            lua.create_string(&text).map_err(lerr)
        })?,
    )?;
    t.set(
        "base64_decode",
        raw(lua, |lua, _, (data, options): (Value, Value)| {
            const API: &str = "uji.base64.decode";
            let text = bytes_arg(&data, API)?;
            let bytes = engine(&options, API)?
                .decode(text.trim_ascii())
                .map_err(|e| format!("{API}: not base64 ({e})"))?;
            lua.create_string(&bytes).map_err(lerr)
        })?,
    )?;
    t.set(
        "sha256",
        raw(lua, |lua, _, data: Value| {
            let digest = Sha256::digest(bytes_arg(&data, "uji.sha256")?);
            lua.create_string(digest.as_slice()).map_err(lerr)
        })?,
    )?;
    t.set(
        "random",
        raw(lua, |lua, _, count: Value| {
            let count = match count {
                Value::Integer(n) if n >= 0 && (n as usize) <= MAX_RANDOM => n as usize,
                other => {
                    return Err(format!(
                        "uji.random: expects a number of bytes from 0 to {MAX_RANDOM}, got {}",
                        a_type(&other)
                    ));
                }
            };
            let mut bytes = vec![0u8; count];
            getrandom::fill(&mut bytes).map_err(|e| format!("uji.random: {e}"))?;
            lua.create_string(&bytes).map_err(lerr)
        })?,
    )?;
    t.set(
        "ui_open",
        raw(lua, |_, _, target: Value| {
            const API: &str = "uji.ui.open";
            let target = crate::api::string_arg(&target, API, "what to open")?;
            if target.trim().is_empty() {
                return Err(format!("{API}: give a URL or a path to open"));
            }
            let opener = if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            };
            uji_sdk::child::command(opener)
                .arg(&target)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .map(drop)
                .map_err(|e| format!("{API}: cannot run {opener} ({e}); open {target} yourself"))
        })?,
    )?;
    Ok(())
}
