//! Logs and result files as they are kept: compressed (gzip, zstd, xz) or written as UTF-16
//! (Windows PowerShell's `>`, `Tee-Object` and `Out-File`), turned back into the bytes the tool
//! printed before anything else looks at them: line splitting, the prefilter, the JSON
//! classification.
//!
//! What an input is comes from its first bytes, never from its name: a compressed format by its
//! magic number (`1f 8b` gzip, `28 b5 2f fd` zstd and its skippable frames, `fd 37 7a 58 5a 00`
//! xz), UTF-16 by its byte-order mark, or, without one, by a NUL in every other byte (ASCII text
//! written as UTF-16). A decoded stream is looked at again (a gzip'd PowerShell log is both), up to
//! [`MAX_LAYERS`] deep. Everything streams: nothing is decoded ahead of what the reader asks for,
//! so a live `... | gzip | bench-normalize` still gets each run as its block ends, and memory stays
//! bounded whatever the decoded size (the line cap, `MAX_LINE`, applies to decoded lines).
//!
//! A decoder's failure (a file cut off mid-stream, a corrupt block, a checksum that does not
//! match, a header that only looks like one) is an [`Error::Decode`] (exit 3: the input's content
//! is broken, as with an input that does not parse), kept apart from a failure to read the bytes
//! themselves ([`Error::Io`], exit 4): errors of the underlying reader are tagged on their way
//! through the decoder ([`Source`]). What was decoded before the failure is still read.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::Error;

mod zstd;

/// Bytes at the start of an input needed to tell what it is (the longest magic number is xz's 6).
pub const SNIFF: usize = 8;

/// Layers of encoding peeled off one input at most (`.gz` of a UTF-16 log is two).
pub const MAX_LAYERS: usize = 4;

/// Largest memory an xz block's filters may need, in KiB: what `xz -9` (a dictionary of 64 MiB,
/// the largest preset's) needs to decode, 65 MiB, and a little more.
const XZ_MEM_LIMIT_KB: u32 = 72 * 1024;

/// Decoded bytes held whole (a JSON document, which the JSON readers read whole, or a JSON record
/// found in a text) that are read whatever the compression ratio: a result file's text up to this
/// size is never refused.
pub const HOLD_FLOOR: u64 = 16 << 20;
/// Beyond [`HOLD_FLOOR`], decoded bytes held whole may be at most this many times the compressed
/// bytes read: result files compress 2 to 10 to 1 (the captured ones, timing figures of 17
/// significant digits); 25 to 1 and beyond is the shape of a decompression bomb (gzip reaches ~1000
/// to 1, zstd and xz far more). Checked before the buffer grows, never after.
pub const HOLD_RATIO: u64 = 25;

/// What wraps an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Gzip,
    Zstd,
    Xz,
    /// UTF-16; `bom`: the text starts with a byte-order mark (else told by its NUL bytes).
    Utf16 {
        big_endian: bool,
        bom: bool,
    },
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Gzip => "gzip",
            Layer::Zstd => "zstd",
            Layer::Xz => "xz",
            Layer::Utf16 { big_endian: false, .. } => "UTF-16LE",
            Layer::Utf16 { big_endian: true, .. } => "UTF-16BE",
        }
    }

    pub fn compressed(self) -> bool {
        !matches!(self, Layer::Utf16 { .. })
    }
}

