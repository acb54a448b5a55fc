//! The revenue figures in the dashboard: MRR and its movements for the currency and mode
//! chosen, each movement reaching the subscriptions behind it, a form's problems named, and
//! the section only for the roles README's table gives it.

use reqwest::StatusCode;
use serde_json::json;

use super::accounts::invite_as;
use super::{api_shop, sign_up};
use crate::helpers::*;
use crate::revenue::{post_ok, subscribe_customer};
use crate::subscriptions::{advance, clock, plan};

db_tests! {
    async fn a_merchant_reads_mrr_and_reaches_the_subscriptions_behind_it(app) {
        let m = sign_up(&app, "Gym", "owner@example.com").await;
        let shop = api_shop(&m).await;
        let gold = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-10T10:00:00Z").await;
        let ann = subscribe_customer(&app, &shop, &gold, &clock, customer_body()).await;
        let bob = subscribe_customer(&app, &shop, &gold, &clock, json!({"email": "bob@example.com", "ip": "203.0.113.9"})).await;
        advance(&app, &shop, &clock, "2026-02-12T10:00:00Z").await;
        post_ok(&app, &shop, &format!("/subscriptions/{}/cancel", bob["id"].as_str().unwrap()), json!({})).await;

        let page = m.get("/dashboard/revenue?currency=EUR&test=true&from=2026-01-01&to=2026-02-28").await;
        assert_eq!(page.status, StatusCode::OK);
        let html = &page.html;
        assert!(html.contains("data-testid=\"mrr\">€9.90<") && html.contains("data-testid=\"subscribers\">1<"), "{html}");
        assert!(html.contains("<th scope=\"row\" data-label=\"Period\">2026-01</th>") && html.contains("€19.80"), "{html}");
        assert!(html.contains("role=\"img\" aria-label=\"MRR in EUR from 2026-01 to 2026-02, up to €19.80\""), "{html}");
        // February's churn reaches Bob's subscription.
        let marker = "data-testid=\"moved-churn\"";
        let link = html.split(marker).next().unwrap().rsplit("href=\"").next().unwrap().split('"').next().unwrap().replace("&#38;", "&");
        assert!(link.contains("from=2026-02-01") && link.contains("kind=churn"), "{link}");
        let churned = m.get(&link).await;
        assert_eq!(churned.status, StatusCode::OK);
        assert!(churned.html.contains(&format!("/dashboard/subscriptions/{}", bob["id"].as_str().unwrap())), "{}", churned.html);
        assert!(churned.html.contains("bob@example.com") && !churned.html.contains(ann["id"].as_str().unwrap()), "{}", churned.html);
        // Back to the figures it was reached from: the two months, by month.
        let back = "href=\"/dashboard/revenue?currency=EUR&#38;test=true&#38;from=2026-01-01&#38;to=2026-02-28&#38;interval=month\"";
        assert!(churned.html.contains(back), "{}", churned.html);
        // MRR per subscriber and month of the figures shown.
        let marker = "data-testid=\"export\"";
        let export = html.split(marker).next().unwrap().rsplit("href=\"").next().unwrap().split('"').next().unwrap().replace("&#38;", "&");
        assert_eq!(export, "/dashboard/revenue/subscribers.csv?currency=EUR&test=true&from=2026-01-01&to=2026-02-28");
        let csv = m.get(&export).await;
        assert_eq!(csv.status, StatusCode::OK);
        let (ann_id, bob_id) = (ann["customer"]["id"].as_str().unwrap(), bob["customer"]["id"].as_str().unwrap());
        let mut lines: Vec<&str> = csv.html.split("\r\n").filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.remove(0), "customer_id,email,2026-01,2026-02");
        lines.sort();
        let mut rows = vec![format!("{ann_id},ann@example.com,9.90,9.90"), format!("{bob_id},bob@example.com,9.90,0.00")];
        rows.sort();
        assert_eq!(lines, rows, "a row per customer");
        let everyone = m.get("/dashboard/revenue/movements?currency=EUR&test=true&from=2026-01-01&to=2026-02-28").await;
        assert!(everyone.html.contains(ann["id"].as_str().unwrap()) && everyone.html.contains(bob["id"].as_str().unwrap()));

        // With nothing chosen: the plans' currency, live, the last 12 months.
        let default = m.get("/dashboard/revenue").await;
        assert_eq!(default.status, StatusCode::OK);
        assert!(default.html.contains("<option value=\"EUR\" selected>") && default.html.contains("data-testid=\"mrr\">€0.00<"), "{}", default.html);
        for (query, problem) in [("?currency=EUR&interval=week", "must be day or month"), ("?currency=EUR&from=2026-03-01&to=2026-02-01", "must not be after to")] {
            let refused = m.get(&format!("/dashboard/revenue{query}")).await;
            assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{query}");
            assert!(refused.html.contains(problem) && !refused.html.contains("data-testid=\"mrr\""), "{query}: {}", refused.html);
        }
        let refused = m.get("/dashboard/revenue/movements?currency=EUR&kind=upgrade").await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("is not a kind of movement"), "{}", refused.html);

        // Analysts read the figures; developers and support do not see them.
        let analyst = invite_as(&app, &m, "analyst@example.com", "analyst").await;
        assert_eq!(analyst.get("/dashboard/revenue").await.status, StatusCode::OK);
        for role in ["developer", "support"] {
            let other = invite_as(&app, &m, &format!("{role}@example.com"), role).await;
            assert_eq!(other.get("/dashboard/revenue").await.status, StatusCode::FORBIDDEN, "{role}");
            assert_eq!(other.get("/dashboard/revenue/movements").await.status, StatusCode::FORBIDDEN, "{role}");
            assert_eq!(other.get("/dashboard/revenue/subscribers.csv").await.status, StatusCode::FORBIDDEN, "{role}");
            assert!(!other.get("/dashboard").await.html.contains("href=\"/dashboard/revenue\""), "{role}");
        }
        // Another shop's owner sees none of it.
        let other = sign_up(&app, "Other", "other@example.com").await;
        let theirs = other.get("/dashboard/revenue?currency=EUR&test=true&from=2026-01-01&to=2026-02-28").await;
        assert!(theirs.html.contains("data-testid=\"mrr\">€0.00<") && !theirs.html.contains("€9.90"), "{}", theirs.html);
    }
}
