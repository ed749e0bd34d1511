//! `plots.png`: energy, joint error, penetration, driven joints against their targets
//! and Newton iterations over time, drawn with plotters into one picture of stacked
//! panels — only those the scene has (no joint panel without joints).

use std::path::Path;

use plotters::prelude::*;

use crate::CliError;

/// The font every label is drawn with (DejaVu Sans, licence beside it in `assets/`),
/// shipped so that no system font library is needed.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "axion-sans";

/// Width of the picture and height of one panel (pixels); the title takes
/// [`TITLE_HEIGHT`] above the panels.
pub const PLOT_WIDTH: u32 = 1000;
/// Height of one panel (pixels).
pub const PANEL_HEIGHT: u32 = 290;
/// Height of the title band (pixels).
pub const TITLE_HEIGHT: u32 = 40;

/// The picture's size for `panels` panels.
pub fn plot_size(panels: usize) -> (u32, u32) {
    (PLOT_WIDTH, TITLE_HEIGHT + PANEL_HEIGHT * panels as u32)
}

/// A driven joint of world 0 over time: its coordinate (position drive) or rate
/// (velocity drive) and the drive's target.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// The joint's name and what is tracked, e.g. "knee angle (rad)".
    pub label: String,
    /// The tracked value at each recorded step.
    pub value: Vec<f64>,
    /// The target at each recorded step.
    pub target: Vec<f64>,
}

/// What is plotted, one entry per recorded step of world 0 (iterations: the largest
/// over the worlds), and which panels the scene has.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Time (s).
    pub t: Vec<f64>,
    /// Kinetic energy (J).
    pub kinetic: Vec<f64>,
    /// Potential energy in gravity (J).
    pub potential: Vec<f64>,
    /// Largest joint anchor error (m); plotted when the model has joints.
    pub joint_error: Vec<f64>,
    /// Deepest penetration between shapes (m), 0 when nothing overlaps; plotted when
    /// two shapes of the model can touch.
    pub penetration: Vec<f64>,
    /// Newton iterations of the step that ended at `t` (0 for the initial state).
    pub iterations: Vec<f64>,
    /// Whether the model has joints.
    pub has_joints: bool,
    /// Whether two of the model's shapes can touch (a dynamic body with a shape and
    /// another shape).
    pub has_contacts: bool,
    /// The driven joints (at most [`MAX_TRACKS`]).
    pub tracks: Vec<Track>,
    /// The integrator, for the title and the energy panel: "backward Euler" or
    /// "energy–momentum".
    pub integrator: String,
}

/// Samples a series keeps at most before it is thinned ([`Series::thin`]): far more
/// than a panel's width in pixels.
pub const MAX_SAMPLES: usize = 20_000;

impl Series {
    /// Keeps every other sample (the first, third, …) of every quantity.
    pub fn thin(&mut self) {
        fn half(v: &mut Vec<f64>) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        for v in [
            &mut self.t,
            &mut self.kinetic,
            &mut self.potential,
            &mut self.joint_error,
            &mut self.penetration,
            &mut self.iterations,
        ] {
            half(v);
        }
        for track in &mut self.tracks {
            half(&mut track.value);
            half(&mut track.target);
        }
    }
}

/// Driven joints drawn at most (the first ones of the model).
pub const MAX_TRACKS: usize = 6;

/// The lowest value a logarithmic axis reaches down to (m): roundoff of unit-sized
/// coordinates.
const LOG_FLOOR: f64 = 1e-16;

/// A line: legend, values, colour, dashed.
type Line<'a> = (String, &'a [f64], RGBColor, bool);

/// A panel: title, unit, lines, and whether its axis is logarithmic. Errors (joint
/// error, penetration) are drawn on one: they are nil to roundoff in an exact step and
/// span decades when they are not.
struct Panel<'a> {
    title: String,
    unit: &'a str,
    lines: Vec<Line<'a>>,
    log: bool,
}

