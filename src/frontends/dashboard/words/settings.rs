//! The Russian of the settings, team and webhooks pages.

/// The texts of the settings, team and webhooks pages, by their English.
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
    // The shop's users.
    ("Users", "Пользователи"),
    ("invited {}, has not set a password yet", "приглашение от {}, пароль ещё не задан"),
    ("since {}", "в магазине с {}"),
    ("(you)", "(вы)"),
    ("Remove {}…", "Удалить {}…"),
    ("Invite a user by e-mail", "Пригласить пользователя по эл. почте"),
    (
        "You get a one-time link to send them; they choose their own password.",
        "Вы получите одноразовую ссылку для отправки пользователю; пароль он выберет сам.",
    ),
    ("Invite", "Пригласить"),
    ("Change your password", "Сменить пароль"),
    ("Invitation for {}", "Приглашение для {}"),
    (
        "Send this link to {}. It works once, for {}: they open it, choose their own password and are logged in to this shop. It is shown only this once.",
        "Отправьте эту ссылку на {}. Она одноразовая и действует {}: по ней пользователь задаст свой пароль и сразу войдёт в этот магазин. Ссылка показывается только один раз.",
    ),
    ("Invitation link", "Ссылка-приглашение"),
    (
        "An invitation link is shown only once. Remove the invited user and invite them again if it was lost.",
        "Ссылка-приглашение показывается только один раз. Если она потерялась, удалите приглашённого пользователя и пригласите его снова.",
    ),
    (
        "You cannot remove yourself; another user of the shop can",
        "Удалить себя нельзя — это может сделать другой пользователь магазина",
    ),
    ("Remove {}?", "Удалить {}?"),
    (
        "{} can no longer log in to this shop, and is logged out everywhere now.",
        "{} больше не сможет войти в этот магазин, а все открытые сеансы завершатся сразу.",
    ),
    (
        "What they did stays. You can invite them again later.",
        "Всё, что пользователь сделал, сохранится. Позже его можно пригласить снова.",
    ),
    ("Remove the user", "Удалить пользователя"),
    ("Keep them", "Не удалять"),
    ("{} was removed from the shop.", "Пользователь {} удалён из магазина."),
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

/// Values of these pages known only when they run, translated with `t_data` (or `n`, `rule`):
/// counts, the messages of their errors, why an endpoint was disabled, why an attempt failed.
pub const DATA: &[(&str, &str)] = &[
    ("{} day|{} days", "{} день|{} дня|{} дней"),
    ("{} delivery|{} deliveries", "{} доставка|{} доставки|{} доставок"),
    ("User not found", "Пользователь не найден"),
    ("Webhook endpoint not found", "Эндпоинт вебхука не найден"),
    ("Delivery not found", "Доставка не найдена"),
    ("Event not found", "Событие не найдено"),
    ("the receiver answered 410 Gone", "получатель ответил 410 Gone"),
    ("every delivery failed for 5 days", "5 дней ни одна доставка не удалась"),
    ("no answer within {} s", "нет ответа за {} с"),
    ("the event no longer exists", "события больше нет"),
    ("the endpoint is disabled or deleted", "эндпоинт отключён или удалён"),
    ("the shop is gone", "магазина больше нет"),
];
