//! The gateway's pages and Checkout: a Checkout token and its state, the card page where the
//! customer pays it, and the bank's 3-D Secure check.

use super::*;

pub(super) async fn new_checkout(State(g): State<Gateway>, headers: HeaderMap, body: Bytes) -> Response {
    if !authorized(&headers) {
        return json_reply(401, &json!({"message": "Unauthorized"}));
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let checkout = &request["checkout"];
    let kind = checkout["transaction_type"].as_str().unwrap_or("");
    if !["payment", "authorization", "tokenization"].contains(&kind) || checkout["settings"]["success_url"].is_null() {
        let errors = json!({"checkout": {"transaction_type": ["is invalid"]}});
        return json_reply(422, &json!({"response": {"message": "Checkout is invalid", "errors": errors}}));
    }
    let mut inner = g.inner.lock().unwrap();
    let token = format!("{:064x}", (inner.checkouts.len() as u128 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let token = token[token.len() - 64..].to_string();
    let mut order = checkout["order"].clone();
    order["settings"] = checkout["settings"].clone();
    let attempts_left = checkout["attempts"].as_u64().unwrap_or(1);
    let made = Token { kind: kind.into(), order, finished: false, expired: false, made: None, attempts_left };
    inner.checkouts.insert(token.clone(), made);
    let redirect_url = format!("{}/checkout?token={token}", g.url);
    json_reply(200, &json!({"checkout": {"token": token, "redirect_url": redirect_url}}))
}

pub(super) async fn checkout_state(
    State(g): State<Gateway>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&headers) {
        return json_reply(401, &json!({"message": "Unauthorized"}));
    }
    let inner = g.inner.lock().unwrap();
    let Some(checkout) = inner.checkouts.get(&token) else {
        return json_reply(404, &json!({"message": "Record not found"}));
    };
    let mut state = json!({"token": token, "transaction_type": checkout.kind, "finished": checkout.finished,
                           "order": checkout.order, "redirect_url": format!("{}/checkout?token={token}", g.url)});
    if checkout.expired {
        (state["expired"], state["status"], state["message"]) =
            (json!(true), json!("error"), json!("Token is expired."));
    }
    if let Some(tx) = checkout.made.as_ref().and_then(|uid| inner.transactions.iter().find(|t| &t.uid == uid)) {
        state["gateway_response"] = json!({ checkout.kind.clone(): {"uid": tx.uid, "status": tx.status,
            "message": tx.message, "bank_code": tx.bank_code} });
    }
    json_reply(200, &json!({ "checkout": state }))
}

/// The page's HTML around `body`.
fn html(title: &str, body: &str) -> Response {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>"
    );
    axum::response::Html(page).into_response()
}

/// `GET /checkout?token=`: the processor's card page.
pub(super) async fn checkout_page(
    State(g): State<Gateway>,
    axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>,
) -> Response {
    let token = q.get("token").cloned().unwrap_or_default();
    let Some(order) = g.inner.lock().unwrap().checkouts.get(&token).map(|c| c.order.clone()) else {
        return (StatusCode::NOT_FOUND, "no such checkout").into_response();
    };
    let declined = if q.contains_key("declined") { "<p id=\"declined\">Declined: try another card.</p>" } else { "" };
    let body = format!(
        "<p id=\"amount\">{} {}</p>{declined}<form method=\"post\" action=\"/checkout\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <label for=\"number\">Card number</label><input id=\"number\" name=\"number\">\
         <button type=\"submit\" id=\"pay\">Pay</button></form>",
        order["amount"],
        order["currency"].as_str().unwrap_or("")
    );
    html("bePaid checkout", &body)
}

/// `POST /checkout`: the customer's card on the processor's page.
pub(super) async fn checkout_pay(State(g): State<Gateway>, body: Bytes) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let token = form.get("token").cloned().unwrap_or_default();
    let Some(uid) = g.pay_checkout(&token, form.get("number").map(String::as_str).unwrap_or("")) else {
        return axum::response::Redirect::to(&format!("/checkout?token={token}&declined=1")).into_response();
    };
    let tx = g.transactions().into_iter().find(|t| t.uid == uid).unwrap();
    let closed = g.inner.lock().unwrap().checkouts.get(&token).is_some_and(|c| c.finished);
    match (tx.status.as_str(), tx.redirect_url) {
        ("successful", _) => axum::response::Redirect::to(&tx.return_url.unwrap_or_default()).into_response(),
        (_, Some(bank)) => axum::response::Redirect::to(&bank).into_response(),
        // The last card it took was declined: back to the shop's decline URL.
        _ if closed => {
            let order = g.checkout_order(&token);
            let back = order["settings"]["decline_url"].as_str().unwrap_or_default().to_string();
            axum::response::Redirect::to(&back).into_response()
        }
        _ => axum::response::Redirect::to(&format!("/checkout?token={token}&declined=1")).into_response(),
    }
}

/// `GET /process/{uid}`: the bank's 3-D Secure check.
pub(super) async fn process_page(Path(uid): Path<String>) -> Response {
    let body = format!(
        "<p>Confirm the payment with your bank.</p><form method=\"post\" action=\"/process/{uid}\">\
         <button type=\"submit\" name=\"result\" value=\"ok\" id=\"confirm\">Confirm</button>\
         <button type=\"submit\" name=\"result\" value=\"fail\" id=\"fail\">Fail</button></form>"
    );
    html("3-D Secure", &body)
}

/// `POST /process/{uid}`: the check done; back to where the transaction said.
pub(super) async fn process_finish(State(g): State<Gateway>, Path(uid): Path<String>, body: Bytes) -> Response {
    let ok = url::form_urlencoded::parse(&body).any(|(k, v)| k == "result" && v == "ok");
    g.finish_3ds(&uid, ok);
    let back = g.transactions().into_iter().find(|t| t.uid == uid).and_then(|t| t.return_url).unwrap_or_default();
    axum::response::Redirect::to(&back).into_response()
}
