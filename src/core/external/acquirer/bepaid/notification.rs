//! bePaid's notifications: a POST of the transaction (`{"transaction": …}`) with the shop's
//! id and secret key as HTTP Basic, and `Content-Signature`, the base64 RSA-SHA256 (PKCS#1
//! v1.5) signature of the raw body, made with the processor's key and checked with the public
//! key its back office shows (base64 of the DER `SubjectPublicKeyInfo`, the PEM body).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use rsa::pkcs1::EncodeRsaPublicKey;
use rsa::pkcs8::DecodePublicKey;

use crate::domain::dispute::{DisputeStage, DisputeStatus, Funds, Seen};

/// A processor's public key, ready to check signatures.
#[derive(Clone)]
pub struct PublicKey {
    /// PKCS#1 `RSAPublicKey` DER, as ring reads it.
    pkcs1: Vec<u8>,
}

/// Why a public key was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("is not an RSA public key: paste the key exactly as the processor's back office shows it")]
pub struct NotAKey;

impl PublicKey {
    /// Reads a key as the back office shows it: base64 on one line or several, with or
    /// without the PEM armour (`-----BEGIN PUBLIC KEY-----`).
    pub fn parse(text: &str) -> Result<PublicKey, NotAKey> {
        let body: String = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.starts_with("-----"))
            .flat_map(|line| line.chars().filter(|c| !c.is_whitespace()))
            .collect();
        let der = STANDARD.decode(body).map_err(|_| NotAKey)?;
        let key = rsa::RsaPublicKey::from_public_key_der(&der).map_err(|_| NotAKey)?;
        let pkcs1 = key.to_pkcs1_der().map_err(|_| NotAKey)?.as_bytes().to_vec();
        Ok(PublicKey { pkcs1 })
    }

    /// Whether `signature` (the `Content-Signature` header) signs `body` with this key.
    pub fn verifies(&self, body: &[u8], signature: &str) -> bool {
        let Ok(signature) = STANDARD.decode(signature.trim()) else { return false };
        UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &self.pkcs1).verify(body, &signature).is_ok()
    }
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PublicKey { .. }")
    }
}

/// A chargeback bePaid notified (`type: chargeback`, successful): the money went back to the
/// cardholder. bePaid has no dispute process of its own to follow, and no way to answer one
/// through its API: the chargeback is read as a dispute already lost, its amount taken (the
/// acquirer's fee, if any, is not told), to be contested with the acquirer through bePaid's
/// back office.
pub fn chargeback(uid: String, amount: i64, reason: String) -> Seen {
    Seen {
        reference: uid,
        stage: DisputeStage::Chargeback,
        status: DisputeStatus::Lost,
        reason,
        amount,
        fee: None,
        evidence_due_by: None,
        withdrawn: Some(Funds { amount, fee: 0 }),
        reinstated: None,
    }
}

#[cfg(test)]
mod tests {
    use ring::rand::SystemRandom;
    use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
    use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};

    use super::*;

    /// A key pair as a processor holds it, and its public key as its back office shows it.
    fn processor() -> (RsaKeyPair, String) {
        let private = rsa::RsaPrivateKey::new(&mut argon2::password_hash::rand_core::OsRng, 2048).unwrap();
        let pem = rsa::RsaPublicKey::from(&private).to_public_key_pem(LineEnding::LF).unwrap();
        let pair = RsaKeyPair::from_pkcs8(private.to_pkcs8_der().unwrap().as_bytes()).unwrap();
        (pair, pem)
    }

    fn sign(pair: &RsaKeyPair, body: &[u8]) -> String {
        let mut signature = vec![0u8; pair.public().modulus_len()];
        pair.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), body, &mut signature).unwrap();
        STANDARD.encode(signature)
    }

    #[test]
    fn a_signed_body_verifies_with_the_key_in_either_form_and_nothing_else_does() {
        let (pair, pem) = processor();
        let body = br#"{"transaction":{"uid":"1-a","status":"successful"}}"#;
        let signature = sign(&pair, body);
        let bare: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        for form in [pem.as_str(), bare.as_str()] {
            let key = PublicKey::parse(form).unwrap();
            assert!(key.verifies(body, &signature));
            assert!(!key.verifies(br#"{"transaction":{"uid":"1-a","status":"failed"}}"#, &signature));
            assert!(!key.verifies(body, "not base64!"));
        }
        let (other, _) = processor();
        assert!(!PublicKey::parse(&pem).unwrap().verifies(body, &sign(&other, body)));
    }

    #[test]
    fn what_is_not_a_public_key_is_refused() {
        assert_eq!(PublicKey::parse("hello").unwrap_err(), NotAKey);
        assert_eq!(PublicKey::parse("aGVsbG8=").unwrap_err(), NotAKey);
    }
}
