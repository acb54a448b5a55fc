//! Mails to the shop's own users, in the language each reads the dashboard in: a security
//! notice of a change to the shop's access or money, a new dispute and a refund that failed
//! after it was accepted, to every owner; and
//! the link that opens an account wrong passwords locked, to its user. They come from the instance's address and
//! cannot be turned off.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::letters::Letter;
use super::words::fill;
use crate::db::entities::{mails, shops};
use crate::db::mails::Rendered;
use crate::db::{self};
use crate::domain::audit::{ActorKind, Record};
use crate::domain::vocab::DashboardLanguage;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// Every text of the staff mails in one language; `{name}` marks a value.
struct StaffTexts {
    lang: &'static str,
    why: &'static str,
    footer: &'static str,
    locked_subject: &'static str,
    locked_heading: &'static str,
    locked_body: &'static str,
    locked_action: &'static str,
    locked_after: &'static str,
    notice_subject: &'static str,
    notice_body: &'static str,
    notice_action: &'static str,
    notice_after: &'static str,
    who: &'static str,
    what: &'static str,
    when: &'static str,
    from: &'static str,
    api_key: &'static str,
    operator: &'static str,
    system: &'static str,
    /// What each notified action did, by its name.
    actions: [(&'static str, &'static str); 20],
    dispute_subject: &'static str,
    dispute_heading: &'static str,
    dispute_body: &'static str,
    dispute_action: &'static str,
    dispute_after: &'static str,
    dispute_back_office: &'static str,
    dispute_canceled: &'static str,
    payment: &'static str,
    reason: &'static str,
    due: &'static str,
    refund_subject: &'static str,
    refund_heading: &'static str,
    refund_body: &'static str,
    refund_action: &'static str,
    refund_after: &'static str,
}

const EN: StaffTexts = StaffTexts {
    lang: "en",
    why: "You get this mail because you have an account with {shop} on paydesk.",
    footer: "Security mails cannot be turned off.",
    locked_subject: "{shop}: your account is locked",
    locked_heading: "Your account is locked",
    locked_body: "Ten wrong passwords were typed for {email}, so nobody can sign in with it until {until}, not even with the right password.",
    locked_action: "Unlock my account now",
    locked_after: "If those were not your attempts, someone knows your address and is guessing your password: unlock your account, sign in and choose a new, long password. Your sessions and your two-step login were not touched.",
    notice_subject: "{shop}: {what}",
    notice_body: "This mail tells every owner of {shop} of a change that can hand its money or access to someone else.",
    notice_action: "Open the audit trail",
    notice_after: "If you do not know of this change, sign in, look at the team, the API keys, the webhooks and the processor, and change your password.",
    who: "By",
    what: "Of",
    when: "When",
    from: "From",
    api_key: "the API key",
    operator: "the operator, on the command line",
    system: "paydesk",
    actions: [
        ("user.created", "a user was added on the command line"),
        ("user.invited", "a user was invited"),
        ("user.joined", "a user joined the team"),
        ("user.removed", "a user was removed"),
        ("user.role_changed", "a user's role changed"),
        ("user.locked", "an account was locked after wrong passwords"),
        ("api_key.rotated", "the API key was rotated"),
        ("api_key.created", "an API key was made"),
        ("api_key.updated", "an API key's name, permissions or networks changed"),
        ("api_key.rolled", "an API key was rolled"),
        ("api_key.revoked", "an API key was revoked"),
        ("api_key.expiring", "an API key stops working within 7 days"),
        ("processor.updated", "the processor's settings changed"),
        ("webhook_endpoint.created", "a webhook endpoint was added"),
        ("webhook_endpoint.updated", "a webhook endpoint was changed"),
        ("webhook_endpoint.deleted", "a webhook endpoint was deleted"),
        ("webhook_endpoint.secret_rotated", "a webhook endpoint's secret was rolled"),
        ("two_step.disabled", "two-step login was turned off"),
        ("two_step.reset", "a user's two-step login was reset"),
        ("shop.updated", "the shop's addresses or security settings changed"),
    ],
    dispute_subject: "{shop}: a payment of {amount} was disputed",
    dispute_heading: "A payment was disputed",
    dispute_body: "The cardholder's bank disputed a payment of {amount} to {shop}. Until the dispute is decided, the bank keeps the money, and the processor may charge a dispute fee.",
    dispute_action: "Open the dispute",
    dispute_after: "Answer with evidence before the due date, or accept the dispute if the cardholder is right. An unanswered dispute is lost.",
    dispute_back_office: "This processor takes no answer through paydesk: to contest the chargeback, respond in the processor's back office.",
    dispute_canceled: "paydesk cancelled the subscriptions paid with this card, so that it is not charged again.",
    payment: "Payment",
    reason: "Reason",
    due: "Answer by",
    refund_subject: "{shop}: a refund of {amount} failed",
    refund_heading: "A refund failed after it was accepted",
    refund_body: "The payment processor accepted a refund of {amount} and then could not make it: the customer did not get the money back.",
    refund_action: "Open the payment",
    refund_after: "The amount can be refunded again from the payment's page, or given back another way. Tell the customer.",
};

