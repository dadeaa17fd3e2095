//! The network proxy for commands whose sandbox allows only some hosts
//! (`uji.tool.sandbox({ network = { allow = { … } } })`, docs/web.md): an
//! HTTP proxy on a loopback port of uji's own. The command's
//! `HTTP_PROXY`/`HTTPS_PROXY` (and the lower-case forms) name it, and
//! Landlock refuses the command every TCP connect but to that port, so
//! what reaches the network passes here: `CONNECT host:port` (HTTPS and any
//! tunnel) and plain HTTP requests in absolute form. A host the rules do not
//! allow gets `403` with a line saying so, and is remembered for the call's
//! result. The proxy resolves names itself, so a name the command resolves
//! to another address changes nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The largest request head read.
const MAX_HEAD: usize = 16 * 1024;
/// How long a client has to send its request head, and uji to reach the
/// host.
const WAIT: Duration = Duration::from_secs(15);
/// Refusals kept for the calls' results.
const KEPT: usize = 256;

/// Whether `host` matches one of `patterns` (`crates.io`, `*.npmjs.org`;
/// lower case, as [`uji_protocol::Network`] keeps them).
pub fn host_allowed(patterns: &[String], host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    patterns
        .iter()
        .any(|pattern| match pattern.strip_prefix("*.") {
            Some(domain) => host
                .strip_suffix(domain)
                .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
            None => *pattern == host,
        })
}

/// A host the proxy refused, and when.
struct Refusal {
    at: Instant,
    host: String,
}

/// The running proxy; one for the process, started by the first call that
/// needs it and kept (background jobs use it after their call returns).
pub struct NetProxy {
    port: u16,
    hosts: Arc<RwLock<Vec<String>>>,
    refused: Arc<Mutex<Vec<Refusal>>>,
}

impl NetProxy {
    /// Listens on a loopback port and serves on the current runtime.
    pub fn start(hosts: Vec<String>) -> std::io::Result<NetProxy> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let runtime = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(listener)?
        };
        let proxy = NetProxy {
            port,
            hosts: Arc::new(RwLock::new(hosts)),
            refused: Arc::default(),
        };
        let (hosts, refused) = (Arc::clone(&proxy.hosts), Arc::clone(&proxy.refused));
        runtime.spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let (hosts, refused) = (Arc::clone(&hosts), Arc::clone(&refused));
                tokio::spawn(async move {
                    if let Err(e) = serve(client, &hosts, &refused).await {
                        tracing::debug!("network proxy: {e}");
                    }
                });
            }
        });
        tracing::info!("network proxy for sandboxed commands on 127.0.0.1:{port}");
        Ok(proxy)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The hosts let through from now on.
    pub fn set_hosts(&self, hosts: Vec<String>) {
        *self.hosts.write() = hosts;
    }

    /// The hosts refused since `since`, each once, in order.
    pub fn refused_since(&self, since: Instant) -> Vec<String> {
        let refused = self.refused.lock();
        let mut hosts: Vec<String> = Vec::new();
        for refusal in refused.iter().filter(|r| r.at >= since) {
            if !hosts.contains(&refusal.host) {
                hosts.push(refusal.host.clone());
            }
        }
        hosts
    }
}

/// Where a request wants to go, and what to send there first.
struct Target {
    host: String,
    port: u16,
    /// `CONNECT`: a tunnel (answer 200, then bytes both ways).
    tunnel: bool,
    /// For plain HTTP: the request head rewritten to origin form.
    head: Vec<u8>,
}

/// Reads the request head: the bytes up to the blank line, and what came
/// after it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<(Vec<u8>, usize)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let read = tokio::time::timeout(WAIT, client.read(&mut chunk))
            .await
            .map_err(|_| std::io::Error::other("no request head in time"))??;
        if read == 0 {
            return Err(std::io::Error::other("closed before its request head"));
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok((buffer, end + 4));
        }
        if buffer.len() > MAX_HEAD {
            return Err(std::io::Error::other("request head too large"));
        }
    }
}

/// `host:port` (or `[v6]:port`) with a default port.
fn host_port(authority: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            match port.parse() {
                Ok(port) => (host, port),
                Err(_) if authority.starts_with('[') && authority.ends_with(']') => {
                    (authority, default)
                }
                Err(_) => return None,
            }
        }
        _ => (authority, default),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

