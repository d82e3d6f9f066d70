//! Upstream's escalation prevention on RBAC writes (`pkg/registry/rbac/*/policybased`): a
//! user may create or update a Role or ClusterRole only with rules they already hold (or
//! the `escalate` verb on it), and a binding only to a role whose rules they hold (or the
//! `bind` verb on it); `system:masters` may do anything, and updates that touch only the
//! fields the garbage collector writes pass.
//!
//! It runs as a validating admission step of the four RBAC stores, so it sees the state the
//! write would store and the writing user. Upstream checks before the strategy's
//! validation; here an object that is both invalid and escalating gets the validation
//! error first.

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes as AuthzAttributes, DynAuthorizer};
use kas_rbac::escalation::{
    AGGREGATION_RULE_FORBIDDEN, binding_authorized, confirm_no_escalation, escalation_allowed,
    full_authority, has_aggregation_rule, role_escalation_authorized,
};
use kas_rbac::{DefaultRuleResolver, PolicyRule, RoleRef};
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Operation, Validate};
use serde_json::Value;

const GROUP: &str = "rbac.authorization.k8s.io";

pub struct EscalationCheck {
    pub resolver: DefaultRuleResolver,
    /// The authorizer of `--authorization-mode`, asked for `escalate` and `bind`.
    pub authorizer: DynAuthorizer,
}

/// Upstream's `IsOnlyMutatingGCFields`: the objects differ at most in
/// `metadata.ownerReferences` and `metadata.finalizers`.
fn only_gc_fields(new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("ownerReferences");
            meta.remove("finalizers");
            // What the store stamps is not the writer's change.
            for stamped in ["resourceVersion", "managedFields", "generation"] {
                meta.remove(stamped);
            }
        }
        v
    };
    strip(new) == strip(old)
}

fn forbidden(resource: &str, name: &str, message: &str) -> kas_registry::Error {
    Status::forbidden(GROUP, resource, name, message).into()
}

impl EscalationCheck {
    async fn check_role(&self, a: &Attributes<'_>, user: &UserInfo) -> kas_registry::Result<()> {
        let resource = a.descriptor.plural;
        let request = AuthzAttributes {
            user: user.clone(),
            is_resource_request: true,
            namespace: a.namespace.to_owned(),
            api_group: GROUP.to_owned(),
            resource: resource.to_owned(),
            name: a.name.to_owned(),
            ..AuthzAttributes::default()
        };
        if role_escalation_authorized(&request, self.authorizer.as_ref()).await {
            return Ok(());
        }
        let new = a.object.unwrap_or(&Value::Null);
        if let Some(old) = a.old_object
            && only_gc_fields(new, old)
        {
            return Ok(());
        }
        let rules = PolicyRule::rules_of(new).map_err(|e| Status::bad_request(&e.to_string()))?;
        confirm_no_escalation(&self.resolver, user, a.namespace, &rules)
            .map_err(|e| forbidden(resource, a.name, &e))?;
        let aggregates =
            has_aggregation_rule(new) || a.old_object.is_some_and(has_aggregation_rule);
        if resource == "clusterroles" && aggregates {
            confirm_no_escalation(&self.resolver, user, a.namespace, &full_authority())
                .map_err(|_| forbidden(resource, a.name, AGGREGATION_RULE_FORBIDDEN))?;
        }
        Ok(())
    }

    async fn check_binding(&self, a: &Attributes<'_>, user: &UserInfo) -> kas_registry::Result<()> {
        let new = a.object.unwrap_or(&Value::Null);
        if let Some(old) = a.old_object
            && only_gc_fields(new, old)
        {
            return Ok(());
        }
        let role_ref = RoleRef::from_value(new.get("roleRef").unwrap_or(&Value::Null));
        if binding_authorized(user, &role_ref, a.namespace, self.authorizer.as_ref()).await {
            return Ok(());
        }
        let rules = self
            .resolver
            .rules_for_role_ref(a.namespace, &role_ref)
            .map_err(|e| role_ref_error(&role_ref, e))?;
        confirm_no_escalation(&self.resolver, user, a.namespace, &rules)
            .map_err(|e| forbidden(a.descriptor.plural, a.name, &e))
    }
}

/// What upstream answers when the bound role cannot be read: its lister's NotFound (of
/// the singular `role`/`clusterrole`), or the resolver's own error.
fn role_ref_error(role_ref: &RoleRef, message: String) -> kas_registry::Error {
    let singular = match role_ref.kind.as_str() {
        "Role" => "role",
        "ClusterRole" => "clusterrole",
        _ => return Status::internal_error(&message).into(),
    };
    if message.ends_with("not found") {
        return Status::not_found(GROUP, singular, &role_ref.name).into();
    }
    Status::internal_error(&message).into()
}

