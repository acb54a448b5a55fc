//! The dashboard's words, in English and Russian, chosen per user (Settings → Language; before
//! signing in, the language last chosen in this browser or else its `Accept-Language`).
//!
//! The English text is the key, as in gettext: templates write `{{ chrome.t("Products") }}`,
//! handlers `m.t("Saved.")`, and `f("Refund {}?", &[&amount])` fills `{}` in order. A text
//! that travels as a value before it is translated is marked where it is written with
//! [`k`]. Each file beside this one holds the Russian of one part of the dashboard; a test
//! reads every template and handler of the dashboard and proves that no key lacks its Russian
//! and that no Russian is left unused.

use std::collections::HashMap;
use std::fmt::Display;
use std::sync::OnceLock;

use axum::http::{HeaderMap, header};

use crate::domain::currency::Currency;
use crate::domain::vocab::{DashboardLanguage, Language};

mod books;
mod catalog;
mod common;
mod disputes;
mod money;
mod people;
mod revenue;
mod settings;

/// The cookie that remembers the language chosen in this browser, for the pages before login.
pub const COOKIE: &str = "pd_lang";

/// Marks `english` as a text translated later, where it is shown (it travels as a value).
pub const fn k(english: &'static str) -> &'static str {
    english
}

/// The language a user reads the dashboard in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Words {
    #[default]
    En,
    Ru,
}

impl Words {
    /// Both, in the order the language setting lists them: `(code, own name)`.
    pub const ALL: [(Words, &'static str); 2] = [(Words::En, "English"), (Words::Ru, "Русский")];

    /// The language of code `code` (`en`, `ru`); English for any other.
    pub fn of(code: &str) -> Words {
        match code.trim().to_ascii_lowercase().as_str() {
            "ru" => Words::Ru,
            _ => Words::En,
        }
    }

    /// Whether `code` names one of the dashboard's languages.
    pub fn known(code: &str) -> bool {
        Words::ALL.iter().any(|(w, _)| w.code() == code)
    }

    /// The language of a request before login: the one last chosen in this browser (its
    /// cookie), else the first of ours its `Accept-Language` prefers, else English.
    pub fn of_request(headers: &HeaderMap) -> Words {
        let cookies = headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok());
        for pair in cookies.flat_map(|c| c.split(';')) {
            if let Some((name, value)) = pair.trim().split_once('=')
                && name == COOKIE
                && Words::known(value)
            {
                return Words::of(value);
            }
        }
        let accept = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()).unwrap_or("");
        Words::preferred(accept)
    }

