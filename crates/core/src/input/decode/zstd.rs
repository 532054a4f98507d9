//! zstd frames for [`super::decoder`]: every frame, skippable frames passed over, each frame's
//! header checked before the decoder sees it, and a frame cut off ended after its last complete
//! block so that what it decoded is read (see [`BlockGate`]).

use std::io::{self, BufRead, Read};

use super::{Source, cut, invalid, read_full};

/// Largest window a zstd frame may ask for: window log 23, what every level up to 19 uses (the
/// levels of `zstd` without `--ultra`). The decoder reserves the window when a frame starts and
/// keeps up to four times it while decoding, whatever the frame holds: a header asking for more is
/// the shape of a decompression bomb (a 30 KB frame asking for 128 MiB takes half a gigabyte), or
/// of a file made with `--ultra -20` and above or `--long`, which is refused with a message saying
/// to decompress it with `zstd -d` first. So memory stays within ~100 MB for any input.
pub(super) const ZSTD_MAX_WINDOW: u64 = 8 << 20;

/// zstd frames one after another, as `zstd` writes them and `cat a.zst b.zst` joins them;
/// skippable frames passed over. Each frame's header is checked before the decoder sees it (its
/// window within [`ZSTD_MAX_WINDOW`]), and its content checksum, when it has one, is verified.
pub(super) struct ZstdFrames<R: BufRead> {
    state: Frame<R>,
}

type FrameSource<R> = BlockGate<R>;

/// Largest block of a zstd frame (Block_Maximum_Size: the window, at most 128 KiB).
const ZSTD_MAX_BLOCK: usize = 128 << 10;

/// A zstd frame's bytes handed to the decoder a whole block at a time (one block held, at most
/// 128 KiB). The decoder keeps its last window of decoded bytes until the frame ends; a frame cut
/// off never ends, and that window (up to 8 MiB of text, every run in it) was lost. When the input
/// ends inside a frame, the gate hands the decoder, instead of the partial block, an empty last
/// block (and a zero checksum when the frame has one): the frame ends there, everything decoded
/// from the complete blocks is read out, as `zstd -dc` writes it, and the cut is said after it.
struct BlockGate<R: BufRead> {
    source: Source<R>,
    /// The frame header, read and checked before, handed to the decoder first.
    header: io::Cursor<Vec<u8>>,
    block: Vec<u8>,
    at: usize,
    checksum: bool,
    state: Gate,
    /// The input ended inside the frame: what the decoder got after the last complete block is
    /// the gate's own ending.
    cut: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Gate {
    Blocks,
    Checksum,
    End,
}

impl<R: BufRead> BlockGate<R> {
    fn new(source: Source<R>, header: Vec<u8>) -> Self {
        // Frame_Header_Descriptor (after the 4 bytes of magic): bit 2, a content checksum follows.
        let checksum = header.get(4).is_some_and(|d| d & 4 != 0);
        BlockGate {
            source,
            header: io::Cursor::new(header),
            block: Vec::new(),
            at: 0,
            checksum,
            state: Gate::Blocks,
            cut: false,
        }
    }

    /// The frame is cut: end it with an empty last raw block (and a checksum of zeros).
    fn end_here(&mut self, in_checksum: bool) {
        self.block.clear();
        if !in_checksum {
            self.block.extend_from_slice(&[1, 0, 0]);
        }
        if self.checksum {
            self.block.extend_from_slice(&[0; 4]);
        }
        self.at = 0;
        self.cut = true;
        self.state = Gate::End;
    }

    /// The next piece to hand the decoder: a whole block, or the checksum.
    fn next_piece(&mut self) -> io::Result<()> {
        self.block.clear();
        self.at = 0;
        match self.state {
            Gate::End => {}
            Gate::Checksum => {
                self.block.resize(4, 0);
                if read_full(&mut self.source, &mut self.block)? < 4 {
                    self.end_here(true);
                } else {
                    self.state = Gate::End;
                }
            }
            Gate::Blocks => {
                let mut h = [0u8; 3];
                if read_full(&mut self.source, &mut h)? < 3 {
                    self.end_here(false);
                    return Ok(());
                }
                let header = u32::from_le_bytes([h[0], h[1], h[2], 0]);
                let (last, kind, size) = (header & 1 != 0, (header >> 1) & 3, (header >> 3) as usize);
                let payload = match kind {
                    0 | 2 => size,
                    1 => 1,
                    _ => return Err(invalid("a block of the reserved type")),
                };
                if size > ZSTD_MAX_BLOCK {
                    return Err(invalid(format!("a block of {size} bytes, more than the 128 KiB a block may be")));
                }
                self.block.extend_from_slice(&h);
                self.block.resize(3 + payload, 0);
                if read_full(&mut self.source, &mut self.block[3..])? < payload {
                    self.end_here(false);
                    return Ok(());
                }
                if last {
                    self.state = if self.checksum { Gate::Checksum } else { Gate::End };
                }
            }
        }
        Ok(())
    }
}

impl<R: BufRead> Read for BlockGate<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.header.read(buf)?;
        if n > 0 || buf.is_empty() {
            return Ok(n);
        }
        while self.at == self.block.len() {
            if self.state == Gate::End {
                return Ok(0);
            }
            self.next_piece()?;
        }
        let n = (self.block.len() - self.at).min(buf.len());
        buf[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

enum Frame<R: BufRead> {
    Between(Source<R>),
    In(Box<ruzstd::decoding::StreamingDecoder<FrameSource<R>, ruzstd::decoding::FrameDecoder>>),
    Done,
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
                "a frame asks for a window of {} MiB, more than the {} MiB of every level up to 19 (a file made with \
                 `--ultra` or `--long`, or a decompression bomb); decompress it with `zstd -d` first",
                window >> 20,
                ZSTD_MAX_WINDOW >> 20
            )));
        }
        header.push(d);
        header.extend_from_slice(&fields);
        return Ok(Some(header));
    }
}

impl<R: BufRead> ZstdFrames<R> {
    pub(super) fn new(source: Source<R>) -> Self {
        ZstdFrames { state: Frame::Between(source) }
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
                    let gate = BlockGate::new(source, header);
                    // The header was checked and is all in memory: an error here is the header's.
                    let decoder = StreamingDecoder::new_with_decoder(gate, FrameDecoder::new())
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
                    if decoder.get_ref().cut {
                        // Ended by the gate: what the complete blocks held was read; the rest is cut.
                        return Err(cut("block"));
                    }
                    if let (Some(stated), Some(computed)) =
                        (frame.get_checksum_from_data(), frame.get_calculated_checksum())
                        && stated != computed
                    {
                        return Err(invalid("a frame's content checksum does not match its content"));
                    }
                    self.state = Frame::Between(decoder.into_inner().source);
                }
            }
        }
    }
}
