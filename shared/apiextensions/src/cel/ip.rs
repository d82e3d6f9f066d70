//! Upstream's Kubernetes IP and CIDR libraries (`k8s.io/apiserver/pkg/cel/library/ip.go`,
//! `cidr.go`): `ip()`, `isIP()`, `ip.isCanonical()`, `cidr()`, `isCIDR()` and the methods
//! of `net.IP` and `net.CIDR` values, over Go's `netip` rules (no zones, no IPv4-mapped
//! IPv6 addresses).

use std::net::IpAddr;
use std::sync::Arc;

use cel::common::types::{STRING_TYPE, Type};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};
use kas_apimachinery::golang::strconv::quote;

use super::library::{no_such_overload, opaque, overload};

const IP_TYPE: &str = "net.IP";
const CIDR_TYPE: &str = "net.CIDR";

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ip(IpAddr);

impl Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        IP_TYPE
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cidr {
    addr: IpAddr,
    bits: u8,
}

impl Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        CIDR_TYPE
    }
}

pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let ip = || Type::new_opaque_type(IP_TYPE);
    let cidr = || Type::new_opaque_type(CIDR_TYPE);
    env.add_type(ip())?;
    env.add_type(cidr())?;
    env.add_overload("ip", "string_to_ip", vec![STRING_TYPE], to_ip)?;
    env.add_overload("isIP", "is_ip", vec![STRING_TYPE], is_ip)?;
    env.add_overload(
        "ip.isCanonical",
        "ip_is_canonical",
        vec![STRING_TYPE],
        is_canonical,
    )?;
    env.add_overload("string", "ip_to_string", vec![ip()], to_string)?;
    env.add_overload("cidr", "string_to_cidr", vec![STRING_TYPE], to_cidr)?;
    env.add_overload("isCIDR", "is_cidr", vec![STRING_TYPE], is_cidr)?;
    env.add_overload("string", "cidr_to_string", vec![cidr()], to_string)?;
    for (name, f) in [
        ("family", family as cel::common::functions::Function),
        ("isUnspecified", is_unspecified),
        ("isLoopback", is_loopback),
        ("isLinkLocalMulticast", is_link_local_multicast),
        ("isLinkLocalUnicast", is_link_local_unicast),
        ("isGlobalUnicast", is_global_unicast),
    ] {
        env.add_member_overload(name, &format!("ip_{name}"), ip(), vec![], f)?;
    }
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_ip",
        cidr(),
        vec![ip()],
        contains_ip,
    )?;
    let s = STRING_TYPE;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_string",
        cidr(),
        vec![s],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr",
        cidr(),
        vec![cidr()],
        contains_cidr,
    )?;
    let s = STRING_TYPE;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr_string",
        cidr(),
        vec![s],
        contains_cidr,
    )?;
    env.add_member_overload("ip", "cidr_ip", cidr(), vec![], cidr_ip)?;
    env.add_member_overload("masked", "cidr_masked", cidr(), vec![], masked)?;
    env.add_member_overload(
        "prefixLength",
        "cidr_prefix_length",
        cidr(),
        vec![],
        prefix_length,
    )
}

fn err(function: &str, msg: String) -> ExecutionError {
    ExecutionError::function_error(function, msg)
}

/// Upstream `parseIPAddr`.
fn parse_ip(raw: &str) -> Result<IpAddr, String> {
    if raw.contains('%') {
        return Err(format!(
            "IP address {} with zone value is not allowed",
            quote(raw)
        ));
    }
    let addr: IpAddr = raw.parse().map_err(|_| {
        format!(
            "IP Address {} parse error during conversion from string: ParseAddr({}): unable to parse IP",
            quote(raw),
            quote(raw)
        )
    })?;
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            quote(raw)
        ));
    }
    Ok(addr)
}

/// Upstream `parseCIDR` (Go's `netip.ParsePrefix`).
fn parse_cidr(raw: &str) -> Result<Cidr, String> {
    let bad = |why: &str| {
        format!(
            "network address parse error during conversion from string: netip.ParsePrefix({}): {why}",
            quote(raw)
        )
    };
    let (addr, bits) = raw.split_once('/').ok_or_else(|| bad("no '/'"))?;
    if addr.contains('%') {
        return Err(bad("IPv6 zones cannot be present in a prefix"));
    }
    let addr: IpAddr = addr
        .parse()
        .map_err(|_| bad("ParseAddr: unable to parse IP"))?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let valid_digits = !bits.is_empty()
        && bits.bytes().all(|b| b.is_ascii_digit())
        && (bits == "0" || !bits.starts_with('0'));
    let bits: u8 = bits
        .parse()
        .ok()
        .filter(|b| valid_digits && *b <= max)
        .ok_or_else(|| bad(&format!("bad bits after slash: {}", quote(bits))))?;
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!(
            "network address parse error during conversion from string: IPv4-mapped IPv6 address {} is not allowed",
            quote(raw)
        ));
    }
    Ok(Cidr { addr, bits })
}

