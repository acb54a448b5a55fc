//! Stored products.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, IntoActiveModel,
    QueryFilter, Set,
};

use super::ShopOwned;
use super::entities::products::{ActiveModel, Column, Entity, Model};
use crate::domain::ids::{PRODUCT, new_id};
use crate::domain::product::{ProductFields, visible_fields_from_db, visible_fields_to_db};
use crate::domain::vocab::{Language, TransactionType, stored};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// Stores a new product of the shop.
pub async fn insert(
    db: &DatabaseConnection,
    shop_id: i64,
    fields: &ProductFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let now = super::now_millis(now);
    let mut row = ActiveModel {
        seq: NotSet,
        id: Set(new_id(PRODUCT)),
        shop_id: Set(shop_id),
        created_at: Set(now),
        ..Default::default()
    };
    apply(&mut row, fields, now);
    row.insert(db).await
}

/// Replaces the product's fields with `fields`.
pub async fn update(
    db: &DatabaseConnection,
    product: Model,
    fields: &ProductFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let mut row = product.into_active_model();
    apply(&mut row, fields, super::now_millis(now));
    row.update(db).await
}

/// Takes one unit of a finite product, if one is left. A single conditional update, so
/// concurrent payers never take more units than there are.
pub async fn reserve_unit(db: &DatabaseConnection, id: &str) -> Result<bool, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::Quantity, Expr::col(Column::Quantity).sub(1))
        .filter(Column::Id.eq(id))
        .filter(Column::Infinite.eq(false))
        .filter(Column::Quantity.gt(0))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Gives back a unit taken by [`reserve_unit`] when the payment did not go through.
pub async fn release_unit(db: &DatabaseConnection, id: &str) -> Result<(), DbErr> {
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
    row.currency = Set(f.currency.clone());
    row.amount = Set(f.amount);
    row.quantity = Set(f.quantity);
    row.infinite = Set(f.infinite);
    row.visible_fields = Set(visible_fields_to_db(&f.visible_fields));
    row.test = Set(f.test);
    row.immortal = Set(f.immortal);
    row.expired_at = Set(f.expired_at.map(super::now_millis));
    row.return_url = Set(f.return_url.clone());
    row.language = Set(f.language.as_str().to_string());
    row.transaction_type = Set(f.transaction_type.as_str().to_string());
    row.updated_at = Set(now);
}

impl Model {
    /// The product's fields, as the domain rules see them.
    pub fn fields(&self) -> ProductFields {
        ProductFields {
            name: self.name.clone(),
            description: self.description.clone(),
            currency: self.currency.clone(),
            amount: self.amount,
            quantity: self.quantity,
            infinite: self.infinite,
            visible_fields: visible_fields_from_db(&self.visible_fields),
            test: self.test,
            immortal: self.immortal,
            expired_at: self.expired_at,
            return_url: self.return_url.clone(),
            language: stored(&self.language, Language::parse, Language::En),
            transaction_type: stored(&self.transaction_type, TransactionType::parse, TransactionType::Payment),
        }
    }
}
