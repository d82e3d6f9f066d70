//! Validation helpers, after upstream's `k8s.io/apimachinery/pkg/util/validation` (string
//! formats and their messages), `.../util/validation/field` (`field`), and
//! `.../api/validation` (`path`, `meta`).
//!
//! Upstream checks formats with regular expressions; this crate has no regex engine, so each
//! format is matched by hand. The `*_FMT` constants are kept because upstream quotes them in
//! its messages.

pub mod field;
pub mod meta;

/// Upstream `k8s.io/apimachinery/pkg/api/validation/path`.
pub mod path {
    /// Names that may not be path segments.
    pub const NAME_MAY_NOT_BE: [&str; 2] = [".", ".."];
    /// Strings a path-segment name may not contain.
    pub const NAME_MAY_NOT_CONTAIN: [&str; 2] = ["/", "%"];

    /// Upstream `IsValidPathSegmentName`: the reasons `name` cannot be a path segment, empty
    /// if it can.
    pub fn is_valid_path_segment_name(name: &str) -> Vec<String> {
        if let Some(bad) = NAME_MAY_NOT_BE.iter().find(|b| **b == name) {
            return vec![format!("may not be '{bad}'")];
        }
        NAME_MAY_NOT_CONTAIN
            .iter()
            .filter(|bad| name.contains(**bad))
            .map(|bad| format!("may not contain '{bad}'"))
            .collect()
    }

    #[cfg(test)]
    mod tests {
        use super::is_valid_path_segment_name as check;

        #[test]
        fn path_segment_names() {
            assert!(check("foo").is_empty());
            assert!(check("").is_empty());
            assert_eq!(check(".."), vec!["may not be '..'"]);
            assert_eq!(
                check("a/b%c"),
                vec!["may not contain '/'", "may not contain '%'"]
            );
        }
    }
}

pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
pub const DNS1035_LABEL_MAX_LENGTH: usize = 63;
pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;

pub const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
pub const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
pub const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
pub const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
pub const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

const DNS1123_LABEL_ERR_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_ERR_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Upstream `MaxLenError`.
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// Upstream `RegexError`: `msg (e.g. 'a' or 'b', regex used for validation is 'fmt')`.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        examples.join(" or ")
    )
}

/// Upstream `EmptyError`.
pub fn empty_error() -> String {
    "must be non-empty".to_owned()
}

/// Upstream `InclusiveRangeError`.
pub fn inclusive_range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, whole string.
fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => {
            is_lower_alnum(f)
                && is_lower_alnum(l)
                && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// `DNS1123_SUBDOMAIN_FMT`, whole string.
fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(matches_dns1123_label)
}

/// `[a-z]([-a-z0-9]*[a-z0-9])?`, whole string.
fn matches_dns1035_label(s: &str) -> bool {
    matches_dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, whole string.
fn matches_qualified_name(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Upstream `IsDNS1123Label`: the reasons `value` is not an RFC 1123 label, empty if it is.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            // A valid subdomain that is no label: the length was checked, so it is the dots.
            errs.push("must not contain dots".to_owned());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// Upstream `IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// Upstream `IsDNS1035Label`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1035_LABEL_MAX_LENGTH));
    }
    if !matches_dns1035_label(value) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

fn qualified_name_regex_error() -> String {
    regex_error(
        QUALIFIED_NAME_ERR_MSG,
        QUALIFIED_NAME_FMT,
        &["MyName", "my.name", "123-abc"],
    )
}

/// Upstream (1.33) `IsQualifiedName`, the format of label keys: an optional DNS subdomain
/// prefix and `/`, then a name of at most 63 characters.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                qualified_name_regex_error()
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !matches_qualified_name(name) {
        errs.push(format!("name part {}", qualified_name_regex_error()));
    }
    errs
}

/// Upstream `IsValidLabelValue`: empty, or a qualified-name-shaped string of at most 63
/// characters.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !matches_qualified_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests;

/// Upstream `IsValidPortNum`: a port number in 1..=65535.
pub fn is_valid_port_num(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![inclusive_range_error(1, 65535)]
    }
}

/// Upstream `IsValidGroupID`: a Unix GID in 0..=MaxInt32.
pub fn is_valid_group_id(gid: i64) -> Vec<String> {
    if (0..=i64::from(i32::MAX)).contains(&gid) {
        Vec::new()
    } else {
        vec![inclusive_range_error(0, i64::from(i32::MAX))]
    }
}

