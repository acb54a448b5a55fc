//! The Russian of the customers and subscriptions pages.

/// The texts of the customers and subscriptions pages, by their English.
pub const RU: &[(&str, &str)] = &[
    // The customers list.
    ("Export CSV", "Выгрузить CSV"),
    ("New customer", "Новый клиент"),
    ("Search by e-mail or name", "Поиск по эл. почте или имени"),
    (
        "No customers yet. They appear here after their first payment, or when you add one.",
        "Клиентов пока нет. Они появляются здесь после первой оплаты, а ещё их можно добавить вручную.",
    ),
    ("Add a customer", "Добавить клиента"),
    (
        "No customer matches “{}”. Try part of an e-mail or a name.",
        "По запросу «{}» клиентов нет. Попробуйте часть адреса эл. почты или имени.",
    ),
    ("Show all customers", "Показать всех клиентов"),
    ("Country", "Страна"),
    // The customer form.
    ("Edit customer", "Редактирование клиента"),
    (
        "Every detail may change; the customer keeps its id, payments and subscriptions.",
        "Изменить можно любые данные: ID, платежи и подписки клиента сохранятся.",
    ),
    ("IP address", "IP-адрес"),
    (
        "The customer's IPv4 or IPv6 address (required, as in the API).",
        "IPv4- или IPv6-адрес клиента (обязателен, как и в API).",
    ),
    ("First name", "Имя"),
    ("Last name", "Фамилия"),
    ("Address", "Адрес"),
    ("City", "Город"),
    ("ZIP / postal code", "Почтовый индекс"),
    ("Not given", "Не указана"),
    ("State", "Штат"),
    ("Two letters; only for US and CA", "Две буквы; только для США и Канады"),
    ("Phone", "Телефон"),
    ("External id", "Внешний ID"),
    ("Your own id for this customer (optional).", "ID клиента в вашей системе (необязательно)."),
    ("Save customer", "Сохранить клиента"),
    ("Create customer", "Создать клиента"),
    ("Customer saved.", "Клиент сохранён."),
    ("Customer created.", "Клиент создан."),
    // A customer's page.
    ("Id", "ID"),
    ("ZIP", "Индекс"),
    (
        "No payments from this customer yet. Send them a pay link, or start a subscription below.",
        "Платежей от этого клиента пока нет. Отправьте ему ссылку на оплату или оформите подписку ниже.",
    ),
    ("This customer has no subscriptions yet.", "У этого клиента пока нет подписок."),
    (
        "This customer has no subscriptions yet. Start one below.",
        "У этого клиента пока нет подписок. Оформите подписку ниже.",
    ),
    ("To subscribe this customer, first", "Чтобы оформить клиенту подписку, сначала"),
    ("create a plan", "создайте тариф"),
    ("Start a subscription on", "Оформить подписку на тариф"),
    ("{} ({}, test)", "{} ({}, тест)"),
    (
        "The customer gets a link to enter a card; the subscription starts when they do.",
        "Клиент получит ссылку для ввода карты; подписка начнётся, как только он её введёт.",
    ),
    ("Start the subscription", "Оформить подписку"),
    (
        "Subscription started. Send the customer its card link below: it starts once they enter a card.",
        "Подписка оформлена. Отправьте клиенту ссылку для ввода карты ниже: подписка начнётся, как только он \
         введёт карту.",
    ),
    // The subscriptions list and table.
    ("By state", "По статусу"),
    ("all", "все"),
    ("Filtered by plan", "Отбор по тарифу"),
    ("show all", "показать все"),
    ("No subscriptions match this filter.", "Под этот отбор не подходит ни одна подписка."),
    ("Show all subscriptions", "Показать все подписки"),
    (
        "No subscriptions yet. Share a plan's link, or start one from a customer's page.",
        "Подписок пока нет. Поделитесь ссылкой на тариф или оформите подписку на странице клиента.",
    ),
    ("Customer", "Клиент"),
    ("Plan", "Тариф"),
    ("Next charge", "Следующее списание"),
    ("Started", "Оформлена"),
    // A subscription's page.
    ("Subscription {}", "Подписка {}"),
    ("Subscription", "Подписка"),
    ("test", "тест"),
    ("Waiting for the customer's card", "Ждём карту клиента"),
    (
        "Nothing is charged until the customer enters a card at this link. Send it to them at {}; it stays valid until \
         they use it or you cancel.",
        "Ничего не списывается, пока клиент не введёт карту по этой ссылке. Отправьте её клиенту на {}: ссылка \
         действует, пока ею не воспользуются или пока подписку не отменят.",
    ),
    (
        "Nothing is charged until the customer enters a card at this link. Send it to them; it stays valid until they \
         use it or you cancel.",
        "Ничего не списывается, пока клиент не введёт карту по этой ссылке. Отправьте её клиенту: ссылка действует, \
         пока ею не воспользуются или пока подписку не отменят.",
    ),
    ("Card link", "Ссылка для ввода карты"),
    ("Copy", "Копировать"),
    ("none", "нет"),
    ("Paid until", "Оплачена до"),
    ("Paid payments", "Оплаченных платежей"),
    ("Failed attempts", "Неудачных попыток"),
    ("Card", "Карта"),
    ("Cancel reason", "Причина отмены"),
    ("Tracking id", "Номер в вашей системе"),
    ("Test clock", "Тестовые часы"),
    ("Timeline", "История"),
    (
        "Nothing has happened yet. Once the customer enters a card at the link above, each charge and change appears \
         here.",
        "Пока ничего не произошло. Когда клиент введёт карту по ссылке выше, здесь появятся списания и смены статуса.",
    ),
    (
        "Nothing has happened yet. Each charge and change appears here as it happens.",
        "Пока ничего не произошло. Здесь будут появляться списания и смены статуса.",
    ),
    ("Created with its first charge → {}", "Создана с первым списанием → {}"),
    ("Created ({})", "Создана ({})"),
    ("Charge attempt → {}", "Попытка списания → {}"),
    // Cancelling a subscription.
    ("Cancel the subscription", "Отменить подписку"),
    (
        "It ends at the end of its paid period, {}, and will not be charged again. You can still end it now.",
        "Подписка завершится в конце оплаченного периода, {}, новых списаний не будет. Её ещё можно завершить сейчас.",
    ),
    (
        "It ends at the end of its paid period, and will not be charged again. You can still end it now.",
        "Подписка завершится в конце оплаченного периода, новых списаний не будет. Её ещё можно завершить сейчас.",
    ),
    (
        "It will not be charged again. You confirm on the next step.",
        "Новых списаний не будет. Подтверждение — на следующем шаге.",
    ),
    ("When", "Когда"),
    ("At the end of the paid period ({})", "В конце оплаченного периода ({})"),
    ("At the end of the paid period", "В конце оплаченного периода"),
    ("Now", "Сейчас"),
    ("Reason (optional)", "Причина (необязательно)"),
    ("Cancel subscription…", "Отменить подписку…"),
    ("Cancel at the end of the paid period?", "Отменить в конце оплаченного периода?"),
    ("Cancel the subscription now?", "Отменить подписку сейчас?"),
    (
        "It stays active until the end of the period already paid for, {}, and then ends.",
        "Подписка действует до конца уже оплаченного периода, {}, и затем завершается.",
    ),
    ("It is not charged again.", "Новых списаний не будет."),
    ("It ends now, before it was ever charged.", "Подписка завершится сейчас, до первого списания."),
    ("It ends now and is not charged again.", "Подписка завершится сейчас, новых списаний не будет."),
    (
        "Time already paid for is not refunded by this; refund its last payment if you want to.",
        "Уже оплаченное время при этом не возвращается; при желании оформите возврат последнего платежа.",
    ),
    ("Keep it", "Не отменять"),
    ("Keep the subscription", "Сохранить подписку"),
    ("E-mails", "Письма"),
    ("No e-mails to this customer yet.", "Писем этому клиенту пока не было."),
    ("Subject", "Тема"),
    (
        "Withdraw the cancel: it goes on and is charged as before.",
        "Отменить отмену: подписка продолжится, списания — как раньше.",
    ),
    ("The cancel was withdrawn: the subscription goes on.", "Отмена отозвана: подписка продолжается."),
    (
        "The subscription ends at the end of its paid period and will not be charged again.",
        "Подписка завершится в конце оплаченного периода, новых списаний не будет.",
    ),
    ("The subscription was cancelled: it will not be charged again.", "Подписка отменена: новых списаний не будет."),
    ("The subscription has already ended: it is {}", "Подписка уже завершена, её статус: {}"),
    ("Resume the subscription", "Возобновить подписку"),
    ("Paused since {}: nothing is charged or retried.", "Приостановлена с {}: списаний и повторных попыток нет."),
    ("It resumes by itself on {}.", "Возобновится сама {}."),
    ("It stays paused until you resume it.", "Останется приостановленной, пока вы её не возобновите."),
    ("How it goes on", "Как продолжить"),
    ("A new period from now, charged now", "Новый период с этого момента, списание сейчас"),
    (
        "On its old schedule: the next charge at its next period start",
        "По прежнему графику: следующее списание в начале его следующего периода",
    ),
    ("Resume…", "Возобновить…"),
    ("Pause at the end of the period", "Пауза в конце периода"),
    (
        "It pauses at the end of its paid period, {}, uncharged.",
        "Подписка встанет на паузу в конце оплаченного периода, {}, без списания.",
    ),
    ("Do not pause", "Не ставить на паузу"),
    ("Pause the subscription", "Приостановить подписку"),
    (
        "Nothing is charged or retried while it is paused. Time already paid for is not refunded.",
        "Пока подписка на паузе, списаний и повторных попыток нет. Уже оплаченное время не возвращается.",
    ),
    ("Resume on (optional)", "Возобновить (необязательно)"),
    ("How it goes on then", "Как продолжить потом"),
    ("A new period from then, charged then", "Новый период с той даты, списание тогда же"),
    ("On its old schedule", "По прежнему графику"),
    ("Pause", "Приостановить"),
    ("The resume date must be a date such as 2026-12-31.", "Дата возобновления — это дата, например 2026-12-31."),
    (
        "The subscription is paused: nothing is charged until it resumes.",
        "Подписка приостановлена: до возобновления списаний не будет.",
    ),
    (
        "The subscription pauses at the end of its paid period.",
        "Подписка встанет на паузу в конце оплаченного периода.",
    ),
    ("The resume date must be after today.", "Дата возобновления должна быть позже сегодняшней."),
    ("Resume the subscription with a new period?", "Возобновить подписку с новым периодом?"),
    (
        "A new period starts now and {} is charged to the saved card now.",
        "Новый период начнётся сейчас, и с сохранённой карты сейчас спишется {}.",
    ),
    ("The time it was paused is not charged.", "Время на паузе не оплачивается."),
    ("Resume and charge", "Возобновить и списать"),
    ("Keep it paused", "Оставить на паузе"),
    ("The pause was withdrawn: the subscription goes on.", "Пауза отменена: подписка продолжается."),
    (
        "The subscription resumed, but its charge failed: see the timeline.",
        "Подписка возобновлена, но списание не прошло: см. историю.",
    ),
    ("The subscription resumed.", "Подписка возобновлена."),
];

