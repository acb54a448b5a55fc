//! What an API key may do: a key without restrictions may do everything the API offers; a
//! restricted key holds, per resource, no access, `read` (its GET operations) or `write`
//! (every operation, reads included). Which resource and which access each operation needs is
//! decided here, from its method and route, for the check of every request and for the OpenAPI
//! document alike. Also the addresses a key may be used from, and how long a rolled key goes on.

use std::net::IpAddr;

use chrono::{DateTime, Duration, Utc};

use super::Errors;
use super::input::{Reader, storable};
use super::vocab::words;

words! {
    /// What a restricted key's permissions are given for.
    Resource {
        Products = "products", Plans = "plans", Coupons = "coupons", Customers = "customers",
        Payments = "payments", Refunds = "refunds", Subscriptions = "subscriptions", Disputes = "disputes",
        Events = "events", WebhookEndpoints = "webhook_endpoints", TestClocks = "test_clocks", Audit = "audit",
        Invoices = "invoices", TaxRates = "tax_rates", Revenue = "revenue", Shop = "shop"
    }
}

words! {
    /// How much of a resource a key may use: `write` includes `read`.
    Access { None = "none", Read = "read", Write = "write" }
}

/// What an operation needs of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// `access` to `resource`.
    Resource(Resource, Access),
    /// A key without restrictions: the operations on keys themselves.
    Unrestricted,
}

impl Access {
    /// Whether holding this access gives `needed`.
    pub fn covers(self, needed: Access) -> bool {
        let rank = |a: Access| Access::ALL.iter().position(|x| *x == a);
        rank(self) >= rank(needed)
    }
}

/// A key's permissions: `None` for a key without restrictions; else each resource it was given,
/// in the order of [`Resource::ALL`] (a resource left out is `none`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions(pub Option<Vec<(Resource, Access)>>);

impl Permissions {
    /// Whether a key holding these may do what an operation `needs`.
    pub fn allow(&self, needs: Needs) -> bool {
        match (&self.0, needs) {
            (None, _) => true,
            (Some(_), Needs::Unrestricted) => false,
            (Some(given), Needs::Resource(resource, access)) => {
                given.iter().find(|(r, _)| *r == resource).is_some_and(|(_, held)| held.covers(access))
            }
        }
    }

    /// Reads `{"payments": "read", …}`; `Err` names the first resource or access that does not
    /// exist.
    pub fn parse(pairs: &[(String, String)]) -> Result<Permissions, String> {
        let mut given: Vec<(Resource, Access)> = Vec::new();
        for (resource, access) in pairs {
            let r = Resource::parse(resource).ok_or_else(|| format!("`{resource}` is not a permission's resource"))?;
            let a = Access::parse(access)
                .ok_or_else(|| format!("`{access}` is not an access (none, read or write) for `{resource}`"))?;
            given.retain(|(held, _)| *held != r);
            given.push((r, a));
        }
        given.sort_by_key(|(r, _)| Resource::ALL.iter().position(|x| x == r));
        Ok(Permissions(Some(given)))
    }

    /// As stored: a JSON object of each resource given (`{"payments":"read"}`); `None` for a
    /// key without restrictions.
    pub fn to_stored(&self) -> Option<String> {
        let given = self.0.as_ref()?;
        let object: serde_json::Map<String, serde_json::Value> =
            given.iter().map(|(r, a)| (r.as_str().to_string(), a.as_str().into())).collect();
        Some(serde_json::Value::Object(object).to_string())
    }

    /// Reads what [`Self::to_stored`] wrote; stored text that cannot be read gives nothing.
    pub fn from_stored(stored: Option<&str>) -> Permissions {
        let Some(stored) = stored else { return Permissions(None) };
        let pairs: Vec<(String, String)> = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(stored)
            .map(|m| m.into_iter().map(|(r, a)| (r, a.as_str().unwrap_or_default().to_string())).collect())
            .unwrap_or_default();
        Permissions::parse(&pairs).unwrap_or(Permissions(Some(Vec::new())))
    }

    /// The permission a refusal names: `payments:write`, or `unrestricted`.
    pub fn name(needs: Needs) -> String {
        match needs {
            Needs::Resource(resource, access) => format!("{}:{}", resource.as_str(), access.as_str()),
            Needs::Unrestricted => "unrestricted".into(),
        }
    }
}

