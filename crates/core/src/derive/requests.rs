//! `per-request-consistency`: the per-request arrays of a result file (vLLM `--save-detailed`,
//! SGLang `--output-details`) are evidence, and the per-request TPOT is derived from them, so they
//! are checked: against themselves, and against the summary figures the same file states.
//!
//! Both tools compute their summary from the very lists they save, over the successful requests
//! (a non-empty error marks a failure; a failed request's entries are zeros and take no part):
//!
//! * `completed` is the number of successful requests, `failed` the others;
//! * `total_output_tokens` and `total_input_tokens` are the sums of `output_lens` and
//!   `input_lens` over them (integers: equal exactly);
//! * `mean_ttft_ms` is the mean of `ttfts` x 1000; vLLM's `mean_e2el_ms` the mean of `latencies`
//!   x 1000, and its `mean_tpot_ms` the mean over requests with more than one output token of
//!   `(latency - ttft) / (output_len - 1)` x 1000: the per-request derivation itself. These are
//!   equal up to float summation order (1e-6 relative) or, for a file someone rounded, to the
//!   printed hundredth (0.005 ms).
//! * Without a latency array (SGLang), E2E_i is `ttft_i + sum(itls_i)`, which ends at the last
//!   chunk, while SGLang's own E2E latency ends at the `[DONE]` line sent after it: so the mean of
//!   `ttft_i + sum(itls_i)` can only be at most `mean_e2e_latency_ms`, and the per-request TPOT at
//!   most `mean_tpot_ms` (each request's term is smaller). The other direction is a bound on how
//!   late `[DONE]` follows the last chunk (the server writes them back to back: 0.003-0.01% of the
//!   decode time, well under a millisecond, in every capture): the file's mean TPOT may exceed
//!   the derived one by 1% plus 5 ms per request (`5 x mean(1 / (n_i - 1))` ms over the
//!   requests). An assumption, not a proof; it is what stops gaps shrunk by any factor.
//!
//! Within each successful request: every entry a finite, non-negative number, token counts whole,
//! `ttft <= latency` (the first token arrives within the request), and the sum of the gaps is not
//! negative (each gap is a time difference of later chunks). Arrays of different lengths are
//! refused earlier, when the file is read (exit 3).
//!
//! Where the file has a latency array beside the gaps (vLLM 0.30+, vllm-rs), each request's gaps
//! are its decode span: vLLM times `ttft` at the first counted chunk, appends one gap per later
//! chunk, and sets `latency = most_recent_timestamp - st`, the last chunk's time, so `latency_i =
//! ttft_i + sum(itls_i)` up to float rounding. Two readings of the clock can move it: the
//! completions path takes TTFT from a second `perf_counter()` call just after the chunk's (the gaps
//! then exceed `latency - ttft` by that instant, microseconds), and versions that also move
//! `most_recent_timestamp` at the trailing usage chunk add the usage chunk's delay (sent right
//! after the last one) to the latency. So `|sum(itls_i) - (latency_i - ttft_i)| <= 1 ms + 1%` of
//! the larger; a request outside it is named. A latency or a gap list scaled by 0.5 or 2 (a
//! file whose latencies were halved and its summary recomputed from them) is caught for every
//! request whose decode span exceeds ~2 ms. The gaps' sums here are the fast path's parse, to
//! within 16 significant digits (`GapSums::approx`).

use crate::number::shown as f;
use crate::report::{Requests, Run, Status};
use crate::vocabulary::{reported, totals};

/// Relative slack of figures the file computed from the same lists (float summation order).
const REL: f64 = 1e-6;
/// A figure rounded to 2 decimals by whoever wrote it.
const PRINTED: f64 = 0.005;
/// How late SGLang's `[DONE]` may follow the last chunk: a share of the decode time, and a time
/// per request.
const DONE_REL: f64 = 0.01;
const DONE_MS: f64 = 5.0;
/// How many individual problems are quoted (the rest counted).
const QUOTED: usize = 4;
/// `|sum(itls_i) - (latency_i - ttft_i)|` allowed: an absolute and a relative part (module docs).
const SPAN_MS: f64 = 1.0;
const SPAN_REL: f64 = 0.01;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= PRINTED + REL * a.abs().max(b.abs())
}

/// The rule: `(status, message)`.
pub fn consistency(run: &Run) -> (Status, String) {
    let Some(req) = run.requests.as_deref() else {
        return (Status::Skipped, "no per-request arrays".into());
    };
    Check::new(req).run(run)
}

struct Check<'r> {
    req: &'r Requests,
    problems: Vec<String>,
    unquoted: usize,
    agreed: Vec<String>,
}

impl<'r> Check<'r> {
    fn new(req: &'r Requests) -> Self {
        Check { req, problems: Vec::new(), unquoted: 0, agreed: Vec::new() }
    }

