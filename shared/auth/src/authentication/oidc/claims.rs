//! Upstream's claim mapping (`getUsername`, `getGroups`, `getUID`, `getExtra`), its
//! required claims and validation rules, over a verified token's claims.

use std::collections::BTreeMap;
use std::sync::Arc;

use cel::Value as CelValue;
use cel::objects::{Key, Map as CelMap};
use serde_json::{Map, Value};

use super::cel::{CLAIMS, Compiled, USER, to_value};
use super::config::JwtAuthenticator;
use super::validation::CelMapper;
use super::verify::json_type;
use crate::UserInfo;
use crate::user::CREDENTIAL_ID_KEY;

pub(crate) type Claims = Map<String, Value>;

fn cannot(v: &Value, into: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go value of type {into}",
        json_type(v)
    )
}

/// `claims.unmarshalClaim(name, &string)`.
fn string_claim(c: &Claims, name: &str) -> Result<String, String> {
    match c.get(name) {
        None => Err("claim not present".to_owned()),
        Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(cannot(other, "string")),
    }
}

/// `stringOrArray`: a list of strings, or one string.
fn string_or_array(v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(a) if a.iter().all(|x| x.is_string() || x.is_null()) => Ok(a
            .iter()
            .map(|x| x.as_str().unwrap_or_default().to_owned())
            .collect()),
        other => Err(cannot(other, "string")),
    }
}

/// Upstream's `convertCELValueToStringList`.
fn string_list(v: &CelValue) -> Result<Vec<String>, String> {
    const ERR: &str = "expression must return a string or a list of strings";
    match v {
        CelValue::String(s) if s.is_empty() => Ok(Vec::new()),
        CelValue::String(s) => Ok(vec![s.to_string()]),
        CelValue::List(items) => {
            let mut out = Vec::new();
            for item in items.iter() {
                match item {
                    CelValue::String(s) if s.is_empty() => {}
                    CelValue::String(s) => out.push(s.to_string()),
                    _ => return Err(ERR.to_owned()),
                }
            }
            Ok(out)
        }
        CelValue::Null => Ok(Vec::new()),
        _ => Err(ERR.to_owned()),
    }
}

/// The mapping of one authenticator.
pub(crate) struct Mapper<'a> {
    pub jwt: &'a JwtAuthenticator,
    pub cel: &'a CelMapper,
    pub required_claims: &'a [(String, String)],
}

fn eval(c: &Compiled, variable: &str, value: &CelValue) -> Result<CelValue, String> {
    c.eval(variable, value)
        .map_err(|e| format!("expression '{}' resulted in error: {e}", c.expression))
}

