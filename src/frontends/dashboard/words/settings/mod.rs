//! The Russian of the settings pages, a file per page: the shop, the team (users, roles,
//! two-step login, sessions, the audit trail), webhooks, the processor, e-mails.

mod api_keys;
mod mails;
mod processor;
mod shop;
mod team;
mod webhooks;

/// The texts of the settings pages, by their English.
pub const RU: [&[(&str, &str)]; 6] = [shop::RU, team::RU, webhooks::RU, api_keys::RU, processor::RU, mails::RU];

/// Values of these pages known only when they run, translated with `t_data` (or `n`, `rule`):
/// counts, the messages of their errors, why an endpoint was disabled, why an attempt failed.
pub const DATA: &[(&str, &str)] = &[
    ("must be a whole number of days from 1 to 60", "должно быть целым числом дней от 1 до 60"),
    ("Mail kind not found", "Вид письма не найден"),
    ("API key not found", "API-ключ не найден"),
    ("read", "чтение"),
    ("write", "запись"),
    ("mail:queued", "в очереди"),
    ("mail:sent", "отправлено"),
    ("mail:failed", "не отправлено"),
    ("mail:skipped", "пропущено"),
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
    ("Kind", "Провайдер"),
    ("Card entry", "Ввод карты"),
    ("Gateway url", "URL шлюза"),
    ("Checkout url", "URL страницы оплаты"),
    ("field:Test", "Тестовый аккаунт"),
    ("field:Live", "Боевой аккаунт"),
    ("Test shop id", "ID тестового магазина"),
    ("Test secret key", "Тестовый секретный ключ"),
    ("Test public key", "Тестовый публичный ключ"),
    ("Live shop id", "ID боевого магазина"),
    ("Live secret key", "Боевой секретный ключ"),
    ("Live public key", "Боевой публичный ключ"),
    ("is not an absolute http or https URL without a query", "не является полным URL с http или https без параметров"),
    (
        "must use https: the shop's secret key travels with every request",
        "нужен https: секретный ключ уходит с каждым запросом",
    ),
    (
        "is not an RSA public key: paste the key exactly as the processor's back office shows it",
        "не является публичным ключом RSA: вставьте ключ точно так, как его показывает личный кабинет провайдера",
    ),
    (
        "can't be blank: give the test account, the live one, or both",
        "заполните: нужен тестовый аккаунт, боевой или оба",
    ),
];
