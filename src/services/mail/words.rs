//! The words of subscriber mails, in English and Russian, written in full; other languages
//! get English. `{name}` marks a value filled in by [`fill`].

use crate::domain::vocab::Language;

/// Every text of the mails in one language.
pub struct MailTexts {
    pub lang: &'static str,
    pub test_subject: &'static str,
    pub test_note: &'static str,
    pub footer: &'static str,
    pub why: &'static str,
    pub manage: &'static str,
    pub amount: &'static str,
    pub order: &'static str,
    pub date: &'static str,
    pub card: &'static str,
    pub payment: &'static str,
    pub next_payment: &'static str,
    pub receipt_link: &'static str,
    pub invoice: &'static str,
    pub credit_note: &'static str,
    /// "The invoice {number} (PDF)".
    pub document_link: &'static str,

    pub receipt_subject: &'static str,
    pub receipt_heading: &'static str,
    pub receipt_body: &'static str,
    pub receipt_cancel: &'static str,
    pub trial_subject: &'static str,
    pub trial_heading: &'static str,
    pub trial_body: &'static str,

    pub refund_subject: &'static str,
    pub refund_heading: &'static str,
    pub refund_body: &'static str,

    pub failed_subject: &'static str,
    pub failed_heading: &'static str,
    pub failed_body: &'static str,
    pub failed_retry: &'static str,
    pub failed_action: &'static str,
    pub confirm_subject: &'static str,
    pub confirm_body: &'static str,
    pub confirm_action: &'static str,

    pub ended_subject: &'static str,
    pub ended_heading: &'static str,
    pub ended_body: &'static str,

    pub trial_ending_subject: &'static str,
    pub trial_ending_heading: &'static str,
    pub trial_ending_body: &'static str,
    pub how_to_cancel: &'static str,

    pub renewal_subject: &'static str,
    pub renewal_heading: &'static str,
    pub renewal_body: &'static str,

    pub card_subject: &'static str,
    pub card_heading: &'static str,
    pub card_body: &'static str,
    pub card_action: &'static str,

    pub canceled_subject: &'static str,
    pub canceled_heading: &'static str,
    pub canceled_body: &'static str,
    pub ending_subject: &'static str,
    pub ending_heading: &'static str,
    pub ending_body: &'static str,
    pub ending_undo: &'static str,

    pub link_subject: &'static str,
    pub link_heading: &'static str,
    pub link_body: &'static str,
    pub link_action: &'static str,
    pub link_ignore: &'static str,
}

