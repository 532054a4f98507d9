//! `--tee` and `--tee-file`: the input copied through, unchanged and as it is read, so a piped
//! benchmark still shows live; the copy's file is opened through the write guard
//! ([`crate::guard`]), which refuses an input and empties nothing before the inputs open.

use std::io::{self, Write};

use bench_normalize_core::Error;

/// Where `--tee` / `--tee-file` copies the input, and the first write to it that failed.
pub(crate) struct TeeTarget {
    name: String,
    out: Box<dyn Write + Send>,
    failed: Option<io::Error>,
    /// The failure was said: nothing more is copied, nor said again.
    stopped: bool,
}

impl TeeTarget {
    pub(crate) fn new(name: String, out: Box<dyn Write + Send>) -> TeeTarget {
        TeeTarget { name, out, failed: None, stopped: false }
    }

    /// Copy bytes through, at once (someone is watching). After a failed write, nothing more is
    /// copied: the failure is kept to be said once.
    fn copy(&mut self, bytes: &[u8]) {
        if self.failed.is_some() || self.stopped || bytes.is_empty() {
            return;
        }
        if let Err(e) = self.out.write_all(bytes).and_then(|_| self.out.flush()) {
            self.failed = Some(e);
        }
    }

    /// The failed write as an error (exit 4), once.
    pub(crate) fn take_error(&mut self) -> Option<Error> {
        let source = self.failed.take()?;
        self.stopped = true;
        Some(Error::Write { output: self.name.clone(), source })
    }
}

/// A reader that copies what is consumed to a writer, as it is consumed. A failed copy does not
/// stop the reading (the report is still made); it is said after the input, exit 4.
pub(crate) struct Tee<'w, R> {
    pub(crate) inner: R,
    pub(crate) copy: &'w mut TeeTarget,
}

impl<R: io::BufRead> io::Read for Tee<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.copy.copy(&buf[..n]);
        Ok(n)
    }
}

impl<R: io::BufRead> io::BufRead for Tee<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            self.copy.copy(&buf[..n.min(buf.len())]);
        }
        self.inner.consume(n);
    }
}