/// A y range that contains `values` with a 5 % margin; `0..1` when they are all zero,
/// and a non-empty one around them when they are all equal.
/// Values beyond this magnitude are drawn at it: the range and its margin must stay
/// finite (near `f64::MAX` the span overflows and plotters never finishes the axis).
const PLOT_LIMIT: f64 = 1e300;

fn y_range(values: &[&[f64]]) -> std::ops::Range<f64> {
    let all = values
        .iter()
        .flat_map(|v| v.iter().copied())
        .filter(|v| v.is_finite())
        .map(|v| v.clamp(-PLOT_LIMIT, PLOT_LIMIT));
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() || (lo == 0.0 && hi == 0.0) {
        return 0.0..1.0;
    }
    let pad = if hi > lo {
        0.05 * hi - 0.05 * lo
    } else {
        0.5 * lo.abs()
    };
    (lo - pad)..(hi + pad)
}

/// The bottom of a logarithmic axis for `values`: a decade below the smallest positive
/// value, not below [`LOG_FLOOR`]; zeros are drawn there.
fn log_bottom(values: &[f64]) -> f64 {
    let smallest = values
        .iter()
        .copied()
        .filter(|&v| v > 0.0)
        .fold(f64::INFINITY, f64::min);
    if smallest.is_finite() {
        (smallest / 10.0).max(LOG_FLOOR)
    } else {
        LOG_FLOOR
    }
}

/// Tick labels for an axis spanning `range`: scientific when its magnitude is below
/// 10⁻² or above 10⁵ (joint errors of 10⁻¹³ m must not all read "0"), otherwise plain
/// with as many decimals as the span needs; on a logarithmic axis (values are
/// $\log_{10}$), the power of ten.
fn labeller(range: &std::ops::Range<f64>, log: bool) -> impl Fn(&f64) -> String {
    let magnitude = range.start.abs().max(range.end.abs());
    let span = (range.end - range.start).max(f64::MIN_POSITIVE);
    let scientific = !(1e-2..1e5).contains(&magnitude);
    let decimals = (1.0 - span.log10().floor()).clamp(0.0, 6.0) as usize;
    move |v: &f64| {
        if log {
            // Only whole powers of ten are labelled.
            if (v - v.round()).abs() < 1e-9 {
                format!("1e{}", v.round())
            } else {
                String::new()
            }
        } else if scientific {
            format!("{v:.2e}")
        } else {
            format!("{v:.decimals$}")
        }
    }
}

/// The panels `series` gets, in order: energy, the joint error (if the model has
/// joints), the penetration (if shapes can touch), the driven joints against their
/// targets (if it has drives), Newton iterations.
fn panels<'a>(series: &'a Series, total: &'a [f64]) -> Vec<Panel<'a>> {
    let energy_title = if series.integrator == "backward Euler" {
        "Energy (backward Euler dissipates it: a loss here is the integrator's)".to_string()
    } else {
        format!("Energy ({})", series.integrator)
    };
    let mut panels = vec![Panel {
        title: energy_title,
        unit: "J",
        lines: vec![
            ("kinetic".into(), &series.kinetic, RED, false),
            ("potential".into(), &series.potential, BLUE, false),
            ("total".into(), total, BLACK, false),
        ],
        log: false,
    }];
    if series.has_joints {
        panels.push(Panel {
            title: "Largest joint error".into(),
            unit: "m",
            lines: vec![("joint anchor error".into(), &series.joint_error, RED, false)],
            log: true,
        });
    }
    if series.has_contacts {
        panels.push(Panel {
            title: "Deepest penetration".into(),
            unit: "m",
            lines: vec![("penetration".into(), &series.penetration, BLUE, false)],
            log: true,
        });
    }
    if !series.tracks.is_empty() {
        const COLOURS: [RGBColor; MAX_TRACKS] = [
            RED,
            BLUE,
            RGBColor(0, 140, 0),
            RGBColor(200, 120, 0),
            MAGENTA,
            RGBColor(0, 150, 150),
        ];
        let mut lines = Vec::new();
        for (track, colour) in series.tracks.iter().zip(COLOURS) {
            lines.push((track.label.clone(), &track.value[..], colour, false));
            if track.target.iter().any(|v| v.is_finite()) {
                lines.push(("target".into(), &track.target[..], colour, true));
            }
        }
        panels.push(Panel {
            title: "Driven joints (solid) against their targets (dashed)".into(),
            unit: "rad, m, rad/s or m/s",
            lines,
            log: false,
        });
    }
    panels.push(Panel {
        title: "Newton iterations per step".into(),
        unit: "iterations",
        lines: vec![("iterations".into(), &series.iterations, BLACK, false)],
        log: false,
    });
    panels
}

