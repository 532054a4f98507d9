//! A text input: its lines scanned for blocks and JSON records ([`super::scan`]), on one thread or
//! two ([`super::threads`]), each block made a run ([`super::block`]), summary rows folded into
//! the runs they repeat ([`super::fold`]).

use std::io::BufRead;

use crate::Error;
use crate::detect::{self, Scanner};
use crate::pipeline::block::run_of_block;
use crate::pipeline::scan::{Item, scan};
use crate::pipeline::{Config, Out, fold, threads};

pub(crate) fn normalize_text<R: BufRead>(
    reader: R,
    input: &str,
    opts: &Config,
    sink: &mut dyn Out,
    live: bool,
) -> Result<usize, Error> {
    let mut scanner = Scanner::new(opts.definitions);
    // Summary rows folded into the runs they repeat, on the way out (see `fold`).
    let mut fold = fold::Fold::new(sink, opts.definitions, opts.policy, input);
    let sink: &mut dyn Out = &mut fold;
    // The input's head, to say what it held if it holds no result (`detect::missing`).
    let mut head = Vec::new();
    let reader = Head { inner: reader, head: &mut head };
    let found = if opts.pipelined {
        threads::normalize_text_pipelined(reader, input, opts, &mut scanner, sink, live)?
    } else {
        let mut found = 0;
        scan(reader, input, opts, &mut scanner, &mut |item| match item {
            Item::Block(block) => {
                found += 1;
                sink.run(run_of_block(&block, input, &opts.policy))
            }
            Item::Runs(runs) => runs.into_iter().try_for_each(|run| {
                found += 1;
                sink.run(run)
            }),
        })?;
        found
    };
    fold.finish()?;
    if found == 0 {
        let mut looked_for = scanner.looked_for();
        if let Some(missing) = detect::missing::diagnose(&head, opts.definitions) {
            // What is missing first: the rest says what else would have been read.
            looked_for = format!("a result block's banner line: {missing}; also: {looked_for}");
        }
        return Err(Error::NoResult { input: input.to_string(), looked_for });
    }
    Ok(found)
}

/// A reader that keeps the first [`detect::missing::HEAD`] bytes read through it.
struct Head<'h, R> {
    inner: R,
    head: &'h mut Vec<u8>,
}

impl<R: BufRead> Head<'_, R> {
    fn keep(&mut self, bytes: &[u8]) {
        let room = detect::missing::HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl<R: BufRead> std::io::Read for Head<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.keep(&buf[..n]);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Head<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if self.head.len() < detect::missing::HEAD
            && let Ok(buf) = self.inner.fill_buf()
        {
            let room = detect::missing::HEAD - self.head.len();
            self.head.extend_from_slice(&buf[..n.min(buf.len()).min(room)]);
        }
        self.inner.consume(n);
    }
}