fn bits_of(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

impl Cidr {
    fn width(&self) -> u32 {
        if self.addr.is_ipv4() { 32 } else { 128 }
    }

    fn mask(&self) -> u128 {
        let host = self.width() - u32::from(self.bits);
        let all = if self.width() == 32 {
            u128::from(u32::MAX)
        } else {
            u128::MAX
        };
        if host >= 128 {
            0
        } else {
            all & !((1u128 << host) - 1)
        }
    }

    fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.addr.is_ipv4()
            && bits_of(ip) & self.mask() == bits_of(self.addr) & self.mask()
    }

    fn masked(&self) -> Cidr {
        let base = bits_of(self.addr) & self.mask();
        let addr = match self.addr {
            IpAddr::V4(_) => IpAddr::V4((base as u32).into()),
            IpAddr::V6(_) => IpAddr::V6(base.into()),
        };
        Cidr {
            addr,
            bits: self.bits,
        }
    }
}

fn string_arg<'a>(name: &str, args: &'a [Value]) -> Result<&'a str, ExecutionError> {
    match args.first() {
        Some(Value::String(s)) => Ok(s.as_str()),
        _ => Err(no_such_overload(name, args)),
    }
}

fn to_ip_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let ip = parse_ip(string_arg("ip", args)?).map_err(|e| err("ip", e))?;
    Ok(Value::Opaque(Arc::new(Ip(ip))))
}
overload!(to_ip => to_ip_impl);

fn is_ip_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(parse_ip(string_arg("isIP", args)?).is_ok()))
}
overload!(is_ip => is_ip_impl);

fn is_canonical_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let s = string_arg("ip.isCanonical", args)?;
    let ip = parse_ip(s).map_err(|e| err("ip.isCanonical", e))?;
    Ok(Value::Bool(ip.to_string() == s))
}
overload!(is_canonical => is_canonical_impl);

fn to_string_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let s = if let Ok(ip) = opaque::<Ip>("string", args, 0) {
        ip.0.to_string()
    } else {
        let c = opaque::<Cidr>("string", args, 0)?;
        format!("{}/{}", c.addr, c.bits)
    };
    Ok(Value::String(Arc::new(s)))
}
overload!(to_string => to_string_impl);

fn to_cidr_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let c = parse_cidr(string_arg("cidr", args)?).map_err(|e| {
        err(
            "cidr",
            format!("network address parse error during conversion from string: {e}"),
        )
    })?;
    Ok(Value::Opaque(Arc::new(c)))
}
overload!(to_cidr => to_cidr_impl);

fn is_cidr_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(parse_cidr(string_arg("isCIDR", args)?).is_ok()))
}
overload!(is_cidr => is_cidr_impl);

fn ip_predicate(
    name: &str,
    args: &[Value],
    f: fn(IpAddr) -> bool,
) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(f(opaque::<Ip>(name, args, 0)?.0)))
}

fn family_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(
        if opaque::<Ip>("family", args, 0)?.0.is_ipv4() {
            4
        } else {
            6
        },
    ))
}
overload!(family => family_impl);

fn is_unspecified_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    ip_predicate("isUnspecified", args, |ip| ip.is_unspecified())
}
overload!(is_unspecified => is_unspecified_impl);

fn is_loopback_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    ip_predicate("isLoopback", args, |ip| ip.is_loopback())
}
overload!(is_loopback => is_loopback_impl);

/// Go's `IsLinkLocalMulticast`: 224.0.0.0/24 and ff02::/16 (any flags).
fn link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// Go's `IsLinkLocalUnicast`: 169.254.0.0/16 and fe80::/10.
fn link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn is_link_local_multicast_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    ip_predicate("isLinkLocalMulticast", args, link_local_multicast)
}
overload!(is_link_local_multicast => is_link_local_multicast_impl);

fn is_link_local_unicast_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    ip_predicate("isLinkLocalUnicast", args, link_local_unicast)
}
overload!(is_link_local_unicast => is_link_local_unicast_impl);

