//! kube-apiserver's default admission plugins for the resources core-apiserver serves
//! (`plugin/pkg/admission`), beside the generic `NamespaceLifecycle` of kas-registry, and
//! the `--enable-admission-plugins` / `--disable-admission-plugins` choice among them.
//!
//! Each plugin is a struct built from the role's stores that implements
//! `kas_registry::admission::Mutate` (upstream's mutating `Admit`) and/or `Validate`
//! (upstream's `Validate`); `chain` puts the enabled ones in upstream's order.

pub mod certificate_subject_restriction;
pub mod certificates;
pub mod default_class;
pub mod default_ingress_class;
pub mod default_storage_class;
pub mod default_toleration_seconds;
pub mod limit_ranger;
pub mod node_restriction;
pub mod pod_security;
pub mod priority;
pub mod pvc_resize;
pub mod resource_quota;
pub mod runtime_class;
pub mod service_account;
pub mod storage_object_in_use_protection;
pub mod taint_nodes_by_condition;

use std::sync::Arc;

use kas_auth::authorization::DynAuthorizer;
use kas_registry::admission::{Admit, Chain, Mutate, NamespaceLifecycle, Validate};
use kas_registry::store::Store;

/// Upstream's `AllOrderedPlugins` (kube-apiserver 1.33) and whether each is on by default
/// (not in `DefaultOffAdmissionPlugins`). Every name is accepted by the flags; only the
/// ones `build` knows run here, and enabling another one is refused at start.
pub const ORDERED_PLUGINS: &[(&str, bool)] = &[
    ("AlwaysAdmit", false),
    ("NamespaceAutoProvision", false),
    ("NamespaceLifecycle", true),
    ("NamespaceExists", false),
    ("LimitPodHardAntiAffinityTopology", false),
    ("LimitRanger", true),
    ("ServiceAccount", true),
    ("NodeRestriction", false),
    ("TaintNodesByCondition", true),
    ("AlwaysPullImages", false),
    ("ImagePolicyWebhook", false),
    ("PodSecurity", true),
    ("PodNodeSelector", false),
    ("Priority", true),
    ("DefaultTolerationSeconds", true),
    ("PodTolerationRestriction", false),
    ("EventRateLimit", false),
    ("ExtendedResourceToleration", false),
    ("DefaultStorageClass", true),
    ("StorageObjectInUseProtection", true),
    ("OwnerReferencesPermissionEnforcement", false),
    ("PersistentVolumeClaimResize", true),
    ("RuntimeClass", true),
    ("CertificateApproval", true),
    ("CertificateSigning", true),
    ("ClusterTrustBundleAttest", true),
    ("CertificateSubjectRestriction", true),
    ("DefaultIngressClass", true),
    ("DenyServiceExternalIPs", false),
    ("PodTopologyLabels", false),
    ("MutatingAdmissionPolicy", false),
    ("MutatingAdmissionWebhook", true),
    ("ValidatingAdmissionPolicy", true),
    ("ValidatingAdmissionWebhook", true),
    ("ResourceQuota", true),
    ("AlwaysDeny", false),
];

/// One plugin as the chain holds it.
#[derive(Default)]
pub struct Plugin {
    pub check: Option<Arc<dyn Admit>>,
    pub mutator: Option<Arc<dyn Mutate>>,
    pub validator: Option<Arc<dyn Validate>>,
}

/// The store of resource `plural` in `group`, if this role serves it.
pub fn store(stores: &[Store], group: &str, plural: &str) -> Option<Store> {
    stores
        .iter()
        .find(|s| s.descriptor.group == group && s.descriptor.plural == plural)
        .cloned()
}