/// Each API route (as routed: `/payments/{id}/refund`) and the resource its operations use.
const ROUTES: &[(&str, Resource)] = {
    use Resource::*;
    &[
        ("/products", Products),
        ("/products/{id}", Products),
        ("/products/{id}/archive", Products),
        ("/products/{id}/restore", Products),
        ("/plans", Plans),
        ("/plans/{id}", Plans),
        ("/plans/{id}/archive", Plans),
        ("/plans/{id}/restore", Plans),
        ("/coupons", Coupons),
        ("/coupons/{id}", Coupons),
        ("/coupons/{id}/archive", Coupons),
        ("/customers", Customers),
        ("/customers/{id}", Customers),
        ("/customers/{id}/portal_sessions", Subscriptions),
        ("/payments", Payments),
        ("/payments/{id}", Payments),
        ("/payments/{id}/capture", Payments),
        ("/payments/{id}/void", Payments),
        ("/payments/{id}/refund", Refunds),
        ("/refunds", Refunds),
        ("/refunds/{id}", Refunds),
        ("/subscriptions", Subscriptions),
        ("/subscriptions/{id}", Subscriptions),
        ("/subscriptions/{id}/cancel", Subscriptions),
        ("/subscriptions/{id}/pause", Subscriptions),
        ("/subscriptions/{id}/resume", Subscriptions),
        ("/subscriptions/{id}/change_plan", Subscriptions),
        ("/subscriptions/{id}/change_plan/preview", Subscriptions),
        ("/subscriptions/{id}/events", Subscriptions),
        ("/subscriptions/{id}/test_card_outcome", Subscriptions),
        ("/subscriptions/{id}/discount", Subscriptions),
        ("/disputes", Disputes),
        ("/disputes/{id}", Disputes),
        ("/disputes/{id}/close", Disputes),
        ("/events", Events),
        ("/events/{id}", Events),
        ("/webhook_endpoints", WebhookEndpoints),
        ("/webhook_endpoints/{id}", WebhookEndpoints),
        ("/webhook_endpoints/{id}/rotate_secret", WebhookEndpoints),
        ("/webhook_deliveries", WebhookEndpoints),
        ("/events/{id}/redeliver", WebhookEndpoints),
        ("/test_clocks", TestClocks),
        ("/test_clocks/{id}", TestClocks),
        ("/test_clocks/{id}/advance", TestClocks),
        ("/audit_events", Audit),
        ("/audit_events/{id}", Audit),
        ("/invoices", Invoices),
        ("/invoices/{id}", Invoices),
        ("/invoices/{id}/pdf", Invoices),
        ("/invoices/{id}/xml", Invoices),
        ("/invoices/{id}/reissue", Invoices),
        ("/credit_notes", Invoices),
        ("/credit_notes/{id}", Invoices),
        ("/credit_notes/{id}/pdf", Invoices),
        ("/credit_notes/{id}/xml", Invoices),
        ("/tax_rates", TaxRates),
        ("/tax_rates/{id}", TaxRates),
        ("/tax_rates/{id}/archive", TaxRates),
        ("/revenue/mrr", Revenue),
        ("/revenue/movements", Revenue),
        ("/revenue/cohorts", Revenue),
        ("/revenue/subscribers", Revenue),
        ("/shop", Shop),
        ("/shop/seller", Shop),
        ("/shop/series", Shop),
        ("/shop/series/{name}", Shop),
        ("/shop/processor", Shop),
        ("/shop/processor/check", Shop),
    ]
};

/// Routes whose changes need a key without restrictions, whatever its permissions: where the
/// shop's money goes (its processor) and where its notifications go (they carry its standard
/// key), and the keys themselves.
const UNRESTRICTED_CHANGES: &[&str] = &["/shop", "/shop/processor"];

/// What the API operation of `method` on `route` (as routed: `/payments/{id}/refund`) needs:
/// `read` of its resource for GET and HEAD, `write` for the rest; a key without restrictions
/// for the keys' own routes, the changes of [`UNRESTRICTED_CHANGES`] and any route this table
/// does not know.
pub fn needs(method: &str, route: &str) -> Needs {
    let access = if method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD") {
        Access::Read
    } else {
        Access::Write
    };
    match ROUTES.iter().find(|(r, _)| *r == route) {
        Some(_) if access == Access::Write && UNRESTRICTED_CHANGES.contains(&route) => Needs::Unrestricted,
        Some((_, resource)) => Needs::Resource(*resource, access),
        None => Needs::Unrestricted,
    }
}

/// A network a key may be used from: an address and the length of its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    pub address: IpAddr,
    pub prefix: u8,
}

