//! The server's peak memory under many concurrent failed dashboard logins (argon2 runs under
//! a cap of two at once, whatever the load). Starts `paydesk serve` (the release binary) on a
//! fresh SQLite database, reads its resident memory, sends 60 concurrent logins to unknown
//! e-mail addresses each from its own loopback address (127.0.R.N, so the per-address limit does not
//! stop them before argon2 runs; three rounds), and prints the
//! peak resident memory (VmHWM) and the time per round.
//! Run with `cargo bench --bench logins` (pass another count: `-- 120`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let concurrent: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(60);
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_paydesk"))
        .env_clear()
        .env("DATABASE_URL", format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display()))
        .env("PAYDESK_LISTEN", format!("127.0.0.1:{port}"))
        .env("PAYDESK_SCHEDULER", "off")
        .env("RUST_LOG", "error")
        .arg("serve")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start paydesk");
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..200 {
        if client.get(format!("{base}/healthz")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let memory = |field: &str| -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", server.id())).unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with(field))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse().ok())
            .unwrap_or(0)
    };
    println!("failed dashboard logins: {concurrent} at once, 3 rounds (release build, SQLite)");
    println!("resident memory at rest: {:>6.1} MB", memory("VmRSS:") as f64 / 1024.0);
    for round in 1..=3u8 {
        let started = Instant::now();
        let logins = (0..concurrent).map(|i| {
            let base = base.clone();
            async move {
                // A browser of its own: the login page's CSRF cookie and token.
                let address = std::net::Ipv4Addr::new(127, 0, round, i as u8 + 1);
                let browser = reqwest::Client::builder()
                    .cookie_store(true)
                    .local_address(std::net::IpAddr::V4(address))
                    .build()
                    .unwrap();
                let page = browser.get(format!("{base}/dashboard/login")).send().await.unwrap().text().await.unwrap();
                let marker = "name=\"csrf\" value=\"";
                let start = page.find(marker).expect("a CSRF field") + marker.len();
                let csrf = page[start..].split('"').next().unwrap().to_string();
                let email = format!("nobody-{round}-{i}@example.com");
                let form = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs([
                        ("csrf", csrf.as_str()),
                        ("email", email.as_str()),
                        ("password", "not the password"),
                    ])
                    .finish();
                let post = browser
                    .post(format!("{base}/dashboard/login"))
                    .header("content-type", "application/x-www-form-urlencoded");
                post.body(form).send().await.unwrap().status()
            }
        });
        let statuses = futures::future::join_all(logins).await;
        let refused = statuses.iter().filter(|s| s.as_u16() == 422).count();
        let throttled = statuses.iter().filter(|s| s.as_u16() == 429).count();
        println!(
            "round {round}: {:>6.2} s, {refused} refused, {throttled} throttled; peak resident memory {:>6.1} MB",
            started.elapsed().as_secs_f64(),
            memory("VmHWM:") as f64 / 1024.0
        );
    }
    server.kill().ok();
    server.wait().ok();
}
