//! Startup: loading the shipped plugins, and `uji --version`.

use crate::{Row, measure, median, uji};

pub fn run() -> Vec<Row> {
    let home = tempfile::tempdir().expect("tempdir");
    let mut load_ms = Vec::new();
    let mut plugin_count = 0;
    for _ in 0..20 {
        let run = measure(uji(home.path()).args(["plugins", "--json"]));
        assert!(run.success, "uji plugins failed");
        let doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("plugins json");
        plugin_count = doc["plugins"].as_array().map(Vec::len).unwrap_or(0);
        load_ms.push(doc["load_micros"].as_f64().unwrap_or(f64::NAN) / 1000.0);
    }

    let mut wall_ms = Vec::new();
    let mut peak_kb = 0;
    for _ in 0..30 {
        let run = measure(uji(home.path()).arg("--version"));
        assert!(run.success, "uji --version failed");
        wall_ms.push(run.wall.as_secs_f64() * 1000.0);
        peak_kb = peak_kb.max(run.peak_rss_kb);
    }

    let mut models_ms = Vec::new();
    for _ in 0..30 {
        let run = measure(uji(home.path()).args(["models", "--all"]));
        assert!(run.success, "uji models failed");
        models_ms.push(run.wall.as_secs_f64() * 1000.0);
    }

    // Problems found (exit 1) still count: the time is the point.
    let mut doctor_ms = Vec::new();
    for _ in 0..20 {
        let run = measure(uji(home.path()).args(["doctor", "--offline"]));
        doctor_ms.push(run.wall.as_secs_f64() * 1000.0);
    }

    vec![
        Row {
            area: "startup",
            what: "`uji doctor --offline` wall time (every plugin loaded, every check but the model's)"
                .to_string(),
            value: median(doctor_ms),
            unit: "ms",
            target: Some(100.0),
        },
        Row {
            area: "startup",
            what: "`uji models --all` wall time (catalogue + init.lua)".to_string(),
            value: median(models_ms),
            unit: "ms",
            target: Some(10.0),
        },
        Row {
            area: "startup",
            what: format!("load all shipped plugins ({plugin_count})"),
            value: median(load_ms),
            unit: "ms",
            target: Some(20.0),
        },
        Row {
            area: "startup",
            what: "`uji --version` wall time".to_string(),
            value: median(wall_ms),
            unit: "ms",
            target: Some(10.0),
        },
        Row {
            area: "startup",
            what: "`uji --version` peak RSS".to_string(),
            value: peak_kb as f64 / 1024.0,
            unit: "MB",
            target: Some(10.0),
        },
    ]
}
