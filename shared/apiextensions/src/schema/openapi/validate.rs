//! kube-openapi's `validate.SchemaValidator` over a decoded value: the type, schema-props
//! (allOf/anyOf/oneOf/not), string, format, number, slice, common (enum) and object
//! validators, in upstream's order, with its `Result` (errors deduplicated by message,
//! and the match count by which anyOf and oneOf pick the failures they report).
//! Properties are visited in sorted order (upstream's map order is random).

use serde_json::{Map, Value};

use super::errors::{self, Bound, OpenApiError};
use super::formats;
use super::ratcheting::Corr;
use super::spec::Spec;

/// Upstream `validate.Result`.
#[derive(Clone, Debug, Default)]
pub(super) struct Res {
    pub errors: Vec<OpenApiError>,
    pub match_count: usize,
}

impl Res {
    fn err(e: OpenApiError) -> Res {
        Res {
            errors: vec![e],
            match_count: 0,
        }
    }

    fn add(&mut self, e: OpenApiError) {
        if !self.errors.iter().any(|r| r.message() == e.message()) {
            self.errors.push(e);
        }
    }

    fn merge(&mut self, other: Res) {
        for e in other.errors {
            self.add(e);
        }
        self.match_count += other.match_count;
    }

    fn merge_opt(&mut self, other: Option<Res>) {
        if let Some(o) = other {
            self.merge(o);
        }
    }

    fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Go's dynamic kind of a decoded value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Nil,
    Bool,
    Int,
    Float,
    String,
    Slice,
    Map,
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Nil,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_i64() => Kind::Int,
        Value::Number(_) => Kind::Float,
        Value::String(_) => Kind::String,
        Value::Array(_) => Kind::Slice,
        Value::Object(_) => Kind::Map,
    }
}

fn as_f64(v: &Value) -> f64 {
    v.as_f64().unwrap_or_default()
}

/// `SchemaValidator.Validate`.
pub(super) fn validate(s: &Spec, path: &str, data: &Value) -> Res {
    validate_with(s, path, data, None)
}

/// `SchemaValidator.Validate`, or with `corr` the ratcheting validator's `Validate`: the
/// errors of a value equal to its old value are dropped (upstream keeps them as warnings,
/// which nothing reads).
pub(super) fn validate_with(s: &Spec, path: &str, data: &Value, corr: Option<&Corr<'_>>) -> Res {
    let mut result = validate_node(s, path, data, corr);
    if let Some(c) = corr
        && !result.is_valid()
        && c.deep_equal()
    {
        result.errors.clear();
    }
    result
}

fn validate_node(s: &Spec, path: &str, data: &Value, corr: Option<&Corr<'_>>) -> Res {
    let mut result = Res::default();
    if data.is_null() {
        result.merge_opt(type_validate(s, path, data));
        result.merge_opt(common_validate(s, path, data));
        return result;
    }
    let k = kind(data);
    if !s.types.is_empty() || !s.vv.format.is_empty() {
        result.merge_opt(type_validate(s, path, data));
        result.match_count += 1;
    }
    result.merge(schema_props_validate(s, path, data));
    result.match_count += 1;
    if let Value::String(str_) = data {
        result.merge_opt(string_validate(s, path, str_));
        result.match_count += 1;
        if formats::contains(&s.vv.format) {
            if !formats::validates(&s.vv.format, str_) {
                result.merge(Res::err(errors::invalid_type(path, &s.vv.format, str_)));
            }
            result.match_count += 1;
        }
    }
    if matches!(k, Kind::Int | Kind::Float) {
        result.merge(number_validate(s, path, data));
        result.match_count += 1;
    }
    if let Value::Array(items) = data {
        result.merge(slice_validate(s, path, items, corr));
        result.match_count += 1;
    }
    result.merge_opt(common_validate(s, path, data));
    result.match_count += 1;
    if let Value::Object(map) = data {
        result.merge(object_validate(s, path, map, corr));
        result.match_count += 1;
    }
    result.match_count += 1;
    result
}

/// swag's `IsFloat64AJSONInteger`.
fn is_float_a_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    if f == f.trunc() {
        return true;
    }
    let g = f.trunc();
    let diff = (f - g).abs();
    if g == 0.0 {
        return diff < 1e-9 * f64::MIN_POSITIVE;
    }
    diff / (f.abs() + g.abs()).min(f64::MAX) < 1e-9
}

