//! The Russian of the disputes pages, and the words of a dispute's stages, statuses and steps.

/// The texts of the disputes pages, by their English.
pub const RU: &[(&str, &str)] = &[
    ("Disputes", "Споры"),
    ("Open disputes", "Открытые споры"),
    ("Dispute", "Спор"),
    ("{} taken back", "списано {}"),
    ("Early fraud warning", "Предупреждение банка о мошенничестве"),
    ("Disputes and fraud warnings", "Споры и предупреждения о мошенничестве"),
    (
        "What paydesk does when a cardholder disputes a payment, or the card's bank warns that a payment may be fraud.",
        "Что делает paydesk, когда держатель карты оспаривает платёж или банк карты предупреждает о возможном \
         мошенничестве.",
    ),
    (
        "Cancel a disputed subscription at once, and never charge its card again (recommended)",
        "Сразу отменять оспоренную подписку и больше не списывать с её карты (рекомендуется)",
    ),
    (
        "Refuse a disputed card for new payments and subscriptions while the dispute stands (recommended)",
        "Не принимать оспоренную карту для новых платежей и подписок, пока спор в силе (рекомендуется)",
    ),
    (
        "Refund a payment the card's bank warns is fraud, and cancel its subscription, before it becomes a dispute",
        "Возвращать платёж, о котором банк карты предупредил как о мошенническом, и отменять его подписку, пока не \
         начался спор",
    ),
    (
        "A refund costs the payment but no dispute fee, and a dispute counts against your processor's dispute limits even when you win it.",
        "Возврат стоит суммы платежа, но без комиссии за спор, а спор учитывается в лимитах процессинга, даже если вы \
         его выиграли.",
    ),
    ("Save dispute settings", "Сохранить настройки споров"),
    ("Dispute settings saved.", "Настройки споров сохранены."),
    ("on", "включено"),
    ("off", "выключено"),
    ("All open disputes", "Все открытые споры"),
    (
        "A cardholder's bank took these payments back, or asked about them. Answer each before its due date, or accept it.",
        "Банк держателя карты вернул эти платежи или запросил по ним объяснения. Ответьте на каждый спор до срока или \
         примите его.",
    ),
    ("Find disputes", "Найти споры"),
    ("Open: awaiting an answer or a decision", "Открытые: ждут ответа или решения"),
    (
        "No disputes here. When a cardholder disputes a payment, it shows here with the time left to answer.",
        "Споров нет. Когда держатель карты оспорит платёж, спор появится здесь со сроком ответа.",
    ),
    ("Answer by", "Ответить до"),
    ("Payment", "Платёж"),
    ("Opened", "Открыт"),
    ("{} day left|{} days left", "остался {} день|осталось {} дня|осталось {} дней"),
    ("{} hour left|{} hours left", "остался {} час|осталось {} часа|осталось {} часов"),
    ("past due", "срок прошёл"),
    ("Dispute {}", "Спор {}"),
    ("Dispute of {}", "Спор на {}"),
    ("Answer by {}", "Ответить до {}"),
    ("Stage", "Этап"),
    ("Dispute fee", "Комиссия за спор"),
    ("Taken from you now", "Списано с вас сейчас"),
    ("Evidence due by", "Срок подачи доказательств"),
    ("Evidence submitted", "Доказательства отправлены"),
    ("Where to answer", "Где ответить"),
    (
        "This processor takes no answer through paydesk: to contest the chargeback, respond in the processor's back office, where the acquirer asks for your evidence.",
        "Этот процессинг не принимает ответы через paydesk: чтобы оспорить чарджбэк, ответьте в личном кабинете \
         процессинга, где эквайер запрашивает доказательства.",
    ),
    ("Your evidence", "Ваши доказательства"),
    (
        "Tell the bank why the payment was right. Save a draft as often as you like; once submitted, the evidence cannot be changed.",
        "Объясните банку, почему платёж правомерен. Черновик можно сохранять сколько угодно; отправленные \
         доказательства изменить нельзя.",
    ),
    ("What was sold", "Что было продано"),
    ("Customer's name", "Имя клиента"),
    ("Customer's e-mail address", "Эл. почта клиента"),
    ("When it was delivered or used", "Когда товар доставлен или услуга оказана"),
    ("Use of the service (logins, visits)", "Пользование услугой (входы, посещения)"),
    ("Shipment tracking number", "Трек-номер отправления"),
    ("How the refund policy was shown", "Как клиенту показали условия возврата"),
    ("Anything else the bank should know", "Что ещё нужно знать банку"),
    ("Submit the evidence", "Отправить доказательства"),
    ("Save as a draft", "Сохранить черновик"),
    ("Accept the dispute", "Принять спор"),
    (
        "If the cardholder is right, accept the dispute: the money stays with them, and you confirm on the next step.",
        "Если держатель карты прав, примите спор: деньги останутся у него. Подтверждение — на следующем шаге.",
    ),
    ("History", "История"),
    ("What happened", "Что произошло"),
    ("Money", "Деньги"),
    ("← All disputes", "← Все споры"),
    (
        "The evidence was submitted. The bank decides; this page shows its answer.",
        "Доказательства отправлены. Решение примет банк; оно появится на этой странице.",
    ),
    (
        "The evidence was saved as a draft. Submit it before the due date.",
        "Доказательства сохранены как черновик. Отправьте их до срока.",
    ),
    ("Accept the dispute of {}?", "Принять спор на {}?"),
    (
        "The {} stays with the cardholder, and the dispute closes as accepted.",
        "{} останутся у держателя карты, а спор закроется как принятый.",
    ),
    (
        "This cannot be undone: you can no longer send evidence.",
        "Это нельзя отменить: отправить доказательства будет уже нельзя.",
    ),
    ("Keep disputing: go back", "Продолжить спор: назад"),
    ("The dispute was accepted.", "Спор принят."),
];

