//! A custom assignor's own error survives the leader's round (issue 39): `AssignError::Custom`
//! keeps the error itself, reachable through `source()` from every error that wraps it, down to
//! that error's own cause.

use std::error::Error;
use std::fmt;

use bytes::Bytes;
use kafka_consumer_protocol::assignor::leader::{lead, LeaderError};
use kafka_consumer_protocol::assignor::{
    AssignError, ClusterMetadata, GroupAssignment, GroupMember, PartitionAssignor, RebalanceProtocol,
};
use kafka_consumer_protocol::group_api::JoinGroupMember;
use kafka_consumer_protocol::{Subscription, Version};

/// The custom assignor's own error, with a cause of its own.
#[derive(Debug)]
struct PlacementUnavailable {
    service: &'static str,
    cause: std::io::Error,
}

impl fmt::Display for PlacementUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "placement service {} unavailable", self.service)
    }
}

impl Error for PlacementUnavailable {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.cause)
    }
}

/// Refuses every group with a `PlacementUnavailable`.
struct ExternalPlacement;

impl PartitionAssignor for ExternalPlacement {
    fn name(&self) -> &str {
        "external-placement"
    }
    fn assign(&self, _: &ClusterMetadata, _: &[GroupMember]) -> Result<GroupAssignment, AssignError> {
        Err(AssignError::custom(PlacementUnavailable {
            service: "placer-1",
            cause: std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused"),
        }))
    }
}

#[test]
fn a_custom_assignors_error_is_its_source_through_the_leaders_round() {
    let metadata = Bytes::from(Subscription::new(["orders"]).encode(Version::V3).unwrap());
    let members = [JoinGroupMember { member_id: "m1".into(), group_instance_id: None, metadata }];
    let error =
        lead(&ExternalPlacement, RebalanceProtocol::Eager, &ClusterMetadata::from_counts([("orders", 3)]), &members)
            .unwrap_err();
    assert!(matches!(error, LeaderError::Assign(AssignError::Custom(_))), "{error:?}");
    assert_eq!(error.to_string(), "the assignor failed: placement service placer-1 unavailable");

    // LeaderError -> AssignError -> the assignor's own error -> its cause.
    let assign_error = error.source().expect("the AssignError");
    let own = assign_error.source().expect("the custom assignor's error");
    let own = own.downcast_ref::<PlacementUnavailable>().expect("its own type, not a message");
    assert_eq!(own.service, "placer-1");
    let cause = own.source().expect("its cause").downcast_ref::<std::io::Error>().unwrap();
    assert_eq!(cause.kind(), std::io::ErrorKind::ConnectionRefused);

    // The coordinator's errors and events clone it (shared) and compare it by its message.
    let copy = error.clone();
    assert_eq!(copy, error);
    assert_eq!(AssignError::custom("no rack map"), AssignError::custom(String::from("no rack map")));
    assert_ne!(AssignError::custom("no rack map"), AssignError::custom("no quota"));
    assert!(AssignError::TooManyMembers.source().is_none());
}