/// Go's `IsGlobalUnicast`: anything but unspecified, loopback, multicast, link-local
/// unicast and the IPv4 broadcast address (private ranges included).
fn global_unicast(ip: IpAddr) -> bool {
    let broadcast = matches!(ip, IpAddr::V4(v4) if v4.is_broadcast());
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || link_local_unicast(ip)
        || broadcast)
}

fn is_global_unicast_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    ip_predicate("isGlobalUnicast", args, global_unicast)
}
overload!(is_global_unicast => is_global_unicast_impl);

fn contains_ip_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let c = opaque::<Cidr>("containsIP", args, 0)?;
    let ip = match args.get(1) {
        Some(Value::String(s)) => parse_ip(s).map_err(|e| err("containsIP", e))?,
        _ => opaque::<Ip>("containsIP", args, 1)?.0,
    };
    Ok(Value::Bool(c.contains(ip)))
}
overload!(contains_ip => contains_ip_impl);

fn contains_cidr_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let c = opaque::<Cidr>("containsCIDR", args, 0)?;
    let other = match args.get(1) {
        Some(Value::String(s)) => parse_cidr(s).map_err(|e| {
            err(
                "containsCIDR",
                format!("network address parse error during conversion from string: {e}"),
            )
        })?,
        _ => opaque::<Cidr>("containsCIDR", args, 1)?.clone(),
    };
    Ok(Value::Bool(c.bits <= other.bits && c.contains(other.addr)))
}
overload!(contains_cidr => contains_cidr_impl);

fn cidr_ip_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let c = opaque::<Cidr>("ip", args, 0)?;
    Ok(Value::Opaque(Arc::new(Ip(c.addr))))
}
overload!(cidr_ip => cidr_ip_impl);

fn masked_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Opaque(Arc::new(
        opaque::<Cidr>("masked", args, 0)?.masked(),
    )))
}
overload!(masked => masked_impl);

fn prefix_length_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(i64::from(
        opaque::<Cidr>("prefixLength", args, 0)?.bits,
    )))
}
overload!(prefix_length => prefix_length_impl);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::cel::tests::check_rules;

    /// A variable named like a namespace is still the variable.
    #[test]
    fn variables_shadow_namespaces() {
        let props = json!({ "ips": { "type": "array", "items": { "type": "string" } } });
        let obj = json!({ "ips": ["1.2.3.4", "::1"] });
        check_rules(
            props,
            obj,
            &[
                "self.ips.all(ip, isIP(ip))",
                "self.ips.map(ip, ip(ip)).exists(ip, ip.family() == 6)",
                "self.ips.all(format, format.size() > 2)",
            ],
            &[],
        );
    }

    #[test]
    fn ip_and_cidr_libraries() {
        let props = json!({ "ip": { "type": "string" }, "net": { "type": "string" } });
        let obj = json!({ "ip": "192.168.0.1", "net": "192.168.0.0/16" });
        check_rules(
            props,
            obj,
            &[
                "isIP(self.ip) && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0') && !isIP('1.2.3')",
                "ip(self.ip).family() == 4 && ip('::1').family() == 6",
                "ip('127.0.0.1').isLoopback() && ip('0.0.0.0').isUnspecified()",
                "ip('169.254.1.1').isLinkLocalUnicast() && ip('ff02::1').isLinkLocalMulticast()",
                "ip(self.ip).isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
                "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')",
                "string(ip('2001:db8:0:0:0:0:0:1')) == '2001:db8::1'",
                "ip('1.2.3.4') == ip('1.2.3.4')",
                "isCIDR(self.net) && !isCIDR('1.2.3.4/33') && !isCIDR('1.2.3.4/08')",
                "cidr(self.net).containsIP(self.ip) && cidr(self.net).containsIP(ip(self.ip))",
                "!cidr(self.net).containsIP('10.0.0.1')",
                "cidr(self.net).containsCIDR('192.168.1.0/24') && !cidr('192.168.1.0/24').containsCIDR(self.net)",
                "cidr('192.168.1.5/24').masked() == cidr('192.168.1.0/24')",
                "string(cidr('192.168.1.5/24').masked()) == '192.168.1.0/24'",
                "cidr(self.net).prefixLength() == 16 && cidr(self.net).ip() == ip('192.168.0.0')",
            ],
            &[(
                "ip('x') == ip('x')",
                "IP Address \"x\" parse error during conversion from string",
            )],
        );
    }
}
