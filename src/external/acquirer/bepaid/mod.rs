//! bePaid and the BeGateway family of processors (white-labelled under many domains): the
//! JSON they speak ([`wire`]), what each answer means for paydesk ([`status`]) and their
//! signed notifications ([`notification`]).

pub mod notification;
pub mod status;
pub mod wire;
