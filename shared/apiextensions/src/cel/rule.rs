//! One `x-kubernetes-validations` entry (upstream `ValidationRule`), read from raw JSON.

use kas_apimachinery::golang::strconv::quote;
use serde_json::Value as Json;

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ValidationRule {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
    pub field_path: String,
    pub optional_old_self: Option<bool>,
}

impl ValidationRule {
    pub fn from_json(v: &Json) -> ValidationRule {
        let s = |k: &str| v.get(k).and_then(Json::as_str).unwrap_or("").to_owned();
        ValidationRule {
            rule: s("rule"),
            message: s("message"),
            message_expression: s("messageExpression"),
            reason: v.get("reason").and_then(Json::as_str).map(str::to_owned),
            field_path: s("fieldPath"),
            optional_old_self: v.get("optionalOldSelf").and_then(Json::as_bool),
        }
    }

    /// Upstream `ruleErrorString`: the message if any, else the rule, trimmed.
    pub fn error_string(&self) -> &str {
        if self.message.is_empty() {
            self.rule.trim()
        } else {
            self.message.trim()
        }
    }

    /// Upstream `ruleMessageOrDefault`.
    pub fn message_or_default(&self) -> String {
        if self.message.is_empty() {
            format!("failed rule: {}", self.error_string())
        } else {
            self.message.trim().to_owned()
        }
    }

    /// The rule as Go's `%#v` prints upstream's internal `apiextensions.ValidationRule`, the
    /// bad value of CRD validation's errors about a rule. Go prints pointers as addresses,
    /// which no client can rely on; a set pointer prints as a fixed address here.
    pub fn go_syntax(&self) -> String {
        let reason = match &self.reason {
            None => "(*apiextensions.FieldValueErrorReason)(nil)",
            Some(_) => "(*apiextensions.FieldValueErrorReason)(0xc000000000)",
        };
        let old_self = match self.optional_old_self {
            None => "(*bool)(nil)",
            Some(_) => "(*bool)(0xc000000008)",
        };
        format!(
            "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{old_self}}}",
            quote(&self.rule),
            quote(&self.message),
            quote(&self.message_expression),
            quote(&self.field_path),
        )
    }
}
