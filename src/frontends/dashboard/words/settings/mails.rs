//! The Russian of the e-mail settings.

pub const RU: &[(&str, &str)] = &[
    // E-mails to customers.
    ("E-mails to customers", "Письма клиентам"),
    (
        "Receipts, reminders and notices of failed payments, sent to your customers in your name.",
        "Чеки, напоминания и уведомления о неудачных платежах, которые клиенты получают от вашего имени.",
    ),
    ("Choose the e-mails", "Выбрать письма"),
    ("See the e-mails", "Посмотреть письма"),
    ("sent", "отправляется"),
    ("not sent", "не отправляется"),
    ("Renewals announced", "О каких продлениях напоминать"),
    ("of every plan", "обо всех планах"),
    ("of plans billed every 6 months or less often", "о планах с периодом 6 месяцев и больше"),
    ("An owner or an administrator chooses these.", "Эти настройки выбирает владелец или администратор."),
    (
        "This paydesk sends no e-mail: its operator has not configured an SMTP server (PAYDESK_SMTP_URL). Nothing is queued until then.",
        "Этот paydesk не отправляет письма: администратор не настроил SMTP-сервер (PAYDESK_SMTP_URL). До тех пор письма не ставятся в очередь.",
    ),
    ("What your customers receive", "Что получают клиенты"),
    (
        "Each mail is in the language of the plan's or product's page and links to the customer's subscriber page. Mails from test payments say they are tests.",
        "Каждое письмо написано на языке страницы плана или товара и содержит ссылку на страницу подписчика. Письма о тестовых платежах помечены как тестовые.",
    ),
    ("Mails sent", "Отправляемые письма"),
    ("Preview", "Просмотр"),
    ("Days before a renewal its reminder goes", "За сколько дней до продления напоминать"),
    ("Card networks ask for 7 to 30 days.", "Платёжные системы требуют от 7 до 30 дней."),
    (
        "Announce the renewals of every plan (by default only of plans billed every 6 months or less often)",
        "Напоминать о продлении всех планов (по умолчанию — только планов с периодом больше 6 месяцев)",
    ),
    ("Sender address", "Адрес отправителя"),
    (
        "Leave empty for this paydesk's: {}. Your domain must allow the SMTP server to send for it (SPF, DKIM).",
        "Оставьте пустым, чтобы использовать адрес этого paydesk: {}. Ваш домен должен разрешать SMTP-серверу отправку от его имени (SPF, DKIM).",
    ),
    ("Save e-mail settings", "Сохранить настройки писем"),
    ("E-mail settings saved.", "Настройки писем сохранены."),
    ("Receipt for each payment", "Чек за каждый платёж"),
    ("Refund receipt", "Чек о возврате"),
    ("Failed renewal, with a link to update the card", "Неудачное продление со ссылкой для смены карты"),
    ("Subscription ended after the last attempt", "Подписка завершена после последней попытки"),
    (
        "Trial ending, 7 days before (card networks require it)",
        "Окончание пробного периода, за 7 дней (требование платёжных систем)",
    ),
    ("Upcoming renewal", "Предстоящее продление"),
    ("Card expiring before the next charge", "Срок карты истекает до следующего списания"),
    ("Cancellation confirmed", "Подтверждение отмены"),
    ("Link to the subscriber page", "Ссылка на страницу подписчика"),
    ("The subscriber page", "Страница подписчика"),
    (
        "Every mail links to the customer's own page, where they see their payments, update their card and cancel. Link to this address from your site, so that customers can ask for a link themselves:",
        "Каждое письмо ведёт на личную страницу клиента: там он видит платежи, меняет карту и отменяет подписку. Поставьте ссылку на этот адрес на своём сайте, чтобы клиенты могли сами запросить ссылку:",
    ),
    (
        "Subscribers may pause their subscription from the end of its paid period, and resume it, on their page",
        "Подписчики могут на своей странице приостановить подписку с конца оплаченного периода и возобновить её",
    ),
    (
        "Subscribers may now pause and resume on their page.",
        "Теперь подписчики могут приостанавливать и возобновлять подписку на своей странице.",
    ),
    ("Subscribers no longer pause on their page.", "Подписчики больше не приостанавливают подписку на своей странице."),
    ("Security notice to the shop's owners", "Уведомление о безопасности владельцам магазина"),
    ("A payment disputed, to the shop's owners", "Оспоренный платёж, владельцам магазина"),
    (
        "A refund failed after it was accepted, to the shop's owners",
        "Возврат не прошёл после того, как его приняли, владельцам магазина",
    ),
    ("Account locked, with the link that opens it", "Учётная запись заблокирована, со ссылкой для разблокировки"),
];