const RU: StaffTexts = StaffTexts {
    lang: "ru",
    why: "Вы получили это письмо, потому что у вас есть учётная запись магазина {shop} в paydesk.",
    footer: "Письма о безопасности отключить нельзя.",
    locked_subject: "{shop}: ваша учётная запись заблокирована",
    locked_heading: "Ваша учётная запись заблокирована",
    locked_body: "Для {email} десять раз ввели неверный пароль, поэтому до {until} войти с ней нельзя, даже с верным паролем.",
    locked_action: "Разблокировать сейчас",
    locked_after: "Если это были не вы, кто-то знает ваш адрес и подбирает пароль: разблокируйте учётную запись, войдите и задайте новый длинный пароль. Ваши сеансы и двухэтапный вход не затронуты.",
    notice_subject: "{shop}: {what}",
    notice_body: "Это письмо получают все владельцы магазина {shop}, когда меняется то, что может передать его деньги или доступ постороннему.",
    notice_action: "Открыть журнал аудита",
    notice_after: "Если вы не знаете об этом изменении, войдите, проверьте команду, API-ключи, вебхуки и процессинг и смените пароль.",
    who: "Кто",
    what: "Что",
    when: "Когда",
    from: "Откуда",
    api_key: "API-ключ",
    operator: "оператор, из командной строки",
    system: "paydesk",
    actions: [
        ("user.created", "пользователь добавлен из командной строки"),
        ("user.invited", "приглашён пользователь"),
        ("user.joined", "в команду вошёл пользователь"),
        ("user.removed", "удалён пользователь"),
        ("user.role_changed", "изменена роль пользователя"),
        ("user.locked", "учётная запись заблокирована после неверных паролей"),
        ("api_key.rotated", "API-ключ заменён"),
        ("api_key.created", "создан API-ключ"),
        ("api_key.updated", "изменены имя, права или сети API-ключа"),
        ("api_key.rolled", "API-ключ заменён новым"),
        ("api_key.revoked", "API-ключ отозван"),
        ("api_key.expiring", "API-ключ перестанет работать в течение 7 дней"),
        ("processor.updated", "изменены настройки процессинга"),
        ("webhook_endpoint.created", "добавлен адрес вебхуков"),
        ("webhook_endpoint.updated", "изменён адрес вебхуков"),
        ("webhook_endpoint.deleted", "удалён адрес вебхуков"),
        ("webhook_endpoint.secret_rotated", "заменён секрет адреса вебхуков"),
        ("two_step.disabled", "двухэтапный вход выключен"),
        ("two_step.reset", "двухэтапный вход пользователя сброшен"),
        ("shop.updated", "изменены адреса или настройки безопасности магазина"),
    ],
    dispute_subject: "{shop}: оспорен платёж на {amount}",
    dispute_heading: "Платёж оспорен",
    dispute_body: "Банк держателя карты оспорил платёж на {amount} в магазин {shop}. Пока спор не решён, деньги остаются у банка, а процессинг может взять комиссию за спор.",
    dispute_action: "Открыть спор",
    dispute_after: "Ответьте доказательствами до срока или примите спор, если держатель карты прав. Спор без ответа проигрывается.",
    dispute_back_office: "Этот процессинг не принимает ответы через paydesk: чтобы оспорить чарджбэк, ответьте в личном кабинете процессинга.",
    dispute_canceled: "paydesk отменил подписки, оплачиваемые этой картой, чтобы с неё больше не списывать.",
    payment: "Платёж",
    reason: "Причина",
    due: "Ответить до",
    refund_subject: "{shop}: возврат {amount} не прошёл",
    refund_heading: "Возврат не прошёл после того, как его приняли",
    refund_body: "Процессинг принял возврат {amount}, но потом не смог его провести: клиент деньги не получил.",
    refund_action: "Открыть платёж",
    refund_after: "Сумму можно вернуть снова со страницы платежа или вернуть деньги другим способом. Сообщите клиенту.",
};

fn texts(language: DashboardLanguage) -> &'static StaffTexts {
    match language {
        DashboardLanguage::Ru => &RU,
        DashboardLanguage::En => &EN,
    }
}

