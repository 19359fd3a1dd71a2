//! The group calls: ListGroups, DescribeGroups (classic groups) and ConsumerGroupDescribe
//! (KIP-848 groups), and their conversions to [`inspect`]'s model.

use std::collections::HashMap;

use kafka_protocol::messages::{ConsumerGroupDescribeRequest, DescribeGroupsRequest, GroupId, ListGroupsRequest};
use kafka_protocol::protocol::Request;

use super::{opt_text, text};
use crate::client::error::{code_name, is_retriable_group_code};
use crate::client::send::{is_connection_error, Backoff};
use crate::client::{
    messages, ClassicGroupDescription, Client, ClientError, ConsumerGroupDescription, Deadline, ErrorKind,
    ListGroupsFilter, ListedGroup, Node, StrBytes, Target,
};
use crate::group_api::{self, ErrorCode};
use crate::inspect;
use crate::TopicPartitions;

impl Client {
    /// Every group of the cluster: ListGroups on every broker (each lists the groups it
    /// coordinates), with `filter`.
    pub async fn list_groups(
        &self,
        filter: &ListGroupsFilter,
        deadline: Deadline,
    ) -> Result<Vec<ListedGroup>, ClientError> {
        let metadata = self.metadata(Some(&[]), deadline).await?;
        self.list_groups_on_brokers(metadata.brokers, filter, deadline).await
    }

