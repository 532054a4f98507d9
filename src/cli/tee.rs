//! `--tee` and `--tee-file`: the input copied through, unchanged and as it is read, so a piped
//! benchmark still shows live; the copy's file refused when it is an input or the report's.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::Error;

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

/// What a file is, whatever name reaches it (a symlink, a hard link, `./a` or `dir/../a`).
#[cfg(unix)]
pub(crate) fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// `--tee-file PATH`, opened for the copy once it is known not to be an input: a path that is
/// one of the inputs (the same file by any name), the file standard input reads (`<
/// run.log`, read or not), or the file standard output writes (the report) is refused (exit 2),
/// and a file that exists is emptied only then. The file is opened first (without emptying it) and the
/// inputs compared with the file opened, so that the file compared is the file written.
pub(crate) fn open_tee_file(path: &Path, inputs: &[PathBuf]) -> Result<File, Error> {
    let name = path.display().to_string();
    let refuse = |why: String| Error::Usage(format!("--tee-file {name}: {why}; nothing was written to it"));
    if path.as_os_str() == "-" {
        return Err(refuse("standard output holds the report (--tee copies to standard error)".into()));
    }
    let write_error = |source| Error::Write { output: name.clone(), source };
    let (file, created) = match File::options().write(true).create_new(true).open(path) {
        Ok(f) => (f, true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            (File::options().write(true).open(path).map_err(write_error)?, false)
        }
        Err(e) => return Err(write_error(e)),
    };
    let meta = file.metadata().map_err(write_error)?;
    let clash = tee_clash(path, &meta, inputs);
    if let Some(why) = clash {
        if created {
            let _ = std::fs::remove_file(path);
        }
        return Err(refuse(why));
    }
    if meta.is_file() && meta.len() > 0 {
        file.set_len(0).map_err(write_error)?;
    }
    Ok(file)
}

/// Why the copy's file (opened at `path`, `meta`) may not be written, if it may not.
pub(crate) fn tee_clash(path: &Path, meta: &std::fs::Metadata, inputs: &[PathBuf]) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let target = identity(meta);
        let of_fd =
            |fd: std::os::fd::BorrowedFd| fd.try_clone_to_owned().ok().and_then(|fd| File::from(fd).metadata().ok());
        for input in inputs {
            if input.as_os_str() != "-" && std::fs::metadata(input).is_ok_and(|m| identity(&m) == target) {
                return Some(format!("it is the input {}", input.display()));
            }
        }
        // Standard input's file is taken as an input even when named inputs are given: it was
        // handed to the command (`< run.log`), and is never written.
        if of_fd(io::stdin().as_fd()).is_some_and(|m| identity(&m) == target) {
            return Some("it is the file standard input reads, an input".into());
        }
        // The report's own file (`> out.json`): the copy would be mixed into it. Only a regular
        // file: `/dev/null` for both is no harm.
        if meta.is_file() && of_fd(io::stdout().as_fd()).is_some_and(|m| identity(&m) == target) {
            return Some("it is the file standard output writes the report to".into());
        }
        let _ = path;
        None
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        let target = std::fs::canonicalize(path).ok()?;
        inputs
            .iter()
            .find(|i| std::fs::canonicalize(i).is_ok_and(|c| c == target))
            .map(|i| format!("it is the input {}", i.display()))
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
