//! The `flowcontrol.apiserver.k8s.io/v1` objects as APF reads them: the fields of a
//! FlowSchema and a PriorityLevelConfiguration that classification and the concurrency
//! limits use, decoded from the stored JSON (which the registry has defaulted and
//! validated). Field names are checked by serde, not looked up by string.

use serde::Deserialize;

/// Upstream's `FlowSchemaNameExempt`, `PriorityLevelConfigurationNameExempt`.
pub const EXEMPT: &str = "exempt";
/// Upstream's `FlowSchemaNameCatchAll`, `PriorityLevelConfigurationNameCatchAll`.
pub const CATCH_ALL: &str = "catch-all";

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub uid: String,
    #[serde(default)]
    pub resource_version: String,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FlowSchema {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: FlowSchemaSpec,
    #[serde(default)]
    pub status: FlowSchemaStatus,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FlowSchemaSpec {
    #[serde(default)]
    pub priority_level_configuration: Reference,
    #[serde(default)]
    pub matching_precedence: i32,
    #[serde(default)]
    pub distinguisher_method: Option<DistinguisherMethod>,
    #[serde(default)]
    pub rules: Vec<PolicyRulesWithSubjects>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct Reference {
    #[serde(default)]
    pub name: String,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct DistinguisherMethod {
    #[serde(rename = "type", default)]
    pub kind: String,
}

/// Upstream's `FlowDistinguisherMethodByUserType` and `...ByNamespaceType`.
pub const BY_USER: &str = "ByUser";
pub const BY_NAMESPACE: &str = "ByNamespace";

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRulesWithSubjects {
    #[serde(default)]
    pub subjects: Vec<Subject>,
    #[serde(default)]
    pub resource_rules: Vec<ResourcePolicyRule>,
    #[serde(default)]
    pub non_resource_rules: Vec<NonResourcePolicyRule>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub user: Option<Reference>,
    #[serde(default)]
    pub group: Option<Reference>,
    #[serde(default)]
    pub service_account: Option<ServiceAccountSubject>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct ServiceAccountSubject {
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub name: String,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ResourcePolicyRule {
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub cluster_scope: bool,
    #[serde(default)]
    pub namespaces: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NonResourcePolicyRule {
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct FlowSchemaStatus {
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct PriorityLevelConfiguration {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PriorityLevelSpec,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct PriorityLevelSpec {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub limited: Option<Limited>,
    #[serde(default)]
    pub exempt: Option<Exempt>,
}

/// Upstream's `PriorityLevelEnablementExempt` and `...Limited`.
pub const TYPE_EXEMPT: &str = "Exempt";
pub const TYPE_LIMITED: &str = "Limited";
/// Upstream's `LimitResponseTypeQueue` and `...Reject`.
pub const QUEUE: &str = "Queue";
pub const REJECT: &str = "Reject";

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Limited {
    #[serde(default)]
    pub nominal_concurrency_shares: Option<i32>,
    #[serde(default)]
    pub limit_response: LimitResponse,
    #[serde(default)]
    pub lendable_percent: Option<i32>,
    #[serde(default)]
    pub borrowing_limit_percent: Option<i32>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Exempt {
    #[serde(default)]
    pub nominal_concurrency_shares: Option<i32>,
    #[serde(default)]
    pub lendable_percent: Option<i32>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct LimitResponse {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub queuing: Option<Queuing>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Queuing {
    #[serde(default)]
    pub queues: i32,
    #[serde(default)]
    pub hand_size: i32,
    #[serde(default)]
    pub queue_length_limit: i32,
}

impl PriorityLevelConfiguration {
    pub fn is_exempt(&self) -> bool {
        self.spec.kind == TYPE_EXEMPT
    }

    /// Upstream's `plSpecCommons`: nominal concurrency shares (0 when unset, which the
    /// registry's defaulting never leaves), lendable and borrowing-limit percents.
    pub fn commons(&self) -> (i32, Option<i32>, Option<i32>) {
        if let Some(limited) = &self.spec.limited {
            return (
                limited.nominal_concurrency_shares.unwrap_or(0),
                limited.lendable_percent,
                limited.borrowing_limit_percent,
            );
        }
        let exempt = self.spec.exempt.clone().unwrap_or_default();
        (
            exempt.nominal_concurrency_shares.unwrap_or(0),
            exempt.lendable_percent,
            None,
        )
    }

    /// The queuing parameters of a `Limited` level that queues.
    pub fn queuing(&self) -> Option<&Queuing> {
        self.spec
            .limited
            .as_ref()
            .and_then(|l| l.limit_response.queuing.as_ref())
    }

    /// Upstream's checks in `queueSetCompleterForPL`: the unions agree with the type, and
    /// only the level named `exempt` is of type `Exempt`.
    pub fn check_structure(&self) -> Result<(), String> {
        let spec = &self.spec;
        if (spec.kind == TYPE_LIMITED) != spec.limited.is_some() {
            return Err("broken union structure at the top, for Limited".to_owned());
        }
        if (spec.kind == TYPE_EXEMPT) != spec.exempt.is_some() {
            return Err("broken union structure at the top, for Exempt".to_owned());
        }
        if (spec.kind == TYPE_EXEMPT) != (self.metadata.name == EXEMPT) {
            return Err("non-alignment between name and type".to_owned());
        }
        if let Some(limited) = &spec.limited
            && (limited.limit_response.kind == REJECT) != limited.limit_response.queuing.is_none()
        {
            return Err("broken union structure for limit response".to_owned());
        }
        Ok(())
    }
}

impl FlowSchema {
    /// The `Dangling` condition, when the schema has one.
    pub fn dangling(&self) -> Option<&Condition> {
        self.status.conditions.iter().find(|c| c.kind == "Dangling")
    }
}

/// Upstream's mandatory objects (`bootstrap.MandatoryFlowSchemaExempt` and the like),
/// which classification imagines when they are not stored.
pub fn mandatory_flow_schema(name: &str) -> Option<FlowSchema> {
    let spec = crate::bootstrap::mandatory_flow_schema(name)?;
    let object = serde_json::json!({"metadata": {"name": name}, "spec": spec});
    serde_json::from_value(object).ok()
}

pub fn mandatory_priority_level(name: &str) -> Option<PriorityLevelConfiguration> {
    let spec = crate::bootstrap::mandatory_priority_level(name)?;
    let object = serde_json::json!({"metadata": {"name": name}, "spec": spec});
    serde_json::from_value(object).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mandatory_objects_decode() {
        let exempt = mandatory_priority_level(EXEMPT).unwrap();
        assert!(exempt.is_exempt());
        assert_eq!(exempt.commons(), (0, Some(0), None));
        exempt.check_structure().unwrap();
        let catch_all = mandatory_priority_level(CATCH_ALL).unwrap();
        assert_eq!(catch_all.commons(), (5, Some(0), None));
        assert_eq!(catch_all.spec.limited.unwrap().limit_response.kind, REJECT);
        let fs = mandatory_flow_schema(CATCH_ALL).unwrap();
        assert_eq!(fs.spec.matching_precedence, 10000);
        assert_eq!(fs.spec.priority_level_configuration.name, CATCH_ALL);
        assert_eq!(fs.spec.distinguisher_method.unwrap().kind, BY_USER);
        let fs = mandatory_flow_schema(EXEMPT).unwrap();
        assert_eq!(fs.spec.matching_precedence, 1);
        assert_eq!(
            fs.spec.rules[0].subjects[0].group.as_ref().unwrap().name,
            "system:masters"
        );
    }
}