/// English.
pub const EN: MailTexts = MailTexts {
    lang: "en",
    test_subject: "[TEST] ",
    test_note: "This is a test mail from a test payment: no real money moved.",
    footer: "{shop} · Payments by paydesk",
    why: "You receive this mail because you paid {shop} or subscribed to it.",
    manage: "Manage your subscriptions",
    amount: "Amount",
    order: "Order",
    date: "Date",
    card: "Card",
    payment: "Payment",
    next_payment: "Next payment",
    receipt_link: "View the receipt",
    invoice: "Invoice",
    credit_note: "Credit note",
    document_link: "{number} as a PDF",

    receipt_subject: "Your receipt from {shop}",
    receipt_heading: "Payment received",
    receipt_body: "Thank you. {shop} received your payment of {amount} for {order}.",
    receipt_cancel: "You can cancel your subscription at any time on your subscription page; nothing is charged after that.",
    trial_subject: "Your free trial of {order} has started",
    trial_heading: "Your card is saved",
    trial_body: "Your free trial of {order} with {shop} runs until {date}. Then {amount} will be charged to your card {every}, until you cancel. We will remind you before the trial ends.",

    refund_subject: "Your refund from {shop}",
    refund_heading: "Refund on its way",
    refund_body: "{shop} refunded {amount} of your payment for {order}. Depending on your bank, it reaches your card within a few days.",

    failed_subject: "Your payment for {order} did not go through",
    failed_heading: "Your payment did not go through",
    failed_body: "We could not charge {amount} to your card {card} for {order}: {reason}",
    failed_retry: "We will try again on {date}. To pay with another card now, update your card.",
    failed_action: "Update your card",
    confirm_subject: "Please confirm your payment for {order}",
    confirm_body: "Your bank asks you to confirm the payment of {amount} for {order} with your card {card}. Your subscription continues once you confirm it.",
    confirm_action: "Confirm the payment",

    ended_subject: "Your subscription to {order} has ended",
    ended_heading: "Your subscription has ended",
    ended_body: "We could not charge your card after several attempts, so your subscription to {order} with {shop} has ended. Nothing more will be charged. To subscribe again, please visit {shop}.",

    trial_ending_subject: "Your trial of {order} ends on {date}",
    trial_ending_heading: "Your trial ends soon",
    trial_ending_body: "Your trial of {order} with {shop} ends on {date}. Then {amount} will be charged to your card {card} {every}, until you cancel.",
    how_to_cancel: "Not what you want? Cancel on your subscription page before then and nothing will be charged.",

    renewal_subject: "Your subscription to {order} renews on {date}",
    renewal_heading: "Your subscription renews soon",
    renewal_body: "Your subscription to {order} with {shop} renews on {date}: {amount} will be charged to your card {card}.",

    card_subject: "Your card for {order} expires soon",
    card_heading: "Your card expires soon",
    card_body: "The card {card} you pay {order} with expires at the end of {expiry}, before your next payment of {amount} on {date}. Please update your card to keep your subscription.",
    card_action: "Update your card",

    canceled_subject: "Your subscription to {order} is canceled",
    canceled_heading: "Subscription canceled",
    canceled_body: "Your subscription to {order} with {shop} was canceled on {date}. Nothing more will be charged.",
    ending_subject: "Your subscription to {order} ends on {date}",
    ending_heading: "Your subscription will end",
    ending_body: "As asked, your subscription to {order} with {shop} stays active until {date} and then ends. Nothing more will be charged.",
    ending_undo: "Changed your mind? You can keep it on your subscription page until then.",

    link_subject: "Your link to manage your subscriptions at {shop}",
    link_heading: "Manage your subscriptions",
    link_body: "Someone, probably you, asked for a link to manage your subscriptions and payments at {shop}. The link works once, for an hour.",
    link_action: "Open my subscription page",
    link_ignore: "If you did not ask for it, ignore this mail: nothing changes.",
};

