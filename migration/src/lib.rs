//! Database migrations of paydesk, applied by `paydesk migrate` and at start of `paydesk serve`.
//! The same migrations build the schema on SQLite and on PostgreSQL.

pub use sea_orm_migration::prelude::*;

mod m20261123_000001_shops;
mod m20261123_000002_catalog;
mod m20261123_000003_payments;
mod m20261123_000004_subscriptions;
mod m20261123_000005_subscription_events;
mod m20261123_000006_dashboard;
mod m20261123_000007_money_safety;
mod m20261123_000008_refunds;
mod m20261123_000009_events;
mod m20261123_000010_webhooks;
mod m20261124_000011_test_card_schedule;
mod m20261124_000012_shop_changes;
mod m20261124_000013_payment_totals;
mod m20261124_000014_list_indexes;
mod m20261124_000015_subscription_counts;

/// The ordered list of paydesk's migrations.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261123_000001_shops::Migration),
            Box::new(m20261123_000002_catalog::Migration),
            Box::new(m20261123_000003_payments::Migration),
            Box::new(m20261123_000004_subscriptions::Migration),
            Box::new(m20261123_000005_subscription_events::Migration),
            Box::new(m20261123_000006_dashboard::Migration),
            Box::new(m20261123_000007_money_safety::Migration),
            Box::new(m20261123_000008_refunds::Migration),
            Box::new(m20261123_000009_events::Migration),
            Box::new(m20261123_000010_webhooks::Migration),
            Box::new(m20261124_000011_test_card_schedule::Migration),
            Box::new(m20261124_000012_shop_changes::Migration),
            Box::new(m20261124_000013_payment_totals::Migration),
            Box::new(m20261124_000014_list_indexes::Migration),
            Box::new(m20261124_000015_subscription_counts::Migration),
        ]
    }
}

/// A `seq` column: the row's insertion order, used for newest-first lists and cursors.
pub(crate) fn seq_column<T: IntoIden>(name: T) -> ColumnDef {
    ColumnDef::new(name).big_integer().not_null().auto_increment().primary_key().to_owned()
}

/// A plain index `name` of `table` on `columns`, in that order.
pub(crate) fn index<T: IntoIden + Copy + 'static>(name: &str, table: T, columns: &[T]) -> IndexCreateStatement {
    let mut index = Index::create().name(name).table(table).to_owned();
    for column in columns {
        index.col(*column);
    }
    index
}

/// A timestamp column stored in UTC.
pub(crate) fn timestamp<T: IntoIden>(name: T) -> ColumnDef {
    ColumnDef::new(name).timestamp_with_time_zone().not_null().to_owned()
}
