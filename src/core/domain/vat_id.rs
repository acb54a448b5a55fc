//! VAT ids: their form per country, checked offline (there is no VIES query from here), and
//! when a sale between two EU countries is reverse-charged.

/// The EU's member states (ISO 3166-1), whose VAT ids VIES knows.
const EU: &str = "AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK";

/// Whether the country is a member state of the EU.
pub fn is_eu(country: &str) -> bool {
    country.len() == 2 && EU.split_ascii_whitespace().any(|c| c == country)
}

/// The prefix a country's VAT ids begin with: its ISO code, except Greece's `EL`.
fn prefix(country: &str) -> &str {
    if country == "GR" { "EL" } else { country }
}

/// The forms of a country's VAT ids after the prefix, one per `|`: `#` a digit, `@` a letter,
/// `*` either; anything else stands for itself. `None` for a country without a known form.
fn forms(country: &str) -> Option<&'static str> {
    Some(match country {
        "AT" => "U########",
        "BE" => "0#########|1#########",
        "BG" => "#########|##########",
        "CY" => "########@",
        "CZ" => "########|#########|##########",
        "DE" | "EE" | "GR" | "PT" => "#########",
        "DK" | "FI" | "HU" | "LU" | "MT" | "SI" => "########",
        "ES" => "*#######*",
        "FR" => "**#########",
        "HR" | "IT" | "LV" => "###########",
        "IE" => "#######@|#######@@|#*#####@",
        "LT" => "#########|############",
        "NL" => "#########B##",
        "PL" | "SK" => "##########",
        "RO" => "##|###|####|#####|######|#######|########|#########|##########",
        "SE" => "##########01",
        "GB" => "#########|############|GD###|HA###",
        "CH" => "E#########|E#########MWST|E#########TVA|E#########IVA",
        "NO" => "#########|#########MVA",
        // Russia's taxpayer number (INN): 10 digits for a company, 12 for a person.
        "RU" => "##########|############",
        _ => return None,
    })
}

fn fits(form: &str, id: &str) -> bool {
    form.len() == id.len()
        && form.bytes().zip(id.bytes()).all(|(f, c)| match f {
            b'#' => c.is_ascii_digit(),
            b'@' => c.is_ascii_uppercase(),
            b'*' => c.is_ascii_digit() || c.is_ascii_uppercase(),
            _ => f == c,
        })
}

/// What may stand between a VAT id's characters: spaces, no-break spaces, dots and dashes.
pub const SEPARATORS: [char; 4] = [' ', '\u{a0}', '.', '-'];

/// A VAT id of a buyer or seller in `country` as stored: in capitals, without spaces, dots or
/// dashes, and, for the countries whose forms paydesk knows (the EU's, the UK, Switzerland,
/// Norway, Russia), with the country's prefix (added when it was left out) and in one of the
/// country's forms; elsewhere 2 to 20 letters and digits as given. Whether the id is registered is not checked: that takes VIES,
/// which is online.
pub fn normalize(country: &str, raw: &str) -> Result<String, &'static str> {
    let id: String = raw.chars().filter(|c| !SEPARATORS.contains(c)).collect();
    if id.is_empty() || id.len() > 20 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err("is not a VAT id");
    }
    let id = id.to_ascii_uppercase();
    // Greece's ids written with its ISO code rather than its VAT prefix.
    let id = match id.strip_prefix("GR") {
        Some(rest) if country == "GR" => format!("EL{rest}"),
        _ => id,
    };
    let Some(forms) = forms(country) else {
        return if id.len() >= 2 { Ok(id) } else { Err("is not a VAT id") };
    };
    let prefix = prefix(country);
    // An id that begins with the prefix is read as having it.
    let rest = id.strip_prefix(prefix).unwrap_or(&id);
    if !forms.split('|').any(|f| fits(f, rest)) {
        return Err("is not in the form of the country's VAT ids");
    }
    Ok(format!("{prefix}{rest}"))
}

/// A buyer's VAT id as [`normalize`] keeps it, in the form of `country`; without a country,
/// of the country its prefix names (one whose forms paydesk knows).
pub fn read(country: Option<&str>, raw: &str) -> Result<String, &'static str> {
    if let Some(country) = country {
        return normalize(country, raw);
    }
    let prefixed: String = raw.chars().filter(|c| !SEPARATORS.contains(c)).take(2).collect();
    match country_of(&prefixed.to_ascii_uppercase()) {
        Some(country) => normalize(country, raw),
        None => Err("needs the country it was issued in"),
    }
}

