//! The words of the hosted pages, in English and Russian; other languages fall back to
//! English. Templates read them as `t.field`, so a missing translation does not compile.

use crate::domain::currency::Currency;
use crate::domain::vocab::{IntervalUnit, Language};

/// Every text of the hosted pages in one language.
pub struct Texts {
    pub lang: &'static str,
    pub language: Language,
    pub secure_payment: &'static str,
    pub test_mode: &'static str,
    pub test_cards: &'static str,
    /// What each test card of the banner does: succeeds, is declined, has no funds.
    pub test_card_outcomes: [&'static str; 3],
    pub choose_country: &'static str,
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
    pub archived_title: &'static str,
    pub archived_body: &'static str,
    /// The note over the page a merchant previews.
    pub preview_title: &'static str,
    pub preview_body: &'static str,
    pub preview_test_body: &'static str,
    pub unavailable_title: &'static str,
    pub unavailable_body: &'static str,
    pub declined_title: &'static str,
    pub error_title: &'static str,
    /// The processor's card page could not be opened (nothing was tried).
    pub page_unavailable_title: &'static str,
    pub try_again: &'static str,
    pub receipt_title: &'static str,
    pub paid: &'static str,
    pub authorized: &'static str,
    /// A held amount the shop released: nothing was charged.
    pub voided: &'static str,
    pub amount: &'static str,
    pub order: &'static str,
    pub date: &'static str,
    pub payment_id: &'static str,
    pub status: &'static str,
    pub confirm_title: &'static str,
    pub continue_to_payment: &'static str,
    /// A plan page's coupon form.
    pub coupon_label: &'static str,
    pub coupon_apply: &'static str,
    pub discount: &'static str,
    pub expired_session: &'static str,
    pub footer: &'static str,
    pub too_many_title: &'static str,
    pub too_many_body: &'static str,
    pub in_progress_title: &'static str,
    pub in_progress_body: &'static str,
    pub interrupted_title: &'static str,
    pub interrupted_body: &'static str,
    pub card_saved: &'static str,
    pub next_charge: &'static str,
    pub card_saved_title: &'static str,
    pub card_saved_body: &'static str,
    pub subscription_ended_title: &'static str,
    pub subscription_ended_body: &'static str,
    /// A receipt whose payment the bank has not confirmed yet.
    pub confirming: &'static str,
    pub confirming_body: &'static str,
    pub check_again: &'static str,
    /// Back from the processor's page without paying, while that page stays open.
    pub not_paid: &'static str,
    pub not_paid_body: &'static str,
    pub return_to_page: &'static str,
    /// The form asks no card: the processor's page does, next.
    pub card_on_processor_page: &'static str,
    /// A test card of a real processor that asks for 3-D Secure.
    pub test_card_3ds: &'static str,
    /// The receipt's link to the subscriber page, where a subscription is managed.
    pub manage_subscription: &'static str,
}

/// English.
pub const EN: Texts = Texts {
    lang: "en",
    language: Language::En,
    secure_payment: "Secure payment",
    test_mode: "Test page: no real money moves",
    test_cards: "Pay with one of these test cards, with any future expiry date and any CVC:",
    test_card_outcomes: ["the payment succeeds", "the bank declines it", "not enough funds"],
    choose_country: "Choose a country",
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
    expired_body: "The shop no longer accepts payments for it.",
    sold_out_title: "Sold out",
    sold_out_body: "There are no more items left to buy.",
    archived_title: "This is no longer available",
    archived_body: "The shop has stopped taking payments for it. Nothing was charged; please contact the shop if you expected to pay here.",
    preview_title: "Preview",
    preview_body: "This is the page your customers see; a payment made here is real.",
    preview_test_body: "This is the page your customers see; pay it with a test card to try it: no money moves.",
    unavailable_title: "Payments are not available",
    unavailable_body: "This shop cannot take live payments yet. Nothing was charged.",
    declined_title: "Payment declined",
    error_title: "Payment failed",
    page_unavailable_title: "The payment page could not be opened",
    try_again: "Try again",
    receipt_title: "Receipt",
    paid: "Payment received",
    authorized: "Payment authorized: the amount is held on your card",
    voided: "The shop released the amount held on your card: nothing was charged",
    amount: "Amount",
    order: "Order",
    date: "Date",
    payment_id: "Payment",
    status: "Status",
    confirm_title: "Confirm your order",
    continue_to_payment: "Continue to payment",
    coupon_label: "Coupon code",
    coupon_apply: "Apply",
    discount: "Discount",
    expired_session: "This form has expired. Please open the payment page again.",
    too_many_title: "Too many declined attempts",
    too_many_body: "For your safety this page takes no more cards from here for a while. Please try again later, or contact your bank.",
    in_progress_title: "Your payment is being processed",
    in_progress_body: "This form was already sent and its payment is still with the bank. Please wait a moment and reload this page; do not pay again.",
    interrupted_title: "Please check before paying again",
    interrupted_body: "An earlier submission of this form was interrupted. If your bank shows a charge, you have paid; otherwise you can pay below.",
    footer: "Payments by paydesk",
    card_saved: "Your card is saved",
    next_charge: "Next payment",
    card_saved_title: "Your card is already saved",
    card_saved_body: "This subscription already has its card, so there is nothing more to do here. To change the card, please contact the shop.",
    subscription_ended_title: "This subscription has ended",
    subscription_ended_body: "Nothing will be charged for it any more. To subscribe again, please contact the shop.",
    confirming: "Your payment is being confirmed",
    confirming_body: "The bank has not confirmed this payment yet. Please do not pay again: this page shows the result once it is known.",
    check_again: "Check again",
    not_paid: "You have not paid yet",
    not_paid_body: "The payment page is still open: you can go back and pay there. Nothing was charged; if you do not pay, the order is released when that page closes, within the hour.",
    return_to_page: "Return to the payment page",
    card_on_processor_page: "You will enter your card on the secure page of the shop's payment processor next.",
    test_card_3ds: "the bank asks you to confirm the payment (3-D Secure)",
    manage_subscription: "Manage your subscription or cancel it",
};

/// Russian.
pub const RU: Texts = Texts {
    lang: "ru",
    language: Language::Ru,
    secure_payment: "Безопасная оплата",
    test_mode: "Тестовая страница: деньги не списываются",
    test_cards: "Оплатите одной из тестовых карт, с любым будущим сроком действия и любым CVC:",
    test_card_outcomes: ["платёж проходит", "банк отклоняет платёж", "недостаточно средств"],
    choose_country: "Выберите страну",
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
    expired_body: "Магазин больше не принимает оплату за этот товар.",
    sold_out_title: "Товар распродан",
    sold_out_body: "Товара больше нет в наличии.",
    archived_title: "Больше недоступно",
    archived_body: "Магазин больше не продаёт это здесь. Деньги не списаны; если вы собирались оплатить, обратитесь в магазин.",
    preview_title: "Предпросмотр",
    preview_body: "Так эту страницу видят покупатели; платёж, сделанный здесь, настоящий.",
    preview_test_body: "Так эту страницу видят покупатели; чтобы попробовать, оплатите тестовой картой: деньги не списываются.",
    unavailable_title: "Оплата недоступна",
    unavailable_body: "Магазин пока не может принимать реальные платежи. Деньги не списаны.",
    declined_title: "Платёж отклонён",
    error_title: "Платёж не прошёл",
    page_unavailable_title: "Не удалось открыть страницу оплаты",
    try_again: "Попробовать снова",
    receipt_title: "Чек",
    paid: "Платёж получен",
    authorized: "Платёж авторизован: сумма заблокирована на карте",
    voided: "Магазин снял блокировку суммы на карте: деньги не списаны",
    amount: "Сумма",
    order: "Заказ",
    date: "Дата",
    payment_id: "Платёж",
    status: "Статус",
    confirm_title: "Подтвердите заказ",
    continue_to_payment: "Перейти к оплате",
    coupon_label: "Промокод",
    coupon_apply: "Применить",
    discount: "Скидка",
    expired_session: "Форма устарела. Откройте страницу оплаты заново.",
    too_many_title: "Слишком много отклонённых попыток",
    too_many_body: "Ради вашей безопасности эта страница временно не принимает карты с этого адреса. Попробуйте позже или обратитесь в банк.",
    in_progress_title: "Платёж обрабатывается",
    in_progress_body: "Эта форма уже отправлена, банк ещё обрабатывает платёж. Подождите немного и обновите страницу; не платите повторно.",
    interrupted_title: "Проверьте, прежде чем платить снова",
    interrupted_body: "Предыдущая отправка этой формы прервалась. Если банк показывает списание, оплата прошла; иначе можно оплатить ниже.",
    footer: "Платежи через paydesk",
    card_saved: "Карта сохранена",
    next_charge: "Следующий платёж",
    card_saved_title: "Карта уже сохранена",
    card_saved_body: "У этой подписки уже есть карта, больше ничего делать не нужно. Чтобы сменить карту, обратитесь в магазин.",
    subscription_ended_title: "Подписка завершена",
    subscription_ended_body: "По ней больше ничего не будет списано. Чтобы подписаться снова, обратитесь в магазин.",
    confirming: "Платёж подтверждается",
    confirming_body: "Банк ещё не подтвердил этот платёж. Пожалуйста, не платите повторно: результат появится на этой странице, как только станет известен.",
    check_again: "Проверить снова",
    not_paid: "Вы ещё не оплатили",
    not_paid_body: "Страница оплаты ещё открыта: вы можете вернуться и оплатить. Деньги не списаны; если вы не оплатите, заказ освободится, когда страница закроется, в течение часа.",
    return_to_page: "Вернуться к оплате",
    card_on_processor_page: "Данные карты вы введёте дальше, на защищённой странице платёжного провайдера магазина.",
    test_card_3ds: "банк просит подтвердить платёж (3-D Secure)",
    manage_subscription: "Управлять подпиской или отменить её",
};

/// The texts of a language; English where there is no translation yet.
pub fn texts(language: Language) -> &'static Texts {
    match language {
        Language::Ru => &RU,
        _ => &EN,
    }
}

