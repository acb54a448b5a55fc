use sea_orm_migration::prelude::*;

use crate::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    Seq,
    ShopId,
    Status,
    ProductId,
    PlanId,
    SubscriptionId,
    CustomerId,
    CreatedAt,
    CapturedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Subscriptions {
    Table,
    Seq,
    ShopId,
    State,
    PlanId,
    CustomerId,
}

#[derive(DeriveIden, Clone, Copy)]
enum WebhookDeliveries {
    Table,
    Seq,
    EventId,
}

/// Every filter of a list has an index that ends in `seq`, the lists' order, so that a
/// filtered page reads its rows newest first and stops after the page, however large the
/// table (the single-column indexes they replace made the database sort every match).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Payments as P;
        use Subscriptions as S;
        use WebhookDeliveries as D;
        let replaced = [
            ("ix_payments_product", P::Table.into_iden()),
            ("ix_payments_plan", P::Table.into_iden()),
            ("ix_payments_subscription", P::Table.into_iden()),
            ("ix_payments_customer", P::Table.into_iden()),
            ("ix_subscriptions_customer", S::Table.into_iden()),
            ("ix_subscriptions_plan", S::Table.into_iden()),
            ("ix_webhook_deliveries_event", D::Table.into_iden()),
            // Only the overview's old scan of payments by time used these (m13 replaced it).
            ("ix_payments_shop_created", P::Table.into_iden()),
            ("ix_payments_shop_captured", P::Table.into_iden()),
        ];
        for (name, table) in replaced {
            manager.drop_index(Index::drop().name(name).table(table).to_owned()).await?;
        }
        let payments = [
            ("ix_payments_shop_status_seq", vec![P::ShopId, P::Status, P::Seq]),
            ("ix_payments_product_seq", vec![P::ProductId, P::Seq]),
            ("ix_payments_plan_seq", vec![P::PlanId, P::Seq]),
            ("ix_payments_subscription_seq", vec![P::SubscriptionId, P::Seq]),
            ("ix_payments_customer_seq", vec![P::CustomerId, P::Seq]),
        ];
        for (name, columns) in payments {
            manager.create_index(index(name, P::Table, &columns)).await?;
        }
        let subscriptions = [
            ("ix_subscriptions_shop_state_seq", vec![S::ShopId, S::State, S::Seq]),
            ("ix_subscriptions_plan_seq", vec![S::PlanId, S::Seq]),
            ("ix_subscriptions_customer_seq", vec![S::CustomerId, S::Seq]),
        ];
        for (name, columns) in subscriptions {
            manager.create_index(index(name, S::Table, &columns)).await?;
        }
        manager.create_index(index("ix_webhook_deliveries_event_seq", D::Table, &[D::EventId, D::Seq])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Payments as P;
        use Subscriptions as S;
        use WebhookDeliveries as D;
        let added = [
            ("ix_payments_shop_status_seq", P::Table.into_iden()),
            ("ix_payments_product_seq", P::Table.into_iden()),
            ("ix_payments_plan_seq", P::Table.into_iden()),
            ("ix_payments_subscription_seq", P::Table.into_iden()),
            ("ix_payments_customer_seq", P::Table.into_iden()),
            ("ix_subscriptions_shop_state_seq", S::Table.into_iden()),
            ("ix_subscriptions_plan_seq", S::Table.into_iden()),
            ("ix_subscriptions_customer_seq", S::Table.into_iden()),
            ("ix_webhook_deliveries_event_seq", D::Table.into_iden()),
        ];
        for (name, table) in added {
            manager.drop_index(Index::drop().name(name).table(table).to_owned()).await?;
        }
        let restored = [
            ("ix_payments_product", P::Table.into_iden(), P::ProductId.into_iden()),
            ("ix_payments_plan", P::Table.into_iden(), P::PlanId.into_iden()),
            ("ix_payments_subscription", P::Table.into_iden(), P::SubscriptionId.into_iden()),
            ("ix_payments_customer", P::Table.into_iden(), P::CustomerId.into_iden()),
            ("ix_subscriptions_customer", S::Table.into_iden(), S::CustomerId.into_iden()),
            ("ix_subscriptions_plan", S::Table.into_iden(), S::PlanId.into_iden()),
            ("ix_webhook_deliveries_event", D::Table.into_iden(), D::EventId.into_iden()),
        ];
        for (name, table, column) in restored {
            manager.create_index(Index::create().name(name).table(table).col(column).to_owned()).await?;
        }
        for (name, column) in [("ix_payments_shop_created", P::CreatedAt), ("ix_payments_shop_captured", P::CapturedAt)]
        {
            manager.create_index(index(name, P::Table, &[P::ShopId, column])).await?;
        }
        Ok(())
    }
}
