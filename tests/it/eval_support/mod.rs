//! Shared by the eval report tests: a headless-Chromium screenshot and PNG statistics.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Debian's chromium binary (or `$CHROMIUM`).
pub fn chromium() -> PathBuf {
    std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// Screenshots `html` with headless Chromium at 1280×4000 and returns the PNG path.
pub fn screenshot(html: &Path, dir: &Path) -> PathBuf {
    let bin = chromium();
    assert!(
        bin.is_file(),
        "chromium not found at {} (apt-get install chromium)",
        bin.display()
    );
    let png = dir.join("report.png");
    let profile = dir.join("chromium-profile");
    let status = std::process::Command::new(&bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,4000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run chromium");
    assert!(status.success(), "chromium failed: {status}");
    assert!(png.is_file(), "no screenshot written");
    png
}

/// (distinct colours, share of non-white pixels) of a PNG.
pub fn png_stats(path: &Path) -> (usize, f64) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let channels = info.color_type.samples();
    let mut colours = BTreeSet::new();
    let (mut non_white, mut total) = (0usize, 0usize);
    for px in bytes.chunks(channels) {
        let rgb = (
            px[0],
            px.get(1).copied().unwrap_or(px[0]),
            px.get(2).copied().unwrap_or(px[0]),
        );
        if colours.len() < 10_000 {
            colours.insert(rgb);
        }
        total += 1;
        if rgb.0 < 245 || rgb.1 < 245 || rgb.2 < 245 {
            non_white += 1;
        }
    }
    (colours.len(), non_white as f64 / total.max(1) as f64)
}
