//! v1 defaulting, after upstream's `pkg/apis/apiextensions/v1/defaults.go` and the generated
//! `SetObjectDefaults_CustomResourceDefinition` (the spec is defaulted twice there, which
//! changes nothing). v1 registers no defaulter for `JSONSchemaProps`.

use serde_json::{Map, Value, json};

fn is_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str).is_none_or(str::is_empty)
}

/// Upstream `SetDefaults_CustomResourceDefinitionSpec`.
fn default_spec(spec: &mut Map<String, Value>) {
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        // An empty result is what omitempty drops again, so it is not written.
        if is_empty_str(names.get("singular")) && !kind.is_empty() {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if is_empty_str(names.get("listKind")) && !kind.is_empty() {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if spec.get("conversion").is_none_or(Value::is_null) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
}

/// Upstream `SetDefaults_ServiceReference`: port 443.
fn default_service(spec: &mut Map<String, Value>) {
    let service = spec
        .get_mut("conversion")
        .and_then(|c| c.get_mut("webhook"))
        .and_then(|w| w.get_mut("clientConfig"))
        .and_then(|c| c.get_mut("service"))
        .and_then(Value::as_object_mut);
    if let Some(service) = service
        && service.get("port").is_none_or(Value::is_null)
    {
        service.insert("port".into(), json!(443));
    }
}

/// Upstream `SetDefaults_CustomResourceDefinition`: the spec's defaults, and
/// `status.storedVersions` from the storage version when empty.
pub fn set_defaults(crd: &mut Value) {
    let Some(root) = crd.as_object_mut() else {
        return;
    };
    let spec = root
        .entry("spec")
        .or_insert_with(|| Value::Object(Map::new()));
    if spec.is_null() {
        *spec = Value::Object(Map::new());
    }
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    default_spec(spec);
    default_service(spec);
    let storage = spec
        .get("versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        })
        .map(|v| {
            v.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        });
    let stored_empty = root
        .get("status")
        .and_then(|s| s.get("storedVersions"))
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if let Some(name) = storage
        && stored_empty
    {
        let status = root
            .entry("status")
            .or_insert_with(|| Value::Object(Map::new()));
        if !status.is_object() {
            *status = Value::Object(Map::new());
        }
        if let Some(status) = status.as_object_mut() {
            status.insert("storedVersions".into(), json!([name]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_conversion_and_stored_versions() {
        let mut crd = json!({"spec": {
            "names": {"kind": "Foo", "plural": "foos"},
            "versions": [{"name": "v1", "storage": false}, {"name": "v2", "storage": true}],
        }});
        set_defaults(&mut crd);
        assert_eq!(crd["spec"]["names"]["singular"], "foo");
        assert_eq!(crd["spec"]["names"]["listKind"], "FooList");
        assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
        assert_eq!(crd["status"]["storedVersions"], json!(["v2"]));
    }

    #[test]
    fn keeps_set_values_and_defaults_the_service_port() {
        let mut crd = json!({"spec": {
            "names": {"kind": "Foo", "singular": "x", "listKind": "Foos"},
            "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {
                "service": {"name": "s", "namespace": "n"}}}},
        }, "status": {"storedVersions": ["v0"]}});
        set_defaults(&mut crd);
        assert_eq!(crd["spec"]["names"]["singular"], "x");
        assert_eq!(crd["spec"]["names"]["listKind"], "Foos");
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"],
            443
        );
        assert_eq!(crd["status"]["storedVersions"], json!(["v0"]));
    }

    #[test]
    fn no_kind_means_no_list_kind() {
        let mut crd = json!({"spec": {"names": {}}});
        set_defaults(&mut crd);
        assert!(crd["spec"]["names"].get("singular").is_none());
        assert!(crd["spec"]["names"].get("listKind").is_none());
    }
}
