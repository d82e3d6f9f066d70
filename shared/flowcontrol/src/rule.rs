//! Whether a request matches a FlowSchema (upstream's `rule.go`): a rule matches when one of
//! its subjects is the user and, for a resource request, one of its resource rules (verb,
//! resource with subresource, API group, then namespace or cluster scope), else one of its
//! non-resource rules (verb, URL or URL prefix).

use kas_auth::UserInfo;

use crate::config::{
    FlowSchema, NonResourcePolicyRule, PolicyRulesWithSubjects, ResourcePolicyRule, Subject,
};

/// Upstream's `NameAll`, `VerbAll`, `APIGroupAll`, `ResourceAll`, `NonResourceAll`,
/// `NamespaceEvery`.
const ALL: &str = "*";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// What classification reads of a request (upstream's `RequestDigest`: the RequestInfo and
/// the user).
#[derive(Clone, Copy, Debug)]
pub struct RequestDigest<'a> {
    pub is_resource_request: bool,
    pub verb: &'a str,
    pub api_group: &'a str,
    pub api_version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub path: &'a str,
    pub user: &'a UserInfo,
}

pub fn matches_flow_schema(digest: &RequestDigest<'_>, schema: &FlowSchema) -> bool {
    schema
        .spec
        .rules
        .iter()
        .any(|rule| matches_policy_rule(digest, rule))
}

fn matches_policy_rule(digest: &RequestDigest<'_>, rule: &PolicyRulesWithSubjects) -> bool {
    if !rule
        .subjects
        .iter()
        .any(|s| matches_subject(digest.user, s))
    {
        return false;
    }
    if digest.is_resource_request {
        rule.resource_rules
            .iter()
            .any(|r| matches_resource_rule(digest, r))
    } else {
        rule.non_resource_rules
            .iter()
            .any(|r| matches_non_resource_rule(digest, r))
    }
}

fn matches_subject(user: &UserInfo, subject: &Subject) -> bool {
    match subject.kind.as_str() {
        "User" => subject
            .user
            .as_ref()
            .is_some_and(|u| u.name == ALL || u.name == user.name),
        "Group" => subject
            .group
            .as_ref()
            .is_some_and(|g| g.name == ALL || user.groups.contains(&g.name)),
        "ServiceAccount" => subject.service_account.as_ref().is_some_and(|sa| {
            let Some(rest) = service_account_rest(&user.name, &sa.namespace) else {
                return false;
            };
            sa.name == ALL || rest == sa.name
        }),
        _ => false,
    }
}

/// What follows `system:serviceaccount:<namespace>:` in `username`, as upstream's
/// prefix checks (`MatchesUsername`, `serviceAccountMatchesNamespace`) read it.
fn service_account_rest<'a>(username: &'a str, namespace: &str) -> Option<&'a str> {
    username
        .strip_prefix(SERVICE_ACCOUNT_PREFIX)?
        .strip_prefix(namespace)?
        .strip_prefix(':')
}

fn matches_resource_rule(digest: &RequestDigest<'_>, rule: &ResourcePolicyRule) -> bool {
    if !contains(digest.verb, &rule.verbs) {
        return false;
    }
    let resource = if digest.subresource.is_empty() {
        std::borrow::Cow::Borrowed(digest.resource)
    } else {
        std::borrow::Cow::Owned(format!("{}/{}", digest.resource, digest.subresource))
    };
    if !contains(&resource, &rule.resources) || !contains(digest.api_group, &rule.api_groups) {
        return false;
    }
    if digest.namespace.is_empty() {
        return rule.cluster_scope;
    }
    contains(digest.namespace, &rule.namespaces)
}

fn matches_non_resource_rule(digest: &RequestDigest<'_>, rule: &NonResourcePolicyRule) -> bool {
    if !contains(digest.verb, &rule.verbs) {
        return false;
    }
    rule.non_resource_urls.iter().any(|url| {
        if url == ALL || url == digest.path {
            return true;
        }
        // Upstream treats every rule path as a prefix of its subpaths: "/healthz" and
        // "/healthz/*" both match "/healthz/etcd".
        let prefix = url.strip_suffix('*').unwrap_or(url);
        if prefix.ends_with('/') {
            digest.path.starts_with(prefix)
        } else {
            digest
                .path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
        }
    })
}

