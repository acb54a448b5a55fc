//! The API's OpenAPI 3.1 document, made from the handlers' `#[utoipa::path]` annotations and
//! the views' schemas, served at `/openapi.json`. What every operation shares (Basic auth,
//! `Idempotency-Key` on POSTs, `X-Request-Id` on answers, the error answers) is added here
//! once, by [`Conventions`], rather than on each handler.

use std::sync::LazyLock;

use askama::Template;
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::{Json, Router};

use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{
    Components, ContentBuilder, HeaderBuilder, ObjectBuilder, OpenApi as Document, RefOr, Required, Response,
    ResponseBuilder, Server, Type,
};
use utoipa::{Modify, OpenApi};

use crate::frontends::api::{
    api_keys, audit, coupons, customers, disputes, events, invoices, payments, plans, processor, products, refunds,
    revenue, seller, subscriptions, tax_rates, test_clocks, webhooks,
};
use crate::frontends::{ops, pay};
use crate::web::error::AppError;
use crate::web::error::{ErrorBody, ErrorCode};
use crate::web::state::AppState;

pub mod reference;

/// The document, made once per process; [`document`] adds the server's address.
static DOCUMENT: LazyLock<Document> = LazyLock::new(ApiDoc::openapi);

/// The document for a server at `base_url`, as JSON.
pub fn document(base_url: &str) -> serde_json::Value {
    let mut document = DOCUMENT.clone();
    document.servers = Some(vec![Server::new(base_url)]);
    let mut json = serde_json::to_value(document).unwrap_or_default();
    // utoipa 5 writes a link's `operationId` as `operation_id`: renamed to the standard's.
    if let Some(paths) = json.get_mut("paths").and_then(|p| p.as_object_mut()) {
        for operation in paths.values_mut().filter_map(|i| i.as_object_mut()).flat_map(|i| i.values_mut()) {
            let responses = operation.get_mut("responses").and_then(|r| r.as_object_mut());
            for response in responses.into_iter().flat_map(|r| r.values_mut()) {
                let links = response.get_mut("links").and_then(|l| l.as_object_mut());
                for link in links.into_iter().flat_map(|l| l.values_mut()).filter_map(|l| l.as_object_mut()) {
                    if let Some(id) = link.remove("operation_id") {
                        link.insert("operationId".into(), id);
                    }
                }
            }
        }
    }
    json
}

/// `/openapi.json` and `/docs`, public like the rest of the documentation.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/openapi.json",
            get(|State(state): State<AppState>| async move { Json(document(&state.config.base_url)) }),
        )
        .route("/docs", get(docs))
}

