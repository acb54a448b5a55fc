//! paydesk over HTTP beside the limits of its framework and its storage, on SQLite and on
//! PostgreSQL, then how its costs grow with the tables.
//!
//! `cargo bench --bench http` starts the release `paydesk` on a fresh database (an SQLite
//! file; a new PostgreSQL schema at `PAYDESK_TEST_POSTGRES_URL`, default the local server),
//! loads it over loopback with oha (installed into `target/bench-tools` on first use), and
//! prints, for each endpoint, the closed-loop maximum rate (16 connections) and the p50/p99
//! latencies of an open-loop load at half that rate (oha's latency correction), beside a bare
//! axum handler answering the same bytes and the same read or insert done straight through
//! sqlx, measured in the same run. Then it grows every table to 10k, 100k and 1M rows and
//! prints what reads, a list page, a filtered list, the dashboard's overview and a billing
//! run cost at each size.
//!
//! Options after `--`: `--seconds N` (each load, default 5), `--write-seconds N` (each load of
//! the subscription writes, default `--seconds`: their p99 at half the rate is the eleventh
//! slowest of about a thousand answers at 10 s, the fourth of 300 at 3 s), `--backend
//! sqlite|postgres` (repeatable; default both), `--sizes 10000,100000` (`--sizes 0` skips
//! growth), `--writes-only` (the payers and the subscription writes alone, nothing after them).
//! `PAYDESK_BENCH_LOG` is the server's `RUST_LOG` (default `warn`; `warn,paydesk=debug` logs
//! each request with its time). `PAYDESK_BENCH_BEFORE=path/to/paydesk`, an earlier release's
//! binary, measures its writes and a read in the same run, on a fresh database of its own
//! with the same 1,000 products, right after this build's.

mod growth;
mod limits;
mod loads;
mod oha;
mod server;

use std::path::PathBuf;
use std::time::Instant;

use chrono::Utc;
use futures::StreamExt;
use oha::{Load, Measured, Target};
use paydesk::config::{Config, ConfigArgs};
use paydesk::web::state::AppState;
use serde_json::{Value, json};
use server::{Backend, Client, Fresh, Server, Shop};

struct Opts {
    seconds: u64,
    write_seconds: Option<u64>,
    backends: Vec<Backend>,
    sizes: Vec<u64>,
    writes_only: bool,
}

fn opts() -> Opts {
    let mut opts = Opts {
        seconds: 5,
        write_seconds: None,
        backends: Vec::new(),
        sizes: vec![10_000, 100_000, 1_000_000],
        writes_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => opts.seconds = args.next().and_then(|v| v.parse().ok()).expect("--seconds N"),
            "--write-seconds" => {
                opts.write_seconds = Some(args.next().and_then(|v| v.parse().ok()).expect("--write-seconds N"))
            }
            "--writes-only" => opts.writes_only = true,
            "--backend" => opts.backends.push(match args.next().as_deref() {
                Some("sqlite") => Backend::Sqlite,
                Some("postgres") => Backend::Postgres,
                other => panic!("--backend sqlite|postgres, not {other:?}"),
            }),
            "--sizes" => {
                let list = args.next().expect("--sizes N,N,…");
                opts.sizes =
                    list.split(',').map(|n| n.trim().parse().expect("--sizes N,N,…")).filter(|n| *n > 0).collect();
            }
            _ => {} // cargo bench passes --bench
        }
    }
    if opts.backends.is_empty() {
        opts.backends = vec![Backend::Sqlite, Backend::Postgres];
    }
    opts
}

#[tokio::main]
async fn main() {
    let opts = opts();
    let oha = oha::install();
    println!(
        "paydesk {} (release), {} cores; oha closed loop with 16 connections for the maximum, then open loop at half of it \
         for latencies; {} s per load, {} s per load of the subscription writes",
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        opts.seconds,
        opts.write_seconds.unwrap_or(opts.seconds)
    );
    for &backend in &opts.backends {
        bench(&oha, backend, &opts).await;
    }
}

/// What the payers and the subscribers measured.
struct Writes {
    alone: Vec<(Measured, Measured)>,
    uninvoiced: Measured,
    uninvoiced_half: Measured,
    invoiced: Measured,
    invoiced_half: Measured,
    writes: Vec<Measured>,
    writes_half: Vec<Measured>,
}

