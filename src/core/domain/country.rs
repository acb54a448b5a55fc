//! ISO 3166-1 alpha-2 country codes and the state codes of the US and Canada.

/// Every assigned ISO 3166-1 alpha-2 code, separated by spaces.
pub const COUNTRIES: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI \
BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ \
DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ \
GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN \
KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS \
MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT \
PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF \
TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM \
ZW";

/// States, the federal district, territories and military codes of the US postal service.
pub const US_STATES: &str = "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS \
MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI \
UM FM MH PW AA AE AP";

/// The provinces and territories of Canada.
pub const CA_PROVINCES: &str = "AB BC MB NB NL NS NT NU ON PE QC SK YT";

fn listed(list: &str, code: &str) -> bool {
    code.len() == 2 && list.split_ascii_whitespace().any(|c| c == code)
}

/// Whether `code` is an assigned ISO 3166-1 alpha-2 code (capital letters).
pub fn is_country(code: &str) -> bool {
    listed(COUNTRIES, code)
}

/// Whether the country has states that a customer record may carry (US and CA).
pub fn has_states(country: &str) -> bool {
    matches!(country, "US" | "CA")
}

/// Whether `state` is a two-letter state or province code of `country`.
pub fn is_state_of(country: &str, state: &str) -> bool {
    match country {
        "US" => listed(US_STATES, state),
        "CA" => listed(CA_PROVINCES, state),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_assigned_code_is_listed_once() {
        let codes: Vec<&str> = COUNTRIES.split_ascii_whitespace().collect();
        assert_eq!(codes.len(), 249);
        assert!(codes.windows(2).all(|w| w[0] < w[1]));
        assert!(is_country("DE") && is_country("US"));
        assert!(!is_country("XX") && !is_country("de") && !is_country("DEU") && !is_country("UK"));
    }

    #[test]
    fn states_belong_to_their_country() {
        assert!(is_state_of("US", "NY") && is_state_of("CA", "QC"));
        assert!(!is_state_of("US", "QC") && !is_state_of("CA", "NY") && !is_state_of("DE", "BY"));
        assert_eq!(US_STATES.split_ascii_whitespace().count(), 63);
    }
}
