//! What every face shares: the one error type ([`error`]), the state every handler and the
//! engine reach ([`state`]), what every request passes ([`guard`]), the API's objects
//! ([`views`]), the pages' texts and locale data ([`i18n`], [`locale`]), CSRF tokens
//! ([`csrf`]), the addresses paydesk hands out ([`urls`]) and CSV downloads ([`csv`]).

pub mod csrf;
pub mod csv;
pub mod documents;
pub mod error;
pub mod guard;
pub mod i18n;
pub mod locale;
pub mod state;
pub mod urls;
pub mod views;