    /// ListGroups on each of `brokers` (a broker list the caller already has, as the
    /// collector keeps from its previous Metadata), with `filter`.
    pub(in crate::client) async fn list_groups_on_brokers(
        &self,
        brokers: Vec<Node>,
        filter: &ListGroupsFilter,
        deadline: Deadline,
    ) -> Result<Vec<ListedGroup>, ClientError> {
        let mut tasks = tokio::task::JoinSet::new();
        for broker in brokers {
            let client = self.clone();
            let filter = filter.clone();
            tasks.spawn(async move { client.list_groups_on(broker, &filter, deadline).await });
        }
        let mut groups = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            let listed = joined.map_err(|e| ClientError::protocol(format!("a ListGroups task failed: {e}")))??;
            groups.extend(listed);
        }
        groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        Ok(groups)
    }

    async fn list_groups_on(
        &self,
        broker: Node,
        filter: &ListGroupsFilter,
        deadline: Deadline,
    ) -> Result<Vec<ListedGroup>, ClientError> {
        let target = Target::Node(broker.node_id);
        let mut backoff = Backoff::new(&self.inner.config);
        loop {
            let sent = self
                .call_retrying(&target, deadline, |version| {
                    let mut request = ListGroupsRequest::default();
                    if version >= 4 {
                        request.states_filter =
                            filter.states.iter().map(|s| StrBytes::from_string(s.clone())).collect();
                    }
                    if version >= 5 {
                        request.types_filter = filter.types.iter().map(|s| StrBytes::from_string(s.clone())).collect();
                    }
                    request
                })
                .await?;
            let response = sent.response;
            let code = response.error_code;
            if is_retriable_group_code(code) {
                let e =
                    ClientError::from_code(code, format!("ListGroups v{} on {}", sent.version, broker.label()), None);
                if !backoff.wait(deadline).await {
                    return Err(backoff.give_up(e));
                }
                continue;
            }
            if code != 0 {
                return Err(ClientError::from_code(
                    code,
                    format!("ListGroups v{} on {}", sent.version, broker.label()),
                    None,
                ));
            }
            let version = sent.version;
            let groups = response
                .groups
                .iter()
                .map(|g| ListedGroup {
                    group_id: text(&g.group_id.0),
                    protocol_type: text(&g.protocol_type),
                    state: (version >= 4).then(|| text(&g.group_state)),
                    group_type: (version >= 5).then(|| text(&g.group_type)),
                    coordinator: broker.clone(),
                })
                .filter(|g| {
                    // Filters the broker could not apply: states before v4; types before v5,
                    // when every group is classic.
                    let state_ok = filter.states.is_empty()
                        || g.state.as_ref().is_none_or(|s| filter.states.iter().any(|f| f.eq_ignore_ascii_case(s)));
                    let group_type = g.group_type.as_deref().unwrap_or("classic");
                    let type_ok =
                        filter.types.is_empty() || filter.types.iter().any(|f| f.eq_ignore_ascii_case(group_type));
                    state_ok && type_ok
                })
                .collect();
            return Ok(groups);
        }
    }

    /// DescribeGroups for classic groups, each sent to its coordinator (coordinators queried
    /// in parallel). One result per distinct group, in the order asked; a group's retriable
    /// error (coordinator loading, moved) is retried until the deadline, finding the
    /// coordinator again; GROUP_ID_NOT_FOUND (v6) is a `not_found` error.
    pub async fn describe_groups<S: AsRef<str>>(
        &self,
        groups: &[S],
        deadline: Deadline,
    ) -> Result<Vec<Result<ClassicGroupDescription, ClientError>>, ClientError> {
        let names: Vec<String> = groups.iter().map(|g| g.as_ref().to_string()).collect();
        self.per_coordinator(names, deadline, |client, broker, batch| async move {
            client.describe_on(broker, batch, deadline).await
        })
        .await
    }

    /// ConsumerGroupDescribe for KIP-848 groups, each sent to its coordinator. A broker that
    /// does not serve consumer groups (Kafka 3.9 advertises the API but answers
    /// UNSUPPORTED_VERSION) and a group that is not a consumer group give `not_found` errors.
    pub async fn describe_consumer_groups<S: AsRef<str>>(
        &self,
        groups: &[S],
        deadline: Deadline,
    ) -> Result<Vec<Result<ConsumerGroupDescription, ClientError>>, ClientError> {
        let names: Vec<String> = groups.iter().map(|g| g.as_ref().to_string()).collect();
        self.per_coordinator(names, deadline, |client, broker, batch| async move {
            client.consumer_describe_on(broker, batch, deadline).await
        })
        .await
    }

    /// Runs `describe` for the groups of each coordinator in parallel, retrying the groups it
    /// reports as retriable (`Err` with a retriable code) after finding their coordinators
    /// again, until the deadline.
    pub(in crate::client) async fn per_coordinator<T, F, Fut>(
        &self,
        names: Vec<String>,
        deadline: Deadline,
        describe: F,
    ) -> Result<Vec<Result<T, ClientError>>, ClientError>
    where
        T: Send + 'static,
        F: Fn(Client, Node, Vec<String>) -> Fut,
        Fut: std::future::Future<Output = Result<Vec<(String, Result<T, ClientError>)>, ClientError>> + Send + 'static,
    {
        // A set, not `Vec::contains`: a collection asks for every group of the cluster at once.
        let mut seen = std::collections::HashSet::new();
        let mut unique = Vec::new();
        for name in &names {
            if seen.insert(name.as_str()) {
                unique.push(name.clone());
            }
        }
        let mut done: HashMap<String, Result<T, ClientError>> = HashMap::new();
        let mut todo = unique.clone();
        let mut backoff = Backoff::new(&self.inner.config);
        while !todo.is_empty() {
            let mut by_coordinator: HashMap<i32, (Node, Vec<String>)> = HashMap::new();
            for (group, found) in self.find_coordinators(&todo, deadline).await? {
                match found {
                    Ok(broker) => {
                        by_coordinator.entry(broker.node_id).or_insert_with(|| (broker, Vec::new())).1.push(group)
                    }
                    Err(e) => {
                        done.insert(group, Err(e));
                    }
                }
            }
            let mut tasks = tokio::task::JoinSet::new();
            for (_, (broker, batch)) in by_coordinator {
                let fallback: Vec<String> = batch.clone();
                let fut = describe(self.clone(), broker, batch);
                tasks.spawn(async move { (fallback, fut.await) });
            }
            let mut retry = Vec::new();
            let mut last = None;
            while let Some(joined) = tasks.join_next().await {
                let (batch, outcome) =
                    joined.map_err(|e| ClientError::protocol(format!("a describe task failed: {e}")))?;
                let answers = match outcome {
                    Ok(answers) => answers,
                    Err(e) => batch.into_iter().map(|g| (g, Err(e.clone()))).collect(),
                };
                for (group, result) in answers {
                    match result {
                        Err(e) if e.error_code().is_some_and(is_retriable_group_code) || is_connection_error(&e) => {
                            self.forget_coordinator(&group);
                            last = Some(e);
                            retry.push(group);
                        }
                        other => {
                            done.insert(group, other);
                        }
                    }
                }
            }
            todo = retry;
            if let Some(last) = last {
                if !backoff.wait(deadline).await {
                    let error = backoff.give_up(last);
                    for group in todo.drain(..) {
                        done.insert(group, Err(error.clone()));
                    }
                }
            }
        }
        Ok(unique
            .into_iter()
            .map(|g| {
                done.remove(&g).unwrap_or_else(|| Err(ClientError::protocol(format!("no answer for group '{g}'"))))
            })
            .collect())
    }

    async fn describe_on(
        &self,
        broker: Node,
        batch: Vec<String>,
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<ClassicGroupDescription, ClientError>)>, ClientError> {
        let sent = self
            .call_retrying(&Target::Node(broker.node_id), deadline, |_| {
                DescribeGroupsRequest::default()
                    .with_groups(batch.iter().map(|g| GroupId(StrBytes::from_string(g.clone()))).collect())
            })
            .await?;
        let version = sent.version;
        let mut answers = Vec::new();
        for group in group_api::kafka::from_describe_groups_response(sent.response).groups {
            let group_id = group.group_id;
            let context = format!("DescribeGroups v{version} for group '{group_id}' on {}", broker.label());
            let result = if group.error != ErrorCode::NONE {
                Err(ClientError::from_code(group.error.0, context, group.error_message.as_deref()))
            } else {
                let mut members = group.members;
                members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
                Ok(ClassicGroupDescription {
                    group: inspect::ClassicGroup {
                        group_id: group_id.clone(),
                        state: group.group_state,
                        protocol_type: group.protocol_type,
                        protocol: group.protocol_data,
                        members,
                    },
                    authorized_operations: group.authorized_operations,
                    coordinator: broker.clone(),
                    version,
                })
            };
            answers.push((group_id, result));
        }
        Ok(answers)
    }

    async fn consumer_describe_on(
        &self,
        broker: Node,
        batch: Vec<String>,
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<ConsumerGroupDescription, ClientError>)>, ClientError> {
        let no_consumer_groups = |why: &str| {
            ClientError::new(
                ErrorKind::NotFound,
                format!("{} does not serve KIP-848 consumer groups ({why})", broker.label()),
            )
        };
        let target = Target::Node(broker.node_id);
        if self.api_versions(&target, ConsumerGroupDescribeRequest::KEY, deadline).await?.is_none() {
            let error = no_consumer_groups("no ConsumerGroupDescribe API");
            return Ok(batch.into_iter().map(|g| (g, Err(error.clone()))).collect());
        }
        let sent = self
            .call_retrying(&target, deadline, |_| {
                ConsumerGroupDescribeRequest::default()
                    .with_group_ids(batch.iter().map(|g| GroupId(StrBytes::from_string(g.clone()))).collect())
            })
            .await?;
        let version = sent.version;
        let mut answers = Vec::new();
        for group in sent.response.groups {
            let group_id = text(&group.group_id.0);
            let result = match group.error_code {
                0 => Ok(ConsumerGroupDescription {
                    group: consumer_group(group_id.clone(), &group, version),
                    authorized_operations: group.authorized_operations,
                    coordinator: broker.clone(),
                }),
                // UNSUPPORTED_VERSION: Kafka 3.9 advertises v0 without serving it.
                35 => Err(no_consumer_groups(&format!("ConsumerGroupDescribe v{version}: {}", code_name(35)))),
                code => Err(ClientError::from_code(
                    code,
                    format!("ConsumerGroupDescribe v{version} for group '{group_id}' on {}", broker.label()),
                    group.error_message.as_ref().map(|m| m.as_str()),
                )),
            };
            answers.push((group_id, result));
        }
        Ok(answers)
    }
}

