//! `bench-normalize plot`: a sweep's frontier (output throughput against the per-user decode
//! rate) and TTFT against load, drawn as one SVG file.
//!
//! Two panels side by side, one series per configuration ([`crate::sweep::Series`]). Readable
//! without colour: each series has its own marker shape and line dash pattern, the legend shows
//! both, and each point is labelled with its load; a filled marker is a Pareto-optimal point, a
//! hollow one is dominated. Axes start at zero and name their units.
//!
//! The load axis of the TTFT panel is the client's concurrency when every point states one and no
//! series has two points at one concurrency; else the configured request rate when every point
//! states a finite one; else the mean number of requests in flight measured by Little's law
//! (requests x mean E2E / duration), which every point with those totals has.
//!
//! The drawing is deterministic: the same runs give the same bytes.

use std::io::Write;
use std::path::Path;

use plotters::coord::Shift;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use crate::sweep::{Point, Sweep, fmt_num};
use bench_normalize_core::error::{Error, printable};

const WIDTH: u32 = 1280;
/// The two panels; the legend and a note go below them, a line per series.
const PLOT_HEIGHT: u32 = 520;
const LEGEND_LINE: u32 = 20;

// COLOURS, DASHES, `svg_text`, `Marker`, `Chart`, `draw_line`: the drawing the store's history
// plot (crates/store) shares with this one; public for it, hidden: not the library's API.

/// Colours that stay apart in greyscale too (dark to light), from Paul Tol's bright scheme.
#[doc(hidden)]
pub const COLOURS: [RGBColor; 6] = [
    RGBColor(0, 0, 0),
    RGBColor(0x44, 0x77, 0xAA),
    RGBColor(0xEE, 0x66, 0x77),
    RGBColor(0x22, 0x88, 0x33),
    RGBColor(0xAA, 0x33, 0x77),
    RGBColor(0xCC, 0xBB, 0x44),
];

/// Dash patterns (dash, gap) in pixels; `None` is a solid line.
#[doc(hidden)]
pub const DASHES: [Option<(u32, u32)>; 4] = [None, Some((12, 6)), Some((2, 4)), Some((6, 3))];

/// What the TTFT panel puts on its horizontal axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadAxis {
    Concurrency,
    RequestRate,
    MeanInFlight,
}

impl LoadAxis {
    pub fn description(self) -> &'static str {
        match self {
            LoadAxis::Concurrency => "max concurrency (requests)",
            LoadAxis::RequestRate => "request rate (req/s)",
            LoadAxis::MeanInFlight => "mean requests in flight (measured)",
        }
    }

    pub fn of(self, p: &Point) -> Option<f64> {
        match self {
            LoadAxis::Concurrency => p.max_concurrency,
            LoadAxis::RequestRate => p.request_rate,
            LoadAxis::MeanInFlight => p.mean_in_flight,
        }
    }
}

/// The load axis the points allow (see the module's documentation).
pub fn load_axis(sweep: &Sweep) -> LoadAxis {
    let points = || sweep.series.iter().flat_map(|s| s.points.iter());
    let distinct = |f: fn(&Point) -> Option<f64>| {
        sweep.series.iter().all(|s| {
            let v: Vec<f64> = s.points.iter().filter_map(f).collect();
            v.len() == s.points.len() && v.windows(2).all(|w| w[0] != w[1])
        })
    };
    // Points are sorted by concurrency, then rate: equal neighbours are the only repeats.
    if points().all(|p| p.max_concurrency.is_some()) && distinct(|p| p.max_concurrency) {
        LoadAxis::Concurrency
    } else if points().all(|p| p.request_rate.is_some()) {
        LoadAxis::RequestRate
    } else {
        LoadAxis::MeanInFlight
    }
}

/// A point's load, short, beside its marker.
fn short_load(p: &Point) -> String {
    match (p.max_concurrency, p.request_rate) {
        (Some(c), Some(r)) => format!("c{} r{}", fmt_num(c), fmt_num(r)),
        (Some(c), None) => format!("c{}", fmt_num(c)),
        (None, Some(r)) => format!("r{}", fmt_num(r)),
        (None, None) => p.strategy.clone().unwrap_or_default(),
    }
}

