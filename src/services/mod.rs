//! The services the faces and the scheduler call: the billing engine ([`billing`]), payments
//! on the hosted pages ([`payments`]), [`refunds`], [`subscriptions`], the event log
//! ([`events`]), webhook deliveries ([`webhooks`]) and subscriber mails ([`mail`]), shops and their keys ([`shops`],
//! [`keys`]), their payment processors ([`processors`]) and what those notify
//! ([`notifications`]), disputes and fraud warnings ([`disputes`]) with the simulated card
//! network that makes them for test cards ([`network`]), password hashing ([`passwords`]) and the timed jobs ([`scheduler`]).

pub mod api_keys;
pub mod audit;
pub mod backup;
pub mod billing;
pub mod captures;
pub mod catalog;
pub mod coupons;
pub mod disputes;
pub mod events;
pub mod invoices;
pub mod keys;
pub mod lockout;
pub mod mail;
pub mod network;
pub mod notifications;
pub mod passwords;
pub mod payments;
pub mod portal;
pub mod processors;
pub mod refunds;
pub mod revenue;
pub mod scheduler;
pub mod shops;
pub mod subscriptions;
pub mod taxes;
pub mod two_step;
pub mod webhooks;
pub mod worker;
