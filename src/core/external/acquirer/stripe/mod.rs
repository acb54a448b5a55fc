//! Stripe: the objects paydesk reads and the form-encoded requests it sends ([`wire`]), what
//! each answer means ([`status`], one table), the calls of one account ([`api`]), the account
//! as paydesk's acquirer ([`acquirer`]) and its signed webhooks ([`signature`]).
//!
//! Written by hand against Stripe's documented API (a typed client pulls in a quarter of a
//! million generated lines and refuses the partial objects a test double answers): every
//! field paydesk does not need to decide something is optional, and an unknown status is
//! never taken for a success.

pub mod acquirer;
pub mod api;
pub mod disputes;
pub mod signature;
pub mod status;
pub mod wire;
