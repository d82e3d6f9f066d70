//! The rbac.authorization.k8s.io/v1 objects (Role, ClusterRole, RoleBinding and
//! ClusterRoleBinding), after upstream's `pkg/registry/rbac`, `pkg/apis/rbac/v1/defaults.go`,
//! `pkg/apis/rbac/validation` and `pkg/printers/internalversion`. What the four kinds share
//! is here (defaulting, printing) and in `validation`; authorization is not.
pub mod aggregation;
pub mod bootstrap;
pub mod clusterrolebindings;
pub mod clusterroles;
pub mod escalation;
pub mod rolebindings;
pub mod roles;
pub mod validation;

use kas_endpoints::responsewriters::table::age;
use kas_registry::TableColumn;
use serde_json::{Map, Value, json};

/// Upstream `rbac.GroupName`.
pub const GROUP_NAME: &str = "rbac.authorization.k8s.io";

/// Upstream's subject kinds.
pub const SERVICE_ACCOUNT_KIND: &str = "ServiceAccount";
pub const USER_KIND: &str = "User";
pub const GROUP_KIND: &str = "Group";

pub use kas_endpoints::responsewriters::table::{DEFAULT_TABLE_COLUMNS, default_table_cells};

/// The Role column of the binding printers (after the Name column), whose description is
/// the binding's `roleRef` documentation.
pub const fn role_column(description: &'static str) -> TableColumn {
    TableColumn {
        name: "Role",
        type_: "string",
        format: "",
        description,
        priority: 0,
    }
}

/// A wide column of the binding printers, whose descriptions upstream writes in
/// `printers.go` (`Users in the roleBinding`, ...).
pub const fn wide_column(name: &'static str, description: &'static str) -> TableColumn {
    TableColumn {
        name,
        type_: "string",
        format: "",
        description,
        priority: 1,
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The items of an array field; none when it is absent or not an array.
pub fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Upstream `SetDefaults_RoleBinding`/`SetDefaults_ClusterRoleBinding` (the role
/// reference's group; `roleRef` is a struct, so it is there even when it was not sent)
/// and `SetDefaults_Subject` for each subject.
pub fn default_binding(obj: &mut Value) {
    let Some(obj) = obj.as_object_mut() else {
        return;
    };
    if !obj.get("roleRef").is_some_and(Value::is_object) {
        obj.insert("roleRef".into(), Value::Object(Map::new()));
    }
    if let Some(role_ref) = obj.get_mut("roleRef").and_then(Value::as_object_mut)
        && role_ref
            .get("apiGroup")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        role_ref.insert("apiGroup".into(), json!(GROUP_NAME));
    }
    let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) else {
        return;
    };
    for subject in subjects.iter_mut().filter_map(Value::as_object_mut) {
        let unset = subject
            .get("apiGroup")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        let kind = subject.get("kind").and_then(Value::as_str).unwrap_or("");
        if unset && (kind == USER_KIND || kind == GROUP_KIND) {
            subject.insert("apiGroup".into(), json!(GROUP_NAME));
        }
    }
}

/// Upstream `SubjectsStrings`: users, groups and service accounts (`<namespace>/<name>`).
fn subjects_strings(obj: &Value) -> [Vec<String>; 3] {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for s in items(obj, "subjects") {
        match str_of(s, "kind") {
            SERVICE_ACCOUNT_KIND => {
                sas.push(format!("{}/{}", str_of(s, "namespace"), str_of(s, "name")))
            }
            USER_KIND => users.push(str_of(s, "name").to_owned()),
            GROUP_KIND => groups.push(str_of(s, "name").to_owned()),
            _ => {}
        }
    }
    [users, groups, sas]
}

/// Upstream `printRoleBinding`/`printClusterRoleBinding` (wide, as the table convertor
/// prints): Name, Role (`<kind>/<name>`), Age, Users, Groups, ServiceAccounts.
pub fn binding_cells(obj: &Value) -> Vec<Value> {
    let role_ref = obj.get("roleRef").unwrap_or(&Value::Null);
    let mut cells = vec![
        json!(kas_registry::meta::name(obj)),
        json!(format!(
            "{}/{}",
            str_of(role_ref, "kind"),
            str_of(role_ref, "name")
        )),
        json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
    ];
    cells.extend(subjects_strings(obj).map(|s| json!(s.join(", "))));
    cells
}

/// The strategy of RoleBindings and ClusterRoleBindings, which differ only in scope and
/// in the role kinds their `roleRef` may name.
pub struct BindingStrategy {
    pub namespaced: bool,
    pub role_kinds: &'static [&'static str],
}

impl kas_registry::Strategy for BindingStrategy {
    fn default(&self, obj: &mut Value) {
        default_binding(obj);
    }

    fn validate(&self, obj: &Value) -> kas_registry::strategy::FieldErrors {
        validation::validate_binding(obj, self.namespaced, self.role_kinds)
    }

    /// The strategy's `ValidateUpdate`: `Validate(Cluster)RoleBinding`, then
    /// `Validate(Cluster)RoleBindingUpdate`, which validates the binding again (so its
    /// causes come twice).
    fn validate_update(&self, new: &Value, old: &Value) -> kas_registry::strategy::FieldErrors {
        let mut errs = self.validate(new);
        errs.extend(validation::validate_binding_update(
            new,
            old,
            self.namespaced,
            self.role_kinds,
        ));
        errs
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        binding_cells(obj)
    }
}