/// The titles of the panels `series` gets, top to bottom.
pub fn panel_titles(series: &Series) -> Vec<String> {
    panels(series, &[]).into_iter().map(|p| p.title).collect()
}

/// Draws the panels of `series` into `path` (PNG), [`plot_size`] pixels.
pub fn write_plots(series: &Series, title: &str, path: &Path) -> Result<(), CliError> {
    draw(series, title, path).map_err(|e| CliError::Picture {
        what: path.display().to_string(),
        reason: e.to_string(),
    })
}

fn draw(series: &Series, title: &str, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // Registering twice is harmless (the second replaces the first).
    plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
        .map_err(|_| "the shipped font cannot be read")?;
    let t = &series.t;
    let t_end = t.last().copied().unwrap_or(1.0).max(1e-9);
    let total: Vec<f64> = series
        .kinetic
        .iter()
        .zip(&series.potential)
        .map(|(k, p)| k + p)
        .collect();
    let specs = panels(series, &total);
    let root = BitMapBackend::new(path, plot_size(specs.len())).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, (FAMILY, 24))?;
    let areas = root.split_evenly((specs.len(), 1));
    for (area, panel) in areas.iter().zip(specs) {
        // A logarithmic axis plots log10 of the values on a linear one.
        let bottom = log_bottom(
            &panel
                .lines
                .iter()
                .flat_map(|l| l.1.iter().copied())
                .collect::<Vec<_>>(),
        );
        let shown: Vec<Vec<f64>> = panel
            .lines
            .iter()
            .map(|l| {
                l.1.iter()
                    .map(|&v| {
                        let v = v.clamp(-PLOT_LIMIT, PLOT_LIMIT);
                        if panel.log { v.max(bottom).log10() } else { v }
                    })
                    .collect()
            })
            .collect();
        let ys: Vec<&[f64]> = shown.iter().map(Vec::as_slice).collect();
        let range = if panel.log {
            // Whole decades from the bottom to above the largest value.
            let low = bottom.log10().floor();
            let high = ys
                .iter()
                .flat_map(|v| v.iter().copied())
                .fold(low, f64::max);
            low..high.ceil().max(low + 1.0)
        } else {
            y_range(&ys)
        };
        let label = labeller(&range, panel.log);
        let unit = if panel.log {
            format!("{} (log scale; 0 at the bottom)", panel.unit)
        } else {
            panel.unit.to_string()
        };
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, (FAMILY, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(90)
            .build_cartesian_2d(0.0..t_end, range.clone())?;
        chart
            .configure_mesh()
            .x_desc("t (s)")
            .y_desc(unit)
            .y_label_formatter(&label)
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 15))
            .draw()?;
        for ((legend, _, colour, dashed), values) in panel.lines.iter().zip(&shown) {
            let colour = *colour;
            let points = t.iter().copied().zip(values.iter().copied());
            // Width 1: plotters draws wider strokes past the panel's clip area.
            let style = colour.stroke_width(1);
            if *dashed {
                chart.draw_series(DashedLineSeries::new(points, 6, 4, style))?;
            } else {
                chart
                    .draw_series(LineSeries::new(points, style))?
                    .label(legend.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2))
                    });
            }
        }
        chart
            .configure_series_labels()
            .label_font((FAMILY, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
