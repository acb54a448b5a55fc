//! Loads made with reqwest, where oha's one repeated request will not do: payers paying a
//! product on its page (the form read, then posted), and subscriptions paused, resumed and
//! moved between plans through the API, each worker on a subscription of its own.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::oha::Measured;
use crate::server::Client;

/// `n` workers, each doing `step(worker)` again as soon as its last ended, for `seconds`: per kind of step (the first of what `step` answers), the steps a second and
/// the p50 and p99 of what each took (the second).
pub async fn closed<F, Fut>(seconds: u64, n: usize, kinds: usize, step: F) -> Vec<Measured>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = (usize, Duration)>,
{
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let step = &step;
    let worker = |i: usize| async move {
        let mut took = Vec::new();
        while Instant::now() < until {
            took.push(step(i).await);
        }
        took
    };
    let all = futures::future::join_all((0..n).map(worker)).await.concat();
    per_kind(all, kinds, started.elapsed())
}

/// `n` workers doing `step` at `rate` steps a second between them for `seconds`, each on a
/// schedule kept whatever the answers take (an open loop): as [`closed`], with each step
/// counted from when it was due (a worker that fell behind counts its wait, so a slow answer
/// is not hidden by the steps it held back).
pub async fn open<F, Fut>(seconds: u64, n: usize, rate: f64, kinds: usize, step: F) -> Vec<Measured>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = (usize, Duration)>,
{
    let period = Duration::from_secs_f64(n as f64 / rate.max(0.1));
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let step = &step;
    let worker = |i: usize| async move {
        let mut took = Vec::new();
        let mut due = started + period.mul_f64(i as f64 / n as f64);
        while due < until {
            tokio::time::sleep_until(due.into()).await;
            let late = Instant::now().saturating_duration_since(due);
            let (kind, answered) = step(i).await;
            took.push((kind, late + answered));
            due += period;
        }
        took
    };
    let all = futures::future::join_all((0..n).map(worker)).await.concat();
    per_kind(all, kinds, started.elapsed())
}

fn per_kind(all: Vec<(usize, Duration)>, kinds: usize, elapsed: Duration) -> Vec<Measured> {
    (0..kinds)
        .map(|kind| {
            let mut ms: Vec<f64> =
                all.iter().filter(|(k, _)| *k == kind).map(|(_, took)| took.as_secs_f64() * 1000.0).collect();
            ms.sort_by(f64::total_cmp);
            let at = |q: f64| ms.get(((ms.len().max(1) - 1) as f64 * q).round() as usize).copied().unwrap_or(f64::NAN);
            Measured { rps: ms.len() as f64 / elapsed.as_secs_f64(), p50_ms: at(0.5), p99_ms: at(0.99) }
        })
        .collect()
}

/// One payment of `product` on its page: the time its form's POST took.
pub async fn pay(client: &Client, product: &str) -> (usize, Duration) {
    (0, client.pay(product, "payer@example.com").await)
}

/// What the subscription writes do, in the order each worker does them.
pub const SUBSCRIPTION_WRITES: [&str; 3] =
    ["POST /subscriptions/{id}/pause", "POST /subscriptions/{id}/resume", "POST /subscriptions/{id}/change_plan"];

/// `n` subscriptions to `plan`, each of a customer of its own, with the card that succeeds.
pub async fn subscribers(client: &Client, plan: &str, n: usize) -> Vec<Subscriber> {
    let card = json!({"number": "4200000000000000", "exp_month": 12, "exp_year": 2040, "cvc": "123",
                      "holder": "Ann Lee"});
    let mut made = Vec::new();
    for i in 0..n {
        let customer = json!({"email": format!("subscriber{i}@example.com"), "ip": "203.0.113.9", "first_name": "Ann",
                               "last_name": "Lee"});
        let body = json!({"plan": {"id": plan}, "customer": customer, "card": card});
        let id = client.post("/subscriptions", &body).await["id"].as_str().unwrap().to_string();
        made.push(Subscriber { id, writes: AtomicUsize::new(0) });
    }
    made
}

/// A subscriber's subscription and how many writes it has had.
pub struct Subscriber {
    pub id: String,
    pub writes: AtomicUsize,
}

/// The next write of `subscriber`, on a subscription to the first of `plans` (two of one
/// price): it is paused now, resumed on its old schedule (nothing charged), then moved now to
/// the other plan (nothing due), and so on.
pub async fn subscription_write(client: &Client, subscriber: &Subscriber, plans: &[String; 2]) -> (usize, Duration) {
    let k = subscriber.writes.fetch_add(1, Ordering::Relaxed);
    let kind = k % 3;
    let (action, body) = match kind {
        0 => ("pause", json!({"at": "now"})),
        1 => ("resume", json!({"billing": "continue"})),
        _ => ("change_plan", json!({"plan": plans[(k / 3 + 1) % 2], "at": "now"})),
    };
    let (status, took, answer) = client.timed_post(&format!("/subscriptions/{}/{action}", subscriber.id), &body).await;
    assert_eq!(status, StatusCode::OK, "{action} of {}: {answer}", subscriber.id);
    (kind, took)
}

/// Prints one measured row.
pub fn print(label: &str, m: &Measured, how: &str) {
    println!("  {label:<40} {:>9.0} {:>8.2} {:>8.2}   ({how})", m.rps, m.p50_ms, m.p99_ms);
}
