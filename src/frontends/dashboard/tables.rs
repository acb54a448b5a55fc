//! The tables several sections show: payments (the list, a customer's, a product's, a
//! plan's, the overview's) and subscriptions (the list, a customer's, a plan's).

use std::collections::HashMap;

use super::{Merchant, local};
use crate::db::entities::{customers, payments, plans, products, subscriptions};
use crate::db::{self, Page as DbPage};
use crate::domain::payment::{PaymentFilter, PaymentSearch};
use crate::domain::subscription::SubscriptionFilter;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// "Ann Lee": the customer's first and last names, as far as given.
pub fn full_name(c: &customers::Model) -> String {
    [c.first_name.as_deref(), c.last_name.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ")
}

/// A payment in a table.
pub struct PaymentRow {
    pub id: String,
    pub amount: String,
    pub status: String,
    pub card: String,
    /// What was paid for: the product or plan, with the link to its page.
    pub paid_for: Option<(String, String)>,
    /// Who paid: the customer's e-mail (and their page), else the name on the card.
    pub payer: String,
    pub payer_link: Option<String>,
    pub test: bool,
    pub created: String,
}

/// What a payment names: its customer, product and plan.
pub trait Names {
    fn names(&self) -> (Option<&str>, Option<&str>, Option<&str>);
}

impl Names for payments::Model {
    fn names(&self) -> (Option<&str>, Option<&str>, Option<&str>) {
        (self.customer_id.as_deref(), self.product_id.as_deref(), self.plan_id.as_deref())
    }
}

impl Names for db::payments::Exported {
    fn names(&self) -> (Option<&str>, Option<&str>, Option<&str>) {
        (self.customer_id.as_deref(), self.product_id.as_deref(), self.plan_id.as_deref())
    }
}

/// A payment's customer as a table names them.
pub struct Payer {
    pub email: String,
    first_name: Option<String>,
    last_name: Option<String>,
}

impl Payer {
    /// "Ann Lee", as far as given.
    pub fn name(&self) -> String {
        [self.first_name.as_deref(), self.last_name.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ")
    }
}

/// What a batch of payments names: their customers, products and plans, looked up at once,
/// and only the columns a table shows of them.
pub struct Named {
    customers: HashMap<String, Payer>,
    products: HashMap<String, String>,
    plans: HashMap<String, String>,
}

impl Named {
    pub async fn load<P: Names>(state: &AppState, shop_id: i64, payments: &[P]) -> Result<Named, AppError> {
        let (mut customer_ids, mut product_ids, mut plan_ids) = (Vec::new(), Vec::new(), Vec::new());
        for p in payments {
            let (customer, product, plan) = p.names();
            customer_ids.extend(customer);
            product_ids.extend(product);
            plan_ids.extend(plan);
        }
        use customers::Column as C;
        let customers: Vec<(String, String, Option<String>, Option<String>)> =
            db::columns_by_ids::<customers::Entity, _>(
                &state.db,
                shop_id,
                &customer_ids,
                [C::Id, C::Email, C::FirstName, C::LastName],
            )
            .await?;
        let products: Vec<(String, String)> = db::columns_by_ids::<products::Entity, _>(
            &state.db,
            shop_id,
            &product_ids,
            [products::Column::Id, products::Column::Name],
        )
        .await?;
        let plans: Vec<(String, String)> = db::columns_by_ids::<plans::Entity, _>(
            &state.db,
            shop_id,
            &plan_ids,
            [plans::Column::Id, plans::Column::Title],
        )
        .await?;
        Ok(Named {
            customers: customers
                .into_iter()
                .map(|(id, email, first_name, last_name)| (id, Payer { email, first_name, last_name }))
                .collect(),
            products: products.into_iter().collect(),
            plans: plans.into_iter().collect(),
        })
    }

    /// The payment's customer: their id and what a table shows of them.
    pub fn customer(&self, p: &impl Names) -> Option<(&str, &Payer)> {
        let id = p.names().0?;
        self.customers.get_key_value(id).map(|(id, payer)| (id.as_str(), payer))
    }

    /// The product or plan a payment paid for: its name and its page.
    pub fn paid_for(&self, p: &impl Names) -> Option<(String, String)> {
        let page = match p.names() {
            (_, Some(id), _) => format!("/dashboard/products/{id}"),
            (_, _, Some(id)) => format!("/dashboard/plans/{id}"),
            _ => return None,
        };
        Some((self.paid_for_name(p)?.to_string(), page))
    }

    /// The name of the product or plan a payment paid for.
    pub fn paid_for_name(&self, p: &impl Names) -> Option<&str> {
        match p.names() {
            (_, Some(id), _) => self.products.get(id).map(String::as_str),
            (_, _, Some(id)) => self.plans.get(id).map(String::as_str),
            _ => None,
        }
    }
}

/// The table rows of `payments`, with what they paid for and who paid.
pub async fn payment_rows(
    state: &AppState,
    m: &Merchant,
    payments: &[payments::Model],
) -> Result<Vec<PaymentRow>, AppError> {
    let named = Named::load(state, m.shop.id, payments).await?;
    Ok(payments
        .iter()
        .map(|p| {
            let customer = named.customer(p);
            PaymentRow {
                id: p.id.clone(),
                amount: m.money(p.amount, p.currency),
                status: p.status.to_string(),
                card: p.card_label(),
                paid_for: named.paid_for(p),
                payer: customer.map_or_else(|| p.card_holder.clone(), |(_, c)| c.email.clone()),
                payer_link: customer.map(|(id, _)| format!("/dashboard/customers/{id}")),
                test: p.test,
                created: local(p.created_at, m.tz),
            }
        })
        .collect())
}

/// The latest `limit` payments of the shop that pass `filter`.
pub async fn recent_payments(
    state: &AppState,
    m: &Merchant,
    filter: PaymentFilter,
    limit: u64,
) -> Result<Vec<PaymentRow>, AppError> {
    let page = DbPage { limit, starting_after: None };
    let search = PaymentSearch { filter, ..Default::default() };
    let listed = db::payments::search(&state.db, m.shop.id, &page, &search).await.map_err(AppError::from)?;
    payment_rows(state, m, &listed.rows).await
}

/// A subscription in a table.
pub struct SubscriptionRow {
    pub id: String,
    pub state: String,
    pub plan: String,
    pub customer: String,
    pub next: String,
    pub created: String,
}

/// Up to `limit` of the shop's subscriptions that meet `condition`, newest first, with
/// their plans' titles and customers' e-mails; and the id to continue after.
pub async fn subscription_rows(
    state: &AppState,
    m: &Merchant,
    filter: &SubscriptionFilter,
    limit: u64,
    after: Option<String>,
) -> Result<(Vec<SubscriptionRow>, Option<String>), AppError> {
    let page = DbPage { limit, starting_after: after };
    let listed = db::subscriptions::list(&state.db, m.shop.id, &page, filter).await.map_err(AppError::from)?;
    let plan_ids: Vec<&str> = listed.rows.iter().map(|s| s.plan_id.as_str()).collect();
    let customer_ids: Vec<&str> = listed.rows.iter().map(|s| s.customer_id.as_str()).collect();
    let plans = db::by_ids::<plans::Entity>(&state.db, m.shop.id, &plan_ids).await?;
    let customers = db::by_ids::<customers::Entity>(&state.db, m.shop.id, &customer_ids).await?;
    let rows = listed
        .rows
        .iter()
        .map(|s| SubscriptionRow {
            id: s.id.clone(),
            state: s.state.to_string(),
            plan: plans.get(&s.plan_id).map_or_else(|| s.plan_id.clone(), |p| p.title.clone()),
            customer: customers.get(&s.customer_id).map_or_else(|| s.customer_id.clone(), |c| c.email.clone()),
            next: next_charge(s).map_or("—".into(), |t| local(t, m.tz)),
            created: local(s.created_at, m.tz),
        })
        .collect();
    Ok((rows, listed.next_after))
}

/// The newest `limit` subscriptions that meet `condition`, for other pages.
pub async fn recent_subscriptions(
    state: &AppState,
    m: &Merchant,
    filter: SubscriptionFilter,
    limit: u64,
) -> Result<Vec<SubscriptionRow>, AppError> {
    Ok(subscription_rows(state, m, &filter, limit, None).await?.0)
}

/// When the subscription is charged next: none once it is set to end with its period.
pub fn next_charge(s: &subscriptions::Model) -> Option<chrono::DateTime<chrono::Utc>> {
    use crate::domain::billing::{ResumeBilling, State};
    // A paused one is charged when it resumes with a new period; on its old schedule, only
    // from the schedule's next period start then.
    let paused_until_continued = s.state == State::Paused && s.resume_billing == Some(ResumeBilling::Continue);
    s.renew_at.filter(|_| !s.cancel_at_period_end && !s.pause_at_period_end && !paused_until_continued)
}
