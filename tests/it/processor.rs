//! `/shop/processor`: choosing a processor, its accounts with sealed secrets, partial and
//! concurrent changes, refusals that store nothing, and the connection check against the
//! local gateway double.

use reqwest::StatusCode;
use rsa::pkcs8::{EncodePublicKey, LineEnding};
use serde_json::{Value, json};

use crate::dashboard::sign_up;
use crate::doubles::bepaid::{self as double};
use crate::helpers::*;

/// A processor's public key, as its back office shows it (PEM).
pub fn public_key() -> String {
    let private = rsa::RsaPrivateKey::new(&mut argon2::password_hash::rand_core::OsRng, 2048).unwrap();
    rsa::RsaPublicKey::from(&private).to_public_key_pem(LineEnding::LF).unwrap()
}

fn account(key: &str, secret: &str) -> Value {
    json!({"shop_id": double::SHOP_ID, "secret_key": secret, "public_key": key})
}

db_tests! {
    async fn a_shop_starts_simulated_and_connects_bepaid_with_its_secret_kept_sealed(app) {
        let shop = app.shop("Corner Books").await;
        let (status, processor) = app.get(&shop, "/shop/processor").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(processor, json!({"object": "processor", "kind": "simulated", "card_entry": "processor_page",
            "gateway_url": null, "checkout_url": null, "test": null, "live": null}), "bePaid's URLs only for bePaid");

        let gateway = double::Gateway::start().await;
        let key = public_key();
        let body = json!({"kind": "bepaid", "gateway_url": format!("{}/", gateway.url), "test": account(&key, double::SECRET)});
        let (status, processor) = app.put(&shop, "/shop/processor", &body).await;
        assert_eq!(status, StatusCode::OK, "{processor}");
        assert_eq!(processor["kind"], "bepaid");
        assert_eq!(processor["gateway_url"], gateway.url.as_str(), "kept without the trailing slash");
        assert_eq!(processor["test"], json!({"shop_id": "361", "secret_key_last4": "134d", "public_key": key.trim(),
                                             "webhook_secret_last4": null}));
        assert_eq!(processor["live"], Value::Null);
        assert!(!processor.to_string().contains(double::SECRET), "the secret key is never shown");
        let (_, again) = app.get(&shop, "/shop/processor").await;
        assert_eq!(again, processor);
        let row = paydesk::db::processors::find(&app.db, shop.id).await.unwrap().unwrap();
        assert!(!row.test_secret_sealed.unwrap().contains(double::SECRET), "sealed at rest");

        // Another shop sees none of it.
        let other = app.shop("Other").await;
        let (_, theirs) = app.get(&other, "/shop/processor").await;
        assert_eq!(theirs["kind"], "simulated");
    }

    async fn an_incomplete_or_wrong_change_is_refused_and_stores_nothing(app) {
        let shop = app.shop("Corner Books").await;
        let key = public_key();
        let (status, body) = app.put(&shop, "/shop/processor", &json!({"kind": "bepaid"})).await;
        assert_invalid(status, &body, "test", &["can't be blank: give the test account, the live one, or both"]);
        let keyless = json!({"kind": "bepaid", "test": {"shop_id": "361", "secret_key": "s3cret"}});
        let (status, body) = app.put(&shop, "/shop/processor", &keyless).await;
        assert_invalid(status, &body, "test.public_key", &["can't be blank"]);
        let bad_key = json!({"kind": "bepaid", "test": account("not a key", "s3cret")});
        let (status, body) = app.put(&shop, "/shop/processor", &bad_key).await;
        assert_invalid(status, &body, "test.public_key",
            &["is not an RSA public key: paste the key exactly as the processor's back office shows it"]);
        let bad_url = json!({"kind": "bepaid", "test": account(&key, "s3cret"), "gateway_url": "gateway.bepaid.by"});
        let (status, body) = app.put(&shop, "/shop/processor", &bad_url).await;
        assert_invalid(status, &body, "gateway_url", &["is not an absolute http or https URL without a query"]);
        let (status, body) = app.put(&shop, "/shop/processor", &json!({"kind": "stripe", "card_entry": 5})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let (_, processor) = app.get(&shop, "/shop/processor").await;
        assert_eq!((processor["kind"].as_str(), &processor["test"]), (Some("simulated"), &Value::Null), "nothing stored");

        // Removing the last account of a bePaid processor is refused too.
        let whole = json!({"kind": "bepaid", "test": account(&key, "s3cret")});
        assert_eq!(app.put(&shop, "/shop/processor", &whole).await.0, StatusCode::OK);
        let (status, body) = app.put(&shop, "/shop/processor", &json!({"test": null})).await;
        assert_invalid(status, &body, "test", &["can't be blank: give the test account, the live one, or both"]);
        let (_, processor) = app.get(&shop, "/shop/processor").await;
        assert_eq!(processor["test"]["secret_key_last4"], "cret");
    }

    async fn only_what_is_sent_changes_even_when_two_changes_meet(app) {
        let shop = app.shop("Corner Books").await;
        let key = public_key();
        let start = json!({"kind": "bepaid", "card_entry": "paydesk_page", "test": account(&key, "test-secret-1")});
        assert_eq!(app.put(&shop, "/shop/processor", &start).await.0, StatusCode::OK);
        // A new shop id only: the secret and key stay.
        let (status, processor) = app.put(&shop, "/shop/processor", &json!({"test": {"shop_id": 362}})).await;
        assert_eq!(status, StatusCode::OK, "{processor}");
        assert_eq!(processor["test"]["shop_id"], "362");
        assert_eq!(processor["test"]["secret_key_last4"], "et-1");
        assert_eq!(processor["card_entry"], "paydesk_page");

        // Two merchants at once, one setting the live account, the other the test secret:
        // both changes are kept, every time.
        for round in 0..5 {
            let live = json!({"live": account(&key, &format!("live-secret-{round}"))});
            let test = json!({"test": {"secret_key": format!("test-secret-{round}")}});
            let (a, b) = tokio::join!(app.put(&shop, "/shop/processor", &live), app.put(&shop, "/shop/processor", &test));
            assert_eq!((a.0, b.0), (StatusCode::OK, StatusCode::OK), "{} {}", a.1, b.1);
            let (_, processor) = app.get(&shop, "/shop/processor").await;
            assert_eq!(processor["live"]["secret_key_last4"], format!("et-{round}"));
            assert_eq!(processor["test"]["secret_key_last4"], format!("et-{round}"));
        }
        // Back to the simulation: the accounts stay for later. Accounts sent with it mean
        // nothing to the simulation: they are ignored, never refused (schemathesis).
        let (_, processor) = app.put(&shop, "/shop/processor", &json!({"kind": "simulated"})).await;
        assert_eq!((processor["kind"].as_str(), processor["live"]["shop_id"].as_str()), (Some("simulated"), Some("361")));
        let beside = json!({"kind": "simulated", "live": {"public_key": "not a key", "shop_id": "9"}, "test": null});
        let (status, processor) = app.put(&shop, "/shop/processor", &beside).await;
        assert_eq!(status, StatusCode::OK, "{processor}");
        assert_eq!((processor["live"]["shop_id"].as_str(), processor["test"]["shop_id"].as_str()), (Some("361"), Some("362")));
    }

    async fn a_shop_goes_from_stripe_back_to_the_simulation_and_keeps_its_stripe_account(app) {
        let shop = app.shop("Corner Books").await;
        let stripe = json!({"kind": "stripe", "test": {"secret_key": "sk_test_4eC39HqLyjWDarjtT1zdp7dc"}});
        let (status, processor) = app.put(&shop, "/shop/processor", &stripe).await;
        assert_eq!(status, StatusCode::OK, "{processor}");
        assert_eq!((&processor["gateway_url"], &processor["checkout_url"]), (&Value::Null, &Value::Null), "no bePaid URLs");
        let (status, processor) = app.put(&shop, "/shop/processor", &json!({"kind": "simulated"})).await;
        assert_eq!(status, StatusCode::OK, "{processor}");
        assert_eq!((processor["kind"].as_str(), processor["test"]["secret_key_last4"].as_str()), (Some("simulated"), Some("p7dc")));
        let (status, processor) = app.put(&shop, "/shop/processor", &json!({"kind": "stripe"})).await;
        assert_eq!((status, processor["kind"].as_str()), (StatusCode::OK, Some("stripe")), "and back again: {processor}");
    }

    async fn the_connection_check_says_whether_the_processor_takes_each_account(app) {
        let shop = app.shop("Corner Books").await;
        let (status, none) = app.post(&shop, "/shop/processor/check", &json!({})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(none, json!({"object": "processor_check", "test": null, "live": null}));
        let gateway = double::Gateway::start().await;
        let key = public_key();
        let body = json!({"kind": "bepaid", "gateway_url": gateway.url, "test": account(&key, double::SECRET),
                          "live": account(&key, "a-wrong-secret")});
        assert_eq!(app.put(&shop, "/shop/processor", &body).await.0, StatusCode::OK);
        let (status, checked) = app.post(&shop, "/shop/processor/check", &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{checked}");
        assert_eq!(checked["test"], json!({"works": true, "message": null}));
        assert_eq!(checked["live"]["works"], false);
        let why = checked["live"]["message"].as_str().unwrap();
        assert!(why.contains("refused the account's credentials"), "{why}");
        assert_eq!(gateway.received(), 0, "a check moves no money");
    }

    async fn the_dashboard_sets_the_processor_keeps_secrets_out_of_pages_and_checks_the_connection(app) {
        let m = sign_up(&app, "Corner Books", "owner@example.com").await;
        assert!(m.get("/dashboard/settings").await.html.contains("Simulated (no money moves)"));
        let gateway = double::Gateway::start().await;
        let key = public_key();

        // Refused: a bePaid processor without an account; the typed secret is not sent back.
        let refused = m.post("/dashboard/settings/processor", &[("kind", "bepaid"), ("card_entry", "processor_page"),
            ("gateway_url", &gateway.url), ("checkout_url", "https://checkout.bepaid.by"),
            ("test.shop_id", ""), ("test.secret_key", "typed-secret"), ("test.public_key", "")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.html);
        assert!(refused.html.contains("Please correct the marked fields."));
        assert!(!refused.html.contains("typed-secret"), "a typed secret key is not shown again");

        let saved = m.post("/dashboard/settings/processor", &[("kind", "bepaid"), ("card_entry", "processor_page"),
            ("gateway_url", &gateway.url), ("checkout_url", "https://checkout.bepaid.by"),
            ("test.shop_id", double::SHOP_ID), ("test.secret_key", double::SECRET), ("test.public_key", &key),
            ("live.shop_id", ""), ("live.secret_key", ""), ("live.public_key", "")]).await;
        assert_eq!((saved.status, saved.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/settings/processor"), "{}", saved.html);
        let page = m.get("/dashboard/settings/processor").await;
        assert!(page.html.contains("Payment processor saved."));
        assert!(page.html.contains("Stored, ending in 134d; leave empty to keep it."));
        assert!(!page.html.contains(double::SECRET), "the secret key is never on a page");
        assert!(m.get("/dashboard/settings").await.html.contains("bePaid (BeGateway)"));

        // An empty secret field keeps the stored key; the check says the processor takes it.
        let kept = m.post("/dashboard/settings/processor", &[("kind", "bepaid"), ("card_entry", "paydesk_page"),
            ("gateway_url", &gateway.url), ("checkout_url", "https://checkout.bepaid.by"),
            ("test.shop_id", double::SHOP_ID), ("test.secret_key", ""), ("test.public_key", &key)]).await;
        assert_eq!(kept.status, StatusCode::SEE_OTHER, "{}", kept.html);
        let shop = crate::dashboard::api_shop(&m).await;
        let (_, processor) = app.get(&shop, "/shop/processor").await;
        assert_eq!((processor["card_entry"].as_str(), processor["test"]["secret_key_last4"].as_str()), (Some("paydesk_page"), Some("134d")));
        let checked = m.post("/dashboard/settings/processor/check", &[]).await;
        assert_eq!(checked.status, StatusCode::SEE_OTHER);
        assert!(m.get("/dashboard/settings/processor").await.html.contains("The test account: the processor takes it."));
    }
}

db_tests! {
    async fn a_real_processors_test_subscription_is_not_told_outcomes_it_would_not_follow(app) {
        let (shop, gateway) = crate::bepaid_pay::bepaid_shop(&app).await;
        let plan = crate::subscriptions::plan(&app, &shop, json!({})).await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(),
                          "card": crate::subscriptions::card_json("4200000000000000")});
        let (_, sub) = app.post(&shop, "/subscriptions", &body).await;
        let path = format!("/subscriptions/{}/test_card_outcome", sub["id"].as_str().unwrap());
        let (status, body) = app.post(&shop, &path, &json!({"outcome": "declined"})).await;
        assert_eq!((status, &body["code"]), (StatusCode::CONFLICT, &json!("invalid_state")), "{body}");
        assert!(body["message"].as_str().unwrap().contains("processor's test cards"), "{body}");
        let (_, kept) = app.get(&shop, &format!("/subscriptions/{}", sub["id"].as_str().unwrap())).await;
        assert_eq!(kept["test_card_schedule"], json!([]), "nothing listed that would not happen");
        assert_eq!(gateway.transactions().len(), 1);
    }
}
