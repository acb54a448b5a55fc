//! Stored products.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, Set,
};

use super::entities::products::{ActiveModel, Column, Entity, Model};
use super::{Searchable, ShopOwned};
use crate::domain::audit::changes;
use crate::domain::ids::{PRODUCT, new_id};
use crate::domain::product::{ProductFields, visible_fields_from_db, visible_fields_to_db};
use crate::domain::tax::Taxing;

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
    const NAMES: &'static [Column] = &[Column::Name];
    const SEARCH: &'static str = "products_search";
}

/// Stores a new product of the shop (recorded as its creator's `product.created`).
pub async fn insert(
    db: &DatabaseConnection,
    shop_id: i64,
    fields: &ProductFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let (at, now, id) = (now, super::now_millis(now), new_id(PRODUCT));
    let mut row = ActiveModel {
        seq: NotSet,
        id: Set(id.clone()),
        shop_id: Set(shop_id),
        archived_at: Set(None),
        created_at: Set(now),
        ..Default::default()
    };
    apply(&mut row, fields, now);
    let changes = changes(&serde_json::json!({}), &fields.audited(), &[]);
    super::audit::insert_recorded(db, shop_id, row, ("product.created", ("product", &id)), changes, at).await
}

/// Why an update did not apply.
#[derive(Debug, PartialEq, Eq)]
pub enum UpdateRefused {
    /// Customers bought units meanwhile, and the change would take more than are left.
    NotEnoughLeft(i64),
    /// The product changed between unlimited and counted stock meanwhile.
    StockChanged,
}

impl std::fmt::Display for UpdateRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpdateRefused::NotEnoughLeft(left) => write!(
                f,
                "Customers bought units while the product was being changed: only {left} are left, fewer than the change removes"
            ),
            UpdateRefused::StockChanged => {
                write!(f, "The product's stock was changed by another request meanwhile; read it again")
            }
        }
    }
}

/// Writes the fields that differ between `read` (the product as the edit saw it) and
/// `fields`, in one conditional statement; never writes back a value it read. A changed
/// quantity is applied as the difference from `read.quantity`, so units sold meanwhile stay
/// sold (units sold + left always equals the stock the merchant set).
pub async fn update(
    db: &DatabaseConnection,
    read: &Model,
    fields: &ProductFields,
    now: DateTime<Utc>,
) -> Result<Result<(), UpdateRefused>, DbErr> {
    let was = read.fields();
    let mut update = Entity::update_many().col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)));
    macro_rules! changed {
        ($field:ident, $column:expr, $value:expr) => {
            if was.$field != fields.$field {
                update = update.col_expr($column, Expr::value($value));
            }
        };
    }
    changed!(name, Column::Name, fields.name.clone());
    changed!(description, Column::Description, fields.description.clone());
    changed!(currency, Column::Currency, fields.currency);
    changed!(amount, Column::Amount, fields.amount);
    changed!(visible_fields, Column::VisibleFields, visible_fields_to_db(&fields.visible_fields));
    changed!(test, Column::Test, fields.test);
    changed!(immortal, Column::Immortal, fields.immortal);
    changed!(expired_at, Column::ExpiredAt, fields.expired_at.map(super::now_millis));
    changed!(return_url, Column::ReturnUrl, fields.return_url.clone());
    changed!(notification_url, Column::NotificationUrl, fields.notification_url.clone());
    changed!(language, Column::Language, fields.language.as_str());
    changed!(transaction_type, Column::TransactionType, fields.transaction_type.as_str());
    if was.taxing != fields.taxing {
        update = update
            .col_expr(Column::TaxRateId, Expr::value(fields.taxing.rate_id.clone()))
            .col_expr(Column::TaxBehavior, Expr::value(fields.taxing.behavior.as_str()));
    }
    let mut delta = 0;
    if was.infinite != fields.infinite {
        update = update
            .col_expr(Column::Infinite, Expr::value(fields.infinite))
            .col_expr(Column::Quantity, Expr::value(fields.quantity));
    } else if let (Some(new), Some(old)) = (fields.quantity, was.quantity) {
        delta = new - old;
        if delta != 0 {
            update = update.col_expr(Column::Quantity, Expr::col(Column::Quantity).add(delta));
        }
    }
    let txn = crate::db::begin(db).await?;
    let result = update
        .filter(Column::Id.eq(read.id.as_str()))
        .filter(Column::Infinite.eq(was.infinite))
        .filter(Expr::expr(Expr::col(Column::Quantity).add(delta)).gte(0).or(Column::Quantity.is_null()))
        .exec(&txn)
        .await?;
    if result.rows_affected == 1 {
        let changes = changes(&was.audited(), &fields.audited(), &[]);
        if !changes.is_empty() {
            let object = ("product", read.id.as_str());
            super::audit::record_acting(&txn, read.shop_id, "product.updated", object, changes, now).await?;
        }
        txn.commit().await?;
        return Ok(Ok(()));
    }
    drop(txn);
    let now_left = Entity::find().filter(Column::Id.eq(read.id.as_str())).one(db).await?;
    Ok(Err(match now_left {
        Some(p) if p.infinite == was.infinite => UpdateRefused::NotEnoughLeft(p.quantity.unwrap_or(0)),
        _ => UpdateRefused::StockChanged,
    }))
}

