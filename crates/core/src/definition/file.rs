//! Definition files given at run time (`--parsers DIR`, `$BENCH_NORMALIZE_PARSERS`): read only as
//! regular files of a stated size.

use std::path::Path;

use crate::error::Error;

/// Largest definition file read from `--parsers DIR`: the biggest built-in is ~20 KiB.
pub const MAX_DEFINITION_FILE: u64 = 1 << 20;

/// The text of a definition file given at run time: a regular file (after links are followed) of
/// at most [`MAX_DEFINITION_FILE`] bytes, else a definition error (exit 2) saying what it is. The
/// file is opened without waiting (a FIFO would block an ordinary open until a writer comes) and
/// told by what was opened, not by its name, so a link to `/dev/zero`, a FIFO, a directory or a
/// file that grows while it is read is never read whole.
pub(super) fn read_definition_file(path: &Path, name: &str) -> Result<String, Error> {
    use std::io::Read;
    let refuse = |message: String| Error::Definition {
        file: name.to_string(),
        line: 1,
        column: 1,
        field: "file".into(),
        message,
    };
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.custom_flags(libc::O_NONBLOCK);
    }
    let file = open.open(path).map_err(|e| refuse(format!("cannot be opened: {e}")))?;
    let meta = file.metadata().map_err(|e| refuse(format!("cannot be read: {e}")))?;
    if !meta.is_file() {
        let what = kind_of_file(&meta.file_type());
        return Err(refuse(format!("is {what}, not a regular file: definitions are read from regular files only")));
    }
    let too_big = || {
        refuse(format!(
            "is larger than {} KiB, the most a definition file may be (the largest built-in is ~20 KiB)",
            MAX_DEFINITION_FILE >> 10
        ))
    };
    if meta.len() > MAX_DEFINITION_FILE {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(MAX_DEFINITION_FILE + 1).read_to_end(&mut bytes).map_err(|e| refuse(format!("cannot be read: {e}")))?;
    if bytes.len() as u64 > MAX_DEFINITION_FILE {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| refuse(format!("is not UTF-8 text ({e})")))
}

/// What a file that is not a regular file is, in words.
fn kind_of_file(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() { "a directory" } else { "not a regular file" }
}
