//! Taxed sales over HTTP: a product or plan names one of the shop's rates and whether its
//! price holds the tax; each charge keeps the tax it was made with, and its invoice says the
//! same. A business in another EU country, by its VAT id, is reverse-charged.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::invoices::{invoices, set_seller};
use crate::stripe_pay::{awaiting_card, saved_card_behaves_as, session_of, stripe_shop};
use crate::subscriptions::{advance, card_json, clock};

async fn rate(app: &TestApp, shop: &Shop, body: Value) -> String {
    let (status, rate) = app.post(shop, "/tax_rates", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{rate}");
    rate["id"].as_str().unwrap().to_string()
}

async fn product(app: &TestApp, shop: &Shop, change: Value) -> String {
    let mut body = test_product_body();
    body["amount"] = json!(10_000);
    for (k, v) in change.as_object().unwrap() {
        body[k] = v.clone();
    }
    app.product(shop, &body).await["id"].as_str().unwrap().to_string()
}

async fn payments(app: &TestApp, shop: &Shop) -> Vec<Value> {
    let (status, list) = app.get(shop, "/payments?status=succeeded&limit=100").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list.as_array().unwrap().clone()
}

/// A line's net, tax and gross.
fn amounts(line: &Value) -> (i64, i64, i64) {
    (line["net"].as_i64().unwrap(), line["tax_amount"].as_i64().unwrap(), line["gross"].as_i64().unwrap())
}

db_tests! {
    async fn a_price_without_tax_is_charged_with_it_and_invoiced_to_the_cent(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let vat = rate(&app, &shop, json!({"name": "VAT", "percentage": 19, "country": "DE"})).await;
        let id = product(&app, &shop, json!({"tax_rate_id": vat, "tax_behavior": "exclusive"})).await;
        let (_, shown) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!((&shown["tax_rate_id"], &shown["tax_behavior"]), (&json!(vat), &json!("exclusive")));

        let page = app.page(&format!("/products/{id}/pay")).await;
        assert!(page.html.contains("Plus VAT 19 %: €19.00, €119.00 in all."), "{}", page.html);
        assert!(page.html.contains("Pay €119.00"), "the button says what is charged");
        assert_eq!(app.pay(&id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        let paid = payments(&app, &shop).await;
        assert_eq!(paid[0]["amount"], 11_900);
        assert_eq!(paid[0]["tax"], json!({"rate": vat, "behavior": "exclusive", "amount": 1_900, "reverse_charge": false}));
        let invoice = &invoices(&app, &shop, "").await[0];
        let line = &invoice["lines"][0];
        assert_eq!((&line["unit_price"], &line["tax_included"]), (&json!(10_000), &json!(false)));
        assert_eq!(amounts(line), (10_000, 1_900, 11_900));
        assert_eq!((&line["tax"]["category_code"], &line["tax"]["percentage"]), (&json!("S"), &json!(19.0)));
        assert_eq!((&invoice["net_total"], &invoice["tax_total"], &invoice["total"]), (&json!(10_000), &json!(1_900), &json!(11_900)));

        // €9.99 with its tax: 9.99 × 19 ÷ 119 = 1.595… → 1.60.
        let inclusive = product(&app, &shop, json!({"amount": 999, "tax_rate_id": vat})).await;
        let page = app.page(&format!("/products/{inclusive}/pay")).await;
        assert!(page.html.contains("Includes VAT 19 %: €1.60."), "{}", page.html);
        assert_eq!(app.pay(&inclusive, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        let paid = payments(&app, &shop).await;
        assert_eq!((&paid[0]["amount"], &paid[0]["tax"]["amount"]), (&json!(999), &json!(160)));
        assert_eq!(amounts(&invoices(&app, &shop, "").await[0]["lines"][0]), (839, 160, 999));

        // A refund of half credits half of the net and the tax.
        let payment = paid[1]["id"].as_str().unwrap();
        let (status, refund) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 5_950})).await;
        assert_eq!(status, StatusCode::CREATED, "{refund}");
        let (_, notes) = app.get(&shop, "/credit_notes").await;
        assert_eq!(amounts(&notes[0]["lines"][0]), (5_000, 950, 5_950));
    }

    async fn an_eu_business_in_another_country_is_reverse_charged(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let vat = rate(&app, &shop, json!({"name": "VAT", "percentage": 19, "country": "DE"})).await;
        let fields = json!(["email", "company", "country", "vat_id"]);
        let id = product(&app, &shop, json!({"tax_rate_id": vat, "tax_behavior": "exclusive", "visible_fields": fields, "quantity": "10"})).await;
        let page = app.page(&format!("/products/{id}/pay")).await;
        assert!(page.html.contains("A business in another EU country with a VAT ID pays no VAT (reverse charge)."));
        assert!(page.html.contains(r#"name="vat_id" type="text" autocomplete="off" value="" maxlength="255">"#), "optional: {}", page.html);

        // A VAT id out of its country's form is refused on the page, and nothing is charged.
        let bad = [("email", "buyer@example.fr"), ("country", "FR"), ("vat_id", "FR123")];
        let refused = app.pay(&id, cards::SUCCESS, &bad).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.html);
        assert!(payments(&app, &shop).await.is_empty());

        let business = [("email", "buyer@example.fr"), ("company", "Lumière SARL"), ("country", "FR"), ("vat_id", "fr 1a 123 456 789")];
        assert_eq!(app.pay(&id, cards::SUCCESS, &business).await.status, StatusCode::SEE_OTHER);
        let paid = payments(&app, &shop).await;
        assert_eq!(paid[0]["amount"], 10_000, "no VAT charged");
        assert_eq!(paid[0]["tax"], json!({"rate": vat, "behavior": "exclusive", "amount": 0, "reverse_charge": true}));
        let invoice = &invoices(&app, &shop, "").await[0];
        assert_eq!((&invoice["buyer"]["company"], &invoice["buyer"]["vat_id"]), (&json!("Lumière SARL"), &json!("FR1A123456789")));
        let line = &invoice["lines"][0];
        assert_eq!((&line["tax"]["category_code"], &line["tax"]["percentage"]), (&json!("AE"), &json!(0.0)));
        assert_eq!(amounts(line), (10_000, 0, 10_000));
        assert!(invoice["notes"][0].as_str().unwrap().starts_with("Reverse charge"), "{invoice}");
        let (_, customer) = app.get(&shop, &format!("/customers/{}", paid[0]["customer_id"].as_str().unwrap())).await;
        assert_eq!((&customer["company"], &customer["vat_id"]), (&json!("Lumière SARL"), &json!("FR1A123456789")));

        // A consumer, and a business in the seller's own country, pay the VAT.
        for details in [vec![("email", "me@example.fr"), ("country", "FR")],
                        vec![("email", "gmbh@example.de"), ("country", "DE"), ("vat_id", "DE 987654321")]] {
            assert_eq!(app.pay(&id, cards::SUCCESS, &details).await.status, StatusCode::SEE_OTHER);
            let paid = payments(&app, &shop).await;
            assert_eq!((&paid[0]["amount"], &paid[0]["tax"]["reverse_charge"]), (&json!(11_900), &json!(false)), "{details:?}");
        }

        // A returning buyer who now types a company's VAT id is kept with it (a subscription the
        // page made renews taxed for that buyer); a later page without one, or with another
        // (anyone may type the e-mail), leaves it.
        let consumer = payments(&app, &shop).await[1]["customer_id"].clone();
        for details in [vec![("email", "me@example.fr"), ("company", "Moi SAS"), ("country", "FR"), ("vat_id", "FR 99 999999999")],
                        vec![("email", "me@example.fr"), ("country", "FR")],
                        vec![("email", "me@example.fr"), ("company", "Autre"), ("country", "FR"), ("vat_id", "FR 11 111111111")]] {
            assert_eq!(app.pay(&id, cards::SUCCESS, &details).await.status, StatusCode::SEE_OTHER);
            let paid = payments(&app, &shop).await;
            assert_eq!(paid[0]["customer_id"], consumer, "the same customer");
            let (_, customer) = app.get(&shop, &format!("/customers/{}", consumer.as_str().unwrap())).await;
            assert_eq!((&customer["company"], &customer["vat_id"]), (&json!("Moi SAS"), &json!("FR99999999999")));
        }
    }

    async fn a_plans_charges_carry_its_tax_and_a_discount_is_taken_before_it(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let vat = rate(&app, &shop, json!({"name": "VAT", "percentage": 20})).await;
        let mut body = plan_body();
        body["test"] = json!(true);
        body["tax_rate_id"] = json!(vat);
        body["tax_behavior"] = json!("exclusive");
        body["visible_fields"] = json!(["vat_id", "company"]);
        let (status, plan) = app.post(&shop, "/plans", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{plan}");
        assert_eq!(plan["visible_fields"], json!(["email", "vat_id", "company"]));
        let plan_id = plan["id"].as_str().unwrap();
        let page = app.page(&format!("/plans/{plan_id}/pay")).await;
        assert!(page.html.contains("Plus VAT 20 % on each charge."), "{}", page.html);
        assert!(page.html.contains(r#"name="company""#), "the plan's page asks what the plan says");

        let coupon = json!({"code": "HALF", "percent_off": 50, "duration": "once", "test": true});
        let (status, made) = app.post(&shop, "/coupons", &coupon).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let sub = json!({"plan": {"id": plan_id}, "customer": {"email": "ann@example.com", "ip": "203.0.113.9"},
                         "card": card_json(cards::SUCCESS), "test_clock": clock});
        let (status, sub) = app.post(&shop, "/subscriptions", &sub).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        // The receipt shows the next charge as it will be made: with its tax.
        let first = &payments(&app, &shop).await[0];
        let receipt = app.page(&format!("/receipts/{}", first["id"].as_str().unwrap())).await;
        assert!(receipt.html.contains("€11.88"), "{}", receipt.html);
        let discount = format!("/subscriptions/{}/discount", sub["id"].as_str().unwrap());
        assert_eq!(app.post(&shop, &discount, &json!({"coupon": "HALF"})).await.0, StatusCode::OK);
        advance(&app, &shop, &clock, "2026-04-01T01:00:00Z").await;
        let mut paid = payments(&app, &shop).await;
        paid.reverse();
        let charged: Vec<(i64, i64)> =
            paid.iter().map(|p| (p["amount"].as_i64().unwrap(), p["tax"]["amount"].as_i64().unwrap())).collect();
        // 9.90 and 20 % of it, 1.98; then 9.90 less half is 4.95, and 20 % of that 0.99.
        assert_eq!(charged, vec![(1_188, 198), (594, 99)]);
        let mut listed = invoices(&app, &shop, "").await;
        listed.reverse();
        assert_eq!(amounts(&listed[0]["lines"][0]), (990, 198, 1_188));
        assert_eq!(amounts(&listed[1]["lines"][0]), (495, 99, 594));
        assert_eq!((&listed[1]["lines"][0]["unit_price"], &listed[1]["lines"][0]["discount"]), (&json!(990), &json!(495)));
    }

    async fn a_rate_that_is_not_the_shops_or_archived_is_refused(app) {
        let shop = app.shop("Gym").await;
        let other = app.shop("Elsewhere").await;
        let theirs = rate(&app, &other, json!({"name": "VAT", "percentage": 19})).await;
        let ours = rate(&app, &shop, json!({"name": "VAT", "percentage": 19})).await;
        let old = rate(&app, &shop, json!({"name": "Old VAT", "percentage": 16})).await;
        let mut body = test_product_body();
        body["tax_rate_id"] = json!(old);
        let kept = app.product(&shop, &body).await["id"].as_str().unwrap().to_string();
        assert_eq!(app.post(&shop, &format!("/tax_rates/{old}/archive"), &json!({})).await.0, StatusCode::OK);

        for (rate, message) in [(theirs.as_str(), "does not exist"), ("txr_0000000000000000", "does not exist"), (old.as_str(), "is archived")] {
            body["tax_rate_id"] = json!(rate);
            let (status, refused) = app.post(&shop, "/products", &body).await;
            assert_invalid(status, &refused, "tax_rate_id", &[message]);
            let mut plan = plan_body();
            plan["tax_rate_id"] = json!(rate);
            let (status, refused) = app.post(&shop, "/plans", &plan).await;
            assert_invalid(status, &refused, "tax_rate_id", &[message]);
        }
        body["tax_behavior"] = json!("sometimes");
        body["tax_rate_id"] = json!(ours);
        let (status, refused) = app.post(&shop, "/products", &body).await;
        assert_invalid(status, &refused, "tax_behavior", &["is not included in the list"]);
        let (_, listed) = app.get(&shop, "/products").await;
        assert_eq!(listed.as_array().unwrap().len(), 1, "nothing made");

        // A product keeps the archived rate it has while its other fields change, and can
        // leave it for a rate in use or none.
        let path = format!("/products/{kept}");
        assert_eq!(app.put(&shop, &path, &json!({"name": "Renamed"})).await.0, StatusCode::NO_CONTENT);
        assert_eq!(app.put(&shop, &path, &json!({"tax_rate_id": ours})).await.0, StatusCode::NO_CONTENT);
        let (status, refused) = app.put(&shop, &path, &json!({"tax_rate_id": old})).await;
        assert_invalid(status, &refused, "tax_rate_id", &["is archived"]);
        assert_eq!(app.put(&shop, &path, &json!({"tax_rate_id": null})).await.0, StatusCode::NO_CONTENT);
        assert_eq!(app.get(&shop, &path).await.1["tax_rate_id"], Value::Null);
    }

    async fn a_customers_vat_id_is_kept_in_its_countrys_form(app) {
        let shop = app.shop("Gym").await;
        let mut body = customer_body();
        body["country"] = json!("NL");
        body["company"] = json!("Tulp B.V.");
        body["vat_id"] = json!("nl 1234.56789.b01");
        let (status, customer) = app.post(&shop, "/customers", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{customer}");
        assert_eq!((&customer["company"], &customer["vat_id"]), (&json!("Tulp B.V."), &json!("NL123456789B01")));
        body["vat_id"] = json!("DE123456789");
        let (status, refused) = app.post(&shop, "/customers", &body).await;
        assert_invalid(status, &refused, "vat_id", &["is not in the form of the country's VAT ids"]);
        body.as_object_mut().unwrap().remove("country");
        let (status, made) = app.post(&shop, "/customers", &body).await;
        assert_eq!((status, &made["vat_id"]), (StatusCode::CREATED, &json!("DE123456789")), "its prefix names the country");
        body["vat_id"] = json!("123456789");
        let (status, refused) = app.post(&shop, "/customers", &body).await;
        assert_invalid(status, &refused, "vat_id", &["needs the country it was issued in"]);
    }

    async fn a_plan_change_now_is_charged_with_its_tax_and_plans_taxed_otherwise_change_at_the_period_end(app) {
        let shop = app.shop("Gym").await;
        let vat = rate(&app, &shop, json!({"name": "VAT", "percentage": 20})).await;
        let mut made = Vec::new();
        for (title, amount, rate) in [("Gold", 1_000, Some(&vat)), ("Platinum", 3_000, Some(&vat)), ("Basic", 5_000, None)] {
            let mut body = plan_body();
            (body["test"], body["title"], body["plan"]["amount"]) = (json!(true), json!(title), json!(amount));
            body["tax_rate_id"] = json!(rate);
            body["tax_behavior"] = json!("exclusive");
            let (status, plan) = app.post(&shop, "/plans", &body).await;
            assert_eq!(status, StatusCode::CREATED, "{plan}");
            made.push(plan["id"].as_str().unwrap().to_string());
        }
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let sub = json!({"plan": {"id": made[0]}, "customer": {"email": "ann@example.com", "ip": "203.0.113.9"},
                         "card": card_json(cards::SUCCESS), "test_clock": clock});
        let (status, sub) = app.post(&shop, "/subscriptions", &sub).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        let id = sub["id"].as_str().unwrap();
        let (status, preview) = app.post(&shop, &format!("/subscriptions/{id}/change_plan/preview"), &json!({"plan": made[1]})).await;
        assert_eq!(status, StatusCode::OK, "{preview}");
        let before_tax = preview["charge"].as_i64().unwrap() - preview["credit"].as_i64().unwrap();
        assert_eq!(preview["amount_due"], json!(before_tax + (before_tax * 2 + 5) / 10), "20 % added: {preview}");
        let (status, _) = app.post(&shop, &format!("/subscriptions/{id}/change_plan"), &json!({"plan": made[1]})).await;
        assert_eq!(status, StatusCode::OK);
        let (_, paid) = app.get(&shop, &format!("/payments?subscription={id}&status=succeeded")).await;
        assert_eq!(paid[0]["amount"], preview["amount_due"], "charged as the preview said");
        let (status, refused) = app.post(&shop, &format!("/subscriptions/{id}/change_plan/preview"), &json!({"plan": made[2]})).await;
        assert_invalid(status, &refused, "at", &["is for the period end: the two plans are taxed differently"]);
        let (status, _) = app.post(&shop, &format!("/subscriptions/{id}/change_plan/preview"), &json!({"plan": made[2], "at": "period_end"})).await;
        assert_eq!(status, StatusCode::OK);
    }

    async fn a_reverse_charged_invoice_is_issued_again_only_to_a_buyer_with_a_vat_id(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let vat = rate(&app, &shop, json!({"name": "VAT", "percentage": 19})).await;
        let id = product(&app, &shop, json!({"tax_rate_id": vat, "visible_fields": ["email", "country", "vat_id"]})).await;
        let business = [("email", "buyer@example.fr"), ("country", "FR"), ("vat_id", "FR1A123456789")];
        assert_eq!(app.pay(&id, cards::SUCCESS, &business).await.status, StatusCode::SEE_OTHER);
        let invoice = &invoices(&app, &shop, "").await[0];
        let path = format!("/invoices/{}/reissue", invoice["id"].as_str().unwrap());
        let (status, refused) = app.post(&shop, &path, &json!({"buyer": {"name": "Lumière SARL"}})).await;
        assert_invalid(status, &refused, "buyer.vat_id", &["can't be blank: the invoice was reverse-charged"]);
        let (status, again) = app.post(&shop, &path, &json!({"buyer": {"name": "Lumière SARL", "vat_id": "FR1A123456789"}})).await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        assert_eq!(again["buyer"]["country"], "FR", "the VAT id's country");
    }
}

backend_tests! {
    /// A subscriber paying on the processor's page pays what the engine would have charged
    /// the saved card: the period's price less the subscription's discount, plus its tax. A
    /// page keeps the price it opened with, and once paid it is the charge it was opened for.
    async fn a_card_page_charges_what_the_engine_would_with_the_discount_and_the_tax(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let vat = rate(&app, &shop, json!({"name": "VAT", "percentage": 20})).await;
        let change = json!({"tax_rate_id": vat, "tax_behavior": "exclusive", "number_payment_attempts": 5});
        let plan = crate::subscriptions::plan(&app, &shop, change).await;
        let coupon = json!({"code": "HALF", "percent_off": 50, "duration": "forever", "test": true});
        let (status, made) = app.post(&shop, "/coupons", &coupon).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = awaiting_card(&app, &shop, &plan, &clock).await;
        let card_page = format!("/subscriptions/{id}/pay");
        let open = async || {
            let form = app.open_form(&card_page).await;
            let session = session_of(&app.submit(&card_page, &form, &[]).await, &stripe);
            let asked = stripe.session(&session).form["line_items[0][price_data][unit_amount]"].clone();
            (session, asked)
        };
        let pay = async |session: &str, number: &str| {
            stripe.pay_session(session, number).unwrap();
            let payment = stripe.session(session).form["client_reference_id"].clone();
            app.page(&format!("/payments/{payment}/return")).await;
            payment
        };
        let charged = async |payment: &str| {
            let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
            assert_eq!(p["status"], "succeeded", "{p}");
            (p["amount"].as_i64().unwrap(), p["tax"]["amount"].as_i64().unwrap(), p["discount"].clone())
        };

        // The first period's page opens at 9.90 and 20 % of it; a coupon applied while it is
        // open leaves it as it is, and paid it is the first charge.
        let (session, asked) = open().await;
        assert_eq!(asked, "1188");
        let (status, discounted) = app.post(&shop, &format!("/subscriptions/{id}/discount"), &json!({"coupon": "HALF"})).await;
        assert_eq!(status, StatusCode::OK, "{discounted}");
        assert_eq!(open().await.0, session, "the open page again");
        let first = pay(&session, "4242424242424242").await;
        let (_, started) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((&started["state"], &started["last_transaction"]["id"]), (&json!("active"), &json!(first)), "{started}");
        assert_eq!(charged(&first).await, (1_188, 198, Value::Null));

        // The renewal takes the discount and is declined; the overdue page asks the same:
        // 9.90 less half is 4.95, and 20 % of that 0.99.
        saved_card_behaves_as(&app, &stripe, &id, "4000000000009995").await;
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let (_, failing) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((&failing["state"], &failing["last_transaction"]["amount"]), (&json!("failed_attempt"), &json!(594)), "{failing}");
        let (session, asked) = open().await;
        assert_eq!(asked, "594", "the overdue period as the engine charged it");
        let overdue = pay(&session, "5555555555554444").await;
        let (_, paid) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((&paid["state"], &paid["last_transaction"]["id"]), (&json!("active"), &json!(overdue)), "{paid}");
        assert_eq!(charged(&overdue).await, (594, 99, json!({"coupon": made["id"], "amount": 495})));
    }
}
