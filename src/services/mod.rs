//! The services the faces and the scheduler call: the billing engine ([`billing`]), payments
//! on the hosted pages ([`payments`]), [`refunds`], [`subscriptions`], the event log
//! ([`events`]) and webhook deliveries ([`webhooks`]), shops and their keys ([`shops`],
//! [`keys`]), their payment processors ([`processors`]) and what those notify
//! ([`notifications`]), password hashing ([`passwords`]) and the timed jobs ([`scheduler`]).

pub mod billing;
pub mod events;
pub mod keys;
pub mod notifications;
pub mod passwords;
pub mod payments;
pub mod processors;
pub mod refunds;
pub mod scheduler;
pub mod shops;
pub mod subscriptions;
pub mod webhooks;
