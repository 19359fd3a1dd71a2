//! The errors of the network layer: [`ClientError`] with its contract [`ErrorKind`], and
//! [`ConfigError`] for settings that cannot be honoured.

use std::fmt;

use kafka_protocol::ResponseError;

/// What went wrong talking to a cluster: exactly the `kind`s of the CLI contract
/// (`../shared/spec/cli.md`, "Live clusters").
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// No broker could be reached: connection refused, unknown host, connection lost.
    Unreachable,
    /// The deadline passed before the cluster answered.
    Timeout,
    /// SASL authentication failed (wrong password, unknown mechanism, broker closed the
    /// connection during authentication).
    Authentication,
    /// The TLS handshake failed (unknown CA, hostname mismatch, not a TLS listener).
    Tls,
    /// The broker refused the request for lack of ACLs.
    Authorization,
    /// The broker broke the protocol: an oversized frame, a response that does not decode, an
    /// unexpected error code, an API or version it does not support.
    Protocol,
    /// What was asked for does not exist (an unknown group).
    NotFound,
}

impl ErrorKind {
    /// The contract's name of this kind: `unreachable`, `timeout`, `authentication`, `tls`,
    /// `authorization`, `protocol` or `not_found`.
    ///
    /// ```
    /// # use kafka_consumer_protocol::client::ErrorKind;
    /// assert_eq!(ErrorKind::NotFound.as_str(), "not_found");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Authentication => "authentication",
            ErrorKind::Tls => "tls",
            ErrorKind::Authorization => "authorization",
            ErrorKind::Protocol => "protocol",
            ErrorKind::NotFound => "not_found",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error of the network layer. Its message names what failed and where (the broker, the API
/// and version, the Kafka error code) and never contains a password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    kind: ErrorKind,
    message: String,
    error_code: Option<i16>,
}

impl ClientError {
    /// An error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ClientError { kind, message: message.into(), error_code: None }
    }

    /// The error for a Kafka error code answered by a broker; `context` says which request
    /// (for example `DescribeGroups v5 for group 'orders'`).
    pub fn from_code(code: i16, context: impl fmt::Display, server_message: Option<&str>) -> Self {
        let kind = kind_of_code(code);
        let mut message = format!("{context}: {}", code_name(code));
        if let Some(text) = server_message.filter(|m| !m.is_empty()) {
            message.push_str(": ");
            message.push_str(text);
        }
        ClientError { kind, message, error_code: Some(code) }
    }

    /// The contract kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable message (without the kind).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The Kafka error code, when the error is one a broker answered.
    pub fn error_code(&self) -> Option<i16> {
        self.error_code
    }

    /// The same error with `context` put in front of its message.
    pub(crate) fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    pub(crate) fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        ClientError::new(ErrorKind::Protocol, message)
    }

    pub(crate) fn timeout(message: impl Into<String>) -> Self {
        ClientError::new(ErrorKind::Timeout, message)
    }

    pub(crate) fn unreachable(message: impl Into<String>) -> Self {
        ClientError::new(ErrorKind::Unreachable, message)
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ClientError {}

/// The contract kind of a Kafka error code.
fn kind_of_code(code: i16) -> ErrorKind {
    match code {
        // TOPIC_, GROUP_, CLUSTER_, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, DELEGATION_TOKEN_AUTHORIZATION_FAILED
        29 | 30 | 31 | 53 | 65 => ErrorKind::Authorization,
        // UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED
        33 | 34 | 58 => ErrorKind::Authentication,
        // GROUP_ID_NOT_FOUND, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID
        69 | 3 | 100 => ErrorKind::NotFound,
        // REQUEST_TIMED_OUT
        7 => ErrorKind::Timeout,
        _ => ErrorKind::Protocol,
    }
}

/// Java's name of a Kafka error code (`COORDINATOR_NOT_AVAILABLE (15)`), or `error code N`.
pub(crate) fn code_name(code: i16) -> String {
    match ResponseError::try_from_code(code) {
        None => "NONE (0)".to_string(),
        Some(ResponseError::Unknown(code)) => format!("error code {code}"),
        Some(error) => {
            let camel = format!("{error:?}");
            let mut name = String::with_capacity(camel.len() + 8);
            for (i, c) in camel.chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    name.push('_');
                }
                name.push(c.to_ascii_uppercase());
            }
            format!("{name} ({code})")
        }
    }
}

/// The Kafka error codes a client retries after a backoff: the coordinator is loading, not
/// available or has moved (find it again), or the request timed out on the broker.
pub(crate) fn is_retriable_group_code(code: i16) -> bool {
    matches!(code, 14..=16 | 7)
}

/// A setting the client cannot honour, or a malformed configuration. The CLI maps it to exit
/// status 2 (usage error). The message names the key and what to use instead, and never contains
/// a password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    key: String,
    message: String,
}

impl ConfigError {
    pub(crate) fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { key: key.into(), message: message.into() }
    }

    /// The configuration key at fault (for example `ssl.truststore.type`); empty for an error of
    /// the properties syntax as a whole.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What is wrong and what to use instead.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_java_names_and_contract_kinds() {
        assert_eq!(code_name(15), "COORDINATOR_NOT_AVAILABLE (15)");
        assert_eq!(code_name(58), "SASL_AUTHENTICATION_FAILED (58)");
        assert_eq!(code_name(-1), "UNKNOWN_SERVER_ERROR (-1)");
        assert_eq!(code_name(9999), "error code 9999");
        assert_eq!(ClientError::from_code(30, "DescribeGroups v5", None).kind(), ErrorKind::Authorization);
        assert_eq!(ClientError::from_code(69, "x", None).kind(), ErrorKind::NotFound);
        let e = ClientError::from_code(58, "SaslAuthenticate v2", Some("Authentication failed"));
        assert_eq!(e.kind(), ErrorKind::Authentication);
        assert_eq!(e.error_code(), Some(58));
        assert_eq!(e.to_string(), "SaslAuthenticate v2: SASL_AUTHENTICATION_FAILED (58): Authentication failed");
    }
}