/// The plugin `name` built over the role's stores and the authorizer of
/// `--authorization-mode` (the plugins that ask it whether the user may do something);
/// `None` when it is not implemented here.
fn build(name: &str, stores: &[Store], authorizer: &DynAuthorizer) -> Option<Plugin> {
    let plugin = match name {
        "NamespaceLifecycle" => Plugin {
            check: Some(Arc::new(NamespaceLifecycle::new(store(
                stores,
                "",
                "namespaces",
            )?))),
            ..Plugin::default()
        },
        "Priority" => Plugin {
            mutator: Some(Arc::new(priority::Priority {
                classes: store(stores, "scheduling.k8s.io", "priorityclasses"),
            })),
            ..Plugin::default()
        },
        "DefaultTolerationSeconds" => Plugin {
            mutator: Some(Arc::new(
                default_toleration_seconds::DefaultTolerationSeconds::default(),
            )),
            ..Plugin::default()
        },
        "ServiceAccount" => {
            let plugin = Arc::new(service_account::ServiceAccount {
                accounts: store(stores, "", "serviceaccounts")?,
            });
            Plugin {
                mutator: Some(plugin.clone()),
                validator: Some(plugin),
                ..Plugin::default()
            }
        }
        "TaintNodesByCondition" => Plugin {
            mutator: Some(Arc::new(taint_nodes_by_condition::TaintNodesByCondition)),
            ..Plugin::default()
        },
        "DefaultStorageClass" => Plugin {
            mutator: Some(Arc::new(default_storage_class::DefaultStorageClass {
                classes: store(stores, "storage.k8s.io", "storageclasses"),
            })),
            ..Plugin::default()
        },
        "StorageObjectInUseProtection" => Plugin {
            mutator: Some(Arc::new(
                storage_object_in_use_protection::StorageObjectInUseProtection,
            )),
            ..Plugin::default()
        },
        "PersistentVolumeClaimResize" => Plugin {
            validator: Some(Arc::new(pvc_resize::PersistentVolumeClaimResize {
                classes: store(stores, "storage.k8s.io", "storageclasses"),
            })),
            ..Plugin::default()
        },
        "PodSecurity" => Plugin {
            validator: Some(Arc::new(pod_security::PodSecurity::new(
                store(stores, "", "namespaces"),
                store(stores, "", "pods"),
            ))),
            ..Plugin::default()
        },
        "ResourceQuota" => Plugin {
            validator: Some(Arc::new(resource_quota::ResourceQuota {
                quotas: store(stores, "", "resourcequotas")?,
            })),
            ..Plugin::default()
        },
        "LimitRanger" => {
            let plugin = Arc::new(limit_ranger::LimitRanger {
                ranges: store(stores, "", "limitranges")?,
            });
            Plugin {
                mutator: Some(plugin.clone()),
                validator: Some(plugin),
                ..Plugin::default()
            }
        }
        "DefaultIngressClass" => Plugin {
            mutator: Some(Arc::new(default_ingress_class::DefaultIngressClass {
                classes: store(stores, "networking.k8s.io", "ingressclasses"),
            })),
            ..Plugin::default()
        },
        "RuntimeClass" => {
            let plugin = Arc::new(runtime_class::RuntimeClass {
                classes: store(stores, "node.k8s.io", "runtimeclasses"),
            });
            Plugin {
                mutator: Some(plugin.clone()),
                validator: Some(plugin),
                ..Plugin::default()
            }
        }
        "CertificateSubjectRestriction" => Plugin {
            validator: Some(Arc::new(
                certificate_subject_restriction::CertificateSubjectRestriction,
            )),
            ..Plugin::default()
        },
        "CertificateApproval" => Plugin {
            validator: Some(Arc::new(certificates::approval::CertificateApproval {
                authorizer: authorizer.clone(),
            })),
            ..Plugin::default()
        },
        "CertificateSigning" => Plugin {
            validator: Some(Arc::new(certificates::signing::CertificateSigning {
                authorizer: authorizer.clone(),
            })),
            ..Plugin::default()
        },
        "NodeRestriction" => {
            let plugin = Arc::new(node_restriction::NodeRestriction::new(
                stores,
                authorizer.clone(),
            )?);
            Plugin {
                check: Some(plugin.clone()),
                validator: Some(plugin),
                ..Plugin::default()
            }
        }
        "MutatingAdmissionWebhook" => {
            let configurations = store(
                stores,
                "admissionregistration.k8s.io",
                "mutatingwebhookconfigurations",
            )?;
            let plugin = Arc::new(kas_admission_webhook::MutatingAdmissionWebhook(
                kas_admission_webhook::Webhooks::new(configurations, stores),
            ));
            Plugin {
                check: Some(plugin.clone()),
                mutator: Some(plugin),
                ..Plugin::default()
            }
        }
        "ValidatingAdmissionWebhook" => {
            let configurations = store(
                stores,
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
            )?;
            let plugin = Arc::new(kas_admission_webhook::ValidatingAdmissionWebhook(
                kas_admission_webhook::Webhooks::new(configurations, stores),
            ));
            Plugin {
                check: Some(plugin.clone()),
                validator: Some(plugin),
                ..Plugin::default()
            }
        }
        // ADMISSION PLUGINS: one arm per plugin above this line.
        _ => return None,
    };
    Some(plugin)
}

/// Whether this role runs plugin `name` (the others are accepted only to be disabled).
pub fn implemented(name: &str) -> bool {
    matches!(
        name,
        "NamespaceLifecycle"
            | "Priority"
            | "DefaultTolerationSeconds"
            | "ServiceAccount"
            | "TaintNodesByCondition"
            | "DefaultStorageClass"
            | "DefaultIngressClass"
            | "CertificateSubjectRestriction"
            | "CertificateApproval"
            | "CertificateSigning"
            | "RuntimeClass"
            | "StorageObjectInUseProtection"
            | "PersistentVolumeClaimResize"
            | "PodSecurity"
            | "ResourceQuota"
            | "LimitRanger"
            | "NodeRestriction"
            | "MutatingAdmissionWebhook"
            | "ValidatingAdmissionWebhook"
    )
}

