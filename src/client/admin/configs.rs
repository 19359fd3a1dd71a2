//! A broker's configs (DescribeConfigs) and the cluster's finalized features (ApiVersions).

use std::collections::BTreeMap;

use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::DescribeConfigsRequest;
use kafka_protocol::protocol::StrBytes;

use crate::client::{Client, ClientError, Deadline, Target};

/// DescribeConfigs' resource type of a broker.
const BROKER_RESOURCE: i8 = 4;

/// One broker config as DescribeConfigs reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerConfig {
    /// The config name, for example `group.consumer.max.size`.
    pub name: String,
    /// Its value; `None` for a sensitive config or one without a value.
    pub value: Option<String>,
    /// Where the value comes from: `static` (server.properties), `default`, `dynamic_broker`,
    /// `dynamic_default_broker`, or `unknown` (v0 says only whether it is the default).
    pub source: &'static str,
}

fn source_name(code: i8) -> &'static str {
    match code {
        2 => "dynamic_broker",
        3 => "dynamic_default_broker",
        4 => "static",
        5 => "default",
        6 => "dynamic_broker_logger",
        _ => "unknown",
    }
}

impl Client {
    /// DescribeConfigs of broker `node_id` for `names` (every config when `names` is empty),
    /// sent to that broker (a broker answers for its own configs). A config the broker does
    /// not report (an internal config left unset) is absent from the result, which is sorted
    /// by name.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline, Target};
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Client::new(ClientConfig::new(["127.0.0.1:9092"])?)?;
    /// let deadline = Deadline::after(Duration::from_secs(10));
    /// let coordinator = client.coordinator("orders-app", deadline).await?;
    /// let configs = client
    ///     .describe_broker_configs(coordinator.node_id, &["group.consumer.migration.policy"], deadline)
    ///     .await?;
    /// let features = client.finalized_features(&Target::Node(coordinator.node_id), deadline).await?;
    /// println!("{configs:?}, group.version={:?}", features.get("group.version"));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn describe_broker_configs(
        &self,
        node_id: i32,
        names: &[&str],
        deadline: Deadline,
    ) -> Result<Vec<BrokerConfig>, ClientError> {
        let keys: Option<Vec<StrBytes>> =
            (!names.is_empty()).then(|| names.iter().map(|n| StrBytes::from_string((*n).to_owned())).collect());
        let sent = self
            .call_retrying(&Target::Node(node_id), deadline, |_| {
                DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
                    .with_resource_type(BROKER_RESOURCE)
                    .with_resource_name(StrBytes::from_string(node_id.to_string()))
                    .with_configuration_keys(keys.clone())])
            })
            .await?;
        let version = sent.version;
        let Some(result) = sent.response.results.into_iter().next() else {
            return Err(ClientError::protocol(format!("DescribeConfigs v{version} for broker {node_id}: no result")));
        };
        if result.error_code != 0 {
            return Err(ClientError::from_code(
                result.error_code,
                format!("DescribeConfigs v{version} for broker {node_id}"),
                result.error_message.as_ref().map(|m| m.as_str()),
            ));
        }
        let mut configs: Vec<BrokerConfig> = result
            .configs
            .iter()
            .map(|c| BrokerConfig {
                name: c.name.to_string(),
                value: c.value.as_ref().map(|v| v.to_string()),
                source: if version == 0 { "unknown" } else { source_name(c.config_source) },
            })
            .collect();
        configs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(configs)
    }

    /// The finalized features (name to level) `target` reported in ApiVersions (v3+, on
    /// connecting): `group.version`, `metadata.version`, ... Empty from a broker older than
    /// ApiVersions v3.
    pub async fn finalized_features(
        &self,
        target: &Target,
        deadline: Deadline,
    ) -> Result<BTreeMap<String, i16>, ClientError> {
        let (live, _) = self.target_connection(target, 0, deadline).await?;
        Ok(live.versions.finalized_features().clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_sources_are_named() {
        assert_eq!(source_name(4), "static");
        assert_eq!(source_name(5), "default");
        assert_eq!(source_name(2), "dynamic_broker");
        assert_eq!(source_name(42), "unknown");
    }
}
