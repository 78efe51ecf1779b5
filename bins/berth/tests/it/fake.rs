//! A one-thread HTTP server answering canned responses, one connection per request: stands in
//! for berthd where only the CLI's side is under test.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener};
use std::thread::JoinHandle;

/// Serves `answers` in order (status, JSON body); returns the address and a handle yielding
/// each request as `METHOD PATH BODY`.
pub fn serve(answers: Vec<(u16, String)>) -> (SocketAddr, JoinHandle<Vec<String>>) {
    serve_with(
        answers
            .into_iter()
            .map(|(s, b)| (s, b, String::new()))
            .collect(),
    )
}

/// Like [`serve`], each answer with extra header lines (`name: value\r\n` each).
pub fn serve_with(answers: Vec<(u16, String, String)>) -> (SocketAddr, JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for (status, body, extra) in answers {
            let (mut s, _) = listener.accept().expect("accept");
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            // Headers, then as many body bytes as content-length says.
            let request = loop {
                let n = s.read(&mut chunk).expect("read");
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).into_owned();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len || n == 0 {
                        break text;
                    }
                } else if n == 0 {
                    break text;
                }
            };
            let mut words = request.split_whitespace();
            let line = format!(
                "{} {}",
                words.next().unwrap_or_default(),
                words.next().unwrap_or_default()
            );
            let body_in = request
                .split_once("\r\n\r\n")
                .map(|(_, b)| b)
                .unwrap_or_default();
            seen.push(format!("{line} {body_in}").trim_end().to_owned());
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            s.write_all(reply.as_bytes()).expect("write");
        }
        seen
    });
    (addr, handle)
}
