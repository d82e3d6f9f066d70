//! admissionregistration.k8s.io/v1: webhook configurations, ValidatingAdmissionPolicies and
//! their bindings, after upstream's `pkg/registry/admissionregistration`. Objects are only
//! stored: no webhook is called and no policy is evaluated; CEL expressions are not compiled.
pub mod mutatingwebhookconfigurations;
pub mod validatingadmissionpolicies;
pub mod validatingadmissionpolicybindings;
pub mod validatingwebhookconfigurations;
pub mod webhook;

#[cfg(test)]
mod tests;
