//! What a plan's page says a subscriber agrees to, sentence by sentence.

use super::Texts;
use crate::domain::currency::Currency;
use crate::domain::vocab::IntervalUnit;

/// What a subscriber agrees to, as the plan's page tells it before the card is given.
pub struct PlanTerms<'a> {
    pub currency: Currency,
    pub terms: &'a crate::domain::billing::Terms,
    pub shop_name: &'a str,
    pub now: chrono::DateTime<chrono::Utc>,
    pub tz: chrono_tz::Tz,
}

impl Texts {
    /// The sentences of a plan's terms: what is charged today, what from which date and how
    /// often, for how long, and how to cancel.
    pub fn plan_terms(&self, p: &PlanTerms) -> Vec<String> {
        let ru = self.ru();
        let t = p.terms;
        let (today, next) = t.first_charges(p.now, p.tz);
        let when = match t.unit {
            IntervalUnit::Hour => crate::web::locale::date_time(next, p.tz, self.language),
            _ => crate::web::locale::date(next, p.tz, self.language),
        };
        let price = self.price(t.amount, p.currency);
        let every = self.every(t.interval, t.unit);
        let mut lines = Vec::new();
        lines.push(match (t.trial, ru) {
            (Some((0, n, unit)), false) => {
                format!(
                    "Today: nothing to pay, the first {} {} free.",
                    en_length(n, unit),
                    if n == 1 { "is" } else { "are" }
                )
            }
            (Some((0, n, unit)), true) => format!("Сегодня: ничего, {} бесплатно.", ru_length(n, unit)),
            (Some((_, n, unit)), false) => {
                format!("Today: {} for the first {}.", self.price(today, p.currency), en_length(n, unit))
            }
            (Some((_, n, unit)), true) => {
                format!("Сегодня: {} за {}.", self.price(today, p.currency), ru_length(n, unit))
            }
            (None, false) => format!("Today: {price}."),
            (None, true) => format!("Сегодня: {price}."),
        });
        // Plan payments still to come after today's (billing cycles count the plan's payments).
        let left = t.billing_cycles.map(|c| if t.trial.is_some() { c } else { c - 1 });
        lines.push(match (left, ru) {
            (Some(..=0), false) => "Nothing more is charged after today.".to_string(),
            (Some(..=0), true) => "После сегодняшнего платежа ничего не списывается.".to_string(),
            (Some(n), false) => {
                format!("Then {price} {every} from {when}: {n} payment{} in all.", if n == 1 { "" } else { "s" })
            }
            (Some(n), true) => format!("Затем {price} {every} начиная с {when}, всего платежей: {n}."),
            (None, false) => format!("Then {price} {every} from {when}, until you cancel."),
            (None, true) => format!("Затем {price} {every} начиная с {when}, пока вы не отмените подписку."),
        });
        lines.push(match ru {
            false => format!(
                "You can cancel at any time online, on your subscriber page (every receipt links to it), or by asking {}; nothing is charged after that.",
                p.shop_name
            ),
            true => format!(
                "Отменить подписку можно в любой момент онлайн, на странице подписчика (ссылка есть в каждом чеке), или обратившись в «{}»; после этого ничего не списывается.",
                p.shop_name
            ),
        });
        lines
    }
}

fn en_length(n: i32, unit: IntervalUnit) -> String {
    if n == 1 { unit.to_string() } else { format!("{n} {unit}s") }
}

fn ru_length(n: i32, unit: IntervalUnit) -> String {
    match (n, crate::web::locale::russian_form(n.unsigned_abs().into())) {
        (1, _) => format!("первый {}", ru_unit(1, unit)),
        (_, 0) => format!("первый {n} {}", ru_unit(n, unit)),
        _ => format!("первые {n} {}", ru_unit(n, unit)),
    }
}

/// The Russian word for `n` units: 1 месяц, 3 месяца, 5 месяцев, 21 месяц.
pub(super) fn ru_unit(n: i32, unit: IntervalUnit) -> &'static str {
    let forms = match unit {
        IntervalUnit::Hour => ["час", "часа", "часов"],
        IntervalUnit::Day => ["день", "дня", "дней"],
        IntervalUnit::Month => ["месяц", "месяца", "месяцев"],
    };
    forms[crate::web::locale::russian_form(n.unsigned_abs().into())]
}
