//! The MRR ledger under many changes (docs/revenue.md): a random mix of a thousand lifecycle
//! operations on a test clock, after which a rebuild gives exactly what was kept, and changes
//! fired at once on the same subscriptions, after which the movements still add up to the MRR
//! every day and each subscription's standing is its state's.

use std::collections::HashMap;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::coupons::coupon;
use crate::helpers::*;
use crate::revenue::{rebuilt_as_kept, subscribe_customer};
use crate::subscriptions::{advance, clock, plan};

/// A small deterministic generator (xorshift64*), so that a failing mix can be run again.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The shop's plans: monthly, dearer, yearly, weekly, with a trial, and one whose price holds
/// 19 % VAT; and a coupon for ever and one for three periods.
async fn catalogue(app: &TestApp, shop: &Shop) -> (Vec<String>, Vec<String>) {
    let (_, vat) = app.post(shop, "/tax_rates", &json!({"name": "VAT", "percentage": 19, "country": "DE"})).await;
    let mut plans = Vec::new();
    for change in [
        json!({}),
        json!({"plan": {"amount": 2990, "interval": 1, "interval_unit": "month"}}),
        json!({"plan": {"amount": 10_000, "interval": 12, "interval_unit": "month"}}),
        json!({"plan": {"amount": 500, "interval": 7, "interval_unit": "day"}}),
        json!({"trial": {"amount": 0, "interval": 3, "interval_unit": "day"}}),
        json!({"plan": {"amount": 1190, "interval": 1, "interval_unit": "month"}, "tax_rate_id": vat["id"]}),
    ] {
        plans.push(plan(app, shop, change).await);
    }
    coupon(app, shop, json!({"code": "EVER", "percent_off": 20, "duration": "forever"})).await;
    coupon(app, shop, json!({"code": "THREE", "percent_off": 50, "duration": "repeating", "duration_in_periods": 3}))
        .await;
    (plans, vec!["EVER".into(), "THREE".into()])
}

/// The shop's movements as kept, in the order made.
async fn ledger(app: &TestApp, shop: &Shop) -> Vec<paydesk::db::entities::mrr_movements::Model> {
    paydesk::db::mrr::of_shop(&app.db, shop.id).await.unwrap()
}

/// What the ledger says of itself, whatever order its movements were made in: each
/// subscription's movements chain (each one's change is from its standing before to the one
/// after), each customer holds no less than nothing and is one subscriber at most, and each
/// subscription's last standing is its state's.
async fn consistent(app: &TestApp, shop: &Shop) {
    let rows = ledger(app, shop).await;
    let mut standing: HashMap<&str, (i64, i64)> = HashMap::new();
    let mut held: HashMap<&str, (i64, i64, i64)> = HashMap::new();
    for m in &rows {
        let before = standing.insert(&m.subscription_id, (m.mrr_after, m.paused_after)).unwrap_or_default();
        assert_eq!((m.mrr, m.paused), (m.mrr_after - before.0, m.paused_after - before.1), "chain: {m:?}");
        let h = held.entry(&m.customer_id).or_default();
        *h = (h.0 + m.mrr, h.1 + m.paused, h.2 + m.subscribers);
        assert!(h.0 >= 0 && h.1 >= 0 && (0..=1).contains(&h.2), "holding {h:?} after {m:?}");
        assert_eq!(h.2, i64::from(h.0 > 0), "a subscriber while holding MRR: {m:?}");
    }
    for (id, (mrr, paused)) in standing {
        let (_, sub) = app.get(shop, &format!("/subscriptions/{id}")).await;
        let state = sub["state"].as_str().unwrap();
        match state {
            "paused" => assert_eq!(mrr, 0, "{id} {state}"),
            "active" | "failed_attempt" | "redirecting" => assert!(mrr > 0 && paused == 0, "{id} {state}: {mrr}"),
            _ => assert_eq!((mrr, paused), (0, 0), "{id} {state}"),
        }
    }
}

