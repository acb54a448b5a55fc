//! The pages' words in each language.

use super::*;

#[test]
fn languages_without_a_translation_fall_back_to_english() {
    assert_eq!(texts(Language::Ru).pay, "Оплатить");
    assert_eq!(texts(Language::De).pay, "Pay");
}

#[test]
fn schedules_read_naturally() {
    assert_eq!(EN.every(1, IntervalUnit::Month), "every month");
    assert_eq!(EN.every(3, IntervalUnit::Day), "every 3 days");
    assert_eq!(RU.every(1, IntervalUnit::Month), "каждый месяц");
    assert_eq!(RU.every(3, IntervalUnit::Month), "каждые 3 месяца");
    assert_eq!(RU.every(5, IntervalUnit::Day), "каждые 5 дней");
    assert_eq!(RU.every(21, IntervalUnit::Hour), "каждый 21 час");
    assert_eq!(RU.every(31, IntervalUnit::Day), "каждый 31 день");
    assert_eq!(RU.every(11, IntervalUnit::Day), "каждые 11 дней");
    assert_eq!(RU.every(12, IntervalUnit::Hour), "каждые 12 часов");
}

#[test]
fn prices_use_the_languages_decimal_mark() {
    assert_eq!(EN.price(990, crate::domain::currency::find("EUR").unwrap()), "€9.90");
    assert_eq!(RU.price(990, crate::domain::currency::find("RUB").unwrap()), "9,90\u{a0}₽");
    assert_eq!(EN.price(500, crate::domain::currency::find("JPY").unwrap()), "¥500");
}
