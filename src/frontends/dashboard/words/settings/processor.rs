//! The Russian of the processor's page.

pub const RU: &[(&str, &str)] = &[
    // The payment processor.
    ("Payment processor", "Платёжный провайдер"),
    ("Change the payment processor", "Сменить платёжного провайдера"),
    ("bePaid (BeGateway)", "bePaid (BeGateway)"),
    ("Stripe", "Stripe"),
    ("Webhook signing secret (Stripe)", "Секрет подписи вебхуков (Stripe)"),
    (
        "whsec_…, shown on the webhook endpoint's page in Stripe; kept sealed here.",
        "whsec_…, показан на странице эндпоинта вебхуков в Stripe; здесь хранится запечатанным.",
    ),
    (
        "In Stripe's dashboard (Developers → Webhooks), add an endpoint with this URL (it must be reachable from the internet), once in test mode and once in live mode, and copy each endpoint's signing secret here:",
        "В панели Stripe (Developers → Webhooks) добавьте эндпоинт с этим адресом (он должен быть доступен из интернета) — один раз в тестовом режиме и один раз в боевом — и скопируйте сюда секрет подписи каждого:",
    ),
    ("Send it these events:", "Отправлять ему эти события:"),
    ("Simulated (no money moves)", "Симуляция (деньги не списываются)"),
    ("Who moves the shop's money", "Кто проводит платежи магазина"),
    ("Processor", "Провайдер"),
    ("Simulated: the test cards work, no money moves", "Симуляция: работают тестовые карты, деньги не списываются"),
    ("bePaid, or another processor on the BeGateway platform", "bePaid или другой провайдер на платформе BeGateway"),
    ("Where customers type their card", "Где клиенты вводят карту"),
    (
        "On the processor's page (recommended): paydesk never sees card numbers",
        "На странице провайдера (рекомендуется): paydesk не видит номеров карт",
    ),
    ("On paydesk's page", "На странице paydesk"),
    (
        "Only with the processor's permission to send card numbers from your server, and it puts this server under the heaviest PCI DSS self-assessment (SAQ D).",
        "Только с разрешения провайдера принимать номера карт с вашего сервера; сервер тогда подпадает под самую строгую самооценку PCI DSS (SAQ D).",
    ),
    ("Gateway URL (bePaid)", "URL шлюза (bePaid)"),
    ("bePaid's unless your processor gives another.", "Шлюз bePaid, если ваш провайдер не дал другой."),
    ("Checkout URL (bePaid)", "URL страницы оплаты (bePaid)"),
    (
        "The processor's payment page; bePaid's unless your processor gives another.",
        "Страница оплаты провайдера; bePaid, если ваш провайдер не дал другую.",
    ),
    ("Test account (test products and plans)", "Тестовый аккаунт (тестовые товары и тарифы)"),
    ("Live account (live products and plans)", "Боевой аккаунт (боевые товары и тарифы)"),
    ("Shop id at the processor (bePaid)", "ID магазина у провайдера (bePaid)"),
    (
        "Stored, ending in {}; leave empty to keep it.",
        "Сохранён, оканчивается на {}; оставьте поле пустым, чтобы не менять.",
    ),
    (
        "Shown once in the processor's back office; kept sealed here.",
        "Показывается в личном кабинете провайдера; здесь хранится зашифрованным.",
    ),
    (
        "The processor's public key (bePaid: checks its notifications)",
        "Публичный ключ провайдера (bePaid: проверяет его уведомления)",
    ),
    ("Remove this account", "Удалить этот аккаунт"),
    ("Save payment processor", "Сохранить провайдера"),
    ("Payment processor saved.", "Платёжный провайдер сохранён."),
    ("Check the connection", "Проверка подключения"),
    (
        "Asks the processor once per account whether it takes the account's keys. Nothing is charged.",
        "Спрашивает провайдера по каждому счёту, принимает ли он ключи счёта. Ничего не списывается.",
    ),
    ("Check connection", "Проверить подключение"),
    ("The test account", "Тестовый аккаунт"),
    ("The live account", "Боевой аккаунт"),
    ("{}: the processor takes it.", "{}: провайдер его принимает."),
    (
        "{}: the processor refused the account's keys. Copy them again from its back office.",
        "{}: провайдер отклонил ключи счёта. Скопируйте их заново из его личного кабинета.",
    ),
    ("{}: the processor answered HTTP {}. Check its URL.", "{}: провайдер ответил HTTP {}. Проверьте его URL."),
    ("{}: the processor could not be reached ({}).", "{}: провайдер недоступен ({})."),
    ("There is no account to check.", "Проверять нечего: аккаунта нет."),
    ("Good to know", "Полезно знать"),
    (
        "In the processor's back office, set the shop's notification URL to this address (it must be reachable from the internet):",
        "В личном кабинете провайдера укажите этот адрес как URL уведомлений магазина (он должен быть доступен из интернета):",
    ),
    (
        "Test products and plans pay through the test account, live ones through the live account. With cards typed on the processor's page, card numbers never reach this server.",
        "Тестовые товары и планы оплачиваются через тестовый аккаунт, боевые — через боевой. Когда карту вводят на странице провайдера, номера карт не попадают на этот сервер.",
    ),
];
