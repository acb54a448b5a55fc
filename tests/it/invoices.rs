//! Invoices over HTTP: each charge that took money is invoiced as it succeeds, once the
//! shop's seller details are complete; numbers run 1, 2, 3… without gaps per series (test
//! charges apart), whatever pays at once; each is read, listed, filtered and kept apart per
//! shop.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::events_of;
use crate::helpers::*;
use crate::money::no_server_error;
use crate::subscriptions::{advance, clock, plan, subscribe};

/// A seller whose invoices can start.
pub async fn set_seller(app: &TestApp, shop: &Shop) {
    let seller = json!({"legal_name": "Gym GmbH", "address_line1": "Hauptstr. 1", "city": "Berlin",
                        "postal_code": "10115", "country": "DE", "vat_id": "DE123456789"});
    let (status, body) = app.put(shop, "/shop/seller", &seller).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["missing"], json!([]));
}

/// The shop's invoices (at most 1,000), newest first.
pub async fn invoices(app: &TestApp, shop: &Shop, filter: &str) -> Vec<Value> {
    let (status, list) = app.get(shop, &format!("/invoices?limit=1000&{filter}")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list.as_array().unwrap().clone()
}

/// The numbers of invoices, in their series' order.
fn sequences(invoices: &[Value]) -> Vec<i64> {
    let mut numbers: Vec<i64> = invoices.iter().map(|i| i["sequence"].as_i64().unwrap()).collect();
    numbers.sort_unstable();
    numbers
}

async fn payments_of(app: &TestApp, shop: &Shop, filter: &str) -> Vec<Value> {
    let (_, list) = app.get(shop, &format!("/payments?limit=1000&{filter}")).await;
    list.as_array().unwrap().clone()
}

db_tests! {
    async fn a_buyer_whose_details_were_wrong_gets_a_credit_note_and_a_new_invoice_not_an_edit(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let product = app.product(&shop, &test_product_body()).await;
        assert_eq!(app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        let first = invoices(&app, &shop, "").await.remove(0);
        let id = first["id"].as_str().unwrap();
        let path = format!("/invoices/{id}/reissue");
        let (status, refused) = app.post(&shop, &path, &json!({"buyer": {"name": "", "country": "FR", "vat_id": "FR12"}})).await;
        assert_invalid(status, &refused, "buyer.name", &["can't be blank"]);
        assert_eq!(refused["errors"]["buyer.vat_id"], json!(["is not in the form of the country's VAT ids"]));
        let buyer = json!({"buyer": {"name": "Anna Leroy", "company": "Lumière SARL", "country": "FR", "vat_id": "FR1A123456789"}});
        let (status, again) = app.post(&shop, &path, &buyer).await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        assert_eq!((&again["number"], &again["invoice_number"], &again["total"]), (&json!("TEST-INV-000002"), &json!("TEST-INV-000001"), &first["total"]));
        assert_eq!((&again["buyer"]["company"], &again["buyer"]["vat_id"], &again["lines"], &again["payment_id"]),
                   (&json!("Lumière SARL"), &json!("FR1A123456789"), &first["lines"], &first["payment_id"]));
        let (_, notes) = app.get(&shop, &format!("/credit_notes?invoice={id}")).await;
        assert_eq!(notes.as_array().unwrap().len(), 1);
        assert_eq!((&notes[0]["number"], &notes[0]["total"]), (&json!("TEST-CN-000001"), &first["total"]));
        let (_, unchanged) = app.get(&shop, &format!("/invoices/{id}")).await;
        assert_eq!(unchanged, first, "the first invoice is never edited");
        assert_eq!(app.post(&shop, &path, &buyer).await.0, StatusCode::CONFLICT, "issued again already");

        // A refund afterwards credits the new invoice, which then is not issued again.
        let payment = first["payment_id"].as_str().unwrap();
        assert_eq!(app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 300})).await.0, StatusCode::CREATED);
        let new_id = again["id"].as_str().unwrap();
        let (_, credits) = app.get(&shop, &format!("/credit_notes?invoice={new_id}")).await;
        assert_eq!((credits.as_array().unwrap().len(), &credits[0]["total"]), (1, &json!(300)));
        let (status, _) = app.post(&shop, &format!("/invoices/{new_id}/reissue"), &buyer).await;
        assert_eq!(status, StatusCode::CONFLICT, "credited in part");
        let (_, trail) = app.get(&shop, "/audit_events?action=invoice.reissued").await;
        assert_eq!(trail.as_array().unwrap().len(), 1, "{trail}");
        assert_eq!(app.post(&shop, "/invoices/inv_0000000000000000/reissue", &buyer).await.0, StatusCode::NOT_FOUND);
    }

    async fn charges_made_before_invoices_started_are_invoiced_only_when_asked_with_their_refunds(app) {
        let shop = app.shop("Gym").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        for _ in 0..3 {
            assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        }
        let paid = payments_of(&app, &shop, "status=succeeded").await;
        let refunded = paid[2]["id"].as_str().unwrap();
        let (status, _) = app.post(&shop, &format!("/payments/{refunded}/refund"), &json!({"amount": 400})).await;
        assert_eq!(status, StatusCode::CREATED);
        // What `paydesk invoices issue` runs, here in the instance's own process: a second
        // process writing to the test's SQLite file beside the busy instance would wait on it.
        let issue = || paydesk::services::invoices::issue_missing(&app.db, &app.state.config, shop.id, chrono::Utc::now());
        assert_eq!(issue().await.unwrap(), 0, "not while the seller is incomplete");
        set_seller(&app, &shop).await;
        assert_eq!(invoices(&app, &shop, "").await.len(), 0, "an upgrade issues nothing by itself");
        assert_eq!(issue().await.unwrap(), 3);
        let listed = invoices(&app, &shop, "").await;
        assert_eq!(sequences(&listed), vec![1, 2, 3]);
        let first: Vec<&str> = listed.iter().rev().map(|i| i["payment_id"].as_str().unwrap()).collect();
        let mut oldest_first: Vec<&str> = paid.iter().map(|p| p["id"].as_str().unwrap()).collect();
        oldest_first.reverse();
        assert_eq!(first, oldest_first, "numbered oldest first");
        let (_, notes) = app.get(&shop, "/credit_notes").await;
        assert_eq!(notes.as_array().unwrap().len(), 1);
        assert_eq!((&notes[0]["payment_id"], &notes[0]["total"]), (&json!(refunded), &json!(400)));
        // The command itself, asked again: nothing is missing, nothing is written.
        let again = crate::cli::output(crate::cli::paydesk(&app.database_url).args(["invoices", "issue", "--shop-id", &shop.id.to_string()])).await;
        assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
        assert_eq!(serde_json::from_slice::<Value>(&again.stdout).unwrap(), json!({"shop_id": shop.id, "issued": 0}));
        let nobody = crate::cli::output(crate::cli::paydesk(&app.database_url).args(["invoices", "issue", "--shop-id", "999999"])).await;
        assert!(!nobody.status.success());
    }

    async fn runs_issuing_missing_invoices_at_once_issue_each_once_and_leave_no_gap(app) {
        let shop = app.shop("Gym").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        for _ in 0..3 {
            assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        }
        set_seller(&app, &shop).await;
        // Four runs at once: each waits for the series, sees what the others issued, and
        // gives back the numbers it took for them.
        let runs = (0..4).map(|_| paydesk::services::invoices::issue_missing(&app.db, &app.state.config, shop.id, chrono::Utc::now()));
        let issued: usize = futures::future::join_all(runs).await.into_iter().map(Result::unwrap).sum();
        assert_eq!(issued, 3);
        assert_eq!(sequences(&invoices(&app, &shop, "").await), vec![1, 2, 3]);
        let (_, series) = app.get(&shop, "/shop/series").await;
        let test_invoice = series.as_array().unwrap().iter().find(|s| s["name"] == "test_invoice").unwrap();
        assert_eq!(test_invoice["next_number"], json!(4), "{series}");
        assert_eq!(test_invoice["last_issued"], json!(3), "{series}");
        assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        assert_eq!(sequences(&invoices(&app, &shop, "").await), vec![1, 2, 3, 4]);
    }

    async fn a_paid_product_is_invoiced_once_the_seller_is_complete(app) {
        let shop = app.shop("Gym").await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email", "first_name", "last_name", "country", "city", "address", "zip"]);
        let product = app.product(&shop, &body).await;
        let id = product["id"].as_str().unwrap();
        let details = [("email", "ann@example.com"), ("first_name", "Ann"), ("last_name", "Lee"), ("country", "FR"),
                       ("city", "Lyon"), ("address", "1 rue de la Paix"), ("zip", "69001")];
        assert_eq!(app.pay(id, cards::SUCCESS, &details).await.status, StatusCode::SEE_OTHER);
        assert_eq!(invoices(&app, &shop, "").await, Vec::<Value>::new(), "no seller yet: a receipt only");

        set_seller(&app, &shop).await;
        assert_eq!(app.pay(id, cards::DECLINED, &details).await.status, StatusCode::PAYMENT_REQUIRED);
        assert_eq!(invoices(&app, &shop, "").await.len(), 0, "a declined charge has no invoice");
        assert_eq!(app.pay(id, cards::SUCCESS, &details).await.status, StatusCode::SEE_OTHER);
        let paid = payments_of(&app, &shop, "status=succeeded").await;
        let listed = invoices(&app, &shop, "").await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        let invoice = &listed[0];
        let payment_id = paid[0]["id"].as_str().unwrap();
        assert!(invoice["id"].as_str().unwrap().starts_with("inv_"), "{invoice}");
        assert_eq!(
            (&invoice["object"], &invoice["number"], &invoice["sequence"], &invoice["test"]),
            (&json!("invoice"), &json!("TEST-INV-000001"), &json!(1), &json!(true))
        );
        assert_eq!((&invoice["payment_id"], &invoice["customer_id"]), (&json!(payment_id), &paid[0]["customer_id"]));
        assert_eq!((&invoice["net_total"], &invoice["tax_total"], &invoice["total"]), (&json!(990), &json!(0), &json!(990)));
        assert_eq!((&invoice["currency"], &invoice["language"]), (&json!("EUR"), &json!("en")));
        assert_eq!(invoice["seller"]["name"], "Gym GmbH");
        assert_eq!(invoice["seller"]["vat_id"], "DE123456789");
        assert_eq!(
            invoice["buyer"],
            json!({"name": "Ann Lee", "company": null, "address_line1": "1 rue de la Paix", "address_line2": null, "city": "Lyon",
                   "postal_code": "69001", "region": null, "country": "FR", "vat_id": null, "registration_number": null,
                   "email": "ann@example.com"})
        );
        let line = &invoice["lines"][0];
        assert_eq!((&line["description"], &line["quantity"], &line["unit_price"], &line["gross"]), (&json!("Gift card"), &json!(1), &json!(990), &json!(990)));
        assert_eq!((&line["tax"]["treatment"], &line["tax"]["category_code"]), (&json!("not_subject"), &json!("O")));
        assert_eq!(invoice["tax_totals"], json!([{"treatment": "not_subject", "category_code": "O", "percentage": 0.0,
                                                  "exemption_reason": null, "net": 990, "tax": 0, "gross": 990}]));
        assert!(is_api_time(&invoice["issued_at"]), "{invoice}");

        let inv = invoice["id"].as_str().unwrap();
        let (status, one) = app.get(&shop, &format!("/invoices/{inv}")).await;
        assert_eq!((status, &one), (StatusCode::OK, invoice));
        for filter in [format!("payment={payment_id}"), "number=TEST-INV-000001".into(), "number=1".into(),
                       format!("customer={}", paid[0]["customer_id"].as_str().unwrap()), "issued[gte]=2000-01-01T00:00:00Z".into()] {
            assert_eq!(invoices(&app, &shop, &filter).await.len(), 1, "{filter}");
        }
        for filter in ["payment=pay_0000000000000000", "number=INV-000001", "number=2", "issued[lt]=2000-01-01T00:00:00Z"] {
            assert_eq!(invoices(&app, &shop, filter).await.len(), 0, "{filter}");
        }
        let (status, bad) = app.get(&shop, "/invoices?issued[gte]=someday").await;
        assert_invalid(status, &bad, "issued[gte]", &["must be an RFC 3339 time or Unix seconds"]);
        let issued = events_of(&app, &shop, "invoice.issued").await;
        assert_eq!(issued.len(), 1);
        assert_eq!(issued[0]["data"]["object"]["id"], json!(inv), "{}", issued[0]);
        assert_eq!(app.get(&shop, &format!("/credit_notes/{inv}")).await.0, StatusCode::NOT_FOUND, "not a credit note");
        assert_eq!(app.get(&shop, "/credit_notes").await.1, json!([]));

        let other = app.shop("Records").await;
        assert_eq!(app.get(&other, &format!("/invoices/{inv}")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.get(&other, "/invoices").await.1, json!([]));
        assert_eq!(app.get(&shop, "/invoices/inv_0000000000000000").await.0, StatusCode::NOT_FOUND);
    }

    async fn an_authorization_is_invoiced_at_its_capture_and_a_void_never(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let mut body = test_product_body();
        body["transaction_type"] = json!("authorization");
        let product = app.product(&shop, &body).await;
        let id = product["id"].as_str().unwrap();
        for _ in 0..2 {
            assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        }
        assert_eq!(invoices(&app, &shop, "").await.len(), 0, "held money is not taken yet");
        let held = payments_of(&app, &shop, "status=authorized").await;
        let (first, second) = (held[0]["id"].as_str().unwrap(), held[1]["id"].as_str().unwrap());
        let (capture, empty) = (format!("/payments/{first}/capture"), json!({}));
        let captures = join_all((0..6).map(|_| app.post(&shop, &capture, &empty))).await;
        assert_eq!(captures.iter().filter(|(s, _)| *s == StatusCode::OK).count(), 1, "{captures:?}");
        assert_eq!(app.post(&shop, &format!("/payments/{second}/void"), &json!({})).await.0, StatusCode::OK);
        let listed = invoices(&app, &shop, "").await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0]["payment_id"], json!(first));
    }

    async fn each_renewal_is_invoiced_for_its_period_and_the_series_has_no_gaps(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        advance(&app, &shop, &clock, "2026-05-01T01:00:00Z").await;
        let listed = invoices(&app, &shop, &format!("subscription={sub}")).await;
        assert_eq!(sequences(&listed), [1, 2, 3]);
        let periods: Vec<(&Value, &Value, &Value)> = listed
            .iter()
            .rev()
            .map(|i| (&i["lines"][0]["period_start"], &i["lines"][0]["period_end"], &i["issued_at"]))
            .collect();
        assert_eq!(
            periods,
            [
                (&json!("2026-03-01T00:00:00.000Z"), &json!("2026-04-01T00:00:00.000Z"), &json!("2026-03-01T00:00:00.000Z")),
                (&json!("2026-04-01T00:00:00.000Z"), &json!("2026-05-01T00:00:00.000Z"), &json!("2026-04-01T00:00:00.000Z")),
                (&json!("2026-05-01T00:00:00.000Z"), &json!("2026-06-01T00:00:00.000Z"), &json!("2026-05-01T00:00:00.000Z")),
            ]
        );
        assert_eq!(listed[0]["lines"][0]["description"], "Gold");
        let paid = payments_of(&app, &shop, &format!("subscription={sub}&status=succeeded")).await;
        let mut invoiced: Vec<&str> = listed.iter().map(|i| i["payment_id"].as_str().unwrap()).collect();
        let mut charged: Vec<&str> = paid.iter().map(|p| p["id"].as_str().unwrap()).collect();
        invoiced.sort_unstable();
        charged.sort_unstable();
        assert_eq!(invoiced, charged, "one invoice per charge");
    }

    async fn payers_at_once_take_numbers_one_to_n(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let mut body = test_product_body();
        body["infinite"] = json!(true);
        body.as_object_mut().unwrap().remove("quantity");
        let product = app.product(&shop, &body).await;
        let path = format!("/products/{}/pay", product["id"].as_str().unwrap());
        let forms = join_all((0..40).map(|_| app.open_form(&path))).await;
        let (good, bad) = (card(cards::SUCCESS), card(cards::DECLINED));
        let paid = join_all(forms.iter().enumerate().map(|(i, form)| app.submit(&path, form, if i % 5 == 4 { &bad } else { &good }))).await;
        paid.iter().for_each(|p| no_server_error(p.status, "a payer"));
        let succeeded = payments_of(&app, &shop, "status=succeeded").await.len();
        assert_eq!(succeeded, 32);
        let listed = invoices(&app, &shop, "").await;
        assert_eq!(sequences(&listed), (1..=32).collect::<Vec<i64>>(), "gapless and unique");
        let mut payments: Vec<&str> = listed.iter().map(|i| i["payment_id"].as_str().unwrap()).collect();
        payments.sort_unstable();
        payments.dedup();
        assert_eq!(payments.len(), 32, "one invoice per charge");
    }

    async fn refunds_issue_credit_notes_that_add_up_to_what_was_given_back(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let product = app.product(&shop, &test_product_body()).await;
        assert_eq!(app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        let invoice = invoices(&app, &shop, "").await.remove(0);
        let (inv, payment) = (invoice["id"].as_str().unwrap(), invoice["payment_id"].as_str().unwrap());
        let path = format!("/payments/{payment}/refund");
        let (status, first) = app.post(&shop, &path, &json!({"amount": 300, "reason": "damaged"})).await;
        assert_eq!(status, StatusCode::CREATED, "{first}");
        // Refunds asked at once: each that goes through has its credit note, none more.
        let (amount, empty) = (json!({"amount": 100}), json!({}));
        let at_once = join_all((0..6).map(|i| app.post(&shop, &path, if i == 5 { &empty } else { &amount }))).await;
        at_once.iter().for_each(|(s, _)| no_server_error(*s, "a refund"));
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        let refunded = paid["refunded_amount"].as_i64().unwrap();

        let (status, notes) = app.get(&shop, &format!("/credit_notes?invoice={inv}")).await;
        assert_eq!(status, StatusCode::OK, "{notes}");
        let notes = notes.as_array().unwrap();
        let (_, refunds) = app.get(&shop, &format!("/refunds?payment={payment}")).await;
        let succeeded = refunds.as_array().unwrap().iter().filter(|r| r["status"] == "succeeded").count();
        assert_eq!(notes.len(), succeeded, "one credit note per refund: {notes:?}");
        assert_eq!(sequences(notes), (1..=succeeded as i64).collect::<Vec<_>>());
        let total: i64 = notes.iter().map(|n| n["total"].as_i64().unwrap()).sum();
        assert_eq!(total, refunded, "credit notes add up to what was given back");
        let oldest = notes.last().unwrap();
        assert_eq!(
            (&oldest["object"], &oldest["number"], &oldest["invoice_id"], &oldest["invoice_number"], &oldest["total"]),
            (&json!("credit_note"), &json!("TEST-CN-000001"), &json!(inv), &invoice["number"], &json!(300))
        );
        assert_eq!(oldest["lines"][0]["description"], "Gift card");
        let cn = oldest["id"].as_str().unwrap();
        assert!(cn.starts_with("cn_"), "{oldest}");
        assert_eq!(app.get(&shop, &format!("/credit_notes/{cn}")).await.1, *oldest);
        assert_eq!(app.get(&shop, &format!("/invoices/{cn}")).await.0, StatusCode::NOT_FOUND, "not an invoice");
        assert_eq!(events_of(&app, &shop, "credit_note.issued").await.len(), succeeded);
        let other = app.shop("Records").await;
        assert_eq!(app.get(&other, &format!("/credit_notes/{cn}")).await.0, StatusCode::NOT_FOUND);
    }

    async fn a_dispute_lost_credits_the_whole_invoice_once(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), crate::disputes::DISPUTED, &[]).await;
        let invoice = invoices(&app, &shop, "").await.remove(0);
        let later = chrono::Utc::now() + chrono::Duration::minutes(3);
        join_all((0..3).map(|_| paydesk::services::network::run(&app.state, None, later))).await;
        let dispute = crate::disputes::dispute_of(&app, &shop, invoice["payment_id"].as_str().unwrap()).await;
        let path = format!("/disputes/{}/close", dispute["id"].as_str().unwrap());
        let (status, closed) = app.post(&shop, &path, &json!({})).await;
        assert_eq!((status, &closed["status"]), (StatusCode::OK, &json!("accepted")), "{closed}");
        let (_, notes) = app.get(&shop, "/credit_notes").await;
        let [note] = notes.as_array().unwrap().clone().try_into().unwrap();
        assert_eq!((&note["invoice_id"], &note["total"]), (&invoice["id"], &invoice["total"]), "{note}");
        let (status, refused) = app.post(&shop, &format!("/payments/{}/refund", invoice["payment_id"].as_str().unwrap()), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{refused}");
        assert_eq!(app.get(&shop, "/credit_notes").await.1.as_array().unwrap().len(), 1);
    }

    async fn a_series_takes_a_new_prefix_and_goes_on_from_a_number_never_back(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let (status, series) = app.get(&shop, "/shop/series").await;
        assert_eq!(status, StatusCode::OK, "{series}");
        let names: Vec<(&Value, &Value)> = series.as_array().unwrap().iter().map(|s| (&s["name"], &s["next"])).collect();
        assert_eq!(names, [(&json!("invoice"), &json!("INV-000001")), (&json!("credit_note"), &json!("CN-000001")),
                           (&json!("test_invoice"), &json!("TEST-INV-000001")), (&json!("test_credit_note"), &json!("TEST-CN-000001"))]);
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        app.pay(id, cards::SUCCESS, &[]).await;
        let (status, moved) = app.put(&shop, "/shop/series/test_invoice", &json!({"prefix": "T2027/", "next_number": 100})).await;
        assert_eq!(status, StatusCode::OK, "{moved}");
        assert_eq!((&moved["next"], &moved["last_issued"]), (&json!("T2027/000100"), &json!(1)));
        app.pay(id, cards::SUCCESS, &[]).await;
        let numbers: Vec<Value> = invoices(&app, &shop, "").await.iter().map(|i| i["number"].clone()).collect();
        assert_eq!(numbers, [json!("T2027/000100"), json!("TEST-INV-000001")], "issued ones keep their numbers");
        for back in [100, 1, 0] {
            let (status, refused) = app.put(&shop, "/shop/series/test_invoice", &json!({"next_number": back})).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{back}: {refused}");
            assert!(refused["errors"]["next_number"].is_array(), "{refused}");
        }
        let (status, refused) = app.put(&shop, "/shop/series/test_invoice", &json!({"next_number": 50})).await;
        assert_invalid(status, &refused, "next_number", &["must be greater than 100, the last number issued"]);
        let (status, refused) = app.put(&shop, "/shop/series/invoice", &json!({"prefix": "x".repeat(21)})).await;
        assert_invalid(status, &refused, "prefix", &["is too long (maximum is 20 characters)"]);
        let (status, refused) = app.put(&shop, "/shop/series/invoice", &json!({"prefix": "INV2027"})).await;
        assert_invalid(status, &refused, "prefix", &["must not end with a digit"]);
        let (_, bare) = app.put(&shop, "/shop/series/credit_note", &json!({"prefix": null})).await;
        assert_eq!((&bare["prefix"], &bare["next"]), (&json!(""), &json!("000001")), "null is no prefix");
        assert_eq!(app.put(&shop, "/shop/series/receipt", &json!({})).await.0, StatusCode::NOT_FOUND);
        let (_, live) = app.put(&shop, "/shop/series/invoice", &json!({"next_number": 7})).await;
        assert_eq!(live["next"], "INV-000007", "nothing issued there yet");
        let (_, trail) = app.get(&shop, "/audit_events?limit=100").await;
        let changes = trail.as_array().unwrap().iter().filter(|r| r["action"] == "series.updated").count();
        assert_eq!(changes, 3, "each change recorded, the refused ones not");
        assert_eq!(app.get(&app.shop("Records").await, "/shop/series").await.1[2]["next"], "TEST-INV-000001", "apart per shop");
    }

    async fn a_capture_or_void_its_request_left_half_done_is_finished_by_the_sweep(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let mut body = test_product_body();
        body["transaction_type"] = json!("authorization");
        let product = app.product(&shop, &body).await;
        let id = product["id"].as_str().unwrap();
        for _ in 0..2 {
            assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        }
        let held = payments_of(&app, &shop, "status=authorized").await;
        let (capture, void) = (held[0]["id"].as_str().unwrap(), held[1]["id"].as_str().unwrap());
        // Each request claimed its move and stopped before the processor answered.
        let now = chrono::Utc::now();
        assert!(paydesk::db::payments::claim_settling(&app.db, shop.id, capture, "capture", now).await.unwrap().is_some());
        assert!(paydesk::db::payments::claim_settling(&app.db, shop.id, void, "void", now).await.unwrap().is_some());
        let (status, busy) = app.post(&shop, &format!("/payments/{capture}/void"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{busy}");
        assert_eq!(busy["message"], "A capture of this payment is under way");
        assert_eq!(app.get(&shop, &format!("/payments/{capture}")).await.1["status"], "authorized");
        let sweep = |at| paydesk::services::captures::resume_interrupted(&app.state, at);
        assert_eq!(sweep(now).await.unwrap(), 0, "not before a request could have finished");
        let later = now + chrono::Duration::minutes(10);
        let swept = join_all((0..3).map(|_| sweep(later))).await;
        assert_eq!(swept.iter().map(|n| n.as_ref().unwrap()).sum::<usize>(), 2, "{swept:?}");
        assert_eq!(app.get(&shop, &format!("/payments/{capture}")).await.1["status"], "succeeded");
        assert_eq!(app.get(&shop, &format!("/payments/{void}")).await.1["status"], "voided");
        let listed = invoices(&app, &shop, "").await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0]["payment_id"], json!(capture));
        assert_eq!(events_of(&app, &shop, "payment.captured").await.len(), 1);
        assert_eq!(events_of(&app, &shop, "payment.voided").await.len(), 1);
        assert_eq!(app.get(&shop, &format!("/products/{id}")).await.1["quantity"], 4, "the voided unit is back");
    }
}