/// The reference page, made from the document.
async fn docs(State(state): State<AppState>) -> Result<axum::response::Response, AppError> {
    let document = document(&state.config.base_url);
    let page = reference::reference(&document, &state.config.base_url)
        .render()
        .map_err(|e| AppError::Internal(format!("the reference page: {e}")))?;
    Ok(([(header::CACHE_CONTROL, "public, max-age=300")], Html(page)).into_response())
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "paydesk API",
        description = "Products with payment links, subscription plans, customers, payments, refunds, \
            subscriptions, events and webhooks of one shop. Authenticate every request with HTTP Basic: \
            the shop id as the user name, the shop's secret key as the password. Bodies are JSON \
            (`Content-Type: application/json`); amounts are integers in minimal currency units; times \
            are RFC 3339 in UTC with milliseconds. Lists are JSON arrays, newest first, paged with \
            `limit` and `starting_after`; a `Link: <…>; rel=\"next\"` header points to the next page. \
            Every POST may carry an `Idempotency-Key`: a retry with the same key and body gets the first \
            answer again instead of acting twice.",
        license(name = "MIT"),
    ),
    paths(
        products::create, products::list, products::show, products::update, products::archive, products::restore,
        plans::create, plans::list, plans::show, plans::update, plans::archive, plans::restore,
        customers::create, customers::list, customers::show, customers::portal_session,
        coupons::create, coupons::list, coupons::show, coupons::archive, coupons::apply, coupons::remove,
        tax_rates::create, tax_rates::list, tax_rates::show, tax_rates::archive, seller::show, seller::update,
        invoices::list, invoices::show, invoices::invoice_pdf, invoices::invoice_xml, invoices::reissue, invoices::list_credit_notes,
        invoices::show_credit_note, invoices::credit_note_pdf, invoices::credit_note_xml, invoices::series,
        invoices::update_series,
        revenue::mrr, revenue::movements, revenue::cohorts, revenue::subscribers,
        payments::list, payments::show, payments::capture, payments::void,
        refunds::create, refunds::list, refunds::show,
        disputes::list, disputes::show, disputes::answer, disputes::close,
        subscriptions::create, subscriptions::list, subscriptions::show, subscriptions::update, subscriptions::cancel,
        subscriptions::pause, subscriptions::resume, subscriptions::change_plan, subscriptions::preview_change,
        subscriptions::events, subscriptions::test_card_outcome,
        test_clocks::create, test_clocks::list, test_clocks::show, test_clocks::advance,
        events::list, events::show,
        audit::list, audit::show,
        webhooks::create, webhooks::list, webhooks::show, webhooks::update, webhooks::delete,
        webhooks::rotate, webhooks::deliveries, webhooks::redeliver, webhooks::shop, webhooks::update_shop,
        processor::show, processor::update, processor::check,
        api_keys::create, api_keys::list, api_keys::show, api_keys::update, api_keys::roll, api_keys::revoke,
        pay::products::show, pay::products::submit, pay::plans::show, pay::plans::submit,
        ops::healthz,
    ),
    components(schemas(ErrorBody, ErrorCode)),
    modifiers(&Conventions),
    security(("basic" = [])),
    tags(
        (name = "Products", description = "One-off products and their payment links (spec 2.1, 4.1)."),
        (name = "Plans", description = "Subscription plans (spec 2.2, 4.2)."),
        (name = "Customers", description = "The shop's customers (spec 2.3, 4.3)."),
        (name = "Payments", description = "Every attempt to pay, from pay pages and the billing engine."),
        (name = "Refunds", description = "Money given back, in part or in full."),
        (name = "Disputes", description = "Payments a cardholder's bank took back or asked about, and the merchant's answer."),
        (name = "Coupons", description = "Percent or amount off a subscription's plan periods."),
        (name = "Invoicing", description = "Invoices and credit notes, issued as charges succeed and never \
            changed; tax rates (rates, zero rates and exemptions); the seller that invoices name."),
        (name = "Revenue", description = "What the subscriptions are worth: MRR and what moved it, per \
            currency and mode, by day or month."),
        (name = "Subscriptions", description = "A customer's subscription to a plan, billed by the engine."),
        (name = "Test clocks", description = "Simulated time for test-mode subscriptions."),
        (name = "Events", description = "What happened, with the object as it was then."),
        (name = "Audit", description = "Who did what, from where: every change and login, chained by hash."),
        (name = "Webhooks", description = "Endpoints that receive events, their deliveries, and the shop's \
            notification settings."),
        (name = "Processor", description = "Who moves the shop's money: the simulation or a BeGateway \
            processor (bePaid), where customers type their cards, and the processor's accounts."),
        (name = "API keys", description = "The shop's keys: named, restricted to what each needs and to \
            the networks it is used from, rolled with an overlap, revoked. For a key without restrictions."),
        (name = "Pay links", description = "The hosted pages customers pay on; programs may ask them for JSON."),
        (name = "Operations", description = "For load balancers and operators."),
    ),
)]
struct ApiDoc;

/// What every operation shares, added to each.
struct Conventions;

