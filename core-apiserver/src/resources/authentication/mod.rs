//! authentication.k8s.io/v1's reviews, after upstream's `pkg/registry/authentication`:
//! TokenReview (is this token valid, and whose is it?) and SelfSubjectReview (who am I?).
//! Asked, never stored: each create is answered by its own `Creater`.

pub mod selfsubjectreviews;
pub mod tokenreviews;

pub(crate) const GROUP: &str = "authentication.k8s.io";

/// A user as authentication.k8s.io/v1's `UserInfo` writes it.
pub(crate) fn user_info(user: &kas_auth::UserInfo) -> serde_json::Value {
    serde_json::json!({
        "username": user.name,
        "uid": user.uid,
        "groups": user.groups,
        "extra": user.extra,
    })
}
