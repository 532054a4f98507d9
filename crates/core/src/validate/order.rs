//! What a printed statistic block (mean, percentiles, min, max) allows its sorted values to be:
//! a lower and an upper bound on each order statistic, and from them (with the mean) the
//! smallest and the largest value the block allows.
//!
//! Proof sketch (`n` values `s_0 <= ... <= s_(n-1)`, all `>= 0` and `<= cap`; every printed
//! figure within `e`, its rounding):
//! * a `q`-percentile `p` has at least `k_le` values `<= p` and `k_ge` values `>= p`: with numpy's
//!   linear interpolation `p = s_lo + f (s_(lo+1) - s_lo)`, `lo = floor(q (n - 1))`, so
//!   `k_le = lo + 1` and `k_ge = n - lo - 1` (`n - lo` when `f = 0`); whatever the method,
//!   at most `floor((1 - q) n) + 1` values lie above it (and as many below), so
//!   `k_le = ceil(q n) - 1`, `k_ge = ceil((1 - q) n) - 1`;
//! * with numpy's interpolation and `f > 0`, `s_(lo+1) = p + (1 / f - 1)(p - s_lo)` is at most
//!   that with `s_lo` at its lower bound, and `s_lo = (p - f s_(lo+1)) / (1 - f)` at least that
//!   with `s_(lo+1)` at its upper bound;
//! * the bounds are closed under the order (`s_j <= s_(j+1)`): an upper bound holds for every
//!   value below, a lower bound for every value above;
//! * the mean fixes the sum: `s_0 >= n m - sum_(j >= 1) ub_j` and
//!   `s_(n-1) <= n m - sum_(j < n-1) lb_j`, and a mean with `n m` outside
//!   `[sum lb_j, sum ub_j]` is one no sample allows.
//!
//! The bounds are laid out only at the positions a printed figure sets (a few per figure: the
//! ends, each percentile's ranks), not at all `n`: between two such positions no figure says
//! anything, so the upper bound there is the one at the next position and the lower bound the
//! one at the previous. A block costs O(figures log figures), whatever `n` (`tpot-bounds` asks
//! it for every request count from 1 to R, and a block may print 100k percentiles).

use crate::report::{Stat, StatKey};

/// Per-position bounds of the sorted values of a block, laid out at the positions `at`
/// (ascending, the first 0): `ub[i]` holds for every value from the position after `at[i - 1]`
/// to `at[i]`, `lb[i]` from `at[i]` to the position before `at[i + 1]`.
pub(super) struct Sorted {
    n: usize,
    at: Vec<usize>,
    lb: Vec<f64>,
    ub: Vec<f64>,
}

/// A percentile's ranks: how many values lie at or below it, at or above it, and (numpy's
/// interpolation) the position of the value below it and its fraction towards the next.
type Ranks = (usize, usize, Option<(usize, f64)>);

/// The largest count of values the bounds are worked out for.
pub(super) const MAX_N: usize = 1 << 20;

/// One block's bounds laid out for one count after another ([`Layout::at`]), its percentiles read
/// once and its buffers reused: `tpot-bounds` and `distribution-possible` ask a block for every
/// request count from 1 to R.
pub(super) struct Layout {
    percentiles: Vec<(f64, f64)>,
    min: Option<f64>,
    max: Option<f64>,
    numpy: bool,
    e: f64,
    cap: f64,
    ranks: Vec<Ranks>,
    sorted: Sorted,
}

impl Layout {
    /// A block's min, max and percentiles, each printed figure within `e`, its values within
    /// `0..cap`.
    pub(super) fn new(stat: &Stat, numpy: bool, e: f64, cap: f64) -> Layout {
        let percentiles = stat
            .iter()
            .filter_map(|(k, v)| match k {
                StatKey::P(p) if p > 0.0 && p < 100.0 => Some((p / 100.0, v)),
                _ => None,
            })
            .collect();
        Layout {
            percentiles,
            min: stat.get(StatKey::Min),
            max: stat.get(StatKey::Max),
            numpy,
            e,
            cap,
            ranks: Vec::new(),
            sorted: Sorted { n: 0, at: Vec::new(), lb: Vec::new(), ub: Vec::new() },
        }
    }