impl Writes {
    fn print(&self) {
        let (paid, invoiced_label) = ("POST /products/{id}/pay, no invoices", "… with invoices");
        for (without, with) in &self.alone {
            loads::print(paid, without, "1 payer, closed loop");
            loads::print(invoiced_label, with, "1 payer, closed loop");
        }
        loads::print(paid, &self.uninvoiced, "16 payers, closed loop");
        loads::print(invoiced_label, &self.invoiced, "16 payers, closed loop");
        loads::print(paid, &self.uninvoiced_half, "16 payers, open loop at half the rate");
        loads::print(invoiced_label, &self.invoiced_half, "16 payers, open loop at half the rate");
        for (label, (closed, open)) in loads::SUBSCRIPTION_WRITES.iter().zip(self.writes.iter().zip(&self.writes_half))
        {
            loads::print(label, closed, "16 subscribers, closed loop");
            loads::print("", open, "16 subscribers, open loop at half the rate");
        }
        let mut added: Vec<f64> = self.alone.iter().map(|(without, with)| with.p50_ms - without.p50_ms).collect();
        added.sort_by(f64::total_cmp);
        println!(
            "  an invoice in the payment's transaction: +{:.2} ms at p50 alone (the median of {} turns); {:.0}% of the rate without at 16",
            added[added.len() / 2],
            added.len(),
            100.0 * self.invoiced.rps / self.uninvoiced.rps
        );
    }
}

/// One row of the table: the maximum rate and the latencies at half of it.
struct Row {
    max: Measured,
    half: Measured,
}

fn measure(oha: &PathBuf, target: &Target, seconds: u64) -> Row {
    let max = oha::run(oha, target, Load::Closed { connections: 16 }, seconds);
    let half = oha::run(oha, target, Load::Open { rate: max.rps / 2.0 }, seconds);
    Row { max, half }
}

fn print_row(label: &str, row: &Row, against: &[(&str, &Row)]) {
    let ratios: Vec<String> = against
        .iter()
        .map(|(name, limit)| format!("{:>3.0}% of {name}", 100.0 * row.max.rps / limit.max.rps))
        .collect();
    println!(
        "  {label:<40} {:>9.0} {:>8.2} {:>8.2}   {}",
        row.max.rps,
        row.half.p50_ms,
        row.half.p99_ms,
        ratios.join(", ")
    );
}

