//! Secret-based service-account tokens as kube-controller-manager's token controller
//! makes them, for the legacy-token annotations (this server has no token controller).

use kas_e2e::TestCluster;
use serde_json::json;

/// A secret-based token for `default/legacy`, signed as kube-controller-manager's token
/// controller signs them (with the cluster's service-account key).
pub fn legacy_token(c: &TestCluster, uid: &str) -> String {
    use kas_auth::authentication::serviceaccount::{TokenGenerator, jwt, private_key_from_file};
    let sa = &c.pki().service_account;
    let key = private_key_from_file(&sa.key).expect("service-account key");
    let generator = TokenGenerator::from_file("kubernetes/serviceaccount", &sa.key).expect("key");
    let claims = json!({
        "iss": "kubernetes/serviceaccount",
        "kubernetes.io/serviceaccount/namespace": "default",
        "kubernetes.io/serviceaccount/secret.name": "legacy-token",
        "kubernetes.io/serviceaccount/service-account.name": "legacy",
        "kubernetes.io/serviceaccount/service-account.uid": uid,
        "sub": "system:serviceaccount:default:legacy",
    });
    let payload = serde_json::to_vec(&claims).expect("claims");
    jwt::sign(&key, &generator.public_key().key_id, &payload).expect("signed")
}