    /// The bounds on `n` sorted values; None for an empty sample or one too large.
    pub(super) fn at(&mut self, n: usize) -> Option<&Sorted> {
        if n == 0 || n > MAX_N {
            return None;
        }
        let (numpy, e) = (self.numpy, self.e);
        let last = n - 1;
        let nf = n as f64;
        // Each percentile's ranks: how many values lie at or below it, at or above it, and (numpy's
        // interpolation) the two values it lies between with its fraction.
        self.ranks.clear();
        self.ranks.extend(self.percentiles.iter().map(|&(q, _)| {
            let (k_le, k_ge) = if numpy {
                let rank = q * (nf - 1.0);
                let lo = rank.floor();
                let f = rank - lo;
                (lo + 1.0, if f > 0.0 { nf - lo - 1.0 } else { nf - lo })
            } else {
                ((q * nf).ceil() - 1.0, ((1.0 - q) * nf).ceil() - 1.0)
            };
            let between = numpy.then(|| {
                let rank = q * (nf - 1.0);
                (rank.floor() as usize, rank - rank.floor())
            });
            let between = between.filter(|&(lo, f)| n >= 2 && f > 0.0 && lo + 1 < n);
            (k_le.clamp(0.0, nf) as usize, k_ge.clamp(0.0, nf) as usize, between)
        }));
        let s = &mut self.sorted;
        s.n = n;
        s.at.clear();
        s.at.extend([0, last]);
        for &(k_le, k_ge, between) in &self.ranks {
            if k_le > 0 {
                s.at.push(k_le - 1);
            }
            if k_ge > 0 {
                s.at.push(n - k_ge);
            }
            if let Some((lo, _)) = between {
                s.at.extend([lo, lo + 1]);
            }
        }
        s.at.sort_unstable();
        s.at.dedup();
        s.lb.clear();
        s.lb.resize(s.at.len(), 0.0);
        s.ub.clear();
        s.ub.resize(s.at.len(), self.cap.max(0.0));
        // (Every position a figure sets is laid out: the search finds it.)
        let i = |s: &Sorted, j: usize| s.at.binary_search(&j).unwrap_or_else(|k| k.min(s.at.len() - 1));
        if let Some(min) = self.min {
            s.ub[0] = s.ub[0].min(min + e);
            s.lb[0] = s.lb[0].max(min - e);
        }
        if let Some(max) = self.max {
            let l = s.at.len() - 1;
            s.ub[l] = s.ub[l].min(max + e);
            s.lb[l] = s.lb[l].max(max - e);
        }
        for (&(_, p), &(k_le, k_ge, _)) in self.percentiles.iter().zip(&self.ranks) {
            if k_le > 0 {
                let x = i(s, k_le - 1);
                s.ub[x] = s.ub[x].min(p + e);
            }
            if k_ge > 0 {
                let x = i(s, n - k_ge);
                s.lb[x] = s.lb[x].max(p - e);
            }
        }
        s.close();
        if numpy && n >= 2 {
            for _ in 0..2 {
                for (&(_, p), &(_, _, between)) in self.percentiles.iter().zip(&self.ranks) {
                    let Some((lo, f)) = between else { continue };
                    let (x, y) = (i(s, lo), i(s, lo + 1));
                    let up = p + e + (1.0 / f - 1.0) * (p + e - s.lb[x]).max(0.0);
                    s.ub[y] = s.ub[y].min(up);
                    let down = (p - e - f * s.ub[y]) / (1.0 - f);
                    s.lb[x] = s.lb[x].max(down);
                }
                s.close();
            }
        }
        Some(&self.sorted)
    }
}