/// A ConsumerGroupDescribe group (answered at `version`) in [`inspect`]'s model, as
/// [`ConsumerGroupDescription::group`] documents it.
fn consumer_group(
    group_id: String,
    group: &messages::consumer_group_describe_response::DescribedGroup,
    version: i16,
) -> inspect::ConsumerGroup {
    // Topic order, ascending partitions: the same assignment reads the same however the broker
    // lists it.
    let topics = |a: &messages::consumer_group_describe_response::Assignment| {
        let mut out: Vec<TopicPartitions> = a
            .topic_partitions
            .iter()
            .map(|t| TopicPartitions::new(text(&t.topic_name.0), t.partitions.clone()))
            .collect();
        out.sort();
        for g in &mut out {
            g.partitions.sort_unstable();
        }
        out
    };
    let mut members: Vec<inspect::ConsumerMember> = group
        .members
        .iter()
        .map(|m| inspect::ConsumerMember {
            member_id: text(&m.member_id),
            instance_id: opt_text(&m.instance_id),
            rack_id: opt_text(&m.rack_id),
            member_epoch: m.member_epoch,
            client_id: text(&m.client_id),
            client_host: text(&m.client_host),
            subscribed_topics: m.subscribed_topic_names.iter().map(|t| text(&t.0)).collect(),
            subscribed_topic_regex: opt_text(&m.subscribed_topic_regex).filter(|r| !r.is_empty()),
            assignment: topics(&m.assignment),
            target_assignment: topics(&m.target_assignment),
            // ConsumerGroupDescribe v1's member type: 0 classic, 1 consumer; absent before v1.
            member_type: match (version >= 1).then_some(m.member_type) {
                Some(0) => inspect::MemberType::Classic,
                Some(1) => inspect::MemberType::Consumer,
                _ => inspect::MemberType::Unknown,
            },
        })
        .collect();
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    inspect::ConsumerGroup {
        group_id,
        state: text(&group.group_state),
        group_epoch: group.group_epoch,
        assignment_epoch: group.assignment_epoch,
        assignor: text(&group.assignor_name),
        members,
    }
}
