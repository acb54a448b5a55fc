//! What CLDR knows about a language: money as it is written there (`€1,234,567.89` in en,
//! `1 234 567,89 €` in ru) and the names of languages and countries. The data is `cldr.txt`,
//! read off ICU4X's compiled CLDR data once; paydesk writes money from it itself, which spares
//! every build compiling ICU4X (docs/performance.md).

use std::collections::HashMap;
use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::domain::country;
use crate::domain::currency::Currency;
use crate::domain::money::Money;
use crate::domain::vocab::Language;

/// What `cldr.txt` says of one language.
#[derive(Debug, Default)]
struct Cldr {
    decimal: String,
    group: String,
    /// How many digits above the first group a number needs to be grouped: 2 keeps `1234`
    /// whole in Spanish and writes `12.345`.
    min_grouping: usize,
    /// Where the minus goes around money written without it: `-#`, `−#`.
    negative: String,
    /// A currency written by its code (`¤`) around the number (`#`): `¤\u{a0}#`, `#\u{a0}¤`.
    by_code: String,
    /// The currencies written otherwise, by code: `EUR` → `€#`.
    currencies: HashMap<String, String>,
    own_name: String,
    /// Country names by code.
    countries: HashMap<String, String>,
}

/// `cldr.txt` by language, read once.
fn cldr(language: Language) -> Option<&'static Cldr> {
    static DATA: OnceLock<HashMap<Language, Cldr>> = OnceLock::new();
    DATA.get_or_init(|| parse(include_str!("cldr.txt"))).get(&language)
}

fn parse(text: &str) -> HashMap<Language, Cldr> {
    let mut data = HashMap::new();
    // Country lines name each country in the order of the language lines.
    let mut order = Vec::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let fields: Vec<String> = line.split('\t').map(unescape).collect();
        let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
        match fields[..] {
            ["language", code, decimal, group, min_grouping, negative, by_code, own_name] => {
                let Some(language) = Language::parse(code) else { continue };
                order.push(language);
                let cldr = Cldr {
                    decimal: decimal.into(),
                    group: group.into(),
                    min_grouping: min_grouping.parse().unwrap_or(1),
                    negative: negative.into(),
                    by_code: by_code.into(),
                    own_name: own_name.into(),
                    ..Default::default()
                };
                data.insert(language, cldr);
            }
            ["money", language, currency, pattern] => {
                if let Some(cldr) = Language::parse(language).and_then(|l| data.get_mut(&l)) {
                    cldr.currencies.insert(currency.into(), pattern.into());
                }
            }
            ["country", code, ref names @ ..] => {
                for (language, name) in order.iter().zip(names) {
                    data.entry(*language).or_default().countries.insert(code.into(), name.to_string());
                }
            }
            _ => {}
        }
    }
    data
}

/// A field of `cldr.txt` with its `\u{a0}` escapes turned back into the characters.
fn unescape(field: &str) -> String {
    let mut text = String::new();
    let mut rest = field;
    while let Some((before, escape)) = rest.split_once("\\u{") {
        let (hex, after) = escape.split_once('}').unwrap_or((escape, ""));
        text.push_str(before);
        text.extend(u32::from_str_radix(hex, 16).ok().and_then(char::from_u32));
        rest = after;
    }
    text + rest
}

