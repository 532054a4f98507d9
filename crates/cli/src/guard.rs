//! The one check every writer of the command passes before it writes a byte: the report on
//! standard output, the copy of `--tee` (standard error) and `--tee-file`, the diagnostics of
//! `--diagnostics-file`, the SVG of `plot -o`.
//!
//! A target is refused (exit 2, a usage diagnostic naming both paths, nothing written) when it is
//! one of the command's inputs by any name: the same file (device and inode, symlinks followed;
//! a hard link, `./a`, `dir/../a`), standard input's file, a file under an input directory, or a
//! name that does not exist yet but is spelled as an input (`--tee-file ghost.log ghost.log`).
//! Standard output and standard error are compared too, by `fstat`, with every input, as GNU
//! `cat`'s "input file is output file" does: `bench-normalize big.log -f jsonl >> big.log` would
//! read its own report lines back as runs and grow the file until the disk is full. Only a
//! regular file is compared there: a terminal is both standard input and output of an
//! interactive command, and `/dev/null` harms nothing.
//!
//! A target that is a special file (character device, FIFO, socket) is written through, never
//! emptied and never renamed over: `plot -o /dev/null` leaves `/dev/null` a device. A FIFO with
//! no reader is an I/O error at once, not a wait. `-` and `/dev/stdout` are standard output.
//! A file target is emptied only after every input has been opened ([`Guard::inputs_open`]): a
//! mistyped input name does not cost the previous copy.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bench_normalize_core::Error;

/// What a file is, whatever name reaches it.
type Id = (u64, u64);

#[cfg(unix)]
fn id_of(m: &std::fs::Metadata) -> Id {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn id_of(_: &std::fs::Metadata) -> Id {
    (0, 0)
}

/// A special file: written through, never renamed over nor emptied.
#[cfg(unix)]
fn special(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
}

#[cfg(not(unix))]
fn special(m: &std::fs::Metadata) -> bool {
    !m.is_file() && !m.is_dir()
}

#[cfg(unix)]
fn char_device(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    m.file_type().is_char_device()
}

#[cfg(not(unix))]
fn char_device(_: &std::fs::Metadata) -> bool {
    false
}

/// One of the standard streams, by descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdin = 0,
    Stdout = 1,
    Stderr = 2,
}

impl Stream {
    fn metadata(self) -> Option<std::fs::Metadata> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            let fd = match self {
                Stream::Stdin => io::stdin().as_fd().try_clone_to_owned(),
                Stream::Stdout => io::stdout().as_fd().try_clone_to_owned(),
                Stream::Stderr => io::stderr().as_fd().try_clone_to_owned(),
            };
            fd.ok().and_then(|fd| File::from(fd).metadata().ok())
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    fn word(self) -> &'static str {
        match self {
            Stream::Stdin => "standard input",
            Stream::Stdout => "standard output",
            Stream::Stderr => "standard error",
        }
    }

    /// The file the stream is, ` (path)`, when that can be told; else nothing.
    fn path(self) -> String {
        let fd = self as i32;
        match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Ok(p) => format!(" ({})", p.display()),
            Err(_) => String::new(),
        }
    }

    /// The stream's name for a person, with the file it is when that can be told.
    fn described(self) -> String {
        format!("{}{}", self.word(), self.path())
    }
}

/// Where a path would be if it were created: its directory resolved, its name as given. Two
/// names of a file that does not exist yet are the same when their spots are.
fn spot(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(name))
}

/// Standard output by name: `-`, `/dev/stdout`, `/dev/fd/1`.
pub(crate) fn names_stdout(path: &Path) -> bool {
    matches!(path.to_str(), Some("-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1"))
}

/// The command's inputs, against which every target is held.
pub(crate) struct Guard {
    inputs: Vec<PathBuf>,
}

/// Where a streamed writer writes (`--tee-file`, `--diagnostics-file`).
pub(crate) type Target = File;

impl Guard {
    /// The inputs as given (`-` is standard input; a directory stands for every file under it).
    pub(crate) fn new(inputs: &[PathBuf]) -> Guard {
        Guard { inputs: inputs.to_vec() }
    }

    /// A guard for a command with no input (`run`): only the standard streams are compared.
    pub(crate) fn none() -> Guard {
        Guard { inputs: Vec::new() }
    }