/// What wraps an input starting with `head` (the whole input when shorter than [`SNIFF`] bytes),
/// or `None` for plain bytes (UTF-8, with or without its byte-order mark, or anything else, read
/// as text).
pub fn sniff(head: &[u8]) -> Option<Layer> {
    match head {
        [0x1f, 0x8b, ..] => Some(Layer::Gzip),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Layer::Zstd),
        // A skippable frame (zstd's, or lz4's: the zstd reader says which it is not).
        [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Some(Layer::Zstd),
        [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Some(Layer::Xz),
        [0xff, 0xfe, rest @ ..] if ascii_units(rest, false) => Some(Layer::Utf16 { big_endian: false, bom: true }),
        [0xfe, 0xff, rest @ ..] if ascii_units(rest, true) => Some(Layer::Utf16 { big_endian: true, bom: true }),
        _ => utf16_without_bom(head),
    }
}

/// Whether UTF-16 after a byte-order mark reads as a log does: at least 1 in 4 of its first code
/// units (up to 512) an ASCII character (fewer than 4 units: trusted). `ff fe` is no UTF-8, but
/// 8-bit bytes may start with it (binary garbage before a log): those are read as the bytes they
/// are. A UTF-16 log whose first 512 characters are nearly all beyond ASCII would be read as bytes
/// too, and give no result, never a wrong one.
fn ascii_units(rest: &[u8], big_endian: bool) -> bool {
    let units = (rest.len() / 2).min(512);
    let ascii = rest[..units * 2]
        .chunks_exact(2)
        .filter(|p| {
            let (high, low) = if big_endian { (p[0], p[1]) } else { (p[1], p[0]) };
            high == 0 && low != 0 && low < 0x80
        })
        .count();
    units < 4 || ascii * 4 >= units
}

/// UTF-16 without a byte-order mark: text that is mostly ASCII has a NUL as the high byte of
/// nearly every code unit (the second byte of a pair in little-endian order, the first in
/// big-endian) and almost never as the low byte. UTF-8 text has no NUL at all, save a stray one
/// (captured output sometimes has a few), never one in every other byte. At least 4 code units
/// are looked at, at most 512.
fn utf16_without_bom(head: &[u8]) -> Option<Layer> {
    let units = (head.len() / 2).min(512);
    if units < 4 {
        return None;
    }
    let pairs = head[..units * 2].chunks_exact(2);
    let (first, second) = pairs.fold((0, 0), |(f, s), p| (f + usize::from(p[0] == 0), s + usize::from(p[1] == 0)));
    // At least 3 in 4 units with a NUL high byte, at most 1 in 8 with a NUL low byte.
    let utf16 = |high: usize, low: usize| high * 4 >= units * 3 && low * 8 <= units;
    if utf16(second, first) {
        Some(Layer::Utf16 { big_endian: false, bom: false })
    } else if utf16(first, second) {
        Some(Layer::Utf16 { big_endian: true, bom: false })
    } else {
        None
    }
}

/// The decoded stream of `reader`, whose first bytes `sniff` said are `layer`. `compressed`
/// counts the bytes read from `reader` (for [`read_json`]'s bound).
pub fn decoder<'r, R: BufRead + 'r>(layer: Layer, reader: R, compressed: Arc<AtomicU64>) -> Box<dyn BufRead + 'r> {
    let eof = Arc::new(AtomicBool::new(false));
    let source = Source { inner: reader, read: compressed, eof: eof.clone() };
    let decoded: Box<dyn Read + 'r> = match layer {
        Layer::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(source)),
        Layer::Zstd => Box::new(zstd::ZstdFrames::new(source)),
        Layer::Xz => Box::new(XzIncremental {
            source,
            stream: lzma_rust2::XzStream::new_mem_limit(true, XZ_MEM_LIMIT_KB),
            done: false,
        }),
        // Transcoded as it streams; UTF-8 appended to it (or UTF-16 again) is read too.
        Layer::Utf16 { big_endian, .. } => Box::new(super::mixed::Mixed::utf16(source, big_endian)),
    };
    Box::new(BufReader::with_capacity(256 * 1024, Decoded { inner: decoded, layer, decoded: 0, eof, failed: None }))
}

/// How many decoded bytes one reading of an input may hold whole (a JSON document, a JSON record
/// found in a text): for a compressed input, [`HOLD_FLOOR`] or [`HOLD_RATIO`] times the compressed
/// bytes read so far, whichever is more; for any other input, no bound of its own (what is held is
/// the input's own bytes, at most). [`Budget::grow`] checks it before a buffer grows.
#[derive(Debug, Clone)]
pub struct Budget {
    compressed: Option<Arc<AtomicU64>>,
    floor: u64,
    ratio: u64,
}