/// `amount` minimal units of `currency` as `language` writes money: its symbol (or code) where
/// the language puts it, its grouping and decimal marks, the currency's decimals.
pub fn money(amount: i64, currency: Currency, language: Language) -> String {
    let Some(cldr) = cldr(language) else {
        // Not reached: every language has its lines (a test says so).
        return Money::new(amount, currency).display(false);
    };
    let decimals = currency.exponent as usize;
    let digits = format!("{:0>width$}", amount.unsigned_abs(), width = decimals + 1);
    let (whole, fraction) = digits.split_at(digits.len() - decimals);
    // Groups of three, as all 18 languages group, once the number is long enough.
    let mut number = String::new();
    for (i, digit) in whole.chars().enumerate() {
        let left = whole.len() - i;
        if i > 0 && left % 3 == 0 && whole.len() >= 3 + cldr.min_grouping {
            number.push_str(&cldr.group);
        }
        number.push(digit);
    }
    if decimals > 0 {
        number = number + &cldr.decimal + fraction;
    }
    let pattern = match cldr.currencies.get(currency.code) {
        Some(pattern) => pattern.clone(),
        None => cldr.by_code.replace('¤', currency.code),
    };
    let written = pattern.replacen('#', &number, 1);
    if amount < 0 { cldr.negative.replacen('#', &written, 1) } else { written }
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
                let name = cldr(l).map_or(code, |cldr| cldr.own_name.as_str());
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
                let names = cldr(l).map(|cldr| &cldr.countries);
                let mut list: Vec<(&'static str, String)> = country::COUNTRIES
                    .split_ascii_whitespace()
                    .map(|code| (code, names.and_then(|n| n.get(code)).map_or(code, String::as_str).to_string()))
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

    #[test]
    fn each_language_writes_money_and_names_countries_as_cldr_has_it() {
        let (eur, usd, jpy) = (find("EUR").unwrap(), find("USD").unwrap(), find("JPY").unwrap());
        #[rustfmt::skip]
        let seen = [
            (Language::En, "-€1,234,567.89", "$1,234.00", "¥500", "Germany", "China"),
            (Language::Es, "-1.234.567,89\u{a0}€", "1234,00\u{a0}US$", "500\u{a0}JPY", "Alemania", "China"),
            (Language::Tr, "-€1.234.567,89", "$1.234,00", "¥500", "Almanya", "Çin"),
            (Language::De, "-1.234.567,89\u{a0}€", "1.234,00\u{a0}$", "500\u{a0}¥", "Deutschland", "China"),
            (Language::It, "-1.234.567,89\u{a0}€", "1234,00\u{a0}USD", "500\u{a0}JPY", "Germania", "Cina"),
            (Language::Ru, "-1\u{a0}234\u{a0}567,89\u{a0}€", "1\u{a0}234,00\u{a0}$", "500\u{a0}¥", "Германия", "Китай"),
            (Language::Zh, "-€1,234,567.89", "US$1,234.00", "JP¥500", "德国", "中国"),
            (Language::Fr, "-1\u{202f}234\u{202f}567,89\u{a0}€", "1\u{202f}234,00\u{a0}$US", "500\u{a0}JPY", "Allemagne", "Chine"),
            (Language::Da, "-1.234.567,89\u{a0}€", "1.234,00\u{a0}US$", "500\u{a0}JP¥", "Tyskland", "Kina"),
            (Language::Sv, "−1\u{a0}234\u{a0}567,89\u{a0}€", "1\u{a0}234,00\u{a0}US$", "500\u{a0}JPY", "Tyskland", "Kina"),
            (Language::No, "−1\u{a0}234\u{a0}567,89\u{a0}€", "1\u{a0}234,00\u{a0}USD", "500\u{a0}JPY", "Tyskland", "Kina"),
            (Language::Fi, "−1\u{a0}234\u{a0}567,89\u{a0}€", "1\u{a0}234,00\u{a0}$", "500\u{a0}¥", "Saksa", "Kiina"),
            (Language::Pl, "-1\u{a0}234\u{a0}567,89\u{a0}€", "1234,00\u{a0}USD", "500\u{a0}JPY", "Niemcy", "Chiny"),
            (Language::Ja, "-€1,234,567.89", "$1,234.00", "￥500", "ドイツ", "中国"),
            (Language::Be, "-1\u{a0}234\u{a0}567,89\u{a0}€", "1234,00\u{a0}$", "500\u{a0}¥", "Германія", "Кітай"),
            (Language::Uk, "-1\u{a0}234\u{a0}567,89\u{a0}EUR", "1\u{a0}234,00\u{a0}USD", "500\u{a0}¥", "Німеччина", "Китай"),
            (Language::Ka, "-1\u{a0}234\u{a0}567,89\u{a0}€", "1234,00\u{a0}US$", "500\u{a0}JPY", "გერმანია", "ჩინეთი"),
            (Language::Ro, "-1.234.567,89\u{a0}EUR", "1.234,00\u{a0}USD", "500\u{a0}JPY", "Germania", "China"),
        ];
        assert_eq!(seen.map(|s| s.0), Language::ALL);
        for (language, negative_eur, usd_1234, jpy_500, germany, china) in seen {
            let written =
                [money(-123_456_789, eur, language), money(123_400, usd, language), money(500, jpy, language)];
            assert_eq!(written, [negative_eur, usd_1234, jpy_500], "{language}");
            assert_eq!([country_name("DE", language), country_name("cn", language)], [germany, china], "{language}");
            let data = cldr(language).unwrap();
            let named = country::COUNTRIES.split_ascii_whitespace().all(|code| data.countries.contains_key(code));
            assert!(named && !data.own_name.is_empty(), "{language} has every country and its own name");
        }
    }

    #[test]
    fn a_currency_without_a_symbol_is_written_by_its_code() {
        let aed = find("AED").unwrap();
        assert_eq!(money(-150, aed, Language::En), "-AED\u{a0}1.50");
        assert_eq!(money(150, aed, Language::Ru), "1,50\u{a0}AED");
        assert_eq!(unescape("#\\u{a0}¤\\u{202f}"), "#\u{a0}¤\u{202f}");
    }
}
