//! The result file a client writes: where it will be, what was there before the run, and
//! afterwards which file this run wrote and from where its new content starts.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where to look for the result file after the run.
#[derive(Debug, Clone)]
pub(super) enum Expected {
    File(PathBuf),
    Newest { dir: PathBuf, ext: &'static str, deep: bool, names: &'static [String] },
}

/// What a file was before the run: its length, modification time and the bytes at its start and
/// end, to tell afterwards whether the client wrote it, appended to it or left it alone.
#[derive(Debug, Clone, PartialEq)]
struct Before {
    len: u64,
    modified: Option<SystemTime>,
    head: Vec<u8>,
    tail: Vec<u8>,
}

const EDGE: u64 = 4096;

fn before(path: &Path) -> Option<Before> {
    let meta = fs::metadata(path).ok().filter(|m| m.is_file())?;
    let mut f = File::open(path).ok()?;
    let mut head = Vec::new();
    (&mut f).take(EDGE).read_to_end(&mut head).ok()?;
    let mut tail = Vec::new();
    if meta.len() > EDGE {
        use std::io::Seek;
        f.seek(io::SeekFrom::Start(meta.len() - EDGE)).ok()?;
        f.take(EDGE).read_to_end(&mut tail).ok()?;
    }
    Some(Before { len: meta.len(), modified: meta.modified().ok(), head, tail })
}

/// The result files the command can write, as they were before it ran.
#[derive(Debug)]
pub struct Expect {
    expected: Option<Expected>,
    files: HashMap<PathBuf, Before>,
}

impl Expect {
    pub(super) fn new(expected: Option<Expected>) -> Expect {
        let mut files = HashMap::new();
        for p in expected.iter().flat_map(candidates) {
            if let Some(b) = before(&p) {
                files.insert(p, b);
            }
        }
        Expect { expected, files }
    }

    /// The result file this run wrote, and from where its new content starts (a client that
    /// appends, SGLang's `--output-file`, vLLM's `--append-result`, keeps what was there); or
    /// why there is none.
    pub(super) fn found(&self) -> Result<(PathBuf, u64), String> {
        let Some(expected) = &self.expected else { return Err("the command names no result file".into()) };
        let written = |p: &PathBuf| -> Option<(u64, SystemTime)> {
            let now = before(p)?;
            let modified = now.modified.unwrap_or(UNIX_EPOCH);
            match self.files.get(p) {
                None => Some((0, modified)),
                Some(old) if *old == now => None,
                Some(old) => {
                    // Appended: the old bytes are still where they were.
                    let kept = now.len > old.len
                        && now.head.starts_with(&old.head[..old.head.len().min(now.head.len())])
                        && (old.tail.is_empty() || tail_at(p, old.len).as_deref() == Some(&old.tail[..]));
                    Some((if kept { old.len } else { 0 }, modified))
                }
            }
        };
        match expected {
            Expected::File(p) => match written(p) {
                Some((offset, _)) => Ok((p.clone(), offset)),
                None if self.files.contains_key(p) => {
                    Err(format!("{} is unchanged since before the run: not this run's result", p.display()))
                }
                None => Err(format!("the client wrote no result file at {}", p.display())),
            },
            Expected::Newest { dir, .. } => candidates(expected)
                .into_iter()
                .filter_map(|p| written(&p).map(|(o, m)| (p, o, m)))
                .max_by_key(|(_, _, m)| *m)
                .map(|(p, o, _)| (p, o))
                .ok_or_else(|| format!("the client wrote no result file in {}", dir.display())),
        }
    }
}

/// The `EDGE` bytes that end at `end` in a file.
fn tail_at(path: &Path, end: u64) -> Option<Vec<u8>> {
    use std::io::Seek;
    let mut f = File::open(path).ok()?;
    f.seek(io::SeekFrom::Start(end.checked_sub(EDGE)?)).ok()?;
    let mut buf = Vec::new();
    f.take(EDGE).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// Every file the expected result can be.
fn candidates(expected: &Expected) -> Vec<PathBuf> {
    match expected {
        Expected::File(p) => vec![p.clone()],
        Expected::Newest { dir, ext, deep, names } => {
            let mut out = Vec::new();
            let mut dirs = vec![dir.clone()];
            while let Some(d) = dirs.pop() {
                let Ok(entries) = fs::read_dir(&d) else { continue };
                for e in entries.flatten() {
                    let p = e.path();
                    let Ok(t) = e.file_type() else { continue };
                    if t.is_dir() && *deep {
                        dirs.push(p);
                    } else if t.is_file() {
                        let name = e.file_name().to_string_lossy().into_owned();
                        let wanted = if names.is_empty() {
                            p.extension().is_some_and(|x| x == *ext)
                        } else {
                            names.contains(&name)
                        };
                        if wanted {
                            out.push(p);
                        }
                    }
                }
            }
            out
        }
    }
}
