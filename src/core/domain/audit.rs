//! The audit trail: who did what to which object of a shop, from where, with what outcome,
//! each record chained to the one before it of its shop by a SHA-256 hash, so that a record
//! changed, removed or slipped in afterwards shows (see [`chain_hash`] and [`verify`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Errors;
use super::access::Role;
use super::vocab::words;

words! {
    /// Who acted: a dashboard user, an integration by the shop's API key, the operator on the
    /// command line, a subscriber on their page, a processor's notification, or paydesk itself.
    ActorKind { User = "user", ApiKey = "api_key", Operator = "operator", Subscriber = "subscriber", Processor = "processor", System = "system" }
}

words! {
    /// How it ended: done, refused (the actor may not, or gave wrong credentials), or failed.
    Outcome { Success = "success", Refused = "refused", Failure = "failure" }
}

/// Who acted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub kind: ActorKind,
    /// The user's id, the key's prefix, the subscriber's customer id…
    pub id: Option<String>,
    /// What a person reads: the user's e-mail address, "secret key …abcd".
    pub label: Option<String>,
    /// A user's role when they acted.
    pub role: Option<Role>,
}

impl Actor {
    /// A dashboard user.
    pub fn user(id: &str, email: &str, role: Role) -> Actor {
        Actor { kind: ActorKind::User, id: Some(id.into()), label: Some(email.into()), role: Some(role) }
    }

    /// Someone who gave an e-mail address but is not (yet) known as a user: a failed login.
    pub fn claimed(email: &str) -> Actor {
        Actor { kind: ActorKind::User, id: None, label: Some(email.into()), role: None }
    }

    /// The operator on the command line.
    pub fn operator() -> Actor {
        Actor { kind: ActorKind::Operator, id: None, label: None, role: None }
    }

    /// An integration, by one of the shop's API keys: its id, and its name with the start of
    /// its secret (`Reporting (sk_ab12…)`).
    pub fn api_key(id: &str, name: &str, prefix: Option<&str>) -> Actor {
        let label = match prefix {
            Some(prefix) => format!("{name} ({prefix}…)"),
            None => name.to_string(),
        };
        Actor { kind: ActorKind::ApiKey, id: Some(id.into()), label: Some(label), role: None }
    }

    /// A subscriber on their page.
    pub fn subscriber(customer_id: &str) -> Actor {
        Actor { kind: ActorKind::Subscriber, id: Some(customer_id.into()), label: None, role: None }
    }

    /// paydesk itself (an account locked by wrong passwords).
    pub fn system() -> Actor {
        Actor { kind: ActorKind::System, id: None, label: None, role: None }
    }

    /// A processor's notification.
    pub fn processor(name: &str) -> Actor {
        Actor { kind: ActorKind::Processor, id: None, label: Some(name.into()), role: None }
    }
}

/// Where a request came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub address: Option<String>,
    pub user_agent: Option<String>,
    pub request_id: Option<String>,
}

/// One field changed: its value before and after (`None`: it had none, or the object did not
/// exist). A secret's values are never kept, only [`SECRET`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// What stands for a secret's value in a change.
pub const SECRET: &str = "(secret)";

impl Change {
    /// `field` went from `before` to `after`.
    pub fn of(field: &str, before: impl Serialize, after: impl Serialize) -> Change {
        Change { field: field.into(), before: json!(before), after: json!(after) }
    }

    /// A moment as a change records it: to the second, in UTC (`2026-12-05T10:00:00Z`).
    pub fn moment(at: chrono::DateTime<chrono::Utc>) -> String {
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }

    /// A secret `field` changed (whether it had one before).
    pub fn secret(field: &str, had: bool) -> Change {
        Change { field: field.into(), before: if had { json!(SECRET) } else { Value::Null }, after: json!(SECRET) }
    }
}

