//! What each dashboard route asks of the signed-in user's role. Every request that takes a
//! [`Merchant`](super::Merchant) is checked here, by its method and route, before its handler
//! runs: a route missing from the table is refused to everyone, so a new page cannot open by
//! accident. Pages hide what the role cannot do with [`Can`].

use super::k;
use crate::domain::access::Permission::{self, *};
use crate::domain::access::Role;

/// Each route's method, path (as the router writes it) and the permission it needs.
pub const ROUTES: &[(&str, &str, Permission)] = &[
    ("GET", "/dashboard", Own),
    ("POST", "/dashboard/logout", Own),
    ("GET", "/dashboard/password", Own),
    ("POST", "/dashboard/password", Own),
    ("POST", "/dashboard/settings/language", Own),
    ("GET", "/dashboard/two-step", Own),
    ("POST", "/dashboard/two-step", Own),
    ("GET", "/dashboard/two-step/qr.svg", Own),
    ("GET", "/dashboard/two-step/codes", Own),
    ("POST", "/dashboard/two-step/codes", Own),
    ("POST", "/dashboard/two-step/off", Own),
    ("POST", "/dashboard/settings/two-step", ShopSecurity),
    ("POST", "/dashboard/settings/sessions", ShopSecurity),
    ("GET", "/dashboard/settings/audit", ReadAudit),
    ("GET", "/dashboard/settings/audit/export.csv", ReadAudit),
    ("GET", "/dashboard/sessions", Own),
    ("POST", "/dashboard/sessions/{handle}/end", Own),
    ("POST", "/dashboard/sessions/end-all", Own),
    ("GET", "/dashboard/settings", Own),
    ("POST", "/dashboard/settings", ChangeShop),
    ("POST", "/dashboard/settings/notifications", ChangeShop),
    ("POST", "/dashboard/settings/disputes", ChangeShop),
    ("POST", "/dashboard/settings/rotate", ApiKeys),
    ("GET", "/dashboard/settings/key", ApiKeys),
    ("GET", "/dashboard/settings/users", ReadUsers),
    ("POST", "/dashboard/settings/users", ChangeUsers),
    ("POST", "/dashboard/settings/users/{id}/role", ChangeUsers),
    ("POST", "/dashboard/settings/users/{id}/remove", ChangeUsers),
    ("POST", "/dashboard/settings/users/{id}/two-step", ChangeUsers),
    ("GET", "/dashboard/settings/invitation", ChangeUsers),
    ("GET", "/dashboard/settings/processor", ReadProcessor),
    ("POST", "/dashboard/settings/processor", ChangeProcessor),
    ("POST", "/dashboard/settings/processor/check", ReadProcessor),
    ("GET", "/dashboard/settings/mails", ReadMails),
    ("POST", "/dashboard/settings/mails", ChangeMails),
    ("POST", "/dashboard/settings/mails/subscriber_pause", ChangeMails),
    ("GET", "/dashboard/settings/mails/preview/{kind}", ReadMails),
    ("GET", "/dashboard/payments", ReadPayments),
    ("GET", "/dashboard/payments/export.csv", Export),
    ("GET", "/dashboard/payments/{id}", ReadPayments),
    ("POST", "/dashboard/payments/{id}/capture", ChangePayments),
    ("POST", "/dashboard/payments/{id}/void", ChangePayments),
    ("POST", "/dashboard/payments/{id}/refund", ChangePayments),
    ("GET", "/dashboard/disputes", ReadPayments),
    ("GET", "/dashboard/disputes/{id}", ReadPayments),
    ("POST", "/dashboard/disputes/{id}", ChangePayments),
    ("POST", "/dashboard/disputes/{id}/accept", ChangePayments),
    ("GET", "/dashboard/products", ReadCatalog),
    ("POST", "/dashboard/products", ChangeCatalog),
    ("GET", "/dashboard/products/new", ChangeCatalog),
    ("GET", "/dashboard/products/{id}", ReadCatalog),
    ("POST", "/dashboard/products/{id}", ChangeCatalog),
    ("GET", "/dashboard/products/{id}/edit", ChangeCatalog),
    ("GET", "/dashboard/products/{id}/qr.svg", ReadCatalog),
    ("GET", "/dashboard/products/{id}/preview", ReadCatalog),
    ("POST", "/dashboard/products/{id}/archive", ChangeCatalog),
    ("GET", "/dashboard/plans", ReadCatalog),
    ("POST", "/dashboard/plans", ChangeCatalog),
    ("GET", "/dashboard/plans/new", ChangeCatalog),
    ("GET", "/dashboard/plans/{id}", ReadCatalog),
    ("POST", "/dashboard/plans/{id}", ChangeCatalog),
    ("GET", "/dashboard/plans/{id}/edit", ChangeCatalog),
    ("GET", "/dashboard/plans/{id}/qr.svg", ReadCatalog),
    ("POST", "/dashboard/plans/{id}/archive", ChangeCatalog),
    ("GET", "/dashboard/coupons", ReadCatalog),
    ("POST", "/dashboard/coupons", ChangeCatalog),
    ("POST", "/dashboard/coupons/{id}/archive", ChangeCatalog),
    ("GET", "/dashboard/customers", ReadCustomers),
    ("POST", "/dashboard/customers", ChangeCustomers),
    ("GET", "/dashboard/customers/export.csv", Export),
    ("GET", "/dashboard/customers/new", ChangeCustomers),
    ("GET", "/dashboard/customers/{id}", ReadCustomers),
    ("POST", "/dashboard/customers/{id}", ChangeCustomers),
    ("GET", "/dashboard/customers/{id}/edit", ChangeCustomers),
    ("POST", "/dashboard/customers/{id}/subscriptions", ChangeCustomers),
    ("GET", "/dashboard/subscriptions", ReadCustomers),
    ("GET", "/dashboard/subscriptions/{id}", ReadCustomers),
    ("POST", "/dashboard/subscriptions/{id}/cancel", ChangeCustomers),
    ("POST", "/dashboard/subscriptions/{id}/keep", ChangeCustomers),
    ("POST", "/dashboard/subscriptions/{id}/pause", ChangeCustomers),
    ("POST", "/dashboard/subscriptions/{id}/resume", ChangeCustomers),
    ("POST", "/dashboard/subscriptions/{id}/change_plan", ChangeCustomers),
    ("POST", "/dashboard/subscriptions/{id}/discount", ChangeCustomers),
    ("POST", "/dashboard/subscriptions/{id}/discount/remove", ChangeCustomers),
    ("GET", "/dashboard/webhooks", ReadWebhooks),
    ("POST", "/dashboard/webhooks", ChangeWebhooks),
    ("GET", "/dashboard/webhooks/{id}", ReadWebhooks),
    ("POST", "/dashboard/webhooks/{id}", ChangeWebhooks),
    ("POST", "/dashboard/webhooks/{id}/rotate", ChangeWebhooks),
    ("POST", "/dashboard/webhooks/{id}/delete", ChangeWebhooks),
    ("POST", "/dashboard/webhooks/{id}/redeliver", ChangeWebhooks),
    ("GET", "/dashboard/api_keys", ApiKeys),
    ("POST", "/dashboard/api_keys", ApiKeys),
    ("GET", "/dashboard/api_keys/{id}", ApiKeys),
    ("POST", "/dashboard/api_keys/{id}", ApiKeys),
    ("POST", "/dashboard/api_keys/{id}/roll", ApiKeys),
    ("POST", "/dashboard/api_keys/{id}/revoke", ApiKeys),
    ("GET", "/dashboard/invoices", ReadBooks),
    ("GET", "/dashboard/invoices/export.csv", Export),
    ("GET", "/dashboard/invoices/{id}", ReadBooks),
    ("GET", "/dashboard/credit_notes", ReadBooks),
    ("GET", "/dashboard/revenue", ReadRevenue),
    ("GET", "/dashboard/revenue/movements", ReadRevenue),
    ("GET", "/dashboard/revenue/subscribers.csv", ReadRevenue),
    ("GET", "/dashboard/credit_notes/{id}", ReadBooks),
    ("GET", "/dashboard/settings/invoicing", ReadBooks),
    ("POST", "/dashboard/settings/seller", ChangeBooks),
    ("POST", "/dashboard/settings/series/{name}", ChangeBooks),
    ("POST", "/dashboard/settings/tax_rates", ChangeBooks),
    ("POST", "/dashboard/settings/tax_rates/{id}/archive", ChangeBooks),
];