/// Text from the inputs as the SVG carries it: no control characters (XML 1.0 forbids most),
/// and not too long for the legend.
#[doc(hidden)]
pub fn svg_text(s: &str) -> String {
    let s = printable(s);
    let mut t: String = s.chars().take(90).collect();
    if s.chars().count() > 90 {
        t.push('…');
    }
    t
}

/// The marker of series `i`: a circle, triangle, square, diamond or inverted triangle, filled
/// for a Pareto-optimal point; in the legend (`line`), with a stroke of the series' line under it.
#[doc(hidden)]
pub struct Marker<C> {
    pub at: C,
    pub series: usize,
    pub colour: RGBColor,
    pub filled: bool,
    pub line: Option<Option<(u32, u32)>>,
}

impl<'a, C: 'a> PointCollection<'a, C> for &'a Marker<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = points.next() else { return Ok(()) };
        let stroke = self.colour.stroke_width(2);
        let (x, y) = match self.line {
            None => (x, y),
            Some(dash) => {
                // The legend: 30 px of the series' line, its marker in the middle.
                let (d, g) = dash.map_or((30, 0), |(d, g)| (d as i32, g as i32));
                let mut from = x;
                while from < x + 30 {
                    backend.draw_line((from, y), ((from + d).min(x + 30), y), &stroke)?;
                    from += d + g;
                }
                (x + 15, y)
            }
        };
        let shape: Vec<(i32, i32)> = match self.series % 5 {
            0 => return backend.draw_circle((x, y), 5, &stroke, self.filled),
            1 => vec![(0, -7), (6, 4), (-6, 4)],
            2 => vec![(-5, -5), (5, -5), (5, 5), (-5, 5)],
            3 => vec![(0, -7), (7, 0), (0, 7), (-7, 0)],
            _ => vec![(0, 7), (6, -4), (-6, -4)],
        };
        let at = shape.iter().map(|(dx, dy)| (x + dx, y + dy));
        if self.filled {
            backend.fill_polygon(at, &self.colour.filled())
        } else {
            backend.draw_path(at.clone().chain(at.take(1)), &stroke)
        }
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The upper end of an axis: a little above the largest value, never zero.
fn upper(values: impl Iterator<Item = f64>) -> f64 {
    let m = values.filter(|v| v.is_finite()).fold(0.0_f64, f64::max);
    if m > 0.0 { m * 1.12 } else { 1.0 }
}

fn tick(v: &f64) -> String {
    if v.abs() >= 100.0 { format!("{v:.0}") } else { fmt_num(*v) }
}

#[doc(hidden)]
pub type Plotted = Result<(), Box<dyn std::error::Error + 'static>>;

/// A chart of two `f64` axes, as both plots draw.
#[doc(hidden)]
pub type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Series `i`'s line through `points`: its colour and its dash pattern (the sweep's and the
/// history's plots alike).
#[doc(hidden)]
pub fn draw_line(chart: &mut Chart, i: usize, points: Vec<(f64, f64)>) -> Plotted {
    let style = COLOURS[i % COLOURS.len()].stroke_width(2);
    match DASHES[i % DASHES.len()] {
        None => chart.draw_series(LineSeries::new(points, style))?,
        Some((d, g)) => chart.draw_series(DashedLineSeries::new(points, d, g, style))?,
    };
    Ok(())
}

/// One panel: `xy` gives a point's coordinates (none: the point is not drawn here).
fn panel(
    area: &Area,
    sweep: &Sweep,
    caption: &str,
    x_desc: &str,
    y_desc: &str,
    xy: &dyn Fn(&Point) -> Option<(f64, f64)>,
) -> Plotted {
    let all: Vec<(f64, f64)> = sweep.series.iter().flat_map(|s| s.points.iter().filter_map(xy)).collect();
    let x_max = upper(all.iter().map(|p| p.0));
    let y_max = upper(all.iter().map(|p| p.1));
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .light_line_style(RGBColor(235, 235, 235))
        .axis_desc_style(("sans-serif", 15))
        .draw()?;
    for (i, s) in sweep.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        draw_line(&mut chart, i, s.points.iter().filter_map(xy).collect())?;
        chart.draw_series(
            s.points
                .iter()
                .filter_map(|p| xy(p).map(|c| Marker { at: c, series: i, colour, filled: p.pareto, line: None })),
        )?;
        chart.draw_series(s.points.iter().filter_map(|p| {
            xy(p).map(|c| {
                EmptyElement::at(c) + Text::new(svg_text(&short_load(p)), (8, -16), ("sans-serif", 12).into_font())
            })
        }))?;
    }
    Ok(())
}

