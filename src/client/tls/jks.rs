//! A reader of Java's JKS key stores (`keytool -storetype JKS`), the format of most Java-world
//! truststores.
//!
//! The format (Java's `sun.security.provider.JavaKeyStore`): the magic number `FEEDFEED`, a
//! version (1 or 2), an entry count, the entries, and a SHA-1 digest of the password (UTF-16BE),
//! the words `Mighty Aphrodite` and everything before the digest. An entry is a private key
//! (tag 1: alias, date, the key protected by Sun's key protector, the certificate chain) or a
//! trusted certificate (tag 2: alias, date, certificate); version 2 names each certificate's
//! type. Every length is checked against the bytes left before it is used, and nothing is
//! allocated from a count the file claims.

use sha1::{Digest, Sha1};

/// What a JKS store holds: its trusted certificates and its private keys with their chains
/// (DER).
#[derive(Debug, Default)]
pub(crate) struct Jks {
    pub(crate) trusted: Vec<Vec<u8>>,
    pub(crate) keys: Vec<JksKey>,
}

/// A private key entry: the key still protected, and its certificate chain.
pub(crate) struct JksKey {
    protected: Vec<u8>,
    pub(crate) chain: Vec<Vec<u8>>,
}

impl std::fmt::Debug for JksKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JksKey").field("chain", &self.chain.len()).finish_non_exhaustive()
    }
}

/// The first four bytes of every JKS file.
pub(crate) const MAGIC: [u8; 4] = [0xFE, 0xED, 0xFE, 0xED];
/// The first bytes of a JCEKS file (JKS's sibling, which also holds secret keys).
const JCEKS_MAGIC: [u8; 4] = [0xCE, 0xCE, 0xCE, 0xCE];

/// Why a JKS store could not be read, in words for the user (never the bytes themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JksError {
    /// Not a JKS file at all.
    NotJks(&'static str),
    /// The integrity digest does not match: the password is wrong (or the file was altered).
    WrongPassword,
    /// The key protector's check failed: the key password is wrong.
    WrongKeyPassword,
    /// The file is cut short or inconsistent at this byte offset.
    Malformed { offset: usize, what: &'static str },
}

impl std::fmt::Display for JksError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JksError::NotJks(why) => write!(f, "not a JKS store: {why}"),
            JksError::WrongPassword => {
                f.write_str("wrong password: the store's integrity check (SHA-1 keyed by the password) failed")
            }
            JksError::WrongKeyPassword => f.write_str("wrong key password: the private key does not decrypt"),
            JksError::Malformed { offset, what } => write!(f, "malformed JKS store at byte {offset}: {what}"),
        }
    }
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], JksError> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.data.len());
        let end = end.ok_or(JksError::Malformed { offset: self.at, what })?;
        let bytes = &self.data[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, JksError> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, JksError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Java's `DataInput.readUTF`: a 2-byte length and that many bytes (skipped: aliases and
    /// certificate types are not used).
    fn utf(&mut self, what: &'static str) -> Result<(), JksError> {
        let len = self.u16(what)?;
        self.take(usize::from(len), what).map(|_| ())
    }

    fn certificate(&mut self, version: u32) -> Result<Vec<u8>, JksError> {
        if version == 2 {
            self.utf("certificate type")?;
        }
        let len = self.u32("certificate length")?;
        let len =
            usize::try_from(len).map_err(|_| JksError::Malformed { offset: self.at, what: "certificate length" })?;
        Ok(self.take(len, "certificate longer than the file")?.to_vec())
    }
}

