//! [`PoolHistory::to_timeline_svg`]: the allocated and reserved bytes over
//! a recorded history, as a picture beside the segment map (in the style of
//! `snapshot_svg.rs`, whose helpers it uses).

use super::history::{HistoryAction, PoolHistory};
use super::snapshot_svg::{BAR_WIDTH, MARGIN, MUTED, document, grouped, text, xml_text};
use crate::byte_units::human_bytes;
use std::fmt::Write;

/// The plot's height.
const PLOT_HEIGHT: f64 = 240.0;
/// Room on the left of the plot for the byte labels.
const AXIS_WIDTH: f64 = 80.0;
/// The fill of reserved bytes.
const RESERVED: &str = "#b8cfe8";
/// The line of allocated bytes.
const ALLOCATED: &str = "#1f5fa8";
/// The mark of a sleep, wake, `empty_cache` or out-of-memory event.
const MARK: &str = "#b00020";

impl PoolHistory {
    /// The history as an SVG picture: the reserved bytes (filled) and the
    /// allocated bytes (a line) after each event, one step per event, from
    /// the totals before the first event kept; sleep, wake, `empty_cache`
    /// and out-of-memory events are marked by a vertical line with their
    /// name. A title gives the device, the number of events (and those the
    /// bound dropped) and the peaks; the byte axis is in binary units.
    ///
    /// The two series are `<polyline class="reserved">` (an area: its
    /// steps, then two points closing it along the bottom) and
    /// `<polyline class="allocated">` (a line): each starts at the totals
    /// before the first event, then has two points per event (across at
    /// the old value, then to the new one). Marks are `<line class="mark">`.
    ///
    /// ```
    /// use ascend::pool::{DevicePool, HistoryOptions, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// pool.record_memory_history(Some(HistoryOptions::default()))?;
    /// for _ in 0..3 {
    ///     drop(pool.alloc(1 << 20)?);
    /// }
    /// pool.empty_cache()?;
    /// let svg = pool.memory_history().to_timeline_svg();
    /// assert!(svg.contains("class=\"allocated\""));
    /// assert!(svg.contains(">empty_cache</text>"));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn to_timeline_svg(&self) -> String {
        let totals = self.replay();
        let peak_allocated = totals.iter().map(|&(a, _)| a).chain([self.start_allocated]).max();
        let peak_reserved = totals.iter().map(|&(_, r)| r).chain([self.start_reserved]).max();
        let (peak_allocated, peak_reserved) = (peak_allocated.unwrap_or(0), peak_reserved.unwrap_or(0));
        let mut out = String::new();
        let dropped = if self.dropped > 0 {
            format!(" ({} older dropped)", grouped(self.dropped))
        } else {
            String::new()
        };
        let title = format!(
            "Device {} pool history: {} events{dropped}; peak {} allocated, {} reserved",
            self.device,
            grouped(self.events.len() as u64),
            human_bytes(peak_allocated),
            human_bytes(peak_reserved),
        );
        text(
            &mut out,
            MARGIN,
            MARGIN + 14.0,
            " font-size=\"16\" font-weight=\"bold\"",
            &xml_text(&title),
        );
        let legend_y = MARGIN + 36.0;
        legend(&mut out, legend_y);
        let top = legend_y + 24.0;
        let plot = Plot {
            left: MARGIN + AXIS_WIDTH,
            top,
            width: BAR_WIDTH - AXIS_WIDTH,
            max: peak_reserved.max(peak_allocated).max(1),
            steps: totals.len().max(1),
        };
        axis(&mut out, &plot);
        let start = (self.start_allocated, self.start_reserved);
        let points = |pick: fn(&(usize, usize)) -> usize| {
            let mut line = format!("{:.1},{:.1}", plot.x(0), plot.y(pick(&start)));
            let mut last = pick(&start);
            for (step, total) in totals.iter().enumerate() {
                // A step: across at the old value, then up or down.
                let x = plot.x(step + 1);
                let _ = write!(line, " {x:.1},{:.1} {x:.1},{:.1}", plot.y(last), plot.y(pick(total)));
                last = pick(total);
            }
            line
        };
        // The reserved area: the steps, closed along the bottom.
        let bottom = plot.y(0);
        let _ = writeln!(
            out,
            "<polyline class=\"reserved\" points=\"{} {:.1},{bottom:.1} {:.1},{bottom:.1}\" fill=\"{RESERVED}\"/>",
            points(|&(_, reserved)| reserved),
            plot.x(totals.len()),
            plot.x(0),
        );
        let _ = writeln!(
            out,
            "<polyline class=\"allocated\" points=\"{}\" fill=\"none\" stroke=\"{ALLOCATED}\" stroke-width=\"2\"/>",
            points(|&(allocated, _)| allocated)
        );
        marks(&mut out, self, &plot);
        if self.events.is_empty() {
            text(&mut out, plot.left + 10.0, top + 20.0, "", "No events recorded");
        }
        document(top + PLOT_HEIGHT + 30.0 + MARGIN, &out)
    }
}

