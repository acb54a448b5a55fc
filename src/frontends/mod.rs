//! The faces of paydesk, none importing another: the JSON API ([`api`]), the hosted pages
//! customers pay on ([`pay`]), the merchant dashboard ([`dashboard`]) and what operators ask
//! of an instance ([`ops`]).

pub mod api;
pub mod dashboard;
pub mod ops;
pub mod pay;