/// The budget of an input that is not compressed.
pub static UNBOUNDED: Budget = Budget { compressed: None, floor: HOLD_FLOOR, ratio: HOLD_RATIO };

/// Why [`Budget::grow`] did not make room.
#[derive(Debug)]
pub enum Refused {
    /// More than the budget allows: `wanted` bytes from `compressed` compressed bytes read.
    Budget { wanted: u64, compressed: u64, floor: u64, ratio: u64 },
    /// The allocator had no memory for it.
    Memory { wanted: u64 },
}

impl Refused {
    /// The error of a read refused: a bomb is the input's content ([`Error::Decode`], exit 3);
    /// memory the system does not give, an error of reading ([`Error::Io`], exit 4).
    pub fn into_io(self) -> io::Error {
        match self {
            Refused::Budget { wanted, compressed, floor, ratio } => io::Error::new(
                io::ErrorKind::InvalidData,
                Corrupt {
                    layer: "compressed",
                    decoded: wanted,
                    message: format!(
                        "a JSON document or record to be held whole would take more than {} MiB and more than \
                         {ratio} times the {compressed} compressed bytes read: the shape of a decompression bomb, \
                         not read whole (decompress it yourself if it is a real result file); stopped",
                        floor >> 20
                    ),
                },
            ),
            Refused::Memory { wanted } => io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("no memory for {wanted} bytes of a document read whole"),
            ),
        }
    }
}

impl Budget {
    /// The budget of an input under a compression whose bytes read are counted by `compressed`.
    pub fn compressed(compressed: Arc<AtomicU64>) -> Budget {
        Budget { compressed: Some(compressed), floor: HOLD_FLOOR, ratio: HOLD_RATIO }
    }

    #[cfg(test)]
    fn with_floor(compressed: Arc<AtomicU64>, floor: u64) -> Budget {
        Budget { compressed: Some(compressed), floor, ratio: HOLD_RATIO }
    }

    /// The most bytes that may be held now; `None`: no bound of the budget's own.
    pub fn limit(&self) -> Option<u64> {
        let read = self.compressed.as_ref()?.load(Ordering::Relaxed);
        Some(self.floor.max(read.saturating_mul(self.ratio)))
    }

