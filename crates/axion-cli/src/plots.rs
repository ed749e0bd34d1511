//! `plots.png`: energy, constraint error, penetration and Newton iterations over time,
//! drawn with plotters into one picture of four stacked panels.

use std::path::Path;

use plotters::prelude::*;

use crate::CliError;

/// The font every label is drawn with (DejaVu Sans, licence beside it in `assets/`),
/// shipped so that no system font library is needed.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "axion-sans";

/// Picture size in pixels.
pub const PLOT_SIZE: (u32, u32) = (1000, 1200);

/// What is plotted, one entry per recorded step of world 0 (iterations: the largest
/// over the worlds).
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Time (s).
    pub t: Vec<f64>,
    /// Kinetic energy (J).
    pub kinetic: Vec<f64>,
    /// Potential energy in gravity (J).
    pub potential: Vec<f64>,
    /// Largest joint anchor error (m).
    pub joint_error: Vec<f64>,
    /// Deepest penetration between shapes (m), 0 when nothing overlaps.
    pub penetration: Vec<f64>,
    /// Newton iterations of the step that ended at `t` (0 for the initial state).
    pub iterations: Vec<f64>,
}

/// A panel: title, unit, and its lines (legend, values, colour).
type Panel<'a> = (&'a str, &'a str, Vec<(&'a str, &'a [f64], RGBColor)>);

/// A y range that contains `values` with a 5 % margin; `0..1` when they are all zero,
/// and a non-empty one around them when they are all equal.
fn y_range(values: &[&[f64]]) -> std::ops::Range<f64> {
    let all = values.iter().flat_map(|v| v.iter().copied());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() || (lo == 0.0 && hi == 0.0) {
        return 0.0..1.0;
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        0.5 * lo.abs()
    };
    (lo - pad)..(hi + pad)
}

/// Tick labels for an axis spanning `range`: scientific when its magnitude is below
/// 10⁻² or above 10⁵ (joint errors of 10⁻¹³ m must not all read "0"), otherwise plain
/// with as many decimals as the span needs.
fn labeller(range: &std::ops::Range<f64>) -> impl Fn(&f64) -> String {
    let magnitude = range.start.abs().max(range.end.abs());
    let span = (range.end - range.start).max(f64::MIN_POSITIVE);
    let scientific = !(1e-2..1e5).contains(&magnitude);
    let decimals = (1.0 - span.log10().floor()).clamp(0.0, 6.0) as usize;
    move |v: &f64| {
        if scientific {
            format!("{v:.2e}")
        } else {
            format!("{v:.decimals$}")
        }
    }
}

/// Draws the four panels of `series` into `path` (PNG).
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
    let root = BitMapBackend::new(path, PLOT_SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, (FAMILY, 26))?;
    let panels = root.split_evenly((4, 1));
    let t = &series.t;
    let t_end = t.last().copied().unwrap_or(1.0).max(1e-9);
    let total: Vec<f64> = series
        .kinetic
        .iter()
        .zip(&series.potential)
        .map(|(k, p)| k + p)
        .collect();
    let specs: [Panel; 4] = [
        (
            "Energy",
            "J",
            vec![
                ("kinetic", &series.kinetic, RED),
                ("potential", &series.potential, BLUE),
                ("total", &total, BLACK),
            ],
        ),
        (
            "Largest joint error",
            "m",
            vec![("joint anchor error", &series.joint_error, RED)],
        ),
        (
            "Deepest penetration",
            "m",
            vec![("penetration", &series.penetration, BLUE)],
        ),
        (
            "Newton iterations per step",
            "iterations",
            vec![("iterations", &series.iterations, BLACK)],
        ),
    ];
    for (area, (name, unit, lines)) in panels.iter().zip(specs) {
        let ys: Vec<&[f64]> = lines.iter().map(|l| l.1).collect();
        let range = y_range(&ys);
        let label = labeller(&range);
        let mut chart = ChartBuilder::on(area)
            .caption(name, (FAMILY, 20))
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
        for (legend, values, color) in &lines {
            let color = *color;
            chart
                .draw_series(LineSeries::new(
                    t.iter().copied().zip(values.iter().copied()),
                    color.stroke_width(2),
                ))?
                .label(*legend)
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
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
