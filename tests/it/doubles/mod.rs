//! Local doubles of the outside parties paydesk talks to, with the faults they can show.

pub mod bepaid;
pub mod localstripe;
pub mod smtp;
pub mod stripe;
