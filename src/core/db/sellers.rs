//! The seller each shop's invoices name: read, and replaced as a whole with its record in the
//! audit trail.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr, EntityTrait, QuerySelect, Set};

use super::entities::shop_sellers::{ActiveModel, Column, Entity, Model};
use crate::domain::audit::{Entry, changes};
use crate::domain::seller::Seller;

impl From<Model> for Seller {
    fn from(m: Model) -> Self {
        Seller {
            legal_name: m.legal_name,
            address_line1: m.address_line1,
            address_line2: m.address_line2,
            city: m.city,
            postal_code: m.postal_code,
            country: m.country,
            vat_id: m.vat_id,
            registration_number: m.registration_number,
            invoice_footer: m.invoice_footer,
        }
    }
}

/// The shop's seller details; all empty before they are first set.
pub async fn find(db: &impl ConnectionTrait, shop_id: i64) -> Result<Seller, DbErr> {
    Ok(Entity::find_by_id(shop_id).one(db).await?.map(Seller::from).unwrap_or_default())
}

/// The seller details of these shops that have any, in one query, by shop.
pub async fn of_shops(db: &impl ConnectionTrait, shop_ids: &[i64]) -> Result<Vec<(i64, Seller)>, DbErr> {
    use sea_orm::{ColumnTrait, QueryFilter};
    let rows = Entity::find().filter(Column::ShopId.is_in(shop_ids.iter().copied())).all(db).await?;
    Ok(rows.into_iter().map(|row| (row.shop_id, Seller::from(row))).collect())
}

/// Replaces the shop's seller details with `seller`, recording what changed as `audit` (no
/// record when nothing did); answers them as stored.
pub async fn replace(
    db: &DatabaseConnection,
    shop_id: i64,
    seller: &Seller,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Seller, DbErr> {
    let txn = super::begin(db).await?;
    // The shop's row, made empty if it has none, and held until the commit: a change made at
    // the same time waits, so that each record's "before" is what it replaced (SQLite's
    // transaction holds the only write lock from its start already).
    let empty = ActiveModel { shop_id: Set(shop_id), updated_at: Set(super::now_millis(now)), ..Default::default() };
    let first = OnConflict::column(Column::ShopId).do_nothing().to_owned();
    Entity::insert(empty).on_conflict(first).exec_without_returning(&txn).await?;
    let mut held = Entity::find_by_id(shop_id);
    if txn.get_database_backend() == DatabaseBackend::Postgres {
        held = held.lock_exclusive();
    }
    let before = held.one(&txn).await?.map(Seller::from).unwrap_or_default();
    let s = seller.clone();
    let row = ActiveModel {
        shop_id: Set(shop_id),
        legal_name: Set(s.legal_name),
        address_line1: Set(s.address_line1),
        address_line2: Set(s.address_line2),
        city: Set(s.city),
        postal_code: Set(s.postal_code),
        country: Set(s.country),
        vat_id: Set(s.vat_id),
        registration_number: Set(s.registration_number),
        invoice_footer: Set(s.invoice_footer),
        updated_at: Set(super::now_millis(now)),
    };
    use Column as C;
    let every = [
        C::LegalName,
        C::AddressLine1,
        C::AddressLine2,
        C::City,
        C::PostalCode,
        C::Country,
        C::VatId,
        C::RegistrationNumber,
        C::InvoiceFooter,
        C::UpdatedAt,
    ];
    let upsert = OnConflict::column(C::ShopId).update_columns(every).to_owned();
    Entity::insert(row).on_conflict(upsert).exec_without_returning(&txn).await?;
    let changed = changes(&before.audited(), &seller.audited(), &[]);
    if !changed.is_empty() {
        let entry = audit.clone().on("shop", shop_id.to_string()).changing(changed);
        super::audit::record(&txn, &entry, now).await?;
    }
    txn.commit().await?;
    Ok(seller.clone())
}
