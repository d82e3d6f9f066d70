//! The functions upstream's environment for stored CRD rules declares, with their
//! overloads' types: cel-go's standard library, optional types, strings v2, sets and the
//! Kubernetes libraries (lists, regex, urls, quantity, semver, ip, cidr, format, authz).
//! Written as signatures, `name: (args) result` for a global overload and
//! `name: target.(args) result` for a member one, parsed once.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::types::Type;

pub(crate) struct Overload {
    pub member: bool,
    /// The target first, for a member overload.
    pub args: Vec<Type<'static>>,
    pub result: Type<'static>,
    /// How many type parameters the overload has.
    pub params: usize,
}

const COMPARABLE: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "timestamp",
    "duration",
];

/// The standard library's orderings, with cel-go's cross-type numeric comparisons.
const ORDERED: &[(&str, &str)] = &[
    ("bool", "bool"),
    ("int", "int"),
    ("int", "double"),
    ("int", "uint"),
    ("uint", "uint"),
    ("uint", "double"),
    ("uint", "int"),
    ("double", "double"),
    ("double", "int"),
    ("double", "uint"),
    ("string", "string"),
    ("bytes", "bytes"),
    ("timestamp", "timestamp"),
    ("duration", "duration"),
];

#[rustfmt::skip]
const SIGNATURES: &[&str] = &[
    // standard library
    "_?_:_: (bool, A, A) A",
    "!_: (bool) bool",
    "@not_strictly_false: (bool) bool",
    "_==_: (A, A) bool",
    "_!=_: (A, A) bool",
    "_+_: (bytes, bytes) bytes | (double, double) double | (duration, duration) duration \
     | (duration, timestamp) timestamp | (timestamp, duration) timestamp | (int, int) int \
     | (list(A), list(A)) list(A) | (string, string) string | (uint, uint) uint",
    "_/_: (double, double) double | (int, int) int | (uint, uint) uint",
    "_%_: (int, int) int | (uint, uint) uint",
    "_*_: (double, double) double | (int, int) int | (uint, uint) uint",
    "-_: (double) double | (int) int",
    "_-_: (double, double) double | (duration, duration) duration | (int, int) int \
     | (timestamp, duration) timestamp | (timestamp, timestamp) duration | (uint, uint) uint",
    "_[_]: (list(A), int) A | (map(A, B), A) B \
     | (optional_type(list(A)), int) optional_type(A) \
     | (optional_type(map(A, B)), A) optional_type(B)",
    "@in: (A, list(A)) bool | (A, map(A, B)) bool",
    "size: (bytes) int | bytes.() int | (list(A)) int | list(A).() int | (map(A, B)) int \
     | map(A, B).() int | (string) int | string.() int",
    "type: (A) type(A)",
    "bool: (bool) bool | (string) bool",
    "bytes: (bytes) bytes | (string) bytes",
    "double: (double) double | (int) double | (string) double | (uint) double",
    "duration: (duration) duration | (int) duration | (string) duration",
    "dyn: (A) dyn",
    "int: (int) int | (double) int | (duration) int | (string) int | (timestamp) int \
     | (uint) int",
    "string: (string) string | (bool) string | (bytes) string | (double) string \
     | (duration) string | (int) string | (timestamp) string | (uint) string \
     | (net.IP) string | (net.CIDR) string",
    "timestamp: (timestamp) timestamp | (int) timestamp | (string) timestamp",
    "uint: (uint) uint | (double) uint | (int) uint | (string) uint",
    "contains: string.(string) bool",
    "endsWith: string.(string) bool",
    "startsWith: string.(string) bool",
    "matches: (string, string) bool | string.(string) bool",
    "getFullYear: timestamp.() int | timestamp.(string) int",
    "getMonth: timestamp.() int | timestamp.(string) int",
    "getDayOfYear: timestamp.() int | timestamp.(string) int",
    "getDayOfMonth: timestamp.() int | timestamp.(string) int",
    "getDate: timestamp.() int | timestamp.(string) int",
    "getDayOfWeek: timestamp.() int | timestamp.(string) int",
    "getHours: timestamp.() int | timestamp.(string) int | duration.() int",
    "getMinutes: timestamp.() int | timestamp.(string) int | duration.() int",
    "getSeconds: timestamp.() int | timestamp.(string) int | duration.() int",
    "getMilliseconds: timestamp.() int | timestamp.(string) int | duration.() int",
    // optional types
    "optional.of: (A) optional_type(A)",
    "optional.ofNonZeroValue: (A) optional_type(A)",
    "optional.none: () optional_type(A)",
    "value: optional_type(A).() A",
    "hasValue: optional_type(A).() bool",
    "or: optional_type(A).(optional_type(A)) optional_type(A)",
    "orValue: optional_type(A).(A) A",
    "_[?_]: (list(A), int) optional_type(A) | (optional_type(list(A)), int) optional_type(A) \
     | (map(A, B), A) optional_type(B) | (optional_type(map(A, B)), A) optional_type(B)",
    "last: list(A).() optional_type(A)",
    "first: list(A).() optional_type(A)",
    "optional.unwrap: (list(optional_type(A))) list(A)",
    "unwrapOpt: list(optional_type(A)).() list(A)",
    // strings v2
    "charAt: string.(int) string",
    "indexOf: string.(string) int | string.(string, int) int | list(A).(A) int",
    "lastIndexOf: string.(string) int | string.(string, int) int | list(A).(A) int",
    "lowerAscii: string.() string",
    "upperAscii: string.() string",
    "replace: string.(string, string) string | string.(string, string, int) string",
    "split: string.(string) list(string) | string.(string, int) list(string)",
    "substring: string.(int) string | string.(int, int) string",
    "trim: string.() string",
    "format: string.(list(dyn)) string",
    "strings.quote: (string) string",
    "join: list(string).() string | list(string).(string) string",
    // sets
    "sets.contains: (list(A), list(A)) bool",
    "sets.equivalent: (list(A), list(A)) bool",
    "sets.intersects: (list(A), list(A)) bool",
    // the two-variable comprehensions' insertion (`cel.@mapInsert`), as `comprehensions.rs`
    // names it
    "@kasMapInsert: (map(A, B), A, B) map(A, B)",
    "@kasMapMerge: (map(A, B), map(A, B)) map(A, B)",
    // Kubernetes regex, urls
    "find: string.(string) string",
    "findAll: string.(string) list(string) | string.(string, int) list(string)",
    "url: (string) kubernetes.URL",
    "isURL: (string) bool",
    "getScheme: kubernetes.URL.() string",
    "getHost: kubernetes.URL.() string",
    "getHostname: kubernetes.URL.() string",
    "getPort: kubernetes.URL.() string",
    "getEscapedPath: kubernetes.URL.() string",
    "getQuery: kubernetes.URL.() map(string, list(string))",
    // Kubernetes quantity (`sign` is a global function upstream)
    "quantity: (string) kubernetes.Quantity",
    "isQuantity: (string) bool",
    "sign: (kubernetes.Quantity) int",
    "isGreaterThan: kubernetes.Quantity.(kubernetes.Quantity) bool \
     | kubernetes.Semver.(kubernetes.Semver) bool",
    "isLessThan: kubernetes.Quantity.(kubernetes.Quantity) bool \
     | kubernetes.Semver.(kubernetes.Semver) bool",
    "compareTo: kubernetes.Quantity.(kubernetes.Quantity) int \
     | kubernetes.Semver.(kubernetes.Semver) int",
    "asApproximateFloat: kubernetes.Quantity.() double",
    "asInteger: kubernetes.Quantity.() int",
    "isInteger: kubernetes.Quantity.() bool",
    "add: kubernetes.Quantity.(kubernetes.Quantity) kubernetes.Quantity \
     | kubernetes.Quantity.(int) kubernetes.Quantity",
    "sub: kubernetes.Quantity.(kubernetes.Quantity) kubernetes.Quantity \
     | kubernetes.Quantity.(int) kubernetes.Quantity",
    // Kubernetes semver
    "semver: (string) kubernetes.Semver | (string, bool) kubernetes.Semver",
    "isSemver: (string) bool | (string, bool) bool",
    "major: kubernetes.Semver.() int",
    "minor: kubernetes.Semver.() int",
    "patch: kubernetes.Semver.() int",
    // Kubernetes ip, cidr
    "ip: (string) net.IP | net.CIDR.() net.IP",
    "isIP: (string) bool",
    "ip.isCanonical: (string) bool",
    "family: net.IP.() int",
    "isUnspecified: net.IP.() bool",
    "isLoopback: net.IP.() bool",
    "isLinkLocalMulticast: net.IP.() bool",
    "isLinkLocalUnicast: net.IP.() bool",
    "isGlobalUnicast: net.IP.() bool",
    "cidr: (string) net.CIDR",
    "isCIDR: (string) bool",
    "containsIP: net.CIDR.(string) bool | net.CIDR.(net.IP) bool",
    "containsCIDR: net.CIDR.(string) bool | net.CIDR.(net.CIDR) bool",
    "prefixLength: net.CIDR.() int",
    "masked: net.CIDR.() net.CIDR",
    // Kubernetes format
    "validate: kubernetes.NamedFormat.(string) optional_type(list(string))",
    "format.named: (string) optional_type(kubernetes.NamedFormat)",
    "format.dns1123Label: () kubernetes.NamedFormat",
    "format.dns1123Subdomain: () kubernetes.NamedFormat",
    "format.dns1035Label: () kubernetes.NamedFormat",
    "format.qualifiedName: () kubernetes.NamedFormat",
    "format.dns1123LabelPrefix: () kubernetes.NamedFormat",
    "format.dns1123SubdomainPrefix: () kubernetes.NamedFormat",
    "format.dns1035LabelPrefix: () kubernetes.NamedFormat",
    "format.labelValue: () kubernetes.NamedFormat",
    "format.uri: () kubernetes.NamedFormat",
    "format.uuid: () kubernetes.NamedFormat",
    "format.byte: () kubernetes.NamedFormat",
    "format.date: () kubernetes.NamedFormat",
    "format.datetime: () kubernetes.NamedFormat",
    // Kubernetes authz (no value of these types exists in CRD rules)
    "path: kubernetes.authorization.Authorizer.(string) kubernetes.authorization.PathCheck",
    "group: kubernetes.authorization.Authorizer.(string) kubernetes.authorization.GroupCheck",
    "serviceAccount: kubernetes.authorization.Authorizer.(string, string) \
     kubernetes.authorization.Authorizer",
    "resource: kubernetes.authorization.GroupCheck.(string) \
     kubernetes.authorization.ResourceCheck",
    "subresource: kubernetes.authorization.ResourceCheck.(string) \
     kubernetes.authorization.ResourceCheck",
    "namespace: kubernetes.authorization.ResourceCheck.(string) \
     kubernetes.authorization.ResourceCheck",
    "name: kubernetes.authorization.ResourceCheck.(string) \
     kubernetes.authorization.ResourceCheck",
    "fieldSelector: kubernetes.authorization.ResourceCheck.(string) \
     kubernetes.authorization.ResourceCheck",
    "labelSelector: kubernetes.authorization.ResourceCheck.(string) \
     kubernetes.authorization.ResourceCheck",
    "check: kubernetes.authorization.PathCheck.(string) kubernetes.authorization.Decision \
     | kubernetes.authorization.ResourceCheck.(string) kubernetes.authorization.Decision",
    "allowed: kubernetes.authorization.Decision.() bool",
    "reason: kubernetes.authorization.Decision.() string",
    "errored: kubernetes.authorization.Decision.() bool",
    "error: kubernetes.authorization.Decision.() string",
];