/// The figures by day agree with the ledger read subscription by subscription: MRR at each
/// day's end is the sum of each subscription's last standing by then.
async fn figures_add_up(app: &TestApp, shop: &Shop, from: &str, to: &str) {
    let rows = ledger(app, shop).await;
    let (status, days) =
        app.get(shop, &format!("/revenue/mrr?currency=EUR&test=true&interval=day&from={from}&to={to}")).await;
    assert_eq!(status, StatusCode::OK, "{days}");
    for day in days["data"].as_array().unwrap() {
        let end = chrono::NaiveDate::parse_from_str(day["end"].as_str().unwrap(), "%Y-%m-%d").unwrap();
        let until = end.succ_opt().unwrap().and_hms_opt(0, 0, 0).unwrap().and_utc();
        let mut last: HashMap<&str, (i64, i64)> = HashMap::new();
        for m in rows.iter().filter(|m| m.occurred_at < until) {
            last.insert(&m.subscription_id, (m.mrr_after, m.paused_after));
        }
        let (mrr, paused) = last.values().fold((0, 0), |(a, b), (m, p)| (a + m, b + p));
        assert_eq!((day["mrr"].as_i64().unwrap(), day["paused_mrr"].as_i64().unwrap()), (mrr, paused), "{day}");
    }
}

/// MRR per subscriber per month read two movements at a time (each customer's spread over
/// pages) is what one page reads, and each month's column adds up to its MRR.
async fn every_page_size_reads_the_same_subscribers(app: &TestApp, shop: &Shop, to: &str) {
    use paydesk::domain::mrr::{figures::Range, subscribers::Months};
    use paydesk::services::revenue::{SUBSCRIBERS_PAGE, subscribers};
    let today = chrono::Utc::now().date_naive();
    let range = Range::parse(Some("2026-01-01"), Some(to), None, today).unwrap();
    let months = Months::of(&range, chrono_tz::UTC);
    let ledger = (shop.id, true, paydesk::domain::currency::find("EUR").unwrap());
    let read = |page: u64| {
        let months = months.clone();
        async move {
            let (mut rows, mut carry) = (Vec::new(), None);
            loop {
                let (found, next) = subscribers(&app.db, ledger, &months, carry, page).await.unwrap();
                rows.extend(found.into_iter().map(|r| (r.customer_id, r.email, r.mrr)));
                match next {
                    Some(next) => carry = Some(next),
                    None => return rows,
                }
            }
        }
    };
    let (whole, by_two) = (read(SUBSCRIBERS_PAGE).await, read(2).await);
    assert!(whole.len() >= 3, "{whole:?}");
    assert_eq!(by_two, whole, "two movements a page");
    let query = format!("/revenue/mrr?currency=EUR&test=true&from=2026-01-01&to={to}");
    let (_, figures) = app.get(shop, &query).await;
    for (i, month) in figures["data"].as_array().unwrap().iter().enumerate() {
        let column: i64 = whole.iter().map(|(_, _, mrr)| mrr[i]).sum();
        assert_eq!(column, month["mrr"].as_i64().unwrap(), "{month}");
    }
}