/// Upstream's `containsString`: a list that is exactly the wildcard matches everything.
fn contains(x: &str, list: &[String]) -> bool {
    if let [only] = list
        && only == ALL
    {
        return true;
    }
    list.iter().any(|y| y == x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(rules: serde_json::Value) -> FlowSchema {
        serde_json::from_value(json!({"metadata": {"name": "fs"},
            "spec": {"priorityLevelConfiguration": {"name": "pl"}, "rules": rules}}))
        .unwrap()
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    fn resource<'a>(
        user: &'a UserInfo,
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        namespace: &'a str,
    ) -> RequestDigest<'a> {
        RequestDigest {
            is_resource_request: true,
            verb,
            api_group: group,
            api_version: "v1",
            resource,
            subresource: "",
            namespace,
            name: "",
            path: "",
            user,
        }
    }

    fn path<'a>(user: &'a UserInfo, verb: &'a str, path: &'a str) -> RequestDigest<'a> {
        RequestDigest {
            is_resource_request: false,
            verb,
            api_group: "",
            api_version: "",
            resource: "",
            subresource: "",
            namespace: "",
            name: "",
            path,
            user,
        }
    }

    #[test]
    fn subjects() {
        let alice = user("alice", &["devs"]);
        let sa = user("system:serviceaccount:kube-system:ctrl", &[]);
        let all = json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
            "clusterScope": true, "namespaces": ["*"]}]);
        let by = |subject: serde_json::Value| {
            schema(json!([{"subjects": [subject], "resourceRules": all}]))
        };
        let get = |u| resource(u, "get", "", "pods", "default");
        assert!(matches_flow_schema(
            &get(&alice),
            &by(json!({"kind": "User", "user": {"name": "alice"}}))
        ));
        assert!(matches_flow_schema(
            &get(&alice),
            &by(json!({"kind": "User", "user": {"name": "*"}}))
        ));
        assert!(!matches_flow_schema(
            &get(&alice),
            &by(json!({"kind": "User", "user": {"name": "bob"}}))
        ));
        assert!(matches_flow_schema(
            &get(&alice),
            &by(json!({"kind": "Group", "group": {"name": "devs"}}))
        ));
        assert!(!matches_flow_schema(
            &get(&alice),
            &by(json!({"kind": "Group", "group": {"name": "ops"}}))
        ));
        // A kind without its member matches nothing.
        assert!(!matches_flow_schema(
            &get(&alice),
            &by(json!({"kind": "User"}))
        ));
        let sa_subject = |ns: &str, name: &str| {
            by(json!({"kind": "ServiceAccount", "serviceAccount": {"namespace": ns, "name": name}}))
        };
        assert!(matches_flow_schema(
            &get(&sa),
            &sa_subject("kube-system", "ctrl")
        ));
        assert!(matches_flow_schema(
            &get(&sa),
            &sa_subject("kube-system", "*")
        ));
        assert!(!matches_flow_schema(
            &get(&sa),
            &sa_subject("kube-system", "other")
        ));
        assert!(!matches_flow_schema(&get(&sa), &sa_subject("kube", "*")));
        assert!(!matches_flow_schema(
            &get(&alice),
            &sa_subject("kube-system", "*")
        ));
    }

    #[test]
    fn resource_rules() {
        let u = user("u", &["g"]);
        let fs = schema(
            json!([{"subjects": [{"kind": "Group", "group": {"name": "g"}}],
            "resourceRules": [{"verbs": ["get", "list"], "apiGroups": ["", "apps"],
                "resources": ["pods", "deployments/scale"], "namespaces": ["a"]}]}]),
        );
        assert!(matches_flow_schema(
            &resource(&u, "get", "", "pods", "a"),
            &fs
        ));
        assert!(!matches_flow_schema(
            &resource(&u, "create", "", "pods", "a"),
            &fs
        ));
        assert!(!matches_flow_schema(
            &resource(&u, "get", "", "pods", "b"),
            &fs
        ));
        // Cluster-scoped requests need clusterScope.
        assert!(!matches_flow_schema(
            &resource(&u, "list", "", "pods", ""),
            &fs
        ));
        assert!(!matches_flow_schema(
            &resource(&u, "get", "batch", "pods", "a"),
            &fs
        ));
        let mut scale = resource(&u, "get", "apps", "deployments", "a");
        assert!(!matches_flow_schema(&scale, &fs));
        scale.subresource = "scale";
        assert!(matches_flow_schema(&scale, &fs));
        // Non-resource requests need non-resource rules.
        assert!(!matches_flow_schema(&path(&u, "get", "/healthz"), &fs));
        // A wildcard only counts alone.
        let fs = schema(
            json!([{"subjects": [{"kind": "Group", "group": {"name": "g"}}],
            "resourceRules": [{"verbs": ["*", "get"], "apiGroups": ["*"],
                "resources": ["*"], "clusterScope": true}]}]),
        );
        assert!(!matches_flow_schema(
            &resource(&u, "list", "", "nodes", ""),
            &fs
        ));
        assert!(matches_flow_schema(
            &resource(&u, "get", "", "nodes", ""),
            &fs
        ));
    }

    #[test]
    fn non_resource_rules() {
        let u = user("u", &["g"]);
        let fs = |urls: serde_json::Value| {
            schema(
                json!([{"subjects": [{"kind": "Group", "group": {"name": "g"}}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": urls}]}]),
            )
        };
        let healthz = fs(json!(["/healthz"]));
        assert!(matches_flow_schema(&path(&u, "get", "/healthz"), &healthz));
        assert!(matches_flow_schema(
            &path(&u, "get", "/healthz/etcd"),
            &healthz
        ));
        assert!(!matches_flow_schema(
            &path(&u, "get", "/healthzz"),
            &healthz
        ));
        assert!(!matches_flow_schema(
            &path(&u, "post", "/healthz"),
            &healthz
        ));
        let star = fs(json!(["/apis/*"]));
        assert!(matches_flow_schema(&path(&u, "get", "/apis/apps"), &star));
        assert!(!matches_flow_schema(&path(&u, "get", "/api"), &star));
        assert!(matches_flow_schema(
            &path(&u, "get", "/anything"),
            &fs(json!(["*"]))
        ));
    }
}
