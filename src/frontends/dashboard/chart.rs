//! Bar charts drawn on the server as SVG: one bar per value, above a zero line for more than
//! zero and below it for less, each with its label as a tooltip. A page shows the values in a
//! table beside the chart too, for screen readers and for reading them exactly.

/// One bar, in SVG units.
pub struct Bar {
    /// Where it starts and how wide it is, to two decimals (a year of days shares the width).
    pub x: String,
    pub width: String,
    pub y: u32,
    pub height: u32,
    pub below: bool,
    pub label: String,
}

/// The bars of a chart, and where its zero line runs.
pub struct Bars {
    pub bars: Vec<Bar>,
    pub zero: u32,
}

/// The chart's height, and its width (the SVG's view box: `0 0 600 162`).
pub const HEIGHT: u32 = 160;
pub const WIDTH: u32 = 600;

/// The bars of `values` (each with its label), spread over the chart's width, scaled from the
/// lowest value to the highest with zero within them.
pub fn bars(values: &[(i64, String)]) -> Bars {
    let top = values.iter().map(|(v, _)| *v).max().unwrap_or(0).max(0);
    let bottom = values.iter().map(|(v, _)| *v).min().unwrap_or(0).min(0);
    let span = (top as f64 - bottom as f64).max(1.0);
    let scale = |v: i64| ((v.unsigned_abs() as f64 / span) * HEIGHT as f64).round() as u32;
    let zero = scale(top);
    let step = (f64::from(WIDTH) / values.len().max(1) as f64).min(20.0);
    let width = if step > 4.0 { step * 0.75 } else { step };
    let bars = values
        .iter()
        .enumerate()
        .map(|(i, (v, label))| {
            let height = if *v == 0 { 0 } else { scale(*v).max(2) };
            Bar {
                x: format!("{:.2}", i as f64 * step + (step - width) / 2.0),
                width: format!("{width:.2}"),
                y: if *v < 0 { zero + 2 } else { zero.saturating_sub(height) },
                height,
                below: *v < 0,
                label: label.clone(),
            }
        })
        .collect();
    Bars { bars, zero }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_stand_on_the_zero_line_above_and_below() {
        let b = bars(&[(100, "a".into()), (-50, "b".into()), (0, "c".into())]);
        assert_eq!(b.zero, 107, "two thirds of the height is above zero");
        assert_eq!((b.bars[0].y, b.bars[0].height, b.bars[0].below), (0, 107, false));
        assert_eq!((b.bars[1].y, b.bars[1].height, b.bars[1].below), (109, 53, true));
        assert_eq!(b.bars[2].height, 0);
        assert_eq!((b.bars[1].x.as_str(), b.bars[1].width.as_str()), ("22.50", "15.00"));
        let many = bars(&vec![(1, String::new()); 1000]);
        let last = many.bars.last().unwrap();
        assert_eq!((last.x.as_str(), last.width.as_str()), ("599.40", "0.60"), "a thousand days fit");
    }
}
