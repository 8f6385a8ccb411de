//! Findings: placeholder (filled below).