/// The UTF-16BE bytes of a password, as JKS keys its digests.
fn password_bytes(password: &str) -> Vec<u8> {
    password.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

/// Reads a JKS store. Without a password the integrity check is skipped, as Java skips it for
/// a truststore loaded without one.
pub(crate) fn read(data: &[u8], password: Option<&str>) -> Result<Jks, JksError> {
    match data.get(..4) {
        Some(magic) if magic == MAGIC => {}
        Some(magic) if magic == JCEKS_MAGIC => {
            return Err(JksError::NotJks("it is a JCEKS store (convert it to PKCS12 with keytool -importkeystore)"))
        }
        _ => return Err(JksError::NotJks("it does not start with the JKS magic number FEEDFEED")),
    }
    let body_len = data.len().checked_sub(20).ok_or(JksError::Malformed { offset: data.len(), what: "no digest" })?;
    if let Some(password) = password {
        let mut digest = Sha1::new();
        digest.update(password_bytes(password));
        digest.update(b"Mighty Aphrodite");
        digest.update(&data[..body_len]);
        if digest.finalize().as_slice() != &data[body_len..] {
            return Err(JksError::WrongPassword);
        }
    }
    let mut r = Reader { data: &data[..body_len], at: 4 };
    let version = r.u32("version")?;
    if version != 1 && version != 2 {
        return Err(JksError::Malformed { offset: 4, what: "unknown version (not 1 or 2)" });
    }
    let count = r.u32("entry count")?;
    let mut jks = Jks::default();
    for _ in 0..count {
        let tag = r.u32("entry tag")?;
        r.utf("alias")?;
        r.take(8, "entry date")?;
        match tag {
            1 => {
                let len = r.u32("key length")?;
                let len = usize::try_from(len).map_err(|_| JksError::Malformed { offset: r.at, what: "key length" })?;
                let protected = r.take(len, "key longer than the file")?.to_vec();
                let chain_len = r.u32("chain length")?;
                let mut chain = Vec::new();
                for _ in 0..chain_len {
                    chain.push(r.certificate(version)?);
                }
                jks.keys.push(JksKey { protected, chain });
            }
            2 => jks.trusted.push(r.certificate(version)?),
            _ => return Err(JksError::Malformed { offset: r.at, what: "unknown entry tag (not 1 or 2)" }),
        }
    }
    if r.at != body_len {
        return Err(JksError::Malformed { offset: r.at, what: "bytes after the last entry" });
    }
    Ok(jks)
}

/// The object identifier of Sun's JKS key protector, 1.3.6.1.4.1.42.2.17.1.1, DER-encoded.
const KEY_PROTECTOR_OID: [u8; 10] = [0x2B, 0x06, 0x01, 0x04, 0x01, 0x2A, 0x02, 0x11, 0x01, 0x01];

impl JksKey {
    /// The private key (PKCS#8 DER), recovered with the key password as Java's
    /// `KeyProtector.recover` does: the protected key is `salt(20) || key XOR stream || check(20)`,
    /// the stream is `SHA-1(password || previous)` from the salt on, and the check is
    /// `SHA-1(password || key)`.
    pub(crate) fn recover(&self, password: &str) -> Result<Vec<u8>, JksError> {
        let malformed = |what| JksError::Malformed { offset: 0, what };
        let protected =
            encrypted_private_key(&self.protected).ok_or(malformed("the key is not an EncryptedPrivateKeyInfo"))?;
        let (algorithm, encrypted) = protected;
        if algorithm != KEY_PROTECTOR_OID {
            return Err(malformed("the key is not protected by the JKS key protector"));
        }
        if encrypted.len() < 40 {
            return Err(malformed("the protected key is shorter than its salt and check"));
        }
        let (salt, rest) = encrypted.split_at(20);
        let (cipher, check) = rest.split_at(rest.len() - 20);
        let password = password_bytes(password);
        let mut block = salt.to_vec();
        let mut key = Vec::with_capacity(cipher.len());
        for chunk in cipher.chunks(20) {
            let mut digest = Sha1::new();
            digest.update(&password);
            digest.update(&block);
            block = digest.finalize().to_vec();
            key.extend(chunk.iter().zip(&block).map(|(c, k)| c ^ k));
        }
        let mut digest = Sha1::new();
        digest.update(&password);
        digest.update(&key);
        if digest.finalize().as_slice() != check {
            return Err(JksError::WrongKeyPassword);
        }
        Ok(key)
    }
}

/// One DER element: (tag, contents, rest).
pub(super) fn der(data: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = data.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7F);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        (rest[..n].iter().fold(0usize, |len, &b| len << 8 | usize::from(b)), &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// `EncryptedPrivateKeyInfo ::= SEQUENCE { AlgorithmIdentifier, OCTET STRING }`: the
/// algorithm's OID (with what follows it in the identifier) and the encrypted bytes.
fn encrypted_private_key(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let (0x30, info, _) = der(data)? else { return None };
    let (0x30, algorithm, rest) = der(info)? else { return None };
    let (0x06, oid, _) = der(algorithm)? else { return None };
    let (0x04, encrypted, _) = der(rest)? else { return None };
    Some((oid, encrypted))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JKS store written as Java writes it (version 2): one trusted certificate and one key
    /// entry protected by the key protector, with the integrity digest for `password`.
    fn store(password: &str, key_password: &str, key: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&MAGIC);
        body.extend_from_slice(&2u32.to_be_bytes());
        body.extend_from_slice(&2u32.to_be_bytes());
        let utf = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&(s.len() as u16).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        // Trusted certificate entry.
        body.extend_from_slice(&2u32.to_be_bytes());
        utf(&mut body, "ca");
        body.extend_from_slice(&0u64.to_be_bytes());
        utf(&mut body, "X.509");
        body.extend_from_slice(&3u32.to_be_bytes());
        body.extend_from_slice(b"CA!");
        // Private key entry: salt, key XOR stream, check.
        let salt = [7u8; 20];
        let pw = password_bytes(key_password);
        let mut block = salt.to_vec();
        let mut protected = salt.to_vec();
        for chunk in key.chunks(20) {
            block = Sha1::new().chain_update(&pw).chain_update(&block).finalize().to_vec();
            protected.extend(chunk.iter().zip(&block).map(|(k, s)| k ^ s));
        }
        protected.extend_from_slice(&Sha1::new().chain_update(&pw).chain_update(key).finalize());
        let mut info = vec![0x04, protected.len() as u8];
        info.extend_from_slice(&protected);
        let mut algorithm = vec![0x06, KEY_PROTECTOR_OID.len() as u8];
        algorithm.extend_from_slice(&KEY_PROTECTOR_OID);
        algorithm.extend_from_slice(&[0x05, 0x00]);
        let mut der = vec![0x30, (algorithm.len() + 2 + info.len()) as u8, 0x30, algorithm.len() as u8];
        der.extend_from_slice(&algorithm);
        der.extend_from_slice(&info);
        body.extend_from_slice(&1u32.to_be_bytes());
        utf(&mut body, "client");
        body.extend_from_slice(&0u64.to_be_bytes());
        body.extend_from_slice(&(der.len() as u32).to_be_bytes());
        body.extend_from_slice(&der);
        body.extend_from_slice(&1u32.to_be_bytes());
        utf(&mut body, "X.509");
        body.extend_from_slice(&4u32.to_be_bytes());
        body.extend_from_slice(b"LEAF");
        let digest = Sha1::new()
            .chain_update(password_bytes(password))
            .chain_update(b"Mighty Aphrodite")
            .chain_update(&body)
            .finalize();
        body.extend_from_slice(&digest);
        body
    }

    #[test]
    fn reads_entries_checks_the_digest_and_recovers_the_key() {
        let key = b"a PKCS#8 key longer than one SHA-1 block of twenty bytes";
        let data = store("storepass", "keypass", key);
        let jks = read(&data, Some("storepass")).unwrap();
        assert_eq!(jks.trusted, [b"CA!".to_vec()]);
        assert_eq!(jks.keys.len(), 1);
        assert_eq!(jks.keys[0].chain, [b"LEAF".to_vec()]);
        assert_eq!(jks.keys[0].recover("keypass").unwrap(), key);
        assert_eq!(jks.keys[0].recover("storepass").unwrap_err(), JksError::WrongKeyPassword);
        assert_eq!(read(&data, Some("wrong")).unwrap_err(), JksError::WrongPassword);
        // Without a password the digest is not checked, as Java does for a truststore.
        assert_eq!(read(&data, None).unwrap().trusted.len(), 1);
    }

    #[test]
    fn hostile_stores_are_errors_not_panics() {
        let data = store("p", "p", b"key");
        assert!(matches!(read(b"\xCE\xCE\xCE\xCE....", None), Err(JksError::NotJks(why)) if why.contains("JCEKS")));
        assert!(matches!(read(b"-----BEGIN", None), Err(JksError::NotJks(_))));
        // Every truncation, read without a password so that the parser itself is reached.
        for len in 0..data.len() {
            assert!(read(&data[..len], None).is_err(), "{len}");
        }
        // Counts and lengths far beyond the file allocate nothing and fail.
        let mut huge = data.clone();
        huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(read(&huge, None), Err(JksError::Malformed { .. })));
        let mut bad_tag = data;
        bad_tag[12..16].copy_from_slice(&9u32.to_be_bytes());
        let e = read(&bad_tag, None).unwrap_err();
        assert!(e.to_string().contains("unknown entry tag"), "{e}");
    }
}
