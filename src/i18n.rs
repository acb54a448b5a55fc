//! The words of the hosted pages, in English and Russian; other languages fall back to
//! English. Templates read them as `t.field`, so a missing translation does not compile.

use crate::domain::currency::Currency;
use crate::domain::money::Money;
use crate::domain::vocab::{IntervalUnit, Language, VisibleField};

/// Every text of the hosted pages in one language.
pub struct Texts {
    pub lang: &'static str,
    pub secure_payment: &'static str,
    pub test_mode: &'static str,
    pub your_details: &'static str,
    pub card: &'static str,
    pub card_number: &'static str,
    pub expiry: &'static str,
    pub month: &'static str,
    pub year: &'static str,
    pub cvc: &'static str,
    pub holder: &'static str,
    pub pay: &'static str,
    pub subscribe: &'static str,
    pub fix_errors: &'static str,
    pub expired_title: &'static str,
    pub expired_body: &'static str,
    pub sold_out_title: &'static str,
    pub sold_out_body: &'static str,
    pub unavailable_title: &'static str,
    pub unavailable_body: &'static str,
    pub declined_title: &'static str,
    pub error_title: &'static str,
    pub try_again: &'static str,
    pub receipt_title: &'static str,
    pub paid: &'static str,
    pub authorized: &'static str,
    pub amount: &'static str,
    pub order: &'static str,
    pub date: &'static str,
    pub payment_id: &'static str,
    pub status: &'static str,
    pub confirm_title: &'static str,
    pub continue_to_payment: &'static str,
    pub trial: &'static str,
    pub expired_session: &'static str,
    pub footer: &'static str,
    pub too_many_title: &'static str,
    pub too_many_body: &'static str,
    pub in_progress_title: &'static str,
    pub in_progress_body: &'static str,
    pub interrupted_title: &'static str,
    pub interrupted_body: &'static str,
}

/// English.
pub const EN: Texts = Texts {
    lang: "en",
    secure_payment: "Secure payment",
    test_mode: "Test mode: no real money moves. Pay with a test card.",
    your_details: "Your details",
    card: "Card",
    card_number: "Card number",
    expiry: "Expiry date",
    month: "Month (MM)",
    year: "Year (YY)",
    cvc: "CVC",
    holder: "Name on card",
    pay: "Pay",
    subscribe: "Subscribe",
    fix_errors: "Please correct the highlighted fields.",
    expired_title: "This offer has expired",
    expired_body: "The merchant no longer accepts payments for it.",
    sold_out_title: "Sold out",
    sold_out_body: "There are no more items left to buy.",
    unavailable_title: "Payments are not available",
    unavailable_body: "This shop cannot take live payments yet. Nothing was charged.",
    declined_title: "Payment declined",
    error_title: "Payment failed",
    try_again: "Try again",
    receipt_title: "Receipt",
    paid: "Payment received",
    authorized: "Payment authorized: the amount is held on your card",
    amount: "Amount",
    order: "Order",
    date: "Date",
    payment_id: "Payment",
    status: "Status",
    confirm_title: "Confirm your order",
    continue_to_payment: "Continue to payment",
    trial: "Trial",
    expired_session: "This form has expired. Please open the payment page again.",
    too_many_title: "Too many declined attempts",
    too_many_body: "For your safety this page takes no more cards from here for a while. Please try again later, or contact your bank.",
    in_progress_title: "Your payment is being processed",
    in_progress_body: "This form was already sent and its payment is still with the bank. Please wait a moment and reload this page; do not pay again.",
    interrupted_title: "Please check before paying again",
    interrupted_body: "An earlier submission of this form was interrupted. If your bank shows a charge, you have paid; otherwise you can pay below.",
    footer: "Payments by paydesk",
};

