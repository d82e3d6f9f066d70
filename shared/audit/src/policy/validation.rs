//! Upstream's `ValidatePolicy` (`pkg/apis/audit/validation/validation.go`), with its field
//! paths and texts.

use kas_apimachinery::validation::field::{self, BadValue, ErrorList, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;

use super::types::{GroupResources, Policy, PolicyRule};
use crate::event::{Level, Stage};

const VALID_LEVELS: [&str; 4] = ["None", "Metadata", "Request", "RequestResponse"];

/// Upstream's `ValidatePolicy`: every finding, in upstream's order.
pub fn validate_policy(policy: &Policy) -> ErrorList {
    let mut errs = validate_omit_stages(&policy.omit_stages, &Path::new("omitStages"));
    let rules = Path::new("rules");
    for (i, rule) in policy.rules.iter().enumerate() {
        errs.extend(validate_policy_rule(rule, &rules.index(i)));
    }
    errs
}

fn validate_policy_rule(rule: &PolicyRule, path: &Path) -> ErrorList {
    let mut errs = validate_level(&rule.level, &path.child("level"));
    let urls = path.child("nonResourceURLs");
    errs.extend(validate_non_resource_urls(&rule.non_resource_urls, &urls));
    errs.extend(validate_resources(
        &rule.resources,
        &path.child("resources"),
    ));
    errs.extend(validate_omit_stages(
        &rule.omit_stages,
        &path.child("omitStages"),
    ));
    if !rule.non_resource_urls.is_empty()
        && (!rule.resources.is_empty() || !rule.namespaces.is_empty())
    {
        errs.push(field::invalid(
            &urls,
            strings(&rule.non_resource_urls),
            "rules cannot apply to both regular resources and non-resource URLs",
        ));
    }
    errs
}

fn validate_level(level: &str, path: &Path) -> ErrorList {
    if level.is_empty() {
        return vec![field::required(path, "")];
    }
    match Level::parse(level) {
        Some(_) => Vec::new(),
        None => vec![field::not_supported(path, level, &VALID_LEVELS)],
    }
}

fn validate_non_resource_urls(urls: &[String], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, url) in urls.iter().enumerate() {
        if url == "*" {
            continue;
        }
        if !url.starts_with('/') {
            errs.push(field::invalid(
                &path.index(i),
                url.as_str(),
                "non-resource URL rules must begin with a '/' character",
            ));
        }
        // Go's url[:len(url)-1]: every byte but the last.
        if let Some((_, init)) = url.as_bytes().split_last()
            && init.contains(&b'*')
        {
            errs.push(field::invalid(
                &path.index(i),
                url.as_str(),
                "non-resource URL wildcards '*' must be the final character of the rule",
            ));
        }
    }
    errs
}

fn validate_resources(group_resources: &[GroupResources], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for gr in group_resources {
        // The empty string is the core group. Upstream's path names no index.
        if !gr.group.is_empty() {
            let msgs = name_is_dns_subdomain(&gr.group, false);
            if !msgs.is_empty() {
                errs.push(field::invalid(
                    &path.child("group"),
                    gr.group.as_str(),
                    &msgs.join(","),
                ));
            }
        }
        if !gr.resource_names.is_empty() && gr.resources.is_empty() {
            errs.push(field::invalid(
                &path.child("resourceNames"),
                strings(&gr.resource_names),
                "using resourceNames requires at least one resource",
            ));
        }
    }
    errs
}

fn validate_omit_stages(stages: &[String], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (i, stage) in stages.iter().enumerate() {
        if Stage::parse(stage).is_none() {
            errs.push(field::invalid(
                &path.index(i),
                stage.as_str(),
                "allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic",
            ));
        }
    }
    errs
}

/// A `[]string` as upstream's `%#v` writes it.
fn strings(values: &[String]) -> BadValue {
    BadValue::Strings(Some(values.to_vec()))
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
