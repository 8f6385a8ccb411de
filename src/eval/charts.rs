//! SVG charts for the HTML report, drawn with `plotters` (SVG backend, no fonts loaded: text
//! is laid out with plotters' built-in estimate and rendered by the browser). Every chart
//! draws its axes, frame and a "no data" note even when it has nothing to plot, so a chart is
//! never blank. Each function returns one `<svg>` element.

use plotters::prelude::*;

/// Colours of the analyzer, LLM and hybrid columns.
pub const COLUMN_COLOURS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
];

const W: u32 = 960;
const H: u32 = 420;

type Res = Result<(), String>;

/// One point of [`intervals`]: `(label, value, lo, hi, colour)`.
pub type IntervalRow = (String, Option<f64>, Option<f64>, Option<f64>, RGBColor);

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

fn finish(svg: String, drawn: Res, title: &str) -> String {
    match drawn {
        Ok(()) => svg,
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"80\"><rect width=\"100%\" height=\"100%\" fill=\"#fee\"/><text x=\"10\" y=\"40\">{}: chart failed: {}</text></svg>",
            escape(title),
            escape(&e)
        ),
    }
}

/// Escapes text for XML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Grouped bars: one group per category, one bar per series (values in `[0, 1]`; `None`
/// bars are left out).
pub fn grouped_bars(
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[(&str, RGBColor, Vec<Option<f64>>)],
) -> String {
    let mut svg = String::new();
    let drawn = (|| -> Res {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let n = categories.len().max(1);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .y_label_area_size(50)
            .x_label_area_size(10)
            .build_cartesian_2d(0f64..n as f64, -0.22f64..1.08f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_label_formatter(&|y| {
                if *y < 0.0 {
                    String::new()
                } else {
                    format!("{y:.1}")
                }
            })
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), (n as f64, 0.0)],
                BLACK,
            )))
            .map_err(err)?;
        let k = series.len().max(1) as f64;
        let width = 0.8 / k;
        for (si, (name, colour, values)) in series.iter().enumerate() {
            let colour = *colour;
            let bars = values.iter().enumerate().filter_map(move |(i, v)| {
                v.map(|v| {
                    let x0 = i as f64 + 0.1 + si as f64 * width;
                    Rectangle::new(
                        [(x0, 0.0), (x0 + width * 0.92, v.clamp(0.0, 1.0).max(0.004))],
                        colour.filled(),
                    )
                })
            });
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
            let labels = values.iter().enumerate().filter_map(move |(i, v)| {
                v.map(|v| {
                    let x = i as f64 + 0.1 + (si as f64 + 0.5) * width;
                    Text::new(
                        format!("{v:.2}"),
                        (x, v.clamp(0.0, 1.0) + 0.02),
                        ("sans-serif", 11).into_font().color(&BLACK).pos(
                            plotters::style::text_anchor::Pos::new(
                                plotters::style::text_anchor::HPos::Center,
                                plotters::style::text_anchor::VPos::Bottom,
                            ),
                        ),
                    )
                })
            });
            chart.draw_series(labels).map_err(err)?;
        }
        let max_chars = (110 / n).clamp(6, 40);
        chart
            .draw_series(categories.iter().enumerate().map(|(i, c)| {
                Text::new(
                    short(c, max_chars),
                    (i as f64 + 0.5, -0.04),
                    ("sans-serif", 12).into_font().color(&BLACK).pos(
                        plotters::style::text_anchor::Pos::new(
                            plotters::style::text_anchor::HPos::Center,
                            plotters::style::text_anchor::VPos::Top,
                        ),
                    ),
                )
            }))
            .map_err(err)?;
        if categories.is_empty() || series.iter().all(|s| s.2.iter().all(Option::is_none)) {
            chart
                .draw_series(std::iter::once(Text::new(
                    "no data",
                    (n as f64 / 2.0 - 0.1, 0.5),
                    ("sans-serif", 18).into_font().color(&RED),
                )))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
        Ok(())
    })();
    finish(svg, drawn, title)
}

