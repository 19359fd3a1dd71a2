//! Message versions and the wire-version rules of Apache Kafka's Java client.

use core::fmt;

/// A version of the consumer protocol messages that this crate knows.
///
/// Subscription and Assignment are versioned in lock-step (Apache Kafka refuses to start if their
/// version ranges differ). Fields are only ever appended: v1 adds owned partitions, v2 the
/// generation id, v3 the rack id. Assignment bodies are identical across versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Version {
    /// Topics and userData.
    V0 = 0,
    /// Adds owned partitions (KIP-429).
    V1 = 1,
    /// Adds the generation id (KIP-792).
    V2 = 2,
    /// Adds the rack id (KIP-881).
    #[default]
    V3 = 3,
}

impl Version {
    /// The highest version this crate knows, which is what Apache Kafka's Java client writes.
    pub const LATEST: Version = Version::V3;
    /// All known versions, oldest first.
    pub const ALL: [Version; 4] = [Version::V0, Version::V1, Version::V2, Version::V3];

    /// The wire value.
    pub const fn as_i16(self) -> i16 {
        self as i16
    }

    /// The layout a reader that knows versions up to [`Version::LATEST`] uses for a wire version:
    /// versions above the latest are read with the latest layout (Java's forward compatibility);
    /// negative versions are refused (`None`).
    ///
    /// ```
    /// use kafka_consumer_protocol::Version;
    /// assert_eq!(Version::layout_for_wire(100), Some(Version::V3));
    /// assert_eq!(Version::layout_for_wire(1), Some(Version::V1));
    /// assert_eq!(Version::layout_for_wire(-1), None);
    /// ```
    pub const fn layout_for_wire(wire: i16) -> Option<Version> {
        match wire {
            i16::MIN..=-1 => None,
            0 => Some(Version::V0),
            1 => Some(Version::V1),
            2 => Some(Version::V2),
            _ => Some(Version::V3),
        }
    }
}

impl TryFrom<i16> for Version {
    type Error = i16;

    /// Exact conversion: only 0..=3 are versions; anything else is returned as the error.
    fn try_from(value: i16) -> Result<Self, i16> {
        match value {
            0 => Ok(Version::V0),
            1 => Ok(Version::V1),
            2 => Ok(Version::V2),
            3 => Ok(Version::V3),
            other => Err(other),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.as_i16())
    }
}
