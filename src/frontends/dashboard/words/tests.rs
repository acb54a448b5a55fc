use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use super::*;
use crate::domain::vocab::{PaymentStatus, RefundStatus};

/// Every key the dashboard's templates and handlers write: the string literal after `.t(`,
/// `.f(`, `.f1(`, `.f2(` or `k(` (on the same line or the next).
fn keys_used() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    collect(&root.join("templates/dashboard"), &mut files);
    collect(&root.join("src/frontends/dashboard"), &mut files);
    let mut keys = BTreeSet::new();
    for file in files.iter().filter(|f| !f.starts_with(root.join("src/frontends/dashboard/words"))) {
        let text = std::fs::read_to_string(file).unwrap();
        // The literal may start on the next line, where rustfmt breaks a long call.
        for marker in [".t(", ".f(", ".f1(", ".f2(", ".n(", "k("] {
            let mut rest = text.as_str();
            while let Some(at) = rest.find(marker) {
                let before = rest[..at].chars().next_back();
                rest = &rest[at + marker.len()..];
                if marker == "k(" && before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                    continue;
                }
                if let Some(literal_start) = rest.trim_start().strip_prefix('"') {
                    keys.insert(literal(literal_start));
                }
            }
        }
        // A count comes first: `.n(count, "{} day|{} days")`.
        let mut rest = text.as_str();
        while let Some(at) = rest.find(".n(") {
            rest = &rest[at + ".n(".len()..];
            let Some(quote) = rest.find('"') else { break };
            let between = &rest[..quote];
            if between.ends_with(", ") && !between.contains([';', '{', '\n']) {
                keys.insert(literal(&rest[quote + 1..]));
            }
        }
    }
    keys
}

/// The string literal that starts `rest` (after its opening quote), unescaped.
fn literal(rest: &str) -> String {
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => break,
            },
            c => out.push(c),
        }
    }
    out
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

#[test]
fn every_key_has_its_russian_and_every_russian_its_key() {
    let used = keys_used();
    assert!(used.len() > 200, "only {} keys found", used.len());
    let missing: Vec<_> = used.iter().filter(|k| !catalog().contains_key(k.as_str())).collect();
    assert!(missing.is_empty(), "no Russian for {missing:#?}");
    let shown = [common::RU, catalog::RU, people::RU, money::RU, disputes::RU].into_iter().chain(settings::RU);
    let unused: Vec<_> = shown.flat_map(|p| p.iter()).filter(|(en, _)| !used.contains(*en)).collect();
    assert!(unused.is_empty(), "Russian never used: {unused:#?}");
}

#[test]
fn no_key_is_translated_twice_and_each_keeps_its_blanks() {
    let mut seen = HashSet::new();
    for (en, ru) in parts().into_iter().flatten() {
        assert!(seen.insert(*en), "{en:?} is in the catalog twice");
        let blanks = en.split('|').next().unwrap_or("").matches("{}").count();
        assert!(ru.split('|').all(|form| form.matches("{}").count() == blanks), "{en:?} → {ru:?}");
        let forms = (en.split('|').count(), ru.split('|').count());
        assert!(forms == (1, 1) || forms == (2, 3), "{en:?} → {ru:?}: one|other in English, one|few|many in Russian");
        assert!(!ru.trim().is_empty(), "{en:?} has an empty translation");
    }
}

#[test]
fn every_status_shown_has_its_russian() {
    let values = PaymentStatus::ALL.iter().map(|s| s.as_str()).chain(RefundStatus::ALL.iter().map(|s| s.as_str()));
    for value in values {
        assert_ne!(Words::Ru.t_data(value), value, "{value}");
    }
}

#[test]
fn a_browser_language_picks_ours_by_preference() {
    assert_eq!(Words::preferred("ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7"), Words::Ru);
    assert_eq!(Words::preferred("de-DE,en;q=0.5,ru;q=0.4"), Words::En);
    assert_eq!(Words::preferred("de-DE,ru;q=0.5,en;q=0.4"), Words::Ru);
    assert_eq!(Words::preferred("ru;q=0"), Words::En);
    assert_eq!(Words::preferred(""), Words::En);
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT_LANGUAGE, "en".parse().unwrap());
    headers.insert(header::COOKIE, "a=b; pd_lang=ru".parse().unwrap());
    assert_eq!(Words::of_request(&headers), Words::Ru);
}

#[test]
fn texts_fill_their_blanks_and_rules_their_numbers() {
    assert_eq!(Words::En.f("Refund {}?", &[&"€2.50"]), "Refund €2.50?");
    assert_eq!(Words::Ru.rule("can't be blank"), Words::Ru.t_data("can't be blank"));
    assert_ne!(Words::Ru.rule("is too long (maximum is 255 characters)"), "is too long (maximum is 255 characters)");
    assert!(Words::Ru.rule("is too long (maximum is 255 characters)").contains("255"));
    assert_eq!(Words::Ru.rule("something new 12"), "something new 12");
    assert_eq!(Words::En.rule("must be at most 5"), "must be at most 5");
    assert_eq!(Words::Ru.rule("must be less than or equal to 1000000000"), "не больше 1\u{a0}000\u{a0}000\u{a0}000");
    assert_eq!(
        Words::Ru.rule("10.0.0.1 is not a public address"),
        "10.0.0.1 — не публичный адрес: уведомления уходят только в интернет"
    );
    let refused = Words::Ru.rule("Only a succeeded payment can be refunded; this payment is refunded");
    assert!(refused.ends_with(Words::Ru.t_data("refunded")) && !refused.contains("Only"), "{refused}");
}

#[test]
fn counts_agree_with_their_nouns() {
    let key = "{} payment|{} payments";
    assert_eq!(Words::En.n(1, key), "1 payment");
    assert_eq!(Words::En.n(2, key), "2 payments");
    let ru = |n| Words::Ru.n(n, key);
    assert_eq!(
        [ru(1), ru(2), ru(5), ru(11), ru(21), ru(22), ru(112)],
        ["1 платёж", "2 платежа", "5 платежей", "11 платежей", "21 платёж", "22 платежа", "112 платежей"]
    );
}