/// A confusion matrix as a heat map: rows are the predicted labels, columns the gold ones.
pub fn heatmap(title: &str, labels: &[String], matrix: &[Vec<u64>]) -> String {
    let mut svg = String::new();
    let q = labels.len().max(1);
    let size = 760u32;
    let drawn = (|| -> Res {
        let root = SVGBackend::with_string(&mut svg, (size + 200, size)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let qf = q as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .build_cartesian_2d(-5.0f64..qf, -3.0f64..qf)
            .map_err(err)?;
        let max = matrix.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
        let mut cells = Vec::new();
        let mut texts = Vec::new();
        for r in 0..q {
            for c in 0..q {
                let v = matrix
                    .get(r)
                    .and_then(|row| row.get(c))
                    .copied()
                    .unwrap_or(0);
                let t = v as f64 / max;
                let shade = RGBColor(
                    (255.0 - 200.0 * t) as u8,
                    (255.0 - 120.0 * t) as u8,
                    (255.0 - 40.0 * t) as u8,
                );
                // Row r is drawn from the top.
                let y = qf - 1.0 - r as f64;
                cells.push(Rectangle::new(
                    [(c as f64, y), (c as f64 + 1.0, y + 1.0)],
                    shade.filled(),
                ));
                cells.push(Rectangle::new(
                    [(c as f64, y), (c as f64 + 1.0, y + 1.0)],
                    RGBColor(190, 190, 190),
                ));
                if v > 0 {
                    texts.push(Text::new(
                        v.to_string(),
                        (c as f64 + 0.35, y + 0.7),
                        ("sans-serif", 13).into_font().color(&BLACK),
                    ));
                }
            }
        }
        chart.draw_series(cells).map_err(err)?;
        chart.draw_series(texts).map_err(err)?;
        let mut axis = Vec::new();
        for (i, l) in labels.iter().enumerate() {
            let y = qf - 1.0 - i as f64;
            axis.push(Text::new(
                short(l, 20),
                (-4.9, y + 0.65),
                ("sans-serif", 11).into_font().color(&BLACK),
            ));
            axis.push(Text::new(
                short(l, 8),
                (i as f64 + 0.05, -0.4 - 0.9 * (i % 2) as f64),
                ("sans-serif", 10).into_font().color(&BLACK),
            ));
        }
        axis.push(Text::new(
            "rows: predicted · columns: gold".to_string(),
            (0.0, -2.6),
            ("sans-serif", 12).into_font().color(&BLACK),
        ));
        chart.draw_series(axis).map_err(err)?;
        if matrix.iter().flatten().all(|v| *v == 0) {
            chart
                .draw_series(std::iter::once(Text::new(
                    "no data",
                    (qf / 2.0 - 1.0, qf / 2.0),
                    ("sans-serif", 18).into_font().color(&RED),
                )))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
        Ok(())
    })();
    finish(svg, drawn, title)
}

/// Points with vertical interval bars, one per row `(label, value, lo, hi, colour)`, on the
/// y range `y`.
pub fn intervals(title: &str, y_desc: &str, y: (f64, f64), rows: &[IntervalRow]) -> String {
    let mut svg = String::new();
    let drawn = (|| -> Res {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let n = rows.len().max(1);
        let span = y.1 - y.0;
        let bottom = y.0 - 0.22 * span;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .y_label_area_size(50)
            .x_label_area_size(10)
            .build_cartesian_2d(0f64..n as f64, bottom..y.1 + 0.05 * span)
            .map_err(err)?;
        let lo_limit = y.0;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_label_formatter(&|v| {
                if *v < lo_limit - 1e-9 {
                    String::new()
                } else {
                    format!("{v:.1}")
                }
            })
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![
                    (0.0, y.0.max(0.0).min(y.1)),
                    (n as f64, y.0.max(0.0).min(y.1)),
                ],
                BLACK.mix(0.5),
            )))
            .map_err(err)?;
        for (i, (_, v, lo, hi, colour)) in rows.iter().enumerate() {
            let x = i as f64 + 0.5;
            if let (Some(lo), Some(hi)) = (lo, hi) {
                let (lo, hi) = (lo.max(y.0), hi.min(y.1));
                chart
                    .draw_series(std::iter::once(ErrorBar::new_vertical(
                        x,
                        lo,
                        v.unwrap_or((lo + hi) / 2.0).clamp(lo, hi),
                        hi,
                        colour.stroke_width(2),
                        14,
                    )))
                    .map_err(err)?;
            }
            if let Some(v) = v {
                let v = v.clamp(y.0, y.1);
                chart
                    .draw_series(std::iter::once(Circle::new((x, v), 6, colour.filled())))
                    .map_err(err)?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{v:.2}"),
                        (x + 0.08, v),
                        ("sans-serif", 11).into_font().color(&BLACK),
                    )))
                    .map_err(err)?;
            }
        }
        let max_chars = (110 / n).clamp(6, 40);
        chart
            .draw_series(rows.iter().enumerate().map(|(i, r)| {
                Text::new(
                    short(&r.0, max_chars),
                    (i as f64 + 0.5, y.0 - 0.04 * span),
                    ("sans-serif", 11).into_font().color(&BLACK).pos(
                        plotters::style::text_anchor::Pos::new(
                            plotters::style::text_anchor::HPos::Center,
                            plotters::style::text_anchor::VPos::Top,
                        ),
                    ),
                )
            }))
            .map_err(err)?;
        if rows.iter().all(|r| r.1.is_none()) {
            chart
                .draw_series(std::iter::once(Text::new(
                    "no data",
                    (n as f64 / 2.0 - 0.1, (y.0 + y.1) / 2.0),
                    ("sans-serif", 18).into_font().color(&RED),
                )))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
        Ok(())
    })();
    finish(svg, drawn, title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chart_draws_shapes_even_with_one_point() {
        let bars = grouped_bars(
            "t",
            "rate",
            &["cfg".to_string()],
            &[("llm", COLUMN_COLOURS[1], vec![Some(0.5)])],
        );
        assert!(bars.starts_with("<svg"), "{bars}");
        assert!(bars.contains("<rect"), "a bar is drawn");
        let heat = heatmap("h", &["a".into(), "b".into()], &[vec![1, 0], vec![0, 2]]);
        assert!(
            heat.contains("<rect") && heat.contains(">\n2\n</text>"),
            "cells and counts"
        );
        let iv = intervals(
            "i",
            "kappa",
            (-1.0, 1.0),
            &[(
                "x".into(),
                Some(0.3),
                Some(0.1),
                Some(0.5),
                COLUMN_COLOURS[0],
            )],
        );
        assert!(iv.contains("<circle"), "{iv}");
    }

    #[test]
    fn empty_charts_say_no_data() {
        let bars = grouped_bars("t", "rate", &[], &[]);
        assert!(bars.contains("no data"));
        let iv = intervals("i", "k", (0.0, 1.0), &[]);
        assert!(iv.contains("no data"));
    }
}
