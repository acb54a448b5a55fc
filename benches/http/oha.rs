//! The load generator: oha from crates.io, run as its own process.
//!
//! oha cannot be a dependency of this workspace (its bundled SQLite, `links = "sqlite3"`, is
//! another version than sqlx's), so it is installed once into `target/bench-tools` with
//! `cargo install --locked` (default features: it does not build without TLS), or taken from `PAYDESK_BENCH_OHA` when set.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const VERSION: &str = "1.16.0";

/// The oha binary, installed on first use.
pub fn install() -> PathBuf {
    if let Ok(path) = std::env::var("PAYDESK_BENCH_OHA") {
        return PathBuf::from(path);
    }
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let root = target.join("bench-tools");
    let bin = root.join("bin").join("oha");
    let installed = Command::new(&bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains(VERSION));
    if !installed {
        eprintln!("installing oha {VERSION} into {} (once)…", root.display());
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["install", "oha", "--version", VERSION, "--locked", "--root"])
            .arg(&root)
            .status()
            .expect("cargo install oha");
        assert!(status.success(), "cargo install oha failed");
    }
    bin
}

/// One request to repeat.
#[derive(Clone, Debug)]
pub struct Target {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<String>,
    pub body: Option<String>,
    /// The status every answer must have.
    pub status: u16,
}

impl Target {
    pub fn get(url: String) -> Target {
        Target { method: "GET", url, headers: Vec::new(), body: None, status: 200 }
    }

    pub fn header(mut self, header: impl Into<String>) -> Target {
        self.headers.push(header.into());
        self
    }

    pub fn post_json(mut self, body: String) -> Target {
        self.method = "POST";
        self.body = Some(body);
        self.status = 201;
        self.header("Content-Type: application/json")
    }

    pub fn status(mut self, status: u16) -> Target {
        self.status = status;
        self
    }
}

/// What one load measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct Measured {
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// How to load.
#[derive(Clone, Copy, Debug)]
pub enum Load {
    /// As fast as `connections` connections go (closed loop): the maximum rate.
    Closed { connections: u32 },
    /// `rate` requests a second whatever the answers take (open loop), latencies measured
    /// from when each request was due (oha's latency correction).
    Open { rate: f64 },
}

/// Loads `target` for `seconds`; panics when an answer has another status.
pub fn run(oha: &PathBuf, target: &Target, load: Load, seconds: u64) -> Measured {
    let mut cmd = Command::new(oha);
    cmd.args(["--no-tui", "--output-format", "json", "-z"]).arg(format!("{seconds}s"));
    match load {
        Load::Closed { connections } => {
            cmd.arg("-c").arg(connections.to_string());
        }
        Load::Open { rate } => {
            // Enough connections that a slow answer never holds the next one back.
            cmd.args(["-c", "256", "--latency-correction", "-q"]).arg(format!("{rate:.0}"));
        }
    }
    cmd.arg("-m").arg(target.method);
    for header in &target.headers {
        cmd.arg("-H").arg(header);
    }
    if let Some(body) = &target.body {
        cmd.arg("-d").arg(body);
    }
    cmd.arg(&target.url);
    let out = cmd.output().expect("run oha");
    assert!(out.status.success(), "oha failed: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("oha's JSON report");
    let statuses = report["statusCodeDistribution"].as_object().cloned().unwrap_or_default();
    let wanted = target.status.to_string();
    // No answer at all within the load's time: slower than that (printed as such).
    if statuses.is_empty() {
        return Measured { rps: 0.0, p50_ms: f64::INFINITY, p99_ms: f64::INFINITY };
    }
    assert!(
        statuses.keys().all(|s| *s == wanted),
        "{} {}: answers {statuses:?}, errors {}",
        target.method,
        target.url,
        report["errorDistribution"]
    );
    let ms = |p: &str| report["latencyPercentiles"][p].as_f64().unwrap_or(f64::NAN) * 1000.0;
    Measured { rps: report["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0), p50_ms: ms("p50"), p99_ms: ms("p99") }
}
