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

/// Bytes at the start of an input needed to tell what it is (the longest magic number is xz's 6).
pub const SNIFF: usize = 8;

/// Layers of encoding peeled off one input at most (`.gz` of a UTF-16 log is two).
pub const MAX_LAYERS: usize = 4;

/// Largest window a zstd frame may ask for: what `zstd -d` itself decodes without `--memory`
/// (window log 27). The decoder keeps a window of decoded bytes; a header asking for more is the
/// shape of a decompression bomb, or of a file made with `--long=31`, which `zstd -d` also refuses.
const ZSTD_MAX_WINDOW: u64 = 128 << 20;

/// Largest memory an xz block's filters may need, in KiB (xz -9 needs 65 MiB of dictionary).
const XZ_MEM_LIMIT_KB: u32 = 256 * 1024;

/// Decoded bytes of a compressed JSON document held in memory (the JSON readers read a document
/// whole) are refused beyond this many when they are also more than [`BOMB_RATIO`] times the
/// compressed bytes read: memory stays within 100 times the input's size. Result files compress 2
/// to 10 to 1 (the captured ones, timing figures of 17 significant digits); 100 to 1 and beyond is
/// the shape of a decompression bomb (gzip reaches ~1000 to 1, zstd and xz far more).
pub const JSON_FLOOR: u64 = 256 << 20;
pub const BOMB_RATIO: u64 = 100;

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
        Layer::Zstd => Box::new(ZstdFrames { state: Frame::Between(source) }),
        Layer::Xz => Box::new(lzma_rust2::XzReader::new_mem_limit(source, true, XZ_MEM_LIMIT_KB)),
        Layer::Utf16 { big_endian, .. } => Box::new(
            encoding_rs_io::DecodeReaderBytesBuilder::new()
                .encoding(Some(if big_endian { encoding_rs::UTF_16BE } else { encoding_rs::UTF_16LE }))
                .bom_sniffing(true)
                .strip_bom(true)
                .build(source),
        ),
    };
    Box::new(BufReader::with_capacity(256 * 1024, Decoded { inner: decoded, layer, decoded: 0, eof, failed: None }))
}

/// Read a decoded JSON document whole into `text`, refusing to hold more than [`JSON_FLOOR`] bytes
/// that are also more than [`BOMB_RATIO`] times the `compressed` bytes read (a decompression
/// bomb). What was read before an error stays in `text`.
pub fn read_json(reader: &mut dyn BufRead, text: &mut Vec<u8>, compressed: &AtomicU64) -> io::Result<()> {
    read_json_within(reader, text, compressed, JSON_FLOOR)
}

fn read_json_within(
    reader: &mut dyn BufRead,
    text: &mut Vec<u8>,
    compressed: &AtomicU64,
    floor: u64,
) -> io::Result<()> {
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
        text.extend_from_slice(chunk);
        reader.consume(n);
        let (decoded, read) = (text.len() as u64, compressed.load(Ordering::Relaxed));
        if decoded > floor && decoded > read.saturating_mul(BOMB_RATIO) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                Corrupt {
                    layer: "compressed",
                    decoded,
                    message: format!(
                        "a JSON document decoded to more than {floor} bytes from {read} bytes (more than \
                         {BOMB_RATIO} to 1): not read whole, as the shape of a decompression bomb; decompress \
                         it yourself if it is a real result file"
                    ),
                },
            ));
        }
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

/// zstd frames one after another, as `zstd` writes them and `cat a.zst b.zst` joins them;
/// skippable frames passed over. Each frame's header is checked before the decoder sees it (its
/// window within [`ZSTD_MAX_WINDOW`]), and its content checksum, when it has one, is verified.
struct ZstdFrames<R: BufRead> {
    state: Frame<R>,
}

type FrameSource<R> = io::Chain<io::Cursor<Vec<u8>>, Source<R>>;