async fn bench(oha: &PathBuf, backend: Backend, opts: &Opts) {
    let fresh = Fresh::new(backend).await;
    let shop = Shop::create(server::THIS, &fresh.url);
    let server = Server::start(server::THIS, &fresh.url).await;
    let client = Client::new(&server.base, &shop);

    // 1,000 products, a customer, orders paid without invoices and then with them (the
    // seller's details complete), a plan and a subscription with a card.
    let product = thousand_products(&client).await;
    let customer = client.post("/customers", &server::customer_body()).await["id"].as_str().unwrap().to_string();
    // A lone payer without invoices and with them, in turns (the machine's noise and the
    // growing tables fall on both alike); then 16 payers.
    let pay = |_| loads::pay(&client, &product);
    let payers = |n| loads::closed(opts.seconds, n, 1, pay);
    let paced = |rate: f64| loads::open(opts.seconds, 16, rate / 2.0, 1, pay);
    let mut alone = Vec::new();
    for _ in 0..3 {
        client.put("/shop/seller", &json!({})).await;
        let without = payers(1).await.remove(0);
        client.put("/shop/seller", &server::seller_body()).await;
        alone.push((without, payers(1).await.remove(0)));
    }
    client.put("/shop/seller", &json!({})).await;
    let uninvoiced = payers(16).await.remove(0);
    let uninvoiced_half = paced(uninvoiced.rps).await.remove(0);
    client.put("/shop/seller", &server::seller_body()).await;
    let invoiced = payers(16).await.remove(0);
    let invoiced_half = paced(invoiced.rps).await.remove(0);
    client.pay(&product, "ann@example.com").await;
    let payments: Value = serde_json::from_str(&client.get_text("/payments?limit=1").await).unwrap();
    let payment = payments[0]["id"].as_str().expect("the paid order").to_string();
    let invoices: Value =
        serde_json::from_str(&client.get_text(&format!("/invoices?payment={payment}")).await).unwrap();
    let invoice = invoices[0]["id"].as_str().expect("the paid order's invoice").to_string();
    let plan = json!({"title": "Gold", "currency": "EUR", "test": true,
                      "plan": {"amount": 990, "interval": 1, "interval_unit": "month"}});
    let plan = client.post("/plans", &plan).await["id"].as_str().unwrap().to_string();
    let card =
        json!({"number": "4200000000000000", "exp_month": 12, "exp_year": 2040, "cvc": "123", "holder": "Ann Lee"});
    let subscription = json!({"plan": {"id": plan}, "customer": server::customer_body(), "card": card});
    let subscription = client.post("/subscriptions", &subscription).await["id"].as_str().unwrap().to_string();
    // 16 subscribers, each paused, resumed and moved between two plans by a worker of its own.
    let other = json!({"title": "Gold, green", "currency": "EUR", "test": true,
                       "plan": {"amount": 990, "interval": 1, "interval_unit": "month"}});
    let plans = [plan.clone(), client.post("/plans", &other).await["id"].as_str().unwrap().to_string()];
    let subscribers = loads::subscribers(&client, &plan, 16).await;
    let write = |i: usize| loads::subscription_write(&client, &subscribers[i], &plans);
    let write_seconds = opts.write_seconds.unwrap_or(opts.seconds);
    let writes = loads::closed(write_seconds, 16, 3, write).await;
    let rate: f64 = writes.iter().map(|m| m.rps).sum();
    let writes_half = loads::open(write_seconds, 16, rate / 2.0, 3, write).await;
    let writes = Writes { alone, uninvoiced, uninvoiced_half, invoiced, invoiced_half, writes, writes_half };
    if opts.writes_only {
        // A create that none of these writes share code with, for the machine's noise.
        let auth = shop.authorization();
        let body = server::customer_body().to_string();
        let customers = Target::get(format!("{}/customers", server.base)).header(auth).post_json(body);
        let customers = measure(oha, &customers, opts.seconds);
        println!("\n{} — {:<32} {:>9} {:>8} {:>8}", backend.name(), "", "max req/s", "p50 ms", "p99 ms");
        writes.print();
        print_row("POST /customers (16 connections)", &customers, &[]);
        return;
    }
    let cookie = client.log_in().await;

    let bytes = client.get_text(&format!("/products/{product}")).await;
    let page = client.get_text("/products?limit=100").await;
    // The pool paydesk keeps by default.
    let args = ConfigArgs {
        database_url: Some(fresh.url.clone()),
        key_encryption_key: Some(server::KEK.into()),
        ..Default::default()
    };
    let connections = Config::from_args(&args).unwrap().db_connections;
    let limits = limits::serve(&fresh.url, connections, shop.id, &product, bytes.into_bytes(), page.into_bytes()).await;
    let base = &server.base;
    let auth = shop.authorization();
    let api = |path: &str| Target::get(format!("{base}{path}")).header(auth.clone());

    println!("\n{} — {:<32} {:>9} {:>8} {:>8}", backend.name(), "", "max req/s", "p50 ms", "p99 ms");
    let seconds = opts.seconds;
    let framework = measure(oha, &Target::get(format!("{limits}/bare")), seconds);
    print_row("limit: bare axum, same bytes", &framework, &[]);
    let read = measure(oha, &Target::get(format!("{limits}/read")), seconds);
    print_row("limit: sqlx read of the product", &read, &[]);
    let bare_page = measure(oha, &Target::get(format!("{limits}/bare_page")), seconds);
    print_row("limit: bare axum, a page's bytes", &bare_page, &[]);
    let list = measure(oha, &Target::get(format!("{limits}/list")), seconds);
    print_row("limit: sqlx page of 100 products", &list, &[]);
    let insert = measure(oha, &Target::get(format!("{limits}/insert")).post_json("{}".into()), seconds);
    print_row("limit: sqlx insert of a product", &insert, &[]);

    let one = measure(oha, &api(&format!("/products/{product}")), seconds);
    print_row("GET /products/{id}", &one, &[("framework", &framework), ("sqlx read", &read)]);
    // The same read once the shop has 1,000 keys: by its first key, its newest, and a key
    // restricted to reading products (whose permissions are checked at each request).
    let (newest, restricted) = thousand_keys(&client, shop.id).await;
    let keyed = |auth: &String| Target::get(format!("{base}/products/{product}")).header(auth.clone());
    let first_of_many = measure(oha, &api(&format!("/products/{product}")), seconds);
    print_row("… 1,000 keys, by the first", &first_of_many, &[("1 key", &one)]);
    let newest_of_many = measure(oha, &keyed(&newest), seconds);
    print_row("… 1,000 keys, by the newest", &newest_of_many, &[("1 key", &one)]);
    let restricted = measure(oha, &keyed(&restricted), seconds);
    print_row("… 1,000 keys, by a restricted one", &restricted, &[("1 key", &one)]);
    let public = Target::get(format!("{base}/products/{product}/pay")).header("Accept: application/json");
    let public = measure(oha, &public, seconds);
    print_row("GET /products/{id}/pay (JSON, no auth)", &public, &[("framework", &framework)]);
    let page = measure(oha, &api("/products?limit=100"), seconds);
    print_row("GET /products?limit=100", &page, &[("framework", &bare_page), ("sqlx page", &list)]);
    let body = server::product_body(0).to_string();
    let created = measure(oha, &api("/products").post_json(body), seconds);
    print_row("POST /products", &created, &[("sqlx insert", &insert)]);
    let body = server::customer_body().to_string();
    let customers = measure(oha, &api("/customers").post_json(body), seconds);
    print_row("POST /customers", &customers, &[("sqlx insert", &insert)]);
    if let Some(before) = std::env::var_os("PAYDESK_BENCH_BEFORE") {
        let this = [("GET /products/{id}", &one), ("POST /products", &created), ("POST /customers", &customers)];
        earlier(oha, backend, &before.to_string_lossy(), seconds, this).await;
    }
    writes.print();
    let form = Target::get(format!("{base}/products/{product}/pay")).header("Accept: text/html");
    let form = measure(oha, &form, seconds);
    print_row("GET /products/{id}/pay (form)", &form, &[("framework", &framework)]);
    // The writes above added thousands of rows in seconds: their statistics, as autovacuum
    // or paydesk's hourly upkeep would have them by the time a merchant looks.
    let db = paydesk::db::connect(&fresh.url, 1).await.unwrap();
    growth::settle(&db, backend).await;
    db.close().await.ok();
    let dashboard = Target::get(format!("{base}/dashboard/products")).header(cookie.clone());
    let dashboard = measure(oha, &dashboard, seconds);
    print_row("GET /dashboard/products (session)", &dashboard, &[("framework", &framework)]);
    let missing = measure(oha, &api("/products/prd_missing").status(404), seconds);
    print_row("GET /products/{unknown} (404)", &missing, &[("framework", &framework)]);
    println!(
        "  authentication: the authenticated read does {:.0}% of the public read's rate",
        100.0 * one.max.rps / public.max.rps
    );
    println!("  server's peak memory: {:.0} MiB", server.peak_mib());

    if opts.sizes.is_empty() {
        return;
    }
    let templates = growth::Templates { product, customer, payment, subscription, invoice };
    let running = Running { backend, fresh: &fresh, server: &server, auth: &auth, cookie: &cookie };
    grow(oha, &running, &templates, opts).await;
}

