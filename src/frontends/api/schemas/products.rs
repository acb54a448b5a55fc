//! Products: what `POST /products` and `PUT /products/{id}` accept.

use super::*;

/// A new product (spec 2.1). `shop_id` is accepted too (a JSON integer or digit string) but must
/// be the authenticated shop's id, so it is left out of this schema: omit it.
#[derive(ToSchema)]
#[schema(example = json!({
    "name": "Gift card", "description": "Worth 9.90", "currency": "EUR", "amount": "990",
    "quantity": "5", "expired_at": "2030-06-30T23:59:59+02:00",
    "visible_fields": ["first_name", "email"], "return_url": "https://books.example/thanks"
}))]
pub struct ProductCreate {
    /// What is sold: 1 to 255 characters, not only spaces.
    #[schema(
        max_length = 255,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    name: String,
    /// Shown on the pay page: 1 to 10,000 characters, not only spaces.
    #[schema(
        max_length = 10000,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    description: String,
    /// The price's currency.
    currency: Currency,
    /// The price in minimal units of `currency` (990 is 9.90 EUR).
    amount: MinorAmount,
    /// Units left to sell. Required unless `infinite` is true; must not be sent (or be `null`)
    /// when `infinite` is true.
    quantity: Option<ProductQuantity>,
    /// True when the stock is unlimited (then `quantity` must not be sent).
    #[schema(default = false)]
    infinite: Option<FlexibleBoolean>,
    /// Customer data the pay page asks for (each listed field becomes required on the page).
    /// Duplicates are ignored; `null` reads as none.
    #[schema(default = json!([]))]
    visible_fields: Option<Vec<VisibleField>>,
    /// A test product: paid with test cards only, never charged.
    #[schema(default = false)]
    test: Option<FlexibleBoolean>,
    /// True when the product can be paid forever (then `expired_at` is not needed).
    #[schema(default = false)]
    immortal: Option<FlexibleBoolean>,
    /// Until when the product can be paid: exactly `YYYY-MM-DDThh:mm:ss±hh:mm` (an explicit
    /// numeric offset; no `Z`, no fraction). Required unless `immortal` is true; ignored (but
    /// still checked) when `immortal` is true.
    #[schema(format = DateTime, pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$", example = "2030-06-30T23:59:59+02:00")]
    expired_at: Option<String>,
    /// Where the customer goes after paying: an absolute `http` or `https` URL of at most
    /// 2048 characters. Without it the shop's own URL is used.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    return_url: Option<String>,
    /// Where bePaid-style notifications of this product's payments go (else the shop's
    /// `notification_url`): an absolute `http` or `https` URL of at most 2048 characters.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    notification_url: Option<String>,
    /// The pay page's language.
    #[schema(default = "en")]
    language: Option<Language>,
    /// `payment` takes the money at once; `authorization` holds it for a later capture.
    #[schema(default = "payment")]
    transaction_type: Option<TransactionType>,
    /// The shop's tax rate (`txr_…`) its sales are taxed at; `null` or empty: untaxed. An
    /// archived rate is refused unless it is the one already chosen.
    #[schema(max_length = 100)]
    tax_rate_id: Option<String>,
    /// Whether the price holds the tax (`inclusive`, what the customer pays) or has it added
    /// (`exclusive`).
    #[schema(default = "inclusive")]
    tax_behavior: Option<TaxBehavior>,
    // `quantity` unless `infinite`, `expired_at` unless `immortal`.
    #[serde(flatten)]
    #[schema(schema_with = product_create_rules)]
    rules: Value,
}