    /// Which input `m` (a target's metadata, `path` its name) is, if it is one: the reason, for
    /// the refusal.
    fn clash(&self, path: Option<&Path>, m: Option<&std::fs::Metadata>) -> Option<String> {
        let target = m.map(id_of);
        for input in &self.inputs {
            if input.as_os_str() == "-" {
                continue;
            }
            match std::fs::metadata(input) {
                Ok(im) if im.is_dir() => {
                    if let Some(t) = target
                        && let Some(f) = under(input, t)
                    {
                        return Some(format!("it is {}, under the input directory {}", f.display(), input.display()));
                    }
                }
                Ok(im) => {
                    if target == Some(id_of(&im)) {
                        return Some(format!("it is the input {}", input.display()));
                    }
                }
                // An input that does not exist (yet): the same spot is the same file.
                Err(_) => {
                    if let Some(p) = path
                        && m.is_none()
                        && spot(p).is_some()
                        && spot(p) == spot(input)
                    {
                        return Some(format!("it is the input {}", input.display()));
                    }
                }
            }
        }
        // Standard input's file is an input even when named inputs are given: it was handed to
        // the command (`< run.log`), read or not.
        if let (Some(t), Some(sm)) = (target, Stream::Stdin.metadata())
            && sm.is_file()
            && id_of(&sm) == t
        {
            return Some(format!("it is the file standard input reads{}, an input", Stream::Stdin.path()));
        }
        None
    }

    /// Refuse when standard output or standard error is a regular file that is an input ("input
    /// file is output file"): the report or the diagnostics (and `--tee`'s copy) would be
    /// appended to what is being read.
    pub(crate) fn streams(&self) -> Result<(), Error> {
        for stream in [Stream::Stdout, Stream::Stderr] {
            let Some(m) = stream.metadata() else { continue };
            if !m.is_file() {
                continue;
            }
            if let Some(why) = self.clash(None, Some(&m)) {
                let what = if stream == Stream::Stdout { "the report" } else { "the diagnostics" };
                return Err(Error::Usage(format!(
                    "{}: {why} (input file is output file): {what} would be written into an input; nothing was read",
                    stream.described()
                )));
            }
        }
        Ok(())
    }

    /// Every named input can be opened: the first that cannot, as the error (exit 4), before any
    /// target is emptied.
    pub(crate) fn inputs_open(&self) -> Result<(), Error> {
        for input in self.inputs.iter().filter(|i| i.as_os_str() != "-") {
            if let Err(source) = File::open(input) {
                return Err(Error::Io { input: input.display().to_string(), source });
            }
        }
        Ok(())
    }

    /// Why `path` (given as `flag`'s value) may not be written, as the refusal; `meta` its
    /// metadata when it exists (symlinks followed).
    fn refuse(&self, flag: &str, path: &Path, meta: Option<&std::fs::Metadata>) -> Result<(), Error> {
        let name = path.display();
        let refused = |why: String| Error::Usage(format!("{flag} {name}: {why}; nothing was written to it"));
        // Writing into a device grows no file: `/dev/null` as an input and a target is no harm.
        if meta.is_some_and(char_device) {
            return Ok(());
        }
        if let Some(why) = self.clash(Some(path), meta) {
            return Err(refused(why));
        }
        if let Some(m) = meta.filter(|m| m.is_file()) {
            for stream in [Stream::Stdout, Stream::Stderr] {
                if stream.metadata().is_some_and(|s| s.is_file() && id_of(&s) == id_of(m)) {
                    return Err(refused(format!("it is the file {} writes to{}", stream.word(), stream.path())));
                }
            }
        }
        Ok(())
    }

    /// Whether a streamed writer may write to `path` (given as `flag`'s value), without opening
    /// it: the refusal when not (standard output holds the report; see [`Guard`]).
    pub(crate) fn check_target(&self, flag: &str, path: &Path) -> Result<(), Error> {
        if names_stdout(path) {
            return Err(Error::Usage(format!(
                "{flag} {}: standard output holds the report; nothing was written to it",
                path.display()
            )));
        }
        self.refuse(flag, path, std::fs::metadata(path).ok().as_ref())
    }

