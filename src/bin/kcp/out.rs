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
