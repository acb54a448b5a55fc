//! Stored customers.

use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};

use super::entities::customers::{ActiveModel, Column, Entity, Model};
use super::{Searchable, ShopOwned};
use crate::domain::customer::CustomerFields;
use crate::domain::ids::{CUSTOMER, new_id};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

impl Searchable for Entity {
    const NAMES: &'static [Column] = &[Column::Email, Column::FirstName, Column::LastName];
    const SEARCH: &'static str = "customers_search";
}

/// Stores a new customer of the shop.
pub async fn insert(
    db: &DatabaseConnection,
    shop_id: i64,
    f: CustomerFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let fields = crate::domain::audit::changes(&serde_json::json!({}), &f.audited(), &[]);
    let id = new_id(CUSTOMER);
    let row = new_row(&id, shop_id, f, now);
    super::audit::insert_recorded(db, shop_id, row, ("customer.created", ("customer", &id)), fields, now).await
}

fn new_row(id: &str, shop_id: i64, f: CustomerFields, now: DateTime<Utc>) -> ActiveModel {
    let now = super::now_millis(now);
    ActiveModel {
        seq: NotSet,
        id: Set(id.to_string()),
        shop_id: Set(shop_id),
        first_name: Set(f.first_name),
        last_name: Set(f.last_name),
        address: Set(f.address),
        city: Set(f.city),
        country: Set(f.country),
        zip: Set(f.zip),
        state: Set(f.state),
        phone: Set(f.phone),
        company: Set(f.company),
        vat_id: Set(f.vat_id),
        email: Set(f.email),
        ip: Set(f.ip),
        external_id: Set(f.external_id),
        created_at: Set(now),
        updated_at: Set(now),
    }
}

/// Replaces a customer's details with `f` (its id, shop and history stay); `false` if it is
/// gone.
pub async fn update(
    db: &DatabaseConnection,
    shop_id: i64,
    id: &str,
    f: CustomerFields,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    use sea_orm::sea_query::Expr;
    let txn = crate::db::begin(db).await?;
    let Some(before) = Entity::find().filter(Column::ShopId.eq(shop_id)).filter(Column::Id.eq(id)).one(&txn).await?
    else {
        return Ok(false);
    };
    let changes = crate::domain::audit::changes(&audited(&before), &f.audited(), &[]);
    let result = Entity::update_many()
        .col_expr(Column::FirstName, Expr::value(f.first_name))
        .col_expr(Column::LastName, Expr::value(f.last_name))
        .col_expr(Column::Address, Expr::value(f.address))
        .col_expr(Column::City, Expr::value(f.city))
        .col_expr(Column::Country, Expr::value(f.country))
        .col_expr(Column::Zip, Expr::value(f.zip))
        .col_expr(Column::State, Expr::value(f.state))
        .col_expr(Column::Phone, Expr::value(f.phone))
        .col_expr(Column::Company, Expr::value(f.company))
        .col_expr(Column::VatId, Expr::value(f.vat_id))
        .col_expr(Column::Email, Expr::value(f.email))
        .col_expr(Column::Ip, Expr::value(f.ip))
        .col_expr(Column::ExternalId, Expr::value(f.external_id))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Id.eq(id))
        .exec(&txn)
        .await?;
    if result.rows_affected != 1 {
        return Ok(false);
    }
    if !changes.is_empty() {
        super::audit::record_acting(&txn, shop_id, "customer.updated", ("customer", id), changes, now).await?;
    }
    txn.commit().await?;
    Ok(true)
}

/// A stored customer as the audit trail records one.
fn audited(c: &Model) -> serde_json::Value {
    c.fields().audited()
}

impl Model {
    /// The customer's details, as the domain rules see them.
    pub fn fields(&self) -> CustomerFields {
        CustomerFields {
            first_name: self.first_name.clone(),
            last_name: self.last_name.clone(),
            address: self.address.clone(),
            city: self.city.clone(),
            country: self.country.clone(),
            zip: self.zip.clone(),
            state: self.state.clone(),
            phone: self.phone.clone(),
            company: self.company.clone(),
            vat_id: self.vat_id.clone(),
            email: self.email.clone(),
            ip: self.ip.clone(),
            external_id: self.external_id.clone(),
        }
    }
}

/// The shop's newest customer with this e-mail, or a new one with `fields`. A company or VAT
/// id typed on the page is kept where the customer has none (so that the subscription the
/// page made renews taxed for that buyer); one kept is never replaced from a page anyone
/// can fill in with the e-mail.
pub async fn find_or_insert_by_email(
    db: &impl ConnectionTrait,
    shop_id: i64,
    fields: CustomerFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let existing = Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Email.eq(fields.email.as_str()))
        .order_by_desc(Column::Seq)
        .one(db)
        .await?;
    match existing {
        Some(customer) if typed_anew(&customer, &fields) => {
            use sea_orm::sea_query::Expr;
            let update = Entity::update_many().col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)));
            // Each only where it is still empty, in the statement: a change made meanwhile stays.
            let mut update = update.filter(Column::Id.eq(&customer.id));
            if fields.company.is_some() && customer.company.is_none() {
                let keep = Expr::col(Column::Company).if_null(Expr::value(fields.company));
                update = update.col_expr(Column::Company, keep);
            }
            if fields.vat_id.is_some() && customer.vat_id.is_none() {
                let keep = Expr::col(Column::VatId).if_null(Expr::value(fields.vat_id));
                update = update.col_expr(Column::VatId, keep);
            }
            update.exec(db).await?;
            Entity::find().filter(Column::Id.eq(&customer.id)).one(db).await?.ok_or(DbErr::RecordNotFound(customer.id))
        }
        Some(customer) => Ok(customer),
        // A payer on a pay page: no one's change to record.
        None => new_row(&new_id(CUSTOMER), shop_id, fields, now).insert(db).await,
    }
}

/// Whether `fields` name a company or VAT id the customer has none of.
fn typed_anew(customer: &Model, fields: &CustomerFields) -> bool {
    let fills = |typed: &Option<String>, kept: &Option<String>| typed.is_some() && kept.is_none();
    fills(&fields.company, &customer.company) || fills(&fields.vat_id, &customer.vat_id)
}

/// The shop's customers with this e-mail (any case), newest first, at most `limit`.
pub async fn by_email(db: &impl ConnectionTrait, shop_id: i64, email: &str, limit: u64) -> Result<Vec<Model>, DbErr> {
    use sea_orm::QuerySelect;
    use sea_orm::sea_query::{Expr, Func};
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Expr::expr(Func::lower(Expr::col(Column::Email))).eq(email.trim().to_lowercase()))
        .order_by_desc(Column::Seq)
        .limit(limit)
        .all(db)
        .await
}

/// The customers with these ids, whatever their shops (a billing run's).
pub async fn by_ids_of_any_shop(db: &impl ConnectionTrait, ids: &[&str]) -> Result<Vec<Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Entity::find().filter(Column::Id.is_in(ids.iter().copied())).all(db).await
}

/// The e-mail of each of these customers of the shop, by id.
pub async fn emails(
    db: &impl ConnectionTrait,
    shop_id: i64,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, String>, DbErr> {
    let mut found = std::collections::HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let pairs: Vec<(String, String)> =
            super::columns_by_ids::<Entity, _>(db, shop_id, chunk, [Column::Id, Column::Email]).await?;
        found.extend(pairs);
    }
    Ok(found)
}
