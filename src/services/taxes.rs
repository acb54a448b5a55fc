//! The tax of a charge, worked out when the charge is written and kept on its payment: the
//! rate its product or plan names, whether the price holds it, and whether the buyer (by
//! their VAT id, from another EU country than the seller's) accounts for it instead.

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, DbErr};

use crate::db::{self, entities::customers, entities::tax_rates};
use crate::domain::checkout::Checkout;
use crate::domain::tax::{self, ChargeTax, Taxing};
use crate::domain::vat_id;
use crate::domain::vocab::VisibleField;

/// Who buys, as far as their tax goes.
#[derive(Debug, Clone, Default)]
pub struct Buyer {
    pub country: Option<String>,
    pub vat_id: Option<String>,
}

impl Buyer {
    /// The buyer a pay page's form names.
    pub fn of_checkout(checkout: &Checkout) -> Self {
        let detail = |f| checkout.detail(f).map(str::to_owned);
        Buyer {
            country: detail(VisibleField::Country).map(|c| c.to_ascii_uppercase()),
            vat_id: detail(VisibleField::VatId),
        }
    }

    /// The buyer a stored customer is.
    pub fn of_customer(c: &customers::Model) -> Self {
        Buyer { country: c.country.clone(), vat_id: c.vat_id.clone() }
    }

    /// Whether a sale to them from a seller in `seller_country` is reverse-charged: their VAT
    /// id is of another EU country than the seller's.
    fn reverse_charged(&self, seller_country: Option<&str>) -> bool {
        let Some(id) = self.vat_id.as_deref() else { return false };
        let country = self.country.as_deref().or_else(|| vat_id::country_of(id));
        seller_country.is_some_and(|seller| vat_id::reverse_charged(seller, country, Some(id)))
    }
}

/// The rates and sellers' countries a set of charges is taxed with, read once.
#[derive(Default)]
pub struct Taxes {
    rates: HashMap<String, tax_rates::Model>,
    sellers: HashMap<i64, Option<String>>,
}

impl Taxes {
    /// Reads the rates of `taxings` and the countries of `shops`' sellers.
    pub async fn load(db: &impl ConnectionTrait, taxings: &[&Taxing], shops: &[i64]) -> Result<Self, DbErr> {
        let ids: Vec<&str> = taxings.iter().filter_map(|t| t.rate_id.as_deref()).collect();
        if ids.is_empty() {
            return Ok(Taxes::default());
        }
        let rates = db::tax_rates::by_ids_of_any_shop(db, &ids).await?;
        let sellers = db::sellers::of_shops(db, shops).await?.into_iter().map(|(shop, s)| (shop, s.country)).collect();
        Ok(Taxes { rates, sellers })
    }

    /// What a charge of `price` (after its discount) of shop `shop_id`, taxed as `taxing`
    /// says, comes to for `buyer`. A rate that is not the shop's taxes nothing.
    pub fn price(
        &self,
        shop_id: i64,
        price: i64,
        taxing: &Taxing,
        buyer: &Buyer,
    ) -> Result<(i64, Option<ChargeTax>), DbErr> {
        let rate = taxing.rate_id.as_ref().and_then(|id| self.rates.get(id)).filter(|r| r.shop_id == shop_id);
        let seller = self.sellers.get(&shop_id).and_then(|c| c.as_deref());
        tax::charge(price, taxing, rate.map(|r| r.rate()), buyer.reverse_charged(seller))
            .ok_or_else(|| DbErr::Custom(format!("the tax of a charge of {price} does not fit")))
    }
}

/// What one charge of `price` of shop `shop_id`, taxed as `taxing` says, comes to for `buyer`.
pub async fn price(
    db: &impl ConnectionTrait,
    shop_id: i64,
    price: i64,
    taxing: &Taxing,
    buyer: &Buyer,
) -> Result<(i64, Option<ChargeTax>), DbErr> {
    Taxes::load(db, &[taxing], &[shop_id]).await?.price(shop_id, price, taxing, buyer)
}

/// What a subscription's charge of `amount` of `plan` comes to with the plan's tax, for its
/// customer as stored: what mails and pages show of its next charge.
pub async fn of_subscription(
    db: &impl ConnectionTrait,
    sub: &crate::db::entities::subscriptions::Model,
    plan: &crate::db::entities::plans::Model,
    amount: i64,
) -> Result<i64, DbErr> {
    let taxing = plan.fields().taxing;
    if taxing.rate_id.is_none() {
        return Ok(amount);
    }
    let customer = db::find_public::<customers::Entity>(db, &sub.customer_id).await?;
    let buyer = customer.as_ref().map(Buyer::of_customer).unwrap_or_default();
    Ok(price(db, sub.shop_id, amount, &taxing, &buyer).await?.0)
}
