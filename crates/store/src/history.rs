//! `bench-normalize plot --history FIGURE`: one figure of the stored runs over time or over a
//! label's values (commits), a series per tool and workload, with the baseline `regress` would
//! judge the latest run against drawn as a band (docs/store.md, "History").
//!
//! Readable without colour, as the sweep's plot: each series has its own marker shape and dash
//! pattern, named in the legend; the band is grey and its mean a dotted line; the newest point of
//! each series is drawn larger. The same store gives the same bytes.

use plotters::prelude::*;

use super::{Filter, Labels, Store, StoreError, Stored, WorkloadKey};
use bench_normalize_analysis::compare::Fig;
use bench_normalize_analysis::plot::{COLOURS, DASHES, Marker, draw_line, svg_text};
use bench_normalize_core::number::show;

/// What the horizontal axis orders points by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum By {
    /// The time each run was added: one position per run.
    Time,
    /// The value of a label (`commit`): one position per value, in the order first added.
    Label(String),
}

/// What to draw.
#[derive(Debug, Clone)]
pub struct Settings {
    pub figure: Fig,
    pub by: By,
    /// Only runs carrying every one of these labels.
    pub labels: Labels,
    /// The baseline of the newest point: the `baseline_last` runs of its series before it.
    pub baseline_last: usize,
    /// The band's half-width, relative to the baseline's mean (`regress --min-change`).
    pub min_change: f64,
}

/// One point: a stored run's figure at its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub id: i64,
    pub x: usize,
    pub value: f64,
}

/// The baseline band of a series: over the positions of its baseline runs and the newest point.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub from: usize,
    pub to: usize,
    pub mean: f64,
    pub runs: usize,
}

/// A tool's runs of one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<Point>,
    pub band: Option<Band>,
}

/// The whole view.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub figure: Fig,
    /// The text under each position of the horizontal axis.
    pub ticks: Vec<String>,
    pub series: Vec<Series>,
    /// Runs left out (no such label, no such figure), counted.
    pub left_out: usize,
}

fn column(f: Fig, s: &Stored) -> Option<f64> {
    match f {
        Fig::Tpot => s.tpot_ms_mean,
        Fig::PerUser => s.per_user_decode_tok_per_s,
        Fig::TtftMean => s.ttft_ms_mean,
        Fig::TtftP99 => s.ttft_ms_p99,
        Fig::E2eMean => s.e2e_ms_mean,
        Fig::OutputThroughput => s.output_tok_per_s,
        // The store keeps a column of the figures `regress` judges (`Fig::REGRESSED`) only.
        _ => None,
    }
    .filter(|v| v.is_finite())
}

/// The history of the store's accepted runs, as `settings` asks.
pub fn history(store: &mut Store, settings: &Settings) -> Result<History, StoreError> {
    let filter = Filter { labels: settings.labels.clone(), ..Filter::default() };
    let mut rows = store.list(&filter, false)?;
    // Oldest first (the list is newest first).
    rows.reverse();
    let mut ticks: Vec<String> = Vec::new();
    let mut keys: Vec<(String, WorkloadKey)> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    let mut left_out = 0;
    for row in &rows {
        let (Some(value), Some(tick)) = (column(settings.figure, row), position_text(&settings.by, row)) else {
            left_out += 1;
            continue;
        };
        let x = match &settings.by {
            By::Time => {
                ticks.push(tick);
                ticks.len() - 1
            }
            By::Label(_) => ticks.iter().position(|t| *t == tick).unwrap_or_else(|| {
                ticks.push(tick);
                ticks.len() - 1
            }),
        };
        let key = (row.tool.clone(), row.workload.clone());
        let i = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
            keys.push(key.clone());
            series.push(Series { label: short_label(&row.tool, &row.workload), points: Vec::new(), band: None });
            keys.len() - 1
        });
        series[i].points.push(Point { id: row.id, x, value });
    }
    for s in &mut series {
        s.band = band(&s.points, settings.baseline_last);
    }
    Ok(History { figure: settings.figure, ticks, series, left_out })
}

/// A series' name, short enough for the legend: `vllm bench serve · c4 · 256/128 · m · random`.
fn short_label(tool: &str, w: &WorkloadKey) -> String {
    let mut parts = vec![tool.to_string()];
    parts.push(match (w.max_concurrency, w.request_rate) {
        (Some(c), Some(r)) => format!("c{c} r{}", show(r)),
        (Some(c), None) => format!("c{c}"),
        (None, Some(r)) => format!("r{}", show(r)),
        (None, None) => "load ?".into(),
    });
    let len = |v: Option<u64>| v.map_or("?".into(), |v| v.to_string());
    parts.push(format!("{}/{}", len(w.input_len), len(w.output_len)));
    parts.push(w.model.clone().unwrap_or_else(|| "model ?".into()));
    parts.push(w.dataset.clone().unwrap_or_else(|| "dataset ?".into()));
    parts.join(" · ")
}

/// The text of a run's position: its date and time (UTC, to the second) or its label's value.
fn position_text(by: &By, row: &Stored) -> Option<String> {
    match by {
        By::Time => Some(row.added_at.get(..19).unwrap_or(&row.added_at).replace('T', " ")),
        By::Label(k) => row.labels.get(k).cloned(),
    }
}