/// The fields whose values differ between `before` and `after` (two JSON objects of the same
/// object), with those of `secrets` recorded only as changed.
pub fn changes(before: &Value, after: &Value, secrets: &[&str]) -> Vec<Change> {
    let empty = serde_json::Map::new();
    let (b, a) = (before.as_object().unwrap_or(&empty), after.as_object().unwrap_or(&empty));
    let mut fields: Vec<&String> = b.keys().chain(a.keys()).collect();
    fields.sort();
    fields.dedup();
    fields
        .into_iter()
        .filter(|f| b.get(*f) != a.get(*f))
        .map(|f| match secrets.contains(&f.as_str()) {
            true => Change::secret(f, b.get(f).is_some_and(|v| !v.is_null())),
            false => Change {
                field: f.clone(),
                before: b.get(f).cloned().unwrap_or(Value::Null),
                after: a.get(f).cloned().unwrap_or(Value::Null),
            },
        })
        .collect()
}

/// What a list of records may be narrowed to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// The acting user's id, or an actor kind's word (`api_key`, `operator`…).
    pub actor: Option<String>,
    /// An action, or the start of one ending in `.` (`user.` for every action on users).
    pub action: Option<String>,
    pub object_id: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

impl Filter {
    /// The filter of a query's pairs: `actor`, `action`, `object_id`, and `created[gte]`,
    /// `created[gt]`, `created[lte]`, `created[lt]` (RFC 3339 or Unix seconds); others are
    /// left to the list's paging.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, Errors> {
        let mut filter = Filter::default();
        let mut errors = Errors::default();
        let text = |value: &str| Some(value.to_string()).filter(|v| !v.is_empty());
        for (key, value) in pairs {
            let (key, value) = (key.as_ref(), value.as_ref().trim());
            if super::event::read_bound("created", (key, value), &mut filter.from, &mut filter.until, &mut errors) {
                continue;
            }
            match key {
                "actor" => filter.actor = text(value),
                "action" => filter.action = text(value),
                "object_id" => filter.object_id = text(value),
                _ => {}
            }
        }
        for (field, value) in [("actor", &filter.actor), ("action", &filter.action), ("object_id", &filter.object_id)] {
            if value.as_ref().is_some_and(|v| v.chars().count() > 200) {
                errors.add(field, "is too long (maximum is 200 characters)");
            }
        }
        errors.into_result(|| filter)
    }
}

/// What is to be recorded of one action.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub shop_id: i64,
    pub actor: Actor,
    pub origin: Origin,
    /// `object.verb`, like `user.invited`, `api_key.rotated`, `product.updated`.
    pub action: String,
    /// The object acted on: its kind (`user`, `product`, `shop`…) and id.
    pub object: Option<(String, String)>,
    pub changes: Vec<Change>,
    pub outcome: Outcome,
}

impl Entry {
    /// A successful `action` of `actor`, with no object yet.
    pub fn new(shop_id: i64, actor: Actor, origin: Origin, action: &str) -> Entry {
        Entry {
            shop_id,
            actor,
            origin,
            action: action.into(),
            object: None,
            changes: Vec::new(),
            outcome: Outcome::Success,
        }
    }

    /// The same entry about `kind` `id`.
    pub fn on(mut self, kind: &str, id: impl Into<String>) -> Entry {
        self.object = Some((kind.into(), id.into()));
        self
    }

    /// The same entry with these changes.
    pub fn changing(mut self, changes: Vec<Change>) -> Entry {
        self.changes = changes;
        self
    }

    /// The same entry with another outcome.
    pub fn ended(mut self, outcome: Outcome) -> Entry {
        self.outcome = outcome;
        self
    }
}

/// Actions the shop's owners are mailed about when done: whatever could hand the shop's money
/// or its access to someone else, and an account locked by wrong passwords.
pub const NOTIFIED: [&str; 19] = [
    "user.created",
    "user.invited",
    "user.joined",
    "user.removed",
    "user.role_changed",
    "user.locked",
    "api_key.rotated",
    "api_key.created",
    "api_key.updated",
    "api_key.rolled",
    "api_key.revoked",
    "api_key.expiring",
    "processor.updated",
    "webhook_endpoint.created",
    "webhook_endpoint.updated",
    "webhook_endpoint.deleted",
    "webhook_endpoint.secret_rotated",
    "two_step.disabled",
    "two_step.reset",
];