/// Upstream `IsValidUserID`: a Unix UID in 0..=MaxInt32.
pub fn is_valid_user_id(uid: i64) -> Vec<String> {
    is_valid_group_id(uid)
}

/// Upstream `IsValidPortName` (an IANA_SVC_NAME): at most 15 characters of `[-a-z0-9]`,
/// with a letter, no `--`, and no hyphen at either end.
pub fn is_valid_port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    let b = port.as_bytes();
    if b.is_empty() || !b.iter().all(|&c| is_lower_alnum(c) || c == b'-') {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned(),
        );
    }
    if !b.iter().any(u8::is_ascii_lowercase) {
        errs.push("must contain at least one letter (a-z)".to_owned());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_owned());
    }
    if b.first() == Some(&b'-') || b.last() == Some(&b'-') {
        errs.push("must not begin or end with a hyphen".to_owned());
    }
    errs
}

/// Upstream `IsHTTPHeaderName`: `[-A-Za-z0-9]+`.
pub fn is_http_header_name(value: &str) -> Vec<String> {
    if !value.is_empty()
        && value
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-')
    {
        return Vec::new();
    }
    vec![regex_error(
        "a valid HTTP header must consist of alphanumeric characters or '-'",
        "[-A-Za-z0-9]+",
        &["X-Header-Name"],
    )]
}

/// Upstream `IsRelaxedEnvVarName`: non-empty, printable ASCII other than `=`.
pub fn is_relaxed_env_var_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.is_empty() {
        errs.push(format!("environment variable name {}", empty_error()));
    }
    if value.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
        errs.push(
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
                .to_owned(),
        );
    }
    errs
}

/// `[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?`, whole string.
fn matches_dns1123_label_with_underscore(s: &str) -> bool {
    let ok = |c: u8| is_lower_alnum(c) || c == b'_';
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => ok(f) && ok(l) && b.iter().all(|&c| ok(c) || c == b'-'),
        _ => false,
    }
}

/// Upstream `IsDNS1123SubdomainWithUnderscore`.
pub fn is_dns1123_subdomain_with_underscore(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !value.split('.').all(matches_dns1123_label_with_underscore) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
            "[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?(\\.[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?)*",
            &["example.com"],
        ));
    }
    errs
}

/// `netutils.ParseIPSloppy` succeeds: an IPv4 address whose parts may carry leading
/// zeros, or an IPv6 address.
pub fn is_ip_sloppy(value: &str) -> bool {
    if value.contains(':') {
        return value.parse::<std::net::Ipv6Addr>().is_ok();
    }
    let parts: Vec<&str> = value.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|c| c.is_ascii_digit())
                && p.trim_start_matches('0').len() <= 3
                && p.parse::<u32>().is_ok_and(|n| n <= 255)
        })
}

/// `netutils.ParseIPSloppy` (Go 1.16's `net.ParseIP`): the address, IPv4 parts may carry
/// leading zeros. IPv4-mapped IPv6 addresses stay IPv6 here; Go's `net.IP` methods see
/// them as IPv4 (`Ipv6Addr::to_ipv4_mapped`).
pub fn parse_ip_sloppy(value: &str) -> Option<std::net::IpAddr> {
    if value.contains(':') {
        return value
            .parse::<std::net::Ipv6Addr>()
            .ok()
            .map(std::net::IpAddr::V6);
    }
    if !is_ip_sloppy(value) {
        return None;
    }
    let mut octets = [0u8; 4];
    for (octet, part) in octets.iter_mut().zip(value.split('.')) {
        *octet = part.parse().ok()?;
    }
    Some(std::net::IpAddr::V4(std::net::Ipv4Addr::from(octets)))
}

/// `netutils.ParseCIDRSloppy`: the address and prefix length of `addr/len`, the address
/// parsed as by `parse_ip_sloppy`, the length decimal digits (leading zeros allowed) of at
/// most 32 for IPv4 text and 128 for IPv6 text.
pub fn parse_cidr_sloppy(value: &str) -> Option<(std::net::IpAddr, u8)> {
    let (addr, mask) = value.split_once('/')?;
    let ip = parse_ip_sloppy(addr)?;
    if mask.is_empty() || !mask.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let bits = mask.trim_start_matches('0');
    let n: u32 = if bits.is_empty() {
        0
    } else if bits.len() > 3 {
        return None;
    } else {
        bits.parse().ok()?
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    u8::try_from(n)
        .ok()
        .filter(|n| u32::from(*n) <= max)
        .map(|n| (ip, n))
}

/// The address as Go's `net.IP` sees it: an IPv4-mapped IPv6 address is IPv4.
pub fn unmapped(ip: std::net::IpAddr) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, std::net::IpAddr::V4),
        v4 => v4,
    }
}

