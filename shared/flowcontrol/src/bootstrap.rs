//! The mandatory and suggested FlowSchemas and PriorityLevelConfigurations of upstream's
//! `apiserver/pkg/apis/flowcontrol/bootstrap/default.go` (1.33), which the APF
//! configuration producer creates when they are missing.

use serde_json::{Value, json};

/// Upstream's `AutoUpdateAnnotationKey`.
pub const AUTO_UPDATE_ANNOTATION: &str = "apf.kubernetes.io/autoupdate-spec";

fn object(kind: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
        "spec": spec,
    })
}

fn limited(shares: i64, lendable: i64, queuing: Option<(i64, i64)>) -> Value {
    let limit_response = match queuing {
        None => json!({"type": "Reject"}),
        Some((queues, hand_size)) => json!({"type": "Queue", "queuing":
            {"queues": queues, "handSize": hand_size, "queueLengthLimit": 50}}),
    };
    json!({"type": "Limited", "limited": {"nominalConcurrencyShares": shares,
        "lendablePercent": lendable, "limitResponse": limit_response}})
}

/// Upstream's mandatory priority levels' specs, by name.
pub fn mandatory_priority_level(name: &str) -> Option<Value> {
    match name {
        "exempt" => Some(json!({"type": "Exempt",
            "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}})),
        "catch-all" => Some(limited(5, 0, None)),
        _ => None,
    }
}

fn priority_levels() -> Vec<Value> {
    let mut out: Vec<Value> = ["catch-all", "exempt"]
        .into_iter()
        .map(|n| {
            let spec = mandatory_priority_level(n).unwrap_or_default();
            object("PriorityLevelConfiguration", n, spec)
        })
        .collect();
    let suggested = [
        ("system", 30, 33, 64),
        ("node-high", 40, 25, 64),
        ("leader-election", 10, 0, 16),
        ("workload-high", 40, 50, 128),
        ("workload-low", 100, 90, 128),
        ("global-default", 20, 50, 128),
    ];
    for (name, shares, lendable, queues) in suggested {
        let hand = if name == "leader-election" { 4 } else { 6 };
        let spec = limited(shares, lendable, Some((queues, hand)));
        out.push(object("PriorityLevelConfiguration", name, spec));
    }
    out
}

fn groups(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({"kind": "Group", "group": {"name": n}}))
        .collect()
}

fn users(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({"kind": "User", "user": {"name": n}}))
        .collect()
}

fn kube_system_service_accounts(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| {
            json!({"kind": "ServiceAccount",
            "serviceAccount": {"name": n, "namespace": "kube-system"}})
        })
        .collect()
}

fn resource_rule(
    verbs: &[&str],
    groups: &[&str],
    resources: &[&str],
    ns: &[&str],
    cluster: bool,
) -> Value {
    let mut rule = json!({"verbs": verbs, "apiGroups": groups, "resources": resources,
        "namespaces": ns});
    if cluster {
        rule["clusterScope"] = json!(true);
    }
    rule
}

/// Every request: all resources (cluster-scoped and in every namespace) and all paths.
fn everything(subjects: Vec<Value>) -> Value {
    json!({"subjects": subjects,
        "resourceRules": [resource_rule(&["*"], &["*"], &["*"], &["*"], true)],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]})
}

fn schema(pl: &str, precedence: i64, method: Option<&str>, rule: Value) -> Value {
    let mut spec = json!({"priorityLevelConfiguration": {"name": pl},
        "matchingPrecedence": precedence, "rules": [rule]});
    if let Some(method) = method {
        spec["distinguisherMethod"] = json!({"type": method});
    }
    spec
}

/// Upstream's mandatory flow schemas' specs, by name.
pub fn mandatory_flow_schema(name: &str) -> Option<Value> {
    match name {
        "exempt" => Some(schema(
            "exempt",
            1,
            None,
            everything(groups(&["system:masters"])),
        )),
        "catch-all" => Some(schema(
            "catch-all",
            10000,
            Some("ByUser"),
            everything(groups(&["system:unauthenticated", "system:authenticated"])),
        )),
        _ => None,
    }
}