/// Settings of the shop whose change its owners are mailed about: where customers return
/// and notifications go, and whether the team must use two-step login.
pub const NOTIFIED_SETTINGS: [&str; 3] = ["url", "notification_url", "two_step_required"];

impl Entry {
    /// Whether the shop's owners are told of this entry (a refusal changed nothing to tell).
    pub fn notifies_owners(&self) -> bool {
        let setting = || {
            self.action == "shop.updated" && self.changes.iter().any(|c| NOTIFIED_SETTINGS.contains(&c.field.as_str()))
        };
        self.outcome == Outcome::Success && (NOTIFIED.contains(&self.action.as_str()) || setting())
    }
}

/// A record as stored: the entry, where it stands in its shop's chain, and its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub id: String,
    pub seq: i64,
    pub at: DateTime<Utc>,
    pub entry: Entry,
    pub prev_hash: String,
    pub hash: String,
}

/// The hash of a record: SHA-256 over the previous record's hash and every field of this one
/// in a fixed order, as hex. The fields are written as one compact JSON array (each change an
/// object of `field`, `before`, `after`): `[id, shop, seq, at (ms), actor kind, actor id,
/// actor label, role, address, user agent, request id, action, object type, object id,
/// changes, outcome]`.
pub fn chain_hash(id: &str, seq: i64, at: DateTime<Utc>, entry: &Entry, prev_hash: &str) -> String {
    let (before, after) = hashed_around_seq(id, at, entry);
    link_hash(prev_hash, &before, seq, &after)
}

/// The fields a record's hash covers (see [`chain_hash`]) as the JSON written before its
/// number and after it. SQLite chains a record in the transaction of its change, where its
/// number is known only to the database, which finishes the hash with [`link_hash`].
pub fn hashed_around_seq(id: &str, at: DateTime<Utc>, entry: &Entry) -> (String, String) {
    let before = (id, entry.shop_id);
    let after = (
        at.timestamp_millis(),
        entry.actor.kind.as_str(),
        &entry.actor.id,
        &entry.actor.label,
        entry.actor.role.map(|r| r.as_str()),
        &entry.origin.address,
        &entry.origin.user_agent,
        &entry.origin.request_id,
        &entry.action,
        entry.object.as_ref().map(|o| o.0.as_str()),
        entry.object.as_ref().map(|o| o.1.as_str()),
        &entry.changes,
        entry.outcome.as_str(),
    );
    // These types always serialise, each tuple as an array: `[a,b]` becomes `[a,b,`, and
    // `[c,d]` becomes `,c,d]`, which joined around the number make the array of them all.
    let (mut before, after) = (json(&before), json(&after));
    before.pop();
    before.push(',');
    (before, format!(",{}", after.strip_prefix('[').unwrap_or(&after)))
}

fn json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// SHA-256, as hex, over `prev_hash`, a line break, and a record's fields with its number
/// `seq` between `before` and `after` (see [`hashed_around_seq`]).
pub fn link_hash(prev_hash: &str, before: &str, seq: i64, after: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut sum = Sha256::new();
    for part in [prev_hash, "\n", before, &seq.to_string(), after] {
        sum.update(part.as_bytes());
    }
    super::ids::hex(&sum.finalize())
}

/// What a check of a shop's chain found wrong first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// A record's hash is not the hash of its contents: it was changed.
    Altered { seq: i64 },
    /// A record does not follow the one before it: one was removed or slipped in between.
    Unlinked { seq: i64 },
}

