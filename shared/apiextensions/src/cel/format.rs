//! Upstream's Kubernetes format library (`k8s.io/apiserver/pkg/cel/library/format.go`):
//! `format.named(name)`, `format.<name>()` and `<Format>.validate(string)`, which answers
//! `optional.none()` for a valid string and the validation errors otherwise.

use std::sync::{Arc, LazyLock};

use cel::common::types::{STRING_TYPE, Type};
use cel::objects::{Opaque, OptionalValue};
use cel::{DeclarationError, Env, ExecutionError, Value};
use kas_apimachinery::golang::{base64, time};
use kas_apimachinery::validation::{self, meta};

use super::library::{no_such_overload, overload};
use super::url::parse_request_uri;

const FORMAT_TYPE: &str = "kubernetes.NamedFormat";

/// One named format: its CEL name and its validation.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Format {
    name: &'static str,
}

impl Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        FORMAT_TYPE
    }
}

/// Upstream `ConstantFormats`, by CEL name.
const FORMATS: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

static UUID: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
        .unwrap_or_else(|_| unreachable!("constant pattern"))
});

fn validate_as(name: &str, s: &str) -> Vec<String> {
    let one = |ok: bool, msg: &str| if ok { Vec::new() } else { vec![msg.to_owned()] };
    match name {
        "dns1123Label" => meta::name_is_dns_label(s, false),
        "dns1123Subdomain" => meta::name_is_dns_subdomain(s, false),
        "dns1035Label" => meta::name_is_dns1035_label(s, false),
        "qualifiedName" => validation::is_qualified_name(s),
        "dns1123LabelPrefix" => meta::name_is_dns_label(s, true),
        "dns1123SubdomainPrefix" => meta::name_is_dns_subdomain(s, true),
        "dns1035LabelPrefix" => meta::name_is_dns1035_label(s, true),
        "labelValue" => validation::is_valid_label_value(s),
        "uri" => parse_request_uri(s).err().into_iter().collect(),
        "uuid" => one(UUID.is_match(s), "does not match the UUID format"),
        "byte" => one(
            base64::STD_ENCODING.decode_string(s).is_ok(),
            "invalid base64",
        ),
        "date" => one(
            s.len() == 10 && time::parse_rfc3339(&format!("{s}T00:00:00Z")).is_some(),
            "invalid date",
        ),
        "datetime" => one(time::parse_rfc3339(s).is_some(), "invalid datetime"),
        _ => Vec::new(),
    }
}

pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let format = || Type::new_opaque_type(FORMAT_TYPE);
    env.add_type(format())?;
    env.add_overload("format.named", "format-named", vec![STRING_TYPE], named)?;
    for (name, f) in FORMATS.iter().zip(CONSTRUCTORS) {
        env.add_overload(
            &format!("format.{name}"),
            &format!("format-{name}"),
            vec![],
            *f,
        )?;
    }
    env.add_member_overload(
        "validate",
        "format-validate",
        format(),
        vec![STRING_TYPE],
        validate,
    )
}

fn format_value(name: &'static str) -> Value {
    Value::Opaque(Arc::new(Format { name }))
}

fn named_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let Some(Value::String(s)) = args.first() else {
        return Err(no_such_overload("format.named", args));
    };
    let found = FORMATS.iter().find(|n| **n == s.as_str());
    let opt = match found {
        Some(name) => OptionalValue::of(format_value(name)),
        None => OptionalValue::none(),
    };
    Ok(Value::Opaque(Arc::new(opt)))
}
overload!(named => named_impl);

fn validate_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let format = match args.first() {
        Some(Value::Opaque(o)) => (o.as_ref() as &dyn std::any::Any).downcast_ref::<Format>(),
        _ => None,
    };
    let (Some(format), Some(Value::String(s))) = (format, args.get(1)) else {
        return Err(no_such_overload("validate", args));
    };
    let errs = validate_as(format.name, s);
    let opt = if errs.is_empty() {
        OptionalValue::none()
    } else {
        let list = errs
            .into_iter()
            .map(|e| Value::String(Arc::new(e)))
            .collect();
        OptionalValue::of(Value::List(Arc::new(list)))
    };
    Ok(Value::Opaque(Arc::new(opt)))
}
overload!(validate => validate_impl);

/// One zero-argument constructor per entry of `FORMATS`, in the same order (overload
/// functions are plain `fn`s and cannot capture the name).
macro_rules! constructors {
    ($($f:ident => $name:literal),* $(,)?) => {
        $(
            fn $f<'b, 'v>(
                _: Vec<::cel::common::value::CowVal<'b, 'v>>,
            ) -> Result<::cel::common::value::CowVal<'b, 'v>, ExecutionError> {
                let out: Box<dyn ::cel::common::value::Val> = format_value($name).try_into()?;
                Ok(::cel::common::value::CowVal::from(out as Box<dyn ::cel::common::value::Val + 'v>))
            }
        )*
        const CONSTRUCTORS: &[cel::common::functions::Function] = &[$($f),*];
    };
}

constructors! {
    f_dns1123_label => "dns1123Label",
    f_dns1123_subdomain => "dns1123Subdomain",
    f_dns1035_label => "dns1035Label",
    f_qualified_name => "qualifiedName",
    f_dns1123_label_prefix => "dns1123LabelPrefix",
    f_dns1123_subdomain_prefix => "dns1123SubdomainPrefix",
    f_dns1035_label_prefix => "dns1035LabelPrefix",
    f_label_value => "labelValue",
    f_uri => "uri",
    f_uuid => "uuid",
    f_byte => "byte",
    f_date => "date",
    f_datetime => "datetime",
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::cel::tests::check_rules;

    #[test]
    fn format_library() {
        let props = json!({ "n": { "type": "string" } });
        let obj = json!({ "n": "my-name" });
        check_rules(
            props,
            obj,
            &[
                "!format.dns1123Label().validate(self.n).hasValue()",
                "format.named('dns1123Label').value().validate('Bad_Name').hasValue()",
                "!format.named('nope').hasValue()",
                "format.dns1123Label().validate('Bad') == optional.of(['a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \\'-\\', and must start and end with an alphanumeric character (e.g. \\'my-name\\',  or \\'123-abc\\', regex used for validation is \\'[a-z0-9]([-a-z0-9]*[a-z0-9])?\\')'])",
                "!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
                "format.uri().validate('x').value() == ['parse \"x\": invalid URI for request']",
                "!format.date().validate('2021-01-01').hasValue() && format.date().validate('2021-13-01').hasValue()",
                "!format.byte().validate('aGVsbG8=').hasValue() && format.byte().validate('!').value() == ['invalid base64']",
            ],
            &[],
        );
    }
}
