//! Numbers as the report and its messages write them: derived figures rounded to six
//! significant digits ([`round`]), and a figure shown in a message or formula as the tools print
//! it ([`show`]). One module, used by every stage that writes a number.

/// How far [`round`] moves a figure, relative: half a unit in the sixth significant digit is at
/// most `5e-6 x |x|`. A rule that compares a rounded derived figure with a tight bound adds this
/// to its slack, or an exact figure is rejected for the digits its own rounding dropped.
pub const ROUNDED_REL: f64 = 5e-6;

/// Round to 6 significant digits: derived figures carry no more precision than their inputs.
pub fn round(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    round6(x).unwrap_or_else(|| format!("{x:.5e}").parse().unwrap_or(x))
}

/// The powers of ten that an f64 holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// `format!("{x:.5e}").parse()` without the exact float formatter and the parser (round() runs
/// for every derived figure): `|x|` is scaled by an exact power of ten so that its six significant
/// digits are whole, `y` (one rounding: within half an ulp), and rounded to the integer `n` in
/// binary, which is the exact answer unless `y` lies within a few ulps of a half. `n / 10^k` (or
/// `n * 10^-k`) of two exact operands is then correctly rounded: the f64 nearest the decimal, as
/// the parser gives. None (the formatter decides) near a half, or out of the powers' range.
fn round6(x: f64) -> Option<f64> {
    let a = x.abs();
    let mut e = a.log10().floor() as i32;
    for _ in 0..2 {
        let k = 5 - e;
        let y = if k >= 0 { a * *POW10.get(k as usize)? } else { a / *POW10.get(k.unsigned_abs() as usize)? };
        // log10 may miss by one next to a power of ten: six whole digits, or try the neighbour.
        if y < 100_000.0 {
            e -= 1;
            continue;
        }
        if y >= 1_000_000.0 {
            e += 1;
            continue;
        }
        let n = round_clear_of_half(y)?;
        let r = if k >= 0 { n / POW10[k as usize] } else { n * POW10[k.unsigned_abs() as usize] };
        return Some(r.copysign(x));
    }
    None
}

/// A figure in a message or formula: as the tools print it (2 decimals, trailing zeros dropped),
/// more significant digits below 1. ([`Shown`] writes it.)
pub fn show(x: f64) -> String {
    Shown(x).to_string()
}

/// [`show`]'s text by the exact float formatter, for what [`hundredths`] leaves to it.
fn formatted(x: f64) -> String {
    let mut s = if x.abs() >= 1.0 { format!("{x:.2}") } else { format!("{:.4}", round(x)) };
    if s.contains('.') {
        // Cut in place: no second string.
        let keep = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(keep);
    }
    s
}

/// `|x|` in whole hundredths, rounded as `format!("{x:.2}")` rounds, for `|x| >= 1`, without the
/// exact float formatter (every figure of every check message is shown): the hundredths are
/// rounded in binary, which is the exact answer unless the value lies within a few ulps of a half
/// hundredth. Then, or for values too large for an integer of hundredths, None: the formatter
/// decides ([`formatted`]).
fn hundredths(x: f64) -> Option<u64> {
    let y = x.abs() * 100.0;
    if !(100.0..4.0e15).contains(&y) {
        return None;
    }
    Some(round_clear_of_half(y)? as u64)
}

/// [`show`] as a `Display`: the text written into the message that shows it, without a `String`
/// of its own (every check message of every run shows a few figures).
#[derive(Debug, Clone, Copy)]
pub struct Shown(pub f64);

/// [`Shown`] of a figure: `format!("{}", shown(x))` is `show(x)`.
pub fn shown(x: f64) -> Shown {
    Shown(x)
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let x = self.0;
        match hundredths(x).filter(|_| f.width().is_none() && f.precision().is_none()) {
            Some(h) => {
                let mut digits = itoa::Buffer::new();
                let (whole, cents) = {
                    let d = digits.format(h);
                    d.split_at(d.len() - 2)
                };
                // Trailing zeros dropped, and the point with them.
                let cents = cents.trim_end_matches('0');
                if x < 0.0 {
                    f.write_str("-")?;
                }
                f.write_str(whole)?;
                if !cents.is_empty() {
                    f.write_str(".")?;
                    f.write_str(cents)?;
                }
                Ok(())
            }
            None => f.pad(&formatted(x)),
        }
    }
}

