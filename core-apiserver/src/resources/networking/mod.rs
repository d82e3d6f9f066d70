//! The networking.k8s.io/v1 resources: Ingress, IngressClass, NetworkPolicy, IPAddress and
//! ServiceCIDR, with the
//! apimachinery checks only they use (upstream `IsWildcardDNS1123Subdomain` and
//! `IsDomainPrefixedPath`).

pub mod ingressclasses;
pub mod ingresses;
pub mod ipaddresses;
pub mod networkpolicies;
pub mod servicecidrs;

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::{
    DNS1123_SUBDOMAIN_FMT, DNS1123_SUBDOMAIN_MAX_LENGTH, is_dns1123_subdomain, max_len_error,
    regex_error,
};

/// Upstream `wildcardDNS1123SubdomainErrMsg`.
const WILDCARD_DNS1123_SUBDOMAIN_ERR_MSG: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";

/// Upstream `httpPathFmt`.
const HTTP_PATH_FMT: &str = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+";

/// Upstream `IsWildcardDNS1123Subdomain`: `*.` and a DNS subdomain, at most 253 characters.
pub(crate) fn is_wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    // The pattern is the subdomain's after `*.`: only its regex error counts here.
    let too_long = max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH);
    let matches = value
        .strip_prefix("*.")
        .is_some_and(|rest| is_dns1123_subdomain(rest).iter().all(|e| *e == too_long));
    if !matches {
        let fmt = format!("\\*\\.{DNS1123_SUBDOMAIN_FMT}");
        errs.push(regex_error(
            WILDCARD_DNS1123_SUBDOMAIN_ERR_MSG,
            &fmt,
            &["*.example.com"],
        ));
    }
    errs
}

/// Upstream `IsDomainPrefixedPath`: a DNS subdomain, `/`, and HTTP path characters.
pub(crate) fn is_domain_prefixed_path(path: &Path, value: &str) -> Vec<field::Error> {
    if value.is_empty() {
        return vec![field::required(path, "")];
    }
    let (host, rest) = value.split_once('/').unwrap_or((value, ""));
    if host.is_empty() || rest.is_empty() {
        return vec![field::invalid(
            path,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    }
    let mut errs: Vec<field::Error> = is_dns1123_subdomain(host)
        .iter()
        .map(|msg| field::invalid(path, host, msg))
        .collect();
    let http_path = rest
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&c));
    if !http_path {
        errs.push(field::invalid(
            path,
            rest,
            &regex_error("Invalid path", HTTP_PATH_FMT, &[]),
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_subdomains() {
        assert!(is_wildcard_dns1123_subdomain("*.example.com").is_empty());
        for bad in [
            "*",
            "*.*.example.com",
            "f*.example.com",
            "*example.com",
            "*.Foo",
        ] {
            assert_eq!(
                is_wildcard_dns1123_subdomain(bad),
                vec![
                    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                ],
                "{bad}"
            );
        }
    }

    #[test]
    fn domain_prefixed_paths() {
        let p = Path::new("spec").child("controller");
        assert!(is_domain_prefixed_path(&p, "example.com/ingress-controller").is_empty());
        let errs: Vec<String> = ["nginx", "/foo", "example.com/a b", "Example.com/x"]
            .iter()
            .flat_map(|v| is_domain_prefixed_path(&p, v))
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errs.len(), 4, "{errs:?}");
        assert!(errs[0].contains("must be a domain-prefixed path (such as \"acme.io/foo\")"));
        assert!(errs[2].contains("Invalid path (regex used for validation is"));
    }
}
