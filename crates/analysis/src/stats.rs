//! The two tests `regress` decides significance with (docs/store.md, "The verdict"): Welch's
//! t-test (unequal variances) and the Mann-Whitney U rank test, each a two-sided p-value.
//! Self-contained: the t distribution through the regularized incomplete beta function.

/// Mean and sample variance (n - 1); `None` for fewer than one value.
pub fn mean_var(v: &[f64]) -> Option<(f64, f64)> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 { v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    Some((mean, var))
}

/// Welch's t-test: the two-sided p-value that `a` and `b` have the same mean. `None` below two
/// values a side. Two samples without any spread are different (p = 0) when their means differ,
/// the same (p = 1) when not.
pub fn welch(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a)?, mean_var(b)?);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 <= 0.0 || !se2.is_finite() {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    Some(t_two_sided(t, df))
}

/// Two-sided p-value of Student's t with `df` degrees of freedom.
pub fn t_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    incomplete_beta(x, df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The Mann-Whitney U test: the two-sided p-value that `a` and `b` come from one distribution.
/// Exact (by counting arrangements) without ties for up to 40 values in all, else the normal
/// approximation with the tie and continuity corrections. `None` when a side is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let mut all: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Mid-ranks, and the tie correction's sum of t^3 - t.
    let mut r1 = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        r1 += all[i..=j].iter().filter(|x| x.1).count() as f64 * rank;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let u = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let (f1, f2) = (n1 as f64, n2 as f64);
    if ties == 0.0 && n1 + n2 <= 40 {
        let counts = u_counts(n1, n2);
        let total: f64 = counts.iter().sum();
        let k = u.round() as usize;
        let lower: f64 = counts[..=k].iter().sum::<f64>() / total;
        let upper: f64 = counts[k..].iter().sum::<f64>() / total;
        return Some((2.0 * lower.min(upper)).min(1.0));
    }
    let n = f1 + f2;
    let mu = f1 * f2 / 2.0;
    let sigma2 = f1 * f2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if sigma2 <= 0.0 {
        return Some(1.0);
    }
    let z = ((u - mu).abs() - 0.5).max(0.0) / sigma2.sqrt();
    Some((2.0 * normal_upper(z)).min(1.0))
}

/// How many arrangements of `n1` and `n2` values give each U (0..=n1*n2), without ties.
fn u_counts(n1: usize, n2: usize) -> Vec<f64> {
    // f[i][j][u]: arrangements of i and j values with U = u; built up one value at a time.
    let max = n1 * n2;
    let mut prev: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; n2 + 1];
    for row in prev.iter_mut() {
        row[0] = 1.0; // i = 0: one arrangement, U = 0.
    }
    for i in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; n2 + 1];
        cur[0][0] = 1.0;
        for j in 1..=n2 {
            for u in 0..=i * j {
                // The largest value is of the first sample (it beats all j others) or not.
                let from_a = if u >= j { prev[j][u - j] } else { 0.0 };
                cur[j][u] = from_a + cur[j - 1][u];
            }
        }
        prev = cur;
    }
    prev.swap_remove(n2)
}

/// P(Z > z) of the standard normal.
fn normal_upper(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, ~1.2e-7 relative).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// ln Γ(x) (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn the_t_distribution_matches_its_tables() {
        // Two-sided critical values: t(0.975, 10) = 2.228, t(0.975, 2) = 4.303, t(0.995, 30) = 2.750.
        assert!(close(t_two_sided(2.228_138_85, 10.0), 0.05, 1e-6), "{}", t_two_sided(2.228_138_85, 10.0));
        assert!(close(t_two_sided(4.302_652_73, 2.0), 0.05, 1e-6));
        assert!(close(t_two_sided(2.749_995_65, 30.0), 0.01, 1e-6));
        assert!(close(t_two_sided(0.0, 5.0), 1.0, 1e-12));
    }

    #[test]
    fn welch_tells_a_shift_from_noise() {
        let a = [20.0, 20.4, 19.8, 20.1, 19.9];
        let b = [22.0, 22.3, 21.8, 22.1, 21.9];
        assert!(welch(&a, &b).unwrap() < 1e-6);
        let c = [20.2, 19.7, 20.3, 20.0, 19.8];
        assert!(welch(&a, &c).unwrap() > 0.5);
        assert_eq!(welch(&[1.0, 1.0], &[1.0, 1.0]), Some(1.0));
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]), Some(0.0));
        assert_eq!(welch(&[1.0], &[2.0, 2.0]), None);
    }

    #[test]
    fn mann_whitney_exact_and_approximate() {
        // Complete separation of 4 and 4: 2 of the 70 arrangements are as extreme.
        let p = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert!(close(p, 2.0 / 70.0, 1e-12), "{p}");
        // 3 and 3: never below 0.1.
        assert!(close(mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap(), 0.1, 1e-12));
        let p = mann_whitney(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!(p > 0.5, "{p}");
        // Ties: the normal approximation, still telling a shift.
        let a: Vec<f64> = (0..30).map(|i| (i % 5) as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| (i % 5 + 3) as f64).collect();
        assert!(mann_whitney(&a, &b).unwrap() < 1e-4);
        assert!(close(erfc(0.0), 1.0, 1e-7) && close(normal_upper(1.959_963_985), 0.025, 1e-6));
    }
}