/// Go's `net.IP.String()`: an IPv4-mapped IPv6 address prints as IPv4.
pub fn go_ip_string(ip: std::net::IpAddr) -> String {
    unmapped(ip).to_string()
}

/// Upstream `IsValidIP` (1.33, for fields newer than strict IP validation): a valid IP
/// address without leading zeros, not IPv4-mapped, in canonical form.
pub fn is_valid_ip(fld_path: &field::Path, value: &str) -> field::ErrorList {
    let Some(ip) = parse_ip_sloppy(value) else {
        return vec![field::invalid(
            fld_path,
            value,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )];
    };
    let mut errs = Vec::new();
    match value.parse::<std::net::IpAddr>() {
        Err(_) => errs.push(field::invalid(fld_path, value, "must not have leading 0s")),
        Ok(std::net::IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_some() => errs.push(field::invalid(
            fld_path,
            value,
            "must not be an IPv4-mapped IPv6 address",
        )),
        Ok(_) => {}
    }
    if !errs.is_empty() {
        return errs;
    }
    let canonical = go_ip_string(ip);
    if value != canonical {
        errs.push(field::invalid(
            fld_path,
            value,
            &format!("must be in canonical form ({canonical:?})"),
        ));
    }
    errs
}

/// Upstream `IsValidCIDR` (1.33, for fields newer than strict validation): a subnet
/// without leading zeros, not IPv4-mapped, no bits past the prefix, in canonical form.
pub fn is_valid_cidr(fld_path: &field::Path, value: &str) -> field::ErrorList {
    let Some((ip, bits)) = parse_cidr_sloppy(value) else {
        return vec![field::invalid(
            fld_path,
            value,
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        )];
    };
    let (addr, mask) = value.split_once('/').unwrap_or((value, ""));
    let strict_addr = addr.parse::<std::net::IpAddr>().ok();
    let strict_mask = mask == "0" || !mask.starts_with('0');
    let masked = |ip: std::net::IpAddr| -> std::net::IpAddr {
        match ip {
            std::net::IpAddr::V4(v4) => {
                let m = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
                std::net::IpAddr::V4((u32::from(v4) & m).into())
            }
            std::net::IpAddr::V6(v6) => {
                let m = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
                std::net::IpAddr::V6((u128::from(v6) & m).into())
            }
        }
    };
    let detail = match strict_addr {
        None => Some("must not have leading 0s in IP or prefix length"),
        Some(_) if !strict_mask => Some("must not have leading 0s in IP or prefix length"),
        Some(std::net::IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_some() => {
            Some("must not have an IPv4-mapped IPv6 address")
        }
        Some(a) if masked(a) != a => Some("must not have bits set beyond the prefix length"),
        Some(_) => None,
    };
    if let Some(detail) = detail {
        return vec![field::invalid(fld_path, value, detail)];
    }
    let canonical = format!("{}/{bits}", go_ip_string(masked(ip)));
    if value != canonical {
        return vec![field::invalid(
            fld_path,
            value,
            &format!("must be in canonical form ({canonical:?})"),
        )];
    }
    Vec::new()
}

/// Upstream `IsValidIPForLegacyField` with `StrictIPCIDRValidation` off (alpha, off by
/// default in 1.33): anything `ParseIPSloppy` parses.
pub fn is_valid_ip_for_legacy_field(fld_path: &field::Path, value: &str) -> field::ErrorList {
    if parse_ip_sloppy(value).is_some() {
        return Vec::new();
    }
    vec![field::invalid(
        fld_path,
        value,
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    )]
}

/// Upstream `IsValidCIDRForLegacyField` with `StrictIPCIDRValidation` off: anything
/// `ParseCIDRSloppy` parses.
pub fn is_valid_cidr_for_legacy_field(fld_path: &field::Path, value: &str) -> field::ErrorList {
    if parse_cidr_sloppy(value).is_some() {
        return Vec::new();
    }
    vec![field::invalid(
        fld_path,
        value,
        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
    )]
}