    /// The first of our languages an `Accept-Language` value prefers (`ru-RU,ru;q=0.9,en;q=0.8`).
    pub fn preferred(accept: &str) -> Words {
        let mut best: Option<(f32, Words)> = None;
        for item in accept.split(',') {
            let mut parts = item.split(';');
            let tag = parts.next().unwrap_or("").trim();
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            let primary = tag.split('-').next().unwrap_or("").to_ascii_lowercase();
            if q > 0.0 && Words::known(&primary) && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, Words::of(&primary)));
            }
        }
        best.map_or(Words::En, |(_, w)| w)
    }

    /// The language's code, as `<html lang>` and the users table write it.
    pub fn code(self) -> &'static str {
        match self {
            Words::En => "en",
            Words::Ru => "ru",
        }
    }

    /// The language as a user's row stores it.
    pub fn stored(self) -> DashboardLanguage {
        match self {
            Words::En => DashboardLanguage::En,
            Words::Ru => DashboardLanguage::Ru,
        }
    }

    /// The language a user's row stores.
    pub fn of_user(stored: DashboardLanguage) -> Words {
        match stored {
            DashboardLanguage::En => Words::En,
            DashboardLanguage::Ru => Words::Ru,
        }
    }

    /// The cookie that remembers this language in the browser for a year.
    pub fn cookie(self) -> axum::http::HeaderValue {
        let cookie = format!("{COOKIE}={}; Path=/dashboard; Max-Age=31536000; SameSite=Lax", self.code());
        axum::http::HeaderValue::from_str(&cookie).unwrap_or(axum::http::HeaderValue::from_static(""))
    }

    /// The language as the locale data knows it.
    pub fn language(self) -> Language {
        match self {
            Words::En => Language::En,
            Words::Ru => Language::Ru,
        }
    }

    /// `english` in this language.
    pub fn t(self, english: &'static str) -> &'static str {
        self.t_data(english)
    }

    /// A text known only when the page runs (a status, an error's message) in this language,
    /// as it is when the catalog has none.
    pub fn t_data(self, english: &str) -> &str {
        match self {
            Words::En => english,
            Words::Ru => catalog().get(english).copied().unwrap_or(english),
        }
    }

    /// `english` as said of a `kind` of thing in this language: `kind:english` where the
    /// catalog has it, else the word alone. Russian agrees with its object (a failed
    /// subscription «не оплачена», a failed delivery «не доставлено»; the field `to` of a date
    /// range is «Дата по»); English has a few for API words a merchant would not say
    /// (`redirecting` is "awaiting card").
    pub fn t_in<'a>(self, kind: &str, english: &'a str) -> &'a str {
        let key = format!("{kind}:{english}");
        match self {
            Words::En => {
                common::EN.iter().chain(disputes::EN).find(|(k, _)| *k == key).map_or(english, |(_, said)| said)
            }
            Words::Ru => catalog().get(key.as_str()).copied().unwrap_or_else(|| self.t_data(english)),
        }
    }

    /// `english` in this language with each `{}` filled by the next of `args`.
    pub fn f(self, english: &'static str, args: &[&(dyn Display + Sync)]) -> String {
        fill(self.t(english), args)
    }

    /// [`Words::f`] with one value, for templates.
    pub fn f1(self, english: &'static str, a: impl Display + Sync) -> String {
        self.f(english, &[&a])
    }

    /// [`Words::f`] with two values, for templates.
    pub fn f2(self, english: &'static str, a: impl Display + Sync, b: impl Display + Sync) -> String {
        self.f(english, &[&a, &b])
    }

    /// A count with its noun, agreeing: `english` is `"{} payment|{} payments"` (one|other);
    /// its Russian has the three forms one|few|many (`"{} платёж|{} платежа|{} платежей"`).
    pub fn n(self, n: i64, english: &'static str) -> String {
        let forms: Vec<&str> = self.t(english).split('|').collect();
        let form = match (self, forms.len()) {
            (Words::Ru, 3) => forms[crate::web::locale::russian_form(n.unsigned_abs())],
            (_, 2) if n == 1 => forms[0],
            (_, 2) => forms[1],
            _ => forms[0],
        };
        fill(form, &[&n])
    }

    /// A day of a chart, short: `8 Dec`, `8 дек.`.
    pub fn day(self, day: chrono::NaiveDate) -> String {
        crate::web::locale::short_day(day, self.language())
    }

    /// A message of the API's rules or services (`is too long (maximum is 255 characters)`,
    /// `… this payment is refunded`) in this language: found whole, with its number as `{}`,
    /// with its last word as `{}` (a status, itself translated), or with its first word as `{}`
    /// (an address: `10.0.0.1 is not a public address`); as it is when none is known.
    pub fn rule(self, message: &str) -> String {
        if self == Words::En {
            return message.to_string();
        }
        if let Some(found) = catalog().get(message) {
            return found.to_string();
        }
        if let Some(start) = message.find(|c: char| c.is_ascii_digit()) {
            let end = message[start..].find(|c: char| !c.is_ascii_digit()).map_or(message.len(), |e| start + e);
            let pattern = format!("{}{{}}{}", &message[..start], &message[end..]);
            if let Some(found) = catalog().get(pattern.as_str()) {
                return fill(found, &[&grouped(&message[start..end])]);
            }
        }
        if let Some((head, last)) = message.rsplit_once(' ')
            && let Some(found) = catalog().get(format!("{head} {{}}").as_str())
        {
            return fill(found, &[&self.t_data(last)]);
        }
        if let Some((first, tail)) = message.split_once(' ')
            && let Some(found) = catalog().get(format!("{{}} {tail}").as_str())
        {
            return fill(found, &[&first]);
        }
        message.to_string()
    }

    /// `amount` minimal units of `currency` as a form's field shows it for editing: `9.90`, or
    /// `9,90` in Russian (but `1.234` for a three-decimal currency, where `1,234` would read
    /// as a thousand).
    pub fn typed(self, amount: i64, currency: Currency) -> String {
        let major = crate::domain::money::Money::new(amount, currency).major();
        match (self, currency.exponent) {
            (Words::Ru, 1 | 2) => major.replace('.', ","),
            _ => major,
        }
    }

    /// `amount` minimal units of `currency` as this language writes money (`€9.90`, `9,90 €`).
    pub fn money(self, amount: i64, currency: Currency) -> String {
        crate::web::locale::money(amount, currency, self.language())
    }
}

/// A long number grouped as Russian groups digits: `1000000000` as `1 000 000 000` (with
/// no-break spaces); up to four digits as they are.
fn grouped(digits: &str) -> String {
    if digits.len() <= 4 {
        return digits.to_string();
    }
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{a0}');
        }
        out.push(digit);
    }
    out
}

fn fill(template: &str, args: &[&(dyn Display + Sync)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut args = args.iter();
    let mut rest = template;
    while let Some(at) = rest.find("{}") {
        out.push_str(&rest[..at]);
        if let Some(arg) = args.next() {
            out.push_str(&arg.to_string());
        }
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// Every part's Russian, by English key.
fn parts() -> [&'static [(&'static str, &'static str)]; 21] {
    let [shop, team, webhooks, api_keys, processor, mails] = settings::RU;
    [
        common::RU,
        catalog::RU,
        people::RU,
        money::RU,
        disputes::RU,
        books::RU,
        revenue::RU,
        shop,
        team,
        webhooks,
        api_keys,
        processor,
        mails,
        common::DATA,
        catalog::DATA,
        people::DATA,
        money::DATA,
        disputes::DATA,
        settings::DATA,
        revenue::DATA,
        common::RULES,
    ]
}

fn catalog() -> &'static HashMap<&'static str, &'static str> {
    static CATALOG: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    CATALOG.get_or_init(|| parts().into_iter().flatten().copied().collect())
}

#[cfg(test)]
mod tests;
