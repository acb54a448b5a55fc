//! paydesk: a self-hostable payment-acceptance service.
//!
//! One axum app serves three faces from one process: the JSON API for integrations
//! ([`api`], HTTP Basic per shop), the public hosted pages customers pay on ([`pay`]), and
//! the merchant dashboard ([`dashboard`], session login, server-rendered). Handlers stay thin: they extract the request, let the pure
//! rules of [`domain`] parse and validate it (time passed in, no HTTP, no SQL), call the
//! queries of [`db`] (sea-orm over SQLite or PostgreSQL, every query filtered by shop), and
//! render JSON or an askama page. Every failure is one [`error::AppError`].

pub mod acquirer;
pub mod api;
pub mod app;
pub mod billing;
pub mod cli;
pub mod config;
pub mod csrf;
pub mod dashboard;
pub mod db;
pub mod domain;
pub mod error;
pub mod events;
pub mod guard;
pub mod i18n;
pub mod keys;
pub mod locale;
pub mod openapi;
pub mod ops;
pub mod outbound;
pub mod passwords;
pub mod pay;
pub mod payments;
pub mod refunds;
pub mod scheduler;
pub mod shops;
pub mod state;
pub mod subscriptions;
pub mod telemetry;
pub mod urls;
pub mod vault;
pub mod views;
pub mod webhooks;
