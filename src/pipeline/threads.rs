//! A text's blocks read on a second thread while the first goes on scanning: runs still handed
//! out in order, and, from a live stream, before a read of the input that would wait.

use std::io::{BufRead, Read};

use crate::detect::{Block, Scanner};
use crate::pipeline::{run_of_block, scan};
use crate::{Error, Options, Run, Sink};

/// [`scan`] on this thread, which also hands runs to the sink in order; a second thread extracts,
/// derives and validates each block (bounded queues keep memory bounded). Returns the runs found.
/// `live`: before the input is asked for more (a read that may wait, on a pipe or a terminal),
/// every run of a block already read is handed out, so that a live stream gets each run as its
/// block ends. (Not for a file, read to its end anyway: waiting for the worker there costs.)
pub(crate) fn normalize_text_pipelined<'d, R: BufRead>(
    reader: R,
    input: &str,
    opts: &Options,
    scanner: &mut Scanner<'d>,
    sink: &mut dyn Sink,
    live: bool,
) -> Result<usize, Error> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    /// Blocks waiting for the worker up to which it is keeping up, and renders runs too. Blocks
    /// come in bursts, so the queue is often longer than the worker's lag: at 2 it rendered a
    /// third of the bench log's runs, at 16 half (about 3% faster in interleaved timings), and
    /// rendering all of them makes it the slower thread (15% slower).
    const KEEPING_UP: usize = 16;
    let policy = opts.policy;
    let render = sink.render();
    // Blocks sent to the worker and not yet taken: few, and this thread is the busier one.
    let waiting = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (to_worker, blocks) = mpsc::sync_channel::<Block<'d>>(64);
        let (to_main, runs) = mpsc::sync_channel::<(Run, Option<Vec<u8>>)>(64);
        let waiting = &waiting;
        scope.spawn(move || {
            for block in blocks {
                let keeping_up = waiting.fetch_sub(1, Ordering::Relaxed) <= KEEPING_UP;
                let run = run_of_block(&block, input, &policy);
                let bytes = render.filter(|_| keeping_up).and_then(|r| r(&run));
                // What was rendered is dropped here, where it was made (freeing memory another
                // thread allocated costs more), and not on the busier scanning thread.
                let run = if bytes.is_some() { run.outline() } else { run };
                if to_main.send((run, bytes)).is_err() {
                    break;
                }
            }
        });
        let out = std::cell::RefCell::new(HandOut { sink, runs, sent: 0, found: 0, failed: None });
        let reader = BeforeRefill {
            inner: reader,
            left: 0,
            before_refill: || {
                let mut out = out.borrow_mut();
                // Wait for the worker only where the read would wait too.
                let waits = live && out.found < out.sent && !opts.ready.is_some_and(|ready| ready());
                if waits { out.all() } else { out.ready() }.map_err(|e| {
                    out.failed = Some(e);
                    std::io::Error::other("the output failed")
                })
            },
        };
        let scanned = scan(reader, input, scanner, &mut |block| {
            let mut out = out.borrow_mut();
            out.sent += 1;
            waiting.fetch_add(1, Ordering::Relaxed);
            // A closed queue means the worker stopped; the runs it sent are still drained below.
            let _ = to_worker.send(block);
            out.ready()
        });
        drop(to_worker);
        let mut out = out.into_inner();
        if let Some(e) = out.failed.take() {
            return Err(e);
        }
        scanned?;
        out.all()?;
        Ok(out.found)
    })
}

/// The runs coming back from the pipelined worker, in the order their blocks were sent, and the
/// sink they go to.
struct HandOut<'s> {
    sink: &'s mut dyn Sink,
    runs: std::sync::mpsc::Receiver<(Run, Option<Vec<u8>>)>,
    sent: usize,
    found: usize,
    /// The sink's error, met while handing out before a read (which then stops).
    failed: Option<Error>,
}

impl HandOut<'_> {
    fn give(&mut self, (run, bytes): (Run, Option<Vec<u8>>)) -> Result<(), Error> {
        self.found += 1;
        match bytes {
            Some(bytes) => self.sink.rendered(run, bytes),
            None => self.sink.run(run),
        }
    }

    /// The runs that are ready, without waiting.
    fn ready(&mut self) -> Result<(), Error> {
        while let Ok(got) = self.runs.try_recv() {
            self.give(got)?;
        }
        Ok(())
    }

    /// Every run of a block sent so far, waiting for the worker (a stopped worker sends no more).
    fn all(&mut self) -> Result<(), Error> {
        while self.found < self.sent {
            let Ok(got) = self.runs.recv() else { break };
            self.give(got)?;
        }
        Ok(())
    }
}

/// A reader that calls `before_refill` whenever `inner` is asked for more than it holds: the
/// moment a read may wait for its source.
struct BeforeRefill<R, F> {
    inner: R,
    /// Bytes of the last `fill_buf` not consumed yet.
    left: usize,
    before_refill: F,
}

impl<R: BufRead, F: FnMut() -> std::io::Result<()>> Read for BeforeRefill<R, F> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead, F: FnMut() -> std::io::Result<()>> BufRead for BeforeRefill<R, F> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.left == 0 {
            (self.before_refill)()?;
        }
        let buf = self.inner.fill_buf()?;
        self.left = buf.len();
        Ok(buf)
    }

    fn consume(&mut self, n: usize) {
        self.left = self.left.saturating_sub(n);
        self.inner.consume(n);
    }
}
