//! The faces of paydesk, none importing another: the JSON API ([`api`]), the hosted pages
//! customers pay on ([`pay`]), the merchant dashboard ([`dashboard`]), what operators ask
//! of an instance ([`ops`]) and what payment processors notify ([`notifications`]).

pub mod api;
pub mod dashboard;
pub mod notifications;
pub mod ops;
pub mod pay;
