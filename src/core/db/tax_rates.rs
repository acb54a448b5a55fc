//! Stored tax rates: made, listed and archived, never changed.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ActiveValue::NotSet, DatabaseConnection, DbErr, Set};

use super::ShopOwned;
use super::entities::tax_rates::{ActiveModel, Column, Entity, Model};
use crate::domain::ids::{TAX_RATE, new_id};
use crate::domain::tax::TaxRateFields;

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

/// Stores a new tax rate of the shop, with its record in the audit trail.
pub async fn insert(
    db: &DatabaseConnection,
    shop_id: i64,
    f: &TaxRateFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let txn = super::begin(db).await?;
    let at = super::now_millis(now);
    let created = ActiveModel {
        seq: NotSet,
        id: Set(new_id(TAX_RATE)),
        shop_id: Set(shop_id),
        name: Set(f.name.clone()),
        percentage: Set(f.percentage),
        category: Set(f.category),
        country: Set(f.country.clone()),
        exemption_reason: Set(f.exemption_reason.clone()),
        archived_at: Set(None),
        created_at: Set(at),
        updated_at: Set(at),
    }
    .insert(&txn)
    .await?;
    let fields = crate::domain::audit::changes(&serde_json::json!({}), &f.audited(), &[]);
    super::audit::record_acting(&txn, shop_id, "tax_rate.created", ("tax_rate", &created.id), fields, now).await?;
    txn.commit().await?;
    Ok(created)
}

/// The rates with these ids, whatever their shops (a billing run's), by id.
pub async fn by_ids_of_any_shop(
    db: &impl sea_orm::ConnectionTrait,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, Model>, DbErr> {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    if ids.is_empty() {
        return Ok(Default::default());
    }
    let rows = Entity::find().filter(Column::Id.is_in(ids.iter().copied())).all(db).await?;
    Ok(rows.into_iter().map(|r| (r.id.clone(), r)).collect())
}

impl Model {
    /// The rate as a charge is taxed at.
    pub fn rate(&self) -> crate::domain::tax::Rate {
        crate::domain::tax::Rate { percentage: self.percentage, category: self.category }
    }
}

/// The shop's rates a product or plan may choose, oldest first: those not archived, and
/// `current` (the one it has) whatever it is.
pub async fn choices(
    db: &impl sea_orm::ConnectionTrait,
    shop_id: i64,
    current: Option<&str>,
) -> Result<Vec<Model>, DbErr> {
    use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
    let mut offered = Condition::any().add(Column::ArchivedAt.is_null());
    if let Some(id) = current {
        offered = offered.add(Column::Id.eq(id));
    }
    Entity::find().filter(Column::ShopId.eq(shop_id)).filter(offered).order_by_asc(Column::Seq).limit(500).all(db).await
}