/// The legend, under both panels: each series' line and marker, and its label; then what a
/// filled marker means.
fn legend(area: &Area, sweep: &Sweep) -> Plotted {
    let font = ("sans-serif", 13).into_font();
    let mut y = LEGEND_LINE as i32 / 2 + 4;
    for (i, s) in sweep.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        area.draw(&Marker { at: (76, y), series: i, colour, filled: true, line: Some(DASHES[i % DASHES.len()]) })?;
        area.draw(&Text::new(svg_text(&s.label), (118, y - 7), font.clone()))?;
        y += LEGEND_LINE as i32;
    }
    for line in [
        "Filled marker: Pareto-optimal in its series (no other point has at least its throughput and its per-user \
         rate, one strictly more); hollow: dominated.",
        "Labels: c = concurrency, r = request rate (req/s). Per-user decode rate = 1000 / derived TPOT, not \
         throughput / concurrency.",
    ] {
        area.draw(&Text::new(line, (76, y - 4), ("sans-serif", 12).into_font()))?;
        y += LEGEND_LINE as i32 - 4;
    }
    Ok(())
}

/// The SVG document for a sweep; an error when the sweep has no point (nothing to draw).
pub fn render(sweep: &Sweep) -> Result<String, String> {
    if !sweep.has_points() {
        return Err("no sweep point to plot".into());
    }
    let axis = load_axis(sweep);
    let mut svg = String::new();
    {
        let height = PLOT_HEIGHT + LEGEND_LINE * (sweep.series.len() as u32 + 3);
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let draw = || -> Plotted {
            root.fill(&WHITE)?;
            let (top, bottom) = root.split_vertically(PLOT_HEIGHT);
            legend(&bottom, sweep)?;
            let (left, right) = top.split_horizontally(WIDTH / 2);
            panel(
                &left,
                sweep,
                "Output throughput vs per-user decode rate",
                "per-user decode rate, 1000 / TPOT (tok/s)",
                "output throughput (tok/s)",
                &|p| Some((p.per_user_decode_tok_per_s, p.output_tok_per_s)),
            )?;
            panel(&right, sweep, "TTFT vs load", axis.description(), "TTFT, mean (ms)", &|p| {
                Some((axis.of(p)?, p.ttft_ms_mean?))
            })?;
            root.present()?;
            Ok(())
        };
        draw().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Write `bytes` to `path` whole or not at all: into a temporary file in the same directory,
/// then renamed over `path`. `-` is standard output. A path that is something other than a
/// regular file or nothing (a character device such as `/dev/null`, a FIFO, a socket) is never
/// renamed over: it is written through, as a shell's `>` would. (The command's `plot -o` first
/// holds the path to its write guard: never an input, a FIFO without a reader not waited for.)
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let output = path.display().to_string();
    let write_error = |source| Error::Write { output: output.clone(), source };
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return match out.write_all(bytes).and_then(|_| out.flush()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(write_error(e)),
            _ => Ok(()),
        };
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::File::options().write(true).open(path).map_err(write_error)?;
        return f.write_all(bytes).and_then(|_| f.flush()).map_err(write_error);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".bench-normalize-plot")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(write_error)?;
    tmp.write_all(bytes).and_then(|_| tmp.as_file().sync_all()).map_err(write_error)?;
    // The temporary file is private (0600); the plot gets the mode a new file gets (0666 less
    // the umask), or the mode of the file it replaces.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = match std::fs::metadata(path) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(_) => {
                // SAFETY: umask(2) cannot fail; it is set back at once (this process has one thread here).
                let mask = unsafe {
                    let m = libc::umask(0o022);
                    libc::umask(m);
                    m
                };
                0o666 & !(mask as u32)
            }
        };
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode)).map_err(write_error)?;
    }
    tmp.persist(path).map_err(|e| write_error(e.error))?;
    Ok(())
}
