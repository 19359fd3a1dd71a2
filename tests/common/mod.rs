//! Helpers shared by the integration tests.
#![allow(dead_code)]

/// Hex with optional whitespace to bytes.
pub fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    assert!(digits.len().is_multiple_of(2), "odd hex length in {s:?}");
    digits
        .chunks_exact(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).expect("hex digit"))
        .collect()
}

/// Bytes to lowercase hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every `*.json` file below `dir`, sorted, recursively.
pub fn json_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(json_files(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Runs the `kcp` binary with `args`, feeding `stdin` (closed at once when `None`).
pub fn run_kcp(args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kcp runs");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.unwrap_or_default().to_vec();
    // Written from another thread (kcp may fill its stdout before reading all of stdin); kcp may
    // also exit without reading it (a usage error), which is a broken pipe here, not a failure.
    let writer = std::thread::spawn(move || match pipe.write_all(&input) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("writing kcp's stdin: {e}"),
        _ => {}
    });
    let out = child.wait_with_output().expect("kcp finishes");
    writer.join().expect("stdin writer");
    out
}
