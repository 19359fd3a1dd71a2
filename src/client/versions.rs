//! The API versions a broker advertises (ApiVersions), and the choice of the version to use
//! for each request: the highest that both the broker and `kafka-protocol` support.

use std::collections::{BTreeMap, HashMap};

use kafka_protocol::messages::ApiVersionsResponse;
use kafka_protocol::protocol::Request;

use super::codec::api_name;
use super::error::ClientError;

/// What one broker supports: API key to (min, max) version, and the cluster's finalized
/// features as the broker last knew them (ApiVersions v3+; empty below).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ApiVersionTable {
    ranges: HashMap<i16, (i16, i16)>,
    finalized_features: BTreeMap<String, i16>,
}

impl ApiVersionTable {
    pub(crate) fn from_response(response: &ApiVersionsResponse) -> Self {
        let ranges = response.api_keys.iter().map(|k| (k.api_key, (k.min_version, k.max_version))).collect();
        // A feature finalized at level 0 is off; the broker lists only those above it, but
        // keep what it says.
        let finalized_features =
            response.finalized_features.iter().map(|f| (f.name.to_string(), f.max_version_level)).collect();
        ApiVersionTable { ranges, finalized_features }
    }

    /// The finalized features (name to level) the broker reported.
    pub(crate) fn finalized_features(&self) -> &BTreeMap<String, i16> {
        &self.finalized_features
    }

    /// The broker's range for an API key.
    pub(crate) fn range(&self, api_key: i16) -> Option<(i16, i16)> {
        self.ranges.get(&api_key).copied()
    }

    /// The version to send `R` at: the highest both sides support, at most `cap`.
    pub(crate) fn pick<R: Request>(&self, cap: Option<i16>, broker: &str) -> Result<i16, ClientError> {
        let name = api_name(R::KEY);
        let (broker_min, broker_max) = self.range(R::KEY).ok_or_else(|| {
            // A KRaft controller listener answers ApiVersions with the quorum's APIs (Vote,
            // BeginQuorumEpoch) and none of the group APIs: say where to point instead.
            let controller = self.range(52).is_some() && self.range(53).is_some();
            let hint = if controller {
                ": it answers as a KRaft controller listener (it lists Vote and BeginQuorumEpoch); give a broker \
                 listener to --bootstrap-server (listeners, not controller.listener.names)"
            } else {
                ""
            };
            ClientError::protocol(format!("{broker} does not support {name}{hint}"))
        })?;
        let ours = R::VERSIONS;
        let high = broker_max.min(ours.max).min(cap.unwrap_or(i16::MAX));
        let low = broker_min.max(ours.min);
        if high < low {
            let capped = cap.map(|c| format!(", capped at v{c}")).unwrap_or_default();
            return Err(ClientError::protocol(format!(
                "{broker} supports {name} v{broker_min}-v{broker_max} and kcp v{}-v{}{capped}: no common version",
                ours.min, ours.max
            )));
        }
        Ok(high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::api_versions_response::ApiVersion;
    use kafka_protocol::messages::JoinGroupRequest;
    use kafka_protocol::protocol::StrBytes;

    fn table(min: i16, max: i16) -> ApiVersionTable {
        ApiVersionTable::from_response(
            &ApiVersionsResponse::default().with_api_keys(vec![ApiVersion::default()
                .with_api_key(11)
                .with_min_version(min)
                .with_max_version(max)]),
        )
    }

    #[test]
    fn finalized_features_are_kept() {
        use kafka_protocol::messages::api_versions_response::FinalizedFeatureKey;
        let response = ApiVersionsResponse::default().with_finalized_features(vec![
            FinalizedFeatureKey::default()
                .with_name(StrBytes::from_static_str("group.version"))
                .with_max_version_level(1)
                .with_min_version_level(1),
            FinalizedFeatureKey::default()
                .with_name(StrBytes::from_static_str("metadata.version"))
                .with_max_version_level(27)
                .with_min_version_level(27),
        ]);
        let table = ApiVersionTable::from_response(&response);
        assert_eq!(table.finalized_features().get("group.version"), Some(&1));
        assert_eq!(table.finalized_features().get("metadata.version"), Some(&27));
        assert_eq!(ApiVersionTable::from_response(&ApiVersionsResponse::default()).finalized_features().len(), 0);
    }

    #[test]
    fn highest_common_version() {
        assert_eq!(table(2, 9).pick::<JoinGroupRequest>(None, "b"), Ok(9));
        assert_eq!(table(0, 42).pick::<JoinGroupRequest>(None, "b"), Ok(9), "kafka-protocol stops at 9");
        assert_eq!(table(0, 9).pick::<JoinGroupRequest>(Some(5), "b"), Ok(5));
        let e = table(2, 9).pick::<JoinGroupRequest>(Some(1), "b").unwrap_err();
        assert!(e.message().contains("no common version"), "{e}");
        let e = ApiVersionTable::default().pick::<JoinGroupRequest>(None, "broker 1").unwrap_err();
        assert_eq!(e.message(), "broker 1 does not support JoinGroup");
    }

    /// A controller listener (Kafka 4.1.1's answers Vote, BeginQuorumEpoch, Fetch, ... and no
    /// group API): the error says so and where to point instead.
    #[test]
    fn a_controller_listener_is_named() {
        let controller = ApiVersionTable::from_response(&ApiVersionsResponse::default().with_api_keys(
            [1, 52, 53, 54, 55].map(|key| ApiVersion::default().with_api_key(key).with_max_version(1)).to_vec(),
        ));
        let e = controller.pick::<JoinGroupRequest>(None, "broker 1").unwrap_err();
        assert!(
            e.message().starts_with("broker 1 does not support JoinGroup: it answers as a KRaft controller"),
            "{e}"
        );
        assert!(e.message().contains("give a broker listener to --bootstrap-server"), "{e}");
    }
}
