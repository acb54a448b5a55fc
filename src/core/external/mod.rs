//! The world outside paydesk's own database: the acquirer that moves the money, the HTTP
//! client of outbound deliveries, the SMTP client of subscriber mails, the vault that seals
//! secrets at rest, and telemetry (the log format and every metric series).

pub mod acquirer;
pub mod outbound;
pub mod smtp;
pub mod telemetry;
pub mod vault;
