//! The committed chart of the counts (bench/instructions.svg): a horizontal grouped bar
//! chart, one panel per table shape, drawn with plotters (no system plotting tool).

use plotters::prelude::*;

/// Where the chart is written (bench/README.md and the README show it).
pub const CHART: &str = "bench/instructions.svg";

/// One path of the chart: the original's issue slots, clang's build of the seed's C, ours.
pub struct ChartRow {
    pub path: String,
    pub shape: &'static str,
    pub original: Option<u64>,
    pub clang: Option<u64>,
    pub ours: u64,
}

impl ChartRow {
    /// The row's count in series `si` (0 original, 1 clang, 2 ours), if there is one.
    fn value(&self, si: usize) -> Option<u64> {
        [self.original, self.clang, Some(self.ours)][si]
    }
}

/// The three series, in bar order.
const SERIES: [(&str, RGBColor); 3] = [
    ("original (issue slots)", RGBColor(150, 150, 150)),
    ("seed's C, clang-22", RGBColor(230, 140, 40)),
    ("neuron-translate", RGBColor(40, 100, 200)),
];

/// Pixels per row of a panel.
const ROW_PX: u32 = 44;

type Segment = SegmentValue<usize>;

/// The panels: a title and its rows (`ctx` and `init`, shape "-", in the first).
fn panels(rows: &[ChartRow]) -> Vec<(&'static str, Vec<&ChartRow>)> {
    ["low", "high"]
        .iter()
        .map(|shape| {
            let title = if *shape == "low" {
                "tags differ in the low word (and ctx, init)"
            } else {
                "tags differ only in the high word"
            };
            let mine: Vec<&ChartRow> = rows
                .iter()
                .filter(|r| r.shape == *shape || (*shape == "low" && r.shape == "-"))
                .collect();
            (title, mine)
        })
        .collect()
}

/// A horizontal grouped bar chart of `rows`, one panel per table shape, as SVG text.
pub fn chart(rows: &[ChartRow]) -> String {
    let panels = panels(rows);
    let max = rows
        .iter()
        .flat_map(|r| [r.original, r.clang, Some(r.ours)])
        .flatten()
        .max()
        .unwrap_or(1);
    let x_max = max.div_ceil(10) * 10 + 10;
    let heights: Vec<u32> = panels
        .iter()
        .map(|(_, r)| 70 + ROW_PX * r.len() as u32)
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, heights.iter().sum::<u32>() + 44))
            .into_drawing_area();
        let _ = root.fill(&WHITE);
        let (head, body) = root.split_vertically(44);
        let _ = head.draw_text(
            "Dynamic instructions per call under qemu-xtensa (lower is better)",
            &("sans-serif", 18).into_text_style(&head),
            (20, 8),
        );
        let _ = head.draw_text(
            "No bar where no count exists: the seed's listing omits the original's init, and the seed's C has no ctx or init of its own.",
            &("sans-serif", 11).into_text_style(&head),
            (20, 26),
        );
        let mut rest = body;
        for ((title, mine), h) in panels.iter().zip(&heights) {
            let (area, below) = rest.split_vertically(*h);
            rest = below;
            panel(&area, title, mine, x_max);
        }
        let _ = root.present();
    }
    svg
}

/// Each row is four unit segments from the top: its three bars in series order and a gap.
/// The axis runs upwards, so row `i`'s bar `si` of `n` rows is segment
/// 4 (n - 1 - i) + 3 - si; the row's name labels its middle bar.
fn segment(n: usize, i: usize, si: usize) -> usize {
    4 * (n - 1 - i) + 3 - si
}

/// One panel: its axes, the three series' bars with their counts, and the legend.
fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    mine: &[&ChartRow],
    x_max: u64,
) {
    let n = mine.len();
    let mut c = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(28)
        .y_label_area_size(130)
        .build_cartesian_2d(0u64..x_max, (0..4 * n).into_segmented())
        .expect("chart axes");
    let _ = c
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(4 * n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(k) if k % 4 == 2 => mine
                .get(n - 1 - k / 4)
                .map_or(String::new(), |r| r.path.clone()),
            _ => String::new(),
        })
        .x_desc("instructions")
        .draw();
    for (si, (name, color)) in SERIES.iter().enumerate() {
        let color = *color;
        if let Ok(d) = c.draw_series(bars(mine, si, color)) {
            d.label(*name).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
            });
        }
        let _ = c.draw_series(counts(mine, si));
    }
    let _ = c
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw();
}

/// Series `si`'s bars.
fn bars(mine: &[&ChartRow], si: usize, color: RGBColor) -> Vec<Rectangle<(u64, Segment)>> {
    let n = mine.len();
    mine.iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let v = r.value(si)?;
            let k = segment(n, i, si);
            Some(Rectangle::new(
                [(0, SegmentValue::Exact(k)), (v, SegmentValue::Exact(k + 1))],
                color.filled(),
            ))
        })
        .collect()
}

/// Series `si`'s counts, each at its bar's end.
fn counts(mine: &[&ChartRow], si: usize) -> Vec<Text<'static, (u64, Segment), String>> {
    let n = mine.len();
    mine.iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let v = r.value(si)?;
            Some(Text::new(
                v.to_string(),
                (v + 1, SegmentValue::Exact(segment(n, i, si) + 1)),
                ("sans-serif", 10).into_font().color(&RGBColor(60, 60, 60)),
            ))
        })
        .collect()
}