/// Russian.
pub const RU: Texts = Texts {
    lang: "ru",
    secure_payment: "Безопасная оплата",
    test_mode: "Тестовый режим: деньги не списываются. Используйте тестовую карту.",
    your_details: "Ваши данные",
    card: "Карта",
    card_number: "Номер карты",
    expiry: "Срок действия",
    month: "Месяц (ММ)",
    year: "Год (ГГ)",
    cvc: "CVC",
    holder: "Имя на карте",
    pay: "Оплатить",
    subscribe: "Оформить подписку",
    fix_errors: "Пожалуйста, исправьте отмеченные поля.",
    expired_title: "Срок действия предложения истёк",
    expired_body: "Продавец больше не принимает оплату за этот товар.",
    sold_out_title: "Товар распродан",
    sold_out_body: "Товара больше нет в наличии.",
    unavailable_title: "Оплата недоступна",
    unavailable_body: "Магазин пока не может принимать реальные платежи. Деньги не списаны.",
    declined_title: "Платёж отклонён",
    error_title: "Платёж не прошёл",
    try_again: "Попробовать снова",
    receipt_title: "Чек",
    paid: "Платёж получен",
    authorized: "Платёж авторизован: сумма заблокирована на карте",
    amount: "Сумма",
    order: "Заказ",
    date: "Дата",
    payment_id: "Платёж",
    status: "Статус",
    confirm_title: "Подтвердите заказ",
    continue_to_payment: "Перейти к оплате",
    trial: "Пробный период",
    expired_session: "Форма устарела. Откройте страницу оплаты заново.",
    too_many_title: "Слишком много отклонённых попыток",
    too_many_body: "Ради вашей безопасности эта страница временно не принимает карты с этого адреса. Попробуйте позже или обратитесь в банк.",
    in_progress_title: "Платёж обрабатывается",
    in_progress_body: "Эта форма уже отправлена, банк ещё обрабатывает платёж. Подождите немного и обновите страницу; не платите повторно.",
    interrupted_title: "Проверьте, прежде чем платить снова",
    interrupted_body: "Предыдущая отправка этой формы прервалась. Если банк показывает списание, оплата прошла; иначе можно оплатить ниже.",
    footer: "Платежи через paydesk",
};

/// The texts of a language; English where there is no translation yet.
pub fn texts(language: Language) -> &'static Texts {
    match language {
        Language::Ru => &RU,
        _ => &EN,
    }
}

impl Texts {
    fn ru(&self) -> bool {
        self.lang == "ru"
    }