impl Modify for Conventions {
    fn modify(&self, document: &mut Document) {
        let components = document.components.get_or_insert_with(Components::new);
        let basic = Http::builder()
            .scheme(HttpAuthScheme::Basic)
            .description(Some("The shop id as the user name, the shop's secret key as the password"))
            .build();
        components.add_security_scheme("basic", SecurityScheme::Http(basic));
        for (path, item) in document.paths.paths.iter_mut() {
            let methods = [
                ("get", &mut item.get),
                ("post", &mut item.post),
                ("put", &mut item.put),
                ("delete", &mut item.delete),
            ];
            for (method, operation) in methods {
                if let Some(operation) = operation {
                    operation.operation_id = Some(operation_id(method, path));
                    conventions(path, method, operation);
                }
            }
        }
        links(document);
    }
}

/// A unique operation id from the method and path: `get_products_id`, `post_payments_id_refund`.
fn operation_id(method: &str, path: &str) -> String {
    let words: Vec<&str> =
        path.split('/').filter(|w| !w.is_empty()).map(|w| w.trim_matches(|c| c == '{' || c == '}')).collect();
    format!("{method}_{}", words.join("_"))
}

/// Where the object an operation makes can be used next: from each create (`POST /things`,
/// and a refund of a payment) to every operation on `/things/{id}`, with `id` from the answer.
/// Testers such as schemathesis follow them to chain create, read, update and delete.
fn links(document: &mut Document) {
    let paths: Vec<String> = document.paths.paths.keys().cloned().collect();
    let creates = paths.iter().filter(|p| !p.contains('{')).map(|p| (p.clone(), format!("{p}/{{id}}")));
    let refund = std::iter::once(("/payments/{id}/refund".to_string(), "/refunds/{id}".to_string()));
    for (create, item_path) in creates.chain(refund).collect::<Vec<_>>() {
        let targets: Vec<(String, String)> = paths
            .iter()
            .filter(|p| *p == &item_path || p.starts_with(&format!("{item_path}/")))
            .flat_map(|p| {
                let item = &document.paths.paths[p];
                [("get", &item.get), ("post", &item.post), ("put", &item.put), ("delete", &item.delete)]
                    .into_iter()
                    .filter(|(_, op)| op.is_some())
                    .map(|(m, _)| (operation_id(m, p), p.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let Some(RefOr::T(created)) = document
            .paths
            .paths
            .get_mut(&create)
            .and_then(|i| i.post.as_mut())
            .and_then(|o| o.responses.responses.get_mut("201"))
        else {
            continue;
        };
        for (id, _) in targets {
            let link = utoipa::openapi::link::LinkBuilder::new()
                .operation_id(id.clone())
                .parameter("id", "$response.body#/id")
                .build();
            created.links.insert(id, RefOr::T(link));
        }
    }
}

/// The shared parts of one operation.
fn conventions(path: &str, method: &str, operation: &mut Operation) {
    // Public operations are the hosted pages: their errors are pages for browsers and JSON
    // for programs that ask for it; they take no Idempotency-Key (the form's attempt is one).
    let public = operation.security.as_ref().is_some_and(|s| s.iter().all(|r| r == &Default::default()));
    let mut errors: Vec<(&str, &str)> = vec![("500", "A fault of paydesk (logged with the request id)")];
    if !public {
        errors.push(("401", "Missing or wrong credentials (`WWW-Authenticate: Basic realm=\"paydesk\"`)"));
        errors.push(("429", "Too many wrong credentials from this address; retry after `Retry-After` seconds"));
        errors.push((
            "403",
            "The key lacks the permission this operation needs (`permission_missing`, the message names \
             it), or is used from outside its networks (`forbidden`)",
        ));
        permission(path, method, operation);
    }
    if path.contains('{') {
        errors.push(("404", "No such object of this shop"));
    }
    if operation.request_body.is_some() {
        errors.push(("413", "The body is over 1 MiB"));
        if !public {
            errors.push(("400", "The body is not JSON, or not a JSON object"));
            errors.push(("415", "`Content-Type` is not JSON"));
            errors.push(("422", "Invalid or missing parameters: `errors` names each field with its problems"));
        }
    }
    if method == "get"
        && !public
        && operation.responses.responses.get("200").is_some_and(|r| match r {
            RefOr::T(response) => is_array(response),
            RefOr::Ref(_) => false,
        })
    {
        errors.push(("422", "An invalid query parameter (`limit`, `starting_after` or a filter)"));
        errors.push(("404", "`starting_after` is not an id of this list"));
    }
    if method == "post" && !public {
        errors.push(("409", "A request with the same `Idempotency-Key` is still running"));
        errors.push(("422", "An invalid `Idempotency-Key`, or one used before with another request"));
        let key = ParameterBuilder::new()
            .name("Idempotency-Key")
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(
                "Makes a retry safe: the first answer to this key (with this path and body) is kept for \
                 24 hours and answered again instead of acting twice. 1 to 255 visible characters.",
            ))
            .schema(Some(ObjectBuilder::new().schema_type(Type::String).min_length(Some(1)).max_length(Some(255))))
            .build();
        operation.parameters.get_or_insert_with(Vec::new).push(key);
    }
    for (status, description) in errors {
        operation.responses.responses.entry(status.to_string()).or_insert_with(|| error(description, public).into());
    }
    for (status, response) in operation.responses.responses.iter_mut() {
        if let RefOr::T(response) = response {
            if status == "200" && method == "get" && is_array(response) {
                link(response);
            }
            request_id(response);
        }
    }
}

/// Says which permission of a restricted key the operation needs, in its description and as
/// `x-paydesk-permission` (`payments:read`, or `unrestricted` for the keys' own operations).
fn permission(path: &str, method: &str, operation: &mut Operation) {
    use crate::domain::api_key::{Permissions, needs};
    let name = Permissions::name(needs(method, path));
    let said = match name.as_str() {
        "unrestricted" => "Needs a key without restrictions.".to_string(),
        _ => format!("Needs the permission `{name}` of a restricted key."),
    };
    let description = operation.description.take().map_or(said.clone(), |d| format!("{d}\n\n{said}"));
    operation.description = Some(description);
    let extensions = operation.extensions.get_or_insert_with(Default::default);
    extensions.merge(utoipa::openapi::extensions::ExtensionsBuilder::new().add("x-paydesk-permission", name).build());
}

/// An error answer with `description`: JSON, and for the hosted pages also a page.
fn error(description: &str, page: bool) -> Response {
    let json = ContentBuilder::new().schema(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name("Error")))).build();
    let mut answer = ResponseBuilder::new().description(description).content("application/json", json);
    if page {
        let html = ContentBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::String))).build();
        answer = answer.content("text/html", html);
    }
    answer.build()
}

/// Adds `X-Request-Id` to an answer's headers.
fn request_id(response: &mut Response) {
    let header = HeaderBuilder::new()
        .schema(ObjectBuilder::new().schema_type(Type::String))
        .description(Some("The request's id: the client's own `X-Request-Id` when usable, otherwise a new `req_…`"))
        .build();
    response.headers.insert("X-Request-Id".into(), header);
}

/// Whether an answer is a JSON array (a page of a list).
fn is_array(response: &Response) -> bool {
    let schema = response.content.get("application/json").and_then(|c| c.schema.as_ref());
    matches!(schema, Some(RefOr::T(utoipa::openapi::schema::Schema::Array(_))))
}

/// Adds the `Link` header of lists to an answer.
fn link(response: &mut Response) {
    let header = HeaderBuilder::new()
        .schema(ObjectBuilder::new().schema_type(Type::String))
        .description(Some(
            "When more follow: the next page, `<{base_url}/path?…&limit=N&starting_after=ID>; rel=\"next\"` \
             (the filters of this request kept)",
        ))
        .build();
    response.headers.insert("Link".into(), header);
}