/// The baseline of the newest point: the `last` points before it (none: no band).
fn band(points: &[Point], last: usize) -> Option<Band> {
    let (newest, before) = points.split_last()?;
    let base = &before[before.len().saturating_sub(last)..];
    let first = base.first()?;
    let mean = base.iter().map(|p| p.value).sum::<f64>() / base.len() as f64;
    Some(Band { from: first.x, to: newest.x, mean, runs: base.len() })
}

const WIDTH: u32 = 1100;
const PLOT_HEIGHT: u32 = 520;
const LEGEND_LINE: u32 = 20;

/// The SVG of a history; an error when it has no point.
pub fn render(h: &History, min_change: f64) -> Result<String, String> {
    let n = h.ticks.len();
    if n == 0 {
        return Err("no stored run gives this figure (with these labels)".into());
    }
    let (figure, unit) = match h.figure {
        Fig::Tpot => ("TPOT, derived, mean", "ms"),
        Fig::PerUser => ("per-user decode rate, 1000 / TPOT", "tok/s"),
        Fig::TtftMean => ("TTFT, mean", "ms"),
        Fig::TtftP99 => ("TTFT, p99", "ms"),
        Fig::E2eMean => ("E2E latency, mean", "ms"),
        Fig::OutputThroughput => ("output throughput", "tok/s"),
        // (A history is drawn of a stored column only: `column`.)
        other => (other.label(), ""),
    };
    let all = h.series.iter().flat_map(|s| s.points.iter().map(|p| p.value));
    let bands = h.series.iter().filter_map(|s| s.band.as_ref()).map(|b| b.mean * (1.0 + min_change));
    let top = all.chain(bands).fold(0.0_f64, f64::max);
    let y_max = if top > 0.0 { top * 1.12 } else { 1.0 };
    let mut svg = String::new();
    {
        let height = PLOT_HEIGHT + LEGEND_LINE * (h.series.len() as u32 + 3);
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let draw = || -> Result<(), Box<dyn std::error::Error + 'static>> {
            root.fill(&WHITE)?;
            let (top_area, bottom) = root.split_vertically(PLOT_HEIGHT);
            let tick = |x: &f64| -> String {
                let i = x.round();
                if (x - i).abs() > 1e-6 || i < 0.0 {
                    return String::new();
                }
                h.ticks.get(i as usize).map(|t| svg_text(t)).unwrap_or_default()
            };
            let mut chart = ChartBuilder::on(&top_area)
                .caption(format!("{figure} over {}", if n == 1 { "one run" } else { "time" }), ("sans-serif", 18))
                .margin(16)
                .x_label_area_size(60)
                .y_label_area_size(70)
                .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..y_max)?;
            chart
                .configure_mesh()
                .x_labels(n.min(12))
                .x_label_formatter(&tick)
                .y_desc(format!("{figure} ({unit})"))
                .light_line_style(RGBColor(235, 235, 235))
                .axis_desc_style(("sans-serif", 15))
                .draw()?;
            for (i, s) in h.series.iter().enumerate() {
                let colour = COLOURS[i % COLOURS.len()];
                if let Some(b) = &s.band {
                    let (lo, hi) = (b.mean * (1.0 - min_change), b.mean * (1.0 + min_change));
                    let (x0, x1) = (b.from as f64 - 0.3, b.to as f64 + 0.3);
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, lo), (x1, hi)],
                        RGBColor(200, 200, 200).mix(0.35).filled(),
                    )))?;
                    chart.draw_series(DashedLineSeries::new(
                        [(x0, b.mean), (x1, b.mean)],
                        2,
                        4,
                        colour.stroke_width(1),
                    ))?;
                }
                draw_line(&mut chart, i, s.points.iter().map(|p| (p.x as f64, p.value)).collect())?;
                let newest = s.points.len().saturating_sub(1);
                chart.draw_series(s.points.iter().enumerate().map(|(j, p)| Marker {
                    at: (p.x as f64, p.value),
                    series: i,
                    colour,
                    filled: j == newest,
                    line: None,
                }))?;
            }
            let font = ("sans-serif", 13).into_font();
            let mut y = LEGEND_LINE as i32 / 2 + 4;
            for (i, s) in h.series.iter().enumerate() {
                let colour = COLOURS[i % COLOURS.len()];
                let dash = Some(DASHES[i % DASHES.len()]);
                bottom.draw(&Marker { at: (76, y), series: i, colour, filled: true, line: dash })?;
                let band = s.band.as_ref().map_or(String::new(), |b| {
                    format!("; baseline: mean {} of {} run(s) before the newest", show(b.mean), b.runs)
                });
                bottom.draw(&Text::new(format!("{}{band}", svg_text(&s.label)), (118, y - 7), font.clone()))?;
                y += LEGEND_LINE as i32;
            }
            let notes = [
                format!(
                    "Grey band: the newest point's baseline mean ± {}% (regress --min-change); dotted line: its mean. \
                     Filled marker: the newest run of its series.",
                    show(min_change * 100.0)
                ),
                format!(
                    "Accepted stored runs only{}.",
                    if h.left_out > 0 {
                        format!("; {} run(s) without this figure or label left out", h.left_out)
                    } else {
                        String::new()
                    }
                ),
            ];
            for line in notes {
                bottom.draw(&Text::new(line, (76, y - 4), ("sans-serif", 12).into_font()))?;
                y += LEGEND_LINE as i32 - 4;
            }
            root.present()?;
            Ok(())
        };
        draw().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