/// Values of the customers and subscriptions pages known only when they run, translated with
/// `t_data`: why a subscription ended (its timeline, its cancel reason) and the errors these
/// pages answer.
pub const DATA: &[(&str, &str)] = &[
    ("cancelled at the end of the paid period", "отменена в конце оплаченного периода"),
    ("billing cycles paid", "все периоды оплачены"),
    ("charged before the cancel took effect", "списание прошло до того, как отмена вступила в силу"),
    ("first payment failed", "первый платёж не прошёл"),
    ("payment attempts exhausted", "попытки списания исчерпаны"),
    ("paused by the merchant", "приостановлена магазином"),
    ("paused at the end of the paid period", "приостановлена в конце оплаченного периода"),
    ("resumed with a new period", "возобновлена с новым периодом"),
    ("resumed on its old schedule", "возобновлена по прежнему графику"),
    ("resumed on its date with a new period", "возобновлена в назначенный день с новым периодом"),
    ("resumed on its date on its old schedule", "возобновлена в назначенный день по прежнему графику"),
    ("The subscription is not paused", "Подписка не на паузе"),
    (
        "A charge of the subscription is in flight: try again in a moment",
        "Сейчас идёт списание по подписке: повторите через минуту",
    ),
    ("The subscription changed meanwhile: it is now {}", "Подписка тем временем изменилась, её статус: {}"),
    (
        "Only a subscription in its trial, a paid period or its retries can pause; cancel it instead",
        "Приостановить можно только подписку в пробном или оплаченном периоде или в повторных попытках; отмените её",
    ),
    (
        "The subscription ends with its period: withdraw that cancel first",
        "Подписка завершится с концом периода: сначала отзовите отмену",
    ),
    (
        "Only a subscription in its trial or a paid period can pause from its end; pause it now instead",
        "Поставить на паузу с конца периода можно только подписку в пробном или оплаченном периоде; приостановите её сейчас",
    ),
    ("Customer not found", "Клиент не найден"),
    ("Subscription not found", "Подписка не найдена"),
    (
        "Only a subscription in its trial or a paid period can end with it; cancel it now instead",
        "Завершить в конце периода можно только подписку в пробном или оплаченном периоде; отмените её сейчас",
    ),
];