/// Gives the shop 999 more API keys through the API, 16 at a time (the last one restricted to
/// reading products); answers the `Authorization` headers of the newest unrestricted one and
/// of the restricted one.
async fn thousand_keys(client: &Client, shop_id: i64) -> (String, String) {
    let keys: Vec<String> = futures::stream::iter(1..1000)
        .map(|i| async move {
            let permissions = if i == 999 { json!({"products": "read"}) } else { Value::Null };
            let key = client.post("/api_keys", &json!({"name": format!("Key {i}"), "permissions": permissions})).await;
            let secret = key["secret"].as_str().unwrap().to_string();
            Shop { id: shop_id, secret, email: String::new() }.authorization()
        })
        .buffered(16)
        .collect()
        .await;
    (keys[997].clone(), keys[998].clone())
}

/// Creates 1,000 products through the API, 16 at a time; answers the first one's id.
async fn thousand_products(client: &Client) -> String {
    let products: Vec<String> =
        futures::stream::iter(0..1000)
            .map(|i| async move {
                client.post("/products", &server::product_body(i)).await["id"].as_str().unwrap().to_string()
            })
            .buffered(16)
            .collect()
            .await;
    products[0].clone()
}

/// Measures `binary`, an earlier release, as `this` build was measured: its rows beside this
/// build's, and this build's rate as a share of its.
async fn earlier(oha: &PathBuf, backend: Backend, binary: &str, seconds: u64, this: [(&str, &Row); 3]) {
    let fresh = Fresh::new(backend).await;
    let shop = Shop::create(binary, &fresh.url);
    let server = Server::start(binary, &fresh.url).await;
    let product = thousand_products(&Client::new(&server.base, &shop)).await;
    let api = |path: &str| Target::get(format!("{}{path}", server.base)).header(shop.authorization());
    let targets = [
        api(&format!("/products/{product}")),
        api("/products").post_json(server::product_body(0).to_string()),
        api("/customers").post_json(server::customer_body().to_string()),
    ];
    println!("  the earlier release ({binary}), on a database of its own:");
    for ((label, now), target) in this.into_iter().zip(targets) {
        let before = measure(oha, &target, seconds);
        print_row(&format!("before: {label}"), &before, &[]);
        println!(
            "  {:<40} {:>8.0}% of before's rate",
            format!("this build: {label}"),
            100.0 * now.max.rps / before.max.rps
        );
    }
}