/// `y >= 1` (a value scaled by a power of ten, one rounding away from the exact product) rounded
/// to an integer in binary: the exact decimal answer unless `y` lies within a few ulps of a half,
/// where the rounding of the scaling could have decided it; then None (the exact formatter
/// decides). Shared by [`hundredths`] and [`round6`].
fn round_clear_of_half(y: f64) -> Option<f64> {
    let floor = y.floor();
    // Exact: floor >= y / 2 (Sterbenz).
    let frac = y - floor;
    let ulp = f64::from_bits(y.to_bits() + 1) - y;
    if (frac - 0.5).abs() <= 4.0 * ulp {
        return None;
    }
    Some(if frac > 0.5 { floor + 1.0 } else { floor })
}

/// `s.parse::<f64>()`, the same bits, fast for what the tools print: a sign, then plain decimal
/// digits with at most one point (`parse_plain`); anything else goes to the standard parser.
/// Every printed figure is read through here, most of them more than once.
pub fn parse(s: &str) -> Option<f64> {
    let (sign, digits) = match s.as_bytes() {
        [b'-', rest @ ..] => (-1.0, rest),
        [b'+', rest @ ..] => (1.0, rest),
        all => (1.0, all),
    };
    parse_plain(digits).map(|v| sign * v).or_else(|| s.parse().ok())
}