impl Layout {
    /// The least and the most mean any of `counts` allows, when none of them allows `m` (within
    /// `e`); None as soon as one does (then the mean is within that count's range, so it is
    /// neither below the least nor above the most). The counts are tried from the largest down:
    /// an honest run's own count is the first.
    pub(super) fn means_missing(
        &mut self,
        counts: std::ops::RangeInclusive<usize>,
        m: f64,
        e: f64,
    ) -> Option<(f64, f64)> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for n in counts.rev() {
            let Some((l, h)) = self.at(n).map(Sorted::means) else { continue };
            if l <= m + e && h >= m - e {
                return None;
            }
            (lo, hi) = (lo.min(l), hi.max(h));
        }
        Some((lo, hi))
    }
}

impl Sorted {
    /// The bounds the block's min, max and percentiles put on `n` sorted values within `0..cap`,
    /// each printed figure within `e`. None for an empty sample or one too large.
    pub(super) fn of(stat: &Stat, n: usize, numpy: bool, e: f64, cap: f64) -> Option<Sorted> {
        let mut layout = Layout::new(stat, numpy, e, cap);
        layout.at(n)?;
        Some(layout.sorted)
    }

    /// Each upper bound holds for the values below it, each lower bound for those above.
    fn close(&mut self) {
        for j in (0..self.ub.len().saturating_sub(1)).rev() {
            self.ub[j] = self.ub[j].min(self.ub[j + 1]);
        }
        for j in 1..self.lb.len() {
            self.lb[j] = self.lb[j].max(self.lb[j - 1]);
        }
    }

    /// The upper bound on the `j`-th smallest value.
    #[cfg(test)]
    fn ub_at(&self, j: usize) -> f64 {
        self.ub[self.at.partition_point(|&p| p < j)]
    }

    /// The lower bound on the `j`-th smallest value.
    #[cfg(test)]
    fn lb_at(&self, j: usize) -> f64 {
        self.lb[self.at.partition_point(|&p| p <= j) - 1]
    }

    /// The sums of the upper and of the lower bounds over all `n` positions.
    fn sums(&self) -> (f64, f64) {
        let (mut lb, mut ub) = (0.0, self.ub[0]);
        for i in 0..self.at.len() {
            let next = self.at.get(i + 1).copied().unwrap_or(self.n);
            lb += self.lb[i] * (next - self.at[i]) as f64;
            if i > 0 {
                ub += self.ub[i] * (self.at[i] - self.at[i - 1]) as f64;
            }
        }
        (lb, ub)
    }

    /// The range of means the bounds allow, `[sum lb / n, sum ub / n]`.
    pub(super) fn means(&self) -> (f64, f64) {
        let n = self.n as f64;
        let (lb, ub) = self.sums();
        (lb / n, ub / n)
    }

    /// The smallest value a block with mean `m` (within `e`) allows.
    pub(super) fn smallest(&self, m: f64, e: f64) -> f64 {
        let rest = self.sums().1 - self.ub[0];
        (self.n as f64 * (m - e) - rest).max(self.lb[0])
    }

    /// The largest value a block with mean `m` (within `e`) allows.
    pub(super) fn largest(&self, m: f64, e: f64) -> f64 {
        let l = self.at.len() - 1;
        let rest = self.sums().0 - self.lb[l];
        (self.n as f64 * (m + e) - rest).min(self.ub[l])
    }
}