/// Downloads `url` with `credentials` (a `Cookie: …` or `Authorization: …` header): its rows, the seconds it
/// took, and the seconds to its first byte.
async fn export(url: &str, credentials: &str) -> (u64, f64, f64) {
    let (name, value) = credentials.split_once(": ").expect("a header");
    let started = Instant::now();
    let mut response = reqwest::Client::new().get(url).header(name, value).send().await.expect("the export");
    assert!(response.status().is_success(), "the export answered {}", response.status());
    let (mut lines, mut first) = (0u64, None);
    while let Some(chunk) = response.chunk().await.expect("the export's body") {
        first.get_or_insert(started.elapsed().as_secs_f64());
        lines += chunk.iter().filter(|b| **b == b'\n').count() as u64;
    }
    (lines.saturating_sub(1), started.elapsed().as_secs_f64(), first.unwrap_or(0.0))
}

/// The number of the invoice `id`, as printed.
async fn invoice_number(db: &sea_orm::DatabaseConnection, id: &str) -> String {
    use paydesk::db::entities::documents::{Column, Entity};
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let found = Entity::find().filter(Column::Id.eq(id)).one(db).await.unwrap();
    found.unwrap_or_else(|| panic!("no invoice {id}")).number_text
}

/// A server under test and how to reach it.
struct Running<'a> {
    backend: Backend,
    fresh: &'a Fresh,
    server: &'a Server,
    auth: &'a str,
    cookie: &'a str,
}