/// Where the plot is, and its scales.
struct Plot {
    left: f64,
    top: f64,
    width: f64,
    max: usize,
    steps: usize,
}

impl Plot {
    fn x(&self, step: usize) -> f64 {
        self.left + self.width * step as f64 / self.steps as f64
    }

    fn y(&self, bytes: usize) -> f64 {
        self.top + PLOT_HEIGHT * (1.0 - bytes as f64 / self.max as f64)
    }
}

/// The legend's two swatches.
fn legend(out: &mut String, y: f64) {
    for (i, (colour, name)) in [(RESERVED, "reserved"), (ALLOCATED, "allocated")]
        .into_iter()
        .enumerate()
    {
        let x = MARGIN + 140.0 * i as f64;
        let _ = writeln!(
            out,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"14\" height=\"14\" fill=\"{colour}\"/>",
            y - 11.0
        );
        text(out, x + 20.0, y, "", name);
    }
}

/// The frame, the byte labels (0, half, the top) and the event axis.
fn axis(out: &mut String, plot: &Plot) {
    let _ = writeln!(
        out,
        "<rect class=\"frame\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{PLOT_HEIGHT}\" fill=\"none\" \
         stroke=\"{MUTED}\"/>",
        plot.left, plot.top, plot.width
    );
    for bytes in [0, plot.max / 2, plot.max] {
        let y = plot.y(bytes);
        let attributes = format!(" text-anchor=\"end\" fill=\"{MUTED}\"");
        text(out, plot.left - 6.0, y + 4.0, &attributes, &human_bytes(bytes));
    }
    let label = format!("events (1 step each), {} in all", grouped(plot.steps as u64));
    let attributes = format!(" fill=\"{MUTED}\"");
    text(out, plot.left, plot.top + PLOT_HEIGHT + 20.0, &attributes, &label);
}

/// A vertical line with a name at each sleep, wake, `empty_cache` and
/// out-of-memory event.
fn marks(out: &mut String, history: &PoolHistory, plot: &Plot) {
    let mut drawn = 0;
    for (step, event) in history.events.iter().enumerate() {
        let name = match event.action {
            HistoryAction::Sleep => "sleep",
            HistoryAction::Wake => "wake",
            HistoryAction::EmptyCache => "empty_cache",
            HistoryAction::Oom => "out of memory",
            _ => continue,
        };
        let x = plot.x(step + 1);
        let _ = writeln!(
            out,
            "<line class=\"mark\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{MARK}\" \
             stroke-dasharray=\"4 3\"/>",
            plot.top,
            plot.top + PLOT_HEIGHT
        );
        // Names of marks close together go on three rows; near the right
        // edge they end at their line.
        let y = plot.top + 12.0 + 12.0 * f64::from(drawn % 3);
        drawn += 1;
        if x > plot.left + plot.width - 90.0 {
            let attributes = format!(" fill=\"{MARK}\" font-size=\"11\" text-anchor=\"end\"");
            text(out, x - 3.0, y, &attributes, name);
        } else {
            let attributes = format!(" fill=\"{MARK}\" font-size=\"11\"");
            text(out, x + 3.0, y, &attributes, name);
        }
    }
}
