//! Stored subscription plans.

use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use std::collections::HashMap;

use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter,
    QuerySelect, Set,
};

use super::entities::plans::{ActiveModel, Column, Entity, Model};
use super::{Searchable, ShopOwned};
use crate::domain::currency::Currency;
use crate::domain::ids::{PLAN, new_id};
use crate::domain::plan::{PlanFields, Trial};
use crate::domain::product::{visible_fields_from_db, visible_fields_to_db};
use crate::domain::tax::Taxing;
use crate::domain::vocab::VisibleField;

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

impl super::Archivable for Entity {
    const ARCHIVED_AT: Column = Column::ArchivedAt;
    const UPDATED_AT: Column = Column::UpdatedAt;
}

impl Searchable for Entity {
    const NAMES: &'static [Column] = &[Column::Title];
    const SEARCH: &'static str = "plans_search";
}

/// The plans with these ids, whichever shop they belong to (the billing engine works for
/// every shop), by id.
pub async fn by_ids_of_any_shop(db: &impl ConnectionTrait, ids: &[&str]) -> Result<HashMap<String, Model>, DbErr> {
    let rows = Entity::find().filter(Column::Id.is_in(ids.iter().copied())).all(db).await?;
    Ok(rows.into_iter().map(|p| (p.id.clone(), p)).collect())
}

/// Stores a new plan of the shop.
pub async fn insert(db: &DatabaseConnection, shop_id: i64, f: &PlanFields, now: DateTime<Utc>) -> Result<Model, DbErr> {
    let txn = crate::db::begin(db).await?;
    let at = now;
    let now = super::now_millis(now);
    let created = ActiveModel {
        seq: NotSet,
        id: Set(new_id(PLAN)),
        shop_id: Set(shop_id),
        title: Set(f.title.clone()),
        currency: Set(f.currency),
        language: Set(f.language),
        amount: Set(f.amount),
        interval: Set(f.interval),
        interval_unit: Set(f.interval_unit),
        trial_amount: Set(f.trial.map(|t| t.amount)),
        trial_interval: Set(f.trial.map(|t| t.interval)),
        trial_interval_unit: Set(f.trial.map(|t| t.interval_unit)),
        trial_as_first_payment: Set(f.trial_as_first_payment),
        infinite: Set(f.infinite),
        billing_cycles: Set(f.billing_cycles),
        number_payment_attempts: Set(f.number_payment_attempts),
        prevent_payments_at_night: Set(f.prevent_payments_at_night),
        test: Set(f.test),
        tax_rate_id: Set(f.taxing.rate_id.clone()),
        tax_behavior: Set(f.taxing.behavior),
        visible_fields: Set(visible_fields_to_db(&f.visible_fields)),
        archived_at: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(&txn)
    .await?;
    let fields = crate::domain::audit::changes(&serde_json::json!({}), &f.audited(), &[]);
    super::audit::record_acting(&txn, shop_id, "plan.created", ("plan", &created.id), fields, at).await?;
    txn.commit().await?;
    Ok(created)
}

impl Model {
    /// The plan's fields, as the domain rules see them.
    pub fn fields(&self) -> PlanFields {
        let trial = match (self.trial_amount, self.trial_interval, self.trial_interval_unit) {
            (Some(amount), Some(interval), Some(interval_unit)) => Some(Trial { amount, interval, interval_unit }),
            _ => None,
        };
        PlanFields {
            title: self.title.clone(),
            currency: self.currency,
            language: self.language,
            amount: self.amount,
            interval: self.interval,
            interval_unit: self.interval_unit,
            trial,
            trial_as_first_payment: self.trial_as_first_payment,
            infinite: self.infinite,
            billing_cycles: self.billing_cycles,
            number_payment_attempts: self.number_payment_attempts,
            prevent_payments_at_night: self.prevent_payments_at_night,
            test: self.test,
            taxing: Taxing { rate_id: self.tax_rate_id.clone(), behavior: self.tax_behavior },
            visible_fields: self.visible_fields(),
        }
    }

    /// What the plan's page asks for, the e-mail first.
    pub fn visible_fields(&self) -> Vec<VisibleField> {
        let mut fields = vec![VisibleField::Email];
        fields.extend(visible_fields_from_db(&self.visible_fields).into_iter().filter(|f| *f != VisibleField::Email));
        fields
    }
}

/// Saves what of a plan may change (its title, language, page fields and tax rate); whether
/// that changed it (`false` if it is gone or already so).
pub async fn update(
    db: &impl ConnectionTrait,
    shop_id: i64,
    id: &str,
    edit: &crate::domain::plan::PlanEdit,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    use sea_orm::sea_query::Expr;
    let fields = visible_fields_to_db(&edit.visible_fields);
    let rate_differs = match &edit.tax_rate_id {
        Some(rate) => Condition::any().add(Column::TaxRateId.is_null()).add(Column::TaxRateId.ne(rate.as_str())),
        None => Condition::all().add(Column::TaxRateId.is_not_null()),
    };
    let result = Entity::update_many()
        .col_expr(Column::Title, Expr::value(edit.title.clone()))
        .col_expr(Column::Language, Expr::value(edit.language))
        .col_expr(Column::VisibleFields, Expr::value(fields.clone()))
        .col_expr(Column::TaxRateId, Expr::value(edit.tax_rate_id.clone()))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Id.eq(id))
        .filter(
            Condition::any()
                .add(Column::Title.ne(edit.title.clone()))
                .add(Column::Language.ne(edit.language))
                .add(Column::VisibleFields.ne(fields))
                .add(rate_differs),
        )
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// The currencies of the shop's plans, each once, by code.
pub async fn currencies(db: &impl ConnectionTrait, shop_id: i64) -> Result<Vec<Currency>, DbErr> {
    let mut found: Vec<Currency> = Entity::find()
        .select_only()
        .column(Column::Currency)
        .distinct()
        .filter(Column::ShopId.eq(shop_id))
        .into_tuple()
        .all(db)
        .await?;
    found.sort_by_key(|c| c.code);
    Ok(found)
}