/// The forms (posted to these routes) that can redirect money or access: each asks for the
/// password (and a code) again unless the session gave them in the last 10 minutes (see
/// [`super::reauth`]).
pub const FRESH: &[&str] = &[
    "/dashboard/settings",
    "/dashboard/settings/notifications",
    "/dashboard/settings/rotate",
    "/dashboard/settings/processor",
    "/dashboard/settings/two-step",
    "/dashboard/settings/sessions",
    "/dashboard/settings/users",
    "/dashboard/settings/users/{id}/role",
    "/dashboard/settings/users/{id}/remove",
    "/dashboard/settings/users/{id}/two-step",
    "/dashboard/webhooks",
    "/dashboard/webhooks/{id}",
    "/dashboard/webhooks/{id}/rotate",
    "/dashboard/api_keys",
    "/dashboard/api_keys/{id}",
    "/dashboard/api_keys/{id}/roll",
    "/dashboard/api_keys/{id}/revoke",
    "/dashboard/settings/seller",
    "/dashboard/settings/series/{name}",
    "/dashboard/settings/tax_rates",
    "/dashboard/settings/tax_rates/{id}/archive",
];

/// What a user is told when their role may not do what they asked.
pub const REFUSED: &str =
    k("Your role in this shop does not allow this. An owner or an administrator can change your role.");

