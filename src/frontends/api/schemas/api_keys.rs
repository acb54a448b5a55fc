//! Request bodies of API keys.

use utoipa::ToSchema;

use super::*;

/// A new API key.
#[derive(ToSchema)]
#[schema(example = json!({
    "name": "Reporting", "permissions": {"payments": "read", "refunds": "read"},
    "networks": ["203.0.113.0/24"]
}))]
pub struct ApiKeyCreate {
    /// What the merchant calls it (at most 100 characters).
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
    )]
    name: String,
    /// Access per resource: `none`, `read` (its GET operations) or `write` (all of them); a
    /// resource left out is `none`. `null` or absent: a key without restrictions.
    #[schema(schema_with = permissions)]
    permissions: Option<Value>,
    /// The networks it may be used from (`203.0.113.0/24`, `2001:db8::/32`, or a lone
    /// address), at most 100; a network's address has no bits set past its prefix. `null`,
    /// absent or empty: anywhere. A request from elsewhere is refused with 403.
    #[schema(max_items = 100)]
    networks: Option<Vec<Network>>,
    /// When it stops working (in the future); none when absent.
    expires_at: Option<TimeInput>,
}

/// A change to an API key: only what is sent changes; `null` lifts `permissions` or
/// `networks`.
#[derive(ToSchema)]
#[schema(example = json!({"permissions": {"payments": "write"}}))]
pub struct ApiKeyUpdate {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
    )]
    name: Option<String>,
    /// As on create. The standard key takes none (409).
    #[schema(schema_with = permissions)]
    permissions: Option<Value>,
    #[schema(max_items = 100)]
    networks: Option<Vec<Network>>,
}

/// An address or a network: `203.0.113.0/24`, `2001:db8::/32`, `198.51.100.7`.
#[derive(ToSchema)]
#[schema(value_type = String, pattern = r"^\s*[0-9A-Fa-f:.]*[0-9A-Fa-f](/[0-9]{1,3})?\s*$", example = "203.0.113.0/24")]
pub struct Network(String);

/// How a roll ends the rolled key.
#[derive(ToSchema)]
#[schema(example = json!({"expires_at": "2026-12-14T10:00:00Z"}))]
pub struct ApiKeyRoll {
    /// Until when the rolled key goes on working beside its successor: now (the default) up
    /// to 7 days ahead.
    expires_at: Option<TimeInput>,
}

/// `{"payments": "read", …}`: each resource with `none`, `read` or `write`; or `null`.
fn permissions() -> OneOfBuilder {
    let access = || {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(crate::domain::api_key::Access::WORDS.iter().copied()))
    };
    let mut object = ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)));
    for resource in crate::domain::api_key::Resource::WORDS {
        object = object.property(*resource, access());
    }
    OneOfBuilder::new().item(ObjectBuilder::new().schema_type(Type::Null)).item(object)
}