    /// Make room in `buf` for `more` bytes: refused when `buf` would hold more than the budget
    /// allows, or when the allocator has no memory for it (never an abort). Past [`HOLD_FLOOR`]
    /// bytes, `held` takes the process's one place for a large held document (see [`Held`]),
    /// waiting for it if another thread has it. The buffer grows by doubling, within the limit:
    /// its capacity is never more than the budget allowed when it grew.
    pub fn grow(&self, buf: &mut Vec<u8>, more: usize, held: &mut Held) -> Result<(), Refused> {
        let need = buf.len().saturating_add(more);
        if need <= buf.capacity() {
            return Ok(());
        }
        let limit = self.limit();
        if let Some(limit) = limit
            && need as u64 > limit
        {
            let compressed = self.compressed.as_ref().map_or(0, |c| c.load(Ordering::Relaxed));
            return Err(Refused::Budget { wanted: need as u64, compressed, floor: self.floor, ratio: self.ratio });
        }
        let floor = usize::try_from(HOLD_FLOOR).unwrap_or(usize::MAX);
        if need > floor {
            held.take();
        }
        let mut target = need.max(buf.capacity().saturating_mul(2)).max(256);
        if let Some(limit) = limit {
            target = target.min(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        if need <= floor {
            target = target.min(floor);
        }
        let target = target.max(need);
        buf.try_reserve_exact(target - buf.len()).map_err(|_| Refused::Memory { wanted: target as u64 })
    }

    /// Append `bytes` to `buf` within the budget (see [`Budget::grow`]).
    pub fn extend(&self, buf: &mut Vec<u8>, bytes: &[u8], held: &mut Held) -> Result<(), Refused> {
        self.grow(buf, bytes.len(), held)?;
        buf.extend_from_slice(bytes);
        Ok(())
    }
}

/// The one place, in the whole process, for a document held whole past [`HOLD_FLOOR`] bytes:
/// inputs read in parallel (many files, one per core) hold at most [`HOLD_FLOOR`] each, and one of
/// them more, so the memory of the inputs read together is bounded by the number of cores and the
/// size of the largest input, not by their sum. Taken by [`Budget::grow`] and kept until the
/// `Held` is dropped (with the document); a thread that already has it (a record in a document
/// it holds) takes it again without waiting.
#[derive(Debug, Default)]
pub struct Held {
    guard: Option<std::sync::MutexGuard<'static, ()>>,
    counted: bool,
}

static LARGE: std::sync::Mutex<()> = std::sync::Mutex::new(());

thread_local! {
    /// How many [`Held`] of this thread have the place.
    static HOLDING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Held {
    fn take(&mut self) {
        if self.counted {
            return;
        }
        if HOLDING.get() == 0 {
            self.guard = Some(LARGE.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        }
        HOLDING.set(HOLDING.get() + 1);
        self.counted = true;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.counted {
            HOLDING.set(HOLDING.get() - 1);
        }
    }
}

/// Read a decoded JSON document whole into `text`, within `budget` (a decompression bomb is
/// refused before its bytes are held). What was read before an error stays in `text`; `held`
/// must be kept as long as `text` is.
pub fn read_json(reader: &mut dyn BufRead, text: &mut Vec<u8>, budget: &Budget, held: &mut Held) -> io::Result<()> {
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(());
        }
        let n = chunk.len();
        budget.extend(text, chunk, held).map_err(Refused::into_io)?;
        reader.consume(n);
    }
}

/// The error for a failed read of `input`: [`Error::Decode`] when a decoder failed,
/// [`Error::Io`] when reading the bytes themselves did.
pub fn error(input: &str, source: io::Error) -> Error {
    match source.get_ref().and_then(|e| e.downcast_ref::<Corrupt>()) {
        Some(c) => Error::Decode { input: input.to_string(), format: c.layer, message: c.to_string() },
        None => Error::Io { input: input.to_string(), source },
    }
}

/// Whether an error of a read is a decoder's (see [`error`]).
pub fn is_corrupt(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|e| e.is::<Corrupt>())
}

/// A decoder's failure: where in the decoded stream, and what.
#[derive(Debug)]
struct Corrupt {
    layer: &'static str,
    decoded: u64,
    message: String,
}

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} after {} decoded bytes", self.message, self.decoded)
    }
}

impl std::error::Error for Corrupt {}

/// An error of the reader under a decoder, passed through it untouched (see [`Decoded`]).
#[derive(Debug)]
struct SourceError(io::Error);

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SourceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// The compressed bytes under a decoder: counted, their end noted, and their read errors tagged.
struct Source<R> {
    inner: R,
    read: Arc<AtomicU64>,
    /// A read found the end of the input (a decoder's error after it is a stream cut off).
    eof: Arc<AtomicBool>,
}

fn tag(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::Interrupted {
        return e;
    }
    io::Error::new(e.kind(), SourceError(e))
}

impl<R: BufRead> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf).map_err(tag)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        if n == 0 && !buf.is_empty() {
            self.eof.store(true, Ordering::Relaxed);
        }
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Source<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let chunk = self.inner.fill_buf().map_err(tag)?;
        if chunk.is_empty() {
            self.eof.store(true, Ordering::Relaxed);
        }
        Ok(chunk)
    }

    fn consume(&mut self, n: usize) {
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        self.inner.consume(n)
    }
}

