//! The Russian of the webhook pages: endpoints, their secrets, deliveries.

pub const RU: &[(&str, &str)] = &[
    // Why a delivery failed.
    (
        "the address is not public: webhooks go to the internet only",
        "адрес не публичный: уведомления уходят только в интернет",
    ),
    ("the host name was not found (DNS)", "адрес не найден (DNS)"),
    ("the connection was refused", "соединение отклонено"),
    ("its TLS certificate was not accepted", "его TLS-сертификат не принят"),
    ("the TLS connection failed", "не удалось установить TLS-соединение"),
    ("the connection was cut", "соединение оборвалось"),
    ("no connection could be made", "не удалось подключиться"),
    // The webhook endpoints.
    (
        "paydesk sends each event to the endpoints that take it, and tries again for about three days until your endpoint answers with a 2xx status.",
        "paydesk отправляет каждое событие на эндпоинты, которые его принимают, и повторяет попытки около трёх дней, пока эндпоинт не ответит статусом 2xx.",
    ),
    (
        "Each delivery is signed as Standard Webhooks sign, in the headers",
        "Каждая доставка подписана по стандарту Standard Webhooks, в заголовках",
    ),
    (
        "bePaid notifications go to the notification URL of the product or subscription, else to the default one in",
        "Уведомления bePaid уходят на URL уведомлений товара или подписки, а если его нет — на URL по умолчанию из раздела",
    ),
    (
        "No endpoints yet. Add one to receive events at your server.",
        "Эндпоинтов пока нет. Добавьте эндпоинт, чтобы получать события на свой сервер.",
    ),
    ("URL", "URL"),
    ("Events", "События"),
    ("enabled", "включён"),
    ("disabled", "отключён"),
    ("Add an endpoint", "Новый эндпоинт"),
    ("Endpoint URL", "URL эндпоинта"),
    (
        "An https:// address of your system that receives POST requests.",
        "Адрес https:// вашей системы, который принимает POST-запросы.",
    ),
    ("Description (optional)", "Описание (необязательно)"),
    ("Events to send", "Какие события отправлять"),
    (
        "“*” sends every event; “payment.*” every event of payments.",
        "«*» — все события; «payment.*» — все события платежей.",
    ),
    ("Add endpoint", "Добавить эндпоинт"),
    ("Webhook endpoint", "Эндпоинт вебхука"),
    ("paydesk disabled this endpoint:", "paydesk отключил этот эндпоинт:"),
    (
        "{}. Fix the receiver, then tick “Enabled” and save.",
        "{}. Исправьте получателя, затем отметьте «Включён» и сохраните.",
    ),
    ("Endpoint", "Эндпоинт"),
    ("Enabled", "Включён"),
    ("Rotate secret…", "Перевыпустить секрет…"),
    ("Delete…", "Удалить…"),
    ("← All endpoints", "← Все эндпоинты"),
    ("The endpoint was saved.", "Эндпоинт сохранён."),
    ("Rotate the signing secret?", "Перевыпустить секрет подписи?"),
    (
        "A new secret is made and shown once. For 24 hours every delivery is signed with both the old and the new secret, so your receiver can switch without losing one.",
        "Будет создан новый секрет, он покажется один раз. 24 часа каждая доставка подписывается и старым, и новым секретом, чтобы получатель перешёл на новый, не потеряв ни одной доставки.",
    ),
    ("Rotate the secret", "Перевыпустить секрет"),
    ("Keep the current one", "Оставить текущий"),
    ("Delete this endpoint?", "Удалить этот эндпоинт?"),
    (
        "Its deliveries still waiting are dropped and no event is sent to it any more. This cannot be undone.",
        "Ожидающие доставки на него отменятся, и события больше не будут на него отправляться. Это действие нельзя отменить.",
    ),
    ("Delete the endpoint", "Удалить эндпоинт"),
    ("Keep the endpoint", "Не удалять"),
    ("The endpoint {} was deleted.", "Эндпоинт {} удалён."),
    // The signing secret, shown once.
    ("Signing secret", "Секрет подписи"),
    ("The new signing secret", "Новый секрет подписи"),
    ("Endpoint added", "Эндпоинт добавлен"),
    (
        "For 24 hours deliveries to {} are signed with both the old and this secret.",
        "24 часа доставки на {} подписываются и старым, и этим секретом.",
    ),
    ("Events now go to {}.", "Теперь события уходят на {}."),
    (
        "Copy the signing secret now: it is shown only this once.",
        "Скопируйте секрет подписи сейчас: он показывается только один раз.",
    ),
    ("Go to the endpoint", "Перейти к эндпоинту"),
    // The deliveries and their attempts.
    ("Recent deliveries", "Последние доставки"),
    (
        "Nothing was sent yet. Make a test payment to see its events delivered here.",
        "Пока ничего не отправлено. Проведите тестовый платёж, и здесь появятся доставки его событий.",
    ),
    ("Event", "Событие"),
    ("To", "Куда"),
    ("Attempts", "Попытки"),
    ("Last attempt", "Последняя попытка"),
    ("Next", "Следующая"),
    ("Actions", "Действия"),
    ("Send again", "Отправить снова"),
    ("in {} ms, {}", "за {} мс, {}"),
    ("no answer", "нет ответа"),
    ("not tried yet", "ещё не отправлялась"),
    ("The event {} is being sent again ({}).", "Событие {} отправляется снова ({})."),
];