/// The overloads of each declared function.
pub(crate) static FUNCTIONS: LazyLock<HashMap<String, Vec<Overload>>> = LazyLock::new(|| {
    let mut out: HashMap<String, Vec<Overload>> = HashMap::new();
    for line in SIGNATURES {
        let Some((name, sigs)) = line.split_once(": ") else {
            continue;
        };
        let overloads = out.entry(name.to_owned()).or_default();
        overloads.extend(sigs.split(" | ").filter_map(overload));
    }
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        let overloads = out.entry(op.to_owned()).or_default();
        for (a, b) in ORDERED {
            overloads.extend(overload(&format!("({a}, {b}) bool")));
        }
    }
    let lists = [
        ("isSorted", COMPARABLE, "bool"),
        ("min", COMPARABLE, "T"),
        ("max", COMPARABLE, "T"),
        ("sum", &["int", "uint", "double", "duration"][..], "T"),
    ];
    for (name, types, result) in lists {
        let overloads = out.entry(name.to_owned()).or_default();
        for t in types {
            let result = if result == "T" { t } else { result };
            overloads.extend(overload(&format!("list({t}).() {result}")));
        }
    }
    out
});

/// One signature: `(args) result` or `target.(args) result`.
fn overload(sig: &str) -> Option<Overload> {
    let sig = sig.trim();
    let (target, open) = match sig.find(".(") {
        Some(dot) if !sig.starts_with('(') => (Some(&sig[..dot]), dot + 1),
        _ => (None, 0),
    };
    let close = open + matching_paren(&sig[open..])?;
    let mut args = Vec::new();
    let mut params = 0;
    let mut parse = |s: &str| {
        let t = parse_type(s.trim())?;
        params = params.max(count_params(&t));
        Some(t)
    };
    if let Some(t) = target {
        args.push(parse(t)?);
    }
    for a in split_top(&sig[open + 1..close]) {
        args.push(parse(a)?);
    }
    let result = parse(&sig[close + 1..])?;
    Some(Overload {
        member: target.is_some(),
        args,
        result,
        params,
    })
}