/// Russian.
pub const RU: MailTexts = MailTexts {
    lang: "ru",
    test_subject: "[ТЕСТ] ",
    test_note: "Это тестовое письмо о тестовом платеже: реальные деньги не списывались.",
    footer: "{shop} · Платежи через paydesk",
    why: "Вы получили это письмо, потому что оплатили покупку в «{shop}» или оформили там подписку.",
    manage: "Управлять подписками",
    amount: "Сумма",
    order: "Заказ",
    date: "Дата",
    card: "Карта",
    payment: "Платёж",
    next_payment: "Следующий платёж",
    receipt_link: "Открыть чек",
    invoice: "Счёт",
    credit_note: "Кредит-нота",
    document_link: "{number} в PDF",

    receipt_subject: "Ваш чек от «{shop}»",
    receipt_heading: "Платёж получен",
    receipt_body: "Спасибо! «{shop}» получил ваш платёж {amount} за «{order}».",
    receipt_cancel: "Отменить подписку можно в любой момент на странице подписки; после этого ничего не списывается.",
    trial_subject: "Бесплатный пробный период «{order}» начался",
    trial_heading: "Карта сохранена",
    trial_body: "Бесплатный пробный период «{order}» в «{shop}» длится до {date}. Затем с вашей карты будет списываться {amount} {every}, пока вы не отмените подписку. Мы напомним вам до конца пробного периода.",

    refund_subject: "Возврат от «{shop}»",
    refund_heading: "Деньги возвращаются",
    refund_body: "«{shop}» вернул {amount} за «{order}». В зависимости от банка деньги поступят на карту в течение нескольких дней.",

    failed_subject: "Платёж за «{order}» не прошёл",
    failed_heading: "Платёж не прошёл",
    failed_body: "Не удалось списать {amount} с карты {card} за «{order}»: {reason}",
    failed_retry: "Мы попробуем снова {date}. Чтобы оплатить другой картой сейчас, обновите карту.",
    failed_action: "Обновить карту",
    confirm_subject: "Подтвердите платёж за «{order}»",
    confirm_body: "Банк просит подтвердить платёж {amount} за «{order}» картой {card}. Подписка продолжится, как только вы его подтвердите.",
    confirm_action: "Подтвердить платёж",

    ended_subject: "Подписка на «{order}» завершена",
    ended_heading: "Подписка завершена",
    ended_body: "Нам не удалось списать оплату с вашей карты после нескольких попыток, поэтому подписка на «{order}» в «{shop}» завершена. Больше ничего списываться не будет. Чтобы подписаться снова, зайдите в «{shop}».",

    trial_ending_subject: "Пробный период «{order}» заканчивается {date}",
    trial_ending_heading: "Пробный период скоро закончится",
    trial_ending_body: "Пробный период «{order}» в «{shop}» заканчивается {date}. Затем с вашей карты {card} будет списываться {amount} {every}, пока вы не отмените подписку.",
    how_to_cancel: "Передумали? Отмените подписку на странице подписки до этой даты, и ничего не будет списано.",

    renewal_subject: "Подписка на «{order}» продлевается {date}",
    renewal_heading: "Подписка скоро продлится",
    renewal_body: "Подписка на «{order}» в «{shop}» продлевается {date}: с карты {card} будет списано {amount}.",

    card_subject: "Срок действия карты для «{order}» скоро истекает",
    card_heading: "Срок действия карты истекает",
    card_body: "Срок действия карты {card}, которой вы оплачиваете «{order}», истекает в конце {expiry}, раньше следующего платежа {amount} {date}. Обновите карту, чтобы подписка продолжилась.",
    card_action: "Обновить карту",

    canceled_subject: "Подписка на «{order}» отменена",
    canceled_heading: "Подписка отменена",
    canceled_body: "Подписка на «{order}» в «{shop}» отменена {date}. Больше ничего списываться не будет.",
    ending_subject: "Подписка на «{order}» закончится {date}",
    ending_heading: "Подписка будет завершена",
    ending_body: "Как вы просили, подписка на «{order}» в «{shop}» действует до {date}, а затем завершится. Больше ничего списываться не будет.",
    ending_undo: "Передумали? До этой даты подписку можно сохранить на странице подписки.",

    link_subject: "Ссылка для управления подписками в «{shop}»",
    link_heading: "Управление подписками",
    link_body: "Кто-то, вероятно вы, запросил ссылку для управления подписками и платежами в «{shop}». Ссылка действует один раз в течение часа.",
    link_action: "Открыть страницу подписки",
    link_ignore: "Если вы не запрашивали ссылку, просто проигнорируйте это письмо: ничего не изменится.",
};

/// The texts of a language; English where there is no translation.
pub fn mail_texts(language: Language) -> &'static MailTexts {
    match language {
        Language::Ru => &RU,
        _ => &EN,
    }
}

/// `template` with each `{name}` replaced by its value, in one pass (a value that holds
/// braces stays as it is); an unknown name stays as written.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut text = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            values.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v, close))
        });
        match value {
            Some((value, close)) => {
                text.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                text.push('{');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_every_placeholder() {
        let text = fill(EN.receipt_body, &[("shop", "Corner Books"), ("amount", "€9.90"), ("order", "Weekly")]);
        assert_eq!(text, "Thank you. Corner Books received your payment of €9.90 for Weekly.");
        assert_eq!(fill("{order} {x}", &[("order", "{shop}"), ("shop", "no")]), "{shop} {x}");
    }
}