/// Reads what the client asks for; `Err` is the status line to answer.
fn target(head: &[u8]) -> Result<Target, &'static str> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err("400 Bad Request"),
    }
    let (Some(method), Some(path)) = (request.method, request.path) else {
        return Err("400 Bad Request");
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = host_port(path, 443).ok_or("400 Bad Request")?;
        return Ok(Target {
            host,
            port,
            tunnel: true,
            head: Vec::new(),
        });
    }
    let rest = path.strip_prefix("http://").ok_or("400 Bad Request")?;
    let (authority, origin) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let (host, port) = host_port(authority, 80).ok_or("400 Bad Request")?;
    let mut out = format!("{method} {origin} HTTP/1.1\r\n").into_bytes();
    for header in request.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        // One request per connection: the next could name another host.
        if name.starts_with("proxy-") || name == "connection" || name == "keep-alive" {
            continue;
        }
        out.extend_from_slice(header.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(header.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Target {
        host,
        port,
        tunnel: false,
        head: out,
    })
}

async fn answer(client: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    client.write_all(reply.as_bytes()).await
}

/// One client connection.
async fn serve(
    mut client: TcpStream,
    hosts: &RwLock<Vec<String>>,
    refused: &Mutex<Vec<Refusal>>,
) -> std::io::Result<()> {
    let (buffer, head_end) = read_head(&mut client).await?;
    let target = match target(&buffer[..head_end]) {
        Ok(target) => target,
        Err(status) => {
            return answer(&mut client, status, "uji's proxy: not a proxy request\n").await;
        }
    };
    let allowed = host_allowed(&hosts.read(), &target.host);
    if !allowed {
        tracing::warn!(host = %target.host, "network: refused by the sandbox rules");
        {
            let mut refused = refused.lock();
            if refused.len() >= KEPT {
                refused.remove(0);
            }
            refused.push(Refusal {
                at: Instant::now(),
                host: target.host.clone(),
            });
        }
        let text = format!(
            "network: {} is not allowed by your sandbox rules\n",
            target.host
        );
        return answer(&mut client, "403 Forbidden", &text).await;
    }
    let connect = TcpStream::connect((target.host.as_str(), target.port));
    let mut upstream = match tokio::time::timeout(WAIT, connect).await {
        Ok(Ok(upstream)) => upstream,
        Ok(Err(e)) => {
            let text = format!("uji's proxy cannot reach {}: {e}\n", target.host);
            return answer(&mut client, "502 Bad Gateway", &text).await;
        }
        Err(_) => {
            return answer(
                &mut client,
                "504 Gateway Timeout",
                "uji's proxy: no answer in time\n",
            )
            .await;
        }
    };
    if target.tunnel {
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
    } else {
        upstream.write_all(&target.head).await?;
    }
    // What the client sent after its head (a body, or TLS bytes).
    upstream.write_all(&buffer[head_end..]).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_match_by_name_or_beneath_a_domain() {
        let rules = vec!["crates.io".to_string(), "*.npmjs.org".to_string()];
        let cases = [
            ("crates.io", true),
            ("CRATES.IO.", true),
            ("static.crates.io", false),
            ("registry.npmjs.org", true),
            ("npmjs.org", false),
            ("evilnpmjs.org", false),
            ("example.com", false),
        ];
        for (host, allowed) in cases {
            assert_eq!(host_allowed(&rules, host), allowed, "{host}");
        }
    }

    #[test]
    fn a_request_head_names_its_host_and_plain_http_goes_out_in_origin_form() {
        let connect = target(b"CONNECT crates.io:443 HTTP/1.1\r\nHost: crates.io\r\n\r\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (connect.host.as_str(), connect.port, connect.tunnel),
            ("crates.io", 443, true)
        );
        let plain = target(b"GET http://Example.com:8080/a?b HTTP/1.1\r\nHost: example.com\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (plain.host.as_str(), plain.port, plain.tunnel),
            ("example.com", 8080, false)
        );
        let head = String::from_utf8_lossy(&plain.head);
        assert!(head.starts_with("GET /a?b HTTP/1.1\r\n"), "{head}");
        assert!(
            !head.contains("Proxy-Authorization") && head.ends_with("Connection: close\r\n\r\n"),
            "{head}"
        );
        assert!(target(b"GET /local HTTP/1.1\r\n\r\n").is_err());
        let v6 = target(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));
    }
}
