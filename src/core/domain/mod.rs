//! Pure domain logic: parsing and validating what merchants send, money, codes and ids.
//! Nothing here touches HTTP or the database, and time always comes in as an argument.

pub mod access;
pub mod account;
pub mod api_key;
pub mod audit;
pub mod backup;
pub mod billing;
pub mod card;
pub mod checkout;
pub mod country;
pub mod coupon;
pub mod currency;
pub mod customer;
pub mod dispute;
pub mod errors;
pub mod event;
pub mod ids;
pub mod input;
pub mod invoice;
pub mod mail;
pub mod money;
pub mod mrr;
pub mod payment;
pub mod pending;
pub mod plan;
pub mod plan_change;
pub mod portal;
pub mod processor;
pub mod product;
pub mod refund;
pub mod revenue;
pub mod schema;
pub mod seller;
pub mod series;
pub mod session;
pub mod subscription;
pub mod tax;
pub mod throttle;
pub mod two_step;
pub mod vat_id;
pub mod vocab;
pub mod webhook;

pub use errors::Errors;

#[cfg(test)]
mod properties;
