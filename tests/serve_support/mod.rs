//! Support for the `kcp serve` tests: the server as a child process (killed when dropped), plain
//! HTTP/1.1 requests over a socket (the tests need raw sockets anyway, to send what no HTTP
//! client would), and a reader of the OpenMetrics text.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `kcp serve`.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `kcp serve ARGS... --listen 127.0.0.1:0` and waits (at most 30 s) for the line
    /// that says where it listens.
    pub fn start(args: &[&str]) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcp"));
        cmd.arg("serve").args(args).args(["--listen", "127.0.0.1:0"]);
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).process_group(0);
        let mut child = cmd.spawn().expect("kcp serve starts");
        let mut err = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let started = Instant::now();
        loop {
            let text = stderr.lock().unwrap().clone();
            if let Some(at) = text.find("on http://").or_else(|| text.find("on https://")) {
                let rest = &text[at..];
                let start = rest.find("//").unwrap() + 2;
                let end = rest[start..].find('/').unwrap() + start;
                let addr = rest[start..end].parse().expect("an address");
                return Server { child, addr, stderr };
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("kcp serve exited with {status} before listening: {text}");
            }
            assert!(started.elapsed() < Duration::from_secs(30), "kcp serve did not say where it listens: {text}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Everything the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// `GET path` with these extra header lines.
    pub fn get_with(&self, path: &str, headers: &[&str]) -> Response {
        request(self.addr, "GET", path, headers)
    }

    pub fn get(&self, path: &str) -> Response {
        self.get_with(path, &[])
    }

    /// Polls `path` every 500 ms until `done` holds for its response, at most `limit`.
    pub fn wait_for(&self, path: &str, limit: Duration, what: &str, done: impl Fn(&Response) -> bool) -> Response {
        let started = Instant::now();
        loop {
            let r = self.get(path);
            if done(&r) {
                return r;
            }
            assert!(started.elapsed() < limit, "{what}: not within {limit:?}; last answer {}:\n{}", r.status, r.body);
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Sends SIGTERM and waits (at most 20 s) for it to end; its exit code.
    pub fn terminate(mut self) -> Option<i32> {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The body's bytes as sent (not de-chunked, not decoded: a gzip body stays gzip).
    pub raw: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One request with `Connection: close`, read to the end (10 s at most).
pub fn request(addr: SocketAddr, method: &str, path: &str, headers: &[&str]) -> Response {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("writes");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
}

/// A response's status, headers and (de-chunked) body.
pub fn parse_response(raw: &[u8]) -> Response {
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").map_or(raw.len(), |at| at + 4);
    let raw_body = raw[head_end.min(raw.len())..].to_vec();
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
    let chunked =
        headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Response { status, headers, body, raw: raw_body }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || rest.len() < n {
            out.push_str(&rest[..rest.len().min(n)]);
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].strip_prefix("\r\n").unwrap_or(&rest[n..]);
    }
    out
}

/// One sample of the OpenMetrics text.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// The samples of an OpenMetrics text (comments skipped), label values unescaped.
pub fn samples(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (name, rest) = match line.find('{') {
            Some(i) => (&line[..i], &line[i..]),
            None => {
                let (n, v) = line.split_once(' ').expect("name value");
                out.push(Sample { name: n.into(), labels: vec![], value: v.parse().expect("a value") });
                continue;
            }
        };
        let mut labels = Vec::new();
        let bytes: Vec<char> = rest.chars().collect();
        let mut i = 1;
        loop {
            if bytes[i] == '}' {
                i += 1;
                break;
            }
            let eq = (i..bytes.len()).find(|&j| bytes[j] == '=').expect("=");
            let key: String = bytes[i..eq].iter().collect();
            let mut value = String::new();
            let mut j = eq + 2;
            while bytes[j] != '"' {
                if bytes[j] == '\\' {
                    j += 1;
                    value.push(match bytes[j] {
                        'n' => '\n',
                        c => c,
                    });
                } else {
                    value.push(bytes[j]);
                }
                j += 1;
            }
            labels.push((key, value));
            i = j + 1;
            if bytes[i] == ',' {
                i += 1;
            }
        }
        let value: String = bytes[i..].iter().collect();
        out.push(Sample { name: name.into(), labels, value: value.trim().parse().expect("a value") });
    }
    out
}

/// The samples named `name` whose labels include every pair of `labels`.
pub fn find<'a>(samples: &'a [Sample], name: &str, labels: &[(&str, &str)]) -> Vec<&'a Sample> {
    samples.iter().filter(|s| s.name == name && labels.iter().all(|(k, v)| s.label(k) == Some(*v))).collect()
}

/// The one sample named `name` with these labels, or `None`.
pub fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let found = find(samples, name, labels);
    assert!(found.len() <= 1, "{name} {labels:?}: {} samples", found.len());
    found.first().map(|s| s.value)
}