    /// Open `path` for a writer that streams into it (`--tee-file`, `--diagnostics-file`),
    /// refusing standard output (it holds the report) and every target [`Guard`] refuses. A
    /// regular file is created, or emptied only once it is known to be no input; a special file
    /// is written through.
    pub(crate) fn open_stream(&self, flag: &str, path: &Path) -> Result<Target, Error> {
        let name = path.display().to_string();
        self.check_target(flag, path)?;
        let write_error = |source| Error::Write { output: name.clone(), source };
        let meta = std::fs::metadata(path).ok();
        if let Some(m) = meta.as_ref().filter(|m| special(m)) {
            return open_special(path, m).map_err(write_error);
        }
        // Opened without emptying, and compared again as opened: the file compared is the file
        // written (a name swapped in between is caught).
        let (file, created) = match File::options().write(true).create_new(true).open(path) {
            Ok(f) => (f, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                (File::options().write(true).open(path).map_err(write_error)?, false)
            }
            Err(e) => return Err(write_error(e)),
        };
        let opened = file.metadata().map_err(write_error)?;
        if let Err(e) = self.refuse(flag, path, Some(&opened)) {
            if created {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
        if opened.is_file() && opened.len() > 0 {
            file.set_len(0).map_err(write_error)?;
        }
        Ok(file)
    }

    /// Write `bytes` to `path` whole or not at all (`plot -o`): standard output for `-` and
    /// `/dev/stdout`; a special file written through; else a temporary file renamed over the
    /// file the path resolves to (a symlink stays a symlink).
    pub(crate) fn write_whole(&self, flag: &str, path: &Path, bytes: &[u8]) -> Result<(), Error> {
        if names_stdout(path) {
            return bench_normalize_analysis::plot::write_atomically(Path::new("-"), bytes);
        }
        let name = path.display().to_string();
        let write_error = |source| Error::Write { output: name.clone(), source };
        let meta = std::fs::metadata(path).ok();
        if meta.is_none() && std::fs::symlink_metadata(path).is_ok() {
            return Err(write_error(io::Error::new(
                io::ErrorKind::NotFound,
                "a symbolic link to nothing: name the file it should point to",
            )));
        }
        self.refuse(flag, path, meta.as_ref())?;
        match meta {
            Some(m) if special(&m) => {
                let mut f = open_special(path, &m).map_err(write_error)?;
                f.write_all(bytes).and_then(|_| f.flush()).map_err(write_error)
            }
            Some(m) if m.is_file() => {
                let real = std::fs::canonicalize(path).map_err(write_error)?;
                bench_normalize_analysis::plot::write_atomically(&real, bytes).map_err(|e| match e {
                    Error::Write { source, .. } => write_error(source),
                    e => e,
                })
            }
            _ => bench_normalize_analysis::plot::write_atomically(path, bytes),
        }
    }
}

/// A file under directory `dir` (hidden ones skipped, as `compare` skips them) with identity `t`.
fn under(dir: &Path, t: Id) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let p = e.path();
            match e.file_type() {
                Ok(ft) if ft.is_dir() => stack.push(p),
                _ => {
                    if std::fs::metadata(&p).is_ok_and(|m| id_of(&m) == t) {
                        return Some(p);
                    }
                }
            }
        }
    }
    None
}

/// Open a special file for writing, as it is: never created, emptied or replaced. A FIFO is
/// opened without waiting for a reader (none: an error at once, not a hang).
fn open_special(path: &Path, m: &std::fs::Metadata) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        if m.file_type().is_fifo() {
            let f = File::options().write(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(|e| {
                if e.raw_os_error() == Some(libc::ENXIO) {
                    io::Error::new(io::ErrorKind::BrokenPipe, "a FIFO with no reader")
                } else {
                    e
                }
            })?;
            // Writes wait for the reader as a pipe's do.
            // SAFETY: fcntl on a descriptor this function owns.
            unsafe {
                use std::os::fd::AsRawFd;
                let fd = f.as_raw_fd();
                let flags = libc::fcntl(fd, libc::F_GETFL);
                if flags >= 0 {
                    libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
                }
            }
            return Ok(f);
        }
    }
    let _ = m;
    File::options().write(true).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_names() {
        for n in ["-", "/dev/stdout", "/dev/fd/1"] {
            assert!(names_stdout(Path::new(n)), "{n}");
        }
        for n in ["./-", "stdout", "/dev/stderr", "out.json"] {
            assert!(!names_stdout(Path::new(n)), "{n}");
        }
    }

    #[test]
    fn a_name_not_yet_created_is_its_spot() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("sub")).unwrap();
        assert_eq!(spot(&d.join("ghost.log")), spot(&d.join("sub/../ghost.log")));
        assert_ne!(spot(&d.join("ghost.log")), spot(&d.join("sub/ghost.log")));
        let g = Guard::new(&[d.join("ghost.log")]);
        assert!(g.refuse("--x", &d.join("sub/../ghost.log"), None).is_err());
        assert!(g.refuse("--x", &d.join("other.log"), None).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn an_input_by_any_name_is_refused_and_a_device_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("run.log"), b"x").unwrap();
        std::os::unix::fs::symlink(d.join("run.log"), d.join("link.log")).unwrap();
        std::fs::hard_link(d.join("run.log"), d.join("hard.log")).unwrap();
        std::fs::create_dir(d.join("results")).unwrap();
        std::fs::write(d.join("results/a.json"), b"{}").unwrap();
        let g = Guard::new(&[d.join("link.log"), d.join("results")]);
        for t in ["run.log", "hard.log", "link.log", "results/a.json"] {
            let p = d.join(t);
            let m = std::fs::metadata(&p).unwrap();
            let e = g.refuse("--tee-file", &p, Some(&m)).unwrap_err();
            assert_eq!(e.exit_code(), bench_normalize_core::ExitCode::Usage, "{t}");
        }
        let null = std::fs::metadata("/dev/null").unwrap();
        assert!(Guard::new(&[PathBuf::from("/dev/null")]).refuse("-o", Path::new("/dev/null"), Some(&null)).is_ok());
    }
}
