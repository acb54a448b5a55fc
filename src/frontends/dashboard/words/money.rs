//! The Russian of the overview, payments and refunds pages.

/// The texts of the overview, payments and refunds pages, by their English.
pub const RU: &[(&str, &str)] = &[
    // The overview.
    (
        "Revenue is what payments took, net of refunds and of what disputes took back.",
        "Выручка — это сумма принятых платежей за вычетом возвратов и того, что забрали споры.",
    ),
    ("Today", "Сегодня"),
    ("This month", "В этом месяце"),
    ("Test mode: {}", "Тестовый режим: {}"),
    (
        "None yet. Share a plan's link to start the first one.",
        "Пока нет. Поделитесь ссылкой на тариф, чтобы оформить первую.",
    ),
    ("Revenue, last 30 days", "Выручка за последние 30 дней"),
    (
        "Revenue, last 30 days (test mode: no live payments yet)",
        "Выручка за последние 30 дней (тестовый режим: боевых платежей пока нет)",
    ),
    ("up to {} a day", "до {} в день"),
    ("Daily revenue in {} from {} to {}, up to {} a day", "Выручка в {} по дням с {} по {}, до {} в день"),
    ("from {} to {} a day", "от {} до {} в день"),
    (
        "Daily revenue in {} from {} to {}, from {} to {} a day; days below the line gave back more than they took",
        "Выручка в {} по дням с {} по {}, от {} до {} в день; в дни ниже линии возвращено больше, чем получено",
    ),
    (
        "No revenue in the last 30 days yet. Share a product's or a plan's pay link: each day's takings show here.",
        "За последние 30 дней выручки пока нет. Поделитесь ссылкой на оплату товара или тарифа — здесь появится \
         выручка по дням.",
    ),
    ("Recent payments", "Последние платежи"),
    ("All payments", "Все платежи"),
    // The payments list and its table.
    ("Find payments", "Найти платежи"),
    ("Not searched.", "Поиск не выполнен."),
    ("Search payments", "Поиск платежей"),
    (
        "This authorization was already voided: the funds are released.",
        "Эта авторизация уже отменена: средства разблокированы.",
    ),
    ("This payment was already captured.", "Этот платёж уже списан."),
    (
        "A capture or void of this payment is under way: look again in a moment.",
        "Списание или отмена этого платежа уже выполняется: посмотрите ещё раз через минуту.",
    ),
    (
        "This payment is {}: nothing is held to capture or void.",
        "Статус платежа — «{}»: списывать или отменять нечего.",
    ),
    (
        "The start of an e-mail or of a name's words, the card's last 4 digits, an amount such as 9.90, or a payment id",
        "Начало эл. почты или слов имени, последние 4 цифры карты, сумма (например, 9,90) или ID платежа",
    ),
    ("Any status", "Любой статус"),
    ("Product", "Товар"),
    ("Any product", "Любой товар"),
    ("Any plan", "Любой тариф"),
    ("Test or live", "Режим"),
    ("Test and live", "Любой режим"),
    ("Live only", "Только боевые"),
    ("Test only", "Только тестовые"),
    ("From (day)", "Дата с"),
    ("To (day, included)", "Дата по (вкл.)"),
    ("Clear the search", "Сбросить поиск"),
    ("Only the payments of customer", "Только платежи клиента"),
    ("Only the payments of subscription", "Только платежи подписки"),
    (
        "No payment matches this search. Try fewer filters or a wider date range.",
        "Под этот поиск не подходит ни один платёж. Уберите часть фильтров или расширьте диапазон дат.",
    ),
    (
        "No payments yet. Share a pay link: each payment shows here as soon as a customer pays.",
        "Платежей пока нет. Поделитесь ссылкой на оплату — каждый платёж появится здесь, как только клиент оплатит.",
    ),
    ("Go to products", "Перейти к товарам"),
    ("For", "За что"),
    ("Paid by", "Плательщик"),
    ("Date", "Дата"),
    // A payment's page: capturing or voiding an authorization.
    ("Payment {}", "Платёж {}"),
    ("Authorized: the funds are held", "Авторизация: средства заблокированы"),
    (
        "Capture to take the money, or void to release it.",
        "Спишите средства или отмените авторизацию, чтобы их разблокировать.",
    ),
    ("Capture {}", "Списать {}"),
    ("Void", "Отменить авторизацию"),
    ("Type", "Тип"),
    ("expires {}/{}", "действует до {}/{}"),
    ("Failure", "Ошибка"),
    ("Captured", "Списан"),
    ("Voided", "Авторизация отменена"),
    ("Refunded", "Возвращено"),
    ("Captured {}.", "Списано {}."),
    ("Void the authorization of {}?", "Отменить авторизацию на {}?"),
    (
        "The {} held on {} •••• {} is released to the customer.",
        "{}, заблокированные на карте {} •••• {}, снова станут доступны клиенту.",
    ),
    (
        "You cannot capture it afterwards: to take the money, the customer has to pay again.",
        "Списать их потом будет нельзя: чтобы получить деньги, клиенту придётся оплатить заново.",
    ),
    ("Void the authorization", "Отменить авторизацию"),
    ("The authorization was voided: the funds are released.", "Авторизация отменена: средства разблокированы."),
    // A payment's page: refunding, and its refunds.
    ("Refund", "Возврат"),
    (
        "Up to {} can go back to the card. You confirm on the next step.",
        "На карту можно вернуть до {}. Подтверждение — на следующем шаге.",
    ),
    ("Amount to refund ({})", "Сумма возврата ({})"),
    ("Kept with the refund; the customer does not see it.", "Сохраняется вместе с возвратом; клиент её не видит."),
    ("Review the refund", "Проверить возврат"),
    ("Refunds", "Возвраты"),
    (
        "No refunds yet. To give money back, fill in the refund form above.",
        "Возвратов пока нет. Чтобы вернуть деньги, заполните форму возврата выше.",
    ),
    ("Reason", "Причина"),
    ("← All payments", "← Все платежи"),
    // Confirming a refund.
    ("Refund {}?", "Вернуть {}?"),
    ("Confirm the refund", "Подтвердите возврат"),
    ("{} of payment", "{} по платежу"),
    ("goes back to {}.", "вернутся на карту {}."),
    ("A refund cannot be undone.", "Возврат нельзя отменить."),
    ("Reason: {}", "Причина: {}"),
    ("Refund {}", "Вернуть {}"),
    ("Keep the money: go back", "Не возвращать: назад к платежу"),
    ("Refunded {}.", "Возвращено {}."),
    ("The refund of {} failed: {}", "Возврат {} не прошёл: {}"),
];

/// Values of the payments pages known only when they run, translated with `t_data`: a
/// payment's transaction type, a refund's status that no payment has, and the errors these
/// pages answer.
pub const DATA: &[(&str, &str)] = &[
    ("payment", "платёж"),
    ("authorization", "авторизация"),
    ("pending", "в обработке"),
    ("Payment not found", "Платёж не найден"),
    // What the acquirer said of a payment or refund it refused (kept in English in the API).
    ("The card has expired.", "Срок действия карты истёк."),
    ("The card was declined.", "Банк отклонил карту."),
    ("The card has insufficient funds.", "На карте недостаточно средств."),
    ("The payment could not be processed. Please try again later.", "Платёж не удалось провести. Попробуйте позже."),
    (
        "The card's issuer refused the refund: give the money back another way.",
        "Банк карты отклонил возврат: верните деньги другим способом.",
    ),
];
