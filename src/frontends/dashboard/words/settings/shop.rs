//! The Russian of the shop's settings: language, name and zone, the API key, notifications.

pub const RU: &[(&str, &str)] = &[
    // The language.
    ("Language", "Язык"),
    ("The language you read the dashboard in", "Язык панели"),
    (
        "Only for you: other users of the shop choose their own, and customers read the payment pages in each product's language.",
        "Только для вас: другие пользователи магазина выбирают язык сами, а клиенты видят страницы оплаты на языке товара.",
    ),
    ("Save language", "Сохранить язык"),
    ("Choose one of the languages listed.", "Выберите один из языков в списке."),
    // Said in the language just chosen: its Russian is the Russian sentence.
    ("From now on the dashboard speaks English.", "Теперь панель говорит по-русски."),
    // The shop.
    ("Shop", "Магазин"),
    ("Shop name", "Название магазина"),
    ("Shown to customers on the payment pages.", "Его видят клиенты на страницах оплаты."),
    ("Shop URL", "URL магазина"),
    (
        "Where customers return after paying when a product has no return URL.",
        "Сюда клиенты возвращаются после оплаты, если у товара нет URL возврата.",
    ),
    ("Time zone for the dashboard", "Часовой пояс панели"),
    (
        "Type to search the list, e.g. Berlin or New_York; empty for the system's zone (billing always uses the system's).",
        "Начните вводить, чтобы найти пояс в списке, например Moscow или Berlin; оставьте пустым для пояса системы (списания по подпискам всегда идут по нему).",
    ),
    ("System time zone: {}", "Часовой пояс системы: {}"),
    ("Save settings", "Сохранить настройки"),
    ("Settings saved.", "Настройки сохранены."),
    // The API credentials and the key's rotation.
    ("API credentials", "Доступ к API"),
    ("Shop id", "ID магазина"),
    ("Secret key", "Секретный ключ"),
    ("(shown only when created or rotated)", "(показывается только при создании или перевыпуске)"),
    (
        "I understand that integrations using the current key stop working at once.",
        "Я понимаю, что интеграции с текущим ключом сразу перестанут работать.",
    ),
    ("Tick the box to confirm the rotation.", "Отметьте флажок, чтобы подтвердить перевыпуск."),
    ("Rotate secret key", "Перевыпустить секретный ключ"),
    (
        "The key was rotated by another request a moment ago; its new key is the one that works.",
        "Ключ только что перевыпущен другим запросом; действует ключ, выданный тем запросом.",
    ),
    ("New secret key", "Новый секретный ключ"),
    ("Your new secret key", "Ваш новый секретный ключ"),
    (
        "The old key no longer works. Copy the new one now: it is shown only this once.",
        "Старый ключ больше не работает. Скопируйте новый сейчас: он показывается только один раз.",
    ),
    (
        "A new secret key is shown only once. Rotate the key again if you did not copy it.",
        "Новый секретный ключ показывается только один раз. Если вы его не скопировали, перевыпустите ключ ещё раз.",
    ),
    ("Back to settings", "Назад к настройкам"),
    // The bePaid notifications.
    ("Notifications (bePaid)", "Уведомления (bePaid)"),
    (
        "Payments of products and subscriptions are notified as bePaid notifies: a POST to the URL below, unless the product or subscription has its own",
        "Уведомления о платежах по товарам и подпискам приходят так же, как от bePaid: POST-запросом на URL ниже, если у товара или подписки не задан свой",
    ),
    (
        "Each notification carries HTTP Basic (shop id and secret key) and a signature your system checks with this public key, in the header",
        "В каждом уведомлении — HTTP Basic (ID магазина и секретный ключ) и подпись, которую ваша система проверяет этим открытым ключом; подпись передаётся в заголовке",
    ),
    ("For Standard Webhooks endpoints, see", "Эндпоинты Standard Webhooks настраиваются в разделе"),
    ("No Basic auth yet.", "Пока без HTTP Basic."),
    (
        "Your secret key was made before paydesk kept it for notifications: they carry only the signature until you rotate the key above.",
        "Секретный ключ создан до того, как paydesk начал хранить его для уведомлений: пока вы не перевыпустите ключ выше, уведомления приходят только с подписью.",
    ),
    ("Default notification URL", "URL уведомлений по умолчанию"),
    (
        "Empty: only objects with their own notification_url are notified.",
        "Если пусто, уведомления приходят только по товарам и подпискам со своим notification_url.",
    ),
    ("Save notification URL", "Сохранить URL уведомлений"),
    ("Notification settings saved.", "Настройки уведомлений сохранены."),
    ("Public key (PEM)", "Открытый ключ (PEM)"),
    (
        "The same key as bePaid's back office shows it (base64, for bePaid's PHP and Ruby libraries)",
        "Тот же ключ в том виде, как его показывает личный кабинет bePaid (base64, для библиотек bePaid на PHP и Ruby)",
    ),
];