/// Takes one unit of a finite product, if one is left. A single conditional update, so
/// concurrent payers never take more units than there are.
pub async fn reserve_unit(db: &impl ConnectionTrait, id: &str) -> Result<bool, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::Quantity, Expr::col(Column::Quantity).sub(1))
        .filter(Column::Id.eq(id))
        .filter(Column::Infinite.eq(false))
        .filter(Column::Quantity.gt(0))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// The notification URLs of these products (any shop's: the ids come from stored payments).
pub async fn notification_urls(
    db: &impl ConnectionTrait,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, Option<String>>, DbErr> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    use sea_orm::QuerySelect;
    let rows: Vec<(String, Option<String>)> = Entity::find()
        .select_only()
        .columns([Column::Id, Column::NotificationUrl])
        .filter(Column::Id.is_in(ids.iter().copied()))
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows.into_iter().collect())
}

/// Gives back a unit taken by [`reserve_unit`] when the payment did not go through.
pub async fn release_unit(db: &impl ConnectionTrait, id: &str) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::Quantity, Expr::col(Column::Quantity).add(1))
        .filter(Column::Id.eq(id))
        .filter(Column::Infinite.eq(false))
        .exec(db)
        .await?;
    Ok(())
}

fn apply(row: &mut ActiveModel, f: &ProductFields, now: DateTime<Utc>) {
    row.name = Set(f.name.clone());
    row.description = Set(f.description.clone());
    row.currency = Set(f.currency);
    row.amount = Set(f.amount);
    row.quantity = Set(f.quantity);
    row.infinite = Set(f.infinite);
    row.visible_fields = Set(visible_fields_to_db(&f.visible_fields));
    row.test = Set(f.test);
    row.immortal = Set(f.immortal);
    row.expired_at = Set(f.expired_at.map(super::now_millis));
    row.return_url = Set(f.return_url.clone());
    row.notification_url = Set(f.notification_url.clone());
    row.language = Set(f.language);
    row.transaction_type = Set(f.transaction_type);
    row.tax_rate_id = Set(f.taxing.rate_id.clone());
    row.tax_behavior = Set(f.taxing.behavior);
    row.updated_at = Set(now);
}

impl Model {
    /// The product's fields, as the domain rules see them.
    pub fn fields(&self) -> ProductFields {
        ProductFields {
            name: self.name.clone(),
            description: self.description.clone(),
            currency: self.currency,
            amount: self.amount,
            quantity: self.quantity,
            infinite: self.infinite,
            visible_fields: visible_fields_from_db(&self.visible_fields),
            test: self.test,
            immortal: self.immortal,
            expired_at: self.expired_at,
            return_url: self.return_url.clone(),
            notification_url: self.notification_url.clone(),
            language: self.language,
            transaction_type: self.transaction_type,
            taxing: Taxing { rate_id: self.tax_rate_id.clone(), behavior: self.tax_behavior },
        }
    }
}