impl Mapper<'_> {
    /// The user of verified `claims`, or upstream's error.
    pub fn user(&self, claims: &Claims) -> Result<UserInfo, String> {
        let value = to_value(&Value::Object(claims.clone()));
        let mut info = UserInfo {
            name: self.username(claims, &value)?,
            ..UserInfo::default()
        };
        info.groups = self.groups(claims, &value)?;
        info.uid = self.uid(claims, &value)?;
        info.extra = self.extra(claims, &value)?;
        for (claim, want) in self.required_claims {
            let Some(v) = claims.get(claim) else {
                return Err(format!(
                    "oidc: required claim {claim} not present in ID token"
                ));
            };
            let got = match v {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => {
                    return Err(format!(
                        "oidc: parse claim {claim}: {}",
                        cannot(other, "string")
                    ));
                }
            };
            if &got != want {
                return Err(format!(
                    "oidc: required claim {claim} value does not match. Got = {got}, want = {want}"
                ));
            }
        }
        for (rule, message) in &self.cel.claim_validation_rules {
            check_rule(rule, message, CLAIMS, &value)
                .map_err(|e| format!("oidc: error evaluating claim validation expression: {e}"))?;
        }
        if !self.cel.user_validation_rules.is_empty() {
            let user = user_value(&info);
            for (rule, message) in &self.cel.user_validation_rules {
                check_rule(rule, message, USER, &user).map_err(|e| {
                    format!("oidc: error evaluating user info validation rule: {e}")
                })?;
            }
        }
        Ok(info)
    }

    fn username(&self, claims: &Claims, value: &CelValue) -> Result<String, String> {
        const WHAT: &str = "oidc: error evaluating username claim expression";
        if let Some(expr) = &self.cel.username {
            return match eval(expr, CLAIMS, value).map_err(|e| format!("{WHAT}: {e}"))? {
                CelValue::String(s) if s.is_empty() => {
                    Err("oidc: empty username via CEL expression is not allowed".to_owned())
                }
                CelValue::String(s) => Ok(s.to_string()),
                _ => Err(format!(
                    "{WHAT}: username claim expression must return a string"
                )),
            };
        }
        let mapping = &self.jwt.claim_mappings.username;
        let claim = &mapping.claim;
        let username = string_claim(claims, claim).map_err(|e| {
            format!(
                "oidc: parse username claims {}: {e}",
                kas_apimachinery::golang::strconv::quote(claim)
            )
        })?;
        if claim == "email"
            && let Some(verified) = claims.get("email_verified")
        {
            match verified {
                Value::Bool(true) => {}
                Value::Bool(false) | Value::Null => {
                    return Err("oidc: email not verified".to_owned());
                }
                other => {
                    return Err(format!(
                        "oidc: parse 'email_verified' claim: {}",
                        cannot(other, "bool")
                    ));
                }
            }
        }
        Ok(match mapping.prefix.as_deref() {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}{username}"),
            _ => username,
        })
    }

    fn groups(&self, claims: &Claims, value: &CelValue) -> Result<Vec<String>, String> {
        let mapping = &self.jwt.claim_mappings.groups;
        if !mapping.claim.is_empty()
            && let Some(v) = claims.get(&mapping.claim)
        {
            let mut groups = string_or_array(v).map_err(|e| {
                format!(
                    "oidc: parse groups claim {}: {e}",
                    kas_apimachinery::golang::strconv::quote(&mapping.claim)
                )
            })?;
            if let Some(prefix) = mapping.prefix.as_deref().filter(|p| !p.is_empty()) {
                for g in &mut groups {
                    g.insert_str(0, prefix);
                }
            }
            return Ok(groups);
        }
        let Some(expr) = &self.cel.groups else {
            return Ok(Vec::new());
        };
        const WHAT: &str = "oidc: error evaluating group claim expression";
        let v = eval(expr, CLAIMS, value).map_err(|e| format!("{WHAT}: {e}"))?;
        string_list(&v).map_err(|e| format!("{WHAT}: {e}"))
    }

    fn uid(&self, claims: &Claims, value: &CelValue) -> Result<String, String> {
        let claim = &self.jwt.claim_mappings.uid.claim;
        if !claim.is_empty() {
            return string_claim(claims, claim).map_err(|e| {
                format!(
                    "oidc: parse uid claim {}: {e}",
                    kas_apimachinery::golang::strconv::quote(claim)
                )
            });
        }
        let Some(expr) = &self.cel.uid else {
            return Ok(String::new());
        };
        const WHAT: &str = "oidc: error evaluating uid claim expression";
        match eval(expr, CLAIMS, value).map_err(|e| format!("{WHAT}: {e}"))? {
            CelValue::String(s) => Ok(s.to_string()),
            _ => Err(format!("{WHAT}: uid claim expression must return a string")),
        }
    }

    fn extra(
        &self,
        claims: &Claims,
        value: &CelValue,
    ) -> Result<BTreeMap<String, Vec<String>>, String> {
        let mut extra = BTreeMap::new();
        if let Some(Value::String(jti)) = claims.get("jti")
            && !jti.is_empty()
        {
            extra.insert(CREDENTIAL_ID_KEY.to_owned(), vec![format!("JTI={jti}")]);
        }
        let mut results = Vec::new();
        for (key, expr) in &self.cel.extra {
            results.push((key, expr, eval(expr, CLAIMS, value)?));
        }
        for (key, expr, v) in results {
            let values = string_list(&v).map_err(|e| {
                format!(
                    "oidc: error evaluating extra claim expression: {}: {e}",
                    expr.expression
                )
            })?;
            if !values.is_empty() {
                extra.insert(key.clone(), values);
            }
        }
        Ok(extra)
    }
}

/// Upstream's `checkValidationRulesEvaluation` for one rule.
fn check_rule(
    rule: &Compiled,
    message: &str,
    variable: &str,
    value: &CelValue,
) -> Result<(), String> {
    match eval(rule, variable, value)? {
        CelValue::Bool(true) => Ok(()),
        CelValue::Bool(false) => Err(format!(
            "validation expression '{}' failed: {message}",
            rule.expression
        )),
        _ => Err("validation expression must return a boolean".to_owned()),
    }
}

/// The `user` variable: `authentication.k8s.io/v1` `UserInfo` with every field present.
fn user_value(info: &UserInfo) -> CelValue {
    let s = |v: &str| CelValue::String(Arc::new(v.to_owned()));
    let list = |v: &[String]| CelValue::List(Arc::new(v.iter().map(|x| s(x)).collect()));
    let extra: std::collections::HashMap<Key, CelValue> = info
        .extra
        .iter()
        .map(|(k, v)| (Key::String(Arc::new(k.clone())), list(v)))
        .collect();
    let fields: std::collections::HashMap<Key, CelValue> = [
        ("username", s(&info.name)),
        ("uid", s(&info.uid)),
        ("groups", list(&info.groups)),
        (
            "extra",
            CelValue::Map(CelMap {
                map: Arc::new(extra),
            }),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (Key::String(Arc::new(k.to_owned())), v))
    .collect();
    CelValue::Map(CelMap {
        map: Arc::new(fields),
    })
}
