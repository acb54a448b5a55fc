//! The Russian of the revenue figures: MRR, its movements and their rates.

/// The texts of the revenue pages, by their English.
pub const RU: &[(&str, &str)] = &[
    ("Revenue", "Выручка"),
    (
        "Monthly recurring revenue (MRR): what the subscriptions' plans bring in a month, net of tax, each currency apart. A trial counts from its first paid period, a paused subscription apart, a cancelled one until it ends.",
        "Ежемесячная регулярная выручка (MRR): сколько тарифы подписок приносят в месяц, без налога, по каждой валюте отдельно. Пробный период считается с первого оплаченного периода, приостановленная подписка — отдельно, отменённая — до своего окончания.",
    ),
    ("Which figures", "Какие показатели"),
    ("By", "По"),
    ("MRR", "MRR"),
    ("Per subscriber", "На подписчика"),
    ("Paused MRR", "MRR на паузе"),
    ("As of the end of {}.", "На конец дня {}."),
    ("MRR over time", "MRR по времени"),
    ("Period", "Период"),
    ("Subscriber churn", "Отток подписчиков"),
    ("Revenue churn", "Отток выручки"),
    ("Trial conversion", "Конверсия пробных"),
    ("MRR per subscriber and month (CSV)", "MRR по подписчикам и месяцам (CSV)"),
    ("{} ({} of {})", "{} ({} из {})"),
    ("What moved MRR", "Что изменило MRR"),
    ("Movements", "Движения"),
    ("Net change", "Итоговое изменение"),
    ("MRR movements", "Движения MRR"),
    ("Back to the figures", "Назад к показателям"),
    ("No movements in these days.", "В эти дни движений не было."),
    (
        "No subscription counted in MRR in these days. A subscription counts from its first paid period of its plan's price.",
        "В эти дни ни одна подписка не учитывалась в MRR. Подписка учитывается с первого оплаченного периода по цене тарифа.",
    ),
    ("Movement", "Движение"),
    ("MRR in {} from {} to {}, up to {}", "MRR в {} с {} по {}, до {}"),
    (
        "MRR's change in {} from {} to {}: above the line it grew, below it shrank",
        "Изменение MRR в {} с {} по {}: выше линии — рост, ниже — снижение",
    ),
    ("movement:new", "новые"),
    ("movement:reactivation", "возвраты"),
    ("movement:expansion", "расширение"),
    ("movement:contraction", "сокращение"),
    ("movement:churn", "отток"),
    ("movement:pause", "пауза"),
    ("movement:resume", "возобновление"),
];

/// The problems a query for figures can have, as the pages show them.
pub const DATA: &[(&str, &str)] = &[
    ("currency", "Валюта"),
    ("from", "Дата с"),
    ("to", "Дата по"),
    ("interval", "Интервал"),
    ("kind", "Вид движения"),
    ("is required: figures are per currency", "обязательна: показатели считаются по валюте"),
    ("is not a known currency", "такой валюты нет"),
    ("must be day or month", "должен быть day или month"),
    ("must be a date: YYYY-MM-DD", "должна быть датой: ГГГГ-ММ-ДД"),
    ("must be a date from 1970 to 9999", "должна быть датой с 1970 по 9999 год"),
    ("must not be after to", "не может быть позже даты окончания"),
    ("at most 1000 periods of the interval at once", "не больше 1000 периодов за раз"),
    ("is not a kind of movement", "такого вида движения нет"),
];