/// A dispute's stages, statuses and history steps (`dispute:word`), and the messages its
/// pages may show, known only when they run.
pub const DATA: &[(&str, &str)] = &[
    ("dispute:inquiry", "запрос банка"),
    ("dispute:chargeback", "чарджбэк"),
    ("dispute:pre_arbitration", "предарбитраж"),
    ("dispute:needs_response", "ждёт ответа"),
    ("dispute:under_review", "на рассмотрении"),
    ("dispute:won", "выигран"),
    ("dispute:lost", "проигран"),
    ("dispute:accepted", "принят"),
    ("dispute:expired", "срок ответа истёк"),
    ("dispute:warning_closed", "запрос закрыт"),
    ("dispute:opened", "открыт"),
    ("dispute:escalated", "перешёл на следующий этап"),
    ("dispute:evidence_staged", "черновик доказательств"),
    ("dispute:evidence_submitted", "доказательства отправлены"),
    ("dispute:funds_withdrawn", "деньги списаны"),
    ("dispute:funds_reinstated", "деньги возвращены"),
    ("dispute:updated", "обновлён"),
    ("dispute:closed", "закрыт"),
    // Why cardholders dispute, in the processors' words.
    ("reason:fraudulent", "мошенничество"),
    ("reason:fraud", "мошенничество"),
    ("reason:product_not_received", "товар не получен"),
    ("reason:product_unacceptable", "товар не подошёл"),
    ("reason:duplicate", "двойное списание"),
    ("reason:subscription_canceled", "подписка была отменена"),
    ("reason:credit_not_processed", "возврат не получен"),
    ("reason:unrecognized", "платёж не узнан"),
    ("reason:general", "другое"),
    ("Dispute not found", "Спор не найден"),
    (
        "This dispute's evidence was submitted: it is under review",
        "Доказательства по этому спору отправлены: он на рассмотрении",
    ),
    ("This dispute is closed ({})", "Этот спор закрыт ({})"),
    (
        "The dispute changed meanwhile: read it again and resend",
        "Спор тем временем изменился: откройте его снова и отправьте ещё раз",
    ),
    (
        "This dispute's processor takes no answer through paydesk: respond in the processor's back office",
        "Процессинг этого спора не принимает ответы через paydesk: ответьте в личном кабинете процессинга",
    ),
];

/// The English of a dispute's words a merchant would not say as the API does.
pub const EN: &[(&str, &str)] = &[
    ("dispute:inquiry", "inquiry"),
    ("dispute:chargeback", "chargeback"),
    ("dispute:pre_arbitration", "pre-arbitration"),
    ("dispute:needs_response", "needs your answer"),
    ("dispute:under_review", "under review"),
    ("dispute:warning_closed", "inquiry closed"),
    ("dispute:evidence_staged", "evidence saved as a draft"),
    ("dispute:evidence_submitted", "evidence submitted"),
    ("dispute:funds_withdrawn", "money taken"),
    ("dispute:funds_reinstated", "money given back"),
];