/// `typeValidator.Validate`: `None` stands for a result with only its match count.
fn type_validate(s: &Spec, path: &str, data: &Value) -> Option<Res> {
    let contains = |t: &str| s.types.iter().any(|x| x == t);
    let ok = Some(Res {
        errors: Vec::new(),
        match_count: 1,
    });
    if data.is_null() {
        if !s.types.is_empty() && !contains("null") && !s.nullable {
            return Some(Res::err(errors::invalid_type(
                path,
                &s.types.join(","),
                "null",
            )));
        }
        return ok;
    }
    let k = kind(data);
    let (sch_type, format) = match k {
        Kind::Bool => ("boolean", ""),
        Kind::String => ("string", ""),
        Kind::Int => ("integer", "int64"),
        Kind::Float => ("number", "float64"),
        Kind::Slice => ("array", ""),
        Kind::Map | Kind::Nil => ("object", ""),
    };
    let is_float_int =
        sch_type == "number" && is_float_a_json_integer(as_f64(data)) && contains("integer");
    let is_int_float = sch_type == "integer" && contains("number");
    let string_or_slice = matches!(k, Kind::String | Kind::Slice);
    if !s.vv.format.is_empty() {
        let format_matches =
            contains(sch_type) || format == s.vv.format || is_float_int || is_int_float;
        if !(string_or_slice || format_matches) {
            return Some(Res::err(errors::invalid_type(path, &s.vv.format, format)));
        }
        // A string or array with a format passes unless the type is numeric.
        if string_or_slice && !(contains("number") || contains("integer")) {
            return ok;
        }
    }
    if !(contains(sch_type) || is_float_int || is_int_float) {
        return Some(Res::err(errors::invalid_type(
            path,
            &s.types.join(","),
            sch_type,
        )));
    }
    ok
}

/// `schemaPropsValidator.Validate`.
fn schema_props_validate(s: &Spec, path: &str, data: &Value) -> Res {
    let mut main = Res::default();
    if !s.any_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        for sub in &s.any_of {
            let r = validate(sub, path, data);
            if r.is_valid() {
                best = None;
                first_success = Some(r);
                break;
            }
            if best.as_ref().is_none_or(|b| r.match_count > b.match_count) {
                best = Some(r);
            }
        }
        if first_success.is_none() {
            main.add(errors::must_validate_at_least_one_schema(path));
        }
        main.merge_opt(best.or(first_success));
    }
    if !s.one_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        let mut validated = 0;
        for sub in &s.one_of {
            let r = validate(sub, path, data);
            if r.is_valid() {
                validated += 1;
                best = None;
                if first_success.is_none() {
                    first_success = Some(r);
                }
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| r.match_count > b.match_count) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let additional = if validated == 0 {
                "Found none valid".to_owned()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.add(errors::must_validate_only_one_schema(path, &additional));
            main.merge_opt(best);
        } else {
            main.merge_opt(first_success);
        }
    }
    if !s.all_of.is_empty() {
        let mut validated = 0;
        for sub in &s.all_of {
            let r = validate(sub, path, data);
            if r.is_valid() {
                validated += 1;
            }
            main.merge(r);
        }
        if validated != s.all_of.len() {
            let additional = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.add(errors::must_validate_all_schemas(path, additional));
        }
    }
    if let Some(not) = &s.not
        && validate(not, path, data).is_valid()
    {
        main.add(errors::must_not_validate_schema(path));
    }
    main.match_count += 1;
    main
}

/// `stringValidator.Validate`: the first failing check only.
fn string_validate(s: &Spec, path: &str, data: &str) -> Option<Res> {
    let len = data.chars().count() as i64;
    if let Some(max) = s.vv.max_length
        && len > max
    {
        return Some(Res::err(errors::too_long(path, max, data)));
    }
    if let Some(min) = s.vv.min_length
        && len < min
    {
        return Some(Res::err(errors::too_short(path, min, data)));
    }
    match &s.pattern_regex {
        Some(Ok(re)) if !re.is_match(data) => {
            Some(Res::err(errors::failed_pattern(path, &s.vv.pattern, data)))
        }
        Some(Err(e)) => {
            let shown = format!("{}, but pattern is invalid: {e}", s.vv.pattern);
            Some(Res::err(errors::failed_pattern(path, &shown, data)))
        }
        _ => None,
    }
}

/// `numberValidator.Validate`: multipleOf, minimum, maximum, each with the native
/// integer checks for an integer value (the bound truncated to int64, as upstream's).
fn number_validate(s: &Spec, path: &str, data: &Value) -> Res {
    let mut res = Res::default();
    let int = data.as_i64().filter(|_| kind(data) == Kind::Int);
    let f = as_f64(data);
    if let Some(factor) = s.vv.multiple_of {
        let e = match int {
            Some(v) => {
                let factor = factor as i64;
                if factor <= 0 {
                    Some(errors::multiple_of_must_be_positive(
                        path,
                        Bound::Int(factor),
                    ))
                } else if v.wrapping_div(factor).wrapping_mul(factor) != v {
                    Some(errors::not_multiple_of(path, Bound::Int(factor), data))
                } else {
                    None
                }
            }
            None if factor <= 0.0 => Some(errors::multiple_of_must_be_positive(
                path,
                Bound::Float(factor),
            )),
            None => {
                let mult = if factor < 1.0 {
                    1.0 / factor * f
                } else {
                    f / factor
                };
                (!is_float_a_json_integer(mult))
                    .then(|| errors::not_multiple_of(path, Bound::Float(factor), data))
            }
        };
        res.merge_opt(e.map(Res::err));
    }
    if let Some(min) = s.vv.minimum {
        let excl = s.vv.exclusive_minimum;
        let e = match int {
            Some(v) => {
                let m = min as i64;
                ((!excl && v < m) || (excl && v <= m))
                    .then(|| errors::exceeds_minimum(path, Bound::Int(m), excl, data))
            }
            None => ((!excl && f < min) || (excl && f <= min))
                .then(|| errors::exceeds_minimum(path, Bound::Float(min), excl, data)),
        };
        res.merge_opt(e.map(Res::err));
    }
    if let Some(max) = s.vv.maximum {
        let excl = s.vv.exclusive_maximum;
        let e = match int {
            Some(v) => {
                let m = max as i64;
                ((!excl && v > m) || (excl && v >= m))
                    .then(|| errors::exceeds_maximum(path, Bound::Int(m), excl, data))
            }
            None => ((!excl && f > max) || (excl && f >= max))
                .then(|| errors::exceeds_maximum(path, Bound::Float(max), excl, data)),
        };
        res.merge_opt(e.map(Res::err));
    }
    res.match_count += 1;
    res
}