fn count_params(t: &Type<'_>) -> usize {
    match t {
        Type::Param(i) => *i as usize + 1,
        Type::List(e) | Type::Kind(e) => count_params(e),
        Type::Map(k, v) => count_params(k).max(count_params(v)),
        Type::Opaque(_, p) => p.iter().map(count_params).max().unwrap_or(0),
        _ => 0,
    }
}

/// The offset of the parenthesis closing the one `s` starts with.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` split at its commas outside parentheses.
fn split_top(s: &str) -> impl Iterator<Item = &str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        parts.push(&s[start..]);
    }
    parts.into_iter()
}

fn parse_type(s: &str) -> Option<Type<'static>> {
    let (name, params) = match s.find('(') {
        Some(open) => {
            let close = open + matching_paren(&s[open..])?;
            let params: Option<Vec<_>> = split_top(&s[open + 1..close])
                .map(|p| parse_type(p.trim()))
                .collect();
            (&s[..open], params?)
        }
        None => (s, Vec::new()),
    };
    let mut params = params.into_iter();
    let mut next = || params.next();
    Some(match name {
        "A" => Type::Param(0),
        "B" => Type::Param(1),
        "dyn" => Type::Dyn,
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "duration" => Type::Duration,
        "timestamp" => Type::Timestamp,
        "list" => Type::list(next()?),
        "map" => Type::map(next()?, next()?),
        "type" => Type::Kind(Box::new(next()?)),
        "optional_type" => Type::optional(next()?),
        "net.IP" => Type::Opaque("net.IP", Box::new([])),
        "net.CIDR" => Type::Opaque("net.CIDR", Box::new([])),
        other => Type::Struct(STRUCTS.iter().find(|s| **s == other)?),
    })
}

/// The struct types of the Kubernetes libraries.
pub(crate) const STRUCTS: &[&str] = &[
    "kubernetes.URL",
    "kubernetes.Quantity",
    "kubernetes.Semver",
    "kubernetes.NamedFormat",
    "kubernetes.authorization.Authorizer",
    "kubernetes.authorization.PathCheck",
    "kubernetes.authorization.GroupCheck",
    "kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.Decision",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signature_parses() {
        for line in SIGNATURES {
            let (_, sigs) = line.split_once(": ").unwrap();
            for sig in sigs.split(" | ") {
                assert!(overload(sig).is_some(), "{sig}");
            }
        }
        let add = &FUNCTIONS["_+_"];
        assert_eq!(add.len(), 9);
        assert_eq!(add[6].params, 1);
        assert_eq!(add[6].result.to_string(), "list(A)");
    }
}