fn letter(t: &StaffTexts, shop: &shops::Model, subject: String, heading: String) -> Letter {
    let values = [("shop", shop.name.as_str())];
    Letter {
        lang: t.lang,
        subject,
        shop_name: shop.name.clone(),
        test_note: None,
        heading,
        paragraphs: Vec::new(),
        facts: Vec::new(),
        action: None,
        links: Vec::new(),
        after: Vec::new(),
        manage: "",
        manage_url: None,
        why: fill(t.why, &values),
        footer: t.footer.to_string(),
    }
}

fn moment(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// The mail that tells a user their account is locked until `until`, with the link (`url`)
/// that opens it at once.
pub fn account_locked(
    shop: &shops::Model,
    language: DashboardLanguage,
    email: &str,
    until: DateTime<Utc>,
    url: &str,
) -> Letter {
    let t = texts(language);
    let values = [("shop", shop.name.as_str()), ("email", email), ("until", &moment(until))];
    let mut letter = letter(t, shop, fill(t.locked_subject, &values), t.locked_heading.to_string());
    letter.paragraphs.push(fill(t.locked_body, &values));
    letter.action = Some((t.locked_action.to_string(), url.to_string()));
    letter.after.push(t.locked_after.to_string());
    letter
}

/// The shop a staff mail is from, and the owner it goes to with the language they read;
/// `Err(why)` when the owner is no longer a user of the shop.
async fn owner(
    state: &AppState,
    mail: &mails::Model,
) -> Result<Result<(std::sync::Arc<shops::Model>, String, DashboardLanguage), String>, AppError> {
    let shop = crate::services::shops::find(state, mail.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
    let to = mail.to_address.clone().unwrap_or_default();
    match db::users::by_email(&state.db, &to).await? {
        Some(user) if user.shop_id == shop.id => Ok(Ok((shop, to, user.language))),
        _ => Ok(Err("the owner is no longer a user of the shop".into())),
    }
}

/// A staff mail's letter, written to `to` from the instance's address.
fn written(state: &AppState, mail: &mails::Model, to: String, letter: Letter) -> Result<Rendered, AppError> {
    let (html_body, text_body) = letter.render()?;
    Ok(Rendered {
        customer_id: None,
        message_id: Some(crate::domain::mail::message_id(&mail.id, &state.config.mail_from)),
        to_address: to,
        language: letter.lang.to_string(),
        subject: letter.subject,
        text_body,
        html_body,
    })
}

/// Money as an owner reading `language` writes it.
fn money(amount: i64, currency: crate::domain::currency::Currency, language: DashboardLanguage) -> String {
    let locale = match language {
        DashboardLanguage::Ru => crate::domain::vocab::Language::Ru,
        DashboardLanguage::En => crate::domain::vocab::Language::En,
    };
    crate::web::locale::money(amount, currency, locale)
}

/// Renders a security notice queued for one owner: what its audit record tells, in the
/// owner's language; `Ok(Err(why))` when there is nothing to send any more.
pub async fn notice(state: &AppState, mail: &mails::Model) -> Result<Result<Rendered, String>, AppError> {
    let Some(record) = db::audit::find(&state.db, mail.shop_id, &mail.object_id).await? else {
        return Ok(Err("the audit record is gone".into()));
    };
    let (shop, to, language) = match owner(state, mail).await? {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    // A user is named by their address, which the owner knows them by (a removed user's is
    // in the record, and in the one of their invitation).
    let object = match &record.entry.object {
        Some((kind, id)) if kind == "user" => match db::users::by_id(&state.db, id).await? {
            Some(user) => Some(user.email),
            None => {
                let first = db::audit::first_on(&state.db, shop.id, id).await?;
                let email = [Some(record.clone()), first].into_iter().flatten().find_map(|r| {
                    let change = r.entry.changes.into_iter().find(|c| c.field == "email")?;
                    [change.before, change.after].into_iter().find_map(|v| v.as_str().map(str::to_string))
                });
                Some(email.unwrap_or_else(|| id.clone()))
            }
        },
        Some((kind, id)) => Some(format!("{kind} {id}")),
        None => None,
    };
    let mut letter = notice_letter(texts(language), &shop, &record, &state.config.base_url);
    if let Some(object) = object {
        letter.facts.insert(1, (texts(language).what.to_string(), object));
    }
    Ok(Ok(written(state, mail, to, letter)?))
}

fn notice_letter(t: &StaffTexts, shop: &shops::Model, record: &Record, base_url: &str) -> Letter {
    let entry = &record.entry;
    let what = t.actions.iter().find(|(action, _)| *action == entry.action).map_or(entry.action.as_str(), |(_, w)| w);
    let values = [("shop", shop.name.as_str()), ("what", what)];
    let mut chars = what.chars();
    let heading = chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default();
    let mut letter = letter(t, shop, fill(t.notice_subject, &values), heading);
    letter.paragraphs.push(fill(t.notice_body, &values));
    let who = match entry.actor.kind {
        ActorKind::ApiKey => match &entry.actor.label {
            Some(label) => format!("{} {label}", t.api_key),
            None => t.api_key.to_string(),
        },
        ActorKind::Operator => t.operator.to_string(),
        ActorKind::System => t.system.to_string(),
        _ => {
            let label = entry.actor.label.clone().or(entry.actor.id.clone()).unwrap_or_default();
            match entry.actor.role {
                Some(role) => format!("{label} ({role})"),
                None => label,
            }
        }
    };
    letter.facts.push((t.who.to_string(), who));
    letter.facts.push((t.when.to_string(), moment(record.at)));
    if let Some(address) = &entry.origin.address {
        letter.facts.push((t.from.to_string(), address.clone()));
    }
    // Not the browser's name: whoever made the request wrote it, and a notice must not carry
    // a stranger's words (the trail keeps it).
    for change in &entry.changes {
        letter.facts.push((change.field.clone(), format!("{} → {}", shown(&change.before), shown(&change.after))));
    }
    letter.action = Some((t.notice_action.to_string(), format!("{base_url}/dashboard/settings/audit")));
    letter.after.push(t.notice_after.to_string());
    letter
}

/// A changed value as a line of a mail: text as it is, nothing as a dash.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        Value::String(text) => text.chars().take(200).collect(),
        other => other.to_string().chars().take(200).collect(),
    }
}

/// Renders the mail that tells an owner of a new dispute, in their language; `Ok(Err(why))`
/// when there is nothing to send any more.
pub async fn dispute(state: &AppState, mail: &mails::Model) -> Result<Result<Rendered, String>, AppError> {
    use crate::db::entities::{disputes, payments};
    let Some(d) = db::find::<disputes::Entity>(&state.db, mail.shop_id, &mail.object_id).await? else {
        return Ok(Err("the dispute is gone".into()));
    };
    let (shop, to, language) = match owner(state, mail).await? {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let t = texts(language);
    let amount = money(d.amount, d.currency, language);
    let values = [("shop", shop.name.as_str()), ("amount", amount.as_str())];
    let mut letter = letter(t, &shop, fill(t.dispute_subject, &values), t.dispute_heading.to_string());
    letter.paragraphs.push(fill(t.dispute_body, &values));
    let payment = db::find::<payments::Entity>(&state.db, shop.id, &d.payment_id).await?;
    let card = payment.as_ref().map(|p| format!(", {}", p.card_label())).unwrap_or_default();
    letter.facts.push((t.payment.to_string(), format!("{}{card}", d.payment_id)));
    letter.facts.push((t.reason.to_string(), d.reason.replace('_', " ")));
    if let Some(due) = d.evidence_due_by {
        letter.facts.push((t.due.to_string(), moment(due)));
    }
    let here = crate::services::disputes::answered_here(state, d.shop_id, d.test).await;
    letter.action =
        Some((t.dispute_action.to_string(), format!("{}/dashboard/disputes/{}", state.config.base_url, d.id)));
    letter.after.push(if here { t.dispute_after } else { t.dispute_back_office }.to_string());
    if d.subscription_id.is_some() && shop.dispute_cancels {
        letter.after.push(t.dispute_canceled.to_string());
    }
    Ok(Ok(written(state, mail, to, letter)?))
}

/// Renders the mail that tells an owner a refund failed after the processor accepted it, in
/// their language; `Ok(Err(why))` when there is nothing to send any more.
pub async fn refund_failed(state: &AppState, mail: &mails::Model) -> Result<Result<Rendered, String>, AppError> {
    use crate::db::entities::refunds;
    let Some(refund) = db::find::<refunds::Entity>(&state.db, mail.shop_id, &mail.object_id).await? else {
        return Ok(Err("the refund is gone".into()));
    };
    let (shop, to, language) = match owner(state, mail).await? {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let t = texts(language);
    let amount = money(refund.amount, refund.currency, language);
    let values = [("shop", shop.name.as_str()), ("amount", amount.as_str())];
    let mut letter = letter(t, &shop, fill(t.refund_subject, &values), t.refund_heading.to_string());
    letter.paragraphs.push(fill(t.refund_body, &values));
    letter.facts.push((t.payment.to_string(), refund.payment_id.clone()));
    if let Some(why) = &refund.failure_message {
        letter.facts.push((t.reason.to_string(), why.clone()));
    }
    let url = format!("{}/dashboard/payments/{}", state.config.base_url, refund.payment_id);
    letter.action = Some((t.refund_action.to_string(), url));
    letter.after.push(t.refund_after.to_string());
    Ok(Ok(written(state, mail, to, letter)?))
}
