//! The double's pages: Stripe's Checkout page where the customer pays a session, and the
//! bank's 3-D Secure check.

use super::*;

/// The customer pays a session with a card: where the page sends them, or why not.
pub(super) fn pay(inner: &mut Inner, base: &str, session: &str, number: &str) -> Result<String, String> {
    let s = inner.sessions.get(session).cloned().ok_or("no such session")?;
    if s.status != "open" {
        return Err(format!("the session is {}", s.status));
    }
    let success = s.form.get("success_url").cloned().unwrap_or_default();
    let customer = match (&s.customer, s.form.get("customer_creation").map(String::as_str)) {
        (Some(c), _) => Some(c.clone()),
        (None, Some("always")) => {
            let id = next_id(inner, "cus");
            inner.customers.push(id.clone());
            Some(id)
        }
        _ => None,
    };
    let pm = next_id(inner, "pm");
    inner.methods.insert(pm.clone(), (number.to_string(), customer.clone()));
    if s.form.get("mode").map(String::as_str) == Some("setup") {
        if number == "4000000000000002" {
            return Err("declined".into());
        }
        let id = next_id(inner, "seti");
        inner.setups.insert(id.clone(), (pm, customer.clone(), nested(&pairs(&s.form), "setup_intent_data[metadata]")));
        let s = inner.sessions.get_mut(session).unwrap();
        (s.status, s.setup_intent, s.customer) = ("complete".into(), Some(id), customer);
        return Ok(success);
    }
    // A session has one PaymentIntent: another card on its page confirms it again.
    let id = match s.payment_intent.clone() {
        Some(id) => {
            let pi = inner.intents.iter_mut().find(|i| i.id == id).unwrap();
            (pi.payment_method, pi.error) = (Some(pm), None);
            id
        }
        None => {
            let id = next_id(inner, "pi");
            inner.intents.push(Intent {
                id: id.clone(),
                amount: s.form.get("line_items[0][price_data][unit_amount]").and_then(|a| a.parse().ok()).unwrap_or(0),
                currency: s.form.get("line_items[0][price_data][currency]").cloned().unwrap_or_default(),
                status: "requires_confirmation".into(),
                capture_method: s
                    .form
                    .get("payment_intent_data[capture_method]")
                    .cloned()
                    .unwrap_or("automatic".into()),
                customer: customer.clone(),
                payment_method: Some(pm),
                off_session: false,
                setup_future_usage: s.form.get("payment_intent_data[setup_future_usage]").cloned(),
                metadata: nested(&pairs(&s.form), "payment_intent_data[metadata]"),
                error: None,
                next_action: None,
                return_url: Some(format!("{base}/pay/{session}")),
                amount_received: 0,
                refunded: 0,
                created: inner.counter,
            });
            inner.sessions.get_mut(session).unwrap().payment_intent = Some(id.clone());
            id
        }
    };
    let (status, _) = confirm(inner, base, &id);
    let pi = inner.intents.iter().find(|i| i.id == id).unwrap().clone();
    match (status, pi.status.as_str()) {
        (200, "requires_action") => Ok(format!("{base}/3ds/{id}")),
        (200, _) => {
            let s = inner.sessions.get_mut(session).unwrap();
            (s.status, s.customer) = ("complete".into(), customer);
            Ok(success)
        }
        _ => Err("declined".into()),
    }
}

fn html(title: &str, body: &str) -> Response {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>"
    );
    axum::response::Html(page).into_response()
}

/// `GET /pay/{session}`: Stripe's Checkout page.
pub(super) async fn card_page(State(d): State<StripeDouble>, Path(session): Path<String>, uri: Uri) -> Response {
    let Some(s) = d.inner.lock().unwrap().sessions.get(&session).cloned() else {
        return (StatusCode::NOT_FOUND, "no such session").into_response();
    };
    let declined = if uri.query().is_some_and(|q| q.contains("declined")) {
        "<p id=\"declined\">Your card was declined. Try another card.</p>"
    } else {
        ""
    };
    let amount = s.form.get("line_items[0][price_data][unit_amount]").cloned().unwrap_or_else(|| "0".into());
    let body = format!(
        "<p id=\"amount\">{amount} {}</p>{declined}<form method=\"post\" action=\"/pay/{session}\">\
         <label for=\"number\">Card number</label><input id=\"number\" name=\"number\">\
         <button type=\"submit\" id=\"pay\">Pay</button></form>",
        s.form.get("line_items[0][price_data][currency]").cloned().unwrap_or_default()
    );
    html("Stripe Checkout", &body)
}

/// `POST /pay/{session}`: the customer's card on Stripe's page.
pub(super) async fn card_paid(State(d): State<StripeDouble>, Path(session): Path<String>, body: Bytes) -> Response {
    let number = url::form_urlencoded::parse(&body).find(|(k, _)| k == "number").map(|(_, v)| v.into_owned());
    match d.pay_session(&session, &number.unwrap_or_default()) {
        Ok(next) => Redirect::to(&next).into_response(),
        Err(_) => Redirect::to(&format!("/pay/{session}?declined=1")).into_response(),
    }
}

/// `GET /3ds/{intent}`: the bank's check.
pub(super) async fn bank_page(Path(intent): Path<String>) -> Response {
    let body = format!(
        "<p>Confirm the payment with your bank.</p><form method=\"post\" action=\"/3ds/{intent}\">\
         <button type=\"submit\" name=\"result\" value=\"ok\" id=\"confirm\">Confirm</button>\
         <button type=\"submit\" name=\"result\" value=\"fail\" id=\"fail\">Fail</button></form>"
    );
    html("3-D Secure", &body)
}

/// `POST /3ds/{intent}`: the check done; back to where the intent (or its session) said.
pub(super) async fn bank_done(State(d): State<StripeDouble>, Path(intent): Path<String>, body: Bytes) -> Response {
    let ok = url::form_urlencoded::parse(&body).any(|(k, v)| k == "result" && v == "ok");
    let mut inner = d.inner.lock().unwrap();
    finish(&mut inner, &intent, ok);
    let session = inner.sessions.values().find(|s| s.payment_intent.as_deref() == Some(&intent)).cloned();
    let back = match session {
        Some(s) if ok => {
            let success = s.form.get("success_url").cloned().unwrap_or_default();
            inner.sessions.get_mut(&s.id).unwrap().status = "complete".into();
            success
        }
        Some(s) => format!("/pay/{}?declined=1", s.id),
        None => inner.intents.iter().find(|i| i.id == intent).and_then(|i| i.return_url.clone()).unwrap_or_default(),
    };
    Redirect::to(&back).into_response()
}
