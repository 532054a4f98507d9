//! A text's blocks read on a second thread while the first goes on scanning: runs still handed
//! out in order, and, from a live stream, before a read of the input that would wait.

use std::io::{BufRead, Read};

use crate::detect::Scanner;
use crate::pipeline::block::run_of_block;
use crate::pipeline::scan::{Item, scan};
use crate::pipeline::{Config, Out};
use crate::{Error, Run};

/// [`scan`] on this thread, which also hands runs to the sink in order; a second thread extracts,
/// derives and validates each block (bounded queues keep memory bounded). Returns the runs found.
/// `live`: before the input is asked for more (a read that may wait, on a pipe or a terminal),
/// every run of a block already read is handed out, so that a live stream gets each run as its
/// block ends. (Not for a file, read to its end anyway: waiting for the worker there costs.)
pub(crate) fn normalize_text_pipelined<'d, R: BufRead>(
    reader: R,
    input: &str,
    opts: &Config,
    scanner: &mut Scanner<'d>,
    sink: &mut dyn Out,
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
    // Runs a summary may fold into, and summary rows, are not rendered here (see `fold`).
    let involved = crate::pipeline::fold::Involved::new(opts.definitions);
    // Blocks sent to the worker and not yet taken: few, and this thread is the busier one.
    let waiting = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (to_worker, blocks) = mpsc::sync_channel::<Item<'d>>(64);
        let (to_main, runs) = mpsc::sync_channel::<(Run, Option<Vec<u8>>)>(64);
        let waiting = &waiting;
        scope.spawn(move || {
            for item in blocks {
                let keeping_up = waiting.fetch_sub(1, Ordering::Relaxed) <= KEEPING_UP;
                let runs = match item {
                    Item::Block(block) => vec![run_of_block(&block, input, &policy)],
                    Item::Runs(runs) => runs,
                };
                for run in runs {
                    let bytes = render.filter(|_| keeping_up && !involved.has(&run)).and_then(|r| r(&run));
                    // What was rendered is dropped here, where it was made (freeing memory another
                    // thread allocated costs more), and not on the busier scanning thread.
                    let run = if bytes.is_some() { run.outline() } else { run };
                    if to_main.send((run, bytes)).is_err() {
                        return;
                    }
                }
            }
        });
        let out = std::cell::RefCell::new(HandOut { sink, runs, sent: 0, found: 0, failed: None });
        let reader = BeforeRefill {
            inner: reader,
            left: 0,
            before_refill: || {
                let mut out = out.borrow_mut();
                // Wait for the worker only where the read would wait too; and then hand out what
                // the output holds back (runs a summary may repeat: `fold`).
                let waits =
                    live && (out.found < out.sent || out.sink.holds()) && !opts.ready.is_some_and(|ready| ready());
                if waits { out.all().and_then(|()| out.sink.idle()) } else { out.ready() }.map_err(|e| {
                    out.failed = Some(e);
                    std::io::Error::other("the output failed")
                })
            },
        };
        let scanned = scan(reader, input, opts, scanner, &mut |item| {
            let mut out = out.borrow_mut();
            out.sent += match &item {
                Item::Block(_) => 1,
                Item::Runs(runs) => runs.len(),
            };
            waiting.fetch_add(1, Ordering::Relaxed);
            // A closed queue means the worker stopped; the runs it sent are still drained below.
            let _ = to_worker.send(item);
            out.ready()
        });
        drop(to_worker);
        let mut out = out.into_inner();
        if let Some(e) = out.failed.take() {
            return Err(e);
        }
        // An input that stopped decoding still hands out the runs of the blocks before the cut.
        if let Err(e @ Error::Decode { .. }) = scanned {
            out.all()?;
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
    sink: &'s mut dyn Out,
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

// These tests drive the pipelined read itself (a sink that renders, a read that never waits),
// which is no public API: they live here rather than in tests/.
#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::pipeline::{Config, Out, Plain, Render};
    use crate::{Error, Options, Run};

    fn samples_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples")
    }

    /// The files of `samples/DIR` whose names end with `suffix`, sorted.
    fn sample_files(dir: &str, suffix: &str) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(samples_dir().join(dir))
            .unwrap_or_else(|e| panic!("samples/{dir}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(suffix))
            .collect();
        v.sort();
        v
    }

    /// A pipelined read (a file's blocks read on a second thread) may render runs there, for a sink
    /// that says how ([`Out::render`]). Whichever thread does it, every run arrives
    /// once, in input order, and rendered bytes are the renderer's, with the run's outline (source,
    /// checks, verdict): the same report as read alone.
    #[test]
    fn a_pipelined_read_hands_out_every_run_once_in_order_rendered_or_not() {
        struct Both {
            /// Each run as JSON, whichever way it came.
            runs: Vec<String>,
            rendered: usize,
        }
        fn render(run: &Run) -> Option<Vec<u8>> {
            serde_json::to_vec(run).ok()
        }
        impl Out for Both {
            fn run(&mut self, run: Run) -> Result<(), Error> {
                self.runs.push(serde_json::to_string(&run).unwrap());
                Ok(())
            }
            fn render(&self) -> Option<Render> {
                Some(render)
            }
            fn rendered(&mut self, outline: Run, bytes: Vec<u8>) -> Result<(), Error> {
                let full: Run = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(
                    (&outline.source, &outline.checks, outline.verdict),
                    (&full.source, &full.checks, full.verdict)
                );
                assert!(outline.rows.is_empty() && outline.notes.is_empty(), "an outline, not the whole run");
                self.rendered += 1;
                self.runs.push(String::from_utf8(bytes).unwrap());
                Ok(())
            }
        }
        // Many blocks of every tool, one after another.
        let mut text = Vec::new();
        for dir in ["captured", "versions", "noisy", "public"] {
            for path in sample_files(dir, ".txt") {
                text.extend(std::fs::read(path).unwrap());
                text.push(b'\n');
            }
        }
        let always = || true;
        let read = |pipelined: bool, ready: Option<&(dyn Fn() -> bool + Sync)>| {
            let mut sink = Both { runs: Vec::new(), rendered: 0 };
            let opts = Config { pipelined, ready, ..Config::from(&Options::default()) };
            // Read a few KB at a time, as from a pipe.
            crate::pipeline::read(
                std::io::BufReader::with_capacity(4096, &text[..]),
                "all.txt",
                &opts,
                &mut sink,
                true,
            )
            .unwrap();
            sink
        };
        let (alone, pipelined, never_waiting) = (read(false, None), read(true, None), read(true, Some(&always)));
        assert!(alone.runs.len() > 50, "{}", alone.runs.len());
        eprintln!(
            "{} and {} of {} runs rendered on the second thread",
            pipelined.rendered,
            never_waiting.rendered,
            pipelined.runs.len()
        );
        assert_eq!(alone.rendered, 0, "only a pipelined read renders");
        // The worker renders at least the last blocks, once the scanner has no more to send: the
        // outline path above is always taken.
        assert!(pipelined.rendered > 0 && never_waiting.rendered > 0);
        assert_eq!(never_waiting.runs, alone.runs);
        // Where every read may wait, a vllm-rs step's run goes out before its sweep's summary is
        // read (`fold`): the same runs, without the summary's cross-check (which agrees here).
        let without_fold = |runs: &[String]| -> Vec<serde_json::Value> {
            runs.iter()
                .map(|r| {
                    let mut v: serde_json::Value = serde_json::from_str(r).unwrap();
                    v["checks"].as_array_mut().unwrap().retain(|c| c["id"] != crate::pipeline::fold::RULE.as_str());
                    v
                })
                .collect()
        };
        assert_eq!(without_fold(&pipelined.runs), without_fold(&alone.runs));
        assert!(alone.runs.iter().any(|r| r.contains(crate::pipeline::fold::RULE.as_str())), "no sweep folded");
    }

    /// A pipelined read of a stream hands out every run whose block has ended before it reads on, when
    /// that read may wait (here: every read, as nothing says the input is ready): a live log
    /// (`tail -f log | bench-normalize`) gets each run as its block ends, not with the next one.
    #[test]
    fn a_pipelined_read_of_a_stream_hands_out_each_run_before_it_reads_on() {
        use std::sync::{Arc, Mutex};
        let log = std::fs::read(samples_dir().join("captured/vllm-s1.stdout.txt")).unwrap();
        /// Gives one log per read; before each, checks that the runs of the logs given so far are out.
        struct Pieces {
            left: usize,
            given: usize,
            log: Vec<u8>,
            got: Arc<Mutex<Vec<Run>>>,
        }
        impl std::io::Read for Pieces {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                assert!(out.len() >= self.log.len());
                assert_eq!(self.got.lock().unwrap().len(), self.given, "a run not handed out before the next read");
                if self.left == 0 {
                    return Ok(0);
                }
                self.left -= 1;
                self.given += 1;
                out[..self.log.len()].copy_from_slice(&self.log);
                Ok(self.log.len())
            }
        }
        let got = Arc::new(Mutex::new(Vec::new()));
        let input = Pieces { left: 5, given: 0, log, got: got.clone() };
        let sink_got = got.clone();
        let mut sink = move |run: Run| {
            sink_got.lock().unwrap().push(run);
            Ok(())
        };
        let opts = Config { pipelined: true, ..Config::from(&Options::default()) };
        let reader = std::io::BufReader::with_capacity(64 * 1024, input);
        let found = crate::pipeline::read(reader, "live.log", &opts, &mut Plain(&mut sink), true).unwrap();
        assert_eq!(found, 5);
        let blocks: Vec<usize> = got.lock().unwrap().iter().map(|r| r.source.block).collect();
        assert_eq!(blocks, [1, 2, 3, 4, 5]);
    }
}