/// The admission chain of the `enabled` plugins (names from `AdmissionOptions::enabled`),
/// in upstream's order.
pub fn chain(enabled: &[String], stores: &[Store], authorizer: &DynAuthorizer) -> Chain {
    let mut checks = Vec::new();
    let mut mutators = Vec::new();
    let mut validators = Vec::new();
    for name in enabled {
        let Some(plugin) = build(name, stores, authorizer) else {
            continue;
        };
        checks.extend(plugin.check);
        mutators.extend(plugin.mutator);
        validators.extend(plugin.validator);
    }
    Chain::new(checks)
        .with_mutators(mutators)
        .with_validators(validators)
}

/// `--enable-admission-plugins` and `--disable-admission-plugins` (comma-separated, a
/// repeated flag adding to the list, as pflag's string slices do).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct AdmissionOptions {
    /// Admission plugins that should be enabled in addition to default enabled ones.
    /// The order of plugins in this flag does not matter.
    #[arg(long, value_delimiter = ',', action = clap::ArgAction::Append)]
    pub enable_admission_plugins: Vec<String>,
    /// Admission plugins that should be disabled although they are in the default enabled
    /// plugins list. The order of plugins in this flag does not matter.
    #[arg(long, value_delimiter = ',', action = clap::ArgAction::Append)]
    pub disable_admission_plugins: Vec<String>,
}

impl AdmissionOptions {
    /// Upstream's checks of the two flags, plus one of this role: a plugin enabled here
    /// must be one it runs.
    pub fn validate(&self) -> Vec<String> {
        let known = |n: &str| ORDERED_PLUGINS.iter().any(|(p, _)| *p == n);
        let mut errors = Vec::new();
        for name in &self.enable_admission_plugins {
            if !known(name) {
                errors.push(format!(
                    "enable-admission-plugins plugin {name:?} is unknown"
                ));
            } else if !implemented(name) {
                errors.push(format!(
                    "enable-admission-plugins plugin {name:?} is not implemented by core-apiserver"
                ));
            }
        }
        for name in &self.disable_admission_plugins {
            if !known(name) {
                errors.push(format!(
                    "disable-admission-plugins plugin {name:?} is unknown"
                ));
            }
        }
        let mut overlap: Vec<&String> = self
            .enable_admission_plugins
            .iter()
            .filter(|n| self.disable_admission_plugins.contains(n))
            .collect();
        overlap.sort();
        overlap.dedup();
        if !overlap.is_empty() {
            let list: Vec<&str> = overlap.iter().map(|s| s.as_str()).collect();
            errors.push(format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                list.join(" ")
            ));
        }
        errors
    }

    /// The plugins that run, in upstream's order: the defaults and the enabled ones,
    /// without the disabled ones.
    pub fn enabled(&self) -> Vec<String> {
        ORDERED_PLUGINS
            .iter()
            .filter(|(name, on)| {
                let name = name.to_string();
                (*on || self.enable_admission_plugins.contains(&name))
                    && !self.disable_admission_plugins.contains(&name)
            })
            .map(|(name, _)| name.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        admission: AdmissionOptions,
    }

    fn parse(args: &[&str]) -> AdmissionOptions {
        let mut all = vec!["core-apiserver"];
        all.extend_from_slice(args);
        Flags::try_parse_from(all).expect("flags").admission
    }

    #[test]
    fn defaults_are_upstreams_in_its_order() {
        let enabled = parse(&[]).enabled();
        assert_eq!(enabled[0], "NamespaceLifecycle");
        assert_eq!(enabled.last().map(String::as_str), Some("ResourceQuota"));
        assert!(!enabled.contains(&"AlwaysDeny".to_owned()));
        let fewer = parse(&[
            "--disable-admission-plugins=ServiceAccount",
            "--disable-admission-plugins",
            "Priority,ResourceQuota",
        ]);
        assert!(fewer.validate().is_empty());
        let enabled = fewer.enabled();
        for gone in ["ServiceAccount", "Priority", "ResourceQuota"] {
            assert!(!enabled.contains(&gone.to_owned()), "{gone}");
        }
    }

    #[test]
    fn unknown_overlapping_and_unimplemented_plugins_are_refused() {
        let errors = parse(&[
            "--enable-admission-plugins=Bogus,Priority,AlwaysDeny",
            "--disable-admission-plugins=Priority,Nope",
        ])
        .validate();
        assert_eq!(
            errors,
            [
                "enable-admission-plugins plugin \"Bogus\" is unknown",
                "enable-admission-plugins plugin \"AlwaysDeny\" is not implemented by core-apiserver",
                "disable-admission-plugins plugin \"Nope\" is unknown",
                "[Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
            ]
        );
    }
}
