//! paydesk's lower layers (see the `paydesk` crate's own page for all of them):
//!
//! 1. [`domain`] and [`config`]: the rules (parsing, validation, money, the billing time
//!    rules; no HTTP, no SQL, time passed in) and the instance's settings;
//! 2. [`db`], storage (sea-orm entities and every query, each scoped to a shop), and
//!    [`external`], the world outside (the acquirer, outbound HTTP, the vault, telemetry).
//!
//! They are a crate of their own only to build in parallel with the layers above; `paydesk`
//! re-exports each module under its own name, so the code above names them as its own.

pub mod config;
pub mod db;
pub mod domain;
pub mod external;
