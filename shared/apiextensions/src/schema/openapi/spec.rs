//! The schema the validator walks: kube-openapi's `spec.Schema` as upstream's
//! `ConvertJSONSchemaPropsWithPostProcess` makes it, with unsupported formats stripped
//! and `x-kubernetes-int-or-string` turned into `type: [integer, string]`. It is built
//! from the [`Structural`] schema (upstream's TODO `NewStructural(...).ToGoOpenAPI`),
//! which holds all a valid CRD schema can say to the validator: what structural schemas
//! forbid (`$ref`, `patternProperties`, `additionalProperties` inside `anyOf`, ...) is
//! not there.

use std::collections::BTreeMap;

use regex::Regex;

use super::formats;
use super::regexp;
use crate::schema::{NestedValueValidation, Structural, ValueValidation};

#[derive(Clone, Debug, Default)]
pub(super) struct Spec {
    pub types: Vec<String>,
    pub nullable: bool,
    /// The value validations but the junctors (which are the `Spec`s below), the format
    /// stripped if 1.33 does not validate it.
    pub vv: ValueValidation,
    /// The compiled `pattern`, or the compile error.
    pub pattern_regex: Option<Result<Regex, String>>,
    pub all_of: Vec<Spec>,
    pub one_of: Vec<Spec>,
    pub any_of: Vec<Spec>,
    pub not: Option<Box<Spec>>,
    pub properties: BTreeMap<String, Spec>,
    /// `additionalProperties`: whether allowed, and its schema.
    pub additional_properties: Option<(bool, Option<Box<Spec>>)>,
    pub items: Option<Box<Spec>>,
    /// `x-kubernetes-list-type` and `-list-map-keys`, by which ratcheting correlates items.
    pub x_list_type: Option<String>,
    pub x_list_map_keys: Vec<String>,
}

impl Spec {
    pub(super) fn from_structural(s: &Structural) -> Spec {
        let mut spec = Spec::from_value_validation(&s.value_validation);
        spec.types = types(&s.generic.type_, s.extensions.x_int_or_string);
        spec.nullable = s.generic.nullable;
        spec.properties = s
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), Spec::from_structural(v)))
            .collect();
        spec.additional_properties = s.additional_properties.as_ref().map(|ap| {
            let schema = ap.structural.as_deref().map(Spec::from_structural);
            (ap.allows, schema.map(Box::new))
        });
        spec.items = s
            .items
            .as_deref()
            .map(|i| Box::new(Spec::from_structural(i)));
        spec.x_list_type = s.extensions.x_list_type.clone();
        spec.x_list_map_keys = s.extensions.x_list_map_keys.clone();
        spec
    }

    fn from_nested(n: &NestedValueValidation) -> Spec {
        let mut spec = Spec::from_value_validation(&n.value_validation);
        let (g, x) = (&n.forbidden_generics, &n.forbidden_extensions);
        spec.types = types(&g.type_, x.x_int_or_string);
        spec.nullable = g.nullable;
        spec.properties = n
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), Spec::from_nested(v)))
            .collect();
        spec.additional_properties = n
            .additional_properties
            .as_deref()
            .map(|ap| (true, Some(Box::new(Spec::from_nested(ap)))));
        spec.items = n.items.as_deref().map(|i| Box::new(Spec::from_nested(i)));
        spec.x_list_type = x.x_list_type.clone();
        spec.x_list_map_keys = x.x_list_map_keys.clone();
        spec
    }

    fn from_value_validation(vv: &ValueValidation) -> Spec {
        let nested = |list: &[NestedValueValidation]| list.iter().map(Spec::from_nested).collect();
        Spec {
            vv: ValueValidation {
                format: formats::strip_unsupported(&vv.format),
                all_of: Vec::new(),
                one_of: Vec::new(),
                any_of: Vec::new(),
                not: None,
                ..vv.clone()
            },
            pattern_regex: (!vv.pattern.is_empty()).then(|| regexp::compile(&vv.pattern)),
            all_of: nested(&vv.all_of),
            one_of: nested(&vv.one_of),
            any_of: nested(&vv.any_of),
            not: vv.not.as_deref().map(|n| Box::new(Spec::from_nested(n))),
            ..Spec::default()
        }
    }
}

/// `type`, or both `integer` and `string` for `x-kubernetes-int-or-string`.
fn types(type_: &str, int_or_string: bool) -> Vec<String> {
    if int_or_string {
        vec!["integer".to_owned(), "string".to_owned()]
    } else if type_.is_empty() {
        Vec::new()
    } else {
        vec![type_.to_owned()]
    }
}