impl Network {
    /// Reads `203.0.113.0/24`, `2001:db8::/32` or a lone address; `None` when it is neither,
    /// or when the address has bits set past its prefix (`203.0.113.7/24`). An IPv4 network
    /// written as IPv6 (`::ffff:203.0.113.0/120`) is kept as the IPv4 one.
    pub fn parse(text: &str) -> Option<Network> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => {
                let plain = !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()) && prefix.len() <= 3;
                (address.parse::<IpAddr>().ok()?, Some(prefix.parse::<u8>().ok().filter(|_| plain)?))
            }
            None => (text.parse::<IpAddr>().ok()?, None),
        };
        let bits = if address.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(bits);
        if prefix > bits || mask(address, prefix) != bits_of(address) {
            return None;
        }
        Some(match address {
            IpAddr::V6(v6) if prefix >= 96 => match v6.to_ipv4_mapped() {
                Some(v4) => Network { address: IpAddr::V4(v4), prefix: prefix - 96 },
                None => Network { address, prefix },
            },
            _ => Network { address, prefix },
        })
    }

    /// Whether `address` is in this network; an IPv4 address given as IPv6 (`::ffff:a.b.c.d`)
    /// is in the IPv4 networks that hold it, and in the IPv6 ones that hold its IPv6 form.
    pub fn contains(&self, address: IpAddr) -> bool {
        let holds = |a: IpAddr| {
            a.is_ipv4() == self.address.is_ipv4() && mask(a, self.prefix) == mask(self.address, self.prefix)
        };
        let as_v4 = match address {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        holds(address) || as_v4.is_some_and(holds)
    }
}

/// The networks a key may be used from, as stored (space-separated), or `None` for anywhere.
pub fn networks_to_stored(networks: &[Network]) -> Option<String> {
    (!networks.is_empty()).then(|| networks.iter().map(Network::to_string).collect::<Vec<_>>().join(" "))
}

/// Whether a key whose stored networks are `stored` may be used from `address` (unknown when
/// paydesk cannot tell where a request came from): anywhere when it has none.
pub fn reachable(stored: Option<&str>, address: Option<IpAddr>) -> bool {
    let Some(stored) = stored.filter(|s| !s.trim().is_empty()) else { return true };
    let Some(address) = address else { return false };
    stored.split_whitespace().filter_map(Network::parse).any(|n| n.contains(address))
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.address, self.prefix)
    }
}

