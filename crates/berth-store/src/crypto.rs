//! Credentials at rest: XChaCha20-Poly1305 with a caller-supplied key, bound to the provider name.
//!
//! Blob layout: `[FORMAT][24-byte nonce][ciphertext + 16-byte tag]`. Nonces come from the OS
//! random source: the one deliberate use of unseeded randomness in Berth, because a repeated
//! nonce under one key would break the cipher (XChaCha's 192-bit nonces make random ones safe).
//! The associated data names the provider, so a blob copied to another row does not open.

use std::fmt;

use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::StoreError;

const FORMAT: u8 = 1;
const NONCE_LEN: usize = 24;
const AAD_PREFIX: &[u8] = b"berth-store provider credentials v1\0";

/// A secret value (password, token, JSON of several). `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret text; call only where it is sent to its provider.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The 256-bit key credentials are encrypted with. `Debug` never shows it.
#[derive(Clone)]
pub struct CredentialKey([u8; 32]);

impl CredentialKey {
    /// A key from 32 bytes.
    pub fn new(bytes: [u8; 32]) -> Self {
        CredentialKey(bytes)
    }

    /// A key from 64 hexadecimal digits (as kept in a config file or environment variable).
    pub fn from_hex(text: &str) -> Result<Self, StoreError> {
        let text = text.trim();
        let invalid = |reason: &str| StoreError::Invalid {
            what: "credential key",
            reason: reason.to_owned(),
        };
        if text.len() != 64 {
            return Err(invalid("expected 64 hexadecimal digits (32 bytes)"));
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            let pair = text
                .get(2 * i..2 * i + 2)
                .ok_or_else(|| invalid("expected 64 hexadecimal digits (32 bytes)"))?;
            *byte = u8::from_str_radix(pair, 16)
                .map_err(|_| invalid("expected only hexadecimal digits 0-9, a-f"))?;
        }
        Ok(CredentialKey(out))
    }

    /// A fresh random key from the OS random source.
    pub fn generate() -> Self {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        let mut out = [0u8; 32];
        out.copy_from_slice(&key);
        CredentialKey(out)
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&self.0.into())
    }
}

impl fmt::Debug for CredentialKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CredentialKey(<redacted>)")
    }
}

fn aad(provider: &str) -> Vec<u8> {
    let mut v = AAD_PREFIX.to_vec();
    v.extend_from_slice(provider.as_bytes());
    v
}

/// Encrypts `secret` for `provider`.
pub(crate) fn seal(
    key: &CredentialKey,
    provider: &str,
    secret: &Secret,
) -> Result<Vec<u8>, StoreError> {
    let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
    let aad = aad(provider);
    let ct = key
        .cipher()
        .encrypt(
            &nonce,
            Payload {
                msg: secret.0.as_bytes(),
                aad: &aad,
            },
        )
        .map_err(|_| StoreError::Invalid {
            what: "credentials",
            reason: "cannot encrypt; expected a secret under 256 GiB".to_owned(),
        })?;
    let mut out = Vec::with_capacity(1 + NONCE_LEN + ct.len());
    out.push(FORMAT);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&ct);
    Ok(out)
}

/// Decrypts a blob made by [`seal`] for `provider`.
pub(crate) fn open(key: &CredentialKey, provider: &str, blob: &[u8]) -> Result<Secret, StoreError> {
    let fail = || StoreError::Decrypt {
        provider: provider.to_owned(),
    };
    let (format, rest) = blob.split_first().ok_or_else(fail)?;
    if *format != FORMAT || rest.len() < NONCE_LEN {
        return Err(fail());
    }
    let (nonce, ct) = rest.split_at(NONCE_LEN);
    let aad = aad(provider);
    let plain = key
        .cipher()
        .decrypt(XNonce::from_slice(nonce), Payload { msg: ct, aad: &aad })
        .map_err(|_| fail())?;
    String::from_utf8(plain).map(Secret).map_err(|_| fail())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_binding() {
        let key = CredentialKey::new([7; 32]);
        let s = Secret::new("hunter2");
        let blob = seal(&key, "p1", &s).unwrap();
        assert!(!blob.windows(7).any(|w| w == b"hunter2"));
        assert_eq!(open(&key, "p1", &blob).unwrap(), s);
        // Another provider's row, another key, a flipped bit: all refused.
        assert!(matches!(
            open(&key, "p2", &blob),
            Err(StoreError::Decrypt { .. })
        ));
        let other = CredentialKey::new([8; 32]);
        assert!(matches!(
            open(&other, "p1", &blob),
            Err(StoreError::Decrypt { .. })
        ));
        let mut bad = blob.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(matches!(
            open(&key, "p1", &bad),
            Err(StoreError::Decrypt { .. })
        ));
        assert!(matches!(
            open(&key, "p1", &[]),
            Err(StoreError::Decrypt { .. })
        ));
        // Fresh nonce per seal.
        assert_ne!(seal(&key, "p1", &s).unwrap(), blob);
    }

    #[test]
    fn hex_keys_and_redaction() {
        let hex = "00".repeat(31) + "ff";
        let k = CredentialKey::from_hex(&hex).unwrap();
        assert_eq!(k.0[31], 0xff);
        assert!(CredentialKey::from_hex("abc").is_err());
        assert!(CredentialKey::from_hex(&"zz".repeat(32)).is_err());
        assert!(CredentialKey::from_hex(&"é".repeat(32)).is_err());
        assert_eq!(format!("{k:?}"), "CredentialKey(<redacted>)");
        assert_eq!(format!("{:?}", Secret::new("x")), "Secret(<redacted>)");
    }
}