/// A change to a product (`PUT /products/{id}`): any subset of the create fields; only those
/// sent change, and the result must obey every rule of a new product. `quantity` is the
/// number of units left; `"infinite": true` clears it, `"infinite": false` on an unlimited
/// product needs a `quantity`; `"immortal": false` needs an `expired_at` if the product has
/// none; `null` removes `return_url`, `notification_url` or `visible_fields`.
#[derive(ToSchema)]
#[schema(example = json!({"amount": "1200", "infinite": true}))]
pub struct ProductUpdate {
    /// What is sold: 1 to 255 characters, not only spaces.
    #[schema(
        nullable = false,
        max_length = 255,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    name: Option<String>,
    /// Shown on the pay page: 1 to 10,000 characters, not only spaces.
    #[schema(
        nullable = false,
        max_length = 10000,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    description: Option<String>,
    /// The price's currency.
    #[schema(nullable = false)]
    currency: Option<Currency>,
    /// The price in minimal units of `currency`.
    #[schema(nullable = false)]
    amount: Option<MinorAmount>,
    /// Units left to sell. Must not be sent together with `"infinite": true`. A new value is
    /// applied as the difference from the quantity read, so units sold meanwhile stay sold
    /// (409 when they would leave fewer than zero).
    quantity: Option<ProductQuantity>,
    /// True makes the stock unlimited (and clears `quantity`); false needs a `quantity` if the
    /// product has none.
    infinite: Option<FlexibleBoolean>,
    /// Customer data the pay page asks for; `null` clears the list.
    visible_fields: Option<Vec<VisibleField>>,
    /// A test product.
    test: Option<FlexibleBoolean>,
    /// True: payable forever (clears `expired_at`); false needs an `expired_at` if the product
    /// has none.
    immortal: Option<FlexibleBoolean>,
    /// Until when the product can be paid: exactly `YYYY-MM-DDThh:mm:ss±hh:mm`.
    #[schema(nullable = false, format = DateTime, pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$", example = "2030-06-30T23:59:59+02:00")]
    expired_at: Option<String>,
    /// Where the customer goes after paying (`null` removes it).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    return_url: Option<String>,
    /// Where notifications of this product's payments go (`null` removes it).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    notification_url: Option<String>,
    /// The pay page's language.
    language: Option<Language>,
    /// `payment` or `authorization`.
    transaction_type: Option<TransactionType>,
    /// The shop's tax rate (`txr_…`) its sales are taxed at; `null` or empty: untaxed. An
    /// archived rate is refused unless it is the one already chosen.
    #[schema(max_length = 100)]
    tax_rate_id: Option<String>,
    /// Whether the price holds the tax (`inclusive`, what the customer pays) or has it added
    /// (`exclusive`).
    tax_behavior: Option<TaxBehavior>,
    // No `quantity` together with `"infinite": true`.
    #[serde(flatten)]
    #[schema(schema_with = product_update_rules)]
    rules: Value,
}

/// ProductCreate: `quantity` is required unless `infinite` is true and must not be sent when
/// it is; `expired_at` is required unless `immortal` is true. One branch per combination.
fn product_create_rules() -> OneOfBuilder {
    let mut rules = OneOfBuilder::new().description(Some(
        "`quantity` is required unless `infinite` is true, and must not be sent (or be null) when it is; \
         `expired_at` is required unless `immortal` is true.",
    ));
    for infinite in [false, true] {
        for immortal in [false, true] {
            let title = format!(
                "{} stock, {}",
                if infinite { "Unlimited" } else { "Counted" },
                if immortal { "payable forever" } else { "payable until expired_at" }
            );
            let mut branch = ObjectBuilder::new().title(Some(title));
            branch = if infinite {
                branch.property("infinite", yes()).required("infinite").property("quantity", absent())
            } else {
                branch.property("infinite", no()).property("quantity", given_number()).required("quantity")
            };
            branch = if immortal {
                branch.property("immortal", yes()).required("immortal")
            } else {
                branch.property("immortal", no()).property("expired_at", given(Type::String)).required("expired_at")
            };
            rules = rules.item(branch);
        }
    }
    rules
}

/// ProductUpdate: no `quantity` together with `"infinite": true`.
fn product_update_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("Making the stock unlimited"))
                .property("infinite", yes())
                .required("infinite")
                .property("quantity", absent()),
        )
        .item(ObjectBuilder::new().title(Some("Keeping or making the stock counted")).property("infinite", no()))
        .description(Some("`quantity` must not be sent together with `\"infinite\": true`."))
}
