//! Secrets at rest. What paydesk must use again later in clear (a shop's API secret for the
//! Basic auth of its notifications, its RSA private key, webhook signing secrets) is kept
//! sealed with AES-256-GCM under the key-encryption key (KEK) of the configuration, bound to
//! the record it belongs to, so a sealed value copied onto another row does not open.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use crate::config::KekSource;

/// Seals and opens secrets under the KEK.
#[derive(Clone)]
pub struct Vault {
    key: Arc<LessSafeKey>,
}

/// A sealed value that does not open: another KEK, another record, or damaged.
#[derive(Debug, thiserror::Error)]
#[error("a sealed secret does not open with this key-encryption key")]
pub struct Unopenable;

/// The start of every sealed value (the scheme's version).
const PREFIX: &str = "v1.";

impl Vault {
    /// A vault with this 32-byte key.
    pub fn new(kek: &[u8; 32]) -> Vault {
        let key = UnboundKey::new(&AES_256_GCM, kek).expect("a 32-byte AES-256 key");
        Vault { key: Arc::new(LessSafeKey::new(key)) }
    }

    /// The vault of the configuration: the given key, or the key kept in a file beside the
    /// SQLite database (created with a new random key on first use), or a key for this run
    /// only (an in-memory database).
    pub fn load(source: &KekSource) -> Result<Vault, String> {
        Ok(Vault::new(&read_key(source)?))
    }

    /// Seals `secret` for the record named `context` (`shop:12:secret`).
    pub fn seal(&self, secret: &[u8], context: &str) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new().fill(&mut nonce).expect("the operating system's random generator");
        let mut sealed = secret.to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(context.as_bytes()), &mut sealed)
            .expect("AES-GCM sealing");
        let mut out = nonce.to_vec();
        out.extend(sealed);
        format!("{PREFIX}{}", STANDARD.encode(out))
    }

    /// Opens what [`Vault::seal`] sealed for the same `context`.
    pub fn open(&self, sealed: &str, context: &str) -> Result<Vec<u8>, Unopenable> {
        let bytes = sealed.strip_prefix(PREFIX).and_then(|b| STANDARD.decode(b).ok()).ok_or(Unopenable)?;
        if bytes.len() < NONCE_LEN {
            return Err(Unopenable);
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Unopenable)?;
        let mut buf = sealed.to_vec();
        let opened = self.key.open_in_place(nonce, Aad::from(context.as_bytes()), &mut buf).map_err(|_| Unopenable)?;
        Ok(opened.to_vec())
    }

    /// Opens a sealed text.
    pub fn open_text(&self, sealed: &str, context: &str) -> Result<String, Unopenable> {
        String::from_utf8(self.open(sealed, context)?).map_err(|_| Unopenable)
    }
}

/// The key a snapshot carries: the given key, or the one in the key file, which must exist (a
/// new key made now would open none of the database's secrets, and paydesk would start with it).
pub fn snapshot_key(source: &KekSource) -> Result<[u8; 32], String> {
    match source {
        KekSource::File(path) => read_key_file(path),
        other => read_key(other),
    }
}

/// The key of `source` itself: the given key, or the one in the key file (made on first
/// use), or a new one for an in-memory database.
fn read_key(source: &KekSource) -> Result<[u8; 32], String> {
    match source {
        KekSource::Given(key) => Ok(*key),
        KekSource::File(path) => key_file(path),
        KekSource::Ephemeral => Ok(random_key()),
    }
}

/// Writes `key` as a key file at `path` (readable by the owner only), which must not exist.
pub fn write_key_file(path: &Path, key: &[u8; 32]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    writeln!(file, "{}", STANDARD.encode(key))?;
    file.sync_all()
}

/// The key in the key file at `path`.
pub fn read_key_file(path: &Path) -> Result<[u8; 32], String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    crate::config::parse_kek(text.trim()).ok_or_else(|| format!("{shown} does not hold a base64 key of 32 bytes"))
}

fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    SystemRandom::new().fill(&mut key).expect("the operating system's random generator");
    key
}

/// The key in `path` (base64 of 32 bytes); a new one written there (readable by the owner
/// only) when the file does not exist. Of instances starting at once, the first writer wins.
fn key_file(path: &Path) -> Result<[u8; 32], String> {
    let shown = path.display();
    if !path.exists() {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(path) {
            Ok(mut file) => {
                let key = random_key();
                writeln!(file, "{}", STANDARD.encode(key)).map_err(|e| format!("cannot write {shown}: {e}"))?;
                return Ok(key);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create the key-encryption key file {shown}: {e}")),
        }
    }
    read_key_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_record() {
        let vault = Vault::new(&[7; 32]);
        let sealed = vault.seal(b"sk_secret", "shop:1:secret");
        assert!(sealed.starts_with("v1.") && !sealed.contains("sk_secret"));
        assert_eq!(vault.open(&sealed, "shop:1:secret").unwrap(), b"sk_secret");
        assert_ne!(vault.seal(b"sk_secret", "shop:1:secret"), sealed, "a fresh nonce each time");
        assert!(vault.open(&sealed, "shop:2:secret").is_err(), "bound to its record");
        assert!(Vault::new(&[8; 32]).open(&sealed, "shop:1:secret").is_err(), "bound to its key");
        assert!(vault.open("v1.AAAA", "shop:1:secret").is_err());
        assert!(vault.open("plain", "shop:1:secret").is_err());
    }

    #[test]
    fn the_key_file_is_made_once_and_read_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("paydesk.db.kek");
        let first = key_file(&path).unwrap();
        assert_eq!(key_file(&path).unwrap(), first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&path, "short").unwrap();
        assert!(key_file(&path).is_err());
    }
}
