//! Integration tests: each test drives the real app over HTTP on a fresh database, once on
//! SQLite and once on PostgreSQL (`PAYDESK_TEST_POSTGRES_URL`, default the local server).

#[macro_use]
mod helpers;

mod access_browser;
mod auth;
mod backup;
mod bepaid;
mod bepaid_browser;
mod bepaid_pay;
mod browser;
mod cli;
mod concurrent_writes;
mod coupons;
mod crash;
mod customers;
mod dashboard;
mod dashboard_browser;
mod disputes;
mod docs;
mod doubles;
mod ended_renewals;
mod engine;
mod events;
mod idempotency;
mod isolation;
mod late_outcomes;
mod layout;
mod left_the_page;
mod lists;
mod mails;
mod money;
mod openapi;
mod ops;
mod pages;
mod parity;
mod pause;
mod payments;
mod plan_change;
mod plans;
mod portal;
mod portal_browser;
mod processor;
mod products;
mod refunds;
mod requests;
mod scaleout;
mod settling;
mod stripe_browser;
mod stripe_disputes;
mod stripe_local;
mod stripe_pay;
mod subscriptions;
mod upgrade;
mod walk;
mod webhooks;
