//! localstripe (PyPI's `localstripe`, which `.ci/run` installs in `.ci/venv`): a stateful
//! imitation of Stripe's API, started once for the test binary on a free loopback port. It
//! ends with the tests: a small Python parent kills it when the tests' end of its stdin closes.
//! The tests fail, never skip, when it cannot start.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use paydesk::external::acquirer::stripe::wire::Form;
use tokio::sync::OnceCell;

/// A secret key localstripe takes (it takes any `sk_…`).
pub const SECRET: &str = "sk_test_paydesk_localstripe";

struct Running {
    url: String,
    _parent: Child,
}

static LOCALSTRIPE: OnceCell<Running> = OnceCell::const_new();

fn program() -> String {
    std::env::var("PAYDESK_TEST_LOCALSTRIPE")
        .unwrap_or_else(|_| format!("{}/.ci/venv/bin/localstripe", env!("CARGO_MANIFEST_DIR")))
}

/// localstripe's base URL, started on first use.
pub async fn url() -> String {
    LOCALSTRIPE.get_or_init(start).await.url.clone()
}

async fn start() -> Running {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let program = program();
    assert!(
        std::path::Path::new(&program).exists(),
        "localstripe is needed for the Stripe tests: run .ci/run, or .ci/venv/bin/pip install localstripe==1.15.10"
    );
    // The parent waits on its stdin (held by this process until it exits), then kills it.
    let watch = "import subprocess, sys\n\
                 child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\
                 sys.stdin.read()\n\
                 child.kill()\n";
    #[allow(clippy::zombie_processes)] // held for the tests' whole run: its stdin closing ends it
    let parent = Command::new("python3")
        .args(["-c", watch, &program, "--port", &port.to_string(), "--from-scratch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("python3 starts localstripe");
    let url = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let patience = crate::helpers::Patience::start();
    while !patience.spent() {
        let answered = client.get(format!("{url}/v1/customers")).bearer_auth(SECRET).send().await;
        if answered.is_ok_and(|r| r.status().is_success()) {
            return Running { url, _parent: parent };
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("localstripe did not start on port {port}");
}

/// Registers a webhook endpoint at localstripe: every event it makes is sent, signed with
/// `secret`, to `url` (localstripe sends each event to every endpoint registered).
pub async fn register_webhook(id: &str, url: &str, secret: &str) {
    post(&format!("/_config/webhooks/{id}"), &[("url", url), ("secret", secret)]).await;
}

/// POSTs a form to localstripe (`/v1/...`): the object it answers.
pub async fn post(path: &str, fields: &[(&str, &str)]) -> serde_json::Value {
    let base = self::url().await;
    let form = fields.iter().fold(Form::new(), |form, (k, v)| form.set(k, v));
    let answered = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .bearer_auth(SECRET)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form.encode())
        .send()
        .await
        .unwrap();
    assert!(answered.status().is_success(), "{path}: {}", answered.status());
    answered.json().await.unwrap_or(serde_json::Value::Null)
}

/// GETs a localstripe object (`/v1/...`).
pub async fn get(path: &str) -> serde_json::Value {
    let base = self::url().await;
    let answered = reqwest::Client::new().get(format!("{base}{path}")).bearer_auth(SECRET).send().await.unwrap();
    assert!(answered.status().is_success(), "{path}");
    answered.json().await.unwrap()
}

/// localstripe's PaymentIntents that carry paydesk's `reference`.
pub async fn intents_of(reference: &str) -> Vec<serde_json::Value> {
    listed("/v1/payment_intents", |pi| pi["metadata"]["paydesk_reference"] == reference).await
}

/// localstripe's events about an object that carries paydesk's `reference`.
pub async fn events_about(reference: &str) -> Vec<serde_json::Value> {
    listed("/v1/events", |e| e["data"]["object"]["metadata"]["paydesk_reference"] == reference).await
}

/// Every object of the list at `path` that `wanted` keeps, page by page.
async fn listed(path: &str, wanted: impl Fn(&serde_json::Value) -> bool) -> Vec<serde_json::Value> {
    let mut found = Vec::new();
    let mut after = String::new();
    loop {
        let list = get(&format!("{path}?limit=100{after}")).await;
        let page = list["data"].as_array().unwrap();
        found.extend(page.iter().filter(|o| wanted(o)).cloned());
        match (list["has_more"].as_bool(), page.last()) {
            (Some(true), Some(last)) => after = format!("&starting_after={}", last["id"].as_str().unwrap()),
            _ => return found,
        }
    }
}