/// The smallest value a block of at most `n` values (any count from `lo_n` to `n`: a tool's
/// TPOT rows leave out one-token requests) with mean `m` allows; None when no count is laid out.
pub(super) fn smallest_of(
    stat: &Stat,
    counts: std::ops::RangeInclusive<usize>,
    numpy: bool,
    e: f64,
    cap: f64,
) -> Option<f64> {
    let m = stat.mean()?;
    let mut layout = Layout::new(stat, numpy, e, cap);
    // No count allows less than the lowest lower bound there is (0, or the printed min less its
    // rounding): once a count reaches it, the others cannot go below. Tried from the largest
    // count down, where an honest run's top values are bounded by nothing but `cap`.
    let least = layout.min.map_or(0.0, |min| (min - e).max(0.0));
    let mut smallest: Option<f64> = None;
    for n in counts.rev() {
        let Some(s) = layout.at(n).map(|s| s.smallest(m, e)) else { continue };
        let so_far = smallest.map_or(s, |v| v.min(s));
        smallest = Some(so_far);
        if so_far <= least {
            break;
        }
    }
    smallest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::percentile;
    use proptest::prelude::*;

    fn block(v: &[f64], with_minmax: bool, ps: &[f64]) -> Stat {
        let mut st = Stat::default();
        st.set(StatKey::Mean, v.iter().sum::<f64>() / v.len() as f64);
        for p in ps {
            st.set(StatKey::P(*p), percentile(v, *p));
        }
        if with_minmax {
            st.set(StatKey::Min, v[0]);
            st.set(StatKey::Max, v[v.len() - 1]);
        }
        st
    }

    #[test]
    fn the_rows_of_a_steady_run_bound_every_request() {
        // vLLM's 16 requests at 12.80 ms per token: mean 12.80, median 12.80, P99 12.81.
        let mut st = Stat::default();
        st.set(StatKey::Mean, 12.80);
        st.set(StatKey::P(50.0), 12.80);
        st.set(StatKey::P(99.0), 12.81);
        let s = Sorted::of(&st, 16, true, 0.005, 1e6).unwrap();
        let lo = s.smallest(12.80, 0.005);
        assert!(lo > 12.5 && lo <= 12.80, "{lo}");
        let hi = s.largest(12.80, 0.005);
        assert!((12.81..13.0).contains(&hi), "{hi}");
        // Any method: weaker, still far above a tenth of it.
        let any = Sorted::of(&st, 16, false, 0.005, 12.81 / 0.85).unwrap();
        assert!(any.smallest(12.80, 0.005) > 5.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

        /// Every value of a real sample lies within the bounds its block allows, and its mean
        /// within the range of means, for numpy's percentiles and for any method's bounds.
        #[test]
        fn the_bounds_hold_for_any_sample(
            mut v in prop::collection::vec(prop_oneof![0.0f64..50.0, (0.0f64..9.0).prop_map(f64::exp), Just(12.8)], 1..150),
            minmax in any::<bool>(),
            which in 0usize..4,
        ) {
            v.sort_by(f64::total_cmp);
            let ps: &[f64] = [&[50.0, 99.0][..], &[99.0], &[25.0, 50.0, 75.0, 90.0, 95.0, 99.0], &[1.0, 5.0, 10.0, 50.0]][which];
            let st = block(&v, minmax, ps);
            let m = st.mean().unwrap();
            let cap = v[v.len() - 1] * 1.5 + 1.0;
            let e = 1e-9 * (1.0 + cap);
            for numpy in [true, false] {
                let s = Sorted::of(&st, v.len(), numpy, e, cap).unwrap();
                for (j, x) in v.iter().enumerate() {
                    prop_assert!(s.lb_at(j) <= x + 1e-6 && *x <= s.ub_at(j) + 1e-6, "{j}: {} <= {x} <= {}", s.lb_at(j), s.ub_at(j));
                }
                // The sums over steps are the sums position by position.
                let (lo, hi) = s.means();
                let nf = v.len() as f64;
                let by_position = |f: &dyn Fn(usize) -> f64| (0..v.len()).map(f).sum::<f64>() / nf;
                prop_assert!((lo - by_position(&|j| s.lb_at(j))).abs() <= 1e-9 * (1.0 + lo.abs()));
                prop_assert!((hi - by_position(&|j| s.ub_at(j))).abs() <= 1e-9 * (1.0 + hi.abs()));
                prop_assert!(s.smallest(m, e) <= v[0] + 1e-6);
                prop_assert!(s.largest(m, e) >= v[v.len() - 1] - 1e-6);
                let (lo, hi) = s.means();
                prop_assert!(lo <= m + 1e-6 && m <= hi + 1e-6);
            }
        }
    }
}