fn bits_of(address: IpAddr) -> u128 {
    match address {
        IpAddr::V4(v4) => u32::from(v4) as u128,
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// The first `prefix` bits of `address`.
fn mask(address: IpAddr, prefix: u8) -> u128 {
    let bits: u32 = if address.is_ipv4() { 32 } else { 128 };
    let keep = u32::from(prefix).min(bits);
    let kept = if keep == 0 { 0 } else { u128::MAX << (128 - keep) >> (128 - bits) };
    bits_of(address) & kept
}

/// The longest name of a key.
pub const MAX_NAME: usize = 100;
/// The most networks a key may be used from.
pub const MAX_NETWORKS: usize = 100;

/// What a request sets of a key: on a create, a name (required), its permissions, networks
/// and expiry; on an update, any of the first three (each left as it is when not sent,
/// permissions and networks lifted by `null`).
#[derive(Debug, Default, PartialEq)]
pub struct KeyFields {
    pub name: Option<String>,
    pub permissions: Option<Permissions>,
    pub networks: Option<Vec<Network>>,
    pub expires_at: Option<DateTime<Utc>>,
}

impl KeyFields {
    /// Reads a create (`create`) or an update at `now`.
    pub fn read(r: &Reader, create: bool, now: DateTime<Utc>) -> Result<KeyFields, Errors> {
        let mut e = Errors::default();
        let name = r.string("name", MAX_NAME, &mut e).map(|n| n.trim().to_string());
        if !create && matches!(r.value("name"), Some(serde_json::Value::String(t)) if t.trim().is_empty()) {
            e.add("name", "can't be blank");
        }
        if name.as_deref().is_some_and(|n| !storable(n) || n.chars().any(char::is_control)) {
            e.add("name", "must not hold control characters");
        }
        let permissions = match r.value("permissions") {
            None => (create || r.sent("permissions")).then_some(Permissions(None)),
            Some(serde_json::Value::Object(map)) => {
                let mut pairs = Vec::new();
                for (resource, access) in map {
                    match access.as_str() {
                        Some(access) => pairs.push((resource.clone(), access.to_string())),
                        None => e.add(&format!("permissions.{resource}"), "must be none, read or write"),
                    }
                }
                Permissions::parse(&pairs).map_err(|problem| e.add("permissions", problem)).ok()
            }
            Some(_) => {
                e.add("permissions", "must be an object of resources and their access, or null");
                None
            }
        };
        let networks = match r.value("networks") {
            None => (create || r.sent("networks")).then(Vec::new),
            Some(_) => r.strings("networks", &mut e).and_then(|texts| {
                if texts.len() > MAX_NETWORKS {
                    e.add("networks", format!("must hold at most {MAX_NETWORKS} networks"));
                }
                let read: Vec<Option<Network>> = texts.iter().map(|t| Network::parse(t)).collect();
                for (text, _) in texts.iter().zip(&read).filter(|(_, n)| n.is_none()) {
                    e.add("networks", format!("`{text}` is not an address or a network (203.0.113.0/24)"));
                }
                read.into_iter().collect::<Option<Vec<Network>>>()
            }),
        };
        let expires_at = match r.value("expires_at") {
            None => None,
            Some(_) if !create => {
                e.add("expires_at", "cannot be changed: roll the key to end it");
                None
            }
            Some(value) => match moment_of(value) {
                Some(at) if at > now => Some(at),
                Some(_) => {
                    e.add("expires_at", "must be in the future");
                    None
                }
                None => {
                    e.add("expires_at", "must be a time (RFC 3339) or Unix seconds");
                    None
                }
            },
        };
        if create {
            e.require("name", name.is_none());
        }
        e.into_result(|| KeyFields { name, permissions, networks, expires_at })
    }
}

/// Until when a rolled key goes on, as a roll's body gives it (`expires_at`): now when not
/// given.
pub fn read_roll(r: &Reader, now: DateTime<Utc>) -> Result<DateTime<Utc>, Errors> {
    let until = match r.value("expires_at") {
        None => None,
        Some(value) => Some(
            moment_of(value).ok_or_else(|| Errors::one("expires_at", "must be a time (RFC 3339) or Unix seconds"))?,
        ),
    };
    rolled_until(now, until).map_err(|problem| Errors::one("expires_at", problem))
}

/// A moment given as RFC 3339 text or Unix seconds.
fn moment_of(value: &serde_json::Value) -> Option<DateTime<Utc>> {
    match value {
        serde_json::Value::String(text) => super::event::moment(text.trim()),
        serde_json::Value::Number(n) => n.as_i64().and_then(|s| super::event::moment(&s.to_string())),
        _ => None,
    }
}

/// The longest a rolled key goes on working beside its successor.
pub const LONGEST_OVERLAP: Duration = Duration::days(7);

/// How long before a key stops working its owners are told.
pub const WARN_BEFORE: Duration = Duration::days(7);

/// Until when a key rolled at `now` goes on working, asked to stop at `until` (now if not
/// given); `Err` when that is in the past or further than [`LONGEST_OVERLAP`] away.
pub fn rolled_until(now: DateTime<Utc>, until: Option<DateTime<Utc>>) -> Result<DateTime<Utc>, String> {
    let until = until.unwrap_or(now);
    if until < now {
        return Err("must not be in the past".into());
    }
    if until > now + LONGEST_OVERLAP {
        return Err("must be at most 7 days from now".into());
    }
    Ok(until)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(pairs: &[(&str, &str)]) -> Permissions {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(r, a)| (r.to_string(), a.to_string())).collect();
        Permissions::parse(&pairs).unwrap()
    }

    #[test]
    fn each_route_needs_its_resource_and_write_includes_read() {
        use Resource::*;
        assert_eq!(needs("GET", "/payments/{id}"), Needs::Resource(Payments, Access::Read));
        assert_eq!(needs("HEAD", "/payments/{id}"), Needs::Resource(Payments, Access::Read));
        assert_eq!(needs("POST", "/payments/{id}/capture"), Needs::Resource(Payments, Access::Write));
        assert_eq!(needs("POST", "/payments/{id}/refund"), Needs::Resource(Refunds, Access::Write));
        assert_eq!(needs("GET", "/credit_notes/{id}/pdf"), Needs::Resource(Invoices, Access::Read));
        assert_eq!(needs("GET", "/webhook_deliveries"), Needs::Resource(WebhookEndpoints, Access::Read));
        assert_eq!(needs("POST", "/api_keys"), Needs::Unrestricted);
        assert_eq!(needs("GET", "/shop"), Needs::Resource(Shop, Access::Read));
        assert_eq!(needs("PUT", "/shop"), Needs::Unrestricted);
        assert_eq!(needs("PUT", "/shop/processor"), Needs::Unrestricted);
        assert_eq!(needs("PUT", "/shop/seller"), Needs::Resource(Shop, Access::Write));
        assert_eq!(needs("GET", "/payments/{id}/something_new"), Needs::Unrestricted, "a route not in the table");

        let reader = given(&[("payments", "read"), ("refunds", "write")]);
        assert!(reader.allow(Needs::Resource(Payments, Access::Read)));
        assert!(!reader.allow(Needs::Resource(Payments, Access::Write)));
        assert!(reader.allow(Needs::Resource(Refunds, Access::Read)));
        assert!(!reader.allow(Needs::Resource(Products, Access::Read)));
        assert!(!reader.allow(Needs::Unrestricted));
        assert!(Permissions(None).allow(Needs::Unrestricted));
        assert_eq!(Permissions::name(Needs::Resource(Payments, Access::Write)), "payments:write");
    }

    #[test]
    fn an_unknown_resource_or_access_is_named() {
        let pairs = vec![("payment".to_string(), "read".to_string())];
        assert_eq!(Permissions::parse(&pairs).unwrap_err(), "`payment` is not a permission's resource");
        let pairs = vec![("payments".to_string(), "admin".to_string())];
        assert!(Permissions::parse(&pairs).unwrap_err().contains("`admin`"));
    }

    #[test]
    fn networks_hold_their_addresses_only() {
        let net = Network::parse("203.0.113.0/24").unwrap();
        assert!(net.contains("203.0.113.255".parse().unwrap()));
        assert!(net.contains("::ffff:203.0.113.9".parse().unwrap()));
        assert!(!net.contains("203.0.114.1".parse().unwrap()));
        assert!(!net.contains("2001:db8::1".parse().unwrap()));
        let lone = Network::parse("198.51.100.7").unwrap();
        assert_eq!(lone.to_string(), "198.51.100.7/32");
        assert!(lone.contains("198.51.100.7".parse().unwrap()) && !lone.contains("198.51.100.8".parse().unwrap()));
        let v6 = Network::parse("2001:db8::/32").unwrap();
        assert!(v6.contains("2001:db8:ffff::1".parse().unwrap()) && !v6.contains("2001:db9::1".parse().unwrap()));
        assert!(Network::parse("0.0.0.0/0").unwrap().contains("192.0.2.1".parse().unwrap()));
        let mapped = Network::parse("::ffff:203.0.113.0/120").unwrap();
        assert_eq!(mapped, net, "an IPv4 network written as IPv6 is the IPv4 one");
        assert!(Network::parse("::ffff:198.51.100.7").unwrap().contains("198.51.100.7".parse().unwrap()));
        assert!(Network::parse("::/0").unwrap().contains("::ffff:192.0.2.1".parse().unwrap()));
        for bad in
            ["203.0.113.7/24", "203.0.113.0/33", "2001:db8::/129", "example.com", "203.0.113.0/", "", "10.0.0.0/+8"]
        {
            assert_eq!(Network::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn permissions_and_networks_are_stored_as_they_were_given() {
        let given = given(&[("refunds", "write"), ("payments", "read")]);
        let stored = given.to_stored().unwrap();
        assert_eq!(stored, r#"{"payments":"read","refunds":"write"}"#);
        assert_eq!(Permissions::from_stored(Some(&stored)), given);
        assert_eq!(Permissions::from_stored(None), Permissions(None));
        assert_eq!(Permissions::from_stored(Some("not json")), Permissions(Some(Vec::new())));
        let nets = [Network::parse("203.0.113.0/24").unwrap(), Network::parse("2001:db8::/32").unwrap()];
        let stored = networks_to_stored(&nets).unwrap();
        assert_eq!(stored, "203.0.113.0/24 2001:db8::/32");
        assert!(reachable(Some(&stored), Some("203.0.113.4".parse().unwrap())));
        assert!(!reachable(Some(&stored), Some("198.51.100.4".parse().unwrap())));
        assert!(!reachable(Some(&stored), None));
        assert!(reachable(None, None));
        assert_eq!(networks_to_stored(&[]), None);
    }

    #[test]
    fn a_rolled_key_goes_on_for_at_most_seven_days() {
        let now = DateTime::parse_from_rfc3339("2026-12-07T10:00:00Z").unwrap().with_timezone(&Utc);
        assert_eq!(rolled_until(now, None), Ok(now));
        assert_eq!(rolled_until(now, Some(now + Duration::days(7))), Ok(now + Duration::days(7)));
        assert!(rolled_until(now, Some(now + Duration::days(7) + Duration::seconds(1))).is_err());
        assert!(rolled_until(now, Some(now - Duration::seconds(1))).is_err());
    }
}
