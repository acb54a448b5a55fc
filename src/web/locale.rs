//! What CLDR knows about a language (ICU4X's compiled locale data): money as it is written
//! there (`€1,234,567.89` in en, `1 234 567,89 €` in ru) and the names of countries.

use std::collections::HashMap;
use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use fixed_decimal::Decimal;
use icu_experimental::dimension::currency::CurrencyCode;
use icu_experimental::dimension::currency::formatter::CurrencyFormatter;
use icu_experimental::displaynames::DisplayNamesOptions;
use icu_experimental::displaynames::multi::{LanguageDisplayNames, RegionDisplayNames};
use icu_locale_core::{Locale, subtags, subtags::Region};
use writeable::Writeable;

use crate::domain::country;
use crate::domain::currency::Currency;
use crate::domain::vocab::Language;

fn locale(language: Language) -> Locale {
    language.as_str().parse().unwrap_or(Locale::UNKNOWN)
}

/// `amount` minimal units of `currency` as `language` writes money: its symbol (or code) where
/// the language puts it, its grouping and decimal marks, the currency's decimals.
pub fn money(amount: i64, currency: Currency, language: Language) -> String {
    thread_local! {
        static FORMATTERS: std::cell::RefCell<HashMap<Language, Option<CurrencyFormatter>>> = Default::default();
    }
    let mut number = Decimal::from(amount);
    number.multiply_pow10(-(currency.exponent as i16));
    let code = currency.code.parse().map(CurrencyCode);
    let written = FORMATTERS.with(|cell| {
        let mut formatters = cell.borrow_mut();
        let formatter = formatters
            .entry(language)
            .or_insert_with(|| CurrencyFormatter::try_new(locale(language).into(), Default::default()).ok());
        match (formatter, &code) {
            (Some(f), Ok(code)) => Some(f.format_fixed_decimal(&number, code).write_to_string().into_owned()),
            _ => None,
        }
    });
    written.unwrap_or_else(|| format!("{number} {}", currency.code))
}

fn chrono_locale(language: Language) -> chrono::Locale {
    use chrono::Locale::*;
    match language {
        Language::Ru => ru_RU,
        Language::De => de_DE,
        Language::Es => es_ES,
        Language::Fr => fr_FR,
        Language::It => it_IT,
        Language::Tr => tr_TR,
        Language::Zh => zh_CN,
        Language::Da => da_DK,
        Language::Sv => sv_SE,
        Language::No => nb_NO,
        Language::Fi => fi_FI,
        Language::Pl => pl_PL,
        Language::Ja => ja_JP,
        Language::Be => be_BY,
        Language::Uk => uk_UA,
        Language::Ka => ka_GE,
        Language::Ro => ro_RO,
        Language::En => en_GB,
    }
}

/// A day as `language` writes it, in zone `tz`: `8 December 2026`, `8 декабря 2026`.
pub fn date(at: DateTime<Utc>, tz: Tz, language: Language) -> String {
    at.with_timezone(&tz).format_localized("%-d %B %Y", chrono_locale(language)).to_string()
}

/// A moment as `language` writes it, with its zone: `8 December 2026, 09:05 CET`.
pub fn date_time(at: DateTime<Utc>, tz: Tz, language: Language) -> String {
    at.with_timezone(&tz).format_localized("%-d %B %Y, %H:%M %Z", chrono_locale(language)).to_string()
}

/// Which of Russian's three forms of a noun goes with `n` (CLDR's plural rule for ru): 0 for
/// one (1, 21, 101), 1 for few (2–4, 22–24), 2 for many (0, 5–20, 25–30, 111).
pub fn russian_form(n: u64) -> usize {
    let (ten, hundred) = (n % 10, n % 100);
    if ten == 1 && hundred != 11 {
        0
    } else if (2..=4).contains(&ten) && !(12..=14).contains(&hundred) {
        1
    } else {
        2
    }
}

/// A day of a chart as `language` writes it, short: `8 Dec`, `8 дек.`.
pub fn short_day(day: chrono::NaiveDate, language: Language) -> String {
    day.format_localized("%-d %b", chrono_locale(language)).to_string()
}

/// Every language of the spec as `(code, its own name)`, in the spec's order: `("de",
/// "Deutsch")`, `("ru", "Русский")`; a language picker shows each the way its readers know it.
pub fn language_names() -> &'static [(&'static str, String)] {
    static NAMES: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        Language::ALL
            .iter()
            .map(|&l| {
                let code = l.as_str();
                let names = LanguageDisplayNames::try_new(locale(l).into(), DisplayNamesOptions::default()).ok();
                let subtag: Option<subtags::Language> = code.parse().ok();
                let name = names.as_ref().zip(subtag).and_then(|(n, s)| n.of(s)).unwrap_or(code);
                // A list starts each name with a capital, where the script has everyday
                // capitals: Georgian's Mtavruli are not (ქართული stays as it is).
                let mut chars = name.chars();
                let first = chars.next().filter(|c| !('\u{10d0}'..='\u{10ff}').contains(c));
                let capitalized = first.map(|first| first.to_uppercase().chain(chars).collect());
                (code, capitalized.unwrap_or_else(|| name.to_string()))
            })
            .collect()
    })
}