impl Texts {
    pub(super) fn ru(&self) -> bool {
        self.lang == "ru"
    }

    /// Money as people of this language write it: `€9.90`, `9,90 €`.
    pub fn price(&self, amount: i64, currency: Currency) -> String {
        crate::web::locale::money(amount, currency, self.language)
    }

    /// A pay page's word on the tax of its price: `rate` ("VAT 19 %") and, for a product,
    /// the tax and the whole amount (`amounts`). With `reverse`, that a business in another EU
    /// country pays none.
    pub fn tax_note(&self, rate: &str, exclusive: bool, amounts: Option<(String, String)>, reverse: bool) -> String {
        let mut note = match (self.ru(), exclusive, amounts) {
            (false, false, Some((tax, _))) => format!("Includes {rate}: {tax}."),
            (false, false, None) => format!("Prices include {rate}."),
            (false, true, Some((tax, total))) => format!("Plus {rate}: {tax}, {total} in all."),
            (false, true, None) => format!("Plus {rate} on each charge."),
            (true, false, Some((tax, _))) => format!("Включая {rate}: {tax}."),
            (true, false, None) => format!("Цены включают {rate}."),
            (true, true, Some((tax, total))) => format!("Плюс {rate}: {tax}, всего {total}."),
            (true, true, None) => format!("Плюс {rate} к каждому платежу."),
        };
        if reverse {
            note.push_str(if self.ru() {
                " Компания из другой страны ЕС с номером плательщика НДС платит без НДС (обратное начисление)."
            } else {
                " A business in another EU country with a VAT ID pays no VAT (reverse charge)."
            });
        }
        note
    }

