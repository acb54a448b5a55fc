//! The Russian of the products and plans pages.

/// The texts of the products and plans pages, by their English.
pub const RU: &[(&str, &str)] = &[
    // The products list.
    ("Archived products", "Товары в архиве"),
    ("New product", "Новый товар"),
    ("Search by name", "Поиск по названию"),
    ("Archived products take no payments.", "Товары в архиве не принимают оплату."),
    ("Back to the products on sale", "Назад к товарам в продаже"),
    (
        "No archived products. Archiving a product turns its link off without losing its payments.",
        "В архиве нет товаров. Если отправить товар в архив, его ссылка перестанет принимать оплату, а платежи \
         сохранятся.",
    ),
    ("No archived product matches “{}”.", "В архиве нет товаров по запросу «{}»."),
    ("Show all archived products", "Показать все товары в архиве"),
    (
        "No products yet. Create one to get a pay link you can share.",
        "Товаров пока нет. Создайте товар, чтобы получить ссылку на оплату для клиентов.",
    ),
    ("Create a product", "Создать товар"),
    ("No products yet.", "Товаров пока нет."),
    ("No product matches “{}”. Try part of its name.", "По запросу «{}» товаров нет. Попробуйте часть названия."),
    ("Show all products", "Показать все товары"),
    ("Stock", "Остаток"),
    ("Expired", "Срок истёк"),
    ("Sold out", "Распродан"),
    ("On sale", "В продаже"),
    // The product form.
    ("Edit product", "Редактирование товара"),
    ("In the currency's units, e.g. 9.90", "В единицах валюты, например 9,90"),
    ("Unlimited (infinite)", "Без ограничений"),
    (
        "How many are left to sell; each payment takes one. Units sold while you edit stay sold.",
        "Сколько единиц осталось в продаже; каждый платёж забирает одну. Проданное, пока вы редактируете, остаётся \
         проданным.",
    ),
    ("Availability", "Срок продажи"),
    ("Never expires (immortal)", "Бессрочно"),
    ("Expires at", "Продаётся до"),
    ("In your shop's time zone.", "В часовом поясе магазина."),
    ("Customer details to ask for", "Какие данные запросить у клиента"),
    ("Customer details to ask for besides the e-mail", "Какие данные запросить у клиента, кроме электронной почты"),
    ("Tax", "Налог"),
    ("Tax rate", "Ставка налога"),
    ("No tax", "Без налога"),
    ("The price", "Цена"),
    ("includes the tax", "включает налог"),
    ("has the tax added", "без налога, налог добавляется"),
    (
        "The rate its invoices show; a rate the law changes can be chosen here later.",
        "Ставка, которую покажут счета; если закон изменит ставку, её можно будет выбрать здесь.",
    ),
    (
        "With the tax added, customers pay the price and the tax; a business in another EU country with a VAT ID \
         pays no VAT.",
        "Если налог добавляется, клиент платит цену и налог; компания из другой страны ЕС с номером плательщика НДС \
         платит без НДС.",
    ),
    ("Page language", "Язык страницы оплаты"),
    ("Return URL", "URL возврата"),
    (
        "Where customers go after paying (optional; else your shop URL).",
        "Куда клиент попадёт после оплаты (необязательно; иначе — на URL магазина).",
    ),
    ("Notification URL", "URL уведомлений"),
    (
        "Where bePaid notifications of its payments go (optional; else the default in settings).",
        "Куда отправлять уведомления bePaid о его платежах (необязательно; иначе — URL по умолчанию из настроек).",
    ),
    (
        "Test mode: only test cards are accepted and no money moves (leave unticked to take real payments)",
        "Тестовый режим: принимаются только тестовые карты, деньги не списываются (не отмечайте, чтобы принимать \
         реальные платежи)",
    ),
    ("Save product", "Сохранить товар"),
    ("Create product", "Создать товар"),
    ("Product created. Share its pay link with your customers.", "Товар создан. Отправьте клиентам ссылку на оплату."),
    ("Product saved.", "Товар сохранён."),
    // A product's page.
    ("archived", "в архиве"),
    ("{} left", "{} шт."),
    ("unlimited", "без ограничений"),
    ("Expires", "Продаётся до"),
    ("never", "бессрочно"),
    ("Asks for", "Запрашивает"),
    ("card only", "только данные карты"),
    ("your shop URL", "URL магазина"),
    ("Preview the payment page", "Посмотреть страницу оплаты"),
    ("Order confirmation page: {}", "Страница подтверждения заказа: {}"),
    ("All payments of this product", "Все платежи за этот товар"),
    ("Archived", "В архиве"),
    (
        "Pages are written in English and Russian; in other languages customers read English.",
        "Страницы написаны на английском и русском; на других языках покупатели видят английский текст.",
    ),
    (
        "It takes no payments, and its link says so. Restore it to sell it again.",
        "Товар не принимает оплату, и его ссылка сообщает об этом. Восстановите его, чтобы снова продавать.",
    ),
    ("Restore it", "Восстановить"),
    (
        "Stop selling it: its link then tells customers it is no longer available. You can restore it later; its \
         payments stay.",
        "Снимите товар с продажи: его ссылка будет сообщать клиентам, что он больше недоступен. Позже его можно \
         восстановить; платежи сохранятся.",
    ),
    (
        "Product archived: its pay link now tells customers it is no longer available.",
        "Товар в архиве: его ссылка на оплату теперь сообщает клиентам, что он больше недоступен.",
    ),
    ("Product restored: its pay link takes payments again.", "Товар восстановлен: его ссылка снова принимает оплату."),
    // The pay link of a product or plan.
    ("Pay link", "Ссылка на оплату"),
    (
        "Archived: customers who open this link are told it is no longer available, and nothing can be paid there.",
        "В архиве: клиенты, открывшие эту ссылку, видят, что предложение больше недоступно, и оплатить там ничего \
         нельзя.",
    ),
    (
        "This is live, but this paydesk instance takes no live payments yet: the link tells customers that payments \
         are not available. Make it a test product or plan to try it with test cards, or ask your operator to \
         connect an acquirer.",
        "Это боевой режим, но этот экземпляр paydesk пока не принимает реальные платежи: ссылка сообщает клиентам, \
         что оплата недоступна. Включите тестовый режим, чтобы проверить оплату тестовыми картами, или попросите \
         оператора подключить эквайера.",
    ),
    ("QR code of the pay link", "QR-код ссылки на оплату"),
    // The plans list.
    ("Archived plans", "Тарифы в архиве"),
    ("New plan", "Новый тариф"),
    ("Search by title", "Поиск по названию"),
    (
        "Archived plans take no new subscriptions; those already running go on.",
        "Тарифы в архиве не принимают новые подписки; уже оформленные продолжают действовать.",
    ),
    ("Back to the plans on sale", "Назад к действующим тарифам"),
    (
        "No archived plans. Archiving a plan stops new subscriptions while those already running go on.",
        "В архиве нет тарифов. Если отправить тариф в архив, новые подписки на него прекратятся, а уже оформленные \
         продолжат действовать.",
    ),
    ("No archived plan matches “{}”.", "В архиве нет тарифов по запросу «{}»."),
    ("Show all archived plans", "Показать все тарифы в архиве"),
    (
        "No plans yet. Create one to bill customers on a schedule through a link you can share.",
        "Тарифов пока нет. Создайте тариф: клиенты будут оформлять подписку по его ссылке и платить по расписанию.",
    ),
    ("Create a plan", "Создать тариф"),
    ("No plans yet.", "Тарифов пока нет."),
    ("No plan matches “{}”. Try part of its title.", "По запросу «{}» тарифов нет. Попробуйте часть названия."),
    ("Show all plans", "Показать все тарифы"),
    ("Trial", "Пробный период"),
    ("{} hour|{} hours", "{} час|{} часа|{} часов"),
    ("{} month|{} months", "{} месяц|{} месяца|{} месяцев"),
    // The plan forms.
    ("Price and interval", "Цена и периодичность"),
    ("e.g. 9.90", "например 9,90"),
    ("Every", "Периодичность"),
    ("Unit", "Единица"),
    ("Trial (optional)", "Пробный период (необязательно)"),
    ("Trial price", "Цена"),
    ("0 for a free trial", "0 — бесплатный пробный период"),
    ("Lasts", "Длительность"),
    (
        "The trial payment counts as the first payment (failed renewals are then retried)",
        "Платёж за пробный период считается первым платежом (тогда неудачные продления повторяются)",
    ),
    ("Billing", "Списания"),
    ("Bill until cancelled (infinite)", "Списывать до отмены"),
    ("Number of payments", "Количество платежей"),
    (
        "Used when not infinite; the trial does not count.",
        "Учитывается, если списания не бессрочные; пробный период не считается.",
    ),
    ("Payment attempts", "Попытки списания"),
    (
        "Tries per payment before the subscription ends (default 3).",
        "Сколько раз пытаться списать платёж, прежде чем подписка завершится (по умолчанию 3).",
    ),
    ("No charges at night (20:00–08:00)", "Не списывать ночью (20:00–08:00)"),
    ("Create plan", "Создать тариф"),
    (
        "Plan created. Share its pay link to take subscriptions.",
        "Тариф создан. Отправьте ссылку на оплату, чтобы оформлять подписки.",
    ),
    ("Edit plan", "Редактирование тарифа"),
    (
        "Only the title, the page, and the tax rate can change: the price, whether it includes the tax, the \
         schedule, trial and limits are what running subscriptions agreed to.",
        "Изменить можно только название, страницу оплаты и ставку налога: на цену (с налогом или без), расписание, \
         пробный период и ограничения уже согласились действующие подписки.",
    ),
    ("To offer other terms,", "Чтобы предложить другие условия,"),
    ("create a new plan", "создайте новый тариф"),
    ("and archive this one.", "и отправьте этот в архив."),
    ("Save plan", "Сохранить тариф"),
    ("Plan saved.", "Тариф сохранён."),
    // A plan's page and its schedule.
    ("Open the subscription page", "Открыть страницу подписки"),
    ("All subscriptions of this plan", "Все подписки на этот тариф"),
    (
        "It takes no new subscriptions, and its page says so; subscriptions already running go on. Restore it to \
         offer it again.",
        "Тариф не принимает новые подписки, и его страница сообщает об этом; уже оформленные подписки продолжают \
         действовать. Восстановите его, чтобы снова предлагать.",
    ),
    (
        "Stop offering it: its page then takes no new subscriptions, while those already running go on. You can \
         restore it later.",
        "Прекратите предлагать тариф: его страница перестанет принимать новые подписки, а уже оформленные продолжат \
         действовать. Позже его можно восстановить.",
    ),
    (
        "Plan archived: its page takes no new subscriptions; those running go on.",
        "Тариф в архиве: его страница не принимает новые подписки; действующие продолжаются.",
    ),
    (
        "Plan restored: its page takes subscriptions again.",
        "Тариф восстановлен: его страница снова принимает подписки.",
    ),
    ("{}-hour|{}-hour", "{} час|{} часа|{} часов"),
    ("{}-day|{}-day", "{} день|{} дня|{} дней"),
    ("{}-month|{}-month", "{} месяц|{} месяца|{} месяцев"),
    ("{} after a free {} trial", "{} после бесплатного пробного периода в {}"),
    ("{} after a {} trial for {}", "{} после пробного периода в {} за {}"),
    ("{} (counted as the first payment)", "{} (засчитывается как первый платёж)"),
    ("for {} payment|for {} payments", "всего {} платёж|всего {} платежа|всего {} платежей"),
    ("until cancelled", "до отмены"),
    (
        "A failed payment is not retried: the subscription ends.",
        "Неудачное списание не повторяется: подписка завершается.",
    ),
    ("up to {} attempt|up to {} attempts", "до {} попытки|до {} попыток|до {} попыток"),
    (
        "Failed payments are retried {} in all (a declined card the next day at {}, a processing error at the start \
         of each following hour), then the subscription ends.",
        "Неудачное списание повторяется: всего {} (после отказа по карте — на следующий день в {}, после ошибки \
         обработки — в начале каждого следующего часа), затем подписка завершается.",
    ),
    ("No charges between 20:00 and 08:00: they wait for the morning.", "С 20:00 до 08:00 списаний нет: они ждут утра."),
    ("Coupons", "Промокоды"),
    (
        "A coupon takes a percent or an amount off a subscription's plan payments. Customers type its code on a plan's page (the field shows while a coupon can be redeemed); you can also give one to a subscription on its page.",
        "Промокод даёт скидку в процентах или на сумму с платежей подписки по тарифу. Покупатели вводят код на странице тарифа (поле видно, пока промокод можно использовать); его можно также применить к подписке на её странице.",
    ),
    ("No coupons yet.", "Промокодов пока нет."),
    ("Code", "Код"),
    ("Off", "Скидка"),
    ("Redeemed", "Использован"),
    ("Until", "До"),
    ("Archive {}", "Архивировать {}"),
    ("Make a coupon", "Создать промокод"),
    (
        "Letters, digits, - and _; customers may type it in any case.",
        "Буквы, цифры, - и _; покупатели могут вводить его в любом регистре.",
    ),
    ("Name (optional)", "Название (необязательно)"),
    ("What it takes off", "Какая скидка"),
    ("A percent", "Процент"),
    ("An amount", "Сумма"),
    ("Percent off (1–100)", "Скидка в процентах (1–100)"),
    ("Amount off", "Скидка суммой"),
    ("Currency of the amount", "Валюта суммы"),
    (
        "ISO 4217, such as EUR: it applies to plans in that currency.",
        "Код ISO 4217, например EUR: действует для тарифов в этой валюте.",
    ),
    ("Payments (when repeating)", "Платежей (для repeating)"),
    ("Most redemptions (optional)", "Сколько раз можно использовать (необязательно)"),
    ("Last day to redeem (optional)", "Последний день использования (необязательно)"),
    ("Plans (none ticked: every plan)", "Тарифы (ничего не отмечено: все тарифы)"),
    ("Test mode (for test plans)", "Тестовый режим (для тестовых тарифов)"),
    ("Make coupon", "Создать промокод"),
    ("{} payments", "платежей: {}"),
    ("Coupon {} made.", "Промокод {} создан."),
    ("Coupon {} archived: it takes no more redemptions.", "Промокод {} в архиве: больше его не применить."),
    (
        "Coupon {} applied: its discount comes off the next plan payments.",
        "Промокод {} применён: скидка будет на следующих платежах по тарифу.",
    ),
    ("The coupon was not applied: {}", "Промокод не применён: {}"),
    (
        "The discount was removed: the next payments are at the plan's price.",
        "Скидка снята: следующие платежи по цене тарифа.",
    ),
    ("Discount", "Скидка"),
    ("Coupon {}: {} off the next {} plan payments.", "Промокод {}: скидка {} на следующие платежи по тарифу ({})."),
    ("Coupon {}: {} off every plan payment.", "Промокод {}: скидка {} на каждый платёж по тарифу."),
    ("Remove the discount", "Снять скидку"),
    ("Coupon code", "Промокод"),
    ("Apply the coupon", "Применить промокод"),
];

/// Values of the products pages known only when they run, translated with `rule`: why a saved
/// product's stock was refused (the API answers the same).
pub const DATA: &[(&str, &str)] = &[
    (
        "Customers bought units while the product was being changed: only {} are left, fewer than the change removes",
        "Пока вы редактировали товар, его покупали: осталось {} шт. — меньше, чем вы хотите списать",
    ),
    (
        "The product's stock was changed by another request meanwhile; read it again",
        "Остаток товара тем временем изменил другой запрос; загрузите товар заново",
    ),
];
