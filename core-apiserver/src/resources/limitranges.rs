//! core/v1 LimitRange, after upstream's `pkg/registry/core/limitrange`, `ValidateLimitRange`,
//! `SetDefaults_LimitRangeItem` and `printLimitRange`. Applying the limits to pods is the
//! `LimitRanger` admission plugin's.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::is_qualified_name;
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Map, Value, json};

use crate::helper::{
    is_extended_resource_name, is_huge_page_resource_name, is_native_resource,
    validate_resource_name,
};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "LimitRange",
    list_kind: "LimitRangeList",
    plural: "limitranges",
    singular: "limitrange",
    short_names: &["limits"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Created At",
            type_: "date",
            ..AGE_COLUMN
        },
    ],
    table_name_and_age: false,
    storage_resource: "limitranges",
    schema: Some(&kas_api::core::v1::LIMIT_RANGE),
    list_schema: Some(&kas_api::core::v1::LIMIT_RANGE_LIST),
};

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `standardLimitRangeTypes`.
const STANDARD_LIMIT_TYPES: [&str; 3] = ["Pod", "Container", "PersistentVolumeClaim"];
/// Upstream `standardContainerResources`.
const STANDARD_CONTAINER_RESOURCES: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];
/// The resource lists of a limit, in the order upstream reads them.
const LISTS: [&str; 5] = [
    "max",
    "min",
    "default",
    "defaultRequest",
    "maxLimitRequestRatio",
];

