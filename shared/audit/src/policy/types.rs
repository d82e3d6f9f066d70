//! The internal `audit.Policy` types (`k8s.io/apiserver/pkg/apis/audit/types.go`), as the
//! `audit.k8s.io/v1` `Policy` decodes into them. Levels and stages stay the words the
//! file gave, as upstream's string types do, so that validation can name a wrong one.

/// Upstream's `audit.Policy`: the rules, first match wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// `rules`: a request takes the level of the first rule it matches, else None.
    pub rules: Vec<PolicyRule>,
    /// `omitStages`: stages no request writes an event for (added to each rule's).
    pub omit_stages: Vec<String>,
    /// `omitManagedFields`: the default for the rules that do not say.
    pub omit_managed_fields: bool,
}

/// Upstream's `audit.PolicyRule`: a request matches when it matches every field set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyRule {
    /// `level`: `None`, `Metadata`, `Request` or `RequestResponse`.
    pub level: String,
    /// `users`: user names; empty is every user.
    pub users: Vec<String>,
    /// `userGroups`: a user in any of them matches; empty is every group.
    pub user_groups: Vec<String>,
    /// `verbs`: empty is every verb.
    pub verbs: Vec<String>,
    /// `resources`: empty is every resource of every group.
    pub resources: Vec<GroupResources>,
    /// `namespaces`: `""` is the non-namespaced resources; empty is every namespace.
    pub namespaces: Vec<String>,
    /// `nonResourceURLs`: paths, a trailing `*` matching any rest.
    pub non_resource_urls: Vec<String>,
    /// `omitStages`: stages this rule writes no event for.
    pub omit_stages: Vec<String>,
    /// `omitManagedFields`: overrides the policy's when set.
    pub omit_managed_fields: Option<bool>,
}

/// Upstream's `audit.GroupResources`: resources of one API group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupResources {
    /// `group`: `""` is the core group.
    pub group: String,
    /// `resources`: `pods`, `pods/log`, `*`, `pods/*`, `*/scale`; empty is all of the
    /// group's resources and subresources.
    pub resources: Vec<String>,
    /// `resourceNames`: object names; empty is every object.
    pub resource_names: Vec<String>,
}