/// Plain decimal digits with at most one point (`140.14`, `16`, `.5`), by Clinger's fast path:
/// with at most 15 digits, the digits as an integer (below 2^53, exact) divided by an exact power
/// of ten is one correctly rounded operation, which is the standard parser's answer. `None` for
/// anything else (an exponent, more digits).
fn parse_plain(s: &[u8]) -> Option<f64> {
    let (mut m, mut digits, mut decimals) = (0u64, 0usize, None::<usize>);
    for &c in s {
        match c {
            b'0'..=b'9' => {
                digits += 1;
                if digits > 15 {
                    return None;
                }
                m = m * 10 + u64::from(c - b'0');
                if let Some(d) = &mut decimals {
                    *d += 1;
                }
            }
            b'.' if decimals.is_none() => decimals = Some(0),
            _ => return None,
        }
    }
    (digits > 0).then(|| m as f64 / POW10[decimals.unwrap_or(0)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` values with random mantissas (xorshift, fixed seed) over `decades` powers of ten from
    /// `10^lowest`.
    fn spread(n: usize, lowest: i32, decades: u64) -> Vec<f64> {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let mantissa = (s >> 11) as f64 / (1u64 << 53) as f64;
                (1.0 + mantissa) * 10f64.powi((s % decades) as i32 + lowest)
            })
            .collect()
    }

    #[test]
    fn shown_is_the_formatter() {
        let mut values = vec![
            1.0,
            -1.0,
            1.005,
            2.675,
            1.125,
            1.135,
            99.995,
            100.0,
            12.8025,
            6682.24,
            140.14,
            1e13 + 0.125,
            3.9e13,
            -2.5,
        ];
        // Near every half hundredth of a range, and a spread of magnitudes (xorshift, fixed seed).
        for h in 100..20_000u64 {
            let t = (h as f64 + 0.5) / 100.0;
            values.extend([t, f64::from_bits(t.to_bits() + 1), f64::from_bits(t.to_bits() - 1), t + 1e-9, t - 1e-9]);
        }
        values.extend(spread(200_000, 0, 14));
        values.extend([0.0, -0.0, 0.0128, -0.5, 1e20, 1e-9, f64::NAN, f64::INFINITY]);
        values.extend(spread(50_000, -3, 12));
        let mut fast = 0;
        for x in values {
            fast += usize::from(hundredths(x).is_some());
            assert_eq!(Shown(x).to_string(), formatted(x), "{x:e}");
            assert_eq!(format!("{:>12}", Shown(x)), format!("{:>12}", formatted(x)), "{x:e}");
        }
        assert!(fast > 200_000, "the fast path answers most values ({fast})");
    }

    #[test]
    fn round6_is_the_formatter_and_parser() {
        let slow = |x: f64| format!("{x:.5e}").parse::<f64>().unwrap();
        let mut values = vec![
            1.0,
            -1.0,
            0.1,
            0.3,
            1e-17,
            9.99999e27,
            123456.5,
            1234565.0,
            0.1234565,
            999999.5,
            9999995.0,
            99999.95,
            12.803131115459882,
        ];
        // Next to every power of ten and every half of the sixth digit of a range of mantissas.
        for p in -17..=27 {
            let t = 10f64.powi(p);
            values.extend([
                t,
                f64::from_bits(t.to_bits() + 1),
                f64::from_bits(t.to_bits() - 1),
                t * (1.0 - 1e-16),
                t * (1.0 + 1e-16),
            ]);
            for m in [100_000.5, 123_456.5, 999_999.5, 999_999.4999999] {
                let t = m * 10f64.powi(p - 5);
                values.extend([t, f64::from_bits(t.to_bits() + 1), f64::from_bits(t.to_bits() - 1)]);
            }
        }
        values.extend(spread(300_000, -20, 50));
        let mut fast = 0;
        for x in values.iter().flat_map(|x| [*x, -*x]) {
            if let Some(r) = round6(x) {
                fast += 1;
                assert_eq!(r.to_bits(), slow(x).to_bits(), "{x:e}");
            }
            assert_eq!(round(x).to_bits(), slow(x).to_bits(), "{x:e}");
        }
        assert!(fast > values.len(), "the fast path answers most values ({fast} of {})", 2 * values.len());
    }

    #[test]
    fn rounding_keeps_six_significant_digits() {
        assert_eq!(round(12.803131115459882), 12.8031);
        assert_eq!(round(78.10588), 78.1059);
        assert_eq!(round(0.000123456789), 0.000123457);
        assert_eq!(round(0.0), 0.0);
    }

    #[test]
    fn parse_plain_is_the_parser() {
        let mut texts: Vec<String> = [
            "0",
            "16",
            "140.14",
            ".5",
            "3.",
            "007",
            "0.000",
            "123456789012345",
            "1234567890123456",
            "9.999999999999999",
            "0.1",
            "0.3",
            "2.675",
            "1.005",
            "99999999999999.9",
            "",
            ".",
            "1.2.3",
            "-1",
            "+1",
            "1e3",
            "1,000",
            " 1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // A spread of magnitudes written with 0 to 15 decimals (xorshift, fixed seed).
        for (i, x) in spread(100_000, -6, 14).into_iter().enumerate() {
            texts.push(format!("{x:.*}", i % 16));
        }
        let mut fast = 0;
        for t in &texts {
            match parse_plain(t.as_bytes()) {
                Some(v) => {
                    fast += 1;
                    assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{t}");
                }
                None => assert!(
                    t.parse::<f64>().is_err()
                        || t.bytes().filter(u8::is_ascii_digit).count() > 15
                        || !t.bytes().all(|b| b.is_ascii_digit() || b == b'.'),
                    "{t} is plain and short but was not read"
                ),
            }
        }
        assert!(fast > texts.len() / 2, "{fast} of {}", texts.len());
        // With a sign, and whatever the fast path leaves: the standard parser's answer.
        for t in texts.iter().flat_map(|t| [t.clone(), format!("-{t}"), format!("+{t}"), format!("--{t}")]) {
            assert_eq!(parse(&t).map(f64::to_bits), t.parse::<f64>().ok().map(f64::to_bits), "{t}");
        }
    }
}