/// `language` by its own name (`Deutsch`).
pub fn language_name(language: Language) -> &'static str {
    let names = language_names();
    names.iter().find(|(code, _)| *code == language.as_str()).map_or(language.as_str(), |(_, name)| name.as_str())
}

/// Every country as `(code, name in language)`, in the order of the names.
pub fn countries(language: Language) -> &'static [(&'static str, String)] {
    static LISTS: OnceLock<HashMap<Language, Vec<(&'static str, String)>>> = OnceLock::new();
    let lists = LISTS.get_or_init(|| {
        Language::ALL
            .iter()
            .map(|&l| {
                let names = RegionDisplayNames::try_new(locale(l).into(), DisplayNamesOptions::default()).ok();
                let mut list: Vec<(&'static str, String)> = country::COUNTRIES
                    .split_ascii_whitespace()
                    .map(|code| {
                        let region: Option<Region> = code.parse().ok();
                        let name = names.as_ref().zip(region).and_then(|(n, r)| n.of(r)).unwrap_or(code);
                        (code, name.to_string())
                    })
                    .collect();
                // "Тёркс" among the "Те…": Russian sorts ё as е.
                list.sort_by_cached_key(|(_, name)| name.to_lowercase().replace('ё', "е"));
                (l, list)
            })
            .collect()
    });
    &lists[&language]
}

/// The name of the country `code` in `language`; the code itself if it is none.
pub fn country_name(code: &str, language: Language) -> String {
    let found = countries(language).iter().find(|(c, _)| c.eq_ignore_ascii_case(code));
    found.map(|(_, name)| name.clone()).unwrap_or_else(|| code.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_is_named_in_itself() {
        let names = language_names();
        assert_eq!(names.iter().map(|(code, _)| *code).collect::<Vec<_>>(), Language::WORDS);
        for (code, name) in
            [("en", "English"), ("ru", "Русский"), ("de", "Deutsch"), ("ja", "日本語"), ("uk", "Українська")]
        {
            assert_eq!(names.iter().find(|(c, _)| *c == code).unwrap().1, name);
        }
        assert!(names.iter().all(|(code, name)| name != code), "{names:?}");
    }
    use crate::domain::currency::find;

    #[test]
    fn money_reads_as_each_language_writes_it() {
        let eur = find("EUR").unwrap();
        assert_eq!(money(123_456_789, eur, Language::En), "€1,234,567.89");
        assert_eq!(money(123_456_789, eur, Language::Ru), "1\u{a0}234\u{a0}567,89\u{a0}€");
        assert_eq!(money(123_456_789, eur, Language::De), "1.234.567,89\u{a0}€");
        assert_eq!(money(990, find("USD").unwrap(), Language::En), "$9.90");
        assert_eq!(money(500, find("JPY").unwrap(), Language::En), "¥500");
        assert_eq!(money(1234, find("KWD").unwrap(), Language::En), "KWD\u{a0}1.234");
        assert_eq!(money(-5, eur, Language::En), "-€0.05");
        assert_eq!(money(0, eur, Language::En), "€0.00");
        assert_eq!(
            money(i64::MAX, find("RUB").unwrap(), Language::Ru),
            "92\u{a0}233\u{a0}720\u{a0}368\u{a0}547\u{a0}758,07\u{a0}₽"
        );
    }

    #[test]
    fn dates_read_as_each_language_writes_them_and_times_name_their_zone() {
        let at: DateTime<Utc> = "2026-12-08T08:05:00Z".parse().unwrap();
        assert_eq!(date(at, chrono_tz::UTC, Language::En), "8 December 2026");
        assert_eq!(date(at, chrono_tz::UTC, Language::Ru), "8 декабря 2026");
        assert_eq!(date_time(at, chrono_tz::Europe::Berlin, Language::En), "8 December 2026, 09:05 CET");
        assert_eq!(date_time(at, chrono_tz::Asia::Tokyo, Language::Ru), "8 декабря 2026, 17:05 JST");
    }

    #[test]
    fn countries_are_named_in_the_language_and_ordered_by_name() {
        assert_eq!(country_name("JP", Language::En), "Japan");
        assert_eq!(country_name("JP", Language::Ru), "Япония");
        assert_eq!(country_name("ZZ", Language::En), "ZZ");
        let en = countries(Language::En);
        assert_eq!(en.len(), 249);
        assert!(en.windows(2).all(|w| w[0].1.to_lowercase() <= w[1].1.to_lowercase()));
        assert_eq!(en[0].1, "Afghanistan");
    }
}
