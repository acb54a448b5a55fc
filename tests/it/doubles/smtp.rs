//! A real SMTP server for the mail tests: PyPI's `aiosmtpd` (installed in `.ci/venv` by
//! `.ci/run`) running `smtp_server.py` on a free loopback port. It keeps each message it takes
//! as JSON under its own folder, and shows faults chosen by the recipient's address
//! (`+temp2`, `+reject`, `+slow3`, `+drop`: see the script). It ends when the tests' end of its
//! stdin closes. The tests fail, never skip, when it cannot start.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::sync::OnceCell;

/// A running server.
pub struct Smtp {
    pub port: u16,
    folder: tempfile::TempDir,
    _process: Child,
}

/// A message as the server took it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Received {
    pub subject: String,
    pub message_id: String,
    pub from: String,
    pub to: String,
    pub text: String,
    pub html: String,
    pub headers: std::collections::HashMap<String, String>,
}

static SHARED: OnceCell<Smtp> = OnceCell::const_new();

fn python() -> String {
    std::env::var("PAYDESK_TEST_PYTHON")
        .unwrap_or_else(|_| format!("{}/.ci/venv/bin/python", env!("CARGO_MANIFEST_DIR")))
}

impl Smtp {
    /// The server the test binary shares, started on first use.
    pub async fn shared() -> &'static Smtp {
        SHARED.get_or_init(|| Smtp::start_on(free_port())).await
    }

    /// A server of this test's own on `port` (which may have been given to an app before the
    /// server was there).
    pub async fn start_on(port: u16) -> Smtp {
        let python = python();
        assert!(
            std::path::Path::new(&python).exists(),
            "aiosmtpd is needed for the mail tests: run .ci/run, or .ci/venv/bin/pip install aiosmtpd==1.4.6"
        );
        let folder = tempfile::tempdir().unwrap();
        let script = format!("{}/tests/it/doubles/smtp_server.py", env!("CARGO_MANIFEST_DIR"));
        #[allow(clippy::zombie_processes)] // it ends when its stdin closes, with the test or binary
        let process = Command::new(python)
            .args([&script, &port.to_string(), folder.path().join("mail").to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("python starts the SMTP server");
        let patience = crate::helpers::Patience::start();
        while !patience.spent() {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Smtp { port, folder, _process: process };
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the SMTP server did not start on port {port}");
    }

    /// The `PAYDESK_SMTP_URL` of this server (plain text on loopback; a generous timeout).
    pub fn url(&self) -> String {
        url_of(self.port)
    }

    fn inbox(&self, address: &str) -> PathBuf {
        self.folder.path().join("mail").join(address.to_lowercase())
    }

    /// Every message `address` got so far, in the order they came.
    pub fn received(&self, address: &str) -> Vec<Received> {
        let Ok(entries) = std::fs::read_dir(self.inbox(address)) else { return Vec::new() };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files.iter().map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap()).collect()
    }

    /// Waits (up to [`PATIENCE`](crate::helpers::PATIENCE)) until `address` got `count`
    /// messages; answers them.
    pub async fn wait_for(&self, address: &str, count: usize) -> Vec<Received> {
        let patience = crate::helpers::Patience::start();
        while !patience.spent() {
            let got = self.received(address);
            if got.len() >= count {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let got = self.received(address);
        panic!(
            "{address} got {} mails, not {count}: {:?}",
            got.len(),
            got.iter().map(|m| &m.subject).collect::<Vec<_>>()
        );
    }
}

/// The `PAYDESK_SMTP_URL` of a server on `port`, with a generous timeout: a busy machine's
/// slow answer is not taken for a lost one.
pub fn url_of(port: u16) -> String {
    url_with_timeout(port, 60)
}

/// The `PAYDESK_SMTP_URL` of a server on `port` that waits `seconds` for an answer: short, for
/// the tests of answers held past it (`+slow3`).
pub fn url_with_timeout(port: u16, seconds: u64) -> String {
    format!("smtp://127.0.0.1:{port}?tls=none&timeout={seconds}")
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