/// Upstream `SetDefaults_LimitRangeItem`: a Container limit's default is its max, its
/// default request its default, else its min.
fn default_item(item: &mut Map<String, Value>) {
    if item.get("type").and_then(Value::as_str) != Some("Container") {
        return;
    }
    let list = |item: &Map<String, Value>, k: &str| -> Map<String, Value> {
        item.get(k)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (max, min) = (list(item, "max"), list(item, "min"));
    let mut default = list(item, "default");
    let mut request = list(item, "defaultRequest");
    for (k, v) in &max {
        default.entry(k.clone()).or_insert_with(|| v.clone());
    }
    for (k, v) in default.iter().chain(min.iter()) {
        request.entry(k.clone()).or_insert_with(|| v.clone());
    }
    item.insert("default".into(), Value::Object(default));
    item.insert("defaultRequest".into(), Value::Object(request));
}

/// Upstream `validateLimitRangeTypeName`.
fn validate_type_name(value: &str, path: &Path) -> Vec<field::Error> {
    let errs: Vec<field::Error> = is_qualified_name(value)
        .iter()
        .map(|m| field::invalid(path, value, m))
        .collect();
    if errs.is_empty() && !value.contains('/') && !STANDARD_LIMIT_TYPES.contains(&value) {
        return vec![field::invalid(
            path,
            value,
            "must be a standard limit type or fully qualified",
        )];
    }
    errs
}

/// Upstream `validateLimitRangeResourceName`: container names for Pod and Container
/// limits (`validateContainerResourceName`), any resource name otherwise.
fn validate_limit_resource_name(limit_type: &str, name: &str, path: &Path) -> Vec<field::Error> {
    let mut errs = validate_resource_name(name, path);
    if !matches!(limit_type, "Pod" | "Container") {
        return errs;
    }
    if !name.contains('/') {
        if !STANDARD_CONTAINER_RESOURCES.contains(&name) && !is_huge_page_resource_name(name) {
            errs.push(field::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native_resource(name) && !is_extended_resource_name(name) {
        errs.push(field::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// A quantity as validation sees it; unparsable ones were refused on decoding.
fn quantity(v: &Value) -> Option<Quantity> {
    let text = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Quantity::parse(text.trim()).ok()
}

fn bad(q: &Quantity) -> BadValue {
    BadValue::Raw(q.go_syntax())
}

/// Upstream `ValidateLimitRange`'s checks of one limit.
fn validate_limit(item: &Value, path: &Path, seen: &mut BTreeSet<String>) -> Vec<field::Error> {
    let limit_type = item.get("type").and_then(Value::as_str).unwrap_or("");
    let mut errs = validate_type_name(limit_type, &path.child("type"));
    if !seen.insert(limit_type.to_owned()) {
        errs.push(field::duplicate(&path.child("type"), limit_type));
    }
    let mut lists: BTreeMap<&str, BTreeMap<String, Quantity>> = BTreeMap::new();
    for list in LISTS {
        let entries = item.get(list).and_then(Value::as_object);
        if limit_type == "Pod" && matches!(list, "default" | "defaultRequest") {
            if entries.is_some_and(|e| !e.is_empty()) {
                errs.push(field::forbidden(
                    &path.child(list),
                    "may not be specified when `type` is 'Pod'",
                ));
            }
            continue;
        }
        for (k, v) in entries.into_iter().flatten() {
            errs.extend(validate_limit_resource_name(
                limit_type,
                k,
                &path.child(list).key(k),
            ));
            if let Some(q) = quantity(v) {
                lists.entry(list).or_default().insert(k.clone(), q);
            }
        }
        if list == "defaultRequest" && limit_type == "PersistentVolumeClaim" {
            let has = |l: &str| item.pointer(&format!("/{l}/storage")).is_some();
            if !has("min") && !has("max") {
                errs.push(field::required(
                    &path.child("limits"),
                    "either minimum or maximum storage value is required, but neither was provided",
                ));
            }
        }
    }
    let keys: BTreeSet<&String> = lists.values().flat_map(BTreeMap::keys).collect();
    for k in keys {
        let get = |l: &str| lists.get(l).and_then(|m| m.get(k));
        errs.extend(compare_limits(
            k,
            path,
            [
                get("min"),
                get("max"),
                get("default"),
                get("defaultRequest"),
                get("maxLimitRequestRatio"),
            ],
        ));
    }
    errs
}

/// Upstream's comparisons of one resource's min, max, default, default request and ratio.
fn compare_limits(k: &str, path: &Path, q: [Option<&Quantity>; 5]) -> Vec<field::Error> {
    let [min, max, default, request, ratio] = q;
    let gt = |a: &Quantity, b: &Quantity| a.cmp_value(b) == Ordering::Greater;
    let mut errs = Vec::new();
    let at = |l: &str| path.child(l).key(k);
    if let (Some(min), Some(max)) = (min, max)
        && gt(min, max)
    {
        let m = format!(
            "min value {} is greater than max value {}",
            min.canonical(),
            max.canonical()
        );
        errs.push(field::invalid(&at("min"), bad(min), &m));
    }
    if let (Some(r), Some(min)) = (request, min)
        && gt(min, r)
    {
        let m = format!(
            "min value {} is greater than default request value {}",
            min.canonical(),
            r.canonical()
        );
        errs.push(field::invalid(&at("defaultRequest"), bad(r), &m));
    }
    if let (Some(r), Some(max)) = (request, max)
        && gt(r, max)
    {
        let m = format!(
            "default request value {} is greater than max value {}",
            r.canonical(),
            max.canonical()
        );
        errs.push(field::invalid(&at("defaultRequest"), bad(r), &m));
    }
    if let (Some(r), Some(d)) = (request, default)
        && gt(r, d)
    {
        let m = format!(
            "default request value {} is greater than default limit value {}",
            r.canonical(),
            d.canonical()
        );
        errs.push(field::invalid(&at("defaultRequest"), bad(r), &m));
    }
    if let (Some(d), Some(min)) = (default, min)
        && gt(min, d)
    {
        let m = format!(
            "min value {} is greater than default value {}",
            min.canonical(),
            d.canonical()
        );
        errs.push(field::invalid(&at("default"), bad(min), &m));
    }
    if let (Some(d), Some(max)) = (default, max)
        && gt(d, max)
    {
        let m = format!(
            "default value {} is greater than max value {}",
            d.canonical(),
            max.canonical()
        );
        errs.push(field::invalid(&at("default"), bad(max), &m));
    }
    if let Some(ratio) = ratio {
        errs.extend(check_ratio(k, path, ratio, min, max));
    }
    // Resources that cannot be overcommitted (extended resources, hugepages) need the
    // default and the default request to agree.
    let overcommit = is_native_resource(k) && !is_huge_page_resource_name(k);
    if let (false, Some(d), Some(r)) = (overcommit, default, request)
        && d.cmp_value(r) != Ordering::Equal
    {
        let m = format!(
            "default value {} must equal to defaultRequest value {} in {k}",
            d.canonical(),
            r.canonical()
        );
        errs.push(field::invalid(&at("defaultRequest"), bad(r), &m));
    }
    errs
}

/// Upstream's `maxLimitRequestRatio` checks: at least 1, and at most max/min.
fn check_ratio(
    k: &str,
    path: &Path,
    ratio: &Quantity,
    min: Option<&Quantity>,
    max: Option<&Quantity>,
) -> Vec<field::Error> {
    let at = path.child("maxLimitRequestRatio").key(k);
    let mut errs = Vec::new();
    let one = Quantity::parse("1").expect("one parses");
    if ratio.cmp_value(&one) == Ordering::Less {
        let m = format!("ratio {} is less than 1", ratio.canonical());
        errs.push(field::invalid(&at, bad(ratio), &m));
    }
    if let (Some(min), Some(max)) = (min, max) {
        // Upstream's MaxMilliValue: below it, values are compared in thousandths.
        const MAX_MILLI: i128 = (i64::MAX / 1000) as i128;
        let (mut ratio_v, mut min_v, mut max_v) = (ratio.value() as f64, min.value(), max.value());
        if ratio.value() < MAX_MILLI && min_v < MAX_MILLI && max_v < MAX_MILLI {
            ratio_v = ratio.milli_value() as f64 / 1000.0;
            min_v = min.milli_value();
            max_v = max.milli_value();
        }
        let limit = max_v as f64 / min_v as f64;
        if ratio_v > limit {
            // Go's `%f`; an infinite limit (min 0) is never exceeded.
            let m = format!(
                "ratio {} is greater than max/min = {limit:.6}",
                ratio.canonical()
            );
            errs.push(field::invalid(&at, bad(ratio), &m));
        }
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    fn default(&self, obj: &mut Value) {
        let items = obj
            .pointer_mut("/spec/limits")
            .and_then(Value::as_array_mut);
        for item in items.into_iter().flatten() {
            if let Some(item) = item.as_object_mut() {
                default_item(item);
            }
        }
    }

    /// Upstream names a LimitRange without a name with a fresh UUID.
    fn prepare_for_create(&self, obj: &mut Value) {
        if kas_registry::meta::name(obj).is_empty() {
            kas_registry::meta::metadata_mut(obj)
                .insert("name".into(), json!(uuid::Uuid::new_v4().to_string()));
        }
    }

    /// Upstream `ValidateLimitRange`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        let path = Path::new("spec").child("limits");
        let mut seen = BTreeSet::new();
        let limits = obj.pointer("/spec/limits").and_then(Value::as_array);
        for (i, item) in limits.into_iter().flatten().enumerate() {
            let found = validate_limit(item, &path.index(i), &mut seen);
            errs.extend(found.iter().map(field::Error::to_cause));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(self.validate(new));
        errs
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    /// Upstream `printLimitRange`: the name and the creation time.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let created = obj
            .pointer("/metadata/creationTimestamp")
            .cloned()
            .unwrap_or(Value::Null);
        vec![json!(kas_registry::meta::name(obj)), created]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn range(limits: Value) -> Value {
        json!({"metadata": {"name": "l", "namespace": "default"}, "spec": {"limits": limits}})
    }

    #[test]
    fn container_defaults_come_from_max_default_and_min() {
        let mut obj = range(json!([{"type": "Container", "max": {"cpu": "2"},
            "min": {"memory": "64Mi"}}, {"type": "Pod", "max": {"cpu": "4"}}]));
        Strategy.default(&mut obj);
        assert_eq!(obj["spec"]["limits"][0]["default"], json!({"cpu": "2"}));
        assert_eq!(
            obj["spec"]["limits"][0]["defaultRequest"],
            json!({"cpu": "2", "memory": "64Mi"})
        );
        assert!(obj["spec"]["limits"][1].get("default").is_none());
        assert!(Strategy.validate(&obj).is_empty());
    }

    #[test]
    fn limits_are_compared_as_upstream() {
        let obj = range(
            json!([{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"},
            "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"}}]),
        );
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            vec![
                "spec.limits[0].min[cpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:2, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"2\", Format:\"DecimalSI\"}: min value 2 is greater than max value 1",
                "spec.limits[0].defaultRequest[cpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"1\", Format:\"DecimalSI\"}: min value 2 is greater than default request value 1",
                "spec.limits[0].default[cpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:2, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"2\", Format:\"DecimalSI\"}: min value 2 is greater than default value 1",
            ]
        );
    }

    #[test]
    fn types_names_and_pods_are_checked() {
        let obj = range(json!([
            {"type": "Pod", "default": {"cpu": "1"}},
            {"type": "Pod"},
            {"type": "Node"},
            {"type": "Container", "max": {"storage": "1Gi"}},
            {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}},
        ]));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            vec![
                "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
                "spec.limits[1].type: Duplicate value: \"Pod\"",
                "spec.limits[2].type: Invalid value: \"Node\": must be a standard limit type or fully qualified",
                "spec.limits[3].max[storage]: Invalid value: \"storage\": must be a standard resource for containers",
                "spec.limits[4].limits: Required value: either minimum or maximum storage value is required, but neither was provided",
            ]
        );
    }

    #[test]
    fn a_nameless_limit_range_is_named_by_a_uuid() {
        let mut obj = json!({"metadata": {"namespace": "default"}, "spec": {}});
        Strategy.prepare_for_create(&mut obj);
        let name = kas_registry::meta::name(&obj);
        assert!(uuid::Uuid::parse_str(name).is_ok(), "{name}");
    }

    #[test]
    fn the_ratio_is_bounded_by_max_over_min() {
        let obj = range(
            json!([{"type": "Container", "min": {"cpu": "100m"}, "max": {"cpu": "200m"},
            "maxLimitRequestRatio": {"cpu": "3"}}]),
        );
        let got = messages(&Strategy.validate(&obj));
        assert!(
            got.iter()
                .any(|m| m.ends_with("ratio 3 is greater than max/min = 2.000000")),
            "{got:?}"
        );
    }
}
