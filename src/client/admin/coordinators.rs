//! FindCoordinator: the coordinators of groups, remembered until a call forgets them.

use std::collections::{HashMap, HashSet};

use kafka_protocol::messages::FindCoordinatorRequest;

use super::{opt_text, text};
use crate::client::error::is_retriable_group_code;
use crate::client::pool::lock;
use crate::client::send::Backoff;
use crate::client::{Client, ClientError, Deadline, ErrorKind, Node, StrBytes, Target};

impl Client {
    /// COORDINATOR_NOT_AVAILABLE), so the next call finds it again.
    pub fn forget_coordinator(&self, group: &str) {
        lock(&self.inner.coordinators).remove(group);
    }

    /// The coordinator of `group` (FindCoordinator, remembered until forgotten).
    pub async fn coordinator(&self, group: &str, deadline: Deadline) -> Result<Node, ClientError> {
        if let Some(broker) = lock(&self.inner.coordinators).get(group).cloned() {
            return Ok(broker);
        }
        let mut found = self.find_coordinators(&[group], deadline).await?;
        found
            .pop()
            .map(|(_, result)| result)
            .unwrap_or_else(|| Err(ClientError::protocol("FindCoordinator answered nothing")))
    }

    /// The coordinators of several groups (those remembered, and the others found with
    /// FindCoordinator: batched in one request on brokers with v4+, one request per group
    /// below). Each group's result is separate (one group's
    /// GROUP_AUTHORIZATION_FAILED does not fail the others); COORDINATOR_NOT_AVAILABLE and
    /// COORDINATOR_LOAD_IN_PROGRESS are retried until the deadline.
    pub async fn find_coordinators<S: AsRef<str>>(
        &self,
        groups: &[S],
        deadline: Deadline,
    ) -> Result<Vec<(String, Result<Node, ClientError>)>, ClientError> {
        let mut results: HashMap<String, Result<Node, ClientError>> = HashMap::new();
        let mut todo: Vec<String> = Vec::new();
        // Sets, not `Vec::contains`: a collection asks for every group of the cluster at once.
        let mut queued = HashSet::new();
        for group in groups {
            let group = group.as_ref().to_string();
            if let Some(known) = lock(&self.inner.coordinators).get(&group).cloned() {
                results.insert(group, Ok(known));
            } else if queued.insert(group.clone()) {
                todo.push(group);
            }
        }
        let mut backoff = Backoff::new(&self.inner.config);
        // The retriable answer that sent the groups still in `todo` round again. If the deadline
        // then ends during the retry's own request, that answer is what the caller needs to see
        // (as when it ends during the backoff), not "no response before the deadline".
        let mut sent_round_again: Option<ClientError> = None;
        while !todo.is_empty() {
            let live = match self.any_connection(deadline).await {
                Ok((live, _)) => live,
                Err(e) if e.kind() == ErrorKind::Timeout && sent_round_again.is_some() => {
                    let error = backoff.give_up(sent_round_again.take().unwrap_or(e));
                    for group in todo.drain(..) {
                        results.insert(group, Err(error.clone()));
                    }
                    break;
                }
                Err(e) => return Err(e),
            };
            let batched = live.versions.pick::<FindCoordinatorRequest>(None, &live.conn.label)? >= 4;
            let chunks: Vec<Vec<String>> =
                if batched { vec![todo.clone()] } else { todo.iter().map(|g| vec![g.clone()]).collect() };
            let mut retry = Vec::new();
            let mut last_retriable = None;
            for chunk in chunks {
                let sent = self
                    .call_retrying(&Target::AnyBroker, deadline, |version| {
                        let mut request = FindCoordinatorRequest::default();
                        if version >= 4 {
                            request.coordinator_keys = chunk.iter().map(|g| StrBytes::from_string(g.clone())).collect();
                        } else {
                            request.key = StrBytes::from_string(chunk[0].clone());
                        }
                        request
                    })
                    .await;
                let sent = match sent {
                    Ok(sent) => sent,
                    Err(e) if e.kind() == ErrorKind::Timeout && sent_round_again.is_some() => {
                        let error = backoff.give_up(sent_round_again.take().unwrap_or(e));
                        for group in &todo {
                            results.entry(group.clone()).or_insert_with(|| Err(error.clone()));
                        }
                        retry.clear();
                        break;
                    }
                    Err(e) => return Err(e),
                };
                let version = sent.version;
                let answers: Vec<(String, i16, Option<String>, i32, String, i32)> = if version >= 4 {
                    sent.response
                        .coordinators
                        .iter()
                        .map(|c| {
                            (text(&c.key), c.error_code, opt_text(&c.error_message), c.node_id.0, text(&c.host), c.port)
                        })
                        .collect()
                } else {
                    let r = &sent.response;
                    vec![(
                        chunk[0].clone(),
                        r.error_code,
                        opt_text(&r.error_message),
                        r.node_id.0,
                        text(&r.host),
                        r.port,
                    )]
                };
                let asked: HashSet<&str> = chunk.iter().map(String::as_str).collect();
                for (group, code, message, node_id, host, port) in answers {
                    if !asked.contains(group.as_str()) {
                        continue;
                    }
                    let context = format!("FindCoordinator v{version} for group '{group}'");
                    if code == 0 {
                        let rack = lock(&self.inner.brokers).get(&node_id).and_then(|b| b.rack.clone());
                        let broker = Node { node_id, host, port: port as u16, rack };
                        lock(&self.inner.coordinators).insert(group.clone(), broker.clone());
                        results.insert(group, Ok(broker));
                    } else if is_retriable_group_code(code) {
                        last_retriable = Some(ClientError::from_code(code, context, message.as_deref()));
                        retry.push(group);
                    } else {
                        results.insert(group, Err(ClientError::from_code(code, context, message.as_deref())));
                    }
                }
                let retrying: HashSet<&String> = retry.iter().collect();
                for group in &chunk {
                    if !results.contains_key(group) && !retrying.contains(group) {
                        results.insert(
                            group.clone(),
                            Err(ClientError::protocol(format!(
                                "FindCoordinator v{version} did not answer for group '{group}'"
                            ))),
                        );
                    }
                }
            }
            todo = retry;
            sent_round_again = None;
            if let Some(last) = last_retriable {
                if backoff.wait(deadline).await {
                    sent_round_again = Some(last);
                } else {
                    let error = backoff.give_up(last);
                    for group in todo.drain(..) {
                        results.insert(group, Err(error.clone()));
                    }
                }
            }
        }
        let mut ordered = Vec::new();
        for group in groups {
            let group = group.as_ref();
            if let Some(result) = results.remove(group) {
                ordered.push((group.to_string(), result));
            }
        }
        Ok(ordered)
    }
}
