//! The internal (`apiextensions`) view of a v1 CRD that upstream validates, after
//! `Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec`:
//! `spec.version` is `versions[0].name`; per-version schemas, subresources, columns and
//! selectable fields that are identical in every version move to the top level (so their
//! errors read `spec.validation...`, `spec.subresources...`); the webhook's client config and
//! review versions sit on `spec.conversion` itself.

use serde_json::Value;

use super::util::{arr, bool_of, has_arr, obj, opt_str, semantic_eq, str_of};

/// One internal `CustomResourceDefinitionVersion`.
#[derive(Clone, Copy)]
pub struct Version<'a> {
    pub name: &'a str,
    pub served: bool,
    pub storage: bool,
    pub deprecated: bool,
    pub deprecation_warning: Option<&'a str>,
    /// `CustomResourceValidation` (`{openAPIV3Schema: ...}`).
    pub schema: Option<&'a Value>,
    pub subresources: Option<&'a Value>,
    pub columns: Option<&'a [Value]>,
    pub selectable_fields: Option<&'a [Value]>,
}

/// The internal `CustomResourceConversion`.
pub struct Conversion<'a> {
    pub strategy: &'a str,
    pub webhook_client_config: Option<&'a Value>,
    pub conversion_review_versions: Option<&'a [Value]>,
}

/// The internal `CustomResourceDefinitionSpec`.
pub struct Spec<'a> {
    pub group: &'a str,
    pub names: &'a Value,
    pub scope: &'a str,
    pub version: &'a str,
    pub versions: Vec<Version<'a>>,
    /// Whether `versions` was sent (a nil slice prints differently from an empty one).
    pub versions_set: bool,
    pub validation: Option<&'a Value>,
    pub subresources: Option<&'a Value>,
    pub columns: Option<&'a [Value]>,
    pub selectable_fields: Option<&'a [Value]>,
    pub conversion: Option<Conversion<'a>>,
    /// Always set when converted from v1 (a `bool` there, a `*bool` inside).
    pub preserve_unknown_fields: bool,
}

static NULL: Value = Value::Null;

fn opt_arr<'a>(v: &'a Value, key: &str) -> Option<&'a [Value]> {
    if has_arr(v, key) {
        Some(arr(v, key))
    } else {
        None
    }
}

fn version(v: &Value) -> Version<'_> {
    Version {
        name: str_of(v, "name"),
        served: bool_of(v, "served"),
        storage: bool_of(v, "storage"),
        deprecated: bool_of(v, "deprecated"),
        deprecation_warning: opt_str(v, "deprecationWarning"),
        schema: obj(v, "schema"),
        subresources: obj(v, "subresources"),
        columns: opt_arr(v, "additionalPrinterColumns"),
        selectable_fields: opt_arr(v, "selectableFields"),
    }
}

fn conversion(c: &Value) -> Conversion<'_> {
    let webhook = obj(c, "webhook");
    Conversion {
        strategy: str_of(c, "strategy"),
        webhook_client_config: webhook.and_then(|w| obj(w, "clientConfig")),
        conversion_review_versions: webhook.and_then(|w| opt_arr(w, "conversionReviewVersions")),
    }
}

/// Whether `get` reads the same in every version (upstream's `Semantic.DeepEqual` against
/// the first version).
fn identical<'a>(
    versions: &[Version<'a>],
    get: impl Fn(&Version<'a>) -> Option<&'a Value>,
) -> bool {
    let first = get(&versions[0]);
    versions.iter().all(|v| semantic_eq(get(v), first))
}

fn slice_value(s: Option<&[Value]>) -> Option<Value> {
    s.map(|s| Value::Array(s.to_vec()))
}

/// The spec of `crd` (the whole v1 object) as upstream's internal version holds it.
pub fn spec(crd: &Value) -> Spec<'_> {
    let spec = obj(crd, "spec").unwrap_or(&NULL);
    let mut versions: Vec<Version<'_>> = arr(spec, "versions").iter().map(version).collect();
    let mut out = Spec {
        group: str_of(spec, "group"),
        names: obj(spec, "names").unwrap_or(&NULL),
        scope: str_of(spec, "scope"),
        version: versions.first().map_or("", |v| v.name),
        versions: Vec::new(),
        versions_set: has_arr(spec, "versions"),
        validation: None,
        subresources: None,
        columns: None,
        selectable_fields: None,
        conversion: obj(spec, "conversion").map(conversion),
        preserve_unknown_fields: bool_of(spec, "preserveUnknownFields"),
    };
    if versions.is_empty() {
        return out;
    }
    if identical(&versions, |v| v.schema) {
        out.validation = versions[0].schema;
        versions.iter_mut().for_each(|v| v.schema = None);
    }
    if identical(&versions, |v| v.subresources) {
        out.subresources = versions[0].subresources;
        versions.iter_mut().for_each(|v| v.subresources = None);
    }
    let cols: Vec<Option<Value>> = versions.iter().map(|v| slice_value(v.columns)).collect();
    if cols
        .iter()
        .all(|c| semantic_eq(c.as_ref(), cols[0].as_ref()))
    {
        out.columns = versions[0].columns;
        versions.iter_mut().for_each(|v| v.columns = None);
    }
    let fields: Vec<Option<Value>> = versions
        .iter()
        .map(|v| slice_value(v.selectable_fields))
        .collect();
    if fields
        .iter()
        .all(|f| semantic_eq(f.as_ref(), fields[0].as_ref()))
    {
        out.selectable_fields = versions[0].selectable_fields;
        versions.iter_mut().for_each(|v| v.selectable_fields = None);
    }
    out.versions = versions;
    out
}

/// The top-level schema (`spec.validation.openAPIV3Schema`) if set.
pub fn top_schema<'a>(spec: &Spec<'a>) -> Option<&'a Value> {
    spec.validation.and_then(|v| obj(v, "openAPIV3Schema"))
}

/// Every `openAPIV3Schema` of the spec, top-level first (upstream's `HasSchemaWith` order).
pub fn all_schemas<'a>(spec: &Spec<'a>) -> Vec<&'a Value> {
    let mut out: Vec<&Value> = top_schema(spec).into_iter().collect();
    out.extend(
        spec.versions
            .iter()
            .filter_map(|v| v.schema.and_then(|s| obj(s, "openAPIV3Schema"))),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identical_per_version_fields_move_to_the_top_level() {
        let schema = json!({"openAPIV3Schema": {"type": "object"}});
        let crd = json!({"spec": {"versions": [
            {"name": "v1", "schema": schema, "subresources": {"status": {}}},
            {"name": "v2", "schema": schema},
        ]}});
        let s = spec(&crd);
        assert_eq!(s.version, "v1");
        assert_eq!(s.validation, Some(&schema));
        assert!(s.versions.iter().all(|v| v.schema.is_none()));
        assert!(s.subresources.is_none());
        assert!(s.versions[0].subresources.is_some());
    }

    #[test]
    fn webhook_fields_sit_on_the_conversion() {
        let crd = json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}}}});
        let c = spec(&crd).conversion.unwrap();
        assert_eq!(c.strategy, "Webhook");
        assert!(c.webhook_client_config.is_some());
        assert_eq!(c.conversion_review_versions.map(<[Value]>::len), Some(1));
    }
}