/// Checks `records` (one shop's, in order of `seq`, from the oldest kept): each hashes to its
/// own hash, follows the one before it with no gap, and names its hash as the previous one.
/// The oldest kept record's link to what was pruned before it is taken as given.
pub fn verify(records: &[Record]) -> Result<(), Broken> {
    let mut before: Option<&Record> = None;
    for r in records {
        if chain_hash(&r.id, r.seq, r.at, &r.entry, &r.prev_hash) != r.hash {
            return Err(Broken::Altered { seq: r.seq });
        }
        if let Some(b) = before
            && (r.seq != b.seq + 1 || r.prev_hash != b.hash)
        {
            return Err(Broken::Unlinked { seq: r.seq });
        }
        before = Some(r);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: i64) -> Vec<Record> {
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let mut prev = String::new();
        (1..=n)
            .map(|seq| {
                let entry =
                    Entry::new(7, Actor::user("usr_1", "ann@example.com", Role::Owner), Origin::default(), "x.y")
                        .on("product", format!("prd_{seq}"))
                        .changing(vec![Change::of("name", "Old", "New")]);
                let id = format!("aud_{seq}");
                let hash = chain_hash(&id, seq, at, &entry, &prev);
                let record = Record { id, seq, at, entry, prev_hash: prev.clone(), hash: hash.clone() };
                prev = hash;
                record
            })
            .collect()
    }

    /// The hash as first defined: the fields made a JSON value, then written out.
    fn hash_as_defined(id: &str, seq: i64, at: DateTime<Utc>, entry: &Entry, prev_hash: &str) -> String {
        use sha2::{Digest, Sha256};
        let fields = json!([
            id,
            entry.shop_id,
            seq,
            at.timestamp_millis(),
            entry.actor.kind.as_str(),
            entry.actor.id,
            entry.actor.label,
            entry.actor.role.map(|r| r.as_str()),
            entry.origin.address,
            entry.origin.user_agent,
            entry.origin.request_id,
            entry.action,
            entry.object.as_ref().map(|o| o.0.as_str()),
            entry.object.as_ref().map(|o| o.1.as_str()),
            entry.changes,
            entry.outcome.as_str(),
        ]);
        let sum = Sha256::digest(format!("{prev_hash}\n{fields}"));
        sum.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn the_hash_is_the_one_first_defined() {
        let at = DateTime::from_timestamp_millis(1_800_000_000_123).unwrap();
        let origin = Origin {
            address: Some("203.0.113.9".into()),
            user_agent: Some("Mozilla/5.0 \"quoted\" \\ back\u{7f}".into()),
            request_id: Some("req_1".into()),
        };
        let changes = vec![
            Change::of("name", Value::Null, "Ёлка «новая» 🎄\n\t"),
            Change::of("amount", 990, -1_i64),
            Change::of("additional_data", json!({"z": [1, 2.5, null], "a": {"é": true}}), json!({})),
            Change::of("password", SECRET, SECRET),
        ];
        let entries = [
            Entry::new(7, Actor::user("usr_1", "ann@example.com", Role::Owner), origin, "product.updated")
                .on("product", "prd_1")
                .changing(changes),
            Entry::new(i64::MAX, Actor::system(), Origin::default(), "x.y"),
        ];
        for entry in &entries {
            for prev in ["", "ab12"] {
                assert_eq!(chain_hash("aud_1", 42, at, entry, prev), hash_as_defined("aud_1", 42, at, entry, prev));
            }
        }
    }

    #[test]
    fn a_chain_as_written_verifies() {
        assert_eq!(verify(&chain(5)), Ok(()));
        assert_eq!(verify(&chain(5)[2..]), Ok(()), "what is kept after pruning still verifies");
    }

    #[test]
    fn a_changed_removed_or_reordered_record_is_found() {
        let mut altered = chain(5);
        altered[2].entry.changes[0].after = json!("Mine");
        assert_eq!(verify(&altered), Err(Broken::Altered { seq: 3 }));
        let mut removed = chain(5);
        removed.remove(2);
        assert_eq!(verify(&removed), Err(Broken::Unlinked { seq: 4 }));
        let mut swapped = chain(5);
        swapped.swap(1, 2);
        assert!(verify(&swapped).is_err());
    }

    #[test]
    fn secrets_are_recorded_only_as_changed() {
        let before = json!({"url": "https://a.example", "secret": "whsec_old", "same": 1});
        let after = json!({"url": "https://b.example", "secret": "whsec_new", "same": 1});
        let found = changes(&before, &after, &["secret"]);
        assert_eq!(
            found,
            vec![Change::secret("secret", true), Change::of("url", "https://a.example", "https://b.example")]
        );
        assert!(!format!("{found:?}").contains("whsec_"));
    }
}