/// `schemaSliceValidator.Validate`.
fn slice_validate(s: &Spec, path: &str, items: &[Value], corr: Option<&Corr<'_>>) -> Res {
    let mut result = Res::default();
    if let Some(item_schema) = &s.items {
        for (i, v) in items.iter().enumerate() {
            let child = corr.and_then(|c| c.index(i));
            result.merge(validate_with(
                item_schema,
                &format!("{path}[{i}]"),
                v,
                child.as_ref(),
            ));
        }
    }
    let size = items.len() as i64;
    if let Some(min) = s.vv.min_items
        && size < min
    {
        result.add(errors::too_few_items(path, min, size));
    }
    if let Some(max) = s.vv.max_items
        && size > max
    {
        result.add(errors::too_many_items(path, max, size));
    }
    if s.vv.unique_items
        && items
            .iter()
            .enumerate()
            .any(|(i, v)| items[..i].contains(v))
    {
        result.add(errors::duplicate_items(path));
    }
    result.match_count += 1;
    result
}

/// Go's `reflect.Value.Convert` then `DeepEqual`, as the enum check compares.
fn enum_matches(data: &Value, e: &Value) -> bool {
    match (kind(data), kind(e)) {
        (Kind::Nil, _) | (_, Kind::Nil) => false,
        (Kind::Int, Kind::Int) => data.as_i64() == e.as_i64(),
        (Kind::Int | Kind::Float, Kind::Float) => as_f64(data) == as_f64(e),
        (Kind::Float, Kind::Int) => Some(as_f64(data).trunc() as i64) == e.as_i64(),
        (Kind::Int, Kind::String) => {
            // Go's string(rune(i)): U+FFFD for what is no character.
            let c = data
                .as_i64()
                .and_then(|i| u32::try_from(i).ok())
                .and_then(char::from_u32)
                .unwrap_or('\u{fffd}');
            e.as_str() == Some(c.encode_utf8(&mut [0; 4]))
        }
        (a, b) if a == b => data == e,
        _ => false,
    }
}

/// `basicCommonValidator.Validate`: the enum.
fn common_validate(s: &Spec, path: &str, data: &Value) -> Option<Res> {
    if s.vv.enum_.is_empty() || s.vv.enum_.iter().any(|e| enum_matches(data, e)) {
        return None;
    }
    Some(Res::err(errors::enum_fail(path, data, &s.vv.enum_)))
}

/// `objectValidator.Validate`.
fn object_validate(s: &Spec, path: &str, val: &Map<String, Value>, corr: Option<&Corr<'_>>) -> Res {
    // The old value of a field, but for TypeMeta at the root (never ratcheted).
    let child = |k: &str| {
        if path.is_empty() && matches!(k, "kind" | "apiVersion") {
            return None;
        }
        corr.and_then(|c| c.key(k))
    };
    let mut res = Res::default();
    let num_keys = val.len() as i64;
    if let Some(min) = s.vv.min_properties
        && num_keys < min
    {
        res.add(errors::too_few_properties(path, min, num_keys));
    }
    if let Some(max) = s.vv.max_properties
        && num_keys > max
    {
        res.add(errors::too_many_properties(path, max, num_keys));
    }
    let mut keys: Vec<&String> = val.keys().collect();
    keys.sort();
    match &s.additional_properties {
        Some((false, _)) => {
            for k in &keys {
                if !s.properties.contains_key(k.as_str()) {
                    res.add(errors::property_not_allowed(path, k));
                }
            }
        }
        Some((true, Some(ap))) => {
            for k in &keys {
                if !s.properties.contains_key(k.as_str()) {
                    let c = child(k);
                    res.merge(validate_with(
                        ap,
                        &format!("{path}.{k}"),
                        &val[k.as_str()],
                        c.as_ref(),
                    ));
                }
            }
        }
        _ => {}
    }
    for (name, prop) in &s.properties {
        let r_name = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        if let Some(v) = val.get(name) {
            let c = child(name);
            res.merge(validate_with(prop, &r_name, v, c.as_ref()));
        }
    }
    for k in &s.vv.required {
        if !val.contains_key(k) {
            res.add(errors::required(&format!("{path}.{k}")));
        }
    }
    res
}
