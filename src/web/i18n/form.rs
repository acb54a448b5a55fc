//! The texts of a pay page's form: its fields' labels, and what a customer is told of a field
//! the rules refused or of a card the bank declined.

use super::Texts;
use crate::domain::input::msg;
use crate::domain::vocab::VisibleField;

impl Texts {
    /// The label of a customer-data field.
    pub fn field_label(&self, field: VisibleField) -> &'static str {
        use VisibleField::*;
        match (field, self.ru()) {
            (FirstName, false) => "First name",
            (FirstName, true) => "Имя",
            (LastName, false) => "Last name",
            (LastName, true) => "Фамилия",
            (Country, false) => "Country",
            (Country, true) => "Страна",
            (State, false) => "State or province (two letters, e.g. NY)",
            (State, true) => "Штат или провинция (две буквы, например NY)",
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
            (Company, false) => "Company (optional)",
            (Company, true) => "Компания (необязательно)",
            (VatId, false) => "VAT ID, for a business (optional)",
            (VatId, true) => "Номер плательщика НДС, для компании (необязательно)",
        }
    }

    /// What a customer is told about a refused field of the form, as a whole sentence that
    /// says what to do: `field` is the form's name of it, `message` the rule's message.
    pub fn problem(&self, field: &str, message: &str) -> String {
        let ru = self.ru();
        let text = match (field, message) {
            (_, m) if m.starts_with("is not a test card") => match ru {
                false => "This is not a test card. This page is in test mode: use one of the test cards shown above.",
                true => {
                    "Это не тестовая карта. Страница в тестовом режиме: используйте одну из тестовых карт, указанных выше."
                }
            },
            ("coupon", "is not a valid code") => match ru {
                false => "There is no such coupon code. Check it and enter it again.",
                true => "Такого промокода нет. Проверьте его и введите ещё раз.",
            },
            ("coupon", "has expired" | "is no longer valid") => match ru {
                false => "This coupon is no longer valid.",
                true => "Этот промокод больше не действует.",
            },
            ("coupon", "has been used up") => match ru {
                false => "This coupon has been used up.",
                true => "Этот промокод уже израсходован.",
            },
            ("coupon", _) => match ru {
                false => "This coupon does not apply to this plan.",
                true => "Этот промокод не действует для этого тарифа.",
            },
            (_, m) if m.starts_with("is too long") => match ru {
                false => "This is too long. Please shorten it.",
                true => "Слишком длинное значение. Сократите его, пожалуйста.",
            },
            ("card_number", m) if m.starts_with("was refused by the payment processor: ") => {
                let said = &m["was refused by the payment processor: ".len()..];
                return match ru {
                    false => format!("The payment processor refused this card: {said} Please use another card."),
                    true => format!("Платёжный провайдер отклонил эту карту: {said} Используйте другую карту."),
                };
            }
            ("card_number", m) if m.starts_with("could not be checked by the payment processor") => match ru {
                false => "The payment processor could not check this card just now. Please try again in a minute.",
                true => "Платёжный провайдер не смог проверить карту. Попробуйте ещё раз через минуту.",
            },
            ("card_number", m) if m.starts_with("cannot be used with this shop") => match ru {
                false => {
                    "This card cannot be used with this shop: a payment with it is disputed. Please use another card."
                }
                true => {
                    "Эту карту нельзя использовать в этом магазине: платёж по ней оспорен. Используйте другую карту."
                }
            },
            ("card_number", msg::BLANK) => match ru {
                false => "Enter the card number as printed on the card.",
                true => "Введите номер карты так, как он напечатан на карте.",
            },
            ("card_number", _) => match ru {
                false => "This card number is not valid. Check it against the card and enter it again.",
                true => "Номер карты указан неверно. Сверьте его с картой и введите ещё раз.",
            },
            ("card_expiry", "is in the past") => match ru {
                false => "This card has expired. Please use another card.",
                true => "Срок действия карты истёк. Используйте другую карту.",
            },
            ("card_expiry", _) => match ru {
                false => "Enter the expiry month (01–12) and year as printed on the card.",
                true => "Введите месяц (01–12) и год окончания срока действия так, как они напечатаны на карте.",
            },
            ("card_cvc", _) => match ru {
                false => "Enter the 3 or 4 digit security code from the back of the card.",
                true => "Введите код безопасности: 3 или 4 цифры на обратной стороне карты.",
            },
            ("card_holder", _) => match ru {
                false => "Enter the name as printed on the card.",
                true => "Введите имя так, как оно напечатано на карте.",
            },
            ("email", msg::BLANK) => match ru {
                false => "Enter your e-mail address.",
                true => "Введите адрес электронной почты.",
            },
            ("email", _) => match ru {
                false => "Enter an e-mail address like name@example.com.",
                true => "Введите адрес электронной почты вида name@example.com.",
            },
            ("country", _) => match ru {
                false => "Choose your country from the list.",
                true => "Выберите страну из списка.",
            },
            ("state", _) => match ru {
                false => "Enter the two-letter code of your state or province, for example NY or QC.",
                true => "Введите двухбуквенный код штата или провинции, например NY или QC.",
            },
            ("zip", msg::BLANK) => match ru {
                false => "Enter your ZIP or postal code.",
                true => "Введите почтовый индекс.",
            },
            ("zip", _) => match ru {
                false => "Enter a US ZIP code of 5 digits, or of 5 and 4 digits like 12207-1234.",
                true => "Введите индекс США из 5 цифр или из 5 и 4 цифр, например 12207-1234.",
            },
            ("phone", msg::BLANK) => match ru {
                false => "Enter your phone number.",
                true => "Введите номер телефона.",
            },
            ("phone", _) => match ru {
                false => "Enter a phone number of 5 to 20 digits; only spaces, +, -, ( and ) may go between them.",
                true => "Введите номер телефона из 5–20 цифр; между ними допустимы только пробелы, +, -, ( и ).",
            },
            ("birth_date", msg::BLANK) => match ru {
                false => "Enter your date of birth.",
                true => "Введите дату рождения.",
            },
            ("birth_date", _) => match ru {
                false => "Enter your date of birth; it must be in the past.",
                true => "Введите дату рождения; она должна быть в прошлом.",
            },
            (_, msg::BLANK) => {
                let label = VisibleField::parse(field).map(|f| self.field_label(f)).unwrap_or(field);
                return match ru {
                    false => format!("Enter your {}.", label.to_lowercase()),
                    true => format!("Заполните поле «{label}»."),
                };
            }
            _ => match ru {
                false => "Please check this field.",
                true => "Проверьте это поле, пожалуйста.",
            },
        };
        text.to_string()
    }

    /// What a customer is told when the bank declined or failed a payment: why, and what to
    /// do next (another card, the bank, or later).
    pub fn failure(&self, code: &str, fallback: &str) -> String {
        let ru = self.ru();
        let text = match code {
            "card_declined" => match ru {
                false => "Your bank declined the payment. Please try another card, or contact your bank.",
                true => "Банк отклонил платёж. Попробуйте другую карту или обратитесь в свой банк.",
            },
            "insufficient_funds" => match ru {
                false => "There is not enough money on this card. Please try another card.",
                true => "На карте недостаточно средств. Попробуйте другую карту.",
            },
            "expired_card" => match ru {
                false => "This card has expired. Please try another card.",
                true => "Срок действия карты истёк. Попробуйте другую карту.",
            },
            crate::external::acquirer::PAGE_UNAVAILABLE => match ru {
                false => {
                    "The payment page could not be opened just now. No card was tried and nothing was charged: please try again in a minute."
                }
                true => {
                    "Страницу оплаты сейчас не удалось открыть. Карта не использовалась, деньги не списаны: попробуйте ещё раз через минуту."
                }
            },
            crate::external::acquirer::LEFT_THE_PAGE => match ru {
                false => "You left the payment page without paying. Nothing was charged.",
                true => "Вы ушли со страницы оплаты, не заплатив. Деньги не списаны.",
            },
            "processing_error" => match ru {
                false => {
                    "The payment could not be processed and nothing was charged. Please try again in a few minutes."
                }
                true => "Платёж не удалось обработать, деньги не списаны. Попробуйте ещё раз через несколько минут.",
            },
            _ => {
                return match ru {
                    false => format!("{fallback} Please try another card, or contact your bank."),
                    true => "Платёж не прошёл. Попробуйте другую карту или обратитесь в свой банк.".to_string(),
                };
            }
        };
        text.to_string()
    }
}