    /// The label of a customer-data field.
    pub fn field_label(&self, field: VisibleField) -> &'static str {
        use VisibleField::*;
        match (field, self.ru()) {
            (FirstName, false) => "First name",
            (FirstName, true) => "Имя",
            (LastName, false) => "Last name",
            (LastName, true) => "Фамилия",
            (Country, false) => "Country (two-letter code, e.g. US)",
            (Country, true) => "Страна (двухбуквенный код, например RU)",
            (State, false) => "State or province (two letters)",
            (State, true) => "Штат или провинция (две буквы)",
            (City, false) => "City",
            (City, true) => "Город",
            (Address, false) => "Address",
            (Address, true) => "Адрес",
            (Zip, false) => "ZIP or postal code",
            (Zip, true) => "Почтовый индекс",
            (Phone, false) => "Phone",
            (Phone, true) => "Телефон",
            (BirthDate, false) => "Date of birth",
            (BirthDate, true) => "Дата рождения",
            (Email, false) => "E-mail",
            (Email, true) => "Электронная почта",
            (TaxpayerId, false) => "Taxpayer ID",
            (TaxpayerId, true) => "ИНН",
        }
    }

    /// A validation message, translated.
    pub fn message(&self, message: &str) -> String {
        if !self.ru() {
            return message.to_string();
        }
        let ru = match message {
            "can't be blank" => "обязательное поле",
            "is invalid" => "указано неверно",
            "is not a valid card number" => "неверный номер карты",
            "is in the past" => "срок действия карты истёк",
            "must be 3 or 4 digits" => "3 или 4 цифры",
            "is not an ISO 3166-1 alpha-2 code" => "двухбуквенный код страны, например RU",
            "must be NNNNN or NNNNN-NNNN for the US" => "для США: NNNNN или NNNNN-NNNN",
            "may be sent only when country is US or CA" => "только для США и Канады",
            "must be a date in the past (YYYY-MM-DD)" => "дата в прошлом (ГГГГ-ММ-ДД)",
            m if m.starts_with("is not a test card") => {
                "не тестовая карта: в тестовом режиме принимаются только тестовые карты"
            }
            m if m.starts_with("is too long") => "слишком длинное значение",
            other => return other.to_string(),
        };
        ru.to_string()
    }

    /// A decline or error reason from the acquirer, by its code.
    pub fn failure(&self, code: &str, fallback: &str) -> String {
        let ru = match code {
            "card_declined" => "Банк отклонил платёж по карте.",
            "insufficient_funds" => "На карте недостаточно средств.",
            "expired_card" => "Срок действия карты истёк.",
            "processing_error" => "Платёж не удалось обработать. Попробуйте позже.",
            _ => fallback,
        };
        if self.ru() { ru.to_string() } else { fallback.to_string() }
    }

    /// Money as people of this language write it: `9.90 EUR`, `9,90 EUR`.
    pub fn price(&self, amount: i64, currency: Currency) -> String {
        Money::new(amount, currency).display(self.ru())
    }

    /// "every month", "every 3 days"; "каждый месяц", "каждые 3 дня".
    pub fn every(&self, n: i32, unit: IntervalUnit) -> String {
        if self.ru() {
            if n == 1 {
                format!("каждый {}", ru_unit(1, unit))
            } else {
                format!("каждые {n} {}", ru_unit(n, unit))
            }
        } else if n == 1 {
            format!("every {unit}")
        } else {
            format!("every {n} {unit}s")
        }
    }

    /// "1.00 EUR for the first 7 days"; "1,00 EUR за первые 7 дней".
    pub fn trial_terms(&self, price: &str, n: i32, unit: IntervalUnit) -> String {
        match (self.ru(), n) {
            (true, 1) => format!("{price} за первый {}", ru_unit(1, unit)),
            (true, _) => format!("{price} за первые {n} {}", ru_unit(n, unit)),
            (false, 1) => format!("{price} for the first {unit}"),
            (false, _) => format!("{price} for the first {n} {unit}s"),
        }
    }
}

/// The Russian word for `n` units: 1 месяц, 3 месяца, 5 месяцев, 21 месяц.
fn ru_unit(n: i32, unit: IntervalUnit) -> &'static str {
    let forms = match unit {
        IntervalUnit::Hour => ["час", "часа", "часов"],
        IntervalUnit::Day => ["день", "дня", "дней"],
        IntervalUnit::Month => ["месяц", "месяца", "месяцев"],
    };
    let (n10, n100) = (n % 10, n % 100);
    if n10 == 1 && n100 != 11 {
        forms[0]
    } else if (2..=4).contains(&n10) && !(12..=14).contains(&n100) {
        forms[1]
    } else {
        forms[2]
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(RU.every(21, IntervalUnit::Hour), "каждые 21 час");
        assert_eq!(RU.every(12, IntervalUnit::Hour), "каждые 12 часов");
        assert_eq!(EN.trial_terms("1.00 EUR", 7, IntervalUnit::Day), "1.00 EUR for the first 7 days");
        assert_eq!(RU.trial_terms("1,00 EUR", 1, IntervalUnit::Month), "1,00 EUR за первый месяц");
    }

    #[test]
    fn prices_use_the_languages_decimal_mark() {
        assert_eq!(EN.price(990, crate::domain::currency::find("EUR").unwrap()), "9.90 EUR");
        assert_eq!(RU.price(990, crate::domain::currency::find("RUB").unwrap()), "9,90 RUB");
        assert_eq!(EN.price(500, crate::domain::currency::find("JPY").unwrap()), "500 JPY");
    }
}