    fn problem(&mut self, p: String) {
        if self.problems.len() < QUOTED {
            self.problems.push(p);
        } else {
            self.unquoted += 1;
        }
    }

    fn run(mut self, run: &Run) -> (Status, String) {
        let req = self.req;
        let n = req.output_len.len();
        let failed = |i: usize| req.failed.as_ref().is_some_and(|f| f.get(i).copied().unwrap_or(false));
        let ok: Vec<usize> = (0..n).filter(|i| !failed(*i)).collect();

        // Within each successful request.
        let number = |this: &mut Self, key: &str, i: usize, v: Option<f64>, whole: bool| -> Option<f64> {
            match v {
                None => {
                    this.problem(format!("{key}[{i}] is not a number"));
                    None
                }
                Some(x) if !x.is_finite() || x < 0.0 => {
                    this.problem(format!("{key}[{i}] = {} is not a finite non-negative number", f(x)));
                    None
                }
                Some(x) if whole && x.fract() != 0.0 => {
                    this.problem(format!("{key}[{i}] = {} is not a whole number of tokens", f(x)));
                    None
                }
                Some(x) => Some(x),
            }
        };
        let (mut ttft_sum, mut e2e_sum, mut out_sum, mut in_sum) = (0.0, 0.0, 0.0, 0.0);
        let (mut tpot_sum, mut tpot_n, mut inv_sum) = (0.0, 0usize, 0.0);
        let mut complete = true;
        let from_latencies = req.latency_ms.is_some();
        let (mut spans_ok, mut spans_bad) = (0usize, Vec::<String>::new());
        for &i in &ok {
            let ttft = number(&mut self, "ttfts", i, req.ttft_ms[i], false);
            let out = number(&mut self, "output_lens", i, req.output_len[i], true);
            if let Some(inputs) = &req.input_len {
                match number(&mut self, "input_lens", i, inputs[i], true) {
                    Some(x) => in_sum += x,
                    None => complete = false,
                }
            }
            let e2e = match (&req.latency_ms, &req.gap_sums_ms) {
                (Some(lat), _) => number(&mut self, "latencies", i, lat[i], false),
                (None, Some(sums)) => {
                    let s = sums[i];
                    if !s.is_finite() || s < 0.0 {
                        self.problem(format!("itls[{i}] sum to {}: a gap that is no finite non-negative number", f(s)));
                        None
                    } else {
                        ttft.map(|t| t + s)
                    }
                }
                (None, None) => None,
            };
            let (Some(ttft), Some(out)) = (ttft, out) else {
                complete = false;
                continue;
            };
            ttft_sum += ttft;
            out_sum += out;
            let Some(e2e) = e2e else {
                complete = false;
                continue;
            };
            if e2e < ttft {
                self.problem(format!("latencies[{i}] {} ms is below ttfts[{i}] {} ms", f(e2e), f(ttft)));
                complete = false;
                continue;
            }
            if let (true, Some(sums)) = (from_latencies, &req.gap_sums_ms) {
                let (gaps, span) = (sums[i], e2e - ttft);
                if !gaps.is_finite() || gaps < 0.0 {
                    spans_bad
                        .push(format!("itls[{i}] sum to {}: a gap that is no finite non-negative number", f(gaps)));
                } else if (gaps - span).abs() > SPAN_MS + SPAN_REL * gaps.max(span) {
                    spans_bad.push(format!(
                        "request {i}: its gaps (itls[{i}]) sum to {} ms, its latency minus its TTFT is {} - {} = {} ms",
                        f(gaps),
                        f(e2e),
                        f(ttft),
                        f(span)
                    ));
                } else {
                    spans_ok += 1;
                }
            }
            e2e_sum += e2e;
            if out > 1.0 {
                tpot_sum += (e2e - ttft) / (out - 1.0);
                inv_sum += 1.0 / (out - 1.0);
                tpot_n += 1;
            }
        }

        if !spans_bad.is_empty() {
            let more = spans_bad.len().saturating_sub(2);
            let more = if more > 0 { format!("; and {more} more") } else { String::new() };
            self.problem(format!(
                "{} of {} requests' chunk gaps do not sum to their latency minus their TTFT, as a request's latency is its TTFT plus its gaps (within 1 ms + 1%): {}{more}",
                spans_bad.len(),
                spans_ok + spans_bad.len(),
                spans_bad[..spans_bad.len().min(2)].join("; ")
            ));
        } else if spans_ok > 0 {
            self.agreed.push(format!("each request's gaps sum to its latency minus its TTFT ({spans_ok} requests)"));
        }

        // Against the file's own summary figures.
        let r = ok.len() as f64;
        if let Some(c) = run.number(totals::SUCCESSFUL_REQUESTS) {
            if c != r {
                self.problem(format!(
                    "{} requests succeeded in the arrays ({} entries, {} with an error), the file says {} completed",
                    ok.len(),
                    n,
                    n - ok.len(),
                    c
                ));
            } else {
                self.agreed.push(format!("{} successful requests", ok.len()));
            }
        }
        if let (Some(fl), Some(_)) = (run.number(totals::FAILED_REQUESTS), &req.failed) {
            let mine = (n - ok.len()) as f64;
            if fl != mine {
                self.problem(format!("{} requests have an error in the arrays, the file says {} failed", mine, fl));
            }
        }
        if complete {
            if let Some(total) = run.number(totals::OUTPUT_TOKENS) {
                if (out_sum - total).abs() > 0.5 {
                    self.problem(format!(
                        "output_lens of the successful requests sum to {}, the file's total output tokens is {}",
                        f(out_sum),
                        f(total)
                    ));
                } else {
                    self.agreed.push(format!("output_lens sum to {}", f(out_sum)));
                }
            }
            if let (Some(total), Some(_)) = (run.number(totals::INPUT_TOKENS), &req.input_len) {
                if (in_sum - total).abs() > 0.5 {
                    self.problem(format!(
                        "input_lens of the successful requests sum to {}, the file's total input tokens is {}",
                        f(in_sum),
                        f(total)
                    ));
                } else {
                    self.agreed.push(format!("input_lens sum to {}", f(in_sum)));
                }
            }
        }
        let mean = |key| run.stat_mean(key);
        if complete && r > 0.0 {
            let ttft = ttft_sum / r;
            if let Some(m) = mean(reported::TTFT_MS) {
                if !close(ttft, m) {
                    self.problem(format!("the mean of ttfts is {} ms, the file's mean TTFT {} ms", f(ttft), f(m)));
                } else {
                    self.agreed.push(format!("mean TTFT {} ms", f(ttft)));
                }
            }
            let e2e = e2e_sum / r;
            if let Some(m) = mean(reported::E2E_MS) {
                if from_latencies && !close(e2e, m) {
                    self.problem(format!("the mean of latencies is {} ms, the file's mean E2E {} ms", f(e2e), f(m)));
                } else if !from_latencies && e2e > m && !close(e2e, m) {
                    self.problem(format!(
                        "TTFT plus the sum of gaps averages {} ms, above the file's mean E2E {} ms, which ends later (at [DONE])",
                        f(e2e),
                        f(m)
                    ));
                } else {
                    self.agreed.push(format!("mean E2E {} ms", f(e2e)));
                }
            }
        }
        if complete && tpot_n > 0 {
            let tpot = tpot_sum / tpot_n as f64;
            if let Some(m) = mean(reported::TPOT_MS) {
                let source = if from_latencies { "latencies" } else { "TTFT + the sum of gaps" };
                let per = format!(
                    "the per-request TPOT from {source} averages {} ms, the file's mean TPOT is {} ms",
                    f(tpot),
                    f(m)
                );
                if from_latencies {
                    if close(tpot, m) {
                        self.agreed.push(format!("mean TPOT {} ms", f(tpot)));
                    } else {
                        self.problem(per);
                    }
                } else {
                    // The file's terms end at [DONE], after the last chunk: never below ours.
                    let slack = DONE_REL * m + DONE_MS * inv_sum / tpot_n as f64;
                    if tpot > m && !close(tpot, m) {
                        self.problem(format!("{per}: above it, though the file's E2E ends later"));
                    } else if m - tpot > slack + PRINTED {
                        self.problem(format!(
                            "{per}: {}% below it, more than [DONE] after the last chunk explains (1% + 5 ms per request)",
                            f((m - tpot) / m * 100.0)
                        ));
                    } else {
                        self.agreed.push(format!("mean TPOT {} ms (the file's {} ms ends at [DONE])", f(tpot), f(m)));
                    }
                }
            }
        }

        let failed_note = if n > ok.len() { format!(", {} failed", n - ok.len()) } else { String::new() };
        if self.problems.is_empty() {
            let agreed = if self.agreed.is_empty() {
                "the file states no summary figure to compare with".to_string()
            } else {
                format!("they agree with the file's summary: {}", self.agreed.join(", "))
            };
            (Status::Pass, format!("{n} requests{failed_note}: every entry finite, non-negative and ordered; {agreed}"))
        } else {
            let more = if self.unquoted > 0 { format!("; and {} more", self.unquoted) } else { String::new() };
            (
                Status::Fail,
                format!(
                    "the per-request arrays ({n} requests{failed_note}) contradict themselves or the file's summary: {}{more}",
                    self.problems.join("; ")
                ),
            )
        }
    }
}
