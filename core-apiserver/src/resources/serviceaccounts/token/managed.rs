//! The managed fields of a TokenRequest answer: upstream's create handler runs its field
//! manager on the decoded request before `TokenREST.Create` fills it, so the writer owns
//! what it sent and what decoding defaulted (`expirationSeconds`), through `token`; not
//! the audiences the server adds nor the name it takes from the account.

use kas_apimachinery::managed_fields as mf;
use kas_apimachinery::schema::{Kind, go_encoded, zero_value};
use serde_json::{Value, json};

use kas_api::authentication::v1::TOKEN_REQUEST;

/// The API version TokenRequests are served in.
const API_VERSION: &str = "authentication.k8s.io/v1";

/// `metadata.managedFields` of an answer to `sent` (the request as decoded) by `manager`
/// at `time` (RFC 3339).
pub(super) fn managed_fields(sent: &Value, manager: &str, time: String) -> Value {
    let kind = Kind::Message(&TOKEN_REQUEST);
    let mut new = sent.clone();
    // `SetDefaults_TokenRequestSpec`, which upstream's decoding applies.
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut)
        && !spec.get("expirationSeconds").is_some_and(Value::is_i64)
    {
        spec.insert("expirationSeconds".into(), json!(3600));
    }
    if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    go_encoded(&mut new, &kind);
    let comparison = mf::compare(&zero_value(&kind), &new, &TOKEN_REQUEST);
    let op = mf::Operation {
        manager,
        api_version: API_VERSION,
        subresource: "token",
        time,
        ignored: mf::FieldSet::default(),
    };
    let compare_in = |v: &str| (v == API_VERSION).then(|| comparison.clone());
    mf::encode(&mf::update(Vec::new(), &compare_in, &op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_owns_what_it_sent_and_the_defaults() {
        let sent = json!({"metadata": {"name": "tr"}, "spec": {"audiences": ["a"]}});
        let managed = managed_fields(&sent, "kubectl", "2024-01-01T00:00:00Z".into());
        assert_eq!(
            managed,
            json!([{
                "apiVersion": "authentication.k8s.io/v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:audiences": {}, "f:expirationSeconds": {}}},
                "manager": "kubectl",
                "operation": "Update",
                "subresource": "token",
                "time": "2024-01-01T00:00:00Z",
            }])
        );
    }
}