impl Validate for EscalationCheck {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        descriptor.group == GROUP
            && subresource.is_empty()
            && matches!(operation, Operation::Create | Operation::Update)
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            // A write without a user is the server's own (the ClusterRole aggregation
            // controller, the bootstrap policy), as upstream's loopback client in
            // system:masters.
            let Some(user) = attributes.user else {
                return Ok(());
            };
            if escalation_allowed(user) {
                return Ok(());
            }
            match attributes.descriptor.plural {
                "roles" | "clusterroles" => self.check_role(attributes, user).await,
                "rolebindings" | "clusterrolebindings" => {
                    self.check_binding(attributes, user).await
                }
                _ => Ok(()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kas_auth::authorization::{Authorizer, Decision};
    use kas_rbac::{Index, Kind};
    use serde_json::json;

    use super::*;

    /// Allows only `bind` on ClusterRole "bindable".
    struct BindOnly;

    impl Authorizer for BindOnly {
        fn authorize<'a>(
            &'a self,
            attrs: &'a AuthzAttributes,
        ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
            let ok = attrs.verb == "bind" && attrs.name == "bindable";
            let decision = if ok {
                Decision::Allow
            } else {
                Decision::NoOpinion
            };
            Box::pin(async move { Ok((decision, String::new())) })
        }
    }

    fn check() -> EscalationCheck {
        let index = Arc::new(Index::new());
        index
            .upsert_value(
                Kind::ClusterRole,
                &json!({"metadata": {"name": "reader"},
            "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
            )
            .unwrap();
        index
            .upsert_value(
                Kind::ClusterRole,
                &json!({"metadata": {"name": "deleter"},
            "rules": [{"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"]}]}),
            )
            .unwrap();
        index
            .upsert_value(
                Kind::ClusterRoleBinding,
                &json!({"metadata": {"name": "alice-reads"},
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "reader"},
            "subjects": [{"kind": "User", "apiGroup": GROUP, "name": "alice"}]}),
            )
            .unwrap();
        EscalationCheck {
            resolver: DefaultRuleResolver::new(index),
            authorizer: Arc::new(BindOnly),
        }
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    fn descriptor(plural: &str) -> &'static ResourceDescriptor {
        use crate::resources::rbac::*;
        match plural {
            "roles" => &roles::DESCRIPTOR,
            "clusterroles" => &clusterroles::DESCRIPTOR,
            "rolebindings" => &rolebindings::DESCRIPTOR,
            _ => &clusterrolebindings::DESCRIPTOR,
        }
    }

    async fn write(
        plural: &str,
        ns: &str,
        user: &UserInfo,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), Status> {
        let name = new["metadata"]["name"].as_str().unwrap_or_default();
        let operation = if old.is_some() {
            Operation::Update
        } else {
            Operation::Create
        };
        let mut a = Attributes::new(operation, descriptor(plural), ns, name, Some(new));
        a.old_object = old;
        a.user = Some(user);
        let check = check();
        assert!(check.handles(a.descriptor, ns, "", operation));
        check.validate(&a).await.map_err(|e| e.to_status())
    }

    fn role(rules: Value) -> Value {
        json!({"metadata": {"name": "r"}, "rules": rules})
    }

    #[tokio::test]
    async fn a_role_may_grant_only_what_the_writer_holds() {
        let alice = user("alice", &["system:authenticated"]);
        let held = role(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]));
        write("roles", "ns", &alice, &held, None).await.unwrap();
        let more = role(
            json!([{"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods", "secrets"]}]),
        );
        let err = write("roles", "ns", &alice, &more, None).await.unwrap_err();
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message.as_deref().unwrap_or_default(),
            "roles.rbac.authorization.k8s.io \"r\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\"]}"
        );
        // system:masters may grant anything; an update touching only GC fields passes.
        write(
            "roles",
            "ns",
            &user("root", &["system:masters"]),
            &more,
            None,
        )
        .await
        .unwrap();
        let mut finalized = more.clone();
        finalized["metadata"]["finalizers"] = json!(["x"]);
        write("roles", "ns", &alice, &finalized, Some(&more))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn the_server_s_own_writes_pass() {
        let mut aggregated =
            role(json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]));
        aggregated["aggregationRule"] =
            json!({"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]});
        let a = Attributes::new(
            Operation::Create,
            descriptor("clusterroles"),
            "",
            "r",
            Some(&aggregated),
        );
        check().validate(&a).await.unwrap();
    }

    #[tokio::test]
    async fn an_aggregation_rule_needs_full_authority() {
        let alice = user("alice", &[]);
        let mut aggregated = role(json!([]));
        aggregated["aggregationRule"] =
            json!({"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]});
        let err = write("clusterroles", "", &alice, &aggregated, None)
            .await
            .unwrap_err();
        assert_eq!(
            err.message.as_deref().unwrap_or_default(),
            "clusterroles.rbac.authorization.k8s.io \"r\" is forbidden: must have cluster-admin privileges to use the aggregationRule"
        );
    }

    #[tokio::test]
    async fn a_binding_needs_the_role_s_rules_or_bind() {
        let alice = user("alice", &[]);
        let binding = |role: &str| {
            json!({"metadata": {"name": "b"},
                "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "User", "apiGroup": GROUP, "name": "bob"}]})
        };
        write("rolebindings", "ns", &alice, &binding("reader"), None)
            .await
            .unwrap();
        write("rolebindings", "ns", &alice, &binding("bindable"), None)
            .await
            .unwrap();
        let err = write("rolebindings", "ns", &alice, &binding("deleter"), None)
            .await
            .unwrap_err();
        assert_eq!(err.code, 403);
        assert!(
            err.message.as_deref().unwrap_or_default().starts_with(
                "rolebindings.rbac.authorization.k8s.io \"b\" is forbidden: user \"alice\" (groups=[]) is attempting to grant RBAC permissions not currently held:"
            ),
            "{err:?}"
        );
        let err = write("clusterrolebindings", "", &alice, &binding("missing"), None)
            .await
            .unwrap_err();
        assert_eq!(err.code, 404);
        assert_eq!(
            err.message.as_deref().unwrap_or_default(),
            "clusterrole.rbac.authorization.k8s.io \"missing\" not found"
        );
    }
}
