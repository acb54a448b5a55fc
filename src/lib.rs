//! paydesk: a self-hostable payment-acceptance service.
//!
//! One axum app serves three faces from one process: the JSON API for integrations
//! ([`frontends::api`], HTTP Basic per shop), the public hosted pages customers pay on
//! ([`frontends::pay`]), and the merchant dashboard ([`frontends::dashboard`], session login,
//! server-rendered). The folders are the layers, and each imports only from those listed
//! before it (`tests/it/layout.rs` checks every file):
//!
//! 1. [`domain`] and [`config`]: the rules (parsing, validation, money, the billing time
//!    rules; no HTTP, no SQL, time passed in) and the instance's settings;
//! 2. [`db`], storage (sea-orm entities and every query, each scoped to a shop), and
//!    [`external`], the world outside (the acquirer, outbound HTTP, the vault, telemetry);
//! 3. [`web`]: what every face shares (the one error type, the app state, the request guard,
//!    the API's objects, texts and locale data, CSRF, the addresses paydesk hands out);
//! 4. [`services`]: the billing engine, payments, refunds, subscriptions, webhooks, events;
//! 5. [`frontends`]: the API, the hosted pages, the dashboard and the operators' endpoints,
//!    none importing another;
//! 6. [`app`]: the wiring (the router, the server, the OpenAPI document, the command line).
//!
//! Layers 1 and 2 are a crate of their own, `paydesk-core` in `src/core/`, so that a build
//! compiles them beside the web layers' libraries and optimises them while the layers above
//! are checked; they are re-exported here by name, and every file names them as `crate::db`.
//!
//! Handlers stay thin: they extract the request, let [`domain`] parse and validate it, call
//! the queries of [`db`] or a service, and render JSON or an askama page. Every failure is one
//! [`web::error::AppError`].

pub use paydesk_core::{config, db, domain, external};

pub mod app;
pub mod frontends;
pub mod services;
pub mod web;