async fn grow(oha: &PathBuf, running: &Running<'_>, t: &growth::Templates, opts: &Opts) {
    let Running { backend, fresh, server, auth, cookie } = *running;
    let args = ConfigArgs {
        database_url: Some(fresh.url.clone()),
        scheduler: Some("off".into()),
        key_encryption_key: Some(server::KEK.into()),
        ..Default::default()
    };
    let config = Config::from_args(&args).unwrap();
    let db = paydesk::app::open_database(&config).await.unwrap();
    let state = AppState::new(db.clone(), config).unwrap();
    let base = &server.base;
    let api = |path: String| Target::get(format!("{base}{path}")).header(auth.to_string());
    let page = |path: String| Target::get(format!("{base}{path}")).header(cookie.to_string());
    println!(
        "\n{} — growth: p50 ms (req/s) with 4 connections, closed loop; the export once; billing: one run over 1,000 due",
        backend.name()
    );
    let mut header = format!("  {:<44}", "rows in each table");
    let labels = [
        "GET /products/{id}",
        "GET /products?limit=100, mid-table page",
        "GET /payments?product_id=…&status=…",
        "dashboard: overview",
        "dashboard: payments",
        "dashboard: payments, a page mid-list",
        "dashboard: payments search, one e-mail",
        "dashboard: customers search, one e-mail",
        "dashboard: products search, one name",
        "GET /invoices?customer=…",
        "dashboard: invoices",
        "dashboard: invoices search, one number",
        "dashboard: invoices search, one e-mail",
        "an invoice's page (public)",
        "GET /revenue/mrr, 12 months",
        "GET /revenue/movements, 30 days by day",
        "dashboard: revenue, 12 months",
        "GET /revenue/cohorts, 12 months",
        "dashboard: payments CSV export (rows/s)",
        "dashboard: the books' CSV export (rows/s)",
        "GET /revenue/subscribers, CSV (rows/s)",
        "billing run, 1,000 due",
    ];
    let mut lines: Vec<(&str, Vec<String>, Vec<f64>)> = labels.iter().map(|l| (*l, Vec::new(), Vec::new())).collect();
    let mut grown = 1;
    for &size in &opts.sizes {
        let started = Instant::now();
        growth::grow(&db, backend, t, grown, size).await;
        eprintln!("  grew to {size} rows a table in {:.1} s", started.elapsed().as_secs_f64());
        grown = size;
        header.push_str(&format!(" {:>16}", size));
        // Copy `mid` of each table: a customer, the product named after it, and its payment.
        let mid = size / 2;
        let email = format!("c{mid}.{}", server::customer_body()["email"].as_str().unwrap()).replace('@', "%40");
        let number = invoice_number(&db, &format!("{}_{mid}", t.invoice)).await;
        let targets = [
            api(format!("/products/{}", t.product)),
            api(format!("/products?limit=100&starting_after={}_{}", t.product, mid)),
            api(format!("/payments?product_id={}&status=succeeded&limit=100", t.product)),
            page("/dashboard".into()),
            page("/dashboard/payments".into()),
            page(format!("/dashboard/payments?after={}_{mid}", t.payment)),
            page(format!("/dashboard/payments?q={email}")),
            page(format!("/dashboard/customers?q={email}")),
            page(format!("/dashboard/products?q={mid}x")),
            api(format!("/invoices?customer={}_{mid}", t.customer)),
            page("/dashboard/invoices".into()),
            page(format!("/dashboard/invoices?q={number}")),
            page(format!("/dashboard/invoices?q={email}")),
            Target::get(format!("{base}/documents/{}_{mid}", t.invoice)),
            api("/revenue/mrr?currency=EUR&test=true".into()),
            api("/revenue/movements?currency=EUR&test=true&interval=day".into()),
            page("/dashboard/revenue?currency=EUR&test=true".into()),
            api("/revenue/cohorts?currency=EUR&test=true".into()),
        ];
        for (i, target) in targets.iter().enumerate() {
            let m = oha::run(oha, target, Load::Closed { connections: 4 }, opts.seconds);
            lines[i].1.push(format!("{:>7.2} ({:>6.0})", m.p50_ms, m.rps));
            lines[i].2.push(m.p50_ms);
        }
        let exports = [
            (format!("{base}/dashboard/payments/export.csv"), cookie),
            (format!("{base}/dashboard/invoices/export.csv?from=2000-01-01&to=2099-12-31&mode=test"), cookie),
            (format!("{base}/revenue/subscribers?currency=EUR&test=true"), auth),
        ];
        for (i, (url, credentials)) in exports.iter().enumerate() {
            let (rows, seconds, first) = export(url, credentials).await;
            let line = &mut lines[targets.len() + i];
            line.1.push(format!("{:>7.0} ({:.2} s)", rows as f64 / seconds, first));
            line.2.push(seconds / rows as f64);
        }
        let due = growth::make_due(&db, &t.subscription, 1000).await;
        let started = Instant::now();
        let report = paydesk::services::billing::run_due(&state, Utc::now()).await.expect("billing run");
        let took = started.elapsed().as_secs_f64();
        assert_eq!(report.charged as u64, due, "the billing run charged {} of {due}", report.charged);
        let line = lines.last_mut().unwrap();
        line.1.push(format!("{:>14.2} s", took));
        line.2.push(took);
    }
    println!("{header} {:>10}", "last÷first");
    for (label, cells, costs) in lines {
        let ratio = costs.last().zip(costs.first()).map_or(0.0, |(last, first)| last / first);
        println!("  {label:<44} {} {ratio:>10.1}", cells.iter().map(|c| format!(" {c:>16}")).collect::<String>());
    }
    println!(
        "  (the export: rows a second and, in brackets, the seconds to its first byte; its ratio is of the time a row)"
    );
    println!("  server's peak memory: {:.0} MiB", server.peak_mib());
}