/// A decoder's output: an error that came from the reader under it is handed on as it was (an
/// [`Error::Io`]); any other is the decoder's, a [`Corrupt`] naming the format and where.
struct Decoded<'r> {
    inner: Box<dyn Read + 'r>,
    layer: Layer,
    decoded: u64,
    /// The [`Source`]'s end was reached.
    eof: Arc<AtomicBool>,
    /// The error that stopped the decoder, given again to every later read: a decoder may
    /// answer a read after its error with an end of input (a reader that retries, such as the
    /// line splitter's skipping of noise, would then take a corrupt stream for a complete one).
    failed: Option<(io::ErrorKind, Option<Corrupt>, String)>,
}

impl Decoded<'_> {
    fn again(&self) -> Option<io::Error> {
        let (kind, corrupt, message) = self.failed.as_ref()?;
        Some(match corrupt {
            Some(c) => {
                io::Error::new(*kind, Corrupt { layer: c.layer, decoded: c.decoded, message: c.message.clone() })
            }
            None => io::Error::new(*kind, message.clone()),
        })
    }

    fn fail(&mut self, e: io::Error) -> io::Error {
        let corrupt = e.get_ref().and_then(|c| c.downcast_ref::<Corrupt>()).map(|c| Corrupt {
            layer: c.layer,
            decoded: c.decoded,
            message: c.message.clone(),
        });
        self.failed = Some((e.kind(), corrupt, e.to_string()));
        e
    }
}

/// The reader's own error inside `e`, when `e` is or wraps one (decoders may wrap it).
fn from_source(e: &io::Error) -> Option<io::Error> {
    let mut at: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|e| e as _);
    while let Some(err) = at {
        if let Some(SourceError(inner)) = err.downcast_ref::<SourceError>() {
            return Some(match inner.get_ref() {
                // A decoder's failure of a layer below (gzip in a zstd stream) stays one.
                Some(c) if c.is::<Corrupt>() => {
                    let c = c.downcast_ref::<Corrupt>().expect("checked");
                    io::Error::new(
                        inner.kind(),
                        Corrupt { layer: c.layer, decoded: c.decoded, message: c.message.clone() },
                    )
                }
                _ => io::Error::new(inner.kind(), inner.to_string()),
            });
        }
        at = match err.downcast_ref::<io::Error>() {
            Some(io) => io.get_ref().map(|e| e as _),
            None => err.source(),
        };
    }
    None
}

impl Read for Decoded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = self.again() {
            return Err(e);
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.decoded += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                if let Some(inner) = from_source(&e) {
                    return Err(self.fail(inner));
                }
                let name = self.layer.name();
                let message = if e.kind() == io::ErrorKind::UnexpectedEof || self.eof.load(Ordering::Relaxed) {
                    format!("the {name} stream is cut off: the input ends inside it ({e})")
                } else {
                    format!("the input is not valid {name} ({e})")
                };
                let e = io::Error::new(e.kind(), Corrupt { layer: name, decoded: self.decoded, message });
                Err(self.fail(e))
            }
        }
    }
}

/// xz streams one after another, decoded as their bytes come, as `xz -dc` decodes: what a cut
/// leaves before it is decoded (the blocking reader decoded an LZMA2 chunk, up to 2 MiB of text,
/// only when the whole chunk was read, so a cut log gave nothing).
struct XzIncremental<R: BufRead> {
    source: Source<R>,
    stream: lzma_rust2::XzStream,
    done: bool,
}