db_tests! {
    async fn a_rebuild_after_a_thousand_random_operations_gives_what_was_kept(app) {
        let shop = app.shop("Gym").await;
        let (plans, coupons) = catalogue(&app, &shop).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let mut now = chrono::DateTime::parse_from_rfc3339("2026-01-01T10:00:00Z").unwrap().to_utc();
        let emails: Vec<String> = (0..6).map(|i| format!("c{i}@example.com")).collect();
        let mut customers: HashMap<String, Value> = HashMap::new();
        let mut subs: Vec<String> = Vec::new();
        let mut dice = Dice(0x9E37_79B9_7F4A_7C15);
        let mut done: HashMap<&str, usize> = HashMap::new();
        for _ in 0..1000 {
            let roll = dice.below(100);
            if subs.is_empty() || roll < 10 {
                let email = dice.pick(&emails).clone();
                let who = customers.get(&email).cloned().unwrap_or_else(|| json!({"email": email, "ip": "203.0.113.9"}));
                let plan = dice.pick(&plans).clone();
                let sub = subscribe_customer(&app, &shop, &plan, &clock, who).await;
                customers.insert(email, json!({"id": sub["customer"]["id"]}));
                subs.push(sub["id"].as_str().unwrap().to_string());
                *done.entry("subscribe").or_default() += 1;
                continue;
            }
            if roll < 40 {
                now += chrono::Duration::hours(1 + dice.below(72) as i64);
                advance(&app, &shop, &clock, &now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)).await;
                *done.entry("advance").or_default() += 1;
                continue;
            }
            let id = dice.pick(&subs).clone();
            let (what, path, body) = match roll {
                40..55 => {
                    let at = if dice.below(2) == 0 { "now" } else { "period_end" };
                    ("change_plan", format!("/subscriptions/{id}/change_plan"), json!({"plan": dice.pick(&plans), "at": at}))
                }
                55..63 => ("pause", format!("/subscriptions/{id}/pause"), json!({})),
                63..71 => ("resume", format!("/subscriptions/{id}/resume"), json!({})),
                71..75 => ("cancel", format!("/subscriptions/{id}/cancel"), json!({})),
                75..80 => ("cancel_at_period_end", format!("/subscriptions/{id}"), json!({"cancel_at_period_end": dice.below(3) > 0})),
                80..87 => ("discount", format!("/subscriptions/{id}/discount"), json!({"coupon": dice.pick(&coupons)})),
                87..90 => {
                    let (status, _) = send(app.req(&shop, reqwest::Method::DELETE, &format!("/subscriptions/{id}/discount"))).await;
                    assert!(status.is_success() || status.is_client_error(), "{status}");
                    *done.entry("remove_discount").or_default() += usize::from(status.is_success());
                    continue;
                }
                _ => {
                    let outcome = if dice.below(3) == 0 { "declined" } else { "success" };
                    ("card", format!("/subscriptions/{id}/test_card_outcome"), json!({"outcome": outcome}))
                }
            };
            let (status, answer) = app.post(&shop, &path, &body).await;
            assert!(status.is_success() || status.is_client_error(), "{what}: {status} {answer}");
            *done.entry(what).or_default() += usize::from(status.is_success());
        }
        // Every kind of operation happened, many times.
        for what in ["subscribe", "advance", "change_plan", "pause", "resume", "cancel", "cancel_at_period_end", "discount", "remove_discount", "card"] {
            assert!(done.get(what).copied().unwrap_or(0) >= 5, "{what} too rare: {done:?}");
        }
        let kept = ledger(&app, &shop).await;
        let kinds: std::collections::HashSet<&str> = kept.iter().map(|m| m.kind.as_str()).collect();
        assert_eq!(kinds.len(), 7, "every kind of movement was made: {kinds:?}");
        consistent(&app, &shop).await;
        figures_add_up(&app, &shop, "2026-01-01", &now.date_naive().to_string()).await;
        every_page_size_reads_the_same_subscribers(&app, &shop, &now.date_naive().to_string()).await;
        rebuilt_as_kept(&app, &shop).await;
    }

    async fn changes_fired_at_once_leave_movements_that_add_up_every_day(app) {
        let shop = app.shop("Gym").await;
        let (plans, _) = catalogue(&app, &shop).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        // One customer with three subscriptions, and three customers with one each.
        let ann = subscribe_customer(&app, &shop, &plans[0], &clock, customer_body()).await;
        let mut subs = vec![ann["id"].as_str().unwrap().to_string()];
        for plan in [&plans[1], &plans[2]] {
            let sub = subscribe_customer(&app, &shop, plan, &clock, json!({"id": ann["customer"]["id"]})).await;
            subs.push(sub["id"].as_str().unwrap().to_string());
        }
        for i in 0..3 {
            let who = json!({"email": format!("c{i}@example.com"), "ip": "203.0.113.9"});
            subs.push(subscribe_customer(&app, &shop, &plans[0], &clock, who).await["id"].as_str().unwrap().to_string());
        }
        for (round, at) in ["2026-01-10T10:00:00Z", "2026-01-20T10:00:00Z", "2026-02-05T10:00:00Z"].iter().enumerate() {
            let mut requests = Vec::new();
            for (i, id) in subs.iter().enumerate() {
                let up = &plans[(i + round + 1) % 3];
                let down = &plans[(i + round) % 3];
                for (path, body) in [
                    (format!("/subscriptions/{id}/change_plan"), json!({"plan": up})),
                    (format!("/subscriptions/{id}/change_plan"), json!({"plan": down})),
                    (format!("/subscriptions/{id}/pause"), json!({})),
                    (format!("/subscriptions/{id}/resume"), json!({})),
                    (format!("/subscriptions/{id}/cancel"), json!({})),
                ] {
                    // The cancels only in the last round, so the first ones find something to change.
                    if path.ends_with("/cancel") && round < 2 && i % 2 == 0 {
                        continue;
                    }
                    let request = app.req(&shop, reqwest::Method::POST, &path).json(&body);
                    requests.push(async move { send(request).await });
                }
            }
            for (status, answer) in futures::future::join_all(requests).await {
                assert!(status.is_success() || status.is_client_error(), "{status} {answer}");
            }
            advance(&app, &shop, &clock, at).await;
        }
        consistent(&app, &shop).await;
        figures_add_up(&app, &shop, "2026-01-01", "2026-02-05").await;
    }
}
