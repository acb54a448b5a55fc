//! What `POST /customers/{id}/portal_sessions` accepts: where the subscriber page's "back to
//! the shop" leads, and the language it is shown in.

use serde_json::{Map, Value};

use super::Errors;
use super::input::Reader;
use super::product::read_url;
use super::vocab::Language;

/// A request for a link to a customer's subscriber page.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PortalSessionRequest {
    pub return_url: Option<String>,
    /// `en` or `ru` (the page's languages); English by default.
    pub locale: Language,
}

impl PortalSessionRequest {
    /// Checks a request body.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let return_url = if r.sent("return_url") { read_url(&r, "return_url", &mut e) } else { None };
        let locale = match r.string("locale", 8, &mut e).as_deref() {
            None | Some("en") => Language::En,
            Some("ru") => Language::Ru,
            Some(_) => {
                e.add("locale", "is not included in the list");
                Language::En
            }
        };
        if !e.is_empty() {
            return Err(e);
        }
        Ok(PortalSessionRequest { return_url, locale })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: Value) -> Result<PortalSessionRequest, Errors> {
        PortalSessionRequest::parse(body.as_object().unwrap())
    }

    #[test]
    fn a_request_names_where_back_leads_and_the_language() {
        let ok = parse(serde_json::json!({"return_url": "https://shop.example/account", "locale": "ru"})).unwrap();
        assert_eq!(ok.return_url.as_deref(), Some("https://shop.example/account"));
        assert_eq!(ok.locale, Language::Ru);
        assert_eq!(parse(serde_json::json!({})).unwrap(), PortalSessionRequest::default());
        assert!(parse(serde_json::json!({"return_url": "javascript:alert(1)"})).is_err());
        assert!(parse(serde_json::json!({"locale": "xx"})).is_err());
    }
}