    /// "every month", "every 3 days"; "каждый месяц", "каждые 3 дня".
    pub fn every(&self, n: i32, unit: IntervalUnit) -> String {
        if self.ru() {
            // "каждый 21 день", "каждые 3 дня": the word agrees with the number's form.
            match (n, crate::web::locale::russian_form(n.unsigned_abs().into())) {
                (1, _) => format!("каждый {}", ru_unit(1, unit)),
                (_, 0) => format!("каждый {n} {}", ru_unit(n, unit)),
                _ => format!("каждые {n} {}", ru_unit(n, unit)),
            }
        } else if n == 1 {
            format!("every {unit}")
        } else {
            format!("every {n} {unit}s")
        }
    }

    /// "€9.90 on 8 December 2026"; "9,90 €, 8 декабря 2026".
    pub fn on_date(&self, price: &str, date: &str) -> String {
        if self.ru() { format!("{price}, {date}") } else { format!("{price} on {date}") }
    }

    /// What a coupon takes off, and for how many of the plan's payments (`None`: all).
    pub fn coupon_terms(&self, code: &str, off: &str, periods: Option<i32>) -> String {
        match (self.ru(), periods) {
            (false, Some(1)) => format!("Coupon {code}: {off} off the first payment of the plan."),
            (false, Some(n)) => format!("Coupon {code}: {off} off each of the first {n} payments of the plan."),
            (false, None) => format!("Coupon {code}: {off} off every payment of the plan."),
            (true, Some(1)) => format!("Промокод {code}: скидка {off} на первый платёж по тарифу."),
            (true, Some(n)) => format!("Промокод {code}: скидка {off} на каждый из первых платежей по тарифу ({n})."),
            (true, None) => format!("Промокод {code}: скидка {off} на каждый платёж по тарифу."),
        }
    }
}

mod form;
mod terms;

pub use terms::PlanTerms;
use terms::ru_unit;

#[cfg(test)]
mod tests;
