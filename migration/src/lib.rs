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
mod m20261124_000016_summary_changes;
mod m20261124_000017_billing_indexes;
mod m20261124_000018_cancel_at_period_end;
mod m20261124_000019_archive;
mod m20261124_000020_invitations;
mod m20261124_000021_user_language;
mod m20261124_000022_processors;
mod m20261124_000023_event_children;
mod m20261125_000024_pending_payments;
mod m20261125_000025_stripe;
mod m20261125_000026_mails;
mod m20261125_000027_portal;
mod m20261127_000028_lifecycle;
mod m20261127_000029_coupons;
mod m20261128_000030_fixes;
mod m20261128_000031_access;
mod m20261128_000032_sessions;
mod m20261128_000033_audit;
mod m20261128_000034_lockout;
mod m20261128_000035_disputes;
mod m20261128_000036_jobs;
mod m20261205_000037_card_fingerprints;
mod m20261205_000038_payments_by_time;
mod m20261205_000039_audit_pending;
mod m20261205_000040_search;
mod m20261205_000041_billing_order;
mod m20261205_000042_sweep_indexes;
mod m20261205_000043_audit_pending_lean;
mod m20261205_000044_search_behind;
mod m20261206_000045_tax_rates;
mod m20261206_000046_shop_sellers;
mod m20261206_000047_documents;
mod m20261206_000048_taxed_prices;
mod m20261207_000049_mrr_movements;
mod m20261207_000050_revenue_reads;
mod m20261208_000051_api_keys;
mod m20261209_000052_api_key_limits;

pub use m20261205_000040_search::{SEARCHED, SEPARATORS, search_words};
pub use m20261205_000041_billing_order::SCHEDULED;
pub use m20261205_000044_search_behind::sqlite_catch_up;

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
            Box::new(m20261124_000016_summary_changes::Migration),
            Box::new(m20261124_000017_billing_indexes::Migration),
            Box::new(m20261124_000018_cancel_at_period_end::Migration),
            Box::new(m20261124_000019_archive::Migration),
            Box::new(m20261124_000020_invitations::Migration),
            Box::new(m20261124_000021_user_language::Migration),
            Box::new(m20261124_000022_processors::Migration),
            Box::new(m20261124_000023_event_children::Migration),
            Box::new(m20261125_000024_pending_payments::Migration),
            Box::new(m20261125_000025_stripe::Migration),
            Box::new(m20261125_000026_mails::Migration),
            Box::new(m20261125_000027_portal::Migration),
            Box::new(m20261127_000028_lifecycle::Migration),
            Box::new(m20261127_000029_coupons::Migration),
            Box::new(m20261128_000030_fixes::Migration),
            Box::new(m20261128_000031_access::Migration),
            Box::new(m20261128_000032_sessions::Migration),
            Box::new(m20261128_000033_audit::Migration),
            Box::new(m20261128_000034_lockout::Migration),
            Box::new(m20261128_000035_disputes::Migration),
            Box::new(m20261128_000036_jobs::Migration),
            Box::new(m20261205_000037_card_fingerprints::Migration),
            Box::new(m20261205_000038_payments_by_time::Migration),
            Box::new(m20261205_000039_audit_pending::Migration),
            Box::new(m20261205_000040_search::Migration),
            Box::new(m20261205_000041_billing_order::Migration),
            Box::new(m20261205_000042_sweep_indexes::Migration),
            Box::new(m20261205_000043_audit_pending_lean::Migration),
            Box::new(m20261205_000044_search_behind::Migration),
            Box::new(m20261206_000045_tax_rates::Migration),
            Box::new(m20261206_000046_shop_sellers::Migration),
            Box::new(m20261206_000047_documents::Migration),
            Box::new(m20261206_000048_taxed_prices::Migration),
            Box::new(m20261207_000049_mrr_movements::Migration),
            Box::new(m20261207_000050_revenue_reads::Migration),
            Box::new(m20261208_000051_api_keys::Migration),
            Box::new(m20261209_000052_api_key_limits::Migration),
        ]
    }
}

/// The start of the quarter hour (seconds since the epoch) in which the payment `row` took its
/// money: when it was captured, or made.
pub(crate) fn quarter_hour(postgres: bool, row: &str) -> String {
    match postgres {
        true => {
            format!("(floor(extract(epoch FROM coalesce({row}.captured_at, {row}.created_at)) / 900) * 900)::bigint")
        }
        false => format!("CAST(strftime('%s', coalesce({row}.captured_at, {row}.created_at)) AS INTEGER) / 900 * 900"),
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

/// Triggers on `table` that keep a summary table: for every insert `add` runs (over the row
/// `NEW`), for every delete `remove` (over `OLD`), and for every update of the `watched`
/// columns that changes one of them both. On PostgreSQL a function `paydesk_{name}()` and
/// triggers `{name}` and `{name}_update`; on SQLite triggers `{name}_insert`, `{name}_update`
/// and `{name}_delete`.
pub(crate) async fn summary_triggers(
    manager: &SchemaManager<'_>,
    table: &str,
    name: &str,
    watched: &[&str],
    remove: &str,
    add: &str,
) -> Result<(), DbErr> {
    use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};
    let db = manager.get_connection();
    let postgres = manager.get_database_backend() == DatabaseBackend::Postgres;
    let differs = if postgres { "IS DISTINCT FROM" } else { "IS NOT" };
    let changed = watched.iter().map(|c| format!("OLD.{c} {differs} NEW.{c}")).collect::<Vec<_>>().join(" OR ");
    let watched = watched.join(", ");
    let statements = if postgres {
        vec![
            format!(
                "CREATE FUNCTION paydesk_{name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                 IF TG_OP IN ('UPDATE', 'DELETE') THEN {remove}; END IF; \
                 IF TG_OP IN ('INSERT', 'UPDATE') THEN {add}; END IF; \
                 RETURN NULL; END $$"
            ),
            format!(
                "CREATE TRIGGER {name} AFTER INSERT OR DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION paydesk_{name}()"
            ),
            format!(
                "CREATE TRIGGER {name}_update AFTER UPDATE OF {watched} ON {table} \
                 FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION paydesk_{name}()"
            ),
        ]
    } else {
        vec![
            format!("CREATE TRIGGER {name}_insert AFTER INSERT ON {table} BEGIN {add}; END"),
            format!(
                "CREATE TRIGGER {name}_update AFTER UPDATE OF {watched} ON {table} WHEN {changed} \
                 BEGIN {remove}; {add}; END"
            ),
            format!("CREATE TRIGGER {name}_delete AFTER DELETE ON {table} BEGIN {remove}; END"),
        ]
    };
    for statement in statements {
        db.execute_unprepared(&statement).await?;
    }
    Ok(())
}

/// Drops what [`summary_triggers`] made.
pub(crate) async fn drop_summary_triggers(manager: &SchemaManager<'_>, table: &str, name: &str) -> Result<(), DbErr> {
    use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};
    let db = manager.get_connection();
    let statements = match manager.get_database_backend() {
        DatabaseBackend::Postgres => vec![
            format!("DROP TRIGGER IF EXISTS {name} ON {table}"),
            format!("DROP TRIGGER IF EXISTS {name}_update ON {table}"),
            format!("DROP FUNCTION IF EXISTS paydesk_{name}()"),
        ],
        _ => ["insert", "update", "delete"].iter().map(|t| format!("DROP TRIGGER IF EXISTS {name}_{t}")).collect(),
    };
    for statement in statements {
        db.execute_unprepared(&statement).await?;
    }
    Ok(())
}
