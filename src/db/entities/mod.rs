//! sea-orm entities, one per table, in the shape `sea-orm-cli generate entity` writes.
//! Behaviour lives elsewhere (`db::*` queries, `domain`); these files only describe rows.

pub mod customers;
pub mod payments;
pub mod plans;
pub mod products;
pub mod sessions;
pub mod shops;
pub mod subscription_events;
pub mod subscriptions;
pub mod test_clocks;
pub mod users;
