//! authorization.k8s.io/v1's reviews, after upstream's `pkg/registry/authorization`: asked,
//! never stored. Each is a create answered by its own `Creater` (upstream's REST types):
//! validate, ask the server's authorizer (or, for SelfSubjectRulesReview, its rule
//! resolver), answer the review with its status. Without an authorizer upstream does not
//! install the group; these answer 404 as an unserved resource would.

pub mod localsubjectaccessreviews;
pub mod selfsubjectaccessreviews;
pub mod selfsubjectrulesreviews;
pub mod subjectaccessreviews;
mod util;
mod validation;

use std::sync::Arc;

use kas_apimachinery::Status;
use kas_apimachinery::schema::{Kind, Message, go_encoded};
use kas_apimachinery::validation::field::ErrorList;
use kas_registry::strategy::{Creater, FieldErrors};
use kas_registry::{ResourceDescriptor, Scope, Strategy, Verb};
use serde_json::Value;

pub(crate) const GROUP: &str = "authorization.k8s.io";

/// A review's descriptor: created only, no list, no table columns.
pub(crate) const fn descriptor(
    group: &'static str,
    kind: &'static str,
    list_kind: &'static str,
    plural: &'static str,
    singular: &'static str,
    scope: Scope,
    schema: &'static Message,
) -> ResourceDescriptor {
    ResourceDescriptor {
        group,
        version: "v1",
        kind,
        list_kind,
        plural,
        singular,
        short_names: &[],
        categories: &[],
        scope,
        verbs: &[Verb::Create],
        subresources: &[],
        table_columns: &[],
        table_name_and_age: true,
        storage_resource: plural,
        schema: Some(schema),
        list_schema: None,
    }
}

/// Upstream's `NewInvalid(authorizationapi.Kind(review.Kind), "", errs)`: the decoded
/// internal object has no kind, so the message starts `.authorization.k8s.io "" is
/// invalid`.
pub(crate) fn invalid(group: &str, errs: ErrorList) -> kas_registry::Error {
    Status::invalid(group, "", "", validation::causes(errs)).into()
}

/// The 404 of a group upstream would not have installed.
pub(crate) fn not_served() -> kas_registry::Error {
    Status::not_found_path().into()
}

/// The review answered: `status` set, written as Go writes the type.
pub(crate) fn answer(mut review: Value, status: Value, schema: &'static Message) -> Value {
    if let Some(map) = review.as_object_mut() {
        map.insert("status".to_owned(), status);
    }
    go_encoded(&mut review, &Kind::Message(schema));
    review
}

/// A review's strategy: its creates are answered by `C`, which validates; nothing else of
/// the store's is reached (the only verb is create).
pub struct ReviewStrategy<C>(pub C);

impl<C: Creater + 'static> Strategy for ReviewStrategy<C> {
    fn validate(&self, _: &Value) -> FieldErrors {
        FieldErrors::new()
    }

    fn validate_update(&self, _: &Value, _: &Value) -> FieldErrors {
        FieldErrors::new()
    }

    fn creater(&self) -> Option<&dyn Creater> {
        Some(&self.0)
    }
}

/// How the role installs a review: its descriptor and its `Creater`. The store's storage
/// is etcd's, which nothing reaches.
pub(crate) fn install(
    descriptor: &'static ResourceDescriptor,
    creater: impl Creater + 'static,
) -> crate::resources::Install {
    crate::resources::Install {
        descriptor,
        strategy: Arc::new(ReviewStrategy(creater)),
        reads: crate::resources::Reads::Etcd,
        hooks: None,
    }
}

#[cfg(test)]
pub(crate) mod testing;
