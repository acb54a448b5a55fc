//! The closed vocabularies of the API: languages, transaction types, interval units and the
//! customer-data fields a pay page can ask for. Each is stored and sent as its word.

/// A closed vocabulary: an enum whose values are stored and sent as their words. Rows are
/// read through sea-orm's string-backed `ActiveEnum`, so a stored word outside the
/// vocabulary is an error when the row is read, never a silent default.
macro_rules! words {
    ($(#[doc = $doc:literal])* $name:ident { $($variant:ident = $word:literal),+ $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, sea_orm::EnumIter, sea_orm::DeriveActiveEnum)]
        #[sea_orm(rs_type = "String", db_type = "Text")]
        pub enum $name { $(#[sea_orm(string_value = $word)] $variant),+ }

        impl $name {
            /// Every value, in the order of the spec.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every word, in the same order.
            pub const WORDS: &'static [&'static str] = &[$($word),+];

            /// The word used in the API and the database.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }

            /// The value for a word, if it is one.
            pub fn parse(word: &str) -> Option<Self> {
                match word { $($word => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        /// In the OpenAPI document: a string, one of the words.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                let description = concat!($($doc, "\n"),*).lines().map(str::trim).collect::<Vec<_>>().join(" ");
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some($name::WORDS.iter().copied()))
                    .description(Some(description).filter(|d| !d.is_empty()))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }
        }
    };
}

pub(crate) use words;

words! {
    /// Languages of the hosted pages (design.md).
    Language {
        En = "en", Es = "es", Tr = "tr", De = "de", It = "it", Ru = "ru", Zh = "zh", Fr = "fr",
        Da = "da", Sv = "sv", No = "no", Fi = "fi", Pl = "pl", Ja = "ja", Be = "be", Uk = "uk",
        Ka = "ka", Ro = "ro",
    }
}

words! {
    /// What a subscriber page token opens: a `link` (used once, it opens a session) or the
    /// `session` itself.
    PortalTokenKind { Link = "link", Session = "session" }
}

words! {
    /// Languages of the dashboard: what a user reads it in.
    DashboardLanguage { En = "en", Ru = "ru" }
}

words! {
    /// `payment` captures at once; `authorization` holds the funds for a later capture.
    TransactionType { Payment = "payment", Authorization = "authorization" }
}

words! {
    /// The unit of a plan's or trial's interval.
    IntervalUnit { Hour = "hour", Day = "day", Month = "month" }
}

words! {
    /// Customer-data fields that a product's pay page asks for.
    VisibleField {
        FirstName = "first_name", LastName = "last_name", Country = "country", State = "state",
        City = "city", Address = "address", Zip = "zip", Phone = "phone",
        BirthDate = "birth_date", Email = "email", TaxpayerId = "taxpayer_id",
        Company = "company", VatId = "vat_id",
    }
}

impl VisibleField {
    /// Whether a page may be sent without it: a company and a VAT id are for buyers who have
    /// them (a business); every other field the merchant asks for must be filled in.
    pub fn optional(self) -> bool {
        matches!(self, VisibleField::Company | VisibleField::VatId)
    }
}

words! {
    /// Where a payment stands. `processing` is only seen while the acquirer is asked; a
    /// succeeded payment becomes `partially_refunded`, then `refunded` as refunds give it back.
    PaymentStatus {
        Processing = "processing", Succeeded = "succeeded", Authorized = "authorized",
        Voided = "voided", Failed = "failed", Error = "error",
        PartiallyRefunded = "partially_refunded", Refunded = "refunded",
    }
}

impl PaymentStatus {
    /// Whether the money of a payment in this status was taken (some may be given back).
    pub fn is_taken(self) -> bool {
        matches!(self, PaymentStatus::Succeeded | PaymentStatus::PartiallyRefunded | PaymentStatus::Refunded)
    }
}

words! {
    /// Where a refund stands: `pending` until the acquirer answers.
    RefundStatus { Pending = "pending", Succeeded = "succeeded", Failed = "failed" }
}

words! {
    /// Where a test clock stands: `advancing` while the engine catches up with its new time.
    ClockStatus { Ready = "ready", Advancing = "advancing" }
}

words! {
    /// Where a hosted form's checkout attempt stands: `running` while its submit is being
    /// handled, `done` once it paid, `open` again after a refusal that charged nothing.
    AttemptStatus { Running = "running", Done = "done", Open = "open" }
}

// Written out because the enum comes from `words!`, which cannot mark a variant `#[default]`.
#[allow(clippy::derivable_impls)]
impl Default for Language {
    fn default() -> Self {
        Language::En
    }
}

#[allow(clippy::derivable_impls)]
impl Default for DashboardLanguage {
    fn default() -> Self {
        DashboardLanguage::En
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        for l in Language::ALL {
            assert_eq!(Language::parse(l.as_str()), Some(*l));
        }
        assert_eq!(Language::ALL.len(), 18);
        assert_eq!(VisibleField::ALL.len(), 13);
        assert_eq!(IntervalUnit::parse("week"), None);
        assert_eq!(TransactionType::parse("Payment"), None);
    }
}
