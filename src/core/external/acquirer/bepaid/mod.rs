//! bePaid and the BeGateway family of processors (white-labelled under many domains): the
//! JSON they speak ([`wire`]), what each answer means for paydesk ([`status`]), the calls to
//! a gateway ([`gateway`]), the shop's account as paydesk's acquirer ([`acquirer`]) and its
//! signed notifications ([`notification`]).

pub mod acquirer;
pub mod gateway;
pub mod notification;
pub mod status;
pub mod wire;
