//! A plan's schedule in plain words, as the merchant's customers will live it (a plan's page,
//! a subscription's page, the plans list).

use super::{Merchant, Words, k};
use crate::domain::plan::PlanFields;
use crate::domain::vocab::IntervalUnit;

/// "every month", "every 3 days"; "каждый месяц", "каждые 3 дня".
pub fn every(n: i32, unit: IntervalUnit, words: Words) -> String {
    crate::web::i18n::texts(words.language()).every(n, unit)
}

/// "7 days", "1 month"; "7 дней", "1 месяц".
pub fn span(n: i32, unit: IntervalUnit, words: Words) -> String {
    let forms = match unit {
        IntervalUnit::Hour => k("{} hour|{} hours"),
        IntervalUnit::Day => k("{} day|{} days"),
        IntervalUnit::Month => k("{} month|{} months"),
    };
    words.n(n.into(), forms)
}

/// A trial's length before the word "trial": "7-day"; "7 дней" (as in "trial of 7 days").
fn trial_length(n: i32, unit: IntervalUnit, words: Words) -> String {
    let forms = match unit {
        IntervalUnit::Hour => k("{}-hour|{}-hour"),
        IntervalUnit::Day => k("{}-day|{}-day"),
        IntervalUnit::Month => k("{}-month|{}-month"),
    };
    words.n(n.into(), forms)
}

/// The plan's schedule in plain words, as the merchant's customers will live it.
pub fn describe(f: &PlanFields, m: &Merchant) -> String {
    schedule(f, m.words)
}

/// [`describe`] in `words`.
fn schedule(f: &PlanFields, words: Words) -> String {
    let price = format!("{} {}", words.money(f.amount, f.currency), every(f.interval, f.interval_unit, words));
    let terms = match f.trial {
        None => price,
        Some(t) => {
            let length = trial_length(t.interval, t.interval_unit, words);
            let trial = match t.amount {
                0 => words.f("{} after a free {} trial", &[&price, &length]),
                amount => words.f("{} after a {} trial for {}", &[&price, &length, &words.money(amount, f.currency)]),
            };
            match f.trial_as_first_payment {
                true => words.f("{} (counted as the first payment)", &[&trial]),
                false => trial,
            }
        }
    };
    let until = match f.billing_cycles {
        Some(n) if !f.infinite => words.n(n.into(), k("for {} payment|for {} payments")),
        _ => words.t("until cancelled").to_string(),
    };
    let mut text = format!("{terms}, {until}. ");
    let attempts = f.number_payment_attempts;
    if attempts <= 1 {
        text.push_str(words.t("A failed payment is not retried: the subscription ends."));
    } else {
        let morning = if f.prevent_payments_at_night { "08:00" } else { "03:00" };
        let tries = words.n(attempts.into(), k("up to {} attempt|up to {} attempts"));
        text.push_str(&words.f("Failed payments are retried {} in all (a declined card the next day at {}, a processing error at the start of each following hour), then the subscription ends.", &[&tries, &morning]));
    }
    if f.prevent_payments_at_night {
        text.push(' ');
        text.push_str(words.t("No charges between 20:00 and 08:00: they wait for the morning."));
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn plan(body: Value) -> PlanFields {
        PlanFields::parse(body.as_object().unwrap()).unwrap()
    }

    #[test]
    fn a_schedule_reads_as_a_sentence() {
        let p = plan(
            json!({"title": "Gym", "currency": "EUR", "plan": {"amount": 990, "interval": 1, "interval_unit": "month"},
                            "trial": {"amount": 100, "interval": 7, "interval_unit": "day"}}),
        );
        assert_eq!(
            schedule(&p, Words::En),
            "€9.90 every month after a 7-day trial for €1.00, until cancelled. Failed payments are retried up to 3 \
             attempts in all (a declined card the next day at 03:00, a processing error at the start of each following \
             hour), then the subscription ends."
        );
        let p = plan(
            json!({"title": "Box", "currency": "USD", "plan": {"amount": 2500, "interval": 3, "interval_unit": "month"},
                            "infinite": false, "billing_cycles": 4, "number_payment_attempts": 1,
                            "prevent_payments_at_night": true}),
        );
        assert_eq!(
            schedule(&p, Words::En),
            "$25.00 every 3 months, for 4 payments. A failed payment is not retried: the subscription ends. \
             No charges between 20:00 and 08:00: they wait for the morning."
        );
    }

    #[test]
    fn a_schedule_reads_as_a_russian_sentence() {
        let p = plan(
            json!({"title": "Gym", "currency": "EUR", "plan": {"amount": 990, "interval": 1, "interval_unit": "month"},
                            "trial": {"amount": 0, "interval": 14, "interval_unit": "day"}, "infinite": false,
                            "billing_cycles": 3, "prevent_payments_at_night": true}),
        );
        assert_eq!(
            schedule(&p, Words::Ru),
            "9,90\u{a0}€ каждый месяц после бесплатного пробного периода в 14 дней, всего 3 платежа. Неудачное \
             списание повторяется: всего до 3 попыток (после отказа по карте — на следующий день в 08:00, после \
             ошибки обработки — в начале каждого следующего часа), затем подписка завершается. С 20:00 до 08:00 \
             списаний нет: они ждут утра."
        );
    }
}