/// The routes a user of a shop that requires two-step login may use before turning it on.
pub const ENROLMENT: &[&str] =
    &["/dashboard/two-step", "/dashboard/two-step/qr.svg", "/dashboard/two-step/codes", "/dashboard/logout"];

/// The permission a route needs: `None` for a route the table does not know (refused).
pub fn needed(method: &str, path: &str) -> Option<Permission> {
    let method = if method == "HEAD" { "GET" } else { method };
    ROUTES.iter().find(|(m, p, _)| *m == method && *p == path).map(|(_, _, permission)| *permission)
}

/// What the signed-in user's role may do, for pages to show only that.
#[derive(Debug, Clone, Copy)]
pub struct Can {
    pub change_payments: bool,
    pub change_catalog: bool,
    pub change_customers: bool,
    pub export: bool,
    pub api_keys: bool,
    pub read_webhooks: bool,
    pub change_webhooks: bool,
    pub read_processor: bool,
    pub change_processor: bool,
    pub change_mails: bool,
    pub change_shop: bool,
    pub read_users: bool,
    pub change_users: bool,
    pub shop_security: bool,
    pub read_audit: bool,
    pub change_books: bool,
}

impl Can {
    /// What `role` may do.
    pub fn of(role: Role) -> Can {
        Can {
            change_payments: role.can(ChangePayments),
            change_catalog: role.can(ChangeCatalog),
            change_customers: role.can(ChangeCustomers),
            export: role.can(Export),
            api_keys: role.can(ApiKeys),
            read_webhooks: role.can(ReadWebhooks),
            change_webhooks: role.can(ChangeWebhooks),
            read_processor: role.can(ReadProcessor),
            change_processor: role.can(ChangeProcessor),
            change_mails: role.can(ChangeMails),
            change_shop: role.can(ChangeShop),
            read_users: role.can(ReadUsers),
            change_users: role.can(ChangeUsers),
            shop_security: role.can(ShopSecurity),
            read_audit: role.can(ReadAudit),
            change_books: role.can(ChangeBooks),
        }
    }
}