impl<R: BufRead> Read for XzIncremental<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use lzma_rust2::{Action, Status};
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        loop {
            let input = self.source.fill_buf()?;
            let ended = input.is_empty();
            let action = if ended { Action::Finish } else { Action::Run };
            let result = self.stream.process(input, buf, action)?;
            self.source.consume(result.bytes_consumed);
            if result.status == Status::StreamEnd {
                self.done = true;
                return Ok(result.bytes_produced);
            }
            if result.bytes_produced > 0 {
                return Ok(result.bytes_produced);
            }
            if ended {
                return Err(cut("stream"));
            }
            if result.bytes_consumed == 0 {
                // Input given, room given, nothing done: never the case for a decoder that works.
                return Err(invalid("the xz decoder made no progress"));
            }
        }
    }
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// Read exactly `buf.len()` bytes, or fewer at the end of the input; how many.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn cut(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, format!("cut off in a {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_magic_numbers_and_utf16() {
        assert_eq!(sniff(b"\x1f\x8b\x08\0"), Some(Layer::Gzip));
        assert_eq!(sniff(b"\x28\xb5\x2f\xfd\x04"), Some(Layer::Zstd));
        assert_eq!(sniff(b"\xfd7zXZ\0\0\x04"), Some(Layer::Xz));
        assert_eq!(sniff(b"\xff\xfeA\0"), Some(Layer::Utf16 { big_endian: false, bom: true }));
        assert_eq!(sniff(b"\xfe\xff\0A"), Some(Layer::Utf16 { big_endian: true, bom: true }));
        assert_eq!(sniff(b"=\0=\0=\0 \0S\0"), Some(Layer::Utf16 { big_endian: false, bom: false }));
        assert_eq!(sniff(b"\0=\0=\0=\0 \0S"), Some(Layer::Utf16 { big_endian: true, bom: false }));
        assert_eq!(sniff(b"\xef\xbb\xbf==== Serving"), None);
        // 8-bit bytes that start with a byte-order mark are no UTF-16.
        assert_eq!(sniff(b"\xff\xfe garbage \x00\x01\nINFO 11-29 starting"), None);
        assert_eq!(sniff(b"\xfe\xff"), Some(Layer::Utf16 { big_endian: true, bom: true }));
        assert_eq!(sniff(b"a\0b\0"), None, "too short to tell");
        assert_eq!(sniff(b"plain text\0with a NUL\0\0"), None);
        assert_eq!(sniff(b""), None);
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// Decoded JSON held whole is bounded by the compressed size (a bomb), not by its own size.
    #[test]
    fn a_json_bomb_is_refused_and_a_real_document_is_not() {
        let read = |doc: &[u8], floor: u64| {
            let counted = Arc::new(AtomicU64::new(0));
            let compressed = gzip(doc);
            let mut reader = decoder(Layer::Gzip, &compressed[..], counted.clone());
            let mut text = Vec::new();
            let budget = Budget::with_floor(counted, floor);
            read_json(&mut reader, &mut text, &budget, &mut Held::default()).map(|()| text)
        };
        let bomb = [&b"{\"a\": \""[..], &vec![b'a'; 4 << 20]].concat();
        let e = read(&bomb, 64 << 10).unwrap_err();
        assert!(e.to_string().contains("decompression bomb"), "{e}");
        assert!(is_corrupt(&e));
        // Under the floor, or at a real document's ratio, it is read whole.
        assert_eq!(read(&bomb, 8 << 20).unwrap(), bomb);
        let real: Vec<u8> = (0..200_000).flat_map(|i| format!("{:.4}, ", f64::from(i) * 1.37).into_bytes()).collect();
        assert_eq!(read(&real, 64 << 10).unwrap(), real);
    }

    /// An error of the reader under the decoder stays an I/O error; the decoder's is `Corrupt`.
    #[test]
    fn reader_errors_stay_io_errors() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::PermissionDenied, "disk on fire"))
            }
        }
        for layer in [Layer::Gzip, Layer::Zstd, Layer::Xz, Layer::Utf16 { big_endian: false, bom: true }] {
            let mut r = decoder(layer, BufReader::new(Failing), Arc::default());
            let e = r.fill_buf().unwrap_err();
            assert!(!is_corrupt(&e), "{layer:?}: {e}");
            assert!(matches!(error("in", e), Error::Io { .. }), "{layer:?}");
        }
        let mut r = decoder(Layer::Gzip, &b"\x1f\x8bnot gzip at all"[..], Arc::default());
        let e = r.fill_buf().unwrap_err();
        assert!(matches!(error("in", e), Error::Decode { format: "gzip", .. }));
    }
}