enum Frame<R: BufRead> {
    Between(Source<R>),
    In(Box<ruzstd::decoding::StreamingDecoder<FrameSource<R>, ruzstd::decoding::FrameDecoder>>),
    Done,
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

/// The next frame's header from `source`, checked: `None` at the end of the input, after any
/// skippable frames. The header's bytes are returned to be read again by the decoder.
fn next_frame_header<R: BufRead>(source: &mut Source<R>) -> io::Result<Option<Vec<u8>>> {
    loop {
        let mut magic = [0u8; 4];
        match read_full(source, &mut magic)? {
            0 => return Ok(None),
            4 => {}
            _ => return Err(cut("frame's magic number")),
        }
        let magic_number = u32::from_le_bytes(magic);
        if magic_number & 0xffff_fff0 == 0x184d_2a50 {
            // A skippable frame: its length, then that many bytes of no content.
            let mut len = [0u8; 4];
            if read_full(source, &mut len)? < 4 {
                return Err(cut("skippable frame"));
            }
            let len = u64::from(u32::from_le_bytes(len));
            if io::copy(&mut source.by_ref().take(len), &mut io::sink())? < len {
                return Err(cut("skippable frame"));
            }
            continue;
        }
        if magic_number != 0xfd2f_b528 {
            return Err(invalid(format!("no zstd frame starts here (bytes {magic:02x?})")));
        }
        let mut header = magic.to_vec();
        let mut descriptor = [0u8; 1];
        if read_full(source, &mut descriptor)? < 1 {
            return Err(cut("frame header"));
        }
        let d = descriptor[0];
        let single_segment = d & 0x20 != 0;
        let dict_bytes = [0, 1, 2, 4][usize::from(d & 3)];
        let fcs_bytes = match d >> 6 {
            0 if single_segment => 1,
            0 => 0,
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let rest = usize::from(!single_segment) + dict_bytes + fcs_bytes;
        let mut fields = vec![0u8; rest];
        if read_full(source, &mut fields)? < rest {
            return Err(cut("frame header"));
        }
        let window = if single_segment {
            let fcs = &fields[dict_bytes..];
            let mut v = [0u8; 8];
            v[..fcs.len()].copy_from_slice(fcs);
            u64::from_le_bytes(v) + if fcs_bytes == 2 { 256 } else { 0 }
        } else {
            let w = fields[0];
            let log = 10 + u32::from(w >> 3);
            let base = 1u64 << log;
            base + (base / 8) * u64::from(w & 7)
        };
        if window > ZSTD_MAX_WINDOW {
            return Err(invalid(format!(
                "a frame asks for a window of {} MiB, more than the {} MiB `zstd -d` decodes by default",
                window >> 20,
                ZSTD_MAX_WINDOW >> 20
            )));
        }
        header.push(d);
        header.extend_from_slice(&fields);
        return Ok(Some(header));
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use ruzstd::decoding::{FrameDecoder, StreamingDecoder};
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match std::mem::replace(&mut self.state, Frame::Done) {
                Frame::Done => return Ok(0),
                Frame::Between(mut source) => {
                    let Some(header) = next_frame_header(&mut source)? else { return Ok(0) };
                    let chained = io::Cursor::new(header).chain(source);
                    // The header was checked and is all in memory: an error here is the header's.
                    let decoder = StreamingDecoder::new_with_decoder(chained, FrameDecoder::new())
                        .map_err(|e| invalid(e.to_string()))?;
                    self.state = Frame::In(Box::new(decoder));
                }
                Frame::In(mut decoder) => {
                    let n = decoder.read(buf)?;
                    if n > 0 {
                        self.state = Frame::In(decoder);
                        return Ok(n);
                    }
                    let frame = &decoder.decoder;
                    if !frame.is_finished() {
                        return Err(cut("frame"));
                    }
                    if let (Some(stated), Some(computed)) =
                        (frame.get_checksum_from_data(), frame.get_calculated_checksum())
                    {
                        if stated != computed {
                            return Err(invalid("a frame's content checksum does not match its content"));
                        }
                    }
                    self.state = Frame::Between(decoder.into_inner().into_inner().1);
                }
            }
        }
    }
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
            read_json_within(&mut reader, &mut text, &counted, floor).map(|()| text)
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
