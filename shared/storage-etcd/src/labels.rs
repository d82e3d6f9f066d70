//! What the storage's metrics are labelled with, as upstream names it: a store's qualified
//! resource, and this process's API server identity, hashed.

use std::sync::LazyLock;

/// Upstream's `DefaultQualifiedResource.String()`: `pods`, `deployments.apps`.
pub fn qualified_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

/// This process's API server ID (`apiserver-<uuid>`, new at each start as upstream's) as
/// the metrics name it: its SHA-256.
pub fn apiserver_id_hash() -> &'static str {
    static HASH: LazyLock<String> = LazyLock::new(|| {
        let id = format!("apiserver-{}", uuid::Uuid::new_v4());
        format!("sha256:{}", sha256_hex(id.as_bytes()))
    });
    &HASH
}

/// The SHA-256 of `data` in lower-case hex, as Go's `%x` prints it.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, data);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}
