//! The one way `kcp` writes its output: a buffered stdout whose write errors end the command
//! cleanly. A closed pipe (`kcp ... | head`) is the reader saying it has seen enough: the command
//! stops quietly with exit status 0. Any other write error (a full disk, `> /dev/full`) means
//! output was lost: exit status 1 with a message on stderr. Nothing in the CLI uses `println!`,
//! which panics on both. Every command writes through one [`Out`], also `kcp group`'s, whose
//! commands run in a tokio runtime: `Out` holds the unlocked [`io::Stdout`], which takes its lock
//! for each write that reaches it (when the buffer fills or is flushed), so no lock is held
//! across an `.await` and `Out` can move between tasks.

use std::io::{self, BufWriter, Write};

use serde::Serialize;

/// A write to stdout failed.
#[derive(Debug)]
pub struct WriteFailed(pub io::Error);

impl WriteFailed {
    /// The reader of a pipe went away: not an error of `kcp`'s.
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

impl From<io::Error> for WriteFailed {
    fn from(e: io::Error) -> Self {
        WriteFailed(e)
    }
}

impl From<serde_json::Error> for WriteFailed {
    fn from(e: serde_json::Error) -> Self {
        WriteFailed(io::Error::from(e))
    }
}

/// Buffered standard output.
pub struct Out {
    inner: BufWriter<io::Stdout>,
}

impl Out {
    /// Standard output, locked per write rather than for the whole program (see the module docs).
    pub fn stdout() -> Self {
        Out { inner: BufWriter::with_capacity(64 * 1024, io::stdout()) }
    }

    /// Text as is.
    pub fn text(&mut self, text: &str) -> Result<(), WriteFailed> {
        Ok(self.inner.write_all(text.as_bytes())?)
    }

    /// A value as pretty-printed JSON and a newline, serialized straight into the output (no
    /// intermediate document: large values stream).
    pub fn json_pretty<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), WriteFailed> {
        serde_json::to_writer_pretty(&mut self.inner, value)?;
        Ok(self.inner.write_all(b"\n")?)
    }

    /// A value as one compact JSON line.
    pub fn json_line<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), WriteFailed> {
        serde_json::to_writer(&mut self.inner, value)?;
        Ok(self.inner.write_all(b"\n")?)
    }

    /// The underlying writer, for formatted text.
    pub fn writer(&mut self) -> &mut dyn Write {
        &mut self.inner
    }

    /// Writes out what is buffered.
    pub fn flush(&mut self) -> Result<(), WriteFailed> {
        Ok(self.inner.flush()?)
    }
}

/// Completes when the reader of `output` has gone away: the read end of the pipe it writes
/// to is closed (`kcp group watch ... | head -1` once `head` exits). A command that writes only
/// when something changes would otherwise notice only at its next write, which a quiet group
/// may never bring. The kernel reports the closed pipe as an error condition on the write end
/// (EPOLLERR), which tokio waits for without writing anything. Never completes when that
/// cannot be told: a regular file or `/dev/null` (epoll refuses them; their reader never goes
/// away).
#[cfg(unix)]
pub async fn reader_gone(output: std::os::fd::BorrowedFd<'_>) {
    use tokio::io::Interest;
    use tokio::net::unix::pipe::Sender;
    // A duplicate of the descriptor, registered with the runtime as it is (still blocking:
    // the command's own writes go through the original and must stay blocking).
    let registered = output.try_clone_to_owned().and_then(Sender::from_owned_fd_unchecked);
    if let Ok(pipe) = registered {
        while let Ok(ready) = pipe.ready(Interest::ERROR).await {
            if ready.is_error() {
                return;
            }
            // A wake-up without the condition (tokio allows them): look again a little later.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    std::future::pending::<()>().await
}

/// [`reader_gone`] of standard output (never, off Unix).
pub async fn stdout_reader_gone() {
    #[cfg(unix)]
    reader_gone(std::os::fd::AsFd::as_fd(&io::stdout())).await;
    #[cfg(not(unix))]
    std::future::pending::<()>().await
}

/// A line on stderr that never panics (stderr may be closed too; then there is nobody to tell).
pub fn note(line: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.write_all(b"\n");
}

/// Text on stderr without a newline (progress), never panicking.
pub fn note_raw(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    #[test]
    fn a_closed_pipe_is_noticed_without_writing() {
        let (reader, writer) = io::pipe().unwrap();
        runtime().block_on(async {
            let gone = reader_gone(std::os::fd::AsFd::as_fd(&writer));
            tokio::pin!(gone);
            // While the reader is there, nothing happens.
            assert!(tokio::time::timeout(Duration::from_millis(200), &mut gone).await.is_err());
            drop(reader);
            tokio::time::timeout(Duration::from_secs(5), gone).await.expect("the closed pipe was not noticed");
        });
    }

    #[test]
    fn a_file_never_reports_its_reader_gone() {
        let file = std::fs::File::open("/dev/null").unwrap();
        runtime().block_on(async {
            assert!(tokio::time::timeout(Duration::from_millis(200), reader_gone(std::os::fd::AsFd::as_fd(&file)))
                .await
                .is_err());
        });
    }
}
