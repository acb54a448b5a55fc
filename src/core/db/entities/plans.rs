use sea_orm::entity::prelude::*;

use crate::domain::currency::Currency;
use crate::domain::tax::TaxBehavior;
use crate::domain::vocab::{IntervalUnit, Language};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "plans")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub title: String,
    pub currency: Currency,
    pub language: Language,
    pub amount: i64,
    pub interval: i32,
    pub interval_unit: IntervalUnit,
    pub trial_amount: Option<i64>,
    pub trial_interval: Option<i32>,
    pub trial_interval_unit: Option<IntervalUnit>,
    pub trial_as_first_payment: bool,
    pub infinite: bool,
    pub billing_cycles: Option<i32>,
    pub number_payment_attempts: i32,
    pub prevent_payments_at_night: bool,
    pub test: bool,
    /// The shop's rate its charges are taxed at; none for untaxed charges.
    pub tax_rate_id: Option<String>,
    pub tax_behavior: TaxBehavior,
    /// What its page asks for besides the e-mail it always asks for.
    pub visible_fields: String,
    /// When the merchant archived it: its link then takes no payments.
    pub archived_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
