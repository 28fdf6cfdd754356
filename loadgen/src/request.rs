//! Renders the request once; connections write slices of the rendered bytes, never re-render.

use crate::config::{Config, KeepAlive};

/// `copies` back-to-back renderings of the one request, so a pipelined batch (or the rest of a
/// partially written one) is always a single contiguous slice.
#[derive(Debug, Clone)]
pub struct RenderedRequest {
    bytes: Vec<u8>,
    one_len: usize,
}

impl RenderedRequest {
    pub fn new(config: &Config) -> Self {
        let one = render_one(config);
        let one_len = one.len();
        Self {
            bytes: one.repeat(config.pipeline.max(1)),
            one_len,
        }
    }

    pub fn len(&self) -> usize {
        self.one_len
    }

    pub fn is_empty(&self) -> bool {
        self.one_len == 0
    }

    /// The next bytes to write when `pending` bytes (whole requests plus the tail of a partly
    /// written one) are still owed.
    pub fn pending_slice(&self, pending: usize) -> &[u8] {
        let phase = (self.one_len - pending % self.one_len) % self.one_len;
        let end = (phase + pending).min(self.bytes.len());
        &self.bytes[phase..end]
    }
}

fn has_header(config: &Config, name: &str) -> bool {
    config.headers.iter().any(|h| {
        h.split_once(':')
            .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case(name))
    })
}

fn render_one(config: &Config) -> Vec<u8> {
    let mut head = format!("{} {} HTTP/1.1\r\n", config.method, config.target.path);
    if !has_header(config, "host") {
        head.push_str(&format!("Host: {}\r\n", config.target.host_header));
    }
    if !has_header(config, "user-agent") {
        head.push_str(concat!(
            "User-Agent: stackbench-load/",
            env!("CARGO_PKG_VERSION"),
            "\r\n"
        ));
    }
    for header in &config.headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    if let Some(body) = &config.body {
        if !has_header(config, "content-length") {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
    }
    // Tells the server our intent; the client closes by itself either way.
    if config.keepalive == KeepAlive::Off && !has_header(config, "connection") {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    if let Some(body) = &config.body {
        bytes.extend_from_slice(body);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::config_from_args;

    #[test]
    fn renders_headers_body_and_close() {
        let config = config_from_args([
            "x",
            "-m",
            "post",
            "--body",
            "abc",
            "-H",
            "X-A: 1",
            "--no-keepalive",
            "http://127.0.0.1:8080/p?q=1",
        ])
        .unwrap();
        let r = RenderedRequest::new(&config);
        let text = String::from_utf8(r.pending_slice(r.len()).to_vec()).unwrap();
        assert!(text.starts_with("POST /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(text.contains("X-A: 1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"));
    }

    #[test]
    fn pending_slices_cover_partial_writes() {
        let config = config_from_args(["x", "--pipeline", "3", "http://127.0.0.1:1/"]).unwrap();
        let r = RenderedRequest::new(&config);
        let n = r.len();
        assert_eq!(r.pending_slice(3 * n).len(), 3 * n);
        // 2 requests owed, the first one with 5 bytes already written.
        let s = r.pending_slice(2 * n - 5);
        assert_eq!(s.len(), 2 * n - 5);
        assert_eq!(&s[..n - 5], &r.pending_slice(n)[5..]);
    }
}
