//! Issue 33's proxy row, in process: what uji's network proxy adds to one
//! connection. A loopback HTTP server answers `ok`; each round opens a
//! connection, sends a request and reads the answer to its end: directly,
//! through the proxy as plain HTTP (`GET http://localhost:PORT/`), and
//! through the proxy as a tunnel (`CONNECT`, then the request). Prints the
//! medians in microseconds as `name value` pairs for `bench/run`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

use uji_core::gate::proxy::NetProxy;

const ROUNDS: usize = 400;

fn serve(listener: TcpListener) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        std::thread::spawn(move || {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                if stream.read(&mut byte).unwrap_or(0) == 0 {
                    return;
                }
                head.push(byte[0]);
            }
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        });
    }
}

/// Reads until the line that ends a head.
fn read_head(stream: &mut TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "the head ended early");
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
}

fn exchange(addr: u16, connect: Option<u16>, request: &str) -> f64 {
    let started = Instant::now();
    let mut stream = TcpStream::connect(("127.0.0.1", addr)).unwrap();
    stream.set_nodelay(true).unwrap();
    if let Some(port) = connect {
        write!(
            stream,
            "CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n"
        )
        .unwrap();
        read_head(&mut stream);
    }
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    assert!(
        answer.ends_with(b"ok"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    started.elapsed().as_secs_f64() * 1e6
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || serve(listener));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let proxy = {
        let _entered = runtime.enter();
        NetProxy::start(vec!["localhost".to_string()]).unwrap()
    };
    let origin = format!("GET / HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n");
    let absolute =
        format!("GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n");
    let mut direct = Vec::new();
    let mut plain = Vec::new();
    let mut tunnel = Vec::new();
    for _ in 0..ROUNDS {
        direct.push(exchange(port, None, &origin));
        plain.push(exchange(proxy.port(), None, &absolute));
        tunnel.push(exchange(proxy.port(), Some(port), &origin));
    }
    let direct = median(direct);
    println!("direct_us {direct:.1}");
    println!("plain_added_us {:.1}", median(plain) - direct);
    println!("connect_added_us {:.1}", median(tunnel) - direct);
}
