use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Payments {
    Table,
    RecheckAt,
    ActionUrl,
    CheckoutToken,
    CustomerDetails,
}

/// A payment whose processor has not said how it ended (its answer was lost, or the customer
/// must authenticate or type their card on the processor's page) stays `processing`:
/// `recheck_at` is when the sweeper next looks it up (it backs off), `action_url` where the
/// customer goes (3-D Secure, the processor's page), `checkout_token` the processor's page
/// session, `customer_details` what the customer typed on paydesk's page (JSON) until the
/// payment goes through and they become a customer.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            ColumnDef::new(Payments::RecheckAt).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(Payments::ActionUrl).text().null().to_owned(),
            ColumnDef::new(Payments::CheckoutToken).text().null().to_owned(),
            ColumnDef::new(Payments::CustomerDetails).text().null().to_owned(),
        ] {
            let mut column = column;
            manager.alter_table(Table::alter().table(Payments::Table).add_column(&mut column).to_owned()).await?;
        }
        // A processor's notification names a payment by its reference, and a refund made in
        // the processor's back office is recorded once by its uid.
        let db = manager.get_connection();
        db.execute_unprepared("CREATE INDEX ix_payments_reference ON payments (acquirer_reference)").await?;
        db.execute_unprepared("CREATE UNIQUE INDEX ux_refunds_reference ON refunds (acquirer_reference)").await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX ix_payments_reference").await?;
        db.execute_unprepared("DROP INDEX ux_refunds_reference").await?;
        for column in [Payments::RecheckAt, Payments::ActionUrl, Payments::CheckoutToken, Payments::CustomerDetails] {
            manager.alter_table(Table::alter().table(Payments::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