fn flow_schemas() -> Vec<Value> {
    let all = ["system:unauthenticated", "system:authenticated"];
    let leader_rules = |ns: &str| {
        vec![
            resource_rule(
                &["get", "create", "update"],
                &[""],
                &["endpoints", "configmaps"],
                &[ns],
                false,
            ),
            resource_rule(
                &["get", "create", "update"],
                &["coordination.k8s.io"],
                &["leases"],
                &["*"],
                false,
            ),
        ]
    };
    let mut leader_subjects = users(&["system:kube-controller-manager", "system:kube-scheduler"]);
    leader_subjects.extend(kube_system_service_accounts(&["*"]));
    let mut endpoint_subjects = users(&["system:kube-controller-manager"]);
    endpoint_subjects.extend(kube_system_service_accounts(&[
        "endpoint-controller",
        "endpointslicemirroring-controller",
    ]));
    let suggested = [
        (
            "system-nodes",
            schema(
                "system",
                500,
                Some("ByUser"),
                everything(groups(&["system:nodes"])),
            ),
        ),
        (
            "system-node-high",
            schema(
                "node-high",
                400,
                Some("ByUser"),
                json!({
                "subjects": groups(&["system:nodes"]),
                "resourceRules": [
                    resource_rule(&["*"], &[""], &["nodes", "nodes/status"], &["*"], true),
                    resource_rule(&["*"], &["coordination.k8s.io"], &["leases"], &["*"], false),
                ]}),
            ),
        ),
        (
            "probes",
            schema(
                "exempt",
                2,
                None,
                json!({"subjects": groups(&all),
            "nonResourceRules": [{"verbs": ["get"],
                "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}),
            ),
        ),
        (
            "system-leader-election",
            schema(
                "leader-election",
                100,
                Some("ByUser"),
                json!({
            "subjects": leader_subjects, "resourceRules": leader_rules("kube-system")}),
            ),
        ),
        (
            "workload-leader-election",
            schema(
                "leader-election",
                200,
                Some("ByUser"),
                json!({
            "subjects": kube_system_service_accounts(&["*"]),
            "resourceRules": leader_rules("*")}),
            ),
        ),
        (
            "endpoint-controller",
            schema(
                "workload-high",
                150,
                Some("ByUser"),
                json!({
            "subjects": endpoint_subjects,
            "resourceRules": [resource_rule(&["get", "create", "update"], &[""], &["endpoints"], &["*"], false)]}),
            ),
        ),
        (
            "kube-controller-manager",
            schema(
                "workload-high",
                800,
                Some("ByNamespace"),
                everything(users(&["system:kube-controller-manager"])),
            ),
        ),
        (
            "kube-scheduler",
            schema(
                "workload-high",
                800,
                Some("ByNamespace"),
                everything(users(&["system:kube-scheduler"])),
            ),
        ),
        (
            "kube-system-service-accounts",
            schema(
                "workload-high",
                900,
                Some("ByNamespace"),
                everything(kube_system_service_accounts(&["*"])),
            ),
        ),
        (
            "service-accounts",
            schema(
                "workload-low",
                9000,
                Some("ByUser"),
                everything(groups(&["system:serviceaccounts"])),
            ),
        ),
        (
            "global-default",
            schema(
                "global-default",
                9900,
                Some("ByUser"),
                everything(groups(&all)),
            ),
        ),
    ];
    let mut out: Vec<Value> = ["exempt", "catch-all"]
        .into_iter()
        .map(|n| {
            object(
                "FlowSchema",
                n,
                mandatory_flow_schema(n).unwrap_or_default(),
            )
        })
        .collect();
    out.extend(
        suggested
            .into_iter()
            .map(|(n, spec)| object("FlowSchema", n, spec)),
    );
    out
}

/// The objects core-apiserver creates at start when missing, with the plural they are
/// created under: the priority levels first, as upstream's producer ensures them first.
pub fn bootstrap_objects() -> Vec<(&'static str, Value)> {
    let levels = priority_levels()
        .into_iter()
        .map(|o| ("prioritylevelconfigurations", o));
    let schemas = flow_schemas().into_iter().map(|o| ("flowschemas", o));
    levels.chain(schemas).collect()
}
