//! sea-orm entities, one per table, in the shape `sea-orm-cli generate entity` writes.
//! Behaviour lives elsewhere (`db::*` queries, `domain`); these files only describe rows.

pub mod audit_events;
pub mod audit_heads;
pub mod audit_pending;
pub mod checkout_attempts;
pub mod coupons;
pub mod customers;
pub mod dispute_history;
pub mod disputes;
pub mod events;
pub mod idempotency_keys;
pub mod jobs;
pub mod mail_attempts;
pub mod mails;
pub mod payment_totals;
pub mod payments;
pub mod plans;
pub mod portal_tokens;
pub mod processor_events;
pub mod products;
pub mod recovery_codes;
pub mod refunds;
pub mod sessions;
pub mod shop_processors;
pub mod shops;
pub mod subscription_counts;
pub mod subscription_events;
pub mod subscriptions;
pub mod tax_rates;
pub mod test_card_outcomes;
pub mod test_clocks;
pub mod throttle_hits;
pub mod users;
pub mod webhook_attempts;
pub mod webhook_deliveries;
pub mod webhook_endpoints;