/// The country whose VAT ids begin with `id`'s first two letters, among those whose forms
/// paydesk knows (`EL` is Greece).
pub fn country_of(id: &str) -> Option<&'static str> {
    let prefix = id.get(..2)?;
    let country = if prefix == "EL" { "GR" } else { prefix };
    let known = EU.split_ascii_whitespace().chain(["GB", "CH", "NO", "RU"]);
    known.into_iter().find(|c| *c == country && forms(c).is_some())
}

/// Whether a sale from a seller in `seller_country` to a buyer in `buyer_country` with the VAT
/// id `buyer_vat_id` is reverse-charged: both in the EU, in different member states, and the
/// buyer with a VAT id (a business). The buyer then accounts for the VAT, and the invoice
/// charges none.
pub fn reverse_charged(seller_country: &str, buyer_country: Option<&str>, buyer_vat_id: Option<&str>) -> bool {
    match (buyer_country, buyer_vat_id) {
        (Some(buyer), Some(id)) => is_eu(seller_country) && is_eu(buyer) && buyer != seller_country && !id.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_in_one_form_with_their_prefix() {
        assert_eq!(normalize("DE", "de 123 456 789"), Ok("DE123456789".into()));
        assert_eq!(normalize("DE", "123456789"), Ok("DE123456789".into()));
        assert_eq!(normalize("GR", "EL-094259216"), Ok("EL094259216".into()));
        assert_eq!(normalize("GR", "094259216"), Ok("EL094259216".into()));
        assert_eq!(normalize("GR", "GR094259216"), Ok("EL094259216".into()));
        assert_eq!(normalize("AT", "ATU12345678"), Ok("ATU12345678".into()));
        assert_eq!(normalize("NL", "nl123456789b01"), Ok("NL123456789B01".into()));
        assert_eq!(normalize("FR", "FR 1A 123456789"), Ok("FR1A123456789".into()));
        assert_eq!(normalize("ES", "ESX1234567R"), Ok("ESX1234567R".into()));
        assert_eq!(normalize("CH", "CHE-123.456.789 MWST"), Ok("CHE123456789MWST".into()));
        assert_eq!(normalize("RU", "7707083893"), Ok("RU7707083893".into()));
        assert_eq!(normalize("US", "12-3456789"), Ok("123456789".into()));
    }

    #[test]
    fn ids_out_of_their_countrys_form_are_refused() {
        for (country, id) in [
            ("DE", "DE12345678"),
            ("DE", "DE1234567890"),
            ("AT", "AT12345678"),
            ("BE", "BE2123456789"),
            ("NL", "NL123456789A01"),
            ("SE", "SE123456789002"),
            ("FR", "FR123456789"),
            ("RU", "77070838"),
        ] {
            assert!(normalize(country, id).is_err(), "{country} {id}");
        }
        assert_eq!(normalize("DE", ""), Err("is not a VAT id"));
        assert_eq!(normalize("DE", "DE12345678é"), Err("is not a VAT id"));
        assert_eq!(normalize("US", "1"), Err("is not a VAT id"));
        assert_eq!(normalize("SE", "ſe123456789001"), Err("is not a VAT id"));
        assert_eq!(normalize("US", "ßß"), Err("is not a VAT id"));
        assert_eq!(normalize("DE", "\tDE123456789"), Err("is not a VAT id"));
        assert_eq!(normalize("US", &"1".repeat(21)), Err("is not a VAT id"));
    }

    #[test]
    fn a_reverse_charge_takes_two_member_states_and_the_buyers_id() {
        assert!(reverse_charged("DE", Some("FR"), Some("FR1A123456789")));
        assert!(!reverse_charged("DE", Some("DE"), Some("DE123456789")));
        assert!(!reverse_charged("DE", Some("FR"), None));
        assert!(!reverse_charged("DE", Some("CH"), Some("CHE123456789")));
        assert!(!reverse_charged("RU", Some("DE"), Some("DE123456789")));
        assert!(!reverse_charged("DE", None, Some("FR1A123456789")));
    }

    #[test]
    fn an_id_without_a_country_is_read_by_its_prefix() {
        assert_eq!(read(None, "fr 1A 123456789"), Ok("FR1A123456789".into()));
        assert_eq!(read(None, "EL094259216"), Ok("EL094259216".into()));
        assert_eq!(read(Some("DE"), "123456789"), Ok("DE123456789".into()));
        assert_eq!(read(None, "123456789"), Err("needs the country it was issued in"));
        assert_eq!(read(None, "US123456789"), Err("needs the country it was issued in"));
        assert_eq!(read(None, "DE12"), Err("is not in the form of the country's VAT ids"));
        assert_eq!(read(Some("DE"), "FR1A123456789"), Err("is not in the form of the country's VAT ids"));
        assert_eq!(country_of("EL094259216"), Some("GR"));
        assert_eq!(country_of("é"), None);
    }
}
